//! A step boundary: the pre-step run for a session and its decision applied
//! to the log, as a harness does before every model step.

use std::sync::{Arc, Mutex};

use crate::error::HostError;
use crate::plugin::{Decision, Plugin, StepInput, StepOutcome};
use crate::registry::SkillRegistry;
use crate::session::{SessionLog, SurfaceOp};

/// Runs the pre-step on the `proposed` decision (the host's other listeners'
/// output) and, when the result is to enter, appends every message of it to
/// the session in one write.
///
/// The session file's exclusive lock is held from before the plugin reads
/// the history until the decision is appended (see [`SessionLog::hold`]), so
/// two hosts stepping one session at once take turns: the second decides on
/// a history that includes what the first appended.
/// Returns the outcome; a failed call leaves the session untouched.
pub fn run_step(
    plugin: &Plugin,
    registry: &Arc<SkillRegistry>,
    session: &Arc<Mutex<SessionLog>>,
    input: &StepInput,
    proposed: Decision,
) -> Result<StepOutcome, HostError> {
    let _turn = Turn::take(session)?;
    let outcome = plugin.pre_step(registry, session, input, proposed)?;
    if let StepOutcome::Decided(Decision::Enter(messages)) = &outcome
        && !messages.is_empty()
    {
        let batch = messages.iter().map(|data| (data.clone(), SurfaceOp::Append)).collect();
        lock(session).append_user_messages(batch)?;
    }
    Ok(outcome)
}

/// Locks a session shared with plugin calls.
pub fn lock(session: &Mutex<SessionLog>) -> std::sync::MutexGuard<'_, SessionLog> {
    session.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The session file's lock, held for one step and let go however the step ends.
/// A lock the caller already held stays held.
struct Turn<'a>(Option<&'a Mutex<SessionLog>>);

impl<'a> Turn<'a> {
    fn take(session: &'a Mutex<SessionLog>) -> Result<Self, HostError> {
        let took = lock(session).hold()?;
        Ok(Turn(took.then_some(session)))
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if let Some(session) = self.0 {
            lock(session).release();
        }
    }
}

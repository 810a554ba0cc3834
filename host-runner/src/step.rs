//! A step boundary: the pre-step run for a session and its decision applied
//! to the log, as a harness does before every model step.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::error::HostError;
use crate::message;
use crate::plugin::{Decision, Plugin, StepInput, StepOutcome, ToolOutcome};
use crate::registry::SkillRegistry;
use crate::session::{SessionError, SessionHeader, SessionLog, SharedSession, SurfaceOp};

/// Runs the pre-step on the `proposed` decision (the host's other listeners'
/// output) and, when the result is to enter, appends every message of it to
/// the session in one write (unless [`StepInput::preview`] is set).
///
/// The session file's exclusive lock is held from before the plugin reads
/// the history until the decision is appended (see [`SharedSession::take_turn`]), so
/// two hosts stepping one session at once take turns: the second decides on
/// a history that includes what the first appended.
/// Returns the outcome; a failed call leaves the session untouched.
pub fn run_step(
    plugin: &Plugin,
    registry: &Arc<SkillRegistry>,
    session: &SharedSession,
    input: &StepInput,
    proposed: Decision,
) -> Result<StepOutcome, HostError> {
    let _turn = session.take_turn()?;
    let outcome = plugin.pre_step(registry, session, input, proposed)?;
    if let StepOutcome::Decided(Decision::Enter(messages)) = &outcome
        && !messages.is_empty()
        && !input.preview
    {
        let batch = messages.iter().map(|data| (data.clone(), SurfaceOp::Append)).collect();
        session.lock().append_user_messages(batch)?;
    }
    Ok(outcome)
}

/// The messages a pre-step would enter for a new session on `cwd` with
/// `proposed` and the tool visible: the catalog a fresh session gets, or a
/// user's `/name` loaded. The session is in memory and the step previewed,
/// so nothing is recorded anywhere; a reject or an abort (neither comes
/// from the plugin's own step) enters nothing.
pub fn preview_step(
    plugin: &Plugin,
    registry: &Arc<SkillRegistry>,
    cwd: Option<&str>,
    proposed: Vec<Value>,
) -> Result<Vec<Value>, HostError> {
    let session = SharedSession::new(SessionLog::in_memory(SessionHeader::new(cwd.map(str::to_owned))));
    let input = StepInput { cwd: cwd.map(Arc::from), preview: true, ..StepInput::default() };
    match run_step(plugin, registry, &session, &input, Decision::Enter(proposed))? {
        StepOutcome::Decided(Decision::Enter(messages)) => Ok(messages),
        StepOutcome::Decided(Decision::Reject(_)) | StepOutcome::Aborted => Ok(Vec::new()),
    }
}

/// Records a `skill` call's result in the session as DeepSeek Harness does:
/// a `tool/result` event on the visible surface whose message carries the
/// text the model sees, `isError` set for a tool error, and a fresh call id.
/// When the plugin asked to record the load ([`ToolOutcome::Success`]'s
/// `loaded`), the message's source also carries
/// `"plugin":"dsh-tool-skill","loaded":{"name","provider","bodyDigest"?}`
/// (docs/spec.md §3.12), which the plugin reads back in later steps.
pub fn record_tool_result(session: &mut SessionLog, outcome: &ToolOutcome) -> Result<(), SessionError> {
    session.append_event("tool/result", tool_result_data(outcome), Some(SurfaceOp::Append))?;
    Ok(())
}

/// The `data` of a `tool/result` event recording a `skill` call, in DeepSeek Harness's shape.
fn tool_result_data(outcome: &ToolOutcome) -> Value {
    let call_id = format!("call-{}", message::new_message_id());
    let is_error = matches!(outcome, ToolOutcome::Error { .. });
    let mut source = json!({"kind": "tool", "callId": call_id});
    if let ToolOutcome::Success { loaded: Some(loaded), .. } = outcome {
        let mut record = json!({"name": loaded.name, "provider": loaded.provider});
        if let Some(digest) = &loaded.body_digest {
            record["bodyDigest"] = Value::String(digest.clone());
        }
        source["plugin"] = Value::String(skill_rules::PLUGIN_NAME.to_owned());
        source["loaded"] = record;
    }
    json!({
        "message": {
            "id": message::new_message_id(),
            "role": "user",
            "source": source,
            "content": [{
                "type": "tool-result",
                "toolCallId": call_id,
                "isError": is_error,
                "content": [{"type": "text", "text": outcome.text()}],
            }],
        },
    })
}

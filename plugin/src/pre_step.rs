//! The pre-step (docs/spec.md §3.8): projects the skill catalog into the decision the
//! host's other listeners produced, before every model step; with user
//! invocation on, it also loads the skills a user named with `/name`.
//!
//! This file holds the entry point, the shape of the decision and the
//! user-invocation injection that follows the catalog; the steps of the
//! catalog projection are in `projection`, the history scan (step 6) in
//! `history`, the steady-step shortcut in `steady`, and what the instance
//! remembers between steps in `memory`.

mod history;
mod memory;
mod projection;
mod steady;

use crate::config::Config;
use crate::gesture::{MAX_INVOKED_SKILLS, invocation_source, invoked_skill_names, not_loaded_note};
use crate::tool;
use crate::types::{
    ContentBlock, DecidedMessage, Decision, Message, Registry, RegistryError, SessionHistory, StepContext, StepError,
};
use crate::user_only::UserOnly;

pub use self::history::CatalogHistory;
pub use self::memory::{Memory, SteadyStep};

use self::projection::project_catalog;
use self::steady::already_current;

/// Runs the pre-step on the decision the host's other listeners proposed
/// and returns what to change, in the shape the host's `step.decide` takes:
/// proposed messages kept by their index, the rest added. `None` when the
/// proposal stands as it is (always for a reject): nothing to send.
///
/// Inlined into the export, so that the steady step (see
/// `already_current`) is a few comparisons with no call: in WebAssembly
/// every call costs about as much as the comparisons themselves.
#[inline]
pub fn pre_step(
    config: &Config,
    memory: &mut Memory,
    context: &StepContext,
    decision: Decision,
    registry: &impl Registry,
    session: &impl SessionHistory,
) -> Result<Option<Vec<DecidedMessage>>, StepError> {
    match decision {
        // 1. A reject passes through unchanged.
        Decision::Reject => Ok(None),
        Decision::Enter(proposed) if proposed.is_empty() && already_current(memory, context) => Ok(None),
        Decision::Enter(proposed) => decide(config, memory, context, proposed, registry, session),
    }
}

/// The pre-step for an entering proposal that memory alone cannot settle.
fn decide(
    config: &Config,
    memory: &mut Memory,
    context: &StepContext,
    proposed: Vec<Message>,
    registry: &impl Registry,
    session: &impl SessionHistory,
) -> Result<Option<Vec<DecidedMessage>>, StepError> {
    let count = proposed.len();
    // Every question about a skill's policy is answered with `userOnly` applied.
    let registry = &UserOnly::new(registry, &config.user_only);
    let entries = enter(config, memory, context, proposed, registry, session)?;
    let unchanged = entries.len() == count
        && entries.iter().enumerate().all(|(index, entry)| entry.proposed.is_some_and(|kept| kept as usize == index));
    if unchanged {
        return Ok(None);
    }
    Ok(Some(
        entries
            .into_iter()
            .map(|entry| match entry.proposed {
                Some(index) => DecidedMessage::Proposed(index),
                None => DecidedMessage::Added(entry.message),
            })
            .collect(),
    ))
}

/// A message of the decision being made, with its index in the proposal
/// when it is a proposed one: the pre-step drops, replaces and appends, and
/// says which it did rather than leaving it to be worked out from contents.
struct Entry {
    proposed: Option<u32>,
    message: Message,
}

impl Entry {
    fn added(message: Message) -> Self {
        Self { proposed: None, message }
    }
}

/// Steps 2 to 11 for an entering proposal, then the skills a user invoked
/// (at most [`MAX_INVOKED_SKILLS`], and a note naming any others).
fn enter(
    config: &Config,
    memory: &mut Memory,
    context: &StepContext,
    messages: Vec<Message>,
    registry: &impl Registry,
    session: &impl SessionHistory,
) -> Result<Vec<Entry>, StepError> {
    // 2. An aborted step stops here.
    if context.aborted {
        return Err(StepError::Aborted);
    }
    let invoked = if config.user_invocation { invoked_skill_names(&messages) } else { Vec::new() };
    let entries = messages
        .into_iter()
        .enumerate()
        .map(|(index, message)| Entry {
            proposed: Some(u32::try_from(index).expect("a proposal's count fits in u32")),
            message,
        })
        .collect();
    let (mut entries, projection) = project_catalog(config, memory, context, entries, registry, session)?;
    let mut steady = projection.steady;
    // Loaded skills: what the model loaded and still relies on (docs/spec.md §3.12).
    if config.loaded_skills
        && let Some(revision) = projection.revision
    {
        let notices = memory.loaded.notices(session, context.session, context.history_version, revision);
        if !notices.is_empty() {
            steady = None;
            entries.extend(notices.into_iter().map(Entry::added));
        }
    }
    if let Some(step) = steady {
        memory.remember_steady(step);
    }
    // User-explicit invocation comes after every other message, the catalog
    // included: at most MAX_INVOKED_SKILLS injections, then one note naming
    // the rest that would have been injected (docs/spec.md §3.10).
    let mut injected = 0;
    let mut not_loaded = Vec::new();
    for name in invoked {
        let skill = match registry.get(&name) {
            Ok(skill) => skill,
            Err(RegistryError::Aborted) => return Err(StepError::Aborted),
            // A failing provider leaves the `/name` as plain prose, like an unknown name.
            Err(RegistryError::Failed(_)) => None,
        };
        let Some(skill) = skill.filter(|skill| skill.invocation.user_invocable && skill.name == name) else {
            continue;
        };
        if injected == MAX_INVOKED_SKILLS {
            not_loaded.push(name);
            continue;
        }
        injected += 1;
        let text = tool::render(&tool::result_of(skill, config));
        entries
            .push(Entry::added(Message { source: invocation_source(&name), content: vec![ContentBlock::Text(text)] }));
    }
    if !not_loaded.is_empty() {
        entries.push(Entry::added(not_loaded_note(&not_loaded)));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests;

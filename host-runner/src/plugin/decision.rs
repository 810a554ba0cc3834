//! What a pre-step may decide, checked before the host uses it: the messages
//! the plugin keeps and those it adds (a catalog or its update, skill
//! injections for a user's `/name`s, the note naming those not loaded, skill
//! notices), each by its source (docs/spec.md §8.5).

use serde_json::Value;
use skill_rules::{Record, Refusal, SkillNotice};

use crate::bindings::types as wit;
use crate::error::HostError;
use crate::imports::{Addition, Decided, StepCall, record};
use crate::message;
use crate::sandbox::OutputLimits;

use super::Decision;
use super::output::OutputCheck;

/// Applies what the plugin decided to the proposal, checking it first: a
/// reject cannot be changed; an enter may keep proposed messages (by index,
/// in their order, each once) and add at most one catalog with the plugin's
/// own source, plus one skill injection per distinct `/name` a user wrote in
/// a proposed message, plus at most one note naming the skills it did not
/// load.
pub(super) fn apply_decision(proposed: Decision, step: StepCall, limits: OutputLimits) -> Result<Decision, HostError> {
    let invalid = |reason: String| HostError::InvalidOutput { call: "pre-step", reason };
    if step.decisions > 1 {
        return Err(invalid(format!("it decided {} times; a pre-step decides at most once", step.decisions)));
    }
    let mut proposed = match proposed {
        Decision::Reject(reason) if step.decided.is_none() => return Ok(Decision::Reject(reason)),
        Decision::Reject(_) => return Err(invalid("the plugin may not change a reject".to_owned())),
        Decision::Enter(proposed) => proposed,
    };
    let Some(decided) = step.decided else {
        return Ok(Decision::Enter(proposed));
    };
    let mut check = OutputCheck::new("pre-step", limits);
    check.added_count(decided.iter().filter(|message| matches!(message, Decided::Added(_))).count())?;
    let invocable = gesture_names(&proposed);
    let mut kept_up_to = 0;
    let mut catalogs = 0;
    let mut notes = 0;
    let mut added_count = 0;
    let mut injected: Vec<String> = Vec::new();
    let mut noticed: Vec<String> = Vec::new();
    let mut reloads = 0;
    // Never more than the proposal and the cap, however long the list is.
    let mut messages = Vec::with_capacity(decided.len().min(proposed.len().saturating_add(limits.max_added_messages)));
    for message in decided {
        let message = match message {
            Decided::Proposed(index) => {
                let index = index as usize;
                if index < kept_up_to || index >= proposed.len() {
                    return Err(invalid(format!(
                        "it kept proposed message {index} out of order or out of range ({} proposed)",
                        proposed.len()
                    )));
                }
                kept_up_to = index + 1;
                // Each index is taken once (they only go up).
                messages.push(std::mem::take(&mut proposed[index]));
                continue;
            }
            Decided::Added(Addition::Written(message)) => {
                added_count += 1;
                message
            }
            // Written only now, after the count: one at a time, and not at
            // all when its source would pass the cap.
            Decided::Added(Addition::Typed(added)) => {
                added_count += 1;
                let record = record(added.source);
                check.fits(|| format!("added message {added_count}'s source"), record.json_len())?;
                wit::Message { source: record.to_json(), content: vec![wit::ContentBlock::Text(added.text)] }
            }
        };
        check.added_message(added_count, &message)?;
        let Added { record, data } = added_message(&message).map_err(invalid)?;
        match record {
            // The step's one catalog: complete, in either form, or an update.
            Record::Catalog | Record::SkillCatalog(_) | Record::CatalogUpdate { .. } => {
                catalogs += 1;
                if catalogs > 1 {
                    return Err(invalid("more than one catalog was added".to_owned()));
                }
            }
            Record::Invocation { name } => {
                if !invocable.contains(&name) || injected.contains(&name) {
                    return Err(invalid(format!("skill \"{name}\" was injected without a user's /{name}")));
                }
                injected.push(name);
            }
            Record::InvocationNote => {
                notes += 1;
                if notes > 1 {
                    return Err(invalid("more than one invocation note was added".to_owned()));
                }
            }
            Record::Notice(SkillNotice::Changed { name, .. } | SkillNotice::Gone { name }) => {
                if noticed.contains(&name) {
                    return Err(invalid(format!("skill \"{name}\" got more than one notice")));
                }
                noticed.push(name);
            }
            Record::Notice(SkillNotice::Reload { .. }) => {
                reloads += 1;
                if reloads > 1 {
                    return Err(invalid("more than one reload notice was added".to_owned()));
                }
            }
        }
        messages.push(data);
    }
    Ok(Decision::Enter(messages))
}

/// A message the plugin added, accepted: the record its source is, and the
/// message in the log's shape.
pub(super) struct Added {
    /// What the source is (docs/spec.md §8.5).
    pub(super) record: Record,
    /// The message as it is entered, with the source as parsed.
    pub(super) data: Value,
}

/// A body digest a plugin may hand back: up to [`skill_rules::MAX_BODY_DIGEST_BYTES`]
/// of printable ASCII.
pub(super) use skill_rules::is_body_digest as is_digest;

/// Checks one added message: its source is JSON, it is exactly one text
/// block, and its source is a [`Record`] the plugin may write.
pub(super) fn added_message(message: &wit::Message) -> Result<Added, String> {
    let source: Value = serde_json::from_str(&message.source)
        .map_err(|error| format!("an added message's source is not JSON: {error}"))?;
    let [wit::ContentBlock::Text(text)] = message.content.as_slice() else {
        return Err("an added message must be exactly one text block".to_owned());
    };
    match Record::from_value(&source) {
        Ok(record) => Ok(Added { record, data: message::user_message(source, text) }),
        Err(Refusal::NotANotice) => {
            Err(format!("an added skill notice has source {source}, which is not a changed, gone or reload notice"))
        }
        Err(Refusal::Foreign | Refusal::NotJson(_)) => Err(format!(
            "an added message has source {source}; the plugin may only write {} or a skill invocation",
            skill_rules::CATALOG_SOURCE
        )),
    }
}

/// Every `/name` token in the proposed messages' text (a superset of what the
/// plugin may inject: it also checks the source is the user's own).
fn gesture_names(proposed: &[Value]) -> Vec<String> {
    let mut names = Vec::new();
    for data in proposed {
        let blocks = data.get("content").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        for text in blocks.iter().filter_map(|block| block.get("text").and_then(Value::as_str)) {
            for token in text.split(|c: char| c.is_whitespace() || c == '\u{FEFF}') {
                if let Some(name) = token.strip_prefix('/') {
                    names.push(name.to_owned());
                }
            }
        }
    }
    names
}

//! What a pre-step may decide, checked before the host uses it: the messages
//! the plugin keeps and those it adds (a catalog or its update, skill
//! injections for a user's `/name`s, the note naming those not loaded, skill
//! notices), each by its source (docs/spec.md §8.5).

use std::sync::LazyLock;

use serde_json::Value;

use crate::bindings::step::DecidedMessage;
use crate::bindings::types as wit;
use crate::error::HostError;
use crate::imports::StepCall;
use crate::message::{self, CATALOG_SOURCE};
use crate::registry::is_skill_name;
use crate::sandbox::OutputLimits;

use super::output::OutputCheck;
use super::{Decision, MAX_DIGEST_BYTES};

/// The source of the note that names the user-invoked skills a pre-step did
/// not load (docs/spec.md §3.10).
static INVOCATION_NOTE_SOURCE: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(skill_rules::INVOCATION_NOTE_SOURCE).expect("the invocation note's source is JSON")
});

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
    check.added_count(decided.iter().filter(|message| matches!(message, DecidedMessage::Added(_))).count())?;
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
            DecidedMessage::Proposed(index) => {
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
            DecidedMessage::Added(message) => message,
        };
        added_count += 1;
        check.added_message(added_count, &message)?;
        let added = added_message(&message).map_err(invalid)?;
        match &added {
            Added::Catalog(_) => {
                catalogs += 1;
                if catalogs > 1 {
                    return Err(invalid("more than one catalog was added".to_owned()));
                }
            }
            Added::Invocation(name, _) => {
                if !invocable.contains(name) || injected.contains(name) {
                    return Err(invalid(format!("skill \"{name}\" was injected without a user's /{name}")));
                }
                injected.push(name.clone());
            }
            Added::Note(_) => {
                notes += 1;
                if notes > 1 {
                    return Err(invalid("more than one invocation note was added".to_owned()));
                }
            }
            Added::Notice(Notice::About(name), _) => {
                if noticed.contains(name) {
                    return Err(invalid(format!("skill \"{name}\" got more than one notice")));
                }
                noticed.push(name.clone());
            }
            Added::Notice(Notice::Reload, _) => {
                reloads += 1;
                if reloads > 1 {
                    return Err(invalid("more than one reload notice was added".to_owned()));
                }
            }
        }
        messages.push(match added {
            Added::Catalog(data) | Added::Invocation(_, data) | Added::Note(data) | Added::Notice(_, data) => data,
        });
    }
    Ok(Decision::Enter(messages))
}

/// A message the plugin added, accepted.
pub(super) enum Added {
    /// A catalog: the plugin's own source, one text block.
    Catalog(Value),
    /// A user-invoked skill's instructions.
    Invocation(String, Value),
    /// The note naming the user-invoked skills not loaded.
    Note(Value),
    /// A notice about skills the model loaded (docs/spec.md §3.12).
    Notice(Notice, Value),
}

/// What a skill notice is about.
pub(super) enum Notice {
    /// One skill changed or went away.
    About(String),
    /// The skills whose loaded instructions compaction hid.
    Reload,
}

/// The source `kind` of a skill notice.
const NOTICE_KIND: &str = "skill-notice";

/// Reads a skill notice's source: exactly the fields of its form.
fn notice(source: &Value) -> Option<Notice> {
    let fields = source.as_object()?;
    let string = |key: &str| fields.get(key).and_then(Value::as_str);
    let named = || string("name").filter(|name| is_skill_name(name)).map(|name| Notice::About(name.to_owned()));
    match string("form")? {
        "changed" => {
            let digest = match fields.get("bodyDigest") {
                None => true,
                Some(Value::String(digest)) => is_digest(digest),
                Some(_) => false,
            };
            let provider = string("provider").is_some_and(|provider| !provider.is_empty());
            let expected = 4 + usize::from(fields.contains_key("bodyDigest"));
            (digest && provider && fields.len() == expected).then(named)?
        }
        "gone" => (fields.len() == 3).then(named)?,
        "reload" => {
            let names = fields.get("names")?.as_array()?;
            if names.is_empty() || names.len() > skill_rules::MAX_RELOAD_NAMES || fields.len() != 3 {
                return None;
            }
            let mut seen = std::collections::HashSet::with_capacity(names.len());
            names
                .iter()
                .all(|name| name.as_str().is_some_and(|name| is_skill_name(name) && seen.insert(name)))
                .then_some(Notice::Reload)
        }
        _ => None,
    }
}

/// The source of a catalog in DeepSeek Harness 0.1.0-rc.8's form (with
/// `catalogSource: "skill-catalog"`, docs/spec.md §3.1): exactly `kind`,
/// `form`, `entries`, an optional `"update": true` and, under a budget, a
/// string `coverage` (§3.13), each entry exactly a skill `name` and a
/// string `description`.
fn is_skill_catalog_source(source: &Value) -> bool {
    let Some(fields) = source.as_object() else { return false };
    let update = match fields.get("update") {
        None => 0,
        Some(Value::Bool(true)) => 1,
        Some(_) => return false,
    };
    let coverage = match fields.get("coverage") {
        None => 0,
        Some(Value::String(_)) => 1,
        Some(_) => return false,
    };
    let entries = fields.get("entries").and_then(Value::as_array);
    fields.len() == 3 + update + coverage
        && fields.get("kind").and_then(Value::as_str) == Some(skill_rules::SKILL_CATALOG_KIND)
        && fields.get("form").and_then(Value::as_str) == Some("catalog")
        && entries.is_some_and(|entries| {
            entries.iter().all(|entry| {
                entry.as_object().is_some_and(|entry| {
                    entry.len() == 2
                        && entry.get("name").and_then(Value::as_str).is_some_and(is_skill_name)
                        && entry.get("description").is_some_and(Value::is_string)
                })
            })
        })
}

/// The source of a catalog update (with `catalogUpdates: "delta"`,
/// docs/spec.md §3.13): exactly the catalog source's `kind` and `plugin`,
/// `"form": "catalog-update"` and `removed`, distinct skill names.
fn is_catalog_update_source(source: &Value) -> bool {
    let Some(fields) = source.as_object() else { return false };
    let Some(removed) = fields.get("removed").and_then(Value::as_array) else { return false };
    let mut seen = std::collections::HashSet::with_capacity(removed.len());
    fields.len() == 4
        && fields.get("kind") == CATALOG_SOURCE.get("kind")
        && fields.get("plugin") == CATALOG_SOURCE.get("plugin")
        && fields.get("form").and_then(Value::as_str) == Some(skill_rules::CATALOG_UPDATE_FORM)
        && removed.iter().all(|name| name.as_str().is_some_and(|name| is_skill_name(name) && seen.insert(name)))
}

/// A body digest a plugin may hand back: up to [`MAX_DIGEST_BYTES`] of printable ASCII.
pub(super) fn is_digest(digest: &str) -> bool {
    digest.len() <= MAX_DIGEST_BYTES && digest.bytes().all(|byte| byte.is_ascii_graphic())
}

pub(super) fn added_message(message: &wit::Message) -> Result<Added, String> {
    let source: Value = serde_json::from_str(&message.source)
        .map_err(|error| format!("an added message's source is not JSON: {error}"))?;
    let [wit::ContentBlock::Text(text)] = message.content.as_slice() else {
        return Err("an added message must be exactly one text block".to_owned());
    };
    if source == *CATALOG_SOURCE || is_skill_catalog_source(&source) || is_catalog_update_source(&source) {
        return Ok(Added::Catalog(message::user_message(source, text)));
    }
    if source == *INVOCATION_NOTE_SOURCE {
        return Ok(Added::Note(message::user_message(source, text)));
    }
    if source.get("kind").and_then(Value::as_str) == Some(NOTICE_KIND) {
        return match notice(&source) {
            Some(notice) => Ok(Added::Notice(notice, message::user_message(source, text))),
            None => {
                Err(format!("an added skill notice has source {source}, which is not a changed, gone or reload notice"))
            }
        };
    }
    let invocation = source.as_object().and_then(|fields| {
        let name = fields.get("name")?.as_str()?;
        let exact = fields.len() == 3
            && fields.get("kind")?.as_str()? == "skill-invocation"
            && fields.get("form")?.as_str()? == "instructions";
        exact.then(|| name.to_owned())
    });
    match invocation {
        Some(name) => Ok(Added::Invocation(name, message::user_message(source, text))),
        None => Err(format!(
            "an added message has source {source}; the plugin may only write {} or a skill invocation",
            *CATALOG_SOURCE
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

//! Loaded skills stay true (opt-in `loadedSkills`, docs/spec.md §3.12): each
//! pre-step compares the skills whose `skill` results the model still sees
//! with the registry's current versions, and tells the model once when one
//! changed or went away; when compaction hid a result, it reminds the model
//! once which skills it loaded earlier.
//!
//! Everything is read back from the session (the tool results the host
//! recorded with their load, and the notices given), so a new process picks
//! up where the last one stopped, and a notice is never repeated: a notice
//! newer than the load it is about, saying the same, settles it.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde_json::Value;

use skill_rules::{Record, SkillNotice};

use crate::catalog::PLUGIN_NAME;
use crate::memory::{ByKey, ByRevision, BySession};
use crate::types::{ContentBlock, Message, SessionHistory, SkillSummary, SourceFilter};

pub use skill_rules::MAX_SKILL_NOTICES;

/// The source `kind` of the notices.
pub use skill_rules::NOTICE_KIND;

/// The source `kind` of a tool result the host recorded.
const TOOL_KIND: &str = "tool";

/// How many history references to read across the boundary at a time.
const HISTORY_PAGE: u32 = 64;

/// How many revisions' skill versions are kept.
const REVISIONS: usize = 16;
/// How many recorded loads and notices are kept before starting over.
const EVENTS: usize = 1 << 16;
/// How many sessions' scans are kept before starting over.
const HISTORIES: usize = 256;

/// The notice for a skill whose instructions changed after the model loaded them.
pub fn changed_text(name: &str) -> String {
    format!(
        "<system-reminder>\nThe instructions of skill `{name}` changed after you loaded them. Call the `skill` tool with the name `{name}` again before following them further.\n</system-reminder>"
    )
}

/// The notice for a loaded skill that is gone, or no longer the model's to invoke.
pub fn gone_text(name: &str) -> String {
    format!(
        "<system-reminder>\nSkill `{name}` is no longer available. The instructions you loaded for it earlier no longer apply; do not follow them.\n</system-reminder>"
    )
}

/// The reminder of skills loaded earlier whose results compaction hid.
pub fn reload_text(names: &[&str]) -> String {
    let listed: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    format!(
        "<system-reminder>\nYou loaded these skills earlier in this session, but their instructions are no longer in view: {}. Call the `skill` tool again for each one before relying on it.\n</system-reminder>",
        listed.join(", ")
    )
}

/// What the registry says of one skill now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillVersion {
    /// The provider that wins its name.
    pub provider: String,
    /// Its body's digest, when the provider knows it.
    pub body_digest: Option<String>,
    /// Whether the model may load it.
    pub model_invocable: bool,
}

/// The current version of every skill of one snapshot, by name.
pub type Versions = BTreeMap<String, SkillVersion>;

/// The versions of a snapshot's winners.
pub fn versions_of(skills: &[SkillSummary]) -> Versions {
    skills
        .iter()
        .map(|skill| {
            let version = SkillVersion {
                provider: skill.provider.clone(),
                // A digest no notice could carry is no way to tell.
                body_digest: skill.body_digest.clone().filter(|digest| skill_rules::is_body_digest(digest)),
                model_invocable: skill.invocation.model_invocable,
            };
            (skill.name.clone(), version)
        })
        .collect()
}

/// What one history message is, for this module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A recorded `skill` result: which body the model got.
    Load { name: String, provider: String, body_digest: Option<String> },
    /// A notice given about one skill.
    About { name: String, state: State },
    /// A reminder of these skills.
    Reload { names: Vec<String> },
    /// Anything else.
    Other,
}

/// How a loaded skill stands against the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    /// Now served by this provider with this body.
    Changed { provider: String, body_digest: Option<String> },
    /// Gone, or no longer model-invocable.
    Gone,
}

impl Event {
    /// Reads a message's source.
    /// Loads, notices and reminders of names outside the grammar are
    /// [`Event::Other`]: a notice about them could not be written.
    pub fn of(message: &Message) -> Self {
        let event = Self::read(message);
        let named = |name: &String| skill_rules::is_skill_name(name);
        match &event {
            Self::Load { name, .. } | Self::About { name, .. } if !named(name) => Self::Other,
            Self::Reload { names } if !names.iter().all(named) => Self::Other,
            _ => event,
        }
    }

    fn read(message: &Message) -> Self {
        let Ok(source) = serde_json::from_str::<Value>(&message.source) else {
            return Self::Other;
        };
        let text = |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        match source.get("kind").and_then(Value::as_str) {
            Some(TOOL_KIND) => {
                let Some(loaded) = source.get("loaded") else { return Self::Other };
                match (text(loaded, "name"), text(loaded, "provider")) {
                    (Some(name), Some(provider)) => {
                        Self::Load { name, provider, body_digest: text(loaded, "bodyDigest") }
                    }
                    _ => Self::Other,
                }
            }
            Some(NOTICE_KIND) => match (source.get("form").and_then(Value::as_str), text(&source, "name")) {
                (Some("changed"), Some(name)) => match text(&source, "provider") {
                    Some(provider) => Self::About {
                        name,
                        state: State::Changed { provider, body_digest: text(&source, "bodyDigest") },
                    },
                    None => Self::Other,
                },
                (Some("gone"), Some(name)) => Self::About { name, state: State::Gone },
                (Some("reload"), _) => {
                    let names = source.get("names").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
                    Self::Reload { names: names.iter().filter_map(|name| name.as_str().map(str::to_owned)).collect() }
                }
                _ => Self::Other,
            },
            _ => Self::Other,
        }
    }
}

/// What the history says of the skills loaded: for each name, its newest
/// load, the newest notice after it, and whether a visible reminder after it
/// named it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadedHistory {
    skills: BTreeMap<String, Loaded>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Loaded {
    provider: String,
    body_digest: Option<String>,
    visible: bool,
    /// The newest changed or gone notice given after this load.
    noticed: Option<State>,
    /// A visible reminder after this load names it.
    reminded: bool,
}

/// What a reused instance remembers for loaded skills: each complete
/// snapshot's skill versions (by revision, as the pre-step's catalogs), what
/// each recorded load or notice is, and each session's scan at its history
/// version. Bounded; forgetting only costs recomputation.
#[derive(Debug)]
pub struct LoadedMemory {
    versions: ByRevision<Versions, REVISIONS>,
    events: ByKey<(u64, u64), Rc<Event>, EVENTS>,
    histories: BySession<Rc<LoadedHistory>, HISTORIES>,
}

impl Default for LoadedMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl LoadedMemory {
    /// Remembers nothing yet.
    pub const fn new() -> Self {
        Self { versions: ByRevision::new(), events: ByKey::new(), histories: BySession::new() }
    }

    /// Remembers a complete snapshot's skill versions, forgetting the oldest when full.
    pub fn remember_versions(&mut self, revision: u64, versions: Rc<Versions>) {
        self.versions.remember(revision, versions);
    }

    /// The notices about loaded skills for a step of session `key` at
    /// history `version` on the complete snapshot of `revision` (none when
    /// its versions are not remembered: then the step was settled from a
    /// catalog remembered without them, which cannot happen under one
    /// configuration).
    pub fn notices(&mut self, session: &impl SessionHistory, key: u64, version: u64, revision: u64) -> Vec<Message> {
        let Some(versions) = self.versions.get(revision) else {
            return Vec::new();
        };
        let history = match self.histories.get(key, version) {
            Some(history) => Rc::clone(history),
            None => {
                let history = Rc::new(LoadedHistory::scan(session, key, self));
                self.histories.remember(key, version, Rc::clone(&history));
                history
            }
        };
        history.notices(&versions)
    }
}

impl LoadedHistory {
    /// Scans the session's recorded loads and notices, newest first. A
    /// message is read (and parsed) once per instance.
    pub fn scan(session: &impl SessionHistory, key: u64, memory: &mut LoadedMemory) -> Self {
        let filters = [
            SourceFilter { kind: TOOL_KIND.to_owned(), plugin: Some(PLUGIN_NAME.to_owned()) },
            SourceFilter { kind: NOTICE_KIND.to_owned(), plugin: None },
        ];
        // Newer than any load of the name seen so far (the scan goes newest first).
        let mut noticed: BTreeMap<String, State> = BTreeMap::new();
        let mut reminded: BTreeSet<String> = BTreeSet::new();
        let mut history = Self::default();
        session.visit_newest_first(&filters, HISTORY_PAGE, |reference| {
            let event = match memory.events.get(&(key, reference.seq)) {
                Some(known) => Rc::clone(known),
                None => {
                    let event =
                        Rc::new(session.get_user_message(reference.seq).map_or(Event::Other, |m| Event::of(&m)));
                    memory.events.remember((key, reference.seq), Rc::clone(&event));
                    event
                }
            };
            match &*event {
                Event::Load { name, provider, body_digest } if !history.skills.contains_key(name) => {
                    let loaded = Loaded {
                        provider: provider.clone(),
                        body_digest: body_digest.clone(),
                        visible: reference.visible,
                        noticed: noticed.remove(name),
                        reminded: reminded.contains(name),
                    };
                    history.skills.insert(name.clone(), loaded);
                }
                Event::About { name, state } if !history.skills.contains_key(name) => {
                    noticed.entry(name.clone()).or_insert_with(|| state.clone());
                }
                Event::Reload { names } if reference.visible => {
                    reminded.extend(names.iter().filter(|name| !history.skills.contains_key(*name)).cloned());
                }
                _ => {}
            }
            true
        });
        history
    }

    /// The messages to add for `current`, the registry's versions: at most
    /// [`MAX_SKILL_NOTICES`] notices (the rest follow on later steps), in
    /// name order, then one reminder naming every skill whose result
    /// compaction hid and which is still the model's to load.
    pub fn notices(&self, current: &Versions) -> Vec<Message> {
        let mut messages = Vec::new();
        let mut reload = Vec::new();
        for (name, loaded) in &self.skills {
            let now = current.get(name).filter(|version| version.model_invocable);
            if !loaded.visible {
                if now.is_some() && !loaded.reminded && reload.len() < skill_rules::MAX_RELOAD_NAMES {
                    reload.push(name.as_str());
                }
                continue;
            }
            let state = match now {
                None => State::Gone,
                // A notice must name the provider: with none, nothing is said.
                Some(version) if version.provider.is_empty() => continue,
                Some(version) if version.provider != loaded.provider => {
                    State::Changed { provider: version.provider.clone(), body_digest: version.body_digest.clone() }
                }
                Some(version) => match (&version.body_digest, &loaded.body_digest) {
                    (Some(now), Some(then)) if now != then => {
                        State::Changed { provider: version.provider.clone(), body_digest: Some(now.clone()) }
                    }
                    // The same body, or no way to tell.
                    _ => continue,
                },
            };
            if loaded.noticed.as_ref() == Some(&state) || messages.len() == MAX_SKILL_NOTICES {
                continue;
            }
            messages.push(notice(name, &state));
        }
        if !reload.is_empty() {
            let text = reload_text(&reload);
            let names = reload.iter().map(|name| (*name).to_owned()).collect();
            let source = Record::Notice(SkillNotice::Reload { names }).to_json();
            messages.push(Message { source, content: vec![ContentBlock::Text(text)] });
        }
        messages
    }
}

/// The notice about `name` in `state`, with the source that lets a later
/// step recognise it.
fn notice(name: &str, state: &State) -> Message {
    let (notice, text) = match state {
        State::Changed { provider, body_digest } => (
            SkillNotice::Changed {
                name: name.to_owned(),
                provider: provider.clone(),
                body_digest: body_digest.clone(),
            },
            changed_text(name),
        ),
        State::Gone => (SkillNotice::Gone { name: name.to_owned() }, gone_text(name)),
    };
    Message { source: Record::Notice(notice).to_json(), content: vec![ContentBlock::Text(text)] }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ContentBlock;

    fn message(source: &str) -> Message {
        Message { source: source.to_owned(), content: vec![ContentBlock::Text("t".to_owned())] }
    }

    /// What a session holds that no notice could name is not read: a step
    /// never writes a notice the host must refuse (docs/spec.md §3.12, §8.5).
    #[test]
    fn loads_and_notices_of_names_outside_the_grammar_are_not_read() {
        let load = |name: &str| {
            message(&format!(
                r#"{{"kind":"tool","plugin":"dsh-tool-skill","callId":"c","loaded":{{"name":"{name}","provider":"p"}}}}"#
            ))
        };
        assert_eq!(
            Event::of(&load("deploy")),
            Event::Load { name: "deploy".into(), provider: "p".into(), body_digest: None }
        );
        assert_eq!(Event::of(&load("Deploy")), Event::Other);
        let gone = message(r#"{"kind":"skill-notice","form":"gone","name":"../x"}"#);
        assert_eq!(Event::of(&gone), Event::Other);
        let reload = message(r#"{"kind":"skill-notice","form":"reload","names":["a","B"]}"#);
        assert_eq!(Event::of(&reload), Event::Other);
    }

    #[test]
    fn a_digest_no_notice_could_carry_is_no_digest() {
        let mut skill = SkillSummary::for_test("a", "A.", true);
        skill.body_digest = Some("x".repeat(129));
        assert_eq!(versions_of(&[skill.clone()])["a"].body_digest, None);
        skill.body_digest = Some("sha256:00".to_owned());
        assert_eq!(versions_of(&[skill])["a"].body_digest.as_deref(), Some("sha256:00"));
    }
}

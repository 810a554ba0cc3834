//! Plain-Rust mirrors of the WIT types the logic works with, so the logic
//! compiles and is tested on the native target. `glue.rs` converts.

/// Who may invoke a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvocationPolicy {
    /// Listed in the catalog and loadable by the `skill` tool.
    pub model_invocable: bool,
    /// Invocable by a user directly.
    pub user_invocable: bool,
}

pub use skill_rules::{ResourceBase, ToolView};

/// A skill as the registry lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillSummary {
    /// Kebab-case name.
    pub name: String,
    /// Raw description.
    pub description: String,
    /// The provider's `whenToUse`, raw, when it has one.
    pub when_to_use: Option<String>,
    /// Invocation policy.
    pub invocation: InvocationPolicy,
    /// Serving provider.
    pub provider: String,
    /// Origin inside the provider.
    pub source: String,
    /// The skill file's location, if the provider has one.
    pub path: Option<String>,
    /// Identifies the current body (equal digests from one provider mean
    /// the same instructions); `None` when the provider cannot tell.
    pub body_digest: Option<String>,
}

#[cfg(test)]
impl SkillSummary {
    /// A runtime skill for tests, user-invocable, with no path or digest.
    pub(crate) fn for_test(name: &str, description: &str, model_invocable: bool) -> Self {
        Self {
            name: name.to_owned(),
            description: description.to_owned(),
            when_to_use: None,
            invocation: InvocationPolicy { model_invocable, user_invocable: true },
            provider: "runtime".to_owned(),
            source: "runtime".to_owned(),
            path: None,
            body_digest: None,
        }
    }
}

/// A loaded skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDefinition {
    /// The name found at load time.
    pub name: String,
    /// Raw description.
    pub description: String,
    /// Invocation policy as of this load.
    pub invocation: InvocationPolicy,
    /// Serving provider.
    pub provider: String,
    /// Resource base, if any.
    pub resource_base: Option<ResourceBase>,
    /// The skill file's location, if the provider has one.
    pub path: Option<String>,
    /// The instructions.
    pub content: String,
    /// Identifies this body, as [`SkillSummary::body_digest`] does.
    pub body_digest: Option<String>,
}

/// Which body a `skill` call returned, for the host to record with the
/// result (`loadedSkills`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedSkill {
    /// The skill's name.
    pub name: String,
    /// The provider that served it.
    pub provider: String,
    /// The body's digest, as the registry gave it.
    pub body_digest: Option<String>,
}

/// A registry snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// False when some provider could not be listed completely.
    pub complete: bool,
    /// Equal revisions mean equal skill lists.
    pub revision: u64,
    /// Winners, sorted by name.
    pub skills: Vec<SkillSummary>,
}

/// The registry's answer to a snapshot request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotAnswer {
    /// Still the complete snapshot of the revision the plugin holds.
    Unchanged,
    /// A snapshot the plugin does not hold.
    Changed(Snapshot),
}

/// Why a registry call gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryError {
    /// The step was aborted.
    Aborted,
    /// A provider failed with this text.
    Failed(String),
}

/// A message content block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentBlock {
    /// Text.
    Text(String),
    /// Anything else, as JSON.
    Other(String),
}

/// A user-role message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The source object as JSON text.
    pub source: String,
    /// The content blocks.
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// The text when the content is exactly one text block.
    pub fn single_text(&self) -> Option<&str> {
        match self.content.as_slice() {
            [ContentBlock::Text(text)] => Some(text),
            _ => None,
        }
    }
}

/// A durable user message of the session, without its content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageRef {
    /// Its seq.
    pub seq: u64,
    /// Whether it is on the model-visible surface.
    pub visible: bool,
}

/// Selects messages by source `kind` and, optionally, `plugin`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFilter {
    /// Source kind.
    pub kind: String,
    /// Source plugin.
    pub plugin: Option<String>,
}

/// One page of message references, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MessageRefPage {
    /// The references.
    pub refs: Vec<MessageRef>,
    /// Cursor for the next, older page.
    pub next: Option<u64>,
}

/// What the host knows about a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepContext {
    /// Identifies the session within the host process.
    pub session: u64,
    /// The revision of the complete snapshot the host holds for the session's cwd, if any.
    pub registry_revision: Option<u64>,
    /// Changes whenever the user-message history or its visibility changes.
    pub history_version: u64,
    /// Tool visibility.
    pub tool_view: ToolView,
    /// Aborted before the plugin ran.
    pub aborted: bool,
}

/// A step decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Enter with these messages.
    Enter(Vec<Message>),
    /// Do not run the step (the host keeps the reason).
    Reject,
}

/// One message of the decision a pre-step makes, relative to the proposed ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecidedMessage {
    /// The proposed message at this index, as proposed.
    Proposed(u32),
    /// A message the plugin adds.
    Added(Message),
}

/// Why a pre-step gave no decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepError {
    /// The step was aborted.
    Aborted,
}

/// One file of a skill other than its skill file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// Its path inside the skill, `/`-separated.
    pub path: String,
    /// Its size in bytes, when the provider knows it.
    pub size: Option<u64>,
}

/// The first files of a skill, and how many it has.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillFiles {
    /// The first files by path.
    pub files: Vec<SkillFile>,
    /// How many files the skill has in all.
    pub total: u64,
}

/// What a read of a skill's file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileAnswer {
    /// The whole file, UTF-8 text.
    Text(String),
    /// A file that is not text, of this many bytes.
    Binary(u64),
    /// A file over the cap on one read, of this many bytes.
    TooLarge(u64),
    /// No such file in the skill.
    Missing,
    /// The skill's provider serves no files for it.
    Unavailable,
}

/// The skill registry, as imported from the host: every question is about
/// the working directory of the call it is asked in, which the host chose.
pub trait Registry {
    /// A snapshot for the catalog; `known` is the revision already held.
    fn snapshot(&self, known: Option<u64>) -> Result<SnapshotAnswer, RegistryError>;
    /// The winning skills, for the tool's lookup.
    fn list(&self, name: Option<&str>) -> Result<Vec<SkillSummary>, RegistryError>;
    /// Loads one skill afresh.
    fn get(&self, name: &str) -> Result<Option<SkillDefinition>, RegistryError>;
    /// The first `limit` files of a skill other than its skill file; `None`
    /// when its provider serves none. A registry without files has none.
    fn list_files(&self, name: &str, limit: u32) -> Result<Option<SkillFiles>, RegistryError> {
        let _ = (name, limit);
        Ok(None)
    }
    /// Reads one file of a skill afresh.
    fn read_file(&self, name: &str, path: &str) -> Result<FileAnswer, RegistryError> {
        let _ = (name, path);
        Ok(FileAnswer::Unavailable)
    }
}

/// The session history, as imported from the host.
pub trait SessionHistory {
    /// References to user messages matching `filters`, newest first, seq below `before`.
    fn list_user_messages(&self, filters: &[SourceFilter], before: Option<u64>, limit: u32) -> MessageRefPage;
    /// One user message by seq.
    fn get_user_message(&self, seq: u64) -> Option<Message>;

    /// Visits the references matching `filters`, newest first, reading
    /// `page` at a time across the boundary, until `visit` returns false or
    /// the history is exhausted.
    fn visit_newest_first(&self, filters: &[SourceFilter], page: u32, mut visit: impl FnMut(MessageRef) -> bool)
    where
        Self: Sized,
    {
        let mut before = None;
        loop {
            let listed = self.list_user_messages(filters, before, page);
            if !listed.refs.into_iter().all(&mut visit) {
                return;
            }
            match listed.next {
                // A cursor that does not move back would loop forever: a host bug, stop.
                Some(next) if before.is_none_or(|previous| next < previous) => before = Some(next),
                _ => return,
            }
        }
    }
}

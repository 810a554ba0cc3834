//! The values providers and the registry exchange (docs/spec.md §4.1).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Who may invoke a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InvocationPolicy {
    /// The model may see it in the catalog and load it with the `skill` tool.
    pub model_invocable: bool,
    /// A user may invoke it directly.
    pub user_invocable: bool,
}

impl Default for InvocationPolicy {
    fn default() -> Self {
        Self { model_invocable: true, user_invocable: true }
    }
}

pub use skill_rules::ResourceBase;

/// [`ResourceBase`] in JSON, as the reference writes it:
/// `{"kind":"directory","path":…}`, `{"kind":"url","url":…}` or
/// `{"kind":"opaque","description":…}`, unknown fields refused. The rules
/// crate does without serde's derive, so its serde form lives here, for
/// `#[serde(with = "skill_host::ResourceBaseJson")]` on a field of yours
/// (or `ResourceBaseJson::deserialize(value)`).
#[derive(Serialize, Deserialize)]
#[serde(remote = "ResourceBase", tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum ResourceBaseJson {
    /// A directory on this machine.
    Directory {
        /// The directory's path.
        path: String,
    },
    /// A base URL.
    Url {
        /// The URL.
        url: String,
    },
    /// Free-text guidance.
    Opaque {
        /// The guidance text.
        description: String,
    },
}

/// One skill as a provider lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillCandidate {
    /// Kebab-case name.
    pub name: String,
    /// Non-empty description, as written by the skill's author.
    pub description: String,
    /// Optional routing hint; never shown in the catalog.
    pub when_to_use: Option<String>,
    /// Who may invoke it.
    pub invocation: InvocationPolicy,
    /// Origin within the provider (`project-dsh`, `custom`, `runtime`, …).
    pub source: String,
    /// The listing provider's name; must equal [`SkillProvider::name`].
    pub provider: String,
    /// Where its resources live, if known.
    pub resource_base: Option<ResourceBase>,
    /// Precedence among duplicates: lower wins.
    pub rank: i64,
    /// The file it came from, if any.
    pub path: Option<PathBuf>,
    /// Free-form metadata, kept only when it is a mapping.
    pub metadata: Option<serde_json::Value>,
    /// What identifies the skill's current body, as its provider knows it
    /// when listing (see `body_digest`): equal digests from one provider
    /// mean the same instructions. `None` when the provider cannot tell
    /// without loading the skill.
    pub body_digest: Option<String>,
    /// What the listing opened, for a skill file on this machine: reads of
    /// the skill's files check that they open these same files (docs/spec.md
    /// §6.9, docs/security.md). Never sent to the plugin.
    pub listed: Option<ListedFiles>,
}

/// The identity of an opened file or folder: its device and inode, which
/// stay the same while it is edited in place and change when another file is
/// put at its path (a rename, a symbolic link).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    /// The device (`st_dev`).
    pub device: u64,
    /// The inode (`st_ino`).
    pub inode: u64,
}

impl FileIdentity {
    /// The identity in `meta` (taken from an open handle, so that it is the
    /// identity of what was read); `None` where the platform has none.
    pub fn of(meta: &std::fs::Metadata) -> Option<Self> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(Self { device: meta.dev(), inode: meta.ino() })
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }
}

/// What a local listing opened for one skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedFiles {
    /// The skill file it read (`SKILL.md`, or a flat `<name>.md`), links
    /// followed.
    pub file: FileIdentity,
    /// A bundle's folder, links followed; its `SKILL.md` was opened beneath
    /// this very folder. `None` for a flat skill file.
    pub folder: Option<FileIdentity>,
}

/// The digest of a skill body: `sha256:` and the SHA-256 of its UTF-8
/// bytes in lowercase hex.
pub fn body_digest(body: &str) -> String {
    file_digest(body.as_bytes())
}

/// `sha256:` and the lowercase hex SHA-256 of `bytes`: the digest of a
/// file as indexes and the Skills extension write it.
pub fn file_digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let hash = Sha256::digest(bytes);
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for byte in hash {
        text.push_str(&format!("{byte:02x}"));
    }
    text
}

/// A skill's full definition, as a provider loads it.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillDefinition {
    /// The listed fields, as found at load time (the name may have changed).
    pub summary: SkillCandidate,
    /// The instructions.
    pub content: String,
}

/// A file a provider looked at and did not list, with the reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedFile {
    /// The file or folder.
    pub path: PathBuf,
    /// Why it was skipped, for a human.
    pub reason: String,
}

/// What one provider returned for one cwd.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listing {
    /// The candidates in the provider's own order.
    pub candidates: Vec<SkillCandidate>,
    /// False for an explicitly incomplete listing (some state could not be
    /// read): its candidates still count, but the snapshot is incomplete.
    pub complete: bool,
    /// Files that were looked at and refused, for diagnostics.
    pub skipped: Vec<SkippedFile>,
    /// Why an incomplete listing is incomplete, one line each for a human
    /// (`cannot read skill file /x/SKILL.md: Permission denied …`); the
    /// registry's warning for the provider quotes them.
    pub problems: Vec<String>,
}

/// A skill's files as a provider lists them (docs/spec.md §3.15): those
/// other than its skill file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileListing {
    /// The first files, by path in byte order, each with its size in bytes
    /// when the provider knows it.
    pub files: Vec<(String, Option<u64>)>,
    /// How many files the skill has in all.
    pub total: u64,
}

impl FileListing {
    /// The first `limit` of `files` (paths inside a skill, sorted), and their count.
    pub fn first(files: impl IntoIterator<Item = (String, Option<u64>)>, limit: usize) -> Self {
        let mut listing = Self::default();
        for file in files {
            listing.total += 1;
            if listing.files.len() < limit {
                listing.files.push(file);
            }
        }
        listing
    }
}

/// What a read of a skill's file found (docs/spec.md §3.15).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileRead {
    /// The whole file, UTF-8 text without NUL.
    Text(String),
    /// A file that is not text, of this many bytes.
    Binary(u64),
    /// A file over [`skill_rules::MAX_SKILL_FILE_READ_BYTES`], of this many
    /// bytes, unread.
    TooLarge(u64),
    /// The skill has no such file.
    Missing,
    /// The provider serves no files for this skill.
    Unavailable,
}

impl FileRead {
    /// What `bytes`, a whole file, are: text, or a file that is not.
    pub fn of_bytes(bytes: Vec<u8>) -> Self {
        let size = bytes.len() as u64;
        if size > skill_rules::MAX_SKILL_FILE_READ_BYTES {
            return Self::TooLarge(size);
        }
        if bytes.contains(&0) {
            return Self::Binary(size);
        }
        match String::from_utf8(bytes) {
            Ok(text) => Self::Text(text),
            Err(_) => Self::Binary(size),
        }
    }
}

/// A provider's failure, in its own words (shown to the model as
/// `Error: <message>` when a tool call hits it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProviderError(pub String);

/// A source of skills. Implementations: the local filesystem provider, the
/// in-memory provider used by scenarios, test fakes.
pub trait SkillProvider: Send + Sync {
    /// The provider's registered name; every candidate it lists carries it.
    fn name(&self) -> &str;

    /// Lists the skills visible from `cwd` (`None`: no project roots).
    fn list(&self, cwd: Option<&Path>) -> Result<Listing, ProviderError>;

    /// Loads the body of a candidate this provider listed, reading it afresh.
    /// `Ok(None)` when it no longer exists.
    fn load(&self, cwd: Option<&Path>, candidate: &SkillCandidate) -> Result<Option<SkillDefinition>, ProviderError>;

    /// The files of a candidate this provider listed, other than its skill
    /// file: the first `limit` by path and how many there are
    /// (docs/spec.md §3.15). `Ok(None)`, the default, when it serves none.
    fn list_files(
        &self,
        cwd: Option<&Path>,
        candidate: &SkillCandidate,
        limit: usize,
    ) -> Result<Option<FileListing>, ProviderError> {
        let _ = (cwd, candidate, limit);
        Ok(None)
    }

    /// Reads the file `path` (one [`skill_rules::is_skill_file_path`]
    /// accepts) of a candidate this provider listed, afresh and confined to
    /// the skill. [`FileRead::Unavailable`], the default, when it serves none.
    fn read_file(&self, cwd: Option<&Path>, candidate: &SkillCandidate, path: &str) -> Result<FileRead, ProviderError> {
        let _ = (cwd, candidate, path);
        Ok(FileRead::Unavailable)
    }
}

pub use skill_rules::is_skill_name;

#[cfg(test)]
mod tests {
    #[test]
    fn a_body_digest_is_sha256_in_lowercase_hex() {
        assert_eq!(super::body_digest(""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}

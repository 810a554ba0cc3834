//! A skill's files on this machine: which files a local skill serves, and
//! their reads confined to its folder (docs/spec.md §3.15 and §6.9,
//! docs/security.md). The MCP server's Skills extension and the registry's
//! file reads for the `skill` tool (`read-skill-file`) serve the same set.
//!
//! A bundle (`<root>/<name>/SKILL.md`) serves every regular file below its
//! folder except hidden ones (a name starting with `.`); a symbolic link is
//! served only when it resolves beneath the folder (relative, never rising
//! above it: the kernel resolves it beneath the folder's handle) to a file
//! the walk serves as itself. A flat skill file (`<root>/<name>.md`) has no
//! folder of its own: it serves only `SKILL.md`, its own text.

use std::path::PathBuf;

use skill_rules::{SKILL_FILE, SkillPatterns};

use crate::lint::{NamePlace, lint_text};
use crate::registry::{FileListing, FileRead, ListedFiles, ProviderError, SkillCandidate, Winner};

mod opened;
pub use opened::{Decision, OpenedSkill, SETTLED};

/// The files of a local skill other than its skill file, for the tool
/// (`list-skill-files`, docs/spec.md §3.15): what the Skills extension
/// serves of it, less `SKILL.md`; `None` for a candidate without a file here.
pub(crate) fn list(candidate: &SkillCandidate, limit: usize) -> Result<Option<FileListing>, ProviderError> {
    let Some(files) = SkillFiles::of_candidate(candidate) else {
        return Ok(None);
    };
    let opened = files.open(&candidate.name).map_err(|error| ProviderError(error.to_string()))?;
    let served = opened.files().iter().filter(|(path, _)| path != SKILL_FILE && skill_rules::is_skill_file_path(path));
    Ok(Some(FileListing::first(served.map(|(path, size)| (path.clone(), Some(*size))), limit)))
}

/// Reads the file `path` of a local skill for the tool (`read-skill-file`):
/// one the Skills extension serves, opened beneath the folder the listing
/// opened, never over [`skill_rules::MAX_SKILL_FILE_READ_BYTES`].
pub(crate) fn read(candidate: &SkillCandidate, path: &str) -> Result<FileRead, ProviderError> {
    let Some(files) = SkillFiles::of_candidate(candidate) else {
        return Ok(FileRead::Unavailable);
    };
    let opened = files.open(&candidate.name).map_err(|error| ProviderError(error.to_string()))?;
    let Some(&(_, size)) = opened.files().iter().find(|(served, _)| served == path) else {
        return Ok(FileRead::Missing);
    };
    if size > skill_rules::MAX_SKILL_FILE_READ_BYTES {
        return Ok(FileRead::TooLarge(size));
    }
    match opened.read(path, path) {
        Ok(bytes) => Ok(FileRead::of_bytes(bytes)),
        Err(SkillsError::NoSuchFile { .. } | SkillsError::Outside { .. }) => Ok(FileRead::Missing),
        Err(error) => Err(ProviderError(error.to_string())),
    }
}

/// The most files one skill may have (the Skills extension's limit).
pub const MAX_SKILL_FILES: usize = 512;

/// The most bytes all of one skill's files may have together (the Skills
/// extension's limit, 16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// The most entries a walk looks at below a skill's folder (files, folders,
/// links, hidden ones), so a folder of needless entries costs a bounded walk.
pub const MAX_WALK_ENTRIES: usize = 16_384;

/// Nested folders followed below a skill's folder (a bound on the walk, not
/// a limit of the extension).
const MAX_DEPTH: usize = 16;

/// Where a skill's files are, and what the listing opened there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillFiles {
    /// A bundle: the folder holding its `SKILL.md`.
    Folder {
        /// The folder, as listed (links not resolved).
        folder: PathBuf,
        /// The folder and `SKILL.md` the listing opened.
        listed: ListedFiles,
    },
    /// A flat skill file: only itself, served as `SKILL.md`.
    Flat {
        /// The file, as listed.
        file: PathBuf,
        /// The file the listing opened.
        listed: ListedFiles,
    },
}

impl SkillFiles {
    /// The files of `winner`, when it is a skill file the local provider
    /// opened on this machine (and recorded what it opened).
    pub fn of(winner: &Winner) -> Option<Self> {
        Self::of_candidate(&winner.candidate)
    }

    /// The files of `candidate`, when it is a skill file the local provider
    /// opened on this machine (and recorded what it opened).
    pub fn of_candidate(candidate: &SkillCandidate) -> Option<Self> {
        let path = candidate.path.as_deref()?;
        // Only the local provider's paths are files (a remote skill's path is
        // its URL).
        if candidate.provider != "local" || !path.is_absolute() {
            return None;
        }
        let listed = candidate.listed?;
        match listed.folder {
            Some(_) => path.parent().map(|folder| Self::Folder { folder: folder.to_path_buf(), listed }),
            None => Some(Self::Flat { file: path.to_path_buf(), listed }),
        }
    }

    /// The files of `winner` when the Skills extension serves it: a skill
    /// file on this machine ([`SkillFiles::of`]) that the model may invoke.
    pub fn served_by_extension(winner: &Winner, user_only: &SkillPatterns) -> Option<Self> {
        // A `userOnly` skill is the configuration's `disable-model-invocation`.
        if !winner.candidate.invocation.model_invocable || user_only.first_match(&winner.candidate.name).is_some() {
            return None;
        }
        Self::of(winner)
    }

    /// The name its place requires: a bundle's folder name, a flat file's stem.
    fn required_name(&self) -> Option<(&str, NamePlace)> {
        match self {
            SkillFiles::Folder { folder, .. } => folder.file_name()?.to_str().map(|name| (name, NamePlace::Folder)),
            SkillFiles::Flat { file, .. } => file.file_stem()?.to_str().map(|stem| (stem, NamePlace::File)),
        }
    }

    /// `Invalid` when the `SKILL.md` text breaks a rule every verifying
    /// client applies (the first one, by line).
    pub(crate) fn check_client_rules(&self, name: &str, text: &str) -> Result<(), SkillsError> {
        let mut broken: Vec<_> =
            lint_text(text, self.required_name()).into_iter().filter(|finding| finding.client_rule).collect();
        broken.sort_by_key(|finding| finding.line);
        match broken.into_iter().next() {
            None => Ok(()),
            Some(finding) => Err(SkillsError::Invalid {
                name: name.to_owned(),
                rule: match finding.line {
                    Some(line) => format!("{SKILL_FILE}:{line}: {}", finding.message),
                    None => format!("{SKILL_FILE}: {}", finding.message),
                },
            }),
        }
    }
}

/// Why a skill or a file is not served; each names what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillsError {
    /// No served skill has that name.
    #[error("no skill \"{0}\" is served here")]
    Unknown(String),
    /// The skill is over the extension's file-count limit.
    #[error(
        "skill \"{name}\" has more than {MAX_SKILL_FILES} files; the Skills extension allows at most {MAX_SKILL_FILES} per skill"
    )]
    TooManyFiles {
        /// The skill.
        name: String,
    },
    /// The skill's folder holds more entries than a walk looks at.
    #[error(
        "skill \"{name}\" has more than {MAX_WALK_ENTRIES} entries below its folder; at most {MAX_WALK_ENTRIES} are looked at"
    )]
    TooManyEntries {
        /// The skill.
        name: String,
    },
    /// The skill is over the extension's size limit.
    #[error(
        "skill \"{name}\" has {bytes} bytes of files; the Skills extension allows at most 16 MiB ({MAX_SKILL_BYTES} bytes) per skill"
    )]
    TooLarge {
        /// The skill.
        name: String,
        /// Its files' bytes, counted up to the point it went over.
        bytes: u64,
    },
    /// A URI that is not a skill file's.
    #[error("{uri} is not a skill resource: {why}")]
    BadUri {
        /// The URI as given.
        uri: String,
        /// What is wrong with it.
        why: String,
    },
    /// A path that leaves the skill's folder.
    #[error("{uri} is outside the folder of skill \"{name}\"")]
    Outside {
        /// The URI as given.
        uri: String,
        /// The skill.
        name: String,
    },
    /// No such file in the skill.
    #[error("{uri}: skill \"{name}\" has no such file")]
    NoSuchFile {
        /// The URI as given.
        uri: String,
        /// The skill.
        name: String,
    },
    /// The skill's folder or `SKILL.md` is no longer what the listing
    /// opened: nothing of it is served until it is listed again.
    #[error("skill \"{name}\" changed on disk since it was listed; list the skills again")]
    Changed {
        /// The skill.
        name: String,
    },
    /// The skill's `SKILL.md` breaks a rule of the Agent Skills
    /// specification that verifying clients apply.
    #[error(
        "skill \"{name}\" is not served over the Skills extension: it breaks a rule of the Agent Skills specification ({rule})"
    )]
    Invalid {
        /// The skill.
        name: String,
        /// `SKILL.md:{line}: {the lint message}`.
        rule: String,
    },
    /// A URI that is not a directory of a served skill.
    #[error("{uri} is not a directory of a served skill")]
    NotADirectory {
        /// The URI as given.
        uri: String,
    },
    /// The skill's files could not be read.
    #[error("skill \"{name}\": {why}")]
    Unreadable {
        /// The skill.
        name: String,
        /// The I/O or frontmatter error.
        why: String,
    },
}

#[cfg(test)]
mod tests;

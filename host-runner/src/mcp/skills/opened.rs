//! A skill's files as the Skills extension serves them: opened from what
//! the listing opened, never from whatever is at the path now.
//!
//! The one decision per skill ([`SkillFiles::open`]): its folder (a
//! bundle's) is opened and must be the folder the listing opened (device
//! and inode); its `SKILL.md` (or flat file) is opened beneath that handle
//! and must be the file the listing parsed; every other file is found and
//! read beneath the folder handle with resolution confined by the kernel
//! (`openat2` with `RESOLVE_BENEATH` on Linux, through cap-primitives), so a
//! link that leaves the folder, even one swapped in while reads run, opens
//! nothing. Over the extension's limits, the skill is refused as a whole.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use cap_primitives::fs::{FollowSymlinks, OpenOptions};
use skill_rules::SKILL_FILE;

use super::{MAX_DEPTH, MAX_SKILL_BYTES, MAX_SKILL_FILES, SkillFiles, SkillsError};
use crate::providers::local::open::{open_beneath, open_folder, open_nonblocking};
use crate::registry::{FileIdentity, ListedFiles};

/// A skill as served: its files, listed beneath the folder it was opened
/// from, and that folder's handle for reading them.
#[derive(Debug)]
pub struct OpenedSkill {
    name: String,
    /// The bundle's folder, as opened and checked; `None` for a flat file.
    folder: Option<fs::File>,
    /// Where its `SKILL.md` is (for a flat skill, the file itself).
    skill_file: PathBuf,
    listed: ListedFiles,
    /// `(relative path with '/', size)`, sorted; `SKILL.md` among them.
    files: Vec<(String, u64)>,
}

impl SkillFiles {
    /// Opens the skill `name` as served (module docs): `Changed` when its
    /// folder or `SKILL.md` is no longer what was listed, a limit's error
    /// when it is over one.
    pub fn open(&self, name: &str) -> Result<OpenedSkill, SkillsError> {
        let (path, listed, bundle) = match self {
            SkillFiles::Folder { folder, listed } => (folder.join(SKILL_FILE), *listed, true),
            SkillFiles::Flat { file, listed } => (file.clone(), *listed, false),
        };
        let mut skill =
            OpenedSkill { name: name.to_owned(), folder: None, skill_file: path, listed, files: Vec::new() };
        if bundle {
            let folder = skill.skill_file.parent().expect("a SKILL.md path has a folder");
            let handle = open_folder(folder).map_err(|_| skill.changed())?;
            if identity(&handle) != listed.folder {
                return Err(skill.changed());
            }
            skill.folder = Some(handle);
        }
        let size = skill.open_skill_file()?.metadata().map_err(|error| skill.unreadable(SKILL_FILE, &error))?.len();
        skill.files.push((SKILL_FILE.to_owned(), size));
        if let Some(folder) = &skill.folder {
            let mut walk = Walk {
                name,
                folder,
                found: Vec::new(),
                bytes: size,
                #[cfg(unix)]
                plain: Default::default(),
                #[cfg(unix)]
                links: Vec::new(),
            };
            walk.folder(Path::new(""), 0)?;
            skill.files.extend(walk.served());
        } else if size > MAX_SKILL_BYTES {
            return Err(SkillsError::TooLarge { name: name.to_owned(), bytes: size });
        }
        skill.files.sort();
        Ok(skill)
    }
}

impl OpenedSkill {
    /// The files it serves, `(relative path, size)`, sorted.
    pub fn files(&self) -> &[(String, u64)] {
        &self.files
    }

    /// Whether it serves `relative`.
    pub fn serves(&self, relative: &str) -> bool {
        self.files.binary_search_by(|(listed, _)| listed.as_str().cmp(relative)).is_ok()
    }

    /// The bytes of its file `relative` (one it serves), read from the file
    /// opened beneath its folder; `uri` names it in errors.
    pub fn read(&self, uri: &str, relative: &str) -> Result<Vec<u8>, SkillsError> {
        let outside = || SkillsError::Outside { uri: uri.to_owned(), name: self.name.clone() };
        let no_such_file = || SkillsError::NoSuchFile { uri: uri.to_owned(), name: self.name.clone() };
        if !self.serves(relative) {
            // Say why when it is a link out of the folder.
            let leaves = self.folder.as_ref().is_some_and(|folder| {
                cap_primitives::fs::stat(folder, Path::new(relative), FollowSymlinks::Yes).is_err_and(|e| escapes(&e))
            });
            return Err(if leaves { outside() } else { no_such_file() });
        }
        let file = if relative == SKILL_FILE {
            self.open_skill_file()?
        } else {
            let folder = self.folder.as_ref().expect("only a bundle serves more than SKILL.md");
            let mut options = OpenOptions::new();
            options.read(true);
            #[cfg(unix)]
            cap_primitives::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
            cap_primitives::fs::open(folder, Path::new(relative), &options).map_err(|error| match error.kind() {
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => no_such_file(),
                _ if escapes(&error) => outside(),
                _ => self.unreadable(relative, &error),
            })?
        };
        let meta = file.metadata().map_err(|error| self.unreadable(relative, &error))?;
        if !meta.is_file() {
            return Err(no_such_file());
        }
        let mut bytes = Vec::new();
        file.take(MAX_SKILL_BYTES + 1).read_to_end(&mut bytes).map_err(|error| self.unreadable(relative, &error))?;
        if bytes.len() as u64 > MAX_SKILL_BYTES {
            return Err(SkillsError::TooLarge { name: self.name.clone(), bytes: bytes.len() as u64 });
        }
        Ok(bytes)
    }

    /// Its `SKILL.md` (or flat file), opened beneath its folder when it has
    /// one (links followed, as the listing followed them), and checked to
    /// be the very file the listing parsed.
    fn open_skill_file(&self) -> Result<fs::File, SkillsError> {
        let opened = match &self.folder {
            // Links followed wherever they lead: the identity is checked next.
            Some(folder) => open_beneath(folder, Path::new(SKILL_FILE)),
            None => open_nonblocking(&self.skill_file),
        };
        let file = opened.map_err(|_| self.changed())?;
        if identity(&file) != Some(self.listed.file) {
            return Err(self.changed());
        }
        Ok(file)
    }

    fn changed(&self) -> SkillsError {
        SkillsError::Changed { name: self.name.clone() }
    }

    fn unreadable(&self, relative: &str, error: &io::Error) -> SkillsError {
        SkillsError::Unreadable { name: self.name.clone(), why: format!("cannot read {relative}: {error}") }
    }
}

/// Whether a confined resolution failed because the path leads out of the
/// folder: cap-primitives' own error (which `openat2`'s `EXDEV` becomes),
/// a permission error without an OS error code.
fn escapes(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::PermissionDenied && error.raw_os_error().is_none()
}

fn identity(file: &fs::File) -> Option<FileIdentity> {
    file.metadata().ok().as_ref().and_then(FileIdentity::of)
}

/// The walk of a bundle's folder beneath its handle.
struct Walk<'a> {
    name: &'a str,
    folder: &'a fs::File,
    found: Vec<(String, u64)>,
    /// Bytes so far, `SKILL.md`'s included.
    bytes: u64,
    /// The (device, inode) of each file found that is not a link.
    #[cfg(unix)]
    plain: std::collections::HashSet<(u64, u64)>,
    /// Each link found, with the (device, inode) of the file it leads to.
    #[cfg(unix)]
    links: Vec<(String, (u64, u64))>,
}

impl Walk<'_> {
    /// Lists `relative` (a folder beneath the skill's, `""` for itself):
    /// every regular file but hidden ones, links followed only while they
    /// stay beneath the skill's folder; `SKILL.md` at the top is already
    /// counted.
    fn folder(&mut self, relative: &Path, depth: usize) -> Result<(), SkillsError> {
        let listed = if relative.as_os_str().is_empty() {
            cap_primitives::fs::read_base_dir(self.folder)
        } else {
            cap_primitives::fs::read_dir(self.folder, relative)
        };
        let entries = listed.map_err(|error| SkillsError::Unreadable {
            name: self.name.to_owned(),
            why: format!("cannot list {}: {error}", display(relative)),
        })?;
        for entry in entries.flatten() {
            let Some(file_name) = entry.file_name().to_str().map(str::to_owned) else { continue };
            if file_name.starts_with('.') || (depth == 0 && file_name == SKILL_FILE) {
                continue;
            }
            let path = relative.join(&file_name);
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if depth < MAX_DEPTH {
                    self.folder(&path, depth + 1)?;
                }
                continue;
            }
            // A file, or a link whose target is a file beneath the folder.
            let Ok(meta) = cap_primitives::fs::stat(self.folder, &path, FollowSymlinks::Yes) else { continue };
            if !meta.is_file() {
                continue;
            }
            // SKILL.md is the first file counted.
            if self.found.len() + 1 == MAX_SKILL_FILES {
                return Err(SkillsError::TooManyFiles { name: self.name.to_owned() });
            }
            self.bytes += meta.len();
            if self.bytes > MAX_SKILL_BYTES {
                return Err(SkillsError::TooLarge { name: self.name.to_owned(), bytes: self.bytes });
            }
            #[cfg(unix)]
            {
                use cap_primitives::fs::MetadataExt as _;
                if kind.is_symlink() {
                    self.links.push((display(&path), (meta.dev(), meta.ino())));
                } else {
                    self.plain.insert((meta.dev(), meta.ino()));
                }
            }
            self.found.push((display(&path), meta.len()));
        }
        Ok(())
    }

    /// The files served: a link only when it leads to a file the walk found
    /// as itself, so a link never serves what the walk leaves out (a hidden
    /// file, one past the depth bound).
    fn served(self) -> Vec<(String, u64)> {
        #[cfg(unix)]
        {
            let refused: std::collections::HashSet<&str> = self
                .links
                .iter()
                .filter(|(_, target)| !self.plain.contains(target))
                .map(|(relative, _)| relative.as_str())
                .collect();
            if !refused.is_empty() {
                return self
                    .found
                    .iter()
                    .filter(|(relative, _)| !refused.contains(relative.as_str()))
                    .cloned()
                    .collect();
            }
        }
        self.found
    }
}

/// A relative path with `/` separators.
fn display(relative: &Path) -> String {
    let parts: Vec<String> = relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
    if parts.is_empty() { ".".to_owned() } else { parts.join("/") }
}

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
//!
//! That decision is kept ([`Decision`]) and reused ([`SkillFiles::reopen`])
//! while nothing it rests on has changed: the folder and `SKILL.md` are
//! still what was listed, and every folder the walk listed, and `SKILL.md`,
//! has the change time (`st_ctime`, which the kernel moves on every entry
//! added, removed or renamed, every write and every change of mode) the walk
//! saw. A decision taken within [`SETTLED`] of such a change time is not
//! kept: a file system's clock ticks coarsely, so a second change in the
//! same tick would leave the time as it was.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use cap_primitives::fs::{FollowSymlinks, OpenOptions};
use skill_rules::SKILL_FILE;

use super::{MAX_DEPTH, MAX_SKILL_BYTES, MAX_SKILL_FILES, MAX_WALK_ENTRIES, SkillFiles, SkillsError};
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
    files: Arc<[(String, u64)]>,
    /// The identity of each of `files` (for a link, of the file it leads
    /// to) as the walk found it: a read must open that very file.
    identities: Arc<[Option<FileIdentity>]>,
    /// What the walk saw, when it was a walk and could stamp what it saw.
    seen: Option<Seen>,
}

/// How long after the last change of what a decision rests on it may be
/// kept: longer than any file system's timestamp tick (a jiffy on Linux,
/// 2 s on FAT), so a change after the decision always moves a change time.
pub const SETTLED: Duration = Duration::from_secs(3);

/// What a file or folder was when a walk saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    device: u64,
    inode: u64,
    /// `st_ctime`, seconds and nanoseconds.
    changed: (i64, i64),
}

impl Stamp {
    #[cfg(unix)]
    fn of(meta: &impl StampSource) -> Option<Self> {
        Some(meta.stamp())
    }

    #[cfg(not(unix))]
    fn of(_meta: &impl StampSource) -> Option<Self> {
        // No change time to rely on: nothing is kept.
        None
    }

    /// Whether it changed within `settled` before `instant` (or after).
    fn unsettled(&self, instant: SystemTime, settled: Duration) -> bool {
        let Ok(since_epoch) = instant.duration_since(SystemTime::UNIX_EPOCH) else { return true };
        let settled = since_epoch.saturating_sub(settled);
        let (seconds, nanos) = self.changed;
        // Before 1970: a clock not to be trusted, so never settled.
        let Ok(seconds) = u64::try_from(seconds) else { return true };
        Duration::new(seconds, u32::try_from(nanos).unwrap_or(0)) >= settled
    }
}

/// Metadata from std or from cap-primitives, both with a change time.
trait StampSource {
    fn stamp(&self) -> Stamp;
}

#[cfg(unix)]
impl StampSource for fs::Metadata {
    fn stamp(&self) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp { device: self.dev(), inode: self.ino(), changed: (self.ctime(), self.ctime_nsec()) }
    }
}

#[cfg(unix)]
impl StampSource for cap_primitives::fs::Metadata {
    fn stamp(&self) -> Stamp {
        use cap_primitives::fs::MetadataExt;
        Stamp { device: self.dev(), inode: self.ino(), changed: (self.ctime(), self.ctime_nsec()) }
    }
}

#[cfg(not(unix))]
impl StampSource for fs::Metadata {
    fn stamp(&self) -> Stamp {
        Stamp { device: 0, inode: 0, changed: (0, 0) }
    }
}

#[cfg(not(unix))]
impl StampSource for cap_primitives::fs::Metadata {
    fn stamp(&self) -> Stamp {
        Stamp { device: 0, inode: 0, changed: (0, 0) }
    }
}

/// What a walk saw: the time it started, its `SKILL.md`, and each folder
/// it listed (`""`: the skill's own).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    started: SystemTime,
    skill_file: Stamp,
    folders: Vec<(PathBuf, Stamp)>,
}

/// A skill's files as a walk found them, kept while what it rests on
/// holds (module docs).
#[derive(Debug, Clone)]
pub struct Decision {
    files: Arc<[(String, u64)]>,
    identities: Arc<[Option<FileIdentity>]>,
    seen: Seen,
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
        let started = SystemTime::now();
        let mut skill = OpenedSkill {
            name: name.to_owned(),
            folder: None,
            skill_file: path,
            listed,
            files: Arc::new([]),
            identities: Arc::new([]),
            seen: None,
        };
        let mut folders = Vec::new();
        if bundle {
            let folder = skill.skill_file.parent().expect("a SKILL.md path has a folder");
            let handle = open_folder(folder).map_err(|_| skill.changed())?;
            let meta = handle.metadata().map_err(|_| skill.changed())?;
            if FileIdentity::of(&meta) != listed.folder {
                return Err(skill.changed());
            }
            folders.extend(Stamp::of(&meta).map(|stamp| (PathBuf::new(), stamp)));
            skill.folder = Some(handle);
        }
        let meta = skill.open_skill_file()?.metadata().map_err(|error| skill.unreadable(SKILL_FILE, &error))?;
        let size = meta.len();
        let mut files = vec![(SKILL_FILE.to_owned(), size, Some(listed.file))];
        let mut stamped = Stamp::of(&meta).is_some();
        if let Some(folder) = &skill.folder {
            let mut walk = Walk {
                name,
                folder,
                found: Vec::new(),
                entries: 0,
                bytes: size,
                folders,
                stamped: true,
                #[cfg(unix)]
                plain: Default::default(),
                #[cfg(unix)]
                links: Vec::new(),
            };
            walk.folder(folder, Path::new(""), 0)?;
            stamped &= walk.stamped && !walk.folders.is_empty();
            folders = std::mem::take(&mut walk.folders);
            files.extend(walk.served());
        } else if size > MAX_SKILL_BYTES {
            return Err(SkillsError::TooLarge { name: name.to_owned(), bytes: size });
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        skill.identities = files.iter().map(|(_, _, identity)| *identity).collect();
        skill.files = files.into_iter().map(|(path, size, _)| (path, size)).collect();
        if stamped && let Some(skill_file) = Stamp::of(&meta) {
            skill.seen = Some(Seen { started, skill_file, folders });
        }
        Ok(skill)
    }

    /// The skill `name` opened as `decision` found it, without walking its
    /// folder again: `Ok(None)` when something the decision rests on has
    /// changed since (the caller opens it afresh), `Changed` when its folder
    /// is no longer the one listed.
    pub fn reopen(&self, name: &str, decision: &Decision) -> Result<Option<OpenedSkill>, SkillsError> {
        let changed = || SkillsError::Changed { name: name.to_owned() };
        let (skill_file, listed) = match self {
            SkillFiles::Folder { folder, listed } => (folder.join(SKILL_FILE), *listed),
            SkillFiles::Flat { file, listed } => (file.clone(), *listed),
        };
        let seen = &decision.seen;
        let folder = match self {
            SkillFiles::Flat { .. } => {
                let meta = fs::metadata(&skill_file).map_err(|_| changed())?;
                if Stamp::of(&meta) != Some(seen.skill_file) {
                    return Ok(None);
                }
                None
            }
            SkillFiles::Folder { folder, .. } => {
                let handle = open_folder(folder).map_err(|_| changed())?;
                let meta = handle.metadata().map_err(|_| changed())?;
                if FileIdentity::of(&meta) != listed.folder {
                    return Err(changed());
                }
                for (relative, stamp) in &seen.folders {
                    let now = if relative.as_os_str().is_empty() {
                        Stamp::of(&meta)
                    } else {
                        cap_primitives::fs::stat(&handle, relative, FollowSymlinks::No)
                            .ok()
                            .and_then(|meta| Stamp::of(&meta))
                    };
                    if now != Some(*stamp) {
                        return Ok(None);
                    }
                }
                // Links followed, as the listing followed them.
                let now = cap_primitives::fs::stat(&handle, Path::new(SKILL_FILE), FollowSymlinks::Yes)
                    .ok()
                    .and_then(|meta| Stamp::of(&meta));
                if now != Some(seen.skill_file) {
                    return Ok(None);
                }
                Some(handle)
            }
        };
        Ok(Some(OpenedSkill {
            name: name.to_owned(),
            folder,
            skill_file,
            listed,
            files: Arc::clone(&decision.files),
            identities: Arc::clone(&decision.identities),
            seen: None,
        }))
    }
}

impl OpenedSkill {
    /// The files it serves, `(relative path, size)`, sorted.
    pub fn files(&self) -> &[(String, u64)] {
        &self.files
    }

    /// What may be kept of this opening to open the skill again
    /// ([`SkillFiles::reopen`]): `None` when it was not a walk, or what the
    /// walk saw changed within `settled` ([`SETTLED`]) before it.
    pub fn decision(&self, settled: Duration) -> Option<Decision> {
        let seen = self.seen.as_ref()?;
        let unsettled = seen.skill_file.unsettled(seen.started, settled)
            || seen.folders.iter().any(|(_, stamp)| stamp.unsettled(seen.started, settled));
        (!unsettled).then(|| Decision {
            files: Arc::clone(&self.files),
            identities: Arc::clone(&self.identities),
            seen: seen.clone(),
        })
    }

    /// Whether it serves `relative`.
    pub fn serves(&self, relative: &str) -> bool {
        self.served_at(relative).is_some()
    }

    /// Where `relative` is among the files served.
    fn served_at(&self, relative: &str) -> Option<usize> {
        self.files.binary_search_by(|(listed, _)| listed.as_str().cmp(relative)).ok()
    }

    /// The bytes of its file `relative` (one it serves), read from the file
    /// opened beneath its folder; `uri` names it in errors.
    pub fn read(&self, uri: &str, relative: &str) -> Result<Vec<u8>, SkillsError> {
        let outside = || SkillsError::Outside { uri: uri.to_owned(), name: self.name.clone() };
        let no_such_file = || SkillsError::NoSuchFile { uri: uri.to_owned(), name: self.name.clone() };
        let Some(at) = self.served_at(relative) else {
            // Say why when it is a link out of the folder.
            let leaves = self.folder.as_ref().is_some_and(|folder| {
                cap_primitives::fs::stat(folder, Path::new(relative), FollowSymlinks::Yes).is_err_and(|e| escapes(&e))
            });
            return Err(if leaves { outside() } else { no_such_file() });
        };
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
        // The very file the walk served at this path: a link swapped in
        // since (to a hidden file, to another served one) opens nothing.
        if !meta.is_file() || FileIdentity::of(&meta) != self.identities[at] {
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
    found: Vec<(String, u64, Option<FileIdentity>)>,
    /// Entries looked at so far, of every kind.
    entries: usize,
    /// Bytes so far, `SKILL.md`'s included.
    bytes: u64,
    /// Each folder listed, as it was before it was listed.
    folders: Vec<(PathBuf, Stamp)>,
    /// Whether every folder listed could be stamped.
    stamped: bool,
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
    fn folder(&mut self, handle: &fs::File, relative: &Path, depth: usize) -> Result<(), SkillsError> {
        if !relative.as_os_str().is_empty() {
            // Stamped before it is listed: a change after the stamp moves
            // its change time past it.
            match handle.metadata().ok().and_then(|meta| Stamp::of(&meta)) {
                Some(stamp) => self.folders.push((relative.to_path_buf(), stamp)),
                None => self.stamped = false,
            }
        }
        // Listed through its own handle: the folder the walk entered, never
        // one a link swapped in at its path leads to.
        let listed = cap_primitives::fs::read_base_dir(handle);
        let entries = listed.map_err(|error| SkillsError::Unreadable {
            name: self.name.to_owned(),
            why: format!("cannot list {}: {error}", display(relative)),
        })?;
        for entry in entries.flatten() {
            let file_name = entry.file_name();
            // Every entry looked at counts, hidden ones and folders too.
            if !(depth == 0 && file_name == SKILL_FILE) {
                self.entries += 1;
                if self.entries > MAX_WALK_ENTRIES {
                    return Err(SkillsError::TooManyEntries { name: self.name.to_owned() });
                }
            }
            let Some(file_name) = file_name.to_str().map(str::to_owned) else { continue };
            if file_name.starts_with('.') || (depth == 0 && file_name == SKILL_FILE) {
                continue;
            }
            let path = relative.join(&file_name);
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                // Entered without following a link swapped in since.
                if depth < MAX_DEPTH
                    && let Ok(sub) = cap_primitives::fs::open_dir_nofollow(handle, Path::new(&file_name))
                {
                    self.folder(&sub, &path, depth + 1)?;
                }
                continue;
            }
            // A file, or a link whose target is a file beneath the skill's
            // folder. What the listing called a plain file is stat'ed as one,
            // in the folder listed: a link swapped in since is not followed
            // (nor taken for the file), and its identity is the real file's,
            // which a read through a folder swapped since does not reach.
            let meta = if kind.is_symlink() {
                cap_primitives::fs::stat(self.folder, &path, FollowSymlinks::Yes)
            } else {
                cap_primitives::fs::stat(handle, Path::new(&file_name), FollowSymlinks::No)
            };
            let Ok(meta) = meta else { continue };
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
            self.found.push((display(&path), meta.len(), walked_identity(&meta)));
        }
        Ok(())
    }

    /// The files served: a link only when it leads to a file the walk found
    /// as itself, so a link never serves what the walk leaves out (a hidden
    /// file, one past the depth bound).
    fn served(self) -> Vec<(String, u64, Option<FileIdentity>)> {
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
                    .filter(|(relative, _, _)| !refused.contains(relative.as_str()))
                    .cloned()
                    .collect();
            }
        }
        self.found
    }
}

/// The identity of a file the walk found (for a link, of its target).
fn walked_identity(meta: &cap_primitives::fs::Metadata) -> Option<FileIdentity> {
    #[cfg(unix)]
    {
        use cap_primitives::fs::MetadataExt as _;
        Some(FileIdentity { device: meta.dev(), inode: meta.ino() })
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// A relative path with `/` separators.
fn display(relative: &Path) -> String {
    let parts: Vec<String> = relative.iter().map(|part| part.to_string_lossy().into_owned()).collect();
    if parts.is_empty() { ".".to_owned() } else { parts.join("/") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed_at(seconds: i64, nanos: i64) -> Stamp {
        Stamp { device: 1, inode: 2, changed: (seconds, nanos) }
    }

    #[test]
    fn a_change_time_is_settled_only_once_the_margin_has_passed() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let margin = Duration::from_secs(3);
        assert!(!changed_at(996, 999_999_999).unsettled(now, margin));
        assert!(changed_at(997, 0).unsettled(now, margin), "exactly the margin before");
        assert!(changed_at(999, 0).unsettled(now, margin));
        assert!(changed_at(1_005, 0).unsettled(now, margin), "a change time ahead of the clock");
        assert!(changed_at(-1, 0).unsettled(now, margin), "before 1970");
    }
}

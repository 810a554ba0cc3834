//! The local filesystem skill provider (docs/spec.md §4.2): skills in project, custom,
//! user and bundled folders.
//!
//! A root holds skills one level deep: `<root>/<dir>/SKILL.md` (resources in
//! `<dir>`) or `<root>/<file>.md` (resources in the root). Absence is an
//! ordinary state and lists nothing; a malformed skill is skipped with a
//! reason; any other I/O failure marks the listing incomplete, so the model
//! keeps its last good catalog instead of seeing skills vanish.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use super::frontmatter::parse_skill_file;
use crate::registry::{
    FileIdentity, FileListing, FileRead, ListedFiles, Listing, ProviderError, ResourceBase, SkillCandidate,
    SkillDefinition, SkillProvider, SkippedFile, body_digest,
};

pub mod files;
pub(crate) mod open;

/// The provider's registered name.
pub const LOCAL_PROVIDER: &str = "local";

/// The file that makes a folder a skill.
use skill_rules::SKILL_FILE;

/// The largest skill file read, in bytes. The largest in the public corpora
/// is 74 KB; a body near this size already fills a tool result to half of
/// the sandbox's 16 MiB text cap. A larger file is skipped with a reason, so
/// neither listing nor loading ever reads an unbounded file into memory.
pub const MAX_SKILL_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// The folder under the user's DeepSeek Harness skills that holds the
/// harness's own system skills, which are not listed as user skills.
const SYSTEM_DIR: &str = ".system";

/// Where the local provider looks, besides the project roots derived from the
/// cwd.
#[derive(Debug, Clone, Default)]
pub struct LocalRoots {
    /// The DeepSeek Harness home; its `skills` folder is the `user-dsh` root.
    pub dsh_home: Option<PathBuf>,
    /// The agents home; its `skills` folder is the `user-agents` root.
    pub agents_home: Option<PathBuf>,
    /// Configured skill folders, the `custom` roots, in precedence order.
    pub custom: Vec<PathBuf>,
    /// The folder of skills shipped with the host, the `bundled` root.
    pub bundled: Option<PathBuf>,
}

impl LocalRoots {
    /// `DSH_HOME` (else `~/.dsh`) and `DSH_AGENTS_HOME` (else `~/.agents`)
    /// from the environment, with `~` taken from `HOME`. No custom or bundled
    /// roots.
    pub fn from_env() -> Self {
        let cwd = std::env::current_dir().ok();
        Self::from_vars(|key| std::env::var_os(key), cwd.as_deref())
    }

    /// [`LocalRoots::from_env`] over any variable source, so it can be tested
    /// without touching the process environment.
    fn from_vars(var: impl Fn(&str) -> Option<OsString>, cwd: Option<&Path>) -> Self {
        let home = var("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
        let resolve = |key: &str, default_dir: &str| {
            // A blank override counts as unset, as DeepSeek Harness treats
            // `DSH_HOME`, so it never resolves to the current directory.
            let configured = var(key).filter(|v| !v.to_string_lossy().trim().is_empty());
            let path = match configured {
                Some(value) => expand_home(PathBuf::from(value), home.as_deref())?,
                None => home.as_ref()?.join(default_dir),
            };
            Some(absolutize(&path, cwd))
        };
        Self {
            dsh_home: resolve("DSH_HOME", ".dsh"),
            agents_home: resolve("DSH_AGENTS_HOME", ".agents"),
            custom: Vec::new(),
            bundled: None,
        }
    }
}

/// Expands a leading `~` component against `home`; `None` when the path needs
/// a home and there is none.
fn expand_home(path: PathBuf, home: Option<&Path>) -> Option<PathBuf> {
    match path.strip_prefix("~") {
        Ok(rest) => Some(home?.join(rest)),
        Err(_) => Some(path),
    }
}

/// Makes `path` absolute against `cwd` and removes `.` and `..` lexically, as
/// Node's `path.resolve` does. Symlinks are not resolved: paths shown to the
/// model stay the ones the user configured.
fn absolutize(path: &Path, cwd: Option<&Path>) -> PathBuf {
    let joined = match cwd {
        Some(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                // `pop` leaves the root alone, so `/..` stays `/`.
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The nearest ancestor of `cwd` (inclusive) holding `.git` (file or folder),
/// else `cwd` itself. A relative `cwd` is taken against the process's
/// current directory.
pub fn project_root(cwd: &Path) -> PathBuf {
    let process_cwd = std::env::current_dir().ok();
    let cwd = absolutize(cwd, process_cwd.as_deref());
    // A worktree or submodule has a `.git` file; both mark a project. Any
    // failure to stat (a broken link, no permission) means "not here".
    cwd.ancestors().find(|dir| fs::metadata(dir.join(".git")).is_ok()).map_or_else(|| cwd.clone(), Path::to_path_buf)
}

// Ranks and source names of the roots, lowest rank winning (docs/spec.md §4.2).
const PROJECT_DSH: (&str, i64) = ("project-dsh", 100);
const PROJECT_AGENTS: (&str, i64) = ("project-agents", 200);
const CUSTOM: (&str, i64) = ("custom", 300);
const USER_DSH: (&str, i64) = ("user-dsh", 400);
const USER_AGENTS: (&str, i64) = ("user-agents", 500);
const BUNDLED: (&str, i64) = ("bundled", 600);

/// One folder of skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRoot {
    /// The folder.
    pub path: PathBuf,
    /// The source its skills carry (`project-dsh`, `custom`, …).
    pub source: &'static str,
    /// The rank its skills carry.
    pub rank: i64,
    /// Skip a `.system` child (the user's DeepSeek Harness root only).
    pub skip_system: bool,
}

impl SkillRoot {
    fn new((source, rank): (&'static str, i64), path: PathBuf) -> Self {
        Self { path, source, rank, skip_system: false }
    }
}

/// Lists and loads skills from the local filesystem.
#[derive(Debug, Clone)]
pub struct LocalProvider {
    roots: LocalRoots,
}

impl LocalProvider {
    /// A provider over `roots`; relative root paths are taken against the
    /// process's current directory now, so a later `chdir` does not move them.
    pub fn new(roots: LocalRoots) -> Self {
        let process_cwd = std::env::current_dir().ok();
        let cwd = process_cwd.as_deref();
        let roots = LocalRoots {
            dsh_home: roots.dsh_home.map(|p| absolutize(&p, cwd)),
            agents_home: roots.agents_home.map(|p| absolutize(&p, cwd)),
            custom: roots.custom.iter().map(|p| absolutize(p, cwd)).collect(),
            bundled: roots.bundled.map(|p| absolutize(&p, cwd)),
        };
        Self { roots }
    }

    /// The roots for `cwd`, in rank order, whether they exist or not.
    pub fn roots_for(&self, cwd: Option<&Path>) -> Vec<SkillRoot> {
        let mut roots = Vec::new();
        if let Some(cwd) = cwd {
            let project = project_root(cwd);
            roots.push(SkillRoot::new(PROJECT_DSH, project.join(".dsh/skills")));
            roots.push(SkillRoot::new(PROJECT_AGENTS, project.join(".agents/skills")));
        }
        for dir in &self.roots.custom {
            roots.push(SkillRoot::new(CUSTOM, dir.clone()));
        }
        if let Some(home) = &self.roots.dsh_home {
            roots.push(SkillRoot { skip_system: true, ..SkillRoot::new(USER_DSH, home.join("skills")) });
        }
        if let Some(home) = &self.roots.agents_home {
            roots.push(SkillRoot::new(USER_AGENTS, home.join("skills")));
        }
        if let Some(dir) = &self.roots.bundled {
            roots.push(SkillRoot::new(BUNDLED, dir.clone()));
        }
        roots
    }
}

impl SkillProvider for LocalProvider {
    fn name(&self) -> &str {
        LOCAL_PROVIDER
    }

    fn list(&self, cwd: Option<&Path>) -> Result<Listing, ProviderError> {
        let mut listing = Listing { complete: true, ..Listing::default() };
        for root in self.roots_for(cwd) {
            list_root(&root, &mut listing);
        }
        Ok(listing)
    }

    fn list_files(
        &self,
        _cwd: Option<&Path>,
        candidate: &SkillCandidate,
        limit: usize,
    ) -> Result<Option<FileListing>, ProviderError> {
        files::list(candidate, limit)
    }

    fn read_file(
        &self,
        _cwd: Option<&Path>,
        candidate: &SkillCandidate,
        path: &str,
    ) -> Result<FileRead, ProviderError> {
        files::read(candidate, path)
    }

    fn load(&self, _cwd: Option<&Path>, candidate: &SkillCandidate) -> Result<Option<SkillDefinition>, ProviderError> {
        let Some(path) = &candidate.path else {
            return Err(ProviderError(format!(
                "skill \"{}\" has no file, so the {LOCAL_PROVIDER} provider cannot load it",
                candidate.name
            )));
        };
        // A bundle's SKILL.md is read beneath its folder as the listing read
        // it; the identities of what was read go into the summary, so that
        // the registry sees a skill that is another file than it listed.
        let bundle = candidate.listed.is_some_and(|listed| listed.folder.is_some());
        let (text, listed) = match read_skill_text(path, bundle) {
            Ok((SkillText::Text(text), listed)) => (text, listed),
            // Gone, or no longer a readable text file: the skill no longer
            // exists as far as the model is concerned.
            Ok((SkillText::Absent | SkillText::Refused(_), _)) => return Ok(None),
            Err(error) => {
                return Err(ProviderError(format!("cannot read skill file {}: {error}", path.display())));
            }
        };
        // A file that no longer parses is treated as gone, as DeepSeek
        // Harness does; the next listing reports why it is skipped.
        let Ok(parsed) = parse_skill_file(&text) else {
            return Ok(None);
        };
        // A renamed skill is returned as found; the registry notices the
        // name change and invalidates.
        Ok(Some(SkillDefinition {
            summary: SkillCandidate {
                name: parsed.name,
                description: parsed.description,
                when_to_use: parsed.when_to_use,
                invocation: parsed.invocation,
                source: candidate.source.clone(),
                provider: LOCAL_PROVIDER.to_string(),
                resource_base: candidate.resource_base.clone(),
                rank: candidate.rank,
                path: Some(path.clone()),
                metadata: parsed.metadata,
                body_digest: Some(body_digest(&parsed.body)),
                listed,
            },
            content: parsed.body,
        }))
    }
}

/// A root entry that may hold a skill.
struct RootEntry {
    name: OsString,
    path: PathBuf,
}

/// Lists one root into `listing`.
fn list_root(root: &SkillRoot, listing: &mut Listing) {
    let entries = match root_entries(root, listing) {
        Some(entries) => entries,
        None => return,
    };
    for entry in entries {
        if root.skip_system && entry.name == SYSTEM_DIR {
            continue;
        }
        let Some(kind) = entry_kind(&entry.path, listing) else {
            continue;
        };
        let (file, base, bundle) = match kind {
            EntryKind::Directory => (entry.path.join(SKILL_FILE), entry.path.clone(), true),
            // Case-sensitive, as in DeepSeek Harness: `NOTES.MD` is not a skill.
            EntryKind::File if entry.name.as_encoded_bytes().ends_with(b".md") => {
                (entry.path.clone(), root.path.clone(), false)
            }
            EntryKind::File | EntryKind::Other => continue,
        };
        if let Some(candidate) = read_candidate(root, &file, &base, bundle, listing) {
            listing.candidates.push(candidate);
        }
    }
}

/// The root's entries in byte order of their names, so listings are
/// deterministic. `None` when there is nothing to list (absent, not a folder,
/// unreadable; the latter two are recorded).
fn root_entries(root: &SkillRoot, listing: &mut Listing) -> Option<Vec<RootEntry>> {
    match fs::metadata(&root.path) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            skip(listing, &root.path, "skill root is not a directory");
            return None;
        }
        Err(error) if is_absent(&error) || is_symlink_loop(&error) => {
            if is_symlink(&root.path) {
                skip(listing, &root.path, format!("skill root is a broken symbolic link: {error}"));
            }
            return None;
        }
        Err(error) => {
            incomplete(listing, &root.path, "cannot read skill root", &error);
            return None;
        }
    }
    let reader = match fs::read_dir(&root.path) {
        Ok(reader) => reader,
        // Removed between the two calls: absent like any missing root.
        Err(error) if is_absent(&error) => return None,
        Err(error) => {
            incomplete(listing, &root.path, "cannot read skill root", &error);
            return None;
        }
    };
    let mut entries = Vec::new();
    for entry in reader {
        match entry {
            Ok(entry) => entries.push(RootEntry { name: entry.file_name(), path: entry.path() }),
            Err(error) => {
                // Keep what was read; the rest of the folder is unknown.
                incomplete(listing, &root.path, "cannot read skill root", &error);
                break;
            }
        }
    }
    entries.sort_by(|a, b| a.name.as_encoded_bytes().cmp(b.name.as_encoded_bytes()));
    Some(entries)
}

/// What a root entry is, symlinks followed.
enum EntryKind {
    Directory,
    File,
    /// A socket, FIFO, device: never a skill.
    Other,
}

/// Classifies an entry, following symlinks. `None` when it cannot be followed
/// (recorded in `listing`).
fn entry_kind(path: &Path, listing: &mut Listing) -> Option<EntryKind> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Some(EntryKind::Directory),
        Ok(meta) if meta.is_file() => Some(EntryKind::File),
        Ok(_) => Some(EntryKind::Other),
        Err(error) if is_absent(&error) || is_symlink_loop(&error) => {
            // A dangling or cyclic link is the author's to fix, so it is
            // reported; a plain entry removed since `read_dir` is just gone.
            if is_symlink(path) {
                skip(listing, path, format!("broken symbolic link: {error}"));
            }
            None
        }
        Err(error) => {
            incomplete(listing, path, "cannot inspect skill entry", &error);
            None
        }
    }
}

/// Reads and parses one skill file into a candidate, recording why not when
/// it is refused.
fn read_candidate(
    root: &SkillRoot,
    file: &Path,
    base: &Path,
    bundle: bool,
    listing: &mut Listing,
) -> Option<SkillCandidate> {
    let (text, listed) = match read_skill_text(file, bundle) {
        Ok((SkillText::Text(text), listed)) => (text, listed),
        // A folder without `SKILL.md` is just a folder.
        Ok((SkillText::Absent, _)) => return None,
        Ok((SkillText::Refused(reason), _)) => {
            skip(listing, file, reason);
            return None;
        }
        Err(error) => {
            incomplete(listing, file, "cannot read skill file", &error);
            return None;
        }
    };
    let parsed = match parse_skill_file(&text) {
        Ok(parsed) => parsed,
        Err(reason) => {
            skip(listing, file, reason);
            return None;
        }
    };
    // The resource base is shown to the model as text; a lossy rendering
    // would point it at a path that does not exist.
    let Some(base) = base.to_str() else {
        skip(listing, file, "the skill's folder path is not valid UTF-8");
        return None;
    };
    Some(SkillCandidate {
        name: parsed.name,
        description: parsed.description,
        when_to_use: parsed.when_to_use,
        invocation: parsed.invocation,
        source: root.source.to_string(),
        provider: LOCAL_PROVIDER.to_string(),
        resource_base: Some(ResourceBase::Directory { path: base.to_string() }),
        rank: root.rank,
        path: Some(file.to_path_buf()),
        metadata: parsed.metadata,
        body_digest: Some(body_digest(&parsed.body)),
        listed,
    })
}

/// The outcome of reading a skill file.
enum SkillText {
    /// The file is there and is UTF-8 text.
    Text(String),
    /// There is no such file.
    Absent,
    /// There is something, but not a skill file; the reason says why.
    Refused(String),
}

/// Reads a skill file (a bundle's beneath its folder, see [`open`]), with
/// the identities of what was read. `Err` only for failures that leave its
/// state unknown (permission denied, I/O error).
fn read_skill_text(path: &Path, bundle: bool) -> io::Result<(SkillText, Option<ListedFiles>)> {
    // Following links: a dangling one is refused, a missing file is absent.
    // The kind and size are judged on the file opened.
    let opened = match open::open_skill_file(path, bundle) {
        Ok(opened) => opened,
        Err(error) if is_absent(&error) || is_symlink_loop(&error) => {
            return Ok((
                if is_symlink(path) {
                    SkillText::Refused(format!("broken symbolic link: {error}"))
                } else {
                    SkillText::Absent
                },
                None,
            ));
        }
        Err(error) => return Err(error),
    };
    let (bytes, meta) = match read_opened_bytes(opened.file)? {
        Ok(read) => read,
        Err(refused) => return Ok((SkillText::Refused(refused), None)),
    };
    let listed = FileIdentity::of(&meta).map(|file| ListedFiles { file, folder: opened.folder });
    if bytes.contains(&0) {
        let refused = "binary file (contains NUL bytes), not a text skill file".to_string();
        return Ok((SkillText::Refused(refused), None));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok((SkillText::Text(text), listed)),
        Err(error) => Ok((
            SkillText::Refused(format!("not UTF-8 text (invalid byte at offset {})", error.utf8_error().valid_up_to())),
            None,
        )),
    }
}

/// Reads a skill file's bytes if, as opened, it is a regular file of at most
/// [`MAX_SKILL_FILE_BYTES`]; `Ok(Err(reason))` when it is not. The file is
/// opened without blocking (a FIFO put in its place after a check would
/// otherwise hang the reader until someone writes to it), and its kind and
/// size are those of what was opened; a file growing meanwhile is still
/// never read past the limit.
pub(crate) fn read_skill_bytes(path: &Path) -> io::Result<Result<Vec<u8>, String>> {
    Ok(read_opened_bytes(open::open_nonblocking(path)?)?.map(|(bytes, _)| bytes))
}

/// [`read_skill_bytes`] of a file already opened, with its metadata.
fn read_opened_bytes(file: fs::File) -> io::Result<Result<(Vec<u8>, fs::Metadata), String>> {
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(Err("not a regular file".to_string()));
    }
    let too_large = |size: String| format!("skill file is {size} bytes, over the {MAX_SKILL_FILE_BYTES}-byte limit");
    if meta.len() > MAX_SKILL_FILE_BYTES {
        return Ok(Err(too_large(meta.len().to_string())));
    }
    let mut bytes = Vec::new();
    file.take(MAX_SKILL_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SKILL_FILE_BYTES {
        return Ok(Err(too_large(format!("more than {MAX_SKILL_FILE_BYTES}"))));
    }
    Ok(Ok((bytes, meta)))
}

/// Errors that mean "nothing there": the path, or a folder on it, is missing.
fn is_absent(error: &io::Error) -> bool {
    matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
}

/// `ELOOP`: a symlink cycle, which is as broken as a dangling link.
/// (`io::ErrorKind::FilesystemLoop` is not stable yet.)
fn is_symlink_loop(error: &io::Error) -> bool {
    const ELOOP: Option<i32> = if cfg!(any(target_os = "linux", target_os = "android")) {
        Some(40)
    } else if cfg!(any(
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "openbsd",
        target_os = "netbsd",
        target_os = "dragonfly"
    )) {
        Some(62)
    } else {
        None
    };
    ELOOP.is_some_and(|code| error.raw_os_error() == Some(code))
}

fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
}

fn skip(listing: &mut Listing, path: &Path, reason: impl Into<String>) {
    listing.skipped.push(SkippedFile { path: path.to_path_buf(), reason: reason.into() });
}

/// Records an I/O failure: the listing is incomplete, and the skipped entry
/// tells a human why.
fn incomplete(listing: &mut Listing, path: &Path, what: &str, error: &io::Error) {
    listing.complete = false;
    listing.problems.push(format!("{what} {}: {error}", path.display()));
    skip(listing, path, format!("{what}: {error}"));
}

#[cfg(test)]
mod tests;

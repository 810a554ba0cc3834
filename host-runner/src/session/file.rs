//! The session file on disk: opened only when it is a regular file, locked
//! with a bounded and announced wait, and, when a log created it and wrote
//! nothing, removed again before its lock is let go.

use std::fs::{self, File, FileType, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::SessionError;

/// How a session log waits for a lock another process holds on its file.
///
/// The default waits as long as it takes and says nothing, which is what a
/// library caller that takes turns with other writers wants; the command line
/// announces the wait and bounds it.
#[derive(Debug, Clone, Copy, Default)]
pub struct LockWait {
    /// The longest wait for one lock before the call fails with
    /// [`SessionError::LockTimeout`]; `None` waits forever.
    pub timeout: Option<Duration>,
    /// Called with the session file, once per lock, when that lock is not
    /// free at once (the command line prints that it is waiting).
    pub on_wait: Option<fn(&Path)>,
}

/// The first pause between two tries of a busy lock; it doubles up to
/// [`LONGEST_PAUSE`], so a short wait ends soon after the holder is done and
/// a long one costs little.
const FIRST_PAUSE: Duration = Duration::from_millis(1);

/// The longest pause between two tries of a busy lock.
const LONGEST_PAUSE: Duration = Duration::from_millis(50);

/// What a session file is opened for, and so which lock it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// Reading under a shared lock.
    Read,
    /// Appending under the exclusive lock. A missing file is an error: it
    /// held events once, and a fresh file would be a log missing its history.
    Append,
    /// Appending under the exclusive lock, creating the file when it is
    /// missing (for a log that has read nothing from it).
    AppendOrCreate,
}

impl Access {
    fn exclusive(self) -> bool {
        self != Access::Read
    }
}

/// A session file, opened and locked. The lock lasts as long as this value.
pub(super) struct LockedFile {
    pub file: File,
    /// The path, when this log created the file: if nothing was written to
    /// it, it is removed when let go, so a failed call leaves no file behind.
    created: Option<PathBuf>,
}

impl Drop for LockedFile {
    fn drop(&mut self) {
        if let Some(path) = self.created.take() {
            // Runs before `file` is closed, so still under the lock.
            remove_if_still_empty(&self.file, &path);
        }
    }
}

/// Opens `path` for `access` and takes its lock, waiting as `wait` says.
/// `operation` names what failed in an error (`opening`, `reopening`, …).
///
/// After the lock is taken, the path must still name the file that was
/// opened: while this call waited, the holder may have removed the empty
/// file it had created (see [`LockedFile`]), and another may have created a
/// new one. Then the file is opened again.
pub(super) fn open_locked(
    path: &Path,
    access: Access,
    wait: &LockWait,
    operation: &str,
) -> Result<LockedFile, SessionError> {
    let mut waiting = Waiting::new(wait);
    loop {
        let (file, created) = open_file(path, access).map_err(|error| open_error(path, operation, error))?;
        check_regular(&file, path, operation)?;
        lock(&file, path, access.exclusive(), &mut waiting)?;
        if still_names(path, &file).map_err(|e| SessionError::io(path, "checking the file after locking it", e))? {
            // Armed only now, under the lock: before it, another process may
            // have opened and locked the new file, and it is theirs to keep.
            return Ok(LockedFile { file, created: created.then(|| path.to_path_buf()) });
        }
    }
}

/// [`open_locked`] for reading, where a missing file is `None`: a session
/// that no append has created yet, read as empty.
pub(super) fn open_locked_if_exists(
    path: &Path,
    wait: &LockWait,
    operation: &str,
) -> Result<Option<LockedFile>, SessionError> {
    match open_locked(path, Access::Read, wait, operation) {
        Err(SessionError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => Ok(None),
        opened => opened.map(Some),
    }
}

/// Opens `path` to read it without a lock, refusing what is not a regular
/// file (reading a message back from its line).
pub(super) fn open_to_read(path: &Path, operation: &str) -> Result<File, SessionError> {
    let file = options(Access::Read).open(path).map_err(|error| open_error(path, operation, error))?;
    check_regular(&file, path, operation)?;
    Ok(file)
}

/// Open options for `access`. On unix the file is opened without blocking:
/// a FIFO in the session file's place would otherwise hang the open until
/// someone writes to it, before it can be refused. (Reads, writes and locks
/// of a regular file do not heed the flag.)
fn options(access: Access) -> OpenOptions {
    let mut options = OpenOptions::new();
    options.read(true).append(access != Access::Read);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    options
}

/// Opens the file for `access`, and says whether this call created it.
fn open_file(path: &Path, access: Access) -> io::Result<(File, bool)> {
    loop {
        match options(access).open(path) {
            Err(error) if error.kind() == io::ErrorKind::NotFound && access == Access::AppendOrCreate => {}
            opened => return opened.map(|file| (file, false)),
        }
        match options(access).create_new(true).open(path) {
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            created => return created.map(|file| (file, true)),
        }
        // Neither there nor creatable: a dangling symlink (create_new does
        // not follow it), whose target an ordinary create makes. That file
        // is not marked as created here, so it is never removed again.
        if fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) {
            return options(access).create(true).open(path).map(|file| (file, false));
        }
        // Otherwise another process created it and removed it again
        // between the two opens: try again.
    }
}

/// The error for a failed open: what the path is when it is not a regular
/// file (a directory cannot be opened for append), else the I/O error.
fn open_error(path: &Path, operation: &str, error: io::Error) -> SessionError {
    match fs::metadata(path) {
        Ok(meta) if !meta.is_file() => not_regular(path, meta.file_type()),
        _ => SessionError::io(path, operation, error),
    }
}

/// Refuses an opened file that is not a regular file, before anything is
/// read from it or written to it.
fn check_regular(file: &File, path: &Path, operation: &str) -> Result<(), SessionError> {
    let meta = file.metadata().map_err(|e| SessionError::io(path, operation, e))?;
    if meta.is_file() { Ok(()) } else { Err(not_regular(path, meta.file_type())) }
}

fn not_regular(path: &Path, file_type: FileType) -> SessionError {
    SessionError::NotRegularFile { path: path.to_path_buf(), kind: describe(file_type) }
}

/// What a file that is not a regular file is, for an error message.
fn describe(file_type: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() { "a directory" } else { "not a file" }
}

/// Whether `path` still names the open `file` (false when it names nothing).
#[cfg(unix)]
fn still_names(path: &Path, file: &File) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let opened = file.metadata()?;
    match fs::metadata(path) {
        Ok(named) => Ok(named.dev() == opened.dev() && named.ino() == opened.ino()),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(error) => Err(error),
    }
}

/// Elsewhere a created file is never removed (below), so the path keeps
/// naming what was opened.
#[cfg(not(unix))]
fn still_names(_path: &Path, _file: &File) -> io::Result<bool> {
    Ok(true)
}

/// Removes the file this log created, if nothing was written to it and the
/// path still names it; the caller holds its exclusive lock. Best effort: at
/// worst an empty file stays, which reads as an empty session.
#[cfg(unix)]
fn remove_if_still_empty(file: &File, path: &Path) {
    let empty = file.metadata().is_ok_and(|meta| meta.len() == 0);
    if empty && still_names(path, file).unwrap_or(false) {
        let _ = fs::remove_file(path);
    }
}

/// Elsewhere an open file often cannot be removed, and without inode
/// numbers a waiter could not tell the file it opened was removed.
#[cfg(not(unix))]
fn remove_if_still_empty(_file: &File, _path: &Path) {}

/// One wait for a lock: when it began, and whether it was announced. It
/// spans the retries of [`open_locked`], so they share one timeout and one
/// notice.
struct Waiting<'a> {
    wait: &'a LockWait,
    began: Option<Instant>,
}

impl<'a> Waiting<'a> {
    fn new(wait: &'a LockWait) -> Self {
        Waiting { wait, began: None }
    }

    /// Notes that a lock is busy: the first time, it starts the clock and
    /// announces the wait. Returns how long the wait has lasted.
    fn busy(&mut self, path: &Path) -> Duration {
        match self.began {
            Some(began) => began.elapsed(),
            None => {
                self.began = Some(Instant::now());
                if let Some(on_wait) = self.wait.on_wait {
                    on_wait(path);
                }
                Duration::ZERO
            }
        }
    }
}

/// Takes the advisory lock that every writer of a session file respects; it
/// is released when `file` is closed. A busy lock is announced and retried
/// until the wait's timeout; without a timeout the call blocks. A file
/// system without locks (some network mounts) gets no locking rather than
/// no session.
fn lock(file: &File, path: &Path, exclusive: bool, waiting: &mut Waiting<'_>) -> Result<(), SessionError> {
    let mut pause = FIRST_PAUSE;
    loop {
        let tried = if exclusive { file.try_lock() } else { file.try_lock_shared() };
        match tried {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(error)) => return without_locks(error, path),
        }
        let waited = waiting.busy(path);
        let Some(timeout) = waiting.wait.timeout else {
            let locked = if exclusive { file.lock() } else { file.lock_shared() };
            return locked.or_else(|error| without_locks(error, path));
        };
        if waited >= timeout {
            // The bound, not the clock's reading, so the message is the same on every run.
            return Err(SessionError::LockTimeout { path: path.to_path_buf(), waited: timeout });
        }
        std::thread::sleep(pause.min(timeout - waited));
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

/// A locking error, except on a file system that has no locks.
fn without_locks(error: io::Error, path: &Path) -> Result<(), SessionError> {
    if error.kind() == io::ErrorKind::Unsupported { Ok(()) } else { Err(SessionError::io(path, "locking", error)) }
}

//! The session log: DeepSeek Harness's append-only JSONL session file, read
//! into an index of user messages and the model-visible surface.
//!
//! The file is the source of truth and is never rewritten: lines that cannot
//! be read are skipped with a warning and stay in the file, and every append
//! is one write under an exclusive lock that first picks up what other
//! processes appended, so two hosts on one session never reuse a seq.
//! Opening writes nothing: a new session's file is created, header first,
//! by its first append.
//!
//! ```no_run
//! # use std::path::Path;
//! # use skill_host::session::{SessionLog, SurfaceOp, new_message_id};
//! # fn main() -> Result<(), skill_host::session::SessionError> {
//! let mut log = SessionLog::open_or_create(Path::new("session.jsonl"), Some("/workspace"))?;
//! let message = serde_json::json!({
//!     "content": [{"type": "text", "text": "Hello"}],
//!     "source": {"kind": "user"},
//!     "role": "user",
//!     "id": new_message_id(),
//! });
//! let seqs = log.append_user_messages(vec![(message, SurfaceOp::Append)])?;
//! assert!(log.is_visible(seqs[0]));
//! # Ok(())
//! # }
//! ```

mod appending;
mod error;
mod file;
mod ids;
mod index;
mod reading;
mod shared;
mod surface;
mod wire;

#[cfg(test)]
mod tests;

use std::fs::File;
use std::path::{Path, PathBuf};

use serde_json::Value;

pub use self::error::SessionError;
pub use self::file::LockWait;
pub use self::shared::{SharedSession, Turn};
pub use self::surface::SurfaceOp;

use self::file::{Access, LockedFile, open_locked, open_locked_if_exists};
use self::index::{Body, IndexedMessage, SessionIndex};
use self::reading::{read_new_lines, read_user_message};

/// The `plugin` named in the source of the summary [`SessionLog::compact`] appends.
pub const COMPACTION_PLUGIN: &str = "compaction";

/// The longest line of a session file, without its newline, in bytes
/// (64 MiB). A reader skips a longer line with a warning, without holding it
/// in memory, so an append refuses to write one.
pub const MAX_LINE_BYTES: u64 = 64 * 1024 * 1024;

/// The first line of a session file: who the session is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionHeader {
    /// The session id.
    pub id: String,
    /// Creation time in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// The working directory the session runs in, when recorded.
    pub cwd: Option<String>,
}

impl SessionHeader {
    /// A fresh header: a new id (time, pid and a counter), created now, in
    /// `cwd` when given. For new files and in-memory sessions.
    pub fn new(cwd: Option<String>) -> Self {
        SessionHeader { id: ids::new_id(), created_at: ids::now_ms(), cwd }
    }
}

/// A durable user-role message event, as read for the plugin.
#[derive(Debug, Clone, PartialEq)]
pub struct UserMessageEvent {
    /// The event's seq.
    pub seq: u64,
    /// The message's `source` object as stored (`null` when absent).
    pub source: Value,
    /// The content blocks as stored.
    pub content: Vec<Value>,
}

/// What the index keeps of a user message: its seq and the two source
/// fields readers filter on. The source and content are read on demand with
/// [`SessionLog::user_message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserMessageInfo<'a> {
    /// The event's seq.
    pub seq: u64,
    /// The source's `kind` (`""` when absent or not a string).
    pub kind: &'a str,
    /// The source's `plugin`, when it is a string.
    pub plugin: Option<&'a str>,
}

/// A fresh message id, unique within this process (time, pid and a counter,
/// shaped like a UUIDv7). Callers put it in the `id` of data they append.
pub fn new_message_id() -> String {
    ids::new_id()
}

/// Where appended lines go.
enum Backing {
    /// Scenario replays: appends only update the index.
    Memory,
    /// A session file and how far this log has read it.
    File(FileCursor),
}

/// This log's position in its file. Everything before `offset` has been
/// folded into the index.
struct FileCursor {
    path: PathBuf,
    offset: u64,
    /// Lines started so far, counting an unterminated last one.
    lines: u64,
    /// Whether the bytes read so far end with `\n` (true for an empty file),
    /// so an append never glues its line onto a torn one.
    ends_with_newline: bool,
    /// How every lock this log takes waits for another holder.
    wait: LockWait,
    /// The file, opened for append and exclusively locked, while this log
    /// holds the lock across several operations (see [`SessionLog::hold`]).
    held: Option<LockedFile>,
}

impl FileCursor {
    fn new(path: &Path, wait: LockWait) -> Self {
        FileCursor { path: path.to_path_buf(), offset: 0, lines: 0, ends_with_newline: true, wait, held: None }
    }

    /// How an append or a hold opens the file: one that has read nothing
    /// may create it (a new session); one that has read lines must find it,
    /// since a fresh file would be a log missing its history.
    fn append_access(&self) -> Access {
        if self.offset == 0 { Access::AppendOrCreate } else { Access::Append }
    }

    /// Opens the file again to read it under a shared lock: `None` when it
    /// does not exist and this log has read nothing from it (a new session
    /// no append has created yet).
    fn reopen_to_read(&self) -> Result<Option<LockedFile>, SessionError> {
        if self.offset == 0 {
            open_locked_if_exists(&self.path, &self.wait, "reopening")
        } else {
            open_locked(&self.path, Access::Read, &self.wait, "reopening").map(Some)
        }
    }
}

/// Whether an empty file is worth a warning when opened.
#[derive(Clone, Copy, PartialEq, Eq)]
enum WhenEmpty {
    /// [`SessionLog::open`]: an existing log was expected.
    Warn,
    /// [`SessionLog::open_or_create`]: a new session starts empty.
    Expected,
}

/// An open session: its header, the indexed user messages and the surface.
pub struct SessionLog {
    header: SessionHeader,
    index: SessionIndex,
    backing: Backing,
    /// Unique among the logs of this process (see [`SessionLog::key`]).
    key: u64,
}

/// A fresh [`SessionLog::key`].
fn next_key() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl SessionLog {
    /// Reads an existing file; torn or unreadable lines are skipped with a
    /// warning (line number + reason), never fatal, never removed from the
    /// file. A missing file, or one that is not a regular file, is an error.
    /// An empty file gets a fresh header, written with the first append.
    /// Locks wait as long as it takes (see [`open_waiting`](Self::open_waiting)).
    pub fn open(path: &Path) -> Result<Self, SessionError> {
        Self::open_waiting(path, LockWait::default())
    }

    /// [`open`](Self::open), with every lock this log takes, now and later,
    /// waiting for another holder as `wait` says.
    pub fn open_waiting(path: &Path, wait: LockWait) -> Result<Self, SessionError> {
        // A shared lock keeps a concurrent append from showing up half written.
        let locked = open_locked(path, Access::Read, &wait, "opening")?;
        Self::load(path, Some(&locked.file), SessionHeader::new(None), wait, WhenEmpty::Warn)
    }

    /// Opens the file, or starts a new session when it is missing or empty,
    /// with a fresh header (random-ish id from time+pid, createdAt now, cwd if
    /// given). Opening writes nothing: a missing file is created, and the
    /// header written, by the first append, in the same write as its events,
    /// so a call that fails before appending leaves no file behind. Should
    /// another process create the session first, its header wins. Locks wait
    /// as long as it takes (see [`open_or_create_waiting`](Self::open_or_create_waiting)).
    pub fn open_or_create(path: &Path, cwd: Option<&str>) -> Result<Self, SessionError> {
        Self::open_or_create_waiting(path, cwd, LockWait::default())
    }

    /// [`open_or_create`](Self::open_or_create), with every lock this log
    /// takes, now and later, waiting for another holder as `wait` says.
    pub fn open_or_create_waiting(path: &Path, cwd: Option<&str>, wait: LockWait) -> Result<Self, SessionError> {
        let locked = open_locked_if_exists(path, &wait, "opening")?;
        let fresh = SessionHeader::new(cwd.map(str::to_owned));
        Self::load(path, locked.as_ref().map(|locked| &locked.file), fresh, wait, WhenEmpty::Expected)
    }

    /// A session that lives only in memory (scenario replays); appends never
    /// touch a file.
    pub fn in_memory(header: SessionHeader) -> Self {
        SessionLog { header, index: SessionIndex::default(), backing: Backing::Memory, key: next_key() }
    }

    /// The session header (synthetic when the file has none; see
    /// [`warnings`](Self::warnings)).
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The session file, or `None` for an in-memory session.
    pub fn path(&self) -> Option<&Path> {
        match &self.backing {
            Backing::Memory => None,
            Backing::File(cursor) => Some(&cursor.path),
        }
    }

    /// What was skipped or repaired while reading, one entry each, prefixed
    /// with the file's line number where there is one.
    pub fn warnings(&self) -> &[String] {
        &self.index.warnings
    }

    /// The seq the next appended event gets (one past the highest seq seen;
    /// 0 for an empty log). Another process may take it first; appends
    /// re-read the file under the lock, so the seqs they return are final.
    pub fn next_seq(&self) -> u64 {
        self.index.next_seq()
    }

    /// The user messages in seq order (ascending); the plugin pages through
    /// them newest first.
    pub fn user_messages(&self) -> impl ExactSizeIterator<Item = UserMessageInfo<'_>> + DoubleEndedIterator {
        self.index.user_messages.iter().map(|message| self.info(message))
    }

    /// The user messages whose source `kind` is `kind`, in seq order.
    pub fn user_messages_of_kind(&self, kind: &str) -> impl DoubleEndedIterator<Item = UserMessageInfo<'_>> + '_ {
        let positions = self.index.by_kind.get(kind).map_or(&[][..], Vec::as_slice);
        positions.iter().map(|&position| self.info(&self.index.user_messages[position]))
    }

    fn info<'a>(&'a self, message: &IndexedMessage) -> UserMessageInfo<'a> {
        let (kind, plugin) = self.index.keys(message);
        UserMessageInfo { seq: message.seq, kind, plugin }
    }

    /// The user message with this seq, its source and content read from the
    /// file (O(log n) to find, then one line read), or `None` when no user
    /// message has that seq. An error when the file no longer holds the line
    /// it held when indexed.
    pub fn user_message(&self, seq: u64) -> Result<Option<UserMessageEvent>, SessionError> {
        let Some(message) = self.index.find(seq) else {
            return Ok(None);
        };
        match (&message.body, &self.backing) {
            (Body::Held(held), _) => {
                let (source, content) = held.as_ref().clone();
                Ok(Some(UserMessageEvent { seq, source, content }))
            }
            (Body::InFile(span), Backing::File(cursor)) => read_user_message(&cursor.path, seq, *span).map(Some),
            (Body::InFile(_), Backing::Memory) => unreachable!("an in-memory session holds its messages"),
        }
    }

    /// Every user message with its source and content, in seq order: a
    /// convenience for small sessions and tests (it reads them all).
    pub fn read_user_messages(&self) -> Result<Vec<UserMessageEvent>, SessionError> {
        self.index.user_messages.iter().filter_map(|message| self.user_message(message.seq).transpose()).collect()
    }

    /// Changes whenever a user message is appended or a replacement hides
    /// surface nodes: equal versions mean the user messages and their
    /// visibility are as they were.
    pub fn history_version(&self) -> u64 {
        self.index.history_version
    }

    /// Identifies this log among the logs of this process: two logs never
    /// share a key, even for the same file, and a log's events never change
    /// once indexed. The plugin may remember what it read under this key.
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Whether `seq` is on the model-visible surface. O(1).
    pub fn is_visible(&self, seq: u64) -> bool {
        self.index.surface.contains(seq)
    }

    /// The surface nodes in order.
    pub fn surface(&self) -> &[u64] {
        self.index.surface.nodes()
    }

    /// Folds in lines other processes appended since this log last read the
    /// file (appends do this on their own). A file that no append has
    /// created yet reads as empty.
    pub fn refresh(&mut self) -> Result<(), SessionError> {
        let SessionLog { header, index, backing, .. } = self;
        let Backing::File(cursor) = backing else {
            return Ok(());
        };
        if let Some(held) = cursor.held.take() {
            let read = read_new_lines(cursor, index, header, &held.file);
            cursor.held = Some(held);
            return read.map(drop);
        }
        let Some(locked) = cursor.reopen_to_read()? else {
            return Ok(());
        };
        read_new_lines(cursor, index, header, &locked.file).map(drop)
    }

    /// Reads a file (`None`: one not created yet) from the start and settles
    /// its header; `fresh` is the header a new session gets.
    fn load(
        path: &Path,
        file: Option<&File>,
        fresh: SessionHeader,
        wait: LockWait,
        when_empty: WhenEmpty,
    ) -> Result<Self, SessionError> {
        let mut cursor = FileCursor::new(path, wait);
        let mut index = SessionIndex::default();
        let mut header = fresh;
        let header_read = match file {
            Some(file) => read_new_lines(&mut cursor, &mut index, &mut header, file)?,
            None => false,
        };
        if !header_read && cursor.offset == 0 {
            if when_empty == WhenEmpty::Warn {
                index.warnings.push("the file is empty; a header is written with the first append".to_owned());
            }
        } else if !header_read && index.readable_lines == 0 {
            return Err(SessionError::BadHeader {
                path: path.to_path_buf(),
                reason: "no session header and no readable event: this is not a session log".to_owned(),
            });
        } else if !header_read {
            header = SessionHeader {
                id: path.file_stem().map_or_else(ids::new_id, |stem| stem.to_string_lossy().into_owned()),
                created_at: index.first_event_time.unwrap_or(0),
                cwd: None,
            };
            index.warnings.insert(
                0,
                format!("line 1: no session header; using a synthetic one (id {:?}, from the file name)", header.id),
            );
        }
        Ok(SessionLog { header, index, backing: Backing::File(cursor), key: next_key() })
    }
}

impl std::fmt::Debug for SessionLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionLog")
            .field("path", &self.path())
            .field("header", &self.header)
            .field("next_seq", &self.next_seq())
            .field("surface_len", &self.surface().len())
            .field("user_messages", &self.index.user_messages.len())
            .field("warnings", &self.warnings().len())
            .finish()
    }
}

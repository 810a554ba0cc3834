//! The session log: DeepSeek Harness's append-only JSONL session file, read
//! into an index of user messages and the model-visible surface.
//!
//! The file is the source of truth and is never rewritten: lines that cannot
//! be read are skipped with a warning and stay in the file, and every append
//! is one write under an exclusive lock that first picks up what other
//! processes appended, so two hosts on one session never reuse a seq.
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
mod ids;
mod index;
mod reading;
mod surface;
mod wire;

#[cfg(test)]
mod tests;

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use serde_json::Value;

pub use self::error::SessionError;
pub use self::surface::SurfaceOp;

use self::appending::{header_line, lock, write_durably};
use self::index::{Body, IndexedMessage, SessionIndex};
use self::reading::{read_new_lines, read_user_message};

/// The `plugin` named in the source of the summary [`SessionLog::compact`] appends.
pub const COMPACTION_PLUGIN: &str = "compaction";

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
    /// The file, opened for append and exclusively locked, while this log
    /// holds the lock across several operations (see [`SessionLog::hold`]).
    held: Option<File>,
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
    /// file. An empty file gets a fresh header, written with the first
    /// append.
    pub fn open(path: &Path) -> Result<Self, SessionError> {
        let file = File::open(path).map_err(|e| SessionError::io(path, "opening", e))?;
        // A shared lock keeps a concurrent append from showing up half written.
        lock(&file, path, false)?;
        Self::load(path, &file)
    }

    /// Opens the file, or creates it with a fresh header (random-ish id from
    /// time+pid, createdAt now, cwd if given) when missing or empty.
    pub fn open_or_create(path: &Path, cwd: Option<&str>) -> Result<Self, SessionError> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| SessionError::io(path, "opening or creating", e))?;
        // Exclusive, so two processes creating the same session write one header.
        lock(&file, path, true)?;
        let length = file.metadata().map_err(|e| SessionError::io(path, "reading the length", e))?.len();
        if length == 0 {
            let header = SessionHeader::new(cwd.map(str::to_owned));
            let mut line = header_line(&header, path)?;
            line.push(b'\n');
            write_durably(&mut file, path, 0, &line)?;
        }
        Self::load(path, &file)
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
    /// file (appends do this on their own).
    pub fn refresh(&mut self) -> Result<(), SessionError> {
        let SessionLog { header, index, backing, .. } = self;
        let Backing::File(cursor) = backing else {
            return Ok(());
        };
        if let Some(file) = cursor.held.take() {
            let read = read_new_lines(cursor, index, header, &file);
            cursor.held = Some(file);
            return read.map(drop);
        }
        let file = File::open(&cursor.path).map_err(|e| SessionError::io(&cursor.path, "reopening", e))?;
        lock(&file, &cursor.path, false)?;
        read_new_lines(cursor, index, header, &file).map(drop)
    }

    /// Reads a file from the start and settles its header.
    fn load(path: &Path, file: &File) -> Result<Self, SessionError> {
        let mut cursor =
            FileCursor { path: path.to_path_buf(), offset: 0, lines: 0, ends_with_newline: true, held: None };
        let mut index = SessionIndex::default();
        let mut header = SessionHeader::new(None);
        let header_read = read_new_lines(&mut cursor, &mut index, &mut header, file)?;
        if !header_read && cursor.offset == 0 {
            index.warnings.push("the file is empty; a header is written with the first append".to_owned());
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

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

mod error;
mod ids;
mod index;
mod surface;
mod wire;

#[cfg(test)]
mod tests;

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

pub use self::error::SessionError;
pub use self::surface::{FoldOutcome, SurfaceFold, SurfaceOp};

use self::index::{Body, EventRequest, IndexedMessage, LineSpan, OpRequest, PlanError, PlannedBatch, SessionIndex};

/// The longest line read: a longer one (no event DeepSeek Harness writes
/// comes near it) is skipped with a warning without being held in memory.
const MAX_LINE_BYTES: u64 = 64 * 1024 * 1024;

/// What errors of an in-memory session name instead of a file.
const IN_MEMORY_PATH: &str = "<in-memory session>";

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

    /// Takes the file's exclusive lock and keeps it until
    /// [`release`](Self::release) (or until the log is dropped), folding in
    /// what other processes appended first. A step holds it from reading the
    /// history to appending its decision, so two hosts stepping one session
    /// at once take turns and the second sees what the first appended (one
    /// catalog, never two). Other handles, in this process or another, wait
    /// for the lock meanwhile. Returns whether this call took the lock:
    /// `false` when it was already held (the holder releases it) or the
    /// session lives in memory (nothing to lock).
    pub fn hold(&mut self) -> Result<bool, SessionError> {
        let SessionLog { header, index, backing, .. } = self;
        let Backing::File(cursor) = backing else {
            return Ok(false);
        };
        if cursor.held.is_some() {
            return Ok(false);
        }
        let file = open_locked_for_append(&cursor.path)?;
        read_new_lines(cursor, index, header, &file)?;
        cursor.held = Some(file);
        Ok(true)
    }

    /// Lets go of the lock [`hold`](Self::hold) took.
    pub fn release(&mut self) {
        if let Backing::File(cursor) = &mut self.backing {
            cursor.held = None;
        }
    }

    /// Appends user messages (each `data` is the full user-message data
    /// object: content, source, role, id) as ONE write under an exclusive
    /// file lock, each with its surface op (`Replace` also writes
    /// `sourceEventSeqs`: the current surface nodes in the range). Returns
    /// their seqs.
    ///
    /// Under the lock it first picks up lines other processes appended, and
    /// writes a `\n` first if the file ends in a torn line. A replacement
    /// whose range DeepSeek Harness would refuse is an error and nothing is
    /// written. The index changes only after the write succeeded; a failed
    /// write is cut back off the file.
    pub fn append_user_messages(&mut self, messages: Vec<(Value, SurfaceOp)>) -> Result<Vec<u64>, SessionError> {
        let requests = messages
            .into_iter()
            .map(|(data, op)| EventRequest { kind: index::USER_MESSAGE.to_owned(), data, op: OpRequest::Given(op) })
            .collect();
        self.append_requests(requests)
    }

    /// Appends any event (`tool/result` etc.) with an optional surface op;
    /// same guarantees as [`append_user_messages`](Self::append_user_messages).
    /// Only message events (`user/message`, `assistant/message`,
    /// `tool/result`) may carry an op. A message appended without one is
    /// log-only: it stays off the surface, and DeepSeek Harness itself would
    /// refuse to load it (it writes an op on every message).
    pub fn append_event(&mut self, event_type: &str, data: Value, op: Option<SurfaceOp>) -> Result<u64, SessionError> {
        let request =
            EventRequest { kind: event_type.to_owned(), data, op: op.map_or(OpRequest::None, OpRequest::Given) };
        let seqs = self.append_requests(vec![request])?;
        Ok(seqs.first().copied().unwrap_or_default())
    }

    /// Appends a compaction summary: a user message (source
    /// `{"kind":"plugin","plugin":"compaction"}`, text given) whose
    /// surfaceOp replaces the whole current surface (start = first surface
    /// seq, end = last; if the surface is empty, a plain append). The range
    /// is taken under the lock, so it covers lines other processes appended.
    pub fn compact(&mut self, summary: &str) -> Result<u64, SessionError> {
        let data = json!({
            "content": [{"type": "text", "text": summary}],
            "source": {"kind": "plugin", "plugin": COMPACTION_PLUGIN},
            "role": "user",
            "id": new_message_id(),
        });
        let request = EventRequest { kind: index::USER_MESSAGE.to_owned(), data, op: OpRequest::WholeSurface };
        let seqs = self.append_requests(vec![request])?;
        Ok(seqs.first().copied().unwrap_or_default())
    }

    fn display_path(&self) -> PathBuf {
        match &self.backing {
            Backing::Memory => PathBuf::from(IN_MEMORY_PATH),
            Backing::File(cursor) => cursor.path.clone(),
        }
    }

    fn append_requests(&mut self, requests: Vec<EventRequest>) -> Result<Vec<u64>, SessionError> {
        for request in &requests {
            if let Err(reason) = index::validate(request) {
                return Err(SessionError::InvalidEvent {
                    path: self.display_path(),
                    event_type: request.kind.clone(),
                    reason,
                });
            }
        }
        if requests.is_empty() {
            return Ok(Vec::new());
        }
        let SessionLog { header, index, backing, .. } = self;
        let Backing::File(cursor) = backing else {
            let batch = plan(index, requests, Path::new(IN_MEMORY_PATH))?;
            return Ok(index.commit(batch, None));
        };
        let (mut file, held) = match cursor.held.take() {
            Some(file) => (file, true),
            None => (open_locked_for_append(&cursor.path)?, false),
        };
        let appended = append_locked(cursor, index, header, &mut file, requests);
        if held {
            cursor.held = Some(file);
        }
        appended
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

/// Assigns seqs and serializes a batch; the errors name `path`.
fn plan(index: &SessionIndex, requests: Vec<EventRequest>, path: &Path) -> Result<PlannedBatch, SessionError> {
    index.plan(requests, ids::now_ms()).map_err(|error| match error {
        PlanError::Invalid { event_type, reason } => {
            SessionError::InvalidEvent { path: path.to_path_buf(), event_type, reason }
        }
        PlanError::BadRange { start, end, reason } => {
            SessionError::BadSurfaceRange { path: path.to_path_buf(), start, end, reason }
        }
    })
}

/// Appends a planned batch to `file`, which this log has open for append and
/// exclusively locked, after folding in what others appended.
fn append_locked(
    cursor: &mut FileCursor,
    index: &mut SessionIndex,
    header: &mut SessionHeader,
    file: &mut File,
    requests: Vec<EventRequest>,
) -> Result<Vec<u64>, SessionError> {
    let path = cursor.path.clone();
    read_new_lines(cursor, index, header, file)?;
    let batch = plan(index, requests, &path)?;
    let mut bytes = Vec::with_capacity(batch.bytes.len() + 1);
    let written_at = cursor.offset;
    let mut new_lines = batch.len() as u64;
    if cursor.offset == 0 {
        // The file was empty when opened: give it the header first.
        bytes.extend(header_line(header, &path)?);
        bytes.push(b'\n');
        new_lines += 1;
    } else if !cursor.ends_with_newline {
        bytes.push(b'\n');
    }
    let batch_at = written_at + bytes.len() as u64;
    bytes.extend_from_slice(&batch.bytes);
    write_durably(file, &path, written_at, &bytes)?;
    cursor.offset += bytes.len() as u64;
    cursor.lines += new_lines;
    cursor.ends_with_newline = true;
    Ok(index.commit(batch, Some(batch_at)))
}

/// Folds every line after the cursor into the index, streaming, and adopts
/// the header if the first readable line is one. Returns whether it found one.
fn read_new_lines(
    cursor: &mut FileCursor,
    index: &mut SessionIndex,
    header: &mut SessionHeader,
    file: &File,
) -> Result<bool, SessionError> {
    let path = cursor.path.as_path();
    let length = file.metadata().map_err(|e| SessionError::io(path, "reading the length", e))?.len();
    if length < cursor.offset {
        return Err(SessionError::Shrunk { path: path.to_path_buf(), read: cursor.offset, found: length });
    }
    if length == cursor.offset {
        return Ok(false);
    }
    let mut reader = BufReader::with_capacity(1 << 16, file);
    reader.seek(SeekFrom::Start(cursor.offset)).map_err(|e| SessionError::io(path, "seeking", e))?;
    let mut line = Vec::new();
    let mut header_read = false;
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| SessionError::io(path, "reading", e))?;
        if read == 0 {
            break;
        }
        // A chunk after an unterminated line continues that line.
        if cursor.ends_with_newline {
            cursor.lines += 1;
        }
        if line.len() as u64 > MAX_LINE_BYTES && line.last() != Some(&b'\n') {
            let (rest, terminated) = skip_line(&mut reader).map_err(|e| SessionError::io(path, "reading", e))?;
            let length = read as u64 + rest;
            cursor.offset += length;
            cursor.ends_with_newline = terminated;
            index.skip_long_line(cursor.lines, length, MAX_LINE_BYTES);
            continue;
        }
        let span = LineSpan { offset: cursor.offset, len: read as u64 };
        cursor.offset += read as u64;
        cursor.ends_with_newline = line.last() == Some(&b'\n');
        let found = index
            .ingest_line(cursor.lines, span, &line, cursor.ends_with_newline)
            .map_err(|reason| SessionError::BadHeader { path: path.to_path_buf(), reason })?;
        if let Some(found) = found {
            *header = found;
            header_read = true;
        }
    }
    index.count_unlisted_warnings();
    Ok(header_read)
}

/// Reads past the rest of a line without keeping it: the bytes read, and
/// whether a newline ended them.
fn skip_line(reader: &mut impl BufRead) -> io::Result<(u64, bool)> {
    let mut skipped = 0;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok((skipped, false));
        }
        let (length, terminated) = match available.iter().position(|&byte| byte == b'\n') {
            Some(end) => (end + 1, true),
            None => (available.len(), false),
        };
        reader.consume(length);
        skipped += length as u64;
        if terminated {
            return Ok((skipped, true));
        }
    }
}

/// Reads the user message with `seq` back from the line at `span`, which
/// held it when the file was indexed.
fn read_user_message(path: &Path, seq: u64, span: LineSpan) -> Result<UserMessageEvent, SessionError> {
    let changed = |reason: String| SessionError::Changed { path: path.to_path_buf(), seq, offset: span.offset, reason };
    let mut file = File::open(path).map_err(|e| SessionError::io(path, "reopening", e))?;
    file.seek(SeekFrom::Start(span.offset)).map_err(|e| SessionError::io(path, "seeking", e))?;
    let mut line = Vec::new();
    file.take(span.len).read_to_end(&mut line).map_err(|e| SessionError::io(path, "reading", e))?;
    if line.len() as u64 != span.len {
        return Err(changed(format!("the file ends {} bytes into the line", line.len())));
    }
    let read: wire::UserMessageLine =
        wire::from_line(line.trim_ascii()).map_err(|error| changed(format!("the line no longer reads ({error})")))?;
    if read.kind != index::USER_MESSAGE || read.seq != seq {
        return Err(changed(format!("the line now holds {} seq {}", read.kind, read.seq)));
    }
    Ok(UserMessageEvent { seq, source: read.data.source, content: read.data.content })
}

fn header_line(header: &SessionHeader, path: &Path) -> Result<Vec<u8>, SessionError> {
    serde_json::to_vec(&wire::HeaderLine::new(header)).map_err(|error| SessionError::BadHeader {
        path: path.to_path_buf(),
        reason: format!("cannot serialize the header: {error}"),
    })
}

/// Opens the session file for append under its exclusive lock. Not
/// `create`: a session file that vanished is an error, not a fresh log
/// missing its history.
fn open_locked_for_append(path: &Path) -> Result<File, SessionError> {
    let file = OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)
        .map_err(|e| SessionError::io(path, "opening for append", e))?;
    lock(&file, path, true)?;
    Ok(file)
}

/// Takes the advisory lock that every writer of a session file respects. It
/// is released when `file` is closed. A file system without locks (some
/// network mounts) gets no locking rather than no session.
fn lock(file: &File, path: &Path, exclusive: bool) -> Result<(), SessionError> {
    let locked = if exclusive { file.lock() } else { file.lock_shared() };
    match locked {
        Err(error) if error.kind() != io::ErrorKind::Unsupported => Err(SessionError::io(path, "locking", error)),
        _ => Ok(()),
    }
}

/// Writes `bytes` at the end of `file` (opened for append, locked, of length
/// `length`) and syncs them. On failure the bytes that did land are cut off
/// again, so a failed append leaves the file as it was.
fn write_durably(file: &mut File, path: &Path, length: u64, bytes: &[u8]) -> Result<(), SessionError> {
    let written =
        file.write_all(bytes).map_err(|e| ("writing", e)).and_then(|()| file.sync_data().map_err(|e| ("syncing", e)));
    written.map_err(|(operation, error)| {
        // Best effort: the error that matters is the one being returned.
        let _ = file.set_len(length);
        SessionError::io(path, operation, error)
    })
}

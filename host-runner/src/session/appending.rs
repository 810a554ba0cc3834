//! Appending to the session file: one write under the file's exclusive
//! lock, holding that lock across a step, compaction, and the durable write
//! every writer goes through.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::file::open_locked;
use super::index::{self, EventRequest, OpRequest, PlanError, PlannedBatch, SessionIndex};
use super::reading::read_new_lines;
use super::{
    Backing, COMPACTION_PLUGIN, FileCursor, MAX_LINE_BYTES, SessionError, SessionHeader, SessionLog, SurfaceOp, ids,
    new_message_id, wire,
};

/// What errors of an in-memory session name instead of a file.
const IN_MEMORY_PATH: &str = "<in-memory session>";

impl SessionLog {
    /// Takes the file's exclusive lock and keeps it until
    /// [`release`](Self::release) (or until the log is dropped), folding in
    /// what other processes appended first. A step holds it from reading the
    /// history to appending its decision, so two hosts stepping one session
    /// at once take turns and the second sees what the first appended (one
    /// catalog, never two). Other handles, in this process or another, wait
    /// for the lock meanwhile, as far as their [`LockWait`](super::LockWait)
    /// allows. Returns whether this call took the lock:
    /// `false` when it was already held (the holder releases it) or the
    /// session lives in memory (nothing to lock).
    ///
    /// A new session's file does not exist before its first append, yet
    /// needs a lock all the same: `hold` creates the file empty, and
    /// [`release`](Self::release) removes it again if nothing was appended.
    pub fn hold(&mut self) -> Result<bool, SessionError> {
        let SessionLog { header, index, backing, .. } = self;
        let Backing::File(cursor) = backing else {
            return Ok(false);
        };
        if cursor.held.is_some() {
            return Ok(false);
        }
        let locked = open_locked(&cursor.path, cursor.append_access(), &cursor.wait, "opening for append")?;
        read_new_lines(cursor, index, header, &locked.file)?;
        cursor.held = Some(locked);
        Ok(true)
    }

    /// Lets go of the lock [`hold`](Self::hold) took (dropping the log does
    /// too). A file that `hold` created and nothing was appended to is
    /// removed first, still under the lock, so a step that failed leaves no
    /// file behind.
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
    /// writes a `\n` first if the file ends in a torn line. The first append
    /// of a new session creates the file and writes the header with it. A
    /// replacement whose range DeepSeek Harness would refuse, or a line
    /// longer than [`MAX_LINE_BYTES`], is an error and nothing is written.
    /// The index changes only after the write succeeded; a failed write is
    /// cut back off the file.
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
        let (mut locked, held) = match cursor.held.take() {
            Some(locked) => (locked, true),
            None => (open_locked(&cursor.path, cursor.append_access(), &cursor.wait, "opening for append")?, false),
        };
        let appended = append_locked(cursor, index, header, &mut locked.file, requests);
        if held {
            cursor.held = Some(locked);
        }
        // Otherwise `locked` closes here, after removing the file it created
        // if the append failed.
        appended
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
        // The file was missing or empty: give it the header first.
        bytes.extend(header_line(header, &path, MAX_LINE_BYTES)?);
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

/// The header line, without its newline, refused like an event line when it
/// is longer than `limit` ([`MAX_LINE_BYTES`] except in tests) and so would
/// be skipped by a reader (only a cwd of many megabytes makes it that long).
pub(super) fn header_line(header: &SessionHeader, path: &Path, limit: u64) -> Result<Vec<u8>, SessionError> {
    let bad = |reason: String| SessionError::BadHeader { path: path.to_path_buf(), reason };
    let line = serde_json::to_vec(&wire::HeaderLine::new(header))
        .map_err(|error| bad(format!("cannot serialize the header: {error}")))?;
    match index::line_too_long(line.len() as u64, limit) {
        Some(reason) => Err(bad(format!("cannot write the header: {reason}"))),
        None => Ok(line),
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

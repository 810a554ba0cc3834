//! Appending to the session file: one write under the file's exclusive
//! lock, holding that lock across a step, compaction, and the locking and
//! durable writes every writer goes through.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::index::{self, EventRequest, OpRequest, PlanError, PlannedBatch, SessionIndex};
use super::reading::read_new_lines;
use super::{
    Backing, COMPACTION_PLUGIN, FileCursor, SessionError, SessionHeader, SessionLog, SurfaceOp, ids, new_message_id,
    wire,
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

pub(super) fn header_line(header: &SessionHeader, path: &Path) -> Result<Vec<u8>, SessionError> {
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
pub(super) fn lock(file: &File, path: &Path, exclusive: bool) -> Result<(), SessionError> {
    let locked = if exclusive { file.lock() } else { file.lock_shared() };
    match locked {
        Err(error) if error.kind() != io::ErrorKind::Unsupported => Err(SessionError::io(path, "locking", error)),
        _ => Ok(()),
    }
}

/// Writes `bytes` at the end of `file` (opened for append, locked, of length
/// `length`) and syncs them. On failure the bytes that did land are cut off
/// again, so a failed append leaves the file as it was.
pub(super) fn write_durably(file: &mut File, path: &Path, length: u64, bytes: &[u8]) -> Result<(), SessionError> {
    let written =
        file.write_all(bytes).map_err(|e| ("writing", e)).and_then(|()| file.sync_data().map_err(|e| ("syncing", e)));
    written.map_err(|(operation, error)| {
        // Best effort: the error that matters is the one being returned.
        let _ = file.set_len(length);
        SessionError::io(path, operation, error)
    })
}

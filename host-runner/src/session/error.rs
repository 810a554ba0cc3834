//! Errors of the session log. Each names the session file and what failed,
//! because the CLI prints them as its one-line `error: …`.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What went wrong while reading or appending to a session log.
#[derive(thiserror::Error, Debug)]
#[non_exhaustive]
pub enum SessionError {
    /// Opening, locking, reading, writing or syncing the file failed. The
    /// source's message starts with the operation that failed.
    #[error("session log {}: {source}", path.display())]
    Io {
        /// The session file.
        path: PathBuf,
        /// The underlying failure, prefixed with the operation.
        source: io::Error,
    },
    /// The path, after following symlinks, is not a regular file (a device, a
    /// FIFO, a directory, …): nothing is read from it or written to it.
    #[error("session log {}: not a regular file ({kind})", path.display())]
    NotRegularFile {
        /// The session file's path.
        path: PathBuf,
        /// What the path is instead, such as `a character device`.
        kind: &'static str,
    },
    /// Another process held the file's lock for longer than the log's
    /// [`LockWait::timeout`](super::LockWait::timeout).
    #[error("session log {}: still locked by another process after {} ms", path.display(), waited.as_millis())]
    LockTimeout {
        /// The session file.
        path: PathBuf,
        /// The wait's bound, which the call waited out.
        waited: Duration,
    },
    /// The first line is a session header that cannot be used, or the file
    /// holds no header and nothing readable (it is not a session log).
    #[error("session log {}: bad session header: {reason}", path.display())]
    BadHeader {
        /// The session file.
        path: PathBuf,
        /// Why the header was refused.
        reason: String,
    },
    /// The file is shorter than the part this log already read: something
    /// rewrote the append-only log, so appending could lose or reuse events.
    #[error(
        "session log {}: the file shrank from {read} to {found} bytes since it was read; refusing to append to a rewritten log",
        path.display()
    )]
    Shrunk {
        /// The session file.
        path: PathBuf,
        /// Bytes this log had read.
        read: u64,
        /// The file's length now.
        found: u64,
    },
    /// A user message read on demand is no longer where it was indexed:
    /// something rewrote the append-only file after this log read it.
    #[error(
        "session log {}: user message seq {seq} is no longer at byte {offset}: {reason}; the append-only file was rewritten",
        path.display()
    )]
    Changed {
        /// The session file.
        path: PathBuf,
        /// The message asked for.
        seq: u64,
        /// Where its line started.
        offset: u64,
        /// What is there now.
        reason: String,
    },
    /// An event to append is malformed (a user message whose data is not an
    /// object with a content list, a surface marker on a type that cannot
    /// carry one, or a line longer than a reader accepts).
    #[error("session log {}: cannot append {event_type}: {reason}", path.display())]
    InvalidEvent {
        /// The session file.
        path: PathBuf,
        /// The type of the refused event.
        event_type: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A replacement names a range DeepSeek Harness would refuse to load:
    /// `start` or `end` is not on the current surface, or `start` comes
    /// after `end`.
    #[error(
        "session log {}: cannot replace surface range {start}..={end}: {reason}",
        path.display()
    )]
    BadSurfaceRange {
        /// The session file.
        path: PathBuf,
        /// The requested first seq.
        start: u64,
        /// The requested last seq.
        end: u64,
        /// Why the range does not fit the surface.
        reason: String,
    },
}

impl SessionError {
    /// An I/O failure whose message says which operation failed, keeping the
    /// original error kind for callers that match on it.
    pub(super) fn io(path: &Path, operation: &str, source: io::Error) -> Self {
        SessionError::Io {
            path: path.to_path_buf(),
            source: io::Error::new(source.kind(), format!("{operation}: {source}")),
        }
    }
}

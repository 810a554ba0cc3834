//! What can go wrong in the host, named precisely enough to act on.

use std::path::PathBuf;
use std::time::Duration;

use crate::session::SessionError;

/// A failure of the host or of a plugin call. The plugin's own domain errors
/// (a tool error, a refused configuration) are values, not this type, except
/// where the host cannot go on (a refused configuration at start-up).
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The component could not be compiled or linked.
    #[error("cannot load the plugin component: {0}")]
    Load(String),
    /// The plugin refused its configuration; the text is the plugin's.
    #[error("{0}")]
    Config(String),
    /// A plugin call ran past its deadline.
    #[error("plugin call `{call}` exceeded its deadline of {} ms", .timeout.as_millis())]
    Timeout {
        /// The export that was running.
        call: &'static str,
        /// The deadline.
        timeout: Duration,
    },
    /// A plugin call tried to grow its memory past the cap.
    #[error("plugin call `{call}` exceeded its memory cap of {} MiB", .limit_bytes / (1024 * 1024))]
    MemoryLimit {
        /// The export that was running.
        call: &'static str,
        /// The cap.
        limit_bytes: usize,
    },
    /// The plugin recursed past the wasm stack limit (wasmtime's default,
    /// 512 KiB). Worded as a trap, as every host words it.
    #[error("plugin call `{call}` trapped: call stack exhausted")]
    StackExhausted {
        /// The export that was running.
        call: &'static str,
    },
    /// The plugin panicked; the message is the one its std wrote to stderr.
    #[error("plugin call `{call}` trapped: the guest panicked at {location}: {message}")]
    Panic {
        /// The export that was running.
        call: &'static str,
        /// Where in the guest's source, as the panic reported it.
        location: String,
        /// The panic's message.
        message: String,
    },
    /// The plugin trapped otherwise (an `unreachable`, an invalid memory
    /// access, an abort without a panic message).
    #[error("plugin call `{call}` trapped: {reason}{}", stderr_suffix(.stderr))]
    Trap {
        /// The export that was running.
        call: &'static str,
        /// The trap, as wasmtime describes it.
        reason: String,
        /// What the guest wrote to stderr (a panic message), trimmed.
        stderr: String,
    },
    /// The plugin returned something the host refuses to use.
    #[error("plugin call `{call}` returned invalid output: {reason}")]
    InvalidOutput {
        /// The export that was running.
        call: &'static str,
        /// What was wrong.
        reason: String,
    },
    /// The session log failed.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// A file the host needed could not be read.
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A scenario or input file is malformed.
    #[error("{0}")]
    Input(String),
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() { String::new() } else { format!(" (guest stderr: {stderr})") }
}

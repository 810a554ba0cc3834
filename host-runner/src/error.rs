//! What can go wrong in the host, named precisely enough to act on.

use std::path::PathBuf;
use std::time::Duration;

use crate::session::SessionError;

/// A failure of the host or of a plugin call. The plugin's own domain errors
/// (a tool error, a refused configuration) are values, not this type, except
/// where the host cannot go on (a refused configuration at start-up).
///
/// Each variant's text is the whole one-line message (what `skill-host`
/// prints), causes included; [`source`](std::error::Error::source) gives the
/// underlying error to inspect (a `wasmtime::Error`, downcastable to
/// `wasmtime::Trap`; an `std::io::Error`), so a report that prints the
/// chain should stop at a `HostError`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The wasmtime engine could not be configured for this machine.
    #[error("cannot load the plugin component: {}", chain(.source))]
    Engine {
        /// What wasmtime reported.
        source: wasmtime::Error,
    },
    /// The bytes are not a component wasmtime can compile (or a cached copy
    /// of it could not be loaded and compiling failed).
    #[error("cannot load the plugin component: {}", chain(.source))]
    Compile {
        /// What wasmtime reported.
        source: wasmtime::Error,
    },
    /// The component compiled but does not link against the host: it
    /// imports something the host does not offer, or does not export the
    /// `skill-plugin` world.
    #[error("cannot load the plugin component: {}", chain(.source))]
    Link {
        /// What wasmtime reported.
        source: wasmtime::Error,
    },
    /// The component exports no version of the plugin interface this host
    /// runs (`skill-host component --wit` prints each accepted version).
    #[error("cannot load the plugin component: {0}")]
    Contract(String),
    /// The thread that advances the deadline clock could not be started
    /// (without it no deadline would ever fire, so the host refuses to run).
    #[error("cannot load the plugin component: cannot start the epoch ticker thread: {source}")]
    Ticker {
        /// Why the thread could not be spawned.
        source: std::io::Error,
    },
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
        /// The error wasmtime returned (a `wasmtime::Trap` when it was one,
        /// with the guest's backtrace).
        source: wasmtime::Error,
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

/// A wasmtime error with its causes, `: `-separated, as anyhow's `{:#}`.
fn chain(error: &wasmtime::Error) -> String {
    format!("{error:#}")
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() { String::new() } else { format!(" (guest stderr: {stderr})") }
}

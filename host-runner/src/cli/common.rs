//! What the commands share: the global options, the plugin, the local
//! registry, paths and output helpers.

use std::borrow::Cow;
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::Value;
use skill_host::message::single_text;
use skill_host::providers::local::{LocalProvider, LocalRoots};
use skill_host::providers::remote::{IndexUrl, RemoteProvider, RootCertificates};
use skill_host::session::LockWait;
use skill_host::{EMBEDDED_PLUGIN, HostError, OutputLimits, Plugin, SandboxLimits, SkillProvider, SkillRegistry};

/// Options accepted before or after any command.
#[derive(Args)]
pub struct GlobalOptions {
    /// A plugin component to run instead of the one built into this binary.
    #[arg(long, global = true, value_name = "FILE")]
    pub plugin: Option<PathBuf>,
    /// Write the trace of the plugin calls the command makes to this file
    /// (docs/spec.md §7.2), also when it fails: what another host replays.
    /// The first plugin the command loads is traced; not with `mcp`.
    #[arg(long, global = true, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The recorder `--trace` writes out, once a plugin is loaded.
    #[arg(skip)]
    recorder: std::sync::OnceLock<skill_host::TraceRecorder>,
    /// Plugin configuration (a JSON object), e.g. {"catalogDescriptionMaxLength": 200}.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Deadline of one plugin call, in milliseconds (at least 1).
    #[arg(long, global = true, value_name = "N", default_value_t = 1000, value_parser = at_least_one())]
    pub timeout_ms: u64,
    /// Memory cap of one plugin call, in MiB (at least 1).
    #[arg(long, global = true, value_name = "N", default_value_t = 64, value_parser = at_least_one_usize())]
    pub memory_mb: usize,
    /// The most messages one pre-step may add to those proposed (at least 1).
    #[arg(long, global = true, value_name = "N", default_value_t = OutputLimits::default().max_added_messages, value_parser = at_least_one_usize())]
    pub max_added_messages: usize,
    /// The most bytes of any one text a plugin call returns (at least 1).
    #[arg(long, global = true, value_name = "N", default_value_t = OutputLimits::default().max_text_bytes, value_parser = at_least_one_usize())]
    pub max_text_bytes: usize,
    /// The most bytes of all the texts one plugin call returns (at least 1).
    #[arg(long, global = true, value_name = "N", default_value_t = OutputLimits::default().max_output_bytes, value_parser = at_least_one_usize())]
    pub max_output_bytes: usize,
    /// How long to wait for a session file another process holds locked, in
    /// milliseconds, before giving up.
    #[arg(long, global = true, value_name = "N", default_value_t = 10_000)]
    pub lock_timeout_ms: u64,
    /// A folder of skills (a `custom` root, rank 300); repeat for more, in
    /// precedence order.
    #[arg(long = "skills-dir", global = true, value_name = "DIR")]
    pub skills_dirs: Vec<PathBuf>,
    /// The folder of skills shipped with the host (the `bundled` root, rank 600).
    #[arg(long, global = true, value_name = "DIR")]
    pub bundled_dir: Option<PathBuf>,
    /// A remote skill index (`{"skills":[…]}` or an Agent Skills discovery
    /// index, over HTTP or HTTPS; provider `remote`, rank 350); repeat for more.
    #[arg(long, global = true, value_name = "INDEX_URL", value_parser = IndexUrlParser)]
    pub remote: Vec<IndexUrl>,
    /// A private CA's certificates (PEM) that HTTPS indexes are verified
    /// against, instead of the Mozilla roots.
    #[arg(long = "remote-ca", global = true, value_name = "FILE", value_parser = RootCertificatesParser)]
    pub remote_ca: Option<RootCertificates>,
}

/// Largest `--remote-ca` file read, in bytes.
const MAX_CA_BYTES: u64 = 1024 * 1024;

/// `--remote-ca`: a PEM file read and parsed when the command line is, so a
/// bad file is a usage error before anything runs.
#[derive(Clone)]
struct RootCertificatesParser;

impl clap::builder::TypedValueParser for RootCertificatesParser {
    type Value = RootCertificates;

    fn parse_ref(
        &self,
        command: &clap::Command,
        _argument: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<RootCertificates, clap::Error> {
        let path = Path::new(value);
        let refuse = |reason: String| {
            let message = format!("invalid value for '--remote-ca <FILE>': {}: {reason}\n", path.display());
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, message).with_cmd(command)
        };
        let pem = read_input(path, "CA certificate", MAX_CA_BYTES).map_err(|error| refuse(format!("{error:#}")))?;
        RootCertificates::from_pem(&pem).map_err(refuse)
    }
}

/// Largest `--config` file read, in bytes.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Largest `--plugin` component read, in bytes.
const MAX_PLUGIN_BYTES: u64 = 256 * 1024 * 1024;

/// A count that must be positive: a zero deadline, memory cap or output
/// cap would refuse every call, so it is refused once, as a usage error.
fn at_least_one() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..)
}

/// [`at_least_one`] for `usize` options.
fn at_least_one_usize() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
}

/// `--remote`: an [`IndexUrl`], whose usage error never repeats what was
/// typed (clap's own would quote the value, credentials and all).
#[derive(Clone)]
struct IndexUrlParser;

impl clap::builder::TypedValueParser for IndexUrlParser {
    type Value = IndexUrl;

    fn parse_ref(
        &self,
        command: &clap::Command,
        _argument: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<IndexUrl, clap::Error> {
        let refuse = |reason: String| {
            let message = format!("invalid value for '--remote <INDEX_URL>': {reason}\n");
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, message).with_cmd(command)
        };
        let text = value.to_str().ok_or_else(|| refuse("the index URL is not valid UTF-8".to_owned()))?;
        text.parse().map_err(refuse)
    }
}

impl GlobalOptions {
    /// The sandbox limits these options set.
    pub fn limits(&self) -> SandboxLimits {
        SandboxLimits {
            timeout: Duration::from_millis(self.timeout_ms),
            memory_bytes: self.memory_mb.saturating_mul(1024 * 1024),
            output: OutputLimits {
                max_added_messages: self.max_added_messages,
                max_text_bytes: self.max_text_bytes,
                max_output_bytes: self.max_output_bytes,
            },
            ..SandboxLimits::default()
        }
    }

    /// The component to run: `--plugin`, else the embedded one.
    pub fn component(&self) -> Result<Vec<u8>> {
        match &self.plugin {
            Some(path) => read_input(path, "plugin", MAX_PLUGIN_BYTES),
            None => Ok(EMBEDDED_PLUGIN.to_vec()),
        }
    }

    /// The `--config` file's text, if given.
    pub fn config(&self) -> Result<Option<String>> {
        self.config.as_deref().map(|path| read_text_input(path, "configuration", MAX_CONFIG_BYTES)).transpose()
    }

    /// How a session file another process holds locked is waited for.
    pub fn lock_wait(&self) -> LockWait {
        LockWait { timeout: Some(Duration::from_millis(self.lock_timeout_ms)), on_wait: Some(say_waiting) }
    }

    /// Warns about each skill folder given on the command line that is not
    /// a directory: a typo would otherwise just find no skills.
    pub fn warn_missing_dirs(&self) {
        let given = self.skills_dirs.iter().map(|dir| ("--skills-dir", dir));
        for (option, dir) in given.chain(self.bundled_dir.iter().map(|dir| ("--bundled-dir", dir))) {
            if !dir.is_dir() {
                warn(&format!("{option} {} is not a directory; no skills come from it", dir.display()));
            }
        }
    }

    /// The plugin, compiled (or loaded precompiled from the user's cache)
    /// and configured.
    pub fn load_plugin(&self) -> Result<Plugin> {
        self.load_plugin_with(&self.config()?.unwrap_or_else(|| "{}".to_owned()))
    }

    /// The plugin to run, with the configuration `config` instead of `--config`'s.
    pub fn load_plugin_with(&self, config: &str) -> Result<Plugin> {
        let component = self.component()?;
        let cache = skill_host::component_cache::default_dir();
        if let Some(recorder) = self.take_recorder() {
            return Ok(Plugin::traced(&component, config, self.limits(), cache.as_deref(), recorder)?);
        }
        Ok(match cache {
            Some(cache) => Plugin::new_cached(&component, config, self.limits(), &cache)?,
            None => Plugin::new(&component, config, self.limits())?,
        })
    }

    /// With `--trace`, the recorder for the first plugin the command loads
    /// (a trace is one plugin's calls); `None` for any later one.
    pub fn take_recorder(&self) -> Option<skill_host::TraceRecorder> {
        self.trace.as_ref()?;
        let recorder = skill_host::TraceRecorder::new();
        self.recorder.set(recorder.clone()).ok().map(|()| recorder)
    }

    /// Refuses a `--trace` path that holds something other than a trace
    /// (a session log or a configuration given by mistake), before anything runs.
    pub fn check_trace(&self) -> Result<()> {
        let Some(path) = &self.trace else { return Ok(()) };
        let Ok(text) = std::fs::read_to_string(path) else { return Ok(()) };
        let is_trace = text.trim().is_empty()
            || serde_json::from_str::<Value>(&text).is_ok_and(|value| value.get("calls").is_some());
        if is_trace {
            return Ok(());
        }
        Err(UsageError(format!("--trace {} holds something other than a trace; it is not overwritten", path.display()))
            .into())
    }

    /// Writes the trace `--trace` asked for, once a plugin was loaded into it.
    pub fn write_trace(&self) -> Result<()> {
        let (Some(path), Some(recorder)) = (&self.trace, self.recorder.get()) else { return Ok(()) };
        if !recorder.is_begun() {
            return Ok(());
        }
        let mut text = serde_json::to_string_pretty(&recorder.to_json())?;
        text.push('\n');
        std::fs::write(path, text).with_context(|| format!("cannot write the trace {}", path.display()))
    }

    /// The local provider's roots: the environment's, with `--skills-dir`
    /// and `--bundled-dir`.
    /// Folders given relative are made absolute (skill paths and resource
    /// bases are shown to the model, and `mcp` serves files only under
    /// absolute roots).
    pub fn local_roots(&self) -> LocalRoots {
        let absolute = |dir: &PathBuf| std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
        LocalRoots {
            custom: self.skills_dirs.iter().map(absolute).collect(),
            bundled: self.bundled_dir.as_ref().map(absolute),
            ..LocalRoots::from_env()
        }
    }

    /// A registry with the local filesystem provider, then the remote
    /// provider when `--remote` names an index.
    pub fn registry(&self) -> Arc<SkillRegistry> {
        self.registry_with_remote(self.remote_provider().map(|remote| Arc::new(remote) as Arc<dyn SkillProvider>))
    }

    /// The remote provider over the `--remote` indexes, if any.
    pub fn remote_provider(&self) -> Option<RemoteProvider> {
        if self.remote.is_empty() {
            return None;
        }
        let provider = RemoteProvider::new(self.remote.clone());
        Some(match &self.remote_ca {
            Some(roots) => provider.with_root_certificates(roots),
            None => provider,
        })
    }

    /// A registry with the local filesystem provider, then `remote`.
    pub fn registry_with_remote(&self, remote: Option<Arc<dyn SkillProvider>>) -> Arc<SkillRegistry> {
        let registry = Arc::new(SkillRegistry::new());
        registry.register_provider(Arc::new(LocalProvider::new(self.local_roots())));
        if let Some(remote) = remote {
            registry.register_provider(remote);
        }
        registry
    }
}

/// An absolute path as a string (session headers and cwds are strings).
pub fn absolute(path: &Path) -> Result<String> {
    let absolute = std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    absolute.to_str().map(str::to_owned).with_context(|| format!("{} is not valid UTF-8", absolute.display()))
}

/// `--cwd` as an absolute path string; it must name a directory (a typo
/// would otherwise find no project skills, and `step` would record it in a
/// new session's header).
pub fn working_directory(cwd: &Path) -> Result<String> {
    match std::fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => absolute(cwd),
        Ok(_) => Err(UsageError(format!("--cwd {} is not a directory", cwd.display())).into()),
        Err(error) => Err(UsageError(format!("--cwd {}: {error}", cwd.display())).into()),
    }
}

/// A command line that names something unusable (exit 2, as clap's own
/// usage errors).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// `--cwd` if given (see [`working_directory`]), else the current directory.
pub fn cwd_or_current(cwd: Option<&Path>) -> Result<String> {
    match cwd {
        Some(cwd) => working_directory(cwd),
        None => absolute(Path::new(".")),
    }
}

/// Reads a file the user named, refusing what is not a regular file (a
/// device would never end) and anything over `cap` bytes.
pub fn read_input(path: &Path, what: &str, cap: u64) -> Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // A FIFO with no writer would block the open itself, before the check.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).with_context(|| format!("cannot read {what} {}", path.display()))?;
    let meta = file.metadata().with_context(|| format!("cannot read {what} {}", path.display()))?;
    if !meta.is_file() {
        bail!("cannot read {what} {}: not a regular file", path.display());
    }
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes).with_context(|| format!("cannot read {what} {}", path.display()))?;
    if bytes.len() as u64 > cap {
        bail!("cannot read {what} {}: larger than the {} MiB limit", path.display(), cap / (1024 * 1024));
    }
    Ok(bytes)
}

/// [`read_input`] for a UTF-8 text.
pub fn read_text_input(path: &Path, what: &str, cap: u64) -> Result<String> {
    String::from_utf8(read_input(path, what, cap)?)
        .map_err(|error| anyhow::anyhow!("cannot read {what} {}: {}", path.display(), error.utf8_error()))
}

/// Prints one warning line on stderr. A closed or failing stderr loses the
/// warning, never the command.
pub fn warn(warning: &str) {
    let _ = writeln!(io::stderr().lock(), "warning: {}", for_stderr(warning));
}

/// Prints each warning on stderr.
pub fn warn_all(warnings: &[String]) {
    for warning in warnings {
        warn(warning);
    }
}

/// The notice printed when a session file is locked by another process.
fn say_waiting(path: &Path) {
    let notice = format!("waiting for session log {}: another process holds its lock", path.display());
    let _ = writeln!(io::stderr().lock(), "{}", for_stderr(&notice));
}

/// Stdout refused the command's output. A closed stdout (`| head`) ends the
/// command quietly; anything else is an error that says whether the session
/// already recorded what was being printed.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the output: {cause}{}", recorded.as_deref().map(|what| format!("; {what}")).unwrap_or_default())]
pub struct OutputError {
    /// Named in the text, so not a `source` (the chain would repeat it).
    cause: io::Error,
    recorded: Option<String>,
}

impl OutputError {
    /// Whether stdout was closed by its reader (exit quietly).
    pub fn is_closed_pipe(&self) -> bool {
        self.cause.kind() == io::ErrorKind::BrokenPipe
    }
}

/// Writes `text` to stdout ([`for_stdout`]) and flushes. `recorded` says
/// what the session already holds of it, for the error if stdout fails.
pub fn print_out(text: &str, recorded: Option<String>) -> Result<(), OutputError> {
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(for_stdout(text).as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|cause| OutputError { cause, recorded })
}

/// [`print_out`] with a newline after `text`.
pub fn print_line(text: &str, recorded: Option<String>) -> Result<(), OutputError> {
    print_out(&format!("{text}\n"), recorded)
}

/// `text` as it may reach a terminal: control characters other than newline,
/// tab and the carriage return of a CRLF (which could move the cursor,
/// retitle the window, or worse) are shown as `\u{1b}`. Skill files and
/// plugins come from anywhere, and what they wrote is printed.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    let harmless =
        |c: char, next: Option<char>| !c.is_control() || c == '\n' || c == '\t' || (c == '\r' && next == Some('\n'));
    let mut chars = text.chars().peekable();
    let mut safe = String::new();
    let mut changed = false;
    while let Some(c) = chars.next() {
        if harmless(c, chars.peek().copied()) {
            safe.push(c);
        } else {
            safe.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            changed = true;
        }
    }
    if changed { Cow::Owned(safe) } else { Cow::Borrowed(text) }
}

/// Text for stdout: byte for byte into a pipe or a file (what scripts and
/// tests read), [`terminal_safe`] on a terminal.
pub fn for_stdout(text: &str) -> Cow<'_, str> {
    if io::stdout().is_terminal() { terminal_safe(text) } else { Cow::Borrowed(text) }
}

/// [`for_stdout`] for stderr.
pub fn for_stderr(text: &str) -> Cow<'_, str> {
    if io::stderr().is_terminal() { terminal_safe(text) } else { Cow::Borrowed(text) }
}

/// The text a message shows: its single text block, else its content as JSON.
pub fn message_text(data: &Value) -> String {
    single_text(data).map_or_else(|| data["content"].to_string(), str::to_owned)
}

/// Pretty JSON with one-space indentation, as the scenario examples are written.
pub fn pretty(value: &impl serde::Serialize) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(value, &mut serializer).expect("serialising a JSON value to memory cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// The error as one line, its causes `: `-separated like anyhow's `{:#}`,
/// each named once: a cause whose text its parent already ends with is
/// left out (`session log x: opening: Is a directory` is not followed by
/// `opening: Is a directory`), and nothing is printed below a [`HostError`]
/// whose text already names its cause (loading, the ticker thread and trap
/// errors): their source is for code to inspect.
pub fn one_line(error: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if !parts.last().is_some_and(|parent| parent.ends_with(&text)) {
            parts.push(text);
        }
        let names_its_cause = matches!(
            cause.downcast_ref::<HostError>(),
            Some(
                HostError::Engine { .. }
                    | HostError::Compile { .. }
                    | HostError::Link { .. }
                    | HostError::Contract(_)
                    | HostError::Ticker { .. }
                    | HostError::Trap { .. }
            )
        );
        if names_its_cause {
            break;
        }
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_cannot_reach_a_terminal() {
        // A window-title sequence (OSC … BEL), a C1 CSI, a carriage return.
        assert_eq!(
            terminal_safe("a\u{1b}]0;owned\u{7}b\u{9b}2J\rc\n\td"),
            "a\\u{1b}]0;owned\\u{7}b\\u{9b}2J\\u{d}c\n\td"
        );
        // A CRLF line ending is left alone; DEL and C1 controls are not.
        assert_eq!(terminal_safe("line\r\nend\u{7f}"), "line\r\nend\\u{7f}");
        assert!(matches!(terminal_safe("plain text, «ünïcödé», tab\tand\nnewline"), Cow::Borrowed(_)));
    }

    #[test]
    fn each_cause_is_named_once() {
        let io = io::Error::new(io::ErrorKind::IsADirectory, "opening or creating: Is a directory (os error 21)");
        let session = skill_host::session::SessionError::Io { path: PathBuf::from("/s"), source: io };
        let error = anyhow::Error::new(session).context("cannot step");
        assert_eq!(one_line(&error), "cannot step: session log /s: opening or creating: Is a directory (os error 21)");
        // A cause that says something new is kept.
        let error = anyhow::anyhow!("inner").context("outer");
        assert_eq!(one_line(&error), "outer: inner");
    }
}

//! What the commands share: the global options, the plugin, the local
//! registry, paths and output helpers.

use std::borrow::Cow;
use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::Value;
use skill_host::message::single_text;
use skill_host::providers::local::{LocalProvider, LocalRoots};
use skill_host::providers::remote::{IndexUrl, RemoteProvider};
use skill_host::{EMBEDDED_PLUGIN, HostError, OutputLimits, Plugin, SandboxLimits, SkillRegistry};

/// Options accepted before or after any command.
#[derive(Args)]
pub struct GlobalOptions {
    /// A plugin component to run instead of the one built into this binary.
    #[arg(long, global = true, value_name = "FILE")]
    pub plugin: Option<PathBuf>,
    /// Plugin configuration (a JSON object), e.g. {"catalogDescriptionMaxLength": 200}.
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Deadline of one plugin call, in milliseconds.
    #[arg(long, global = true, value_name = "N", default_value_t = 1000)]
    pub timeout_ms: u64,
    /// Memory cap of one plugin call, in MiB.
    #[arg(long, global = true, value_name = "N", default_value_t = 64)]
    pub memory_mb: usize,
    /// The most messages one pre-step may add to those proposed.
    #[arg(long, global = true, value_name = "N", default_value_t = OutputLimits::default().max_added_messages)]
    pub max_added_messages: usize,
    /// The most bytes of any one text a plugin call returns.
    #[arg(long, global = true, value_name = "N", default_value_t = OutputLimits::default().max_text_bytes)]
    pub max_text_bytes: usize,
    /// The most bytes of all the texts one plugin call returns.
    #[arg(long, global = true, value_name = "N", default_value_t = OutputLimits::default().max_output_bytes)]
    pub max_output_bytes: usize,
    /// A folder of skills (a `custom` root, rank 300); repeat for more, in
    /// precedence order.
    #[arg(long = "skills-dir", global = true, value_name = "DIR")]
    pub skills_dirs: Vec<PathBuf>,
    /// The folder of skills shipped with the host (the `bundled` root, rank 600).
    #[arg(long, global = true, value_name = "DIR")]
    pub bundled_dir: Option<PathBuf>,
    /// A remote skill index (`{"skills":[…]}` over HTTP; provider `remote`,
    /// rank 350); repeat for more.
    #[arg(long, global = true, value_name = "INDEX_URL")]
    pub remote: Vec<IndexUrl>,
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
            Some(path) => std::fs::read(path).with_context(|| format!("cannot read plugin {}", path.display())),
            None => Ok(EMBEDDED_PLUGIN.to_vec()),
        }
    }

    /// The `--config` file's text, if given.
    pub fn config(&self) -> Result<Option<String>> {
        self.config
            .as_deref()
            .map(|path| {
                std::fs::read_to_string(path).with_context(|| format!("cannot read configuration {}", path.display()))
            })
            .transpose()
    }

    /// The plugin, compiled (or loaded precompiled from the user's cache)
    /// and configured.
    pub fn load_plugin(&self) -> Result<Plugin> {
        let config = self.config()?.unwrap_or_else(|| "{}".to_owned());
        let component = self.component()?;
        Ok(match skill_host::component_cache::default_dir() {
            Some(cache) => Plugin::new_cached(&component, &config, self.limits(), &cache)?,
            None => Plugin::new(&component, &config, self.limits())?,
        })
    }

    /// The local provider's roots: the environment's, with `--skills-dir`
    /// and `--bundled-dir`.
    pub fn local_roots(&self) -> LocalRoots {
        LocalRoots { custom: self.skills_dirs.clone(), bundled: self.bundled_dir.clone(), ..LocalRoots::from_env() }
    }

    /// A registry with the local filesystem provider, then the remote
    /// provider when `--remote` names an index.
    pub fn registry(&self) -> Arc<SkillRegistry> {
        let registry = Arc::new(SkillRegistry::new());
        registry.register_provider(Arc::new(LocalProvider::new(self.local_roots())));
        if !self.remote.is_empty() {
            registry.register_provider(Arc::new(RemoteProvider::new(self.remote.clone())));
        }
        registry
    }
}

/// An absolute path as a string (session headers and cwds are strings).
pub fn absolute(path: &Path) -> Result<String> {
    let absolute = std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    absolute.to_str().map(str::to_owned).with_context(|| format!("{} is not valid UTF-8", absolute.display()))
}

/// Prints each warning on stderr.
pub fn warn_all(warnings: &[String]) {
    for warning in warnings {
        eprintln!("warning: {}", for_stderr(warning));
    }
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
pub fn pretty(value: &Value) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(value, &mut serializer).expect("serialising a JSON value to memory cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// The error as one line, its causes `: `-separated like anyhow's `{:#}`,
/// except below a [`HostError`] whose text already names its cause
/// (loading, the ticker thread and trap errors): their source is for code
/// to inspect, and printing it again would repeat it.
pub fn one_line(error: &anyhow::Error) -> String {
    let mut parts = Vec::new();
    for cause in error.chain() {
        parts.push(cause.to_string());
        let names_its_cause = matches!(
            cause.downcast_ref::<HostError>(),
            Some(
                HostError::Engine { .. }
                    | HostError::Compile { .. }
                    | HostError::Link { .. }
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
}

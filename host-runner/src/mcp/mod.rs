//! `skill-host mcp`: the skills a registry resolves for one working
//! directory, served to any MCP client (docs/spec.md §6.9).
//!
//! What a client sees:
//! - **the `skill` tool**, whose description is the component's tool
//!   description followed by the catalog the component renders for a new
//!   session, and whose results are the component's own texts
//!   (`mcp/catalog.rs`);
//! - **a prompt per user-invocable skill**, whose message is the block the
//!   component injects for a user's `/name` (§3.10);
//! - **the Skills extension** (`io.modelcontextprotocol/skills`):
//!   `skills/list`, `skills/get` and each skill's files as resources, read
//!   only from inside the skill's own folder (`mcp/skills/`);
//! - **change notifications** when the watcher sees a change of anything a
//!   client lists (`mcp/notify.rs`).
//!
//! The server is [`McpServer`], an rmcp [`ServerHandler`](rmcp::ServerHandler);
//! [`serve_stdio`] runs it on stdin and stdout behind `mcp/framing.rs`, which
//! answers malformed JSON-RPC with an error instead of dropping it.
//! With the `mcp-http` feature, `http::serve_http` runs the same server over
//! the streamable HTTP transport on a loopback address.
//!
//! ```no_run
//! use std::sync::Arc;
//! use skill_host::{Plugin, SandboxLimits, SkillRegistry};
//! use skill_host::mcp::{McpServer, serve_stdio};
//!
//! let plugin = Plugin::embedded("{}", SandboxLimits::default())?;
//! // The prompts' plugin shares the compiled component.
//! let prompts = plugin.with_config(r#"{"userInvocation":true}"#)?;
//! let registry = Arc::new(SkillRegistry::new());
//! let server = McpServer::new(plugin, prompts, registry, Some("/repo".into()))?;
//! serve_stdio(server, Vec::new())?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod catalog;
pub(crate) mod duplicate_keys;
pub(crate) mod framing;
mod handler;
#[cfg(feature = "mcp-http")]
pub mod http;
pub(crate) mod notify;
pub(crate) mod skills;

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};

use crate::registry::BackgroundListing;
use crate::{HostError, Plugin, SkillRegistry, ToolDefinition};

pub use self::framing::MAX_REQUEST_BYTES;
pub use self::skills::{MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILLS_PAGE_SIZE};

/// The `ttlMs` of every cacheable answer while the server watches the skill
/// folders (a change is then notified: docs/spec.md §6.9); without the
/// watcher it is 0, since nothing would tell a client its copy is stale.
pub const CACHE_TTL_MS: u64 = 60_000;

/// The MCP server: a plugin for the tool, one configured for user
/// invocation for the prompts, the registry, the working directory.
#[derive(Clone)]
pub struct McpServer {
    state: Arc<State>,
}

struct State {
    plugin: Plugin,
    prompt_plugin: Plugin,
    definition: ToolDefinition,
    registry: Arc<SkillRegistry>,
    cwd: Option<String>,
    notifier: notify::Notifier,
    /// The warnings already written to stderr (each is written once).
    warned: Mutex<std::collections::HashSet<String>>,
    /// Wakes the change notifications ([`notify::LiveRefresh`] sets it when
    /// the server watches): a followed provider's listing changed.
    provider_changed: Mutex<Option<tokio::sync::mpsc::UnboundedSender<()>>>,
    /// Whether a watcher runs ([`notify::LiveRefresh`]): answers may then
    /// be cached for [`CACHE_TTL_MS`].
    watching: AtomicBool,
    /// The revision of the last listing whose skipped files were said.
    skips_seen: AtomicU64,
    /// What `resources/read` decided about each skill, while it holds.
    decisions: skills::Decisions,
    /// The configuration's `userOnly` (§3.13): skills the Skills extension
    /// does not serve, as it serves no `disable-model-invocation` skill.
    user_only: skill_rules::SkillPatterns,
}

/// The `userOnly` patterns of a configuration the plugin accepted (so its
/// shape is valid); none when it has no such key.
fn user_only(config: &str) -> skill_rules::SkillPatterns {
    let value: serde_json::Value = serde_json::from_str(config).unwrap_or_default();
    skill_rules::SkillPatterns::from_config(&value, "userOnly")
}

impl McpServer {
    /// A server for `cwd`. `plugin` serves the tool (and its catalog) with
    /// the user's configuration; `prompt_plugin` the prompts: the same
    /// component configured with `"userInvocation": true`, so that its
    /// injection block (§3.10) is what a prompt returns.
    pub fn new(
        plugin: Plugin,
        prompt_plugin: Plugin,
        registry: Arc<SkillRegistry>,
        cwd: Option<String>,
    ) -> Result<Self, HostError> {
        let definition = plugin.definition()?;
        let user_only = user_only(plugin.config());
        let notifier = notify::Notifier::default();
        let provider_changed = Mutex::new(None);
        Ok(Self {
            state: Arc::new(State {
                plugin,
                prompt_plugin,
                definition,
                registry,
                cwd,
                notifier,
                warned: Mutex::default(),
                provider_changed,
                watching: AtomicBool::new(false),
                skips_seen: AtomicU64::new(0),
                decisions: skills::Decisions::default(),
                user_only,
            }),
        })
    }

    /// Follows `listing`, a provider of this server's registry listed in
    /// the background (docs/spec.md §6.9), and starts its first listing.
    /// Each change it reports invalidates the registry and, when the server
    /// watches, is notified as a change on disk is; each new failure is
    /// written once to stderr, as `skill-host step` writes it.
    pub fn follow(&self, listing: &BackgroundListing) {
        let state = Arc::downgrade(&self.state);
        listing.listen(move |report| {
            if let Some(warning) = &report.warning {
                // A closed stderr loses the warning, never the server.
                let _ = writeln!(std::io::stderr(), "warning: {warning}");
            }
            if report.changed
                && let Some(state) = state.upgrade()
            {
                state.registry.invalidate();
                if let Some(wake) =
                    state.provider_changed.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).as_ref()
                {
                    let _ = wake.send(());
                }
            }
        });
        listing.start();
    }

    /// The registry it serves.
    pub fn registry(&self) -> &Arc<SkillRegistry> {
        &self.state.registry
    }

    /// The working directory it serves.
    pub fn cwd(&self) -> Option<&str> {
        self.state.cwd.as_deref()
    }
}

/// Serves `server` on stdin and stdout until the client closes stdin.
/// With `watch_roots`, a watcher invalidates the registry when a skill file
/// changes there, and a change of what the client lists is notified.
pub fn serve_stdio(server: McpServer, watch_roots: Vec<PathBuf>) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let served = runtime.block_on(framing::serve(server, watch_roots));
    // The client has gone and every answer is written: work left on the
    // blocking pool (a change computation, a call nobody waits for) is
    // read-only, so the process does not wait for it.
    runtime.shutdown_background();
    served
}

//! `mcp`: the skills for a working directory, served over MCP on stdio, or
//! with `--http ADDR` over streamable HTTP on a loopback address
//! (docs/spec.md §6.9).

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::Value;
use skill_host::mcp::http::{
    HttpLimits, READ_TIMEOUT, SESSION_IDLE_LIFETIME, endpoint_url, loopback_address, serve_http,
};
use skill_host::mcp::{McpServer, serve_stdio};
use skill_host::providers::local::LocalProvider;
use skill_host::{BackgroundListing, Plugin, RefreshPolicy, SkillProvider};

use super::common::{GlobalOptions, UsageError, cwd_or_current};

/// Serve the skills over the Model Context Protocol on stdin and stdout
/// (or, with --http, over streamable HTTP).
#[derive(Args)]
pub struct McpArgs {
    /// The working directory whose skills are served (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Do not watch the skill folders: no change notifications.
    #[arg(long)]
    no_watch: bool,
    /// Serve over MCP's streamable HTTP transport at http://ADDR/mcp instead
    /// of stdio; ADDR is a loopback IP:PORT (port 0: any free port), e.g.
    /// 127.0.0.1:8765. Runs until SIGINT or SIGTERM.
    #[arg(long, value_name = "ADDR", value_parser = http_address)]
    http: Option<SocketAddr>,
    /// With --http: how long a client may take to send a request's headers,
    /// and then its body, before the connection is closed (default: 10).
    #[arg(long, value_name = "SECONDS", requires = "http", value_parser = seconds)]
    read_timeout: Option<Duration>,
    /// With --http: how long an MCP session may go unused before it is
    /// closed (default: 300).
    #[arg(long, value_name = "SECONDS", requires = "http", value_parser = seconds)]
    session_idle: Option<Duration>,
}

/// A whole number of seconds, at least 1.
fn seconds(text: &str) -> Result<Duration, String> {
    match text.parse::<u64>() {
        Ok(seconds @ 1..) => Ok(Duration::from_secs(seconds)),
        _ => Err(format!("{text:?} is not a whole number of seconds of at least 1")),
    }
}

/// `--http`'s value: a loopback address, or a usage error saying why not.
fn http_address(text: &str) -> Result<SocketAddr, String> {
    loopback_address(text).map_err(|error| error.to_string())
}

impl McpArgs {
    pub fn run(self, global: &GlobalOptions) -> Result<u8> {
        if global.trace.is_some() {
            // Many clients' calls, two plugins, and no end but a signal.
            return Err(UsageError("--trace is not available with mcp".to_owned()).into());
        }
        let cwd = cwd_or_current(self.cwd.as_deref())?;
        // A long-running server lists the remote indexes in the background:
        // a failing one never makes a call wait, and they are re-read.
        let remote = global.remote_provider().map(|remote| {
            let hint = remote.clone();
            let remote: Arc<dyn SkillProvider> = Arc::new(remote);
            let cwd = Some(PathBuf::from(&cwd));
            Arc::new(BackgroundListing::new(remote, cwd, RefreshPolicy::default(), move || hint.max_age()))
        });
        let registry = global.registry_with_remote(remote.clone().map(|remote| remote as Arc<dyn SkillProvider>));
        // The skills are listed on a second core while the components load,
        // and the server starts once both are done, so the first
        // `tools/list` finds the listing cached and only renders the catalog.
        // (A remote provider answers only once followed, below: its listing
        // would not be complete here.)
        let listing = remote.is_none().then(|| {
            let registry = Arc::clone(&registry);
            let cwd = PathBuf::from(&cwd);
            std::thread::spawn(move || drop(registry.snapshot(Some(&cwd))))
        });
        let plugin = global.load_plugin()?;
        let prompt_plugin = prompt_plugin(global, &plugin)?;
        if let Some(listing) = listing {
            // A listing that panicked is listed again by the first request.
            let _ = listing.join();
        }
        let roots = if self.no_watch {
            Vec::new()
        } else {
            LocalProvider::new(global.local_roots())
                .roots_for(Some(Path::new(&cwd)))
                .into_iter()
                .map(|root| root.path)
                .collect()
        };
        let server = McpServer::new(plugin, prompt_plugin, registry, Some(cwd))?;
        if let Some(remote) = &remote {
            server.follow(remote);
        }
        let limits = HttpLimits {
            read_timeout: self.read_timeout.unwrap_or(READ_TIMEOUT),
            session_idle: self.session_idle.unwrap_or(SESSION_IDLE_LIFETIME),
        };
        match self.http {
            Some(address) => serve_http(server, roots, address, limits, |bound| {
                // The bound address, so that port 0 is usable; a closed
                // stderr loses the line, never the server.
                let _ = writeln!(std::io::stderr(), "skill-host mcp: listening on {}", endpoint_url(bound));
            })
            .context("the MCP HTTP server stopped")?,
            None => serve_stdio(server, roots).context("the MCP server stopped")?,
        }
        Ok(0)
    }
}

/// The plugin for the prompts: `plugin`'s component (compiled once, shared)
/// and configuration, with user invocation on, so a prompt's message is the
/// block a user's `/name` injects (§3.10).
fn prompt_plugin(global: &GlobalOptions, plugin: &Plugin) -> Result<Plugin> {
    let config = global.config()?.unwrap_or_default();
    // `load_plugin` refused a configuration that is not an object.
    let mut object = match serde_json::from_str::<Value>(&config) {
        Ok(Value::Object(object)) => object,
        _ => serde_json::Map::new(),
    };
    object.insert("userInvocation".to_owned(), Value::Bool(true));
    Ok(plugin.with_config(&Value::Object(object).to_string())?)
}

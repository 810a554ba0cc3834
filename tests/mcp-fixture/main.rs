//! `mcp-conformance-fixture WORKSPACE`: `skill-host mcp --http` as the
//! official MCP conformance suite's `server-stateless` scenario needs it,
//! for tests only.
//!
//! That scenario calls five diagnostic tools that every MCP SDK exposes only
//! in its conformance test server ([`diagnostics`]). This binary serves the
//! real [`McpServer`], built as `skill-host mcp` builds it (the embedded
//! plugin, the local provider, the watcher over the skill roots), through
//! the product's own HTTP stack ([`serve_handler_on`]: the same front door,
//! guard and limits), wrapped in a handler ([`handler::ConformanceFixture`])
//! that forwards every MCP method to it and adds those five tools. The
//! product binary never has them.
//!
//! It serves a copy of WORKSPACE, made in the temporary directory (`TMPDIR`),
//! since two of the tools write skills into the workspace they serve. It
//! prints `mcp-conformance-fixture: listening on URL` on stderr once it
//! accepts connections, and runs until SIGINT or SIGTERM.

mod diagnostics;
mod handler;

use std::error::Error;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use skill_host::mcp::McpServer;
use skill_host::mcp::http::{HttpLimits, endpoint_url, serve_handler_on};
use skill_host::providers::local::{LocalProvider, LocalRoots};
use skill_host::{EMBEDDED_PLUGIN, Plugin, SandboxLimits, SkillRegistry, component_cache};

use self::diagnostics::SkillWriter;
use self::handler::ConformanceFixture;

/// The start of the line that names the URL served.
pub const LISTENING: &str = "mcp-conformance-fixture: listening on ";

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let [workspace] = arguments.as_slice() else {
        eprintln!("usage: mcp-conformance-fixture WORKSPACE");
        return ExitCode::from(2);
    };
    match serve(Path::new(workspace)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp-conformance-fixture: {error}");
            ExitCode::FAILURE
        }
    }
}

fn serve(source: &Path) -> Result<(), Box<dyn Error>> {
    let scratch = tempfile::Builder::new().prefix("mcp-conformance-fixture.").tempdir()?;
    let workspace = scratch.path().join("workspace");
    copy_tree(source, &workspace)?;
    let cwd = workspace.to_str().ok_or("the temporary directory's path is not UTF-8")?.to_owned();

    // As `skill-host mcp` with no options: the environment's local roots,
    // the embedded plugin with the default configuration and limits, and a
    // watcher over every root of the cwd.
    let roots = LocalRoots::from_env();
    let registry = Arc::new(SkillRegistry::new());
    registry.register_provider(Arc::new(LocalProvider::new(roots.clone())));
    let watch_roots: Vec<PathBuf> =
        LocalProvider::new(roots).roots_for(Some(&workspace)).into_iter().map(|root| root.path).collect();
    let server = McpServer::new(plugin("{}")?, plugin(r#"{"userInvocation":true}"#)?, registry, Some(cwd))?;
    let skills = SkillWriter::new(workspace.join(".agents/skills"), scratch.path().join("staging"));
    let fixture = ConformanceFixture::new(server.clone(), skills);

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let _ = writeln!(std::io::stderr(), "{LISTENING}{}", endpoint_url(listener.local_addr()?));
        serve_handler_on(fixture, &server, watch_roots, listener, HttpLimits::default(), stop_signal()).await
    })?;
    runtime.shutdown_background();
    Ok(())
}

/// The embedded plugin with `config`, compiled once into the component cache
/// `skill-host` uses.
fn plugin(config: &str) -> Result<Plugin, skill_host::HostError> {
    match component_cache::default_dir() {
        Some(cache) => Plugin::new_cached(EMBEDDED_PLUGIN, config, SandboxLimits::default(), &cache),
        None => Plugin::new(EMBEDDED_PLUGIN, config, SandboxLimits::default()),
    }
}

/// Copies a folder recursively (the fixture workspaces hold no links).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Completes on SIGINT or SIGTERM, so that the copy is removed.
async fn stop_signal() {
    let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(signal) => signal,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        Ok(()) = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
}

//! `skill-host mcp` with its watcher on announces every change of what a
//! client lists, once per list, and nothing when nothing listed changed
//! (docs/spec.md §6.9): raw JSON-RPC on the server's stdin and stdout, one
//! edit at a time, each followed by a bounded wait for what it sends.

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::Sandbox;
use crate::mcp_stdio::StdioServer;

/// How long a notification may take to come: the watcher's debounce (at
/// most ten times 50 ms) and the lists computed again, with a wide margin.
const FIRST_NOTIFICATION: Duration = Duration::from_secs(10);

/// The quiet that ends an edit's notifications, and how long an edit that
/// changes nothing listed is watched for one.
const QUIET: Duration = Duration::from_millis(1500);

/// `skill-host mcp --cwd WORKSPACE`, watcher on, after the handshake.
struct LiveServer {
    server: StdioServer,
}

impl LiveServer {
    fn start(sandbox: &Sandbox, workspace: &Path) -> Self {
        let mut server = StdioServer::start(sandbox, workspace, &[]);
        // A whole list computed and answered: the server is serving.
        let tools = server.request("tools/list", json!({}));
        assert_eq!(tools["result"]["tools"][0]["name"], "skill");
        Self { server }
    }

    /// The methods of the notifications `edit` makes the server send, sorted.
    fn notifications_after(&mut self, edit: impl FnOnce()) -> Vec<String> {
        edit();
        let started = Instant::now();
        let mut methods = Vec::new();
        // Until the first notification (or the wait for one ends), then until a quiet.
        let mut wait = FIRST_NOTIFICATION;
        loop {
            match self.server.received.recv_timeout(wait) {
                Ok(message) => {
                    methods.push(message["method"].as_str().unwrap_or("(not a notification)").to_owned());
                    wait = QUIET;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the server stopped"),
            }
            if methods.is_empty() && started.elapsed() >= FIRST_NOTIFICATION {
                break;
            }
        }
        methods.sort();
        methods
    }

    /// Watches for a notification that must not come.
    fn nothing_after(&mut self, edit: impl FnOnce()) -> Vec<String> {
        edit();
        let mut methods = Vec::new();
        let deadline = Instant::now() + QUIET;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.server.received.recv_timeout(left) {
                Ok(message) => methods.push(message["method"].as_str().unwrap_or("(not a notification)").to_owned()),
                Err(_) => break,
            }
        }
        methods
    }
}

/// Replaces `file` at once (written beside the workspace, then renamed), so
/// the watcher never sees it half written.
fn replace(sandbox: &Sandbox, file: &Path, text: &str) {
    let staged = sandbox.path().join("staged");
    std::fs::write(&staged, text).unwrap();
    std::fs::rename(&staged, file).unwrap();
}

const TOOLS: &str = "notifications/tools/list_changed";
const PROMPTS: &str = "notifications/prompts/list_changed";
const RESOURCES: &str = "notifications/resources/list_changed";

#[test]
fn every_change_of_what_a_client_lists_is_announced_once_and_nothing_else_is() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let folder = workspace.join(".agents/skills/release-notes");
    let skill_md = folder.join("SKILL.md");
    let original = std::fs::read_to_string(&skill_md).unwrap();
    let mut server = LiveServer::start(&sandbox, &workspace);

    // Nothing listed changes: a file rewritten as it was, a hidden file (never served).
    let unchanged = server.nothing_after(|| replace(&sandbox, &skill_md, &original));
    assert_eq!(unchanged, Vec::<String>::new(), "a file rewritten unchanged");
    let hidden = server.nothing_after(|| std::fs::write(folder.join(".draft.md"), "not served").unwrap());
    assert_eq!(hidden, Vec::<String>::new(), "a hidden file in a bundle");

    // Frontmatter outside the catalog: skills/list's frontmatter and digests
    // change; Skills-extension entries are resources, so resources/list_changed.
    let owner = original.replace("owner: docs-team", "owner: release-team");
    assert_ne!(owner, original);
    let frontmatter = server.notifications_after(|| replace(&sandbox, &skill_md, &owner));
    assert_eq!(frontmatter, [RESOURCES], "a frontmatter-only edit");

    // The description: the catalog in the tool's description, the prompt's
    // description, the resource's description (and skills/list's frontmatter).
    let described = owner.replace("Draft release notes for the next version", "Write the release notes");
    assert_ne!(described, owner);
    let description = server.notifications_after(|| replace(&sandbox, &skill_md, &described));
    assert_eq!(description, [PROMPTS, RESOURCES, TOOLS], "a description edit");

    // And a rewrite of the new text as it is: nothing again.
    let again = server.nothing_after(|| replace(&sandbox, &skill_md, &described));
    assert_eq!(again, Vec::<String>::new(), "the changed file rewritten unchanged");
}

/// A supporting file's new content changes its digest and size in
/// `skills/list`: the server's watcher watches each bundle's resource tree
/// (`SkillWatcher::start_with_resources`), so the lists are computed again
/// and the change announced.
#[test]
fn a_resource_file_edit_is_announced_as_a_resources_change() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let style = workspace.join(".agents/skills/release-notes/references/style.md");
    let style_text = std::fs::read_to_string(&style).unwrap();
    let mut server = LiveServer::start(&sandbox, &workspace);
    let settled = server.nothing_after(|| ());
    assert_eq!(settled, Vec::<String>::new());
    let resource = server.notifications_after(|| replace(&sandbox, &style, &format!("{style_text}\nOne more rule.\n")));
    assert_eq!(resource, [RESOURCES], "a resource-file edit");
}

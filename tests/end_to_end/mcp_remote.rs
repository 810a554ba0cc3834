//! `skill-host mcp --remote`: a remote index that is down, missing or hung
//! never hides the local skills, never makes a call wait, is warned about
//! once, and is announced with `list_changed` when it answers again or
//! changes (docs/spec.md §6.9).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skill_host::test_support::http::{Reply, Server, body};

use crate::common::Sandbox;

/// A `skill-host mcp` process spoken to in raw JSON-RPC on stdio.
struct Mcp {
    child: Child,
    input: ChildStdin,
    lines: Receiver<Value>,
    /// Notifications seen so far, by method.
    notifications: Vec<String>,
    next_id: u64,
}

impl Mcp {
    fn start(sandbox: &Sandbox, workspace: &Path, extra: &[&str]) -> Self {
        let mut args = vec!["mcp", "--cwd", workspace.to_str().unwrap()];
        args.extend_from_slice(extra);
        let mut child =
            sandbox.command(&args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let input = child.stdin.take().unwrap();
        let (sender, lines) = mpsc::channel();
        let reader = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in reader.lines().map_while(Result::ok) {
                let _ = sender.send(serde_json::from_str(&line).unwrap());
            }
        });
        let mut mcp = Self { child, input, lines, notifications: Vec::new(), next_id: 1 };
        let opened = mcp.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
        );
        assert_eq!(opened["result"]["serverInfo"]["name"], "skill-host");
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.input, "{message}").unwrap();
        self.input.flush().unwrap();
    }

    /// The answer to one request; notifications on the way are kept.
    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self.lines.recv_timeout(Duration::from_secs(30)).expect("an answer within 30 s");
            match line.get("id") {
                Some(answered) if answered == &json!(id) => return line,
                _ => self.notifications.push(line["method"].as_str().unwrap_or_default().to_owned()),
            }
        }
    }

    fn tool_description(&mut self) -> String {
        self.call("tools/list", json!({}))["result"]["tools"][0]["description"].as_str().unwrap().to_owned()
    }

    /// Waits (at most `limit`) for the notification `method`.
    fn wait_for(&mut self, method: &str, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while !self.notifications.iter().any(|seen| seen == method) {
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => self.notifications.push(line["method"].as_str().unwrap_or_default().to_owned()),
                Err(_) => return false,
            }
        }
        true
    }

    /// Closes stdin and returns what the server wrote on stderr.
    fn finish(self) -> String {
        drop(self.input);
        let output = self.child.wait_with_output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stderr).unwrap()
    }
}

const REMOTE_INDEX: &str =
    r#"{"skills":[{"name":"remote-triage","description":"Triage from the server.","url":"remote-triage.md"}]}"#;

/// A port on 127.0.0.1 that refuses connections (bound, then let go).
fn refused_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/index.json")
}

#[test]
fn a_failing_remote_index_never_hides_the_local_skills_nor_slows_a_call() {
    let server = Server::start(&[("/hang.json", Reply::Hang), ("/missing.json", Reply::Status(404))]);
    let down = refused_url();
    let (missing, hung) = (server.url("/missing.json"), server.url("/hang.json"));
    for (url, warns_at_once) in [(down.as_str(), true), (missing.as_str(), true), (hung.as_str(), false)] {
        let sandbox = Sandbox::new();
        let workspace = sandbox.example_workspace();
        let mut mcp = Mcp::start(&sandbox, &workspace, &["--no-watch", "--remote", url]);
        let description = mcp.tool_description();
        assert!(description.contains("- `commit-message`: "), "{url}: {description}");
        for round in 0..3 {
            for (method, params) in [
                ("tools/list", json!({})),
                ("prompts/list", json!({})),
                ("resources/list", json!({})),
                ("skills/list", json!({})),
                ("prompts/get", json!({"name": "commit-message"})),
            ] {
                let asked = Instant::now();
                let answer = mcp.call(method, params);
                let took = asked.elapsed();
                assert!(answer.get("result").is_some(), "{url}: {method}: {answer}");
                assert!(took < Duration::from_secs(1), "{url}: {method} round {round} took {took:?}");
            }
        }
        let stderr = mcp.finish();
        let warning = format!("warning: skill provider \"remote\" skipped: {url}: cannot read skill index: ");
        let warnings: Vec<&str> = stderr.lines().filter(|line| line.starts_with("warning: ")).collect();
        if warns_at_once {
            assert_eq!(warnings.len(), 1, "{url}: {stderr}");
            assert!(warnings[0].starts_with(&warning), "{url}: {stderr}");
        } else {
            // The hung request times out later than this test waits.
            assert!(warnings.len() <= 1, "{url}: {stderr}");
        }
    }
}

#[test]
fn a_remote_index_that_comes_back_is_announced_and_listed() {
    let server = Server::start(&[
        ("/index.json", Reply::Status(404)),
        ("/remote-triage.md", body("---\nname: remote-triage\ndescription: Triage from the server.\n---\nSteps.\n")),
    ]);
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let mut mcp = Mcp::start(&sandbox, &workspace, &["--remote", &server.url("/index.json")]);
    let description = mcp.tool_description();
    assert!(description.contains("- `commit-message`: ") && !description.contains("remote-triage"), "{description}");
    server.set("/index.json", body(REMOTE_INDEX));
    assert!(mcp.wait_for("notifications/tools/list_changed", Duration::from_secs(10)), "{:?}", mcp.notifications);
    let description = mcp.tool_description();
    assert!(description.contains("- `remote-triage`: Triage from the server."), "{description}");
    assert!(description.contains("- `commit-message`: "), "{description}");
    let stderr = mcp.finish();
    assert_eq!(stderr.lines().filter(|line| line.starts_with("warning: ")).count(), 1, "{stderr}");
}

#[test]
fn a_remote_index_that_changes_is_re_read_and_announced() {
    let tagged = |text: &str, etag: &str| Reply::Tagged {
        body: text.as_bytes().to_vec(),
        etag: etag.to_owned(),
        max_age: Some(1),
    };
    let server = Server::start(&[("/index.json", tagged(REMOTE_INDEX, "\"v1\""))]);
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let mut mcp = Mcp::start(&sandbox, &workspace, &["--remote", &server.url("/index.json")]);
    assert!(mcp.tool_description().contains("- `remote-triage`: Triage from the server."));
    let changed =
        r#"{"skills":[{"name":"remote-triage","description":"Changed on the server.","url":"remote-triage.md"}]}"#;
    server.set("/index.json", tagged(changed, "\"v2\""));
    // A max-age of 1 s is read as the shortest interval, 5 s.
    assert!(mcp.wait_for("notifications/tools/list_changed", Duration::from_secs(12)), "{:?}", mcp.notifications);
    assert!(mcp.tool_description().contains("- `remote-triage`: Changed on the server."));
    mcp.finish();
    // Re-read conditionally: the first read had no tag to send.
    let conditions = server.conditions();
    assert_eq!(conditions[0], "");
    assert!(conditions[1..].iter().all(|sent| sent == "\"v1\"" || sent == "\"v2\""), "{conditions:?}");
}

//! A `skill-host mcp` on stdio driven with raw JSON-RPC lines: what the
//! tests that look at exact messages (notifications, error codes, cache
//! fields) talk to.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Sandbox, path};

/// How long one answer may take.
pub const ANSWER: Duration = Duration::from_secs(20);

/// `skill-host mcp --cwd WORKSPACE ARGS…` after the handshake (protocol
/// 2025-06-18). Killed on drop.
pub struct StdioServer {
    child: Child,
    input: Option<ChildStdin>,
    /// Every message the server wrote, in order.
    pub received: mpsc::Receiver<Value>,
    stderr: Option<JoinHandle<String>>,
    next_id: u64,
}

impl StdioServer {
    pub fn start(sandbox: &Sandbox, workspace: &Path, args: &[&str]) -> Self {
        let mut child = sandbox
            .command(&[&["mcp", "--cwd", path(workspace)], args].concat())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take();
        let (messages, received) = mpsc::channel();
        let reader = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in reader.lines().map_while(Result::ok) {
                let _ = messages.send(serde_json::from_str(&line).unwrap());
            }
        });
        // Read as it comes, so that a chatty server never blocks on a full pipe.
        let mut errors = child.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = errors.read_to_string(&mut text);
            text
        });
        let mut server = Self { child, input, received, stderr: Some(stderr), next_id: 0 };
        let initialize = server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}),
        );
        assert_eq!(initialize["result"]["serverInfo"]["name"], "skill-host");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn send(&mut self, message: &Value) {
        let input = self.input.as_mut().unwrap();
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
    }

    /// The answer to `method` with `params` (notifications before it skipped).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.received.recv_timeout(ANSWER).expect("an answer");
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Ends the server (stdin closed; killed if it has not ended within 5 s)
    /// and returns what it wrote on stderr.
    pub fn stop(mut self) -> String {
        self.end();
        self.stderr.take().map(|reader| reader.join().unwrap_or_default()).unwrap_or_default()
    }

    fn end(&mut self) {
        drop(self.input.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        self.end();
    }
}

/// The handshake and `tools/list`, as newline-delimited requests.
fn handshake_and_tools() -> String {
    [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    ]
    .iter()
    .map(|message| format!("{message}\n"))
    .collect()
}

/// The `tools/list` answer among `output`'s lines.
fn tool_names(output: &str) -> Vec<Value> {
    let answers: Vec<Value> = output.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let tools =
        answers.iter().find(|answer| answer["id"] == 1).unwrap_or_else(|| panic!("no tools/list answer: {output}"));
    tools["result"]["tools"].as_array().unwrap().iter().map(|tool| tool["name"].clone()).collect()
}

/// stdin and stdout are served whatever they are: pipes (Python's and
/// Rust's clients, the other tests), a Unix socket pair (Node's
/// `child_process`), or plain files (a redirect), each read and written on
/// the runtime's poller where it can be and through blocking threads where
/// it cannot.
#[test]
fn stdio_is_served_from_files_and_from_a_socket_pair() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let requests = sandbox.path().join("requests.jsonl");
    let answers = sandbox.path().join("answers.jsonl");
    std::fs::write(&requests, handshake_and_tools()).unwrap();
    let status = sandbox
        .command(&["mcp", "--cwd", path(&workspace), "--no-watch"])
        .stdin(std::fs::File::open(&requests).unwrap())
        .stdout(std::fs::File::create(&answers).unwrap())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(tool_names(&std::fs::read_to_string(&answers).unwrap()), [json!("skill")]);

    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let mut child = sandbox
        .command(&["mcp", "--cwd", path(&workspace), "--no-watch"])
        .stdin(std::os::fd::OwnedFd::from(theirs.try_clone().unwrap()))
        .stdout(std::os::fd::OwnedFd::from(theirs))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ours.set_read_timeout(Some(ANSWER)).unwrap();
    (&ours).write_all(handshake_and_tools().as_bytes()).unwrap();
    let mut reader = BufReader::new(&ours);
    let mut output = String::new();
    while !output.lines().any(|line| line.contains("\"id\":1")) {
        assert!(reader.read_line(&mut output).unwrap() > 0, "the server closed the socket: {output}");
    }
    assert_eq!(tool_names(&output), [json!("skill")]);
    ours.shutdown(std::net::Shutdown::Write).unwrap();
    let deadline = Instant::now() + ANSWER;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the server did not stop when its input ended");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The threads of process `pid` whose name starts with `prefix` (Linux
/// keeps the first 15 bytes of a thread's name).
fn threads_named(pid: u32, prefix: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.unwrap().path().join("comm")).ok())
        .filter(|name| name.trim_end().starts_with(prefix))
        .count()
}

#[test]
fn skill_host_mcp_compiles_its_component_once_for_the_tool_and_the_prompts() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let mut server = StdioServer::start(&sandbox, &workspace, &["--no-watch"]);
    // Both plugins answer: the tool's and the prompts' (user invocation on).
    let tools = server.request("tools/list", json!({}));
    assert_eq!(tools["result"]["tools"][0]["name"], "skill");
    let prompts = server.request("prompts/list", json!({}));
    let name = prompts["result"]["prompts"][0]["name"].as_str().expect("a prompt").to_owned();
    let prompt = server.request("prompts/get", json!({"name": name}));
    assert!(
        prompt["result"]["messages"][0]["content"]["text"].as_str().is_some_and(|text| text.contains("<skill_content")),
        "{prompt}"
    );
    // One engine: every compiled component (Plugin::new) starts its own
    // epoch ticker thread, and the prompts' plugin shares the tool's.
    assert_eq!(threads_named(server.pid(), "skill-host-epoc"), 1, "one epoch ticker, so one compiled component");
    server.stop();
}

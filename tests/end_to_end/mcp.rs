//! `skill-host mcp` driven by the official MCP Python SDK (`mcp` on PyPI,
//! `tests/mcp-client/client.py`), a client this project did not write, and
//! by raw JSON-RPC lines for bad input (over HTTP: mcp_http.rs). The texts a
//! client gets must be byte for byte what `skill-host load` and `step` print.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Sandbox, path, repo_root, skill_host_bin, stderr, stdout};

/// The Python with the client installed: `SKILL_HOST_MCP_PYTHON`, else the
/// virtual environment `.ci/run` makes.
fn python() -> PathBuf {
    let python = std::env::var_os("SKILL_HOST_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/mcp-client-venv/bin/python"));
    assert!(
        python.exists(),
        "{} is missing: install the MCP client with `python3 -m venv target/mcp-client-venv && \
         target/mcp-client-venv/bin/pip install -r tests/mcp-client/requirements.txt` (as .ci/run does)",
        python.display()
    );
    python
}

pub(crate) fn env(sandbox: &Sandbox) -> Value {
    json!({
        "DSH_HOME": path(&sandbox.path().join("home/dsh")),
        "DSH_AGENTS_HOME": path(&sandbox.path().join("home/agents")),
        "SKILL_HOST_CACHE_DIR": concat!(env!("CARGO_TARGET_TMPDIR"), "/skill-host-cache"),
    })
}

/// What `skill-host load NAME` prints, without the newline, and whether it failed.
fn load(sandbox: &Sandbox, workspace: &Path, name: &str) -> (String, bool) {
    let output = sandbox.run(&["load", name, "--cwd", path(workspace)]);
    let text = stdout(&output);
    (text.strip_suffix('\n').unwrap_or(&text).to_owned(), output.status.code() == Some(1))
}

/// The messages `skill-host step` enters for a new session.
fn step(sandbox: &Sandbox, workspace: &Path, extra: &[&str]) -> Vec<Value> {
    let session = sandbox.path().join(format!("s{}.jsonl", extra.len()));
    let mut args = vec!["step", "--json", "--session", path(&session), "--cwd", path(workspace)];
    args.extend_from_slice(extra);
    let output = sandbox.run(&args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let decision: Value = serde_json::from_str(&stdout(&output)).unwrap();
    decision["messages"].as_array().unwrap().clone()
}

/// Runs the official client (tests/mcp-client/client.py) on `plan` and
/// returns the transcript it prints.
pub(crate) fn official_client(sandbox: &Sandbox, plan: &Value) -> Value {
    let plan_file = sandbox.path().join("plan.json");
    std::fs::write(&plan_file, plan.to_string()).unwrap();
    let output = Command::new(python())
        .arg(repo_root().join("tests/mcp-client/client.py"))
        .arg(&plan_file)
        .output()
        .expect("the MCP client runs");
    assert!(output.status.success(), "the client failed: {}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

fn text_of(message: &Value) -> &str {
    message["content"][0]["text"].as_str().unwrap()
}

/// How the official client reaches the server.
pub enum Transport {
    /// The client starts `skill-host mcp` and talks on its stdin and stdout.
    Stdio,
    /// The test starts `skill-host mcp --http 127.0.0.1:0`; the client posts
    /// to the URL it prints.
    Http,
}

#[test]
fn an_official_mcp_client_gets_what_skill_host_load_prints() {
    official_client_gets_what_skill_host_load_prints(Transport::Stdio);
}

/// The whole session of the official client (tools, calls, prompts, the
/// Skills extension, reads, change notifications) over `transport`, each
/// answer compared with what `skill-host load` and `step` print.
pub fn official_client_gets_what_skill_host_load_prints(transport: Transport) {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let skills = workspace.join(".agents/skills");
    // A link out of a skill's folder, which is neither listed nor read.
    std::fs::write(sandbox.path().join("secret.txt"), "not for clients").unwrap();
    std::os::unix::fs::symlink(sandbox.path().join("secret.txt"), skills.join("release-notes/leak.md")).unwrap();
    // A skill over the Skills extension's 512 files.
    sandbox.write_skill(&workspace, "huge", "description: Too many files.\n", "Body.");
    for i in 0..512 {
        std::fs::write(skills.join(format!("huge/f{i}.txt")), "x").unwrap();
    }
    let flat = skills.join("commit-message.md");
    let flat_text = std::fs::read_to_string(&flat).unwrap();
    // Started once the workspace is complete, so its watcher sees it all;
    // killed when the test ends, passed or not.
    let http_server = match transport {
        Transport::Stdio => None,
        Transport::Http => Some(crate::mcp_http::HttpServer::start(&sandbox, &["--cwd", path(&workspace)])),
    };
    let server = match &http_server {
        None => json!({
            "command": [path(&skill_host_bin()), "mcp", "--cwd", path(&workspace)],
            "env": env(&sandbox),
        }),
        Some(server) => json!({"url": server.url}),
    };
    let mut plan = json!({
        "calls": [{"name": "release-notes"}, {"name": "commit-message"}, {"name": "deploy-production"},
                  {"name": "no-such-skill"}, {"name": "Bad Name"}, {}, {"name": 3}],
        "prompts": ["deploy-production", "release-notes", "no-such-skill"],
        "skills_get": ["skill://release-notes/SKILL.md", "skill://huge/SKILL.md", "skill://no-such-skill/SKILL.md",
                       "skill://deploy-production/SKILL.md"],
        "reads": ["skill://release-notes/references/style.md", "skill://commit-message/SKILL.md",
                  "skill://release-notes/leak.md", "skill://release-notes/../review-pr/SKILL.md",
                  "skill://release-notes/nope.md", "skill://deploy-production/SKILL.md"],
        "touch": {"path": path(&flat), "text": flat_text},
        "change": {"path": path(&flat), "text": "---\nname: commit-message\ndescription: Changed while served.\n---\n\nBody.\n"},
    });
    plan.as_object_mut().unwrap().extend(server.as_object().unwrap().clone());
    let transcript = official_client(&sandbox, &plan);
    if let Some(server) = http_server {
        // SIGTERM ends the server cleanly, sessions and all.
        assert_eq!(server.stop().code(), Some(0));
    }
    // What the client saw before its change, `load` and `step` see now.
    std::fs::write(&flat, &flat_text).unwrap();

    // The capability of the Skills extension, beside tools, prompts, resources.
    assert_eq!(
        transcript["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/skills": {"directoryRead": true}})
    );
    // The tool: the component's description, then the catalog `step` publishes.
    let catalog = step(&sandbox, &workspace, &[]);
    let definition = crate::common::plugin().definition().unwrap();
    let tool = &transcript["tools"][0];
    assert_eq!(transcript["tools"].as_array().unwrap().len(), 1);
    assert_eq!(tool["name"], "skill");
    assert_eq!(
        tool["description"].as_str().unwrap(),
        format!("{}\n\n{}", definition.description, text_of(&catalog[0]))
    );
    assert_eq!(tool["inputSchema"], definition.parameters);
    // Each call: exactly `load`'s text, isError on errors.
    for call in transcript["calls"].as_array().unwrap() {
        let (text, is_error) = match call["arguments"]["name"].as_str() {
            Some(name) => load(&sandbox, &workspace, name),
            None if call["arguments"] == json!({}) => {
                ("Error: invalid arguments: missing required property \"name\"".to_owned(), true)
            }
            None => ("Error: invalid arguments: \"name\" must be a string".to_owned(), true),
        };
        assert_eq!(call["text"], json!([text]), "{}", call["arguments"]);
        assert_eq!(call["isError"], json!(is_error), "{}", call["arguments"]);
    }
    assert_eq!(transcript["unknown_tool"]["error"]["code"], -32602);
    // Prompts: every user-invocable skill (deploy-production too, which is
    // not in the catalog); the message is the block user invocation injects.
    let prompts: Vec<&str> =
        transcript["prompts"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(prompts, ["commit-message", "deploy-production", "huge", "release-notes", "triage-bug"]);
    let config = sandbox.path().join("ui.json");
    std::fs::write(&config, r#"{"userInvocation": true}"#).unwrap();
    for prompt in transcript["get_prompts"].as_array().unwrap() {
        let name = prompt["name"].as_str().unwrap();
        if name == "no-such-skill" {
            assert_eq!(prompt["error"]["message"], "prompt \"no-such-skill\" is unknown or not user-invocable");
            continue;
        }
        let gesture = format!("/{name}");
        let entered = step(&sandbox, &workspace, &["--config", path(&config), "--message", &gesture]);
        let injected = entered.iter().find(|m| m["source"]["kind"] == "skill-invocation").unwrap();
        assert_eq!(prompt["messages"], json!([{"role": "user", "text": text_of(injected)}]), "{name}");
    }
    // The Skills extension: every skill in a folder here that the model may
    // invoke (not deploy-production, user-only), `huge` refused.
    let listed: Vec<&Value> = transcript["skills_pages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|page| page["result"]["skills"].as_array().unwrap())
        .collect();
    let uris: Vec<&str> = listed.iter().map(|skill| skill["uri"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "skill://commit-message/SKILL.md",
            "skill://release-notes/SKILL.md",
            "skill://review-pr/SKILL.md",
            "skill://triage-bug/SKILL.md"
        ]
    );
    let digest = |file: &Path| {
        use std::fmt::Write as _;
        let bytes = std::fs::read(file).unwrap();
        let hash = sha256(&bytes);
        let mut text = String::from("sha256:");
        for byte in hash {
            write!(text, "{byte:02x}").unwrap();
        }
        (text, bytes.len())
    };
    let (skill_md, skill_md_size) = digest(&skills.join("release-notes/SKILL.md"));
    let (style, style_size) = digest(&skills.join("release-notes/references/style.md"));
    // Cacheable by the user's client for a minute: the server watches.
    let release_notes = json!({"ttlMs": 60_000, "cacheScope": "private", "skill": {
        "uri": "skill://release-notes/SKILL.md",
        "frontmatter": {"name": "release-notes",
            "description": "Draft release notes for the next version from the merged pull requests since the last tag.",
            "metadata": {"owner": "docs-team"}},
        "resources": [
            {"uri": "skill://release-notes/SKILL.md", "digest": skill_md, "size": skill_md_size},
            {"uri": "skill://release-notes/references/style.md", "digest": style, "size": style_size},
        ],
    }});
    assert_eq!(transcript["skills_get"][0]["result"], release_notes);
    assert_eq!(
        transcript["skills_get"][1]["error"]["message"],
        "skill \"huge\" has more than 512 files; the Skills extension allows at most 512 per skill"
    );
    assert_eq!(transcript["skills_get"][2]["error"]["message"], "no skill \"no-such-skill\" is served here");
    assert_eq!(transcript["skills_get"][2]["error"]["code"], -32602);
    // A user-only skill is the user's prompt, never handed to a client's model.
    assert_eq!(transcript["skills_get"][3]["error"]["message"], "no skill \"deploy-production\" is served here");
    assert_eq!(transcript["skills_get"][3]["error"]["code"], -32602);
    // Reads: inside the folder only.
    let reads = &transcript["reads"];
    let style_text = std::fs::read_to_string(skills.join("release-notes/references/style.md")).unwrap();
    assert_eq!(reads[0]["contents"][0]["text"], style_text);
    assert_eq!(reads[0]["contents"][0]["mimeType"], "text/markdown");
    assert_eq!(reads[1]["contents"][0]["text"], flat_text);
    assert_eq!(
        reads[2]["error"]["message"],
        "skill://release-notes/leak.md is outside the folder of skill \"release-notes\""
    );
    assert_eq!(
        reads[3]["error"]["message"],
        "skill://release-notes/../review-pr/SKILL.md is not a skill resource: `.` and `..` segments are not allowed"
    );
    assert_eq!(reads[4]["error"]["message"], "skill://release-notes/nope.md: skill \"release-notes\" has no such file");
    assert_eq!(reads[5]["error"]["message"], "no skill \"deploy-production\" is served here");
    // Rewriting a file unchanged notified nothing; the change, each list once.
    assert_eq!(
        transcript["notifications"],
        json!([
            "notifications/tools/list_changed",
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed"
        ])
    );
    assert!(
        transcript["tools_after_change"][0].as_str().unwrap().contains("- `commit-message`: Changed while served.\n")
    );
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).into()
}

#[test]
fn bad_json_rpc_gets_an_error_naming_it_and_the_server_keeps_serving() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let mut server = sandbox
        .command(&["mcp", "--no-watch", "--cwd", path(&workspace)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = server.stdin.take().unwrap();
    let (lines, received) = mpsc::channel();
    let reader = BufReader::new(server.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in reader.lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut exchange = |line: &str| -> Value {
        writeln!(input, "{line}").unwrap();
        input.flush().unwrap();
        let answer = received.recv_timeout(Duration::from_secs(30)).expect("an answer within 30 s");
        serde_json::from_str(&answer).unwrap()
    };
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    // The initialized notification follows on the next line; it has no answer.
    let opening = format!("{initialize}\n{}", r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(exchange(&opening)["result"]["serverInfo"]["name"], "skill-host");
    let error = exchange("this is not JSON");
    assert_eq!((&error["id"], &error["error"]["code"]), (&Value::Null, &json!(-32700)));
    let oversized =
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(5 << 20));
    assert_eq!(
        exchange(&oversized)["error"]["message"],
        "Invalid request: the message is larger than the 4 MiB limit (4194304 bytes); it was discarded"
    );
    assert_eq!(exchange(r#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#)["error"]["code"], -32600);
    let unknown = exchange(r#"{"jsonrpc":"2.0","id":4,"method":"no/such/method"}"#);
    assert_eq!((&unknown["id"], &unknown["error"]["code"]), (&json!(4), &json!(-32601)));
    let params = exchange(r#"{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{}}"#);
    assert_eq!((&params["id"], &params["error"]["code"]), (&json!(5), &json!(-32602)));
    assert_eq!(params["error"]["message"], "Invalid params for \"resources/read\": missing field `uri`");
    let outside = exchange(
        r#"{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"skill://review-pr/%2E%2E/%2E%2E/%2E%2E/etc/passwd"}}"#,
    );
    assert_eq!(
        outside["error"]["message"],
        "skill://review-pr/%2E%2E/%2E%2E/%2E%2E/etc/passwd is not a skill resource: `.` and `..` segments are not allowed"
    );
    // Still serving.
    assert_eq!(
        exchange(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#),
        json!({"jsonrpc": "2.0", "id": 7, "result": {}})
    );
    drop(input);
    let status = server.wait().unwrap();
    assert!(status.success(), "{status}");
}

/// With a catalog budget and search configured, the official client sees
/// the search schema, a tool description carrying the budgeted catalog and
/// its coverage line, and for a `query` exactly what `load --query` prints.
#[test]
fn an_official_mcp_client_searches_the_skills_a_budget_left_out() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let config = sandbox.path().join("budget.json");
    std::fs::write(&config, r#"{"catalogBudget": 60, "skillSearch": true}"#).unwrap();
    let plan = json!({
        "command": [path(&skill_host_bin()), "--config", path(&config), "mcp", "--no-watch", "--cwd", path(&workspace)],
        "env": env(&sandbox),
        "calls": [{"query": "release notes"}, {"name": "release-notes"}, {"name": "review-pr", "query": "x"}],
    });
    let transcript = official_client(&sandbox, &plan);
    let tool = &transcript["tools"][0];
    assert_eq!(tool["inputSchema"]["properties"]["query"]["type"], "string", "{tool}");
    let description = tool["description"].as_str().unwrap();
    assert!(description.starts_with("Load the full instructions for an available skill, or find skills by `query`."));
    let catalog = step(&sandbox, &workspace, &["--config", path(&config)]);
    assert!(text_of(&catalog[0]).contains("\nCatalog coverage: "), "{}", text_of(&catalog[0]));
    assert!(description.ends_with(text_of(&catalog[0])), "{description}");
    let printed = |args: &[&str]| {
        let mut all = vec!["--config", path(&config), "load", "--cwd", path(&workspace)];
        all.extend_from_slice(args);
        let output = sandbox.run(&all);
        let text = stdout(&output);
        (text.strip_suffix('\n').unwrap_or(&text).to_owned(), output.status.code() == Some(1))
    };
    let calls = transcript["calls"].as_array().unwrap();
    let expected = [
        printed(&["--query", "release notes"]),
        printed(&["release-notes"]),
        ("Error: invalid arguments: give \"name\" or \"query\", not both".to_owned(), true),
    ];
    assert!(expected[0].0.starts_with("Skills matching the query:\n- `release-notes`: "), "{}", expected[0].0);
    for (call, (text, is_error)) in calls.iter().zip(&expected) {
        assert_eq!(call["text"], json!([text]), "{}", call["arguments"]);
        assert_eq!(call["isError"], json!(is_error), "{}", call["arguments"]);
    }
    assert_eq!(calls.len(), expected.len());
}

//! `skill-host mcp` driven by the official MCP TypeScript SDK client
//! (`@modelcontextprotocol/client`, its `Client`, stdio and streamable HTTP
//! transports, and `SkillsClient` from `/ext/skills` with default options),
//! through tests/mcp-node/ts-client.mjs, on the example workspace, the two
//! public corpora and the conformance fixture, in both protocol eras (the
//! 2025 `initialize` handshake and 2026-07-28, negotiated with
//! `versionNegotiation: {mode: 'auto'}`). Every file of every skill the
//! client lists must pass its verification (size, digest, frontmatter);
//! the `skill` tool must answer what `skill-host load` prints. And the
//! client's response cache: served from the cache while fresh, emptied by a
//! change notification.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Sandbox, path, repo_root, skill_host_bin, stdout};
use crate::mcp_conformance::{SCENARIO_DEADLINE, conformance_workspace, installed_script, node, output_within};
use crate::mcp_http::HttpServer;

/// Runs ts-client.mjs on `plan` and returns its transcript.
fn ts_client(sandbox: &Sandbox, plan: &Value) -> Value {
    let script = installed_script("ts-client.mjs");
    let plan_file = tempfile::NamedTempFile::new_in(sandbox.path()).unwrap();
    std::fs::write(plan_file.path(), plan.to_string()).unwrap();
    let mut command = std::process::Command::new(node());
    command.arg(&script).arg(plan_file.path());
    let output = output_within(command, SCENARIO_DEADLINE, "the TypeScript client");
    assert!(output.status.success(), "the client failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|error| panic!("the client printed no transcript ({error}): {}", stdout(&output)))
}

/// What `skill-host load NAME` prints with the server's arguments (but
/// `--no-watch`), and whether it failed.
fn load(sandbox: &Sandbox, args: &[&str], name: &str) -> (String, bool) {
    let args: Vec<&str> = args.iter().copied().filter(|arg| *arg != "--no-watch").collect();
    let output = sandbox.run(&[&["load", name], args.as_slice()].concat());
    let text = stdout(&output);
    (text.strip_suffix('\n').unwrap_or(&text).to_owned(), output.status.code() == Some(1))
}

/// Serves one workspace (`args` after `mcp`) to the client over stdio and
/// over HTTP, in both eras, and checks every transcript: the Skills
/// extension lists exactly `skills` (by name), each verified file by file.
fn every_skill_verifies(sandbox: &Sandbox, args: &[&str], skills: &[&str]) {
    let http = HttpServer::start(sandbox, args);
    let bin = skill_host_bin();
    let command = [&[path(&bin), "mcp"], args].concat();
    let stdio = json!({
        "command": command,
        "env": crate::mcp::env(sandbox),
    });
    for (server, era, version) in [
        (&stdio, "legacy", "2025-11-25"),
        (&stdio, "auto", "2026-07-28"),
        (&json!({"url": http.url}), "legacy", "2025-11-25"),
        (&json!({"url": http.url}), "auto", "2026-07-28"),
    ] {
        let label = format!("{} {era}", if server.get("url").is_some() { "http" } else { "stdio" });
        let transcript = ts_client(sandbox, &json!({"server": server, "era": era, "mode": "session"}));
        assert_eq!(transcript["errors"], json!([]), "{label}: the client failed\nstderr: {}", transcript["stderr"]);
        assert_eq!(transcript["protocolVersion"], version, "{label}");
        let extension = &transcript["capabilities"]["extensions"]["io.modelcontextprotocol/skills"];
        assert!(extension.is_object(), "{label}: the Skills extension is not declared: {}", transcript["capabilities"]);
        assert_eq!(transcript["tools"], json!(["skill"]), "{label}");

        // The Skills extension: the skills expected, every file verified.
        let listed = transcript["skills"].as_array().unwrap();
        let mut names: Vec<&str> = listed.iter().map(|skill| skill["name"].as_str().unwrap()).collect();
        names.sort_unstable();
        assert_eq!(names, skills, "{label}: the skills SkillsClient.list() returned");
        for skill in listed {
            let uri = skill["uri"].as_str().unwrap();
            let files = skill["files"].as_array().unwrap();
            assert!(!files.is_empty(), "{label}: {uri} lists no file");
            for file in files {
                assert_eq!(file["verified"], true, "{label}: {file}");
                assert_eq!(file["frontmatter"], json!(file["uri"] == skill["uri"]), "{label}: {file}");
            }
            assert_eq!(skill["get"], skill["uri"], "{label}: skills/get of {uri}");
            // With `directoryRead`: the root's direct children, as the files imply.
            if let Some(directory) = skill.get("directory") {
                let root = uri.strip_suffix("/SKILL.md").unwrap();
                let mut expected: Vec<(String, bool)> = files
                    .iter()
                    .map(|file| {
                        let relative = file["uri"].as_str().unwrap().strip_prefix(root).unwrap();
                        let relative = relative.trim_start_matches('/');
                        match relative.split_once('/') {
                            Some((folder, _)) => (format!("{root}/{folder}"), true),
                            None => (format!("{root}/{relative}"), false),
                        }
                    })
                    .collect();
                expected.sort();
                expected.dedup();
                let mut children: Vec<(String, bool)> = directory
                    .as_array()
                    .unwrap_or_else(|| panic!("{label}: no directory read of {root}"))
                    .iter()
                    .map(|child| (child["uri"].as_str().unwrap().to_owned(), child["mimeType"] == "inode/directory"))
                    .collect();
                children.sort();
                assert_eq!(children, expected, "{label}: resources/directory/read of {root}");
            }
        }
        // resources/list holds every listed skill's SKILL.md; each reads.
        let resources: Vec<&str> =
            transcript["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
        for skill in listed {
            assert!(
                resources.contains(&skill["uri"].as_str().unwrap()),
                "{label}: {} not in {resources:?}",
                skill["uri"]
            );
        }
        assert_eq!(transcript["reads"].as_array().unwrap().len(), resources.len(), "{label}");
        // Prompts: each one gets its message.
        let prompts = transcript["prompts"].as_array().unwrap();
        assert!(!prompts.is_empty(), "{label}: no prompts");
        let got = transcript["get_prompts"].as_array().unwrap();
        assert_eq!(got.len(), prompts.len(), "{label}");
        for prompt in got {
            assert!(prompt["messages"].as_u64().unwrap() >= 1, "{label}: {prompt}");
            assert!(!prompt["text"].as_str().unwrap_or("").is_empty(), "{label}: {prompt}");
        }
        // The `skill` tool, for every listed skill: what `skill-host load` prints.
        assert_eq!(transcript["calls"].as_array().unwrap().len(), listed.len(), "{label}");
        for call in transcript["calls"].as_array().unwrap() {
            let name = call["name"].as_str().unwrap();
            let (text, is_error) = load(sandbox, args, name);
            assert_eq!(call["text"], json!([text]), "{label}: tools/call skill {name}");
            assert_eq!(call["isError"], json!(is_error), "{label}: tools/call skill {name}");
        }
    }
}

#[test]
fn the_typescript_client_verifies_every_skill_of_the_example_workspace() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    every_skill_verifies(
        &sandbox,
        &["--cwd", path(&workspace)],
        // `deploy-production` has `disable-model-invocation: true`: a prompt only.
        &["commit-message", "release-notes", "review-pr", "triage-bug"],
    );
}

#[test]
fn the_typescript_client_verifies_every_skill_of_the_conformance_fixture() {
    let sandbox = Sandbox::new();
    let workspace = conformance_workspace(&sandbox);
    every_skill_verifies(&sandbox, &["--cwd", path(&workspace)], &["api-client", "changelog-writer", "data-report"]);
}

/// A collection of tests/fixtures/corpus served as a custom root (as
/// corpus.rs does) from an empty project; its skill folders but `left_out`.
fn corpus(collection: &str, left_out: &[&str]) {
    let sandbox = Sandbox::new();
    let project = sandbox.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let root: PathBuf = repo_root().join("tests/fixtures/corpus").join(collection);
    let mut skills: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|folder| folder.join("SKILL.md").is_file())
        .map(|folder| folder.file_name().unwrap().to_str().unwrap().to_owned())
        .filter(|name| !left_out.contains(&name.as_str()))
        .collect();
    skills.sort();
    let skills: Vec<&str> = skills.iter().map(String::as_str).collect();
    every_skill_verifies(&sandbox, &["--no-watch", "--cwd", path(&project), "--skills-dir", path(&root)], &skills);
}

#[test]
fn the_typescript_client_verifies_every_skill_it_lists_of_anthropic_skills() {
    // `claude-api`'s description is 1,068 characters, over the Agent Skills
    // specification's 1,024: the server leaves it out of the Skills
    // extension (with a warning) rather than fail the client's whole listing.
    corpus("anthropic-skills", &["claude-api"]);
}

#[test]
fn the_typescript_client_verifies_every_skill_it_lists_of_dsh_agents_skills() {
    // `dsh-translate-docs` has `disable-model-invocation: true`: a prompt only.
    corpus("dsh-agents-skills", &["dsh-translate-docs"]);
}

/// The client's response cache (SEP-2549 `ttlMs`, `cacheScope`) on a
/// 2026-07-28 connection over HTTP to a server that watches its skills: a
/// second `listResources()` and a second `SkillsClient.read()` come from the
/// cache (no request on the wire), and after a skill's description changes
/// on disk, the server's `notifications/resources/list_changed` (on the
/// client's `subscriptions/listen` stream) empties the cached listing, so
/// the next `listResources()`, `SkillsClient.list()` and `read()` return the
/// new description (`read()` refetches the cached copy that no longer
/// matches the new entry's digest). `SkillsClient.list()` itself is never
/// cached by this client version (it always walks `skills/list`).
#[test]
fn the_typescript_client_caches_until_a_change_notification() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let manifest: &Path = &workspace.join(".agents/skills/release-notes/SKILL.md");
    let old = "Draft release notes for the next version from the merged pull requests since the last tag.";
    let new = "Draft release notes, changed while served, from the merged pull requests since the last tag.";
    let changed = std::fs::read_to_string(manifest).unwrap().replace(old, new);
    let server = HttpServer::start(&sandbox, &["--cwd", path(&workspace)]);
    let transcript = ts_client(
        &sandbox,
        &json!({
            "server": {"url": server.url},
            "era": "auto",
            "mode": "cache",
            "cache": {"file": path(manifest), "text": changed, "uri": "skill://release-notes/SKILL.md"},
        }),
    );
    let ttl = &transcript["resources_list_ttl_ms"];
    let notified = transcript["notified"].as_u64().unwrap_or(0) > 0;
    let checks = [
        ("errors", &transcript["errors"], json!([])),
        ("protocol version", &transcript["protocolVersion"], json!("2026-07-28")),
        ("the listen stream's honoured filter", &transcript["honored_filter"], json!({"resourcesListChanged": true})),
        // A watching server must send ttlMs > 0 for the client to cache.
        ("resources/list ttlMs > 0", &json!(ttl.as_u64().is_some_and(|ttl| ttl > 0)), json!(true)),
        ("description before", &transcript["before"]["first"], json!(old)),
        ("description from the cache", &transcript["before"]["second"], json!(old)),
        ("resources/list requests for two listResources()", &transcript["before"]["wire"], json!(1)),
        ("resources/read requests for two read()s", &transcript["read_wire_before"], json!(1)),
        ("description read before", &transcript["read_description_before"], json!(old)),
        ("notifications/resources/list_changed within 15 s of the change", &json!(notified), json!(true)),
        ("listResources() description after", &transcript["after"]["description"], json!(new)),
        ("resources/list requests after the notification", &transcript["after"]["wire"], json!(2)),
        ("SkillsClient.list() description after", &transcript["skills_description_after"], json!(new)),
        ("read() description after", &transcript["read_description_after"], json!(new)),
        ("resources/read requests in all", &transcript["requests"]["resources/read"], json!(2)),
    ];
    let problems: Vec<String> = checks
        .iter()
        .filter(|(_, got, want)| got != &want)
        .map(|(what, got, want)| format!("{what}: got {got}, expected {want} (resources/list ttlMs: {ttl})"))
        .collect();
    assert!(problems.is_empty(), "{}\ntranscript: {transcript:#}", problems.join("\n"));
}

//! What `skill-host mcp` serves over the Skills extension and the tool
//! (docs/spec.md §6.9): only skills every verifying client accepts, only
//! skills the model may invoke, folders through `resources/directory/read`,
//! cache hints, and the tool's catalog under every configuration key that
//! changes the catalog. Raw JSON-RPC on the server's stdin and stdout.

use serde_json::{Value, json};

use crate::common::{Sandbox, path, stdout};
use crate::mcp_stdio::StdioServer;

fn uris(answer: &Value, list: &str) -> Vec<String> {
    let key = if list == "skills" { "skills" } else { "resources" };
    answer["result"][key].as_array().unwrap().iter().map(|item| item["uri"].as_str().unwrap().to_owned()).collect()
}

/// A workspace with one skill of each kind this file tests.
fn workspace(sandbox: &Sandbox) -> std::path::PathBuf {
    let workspace = sandbox.path().join("w");
    let long = "x".repeat(1025);
    sandbox.write_skill(&workspace, "good", "description: A good skill.\n", "Good body.\n");
    sandbox.write_skill(&workspace, "long-description", &format!("description: {long}\n"), "Long body.\n");
    sandbox.write_skill(
        &workspace,
        "number-metadata",
        "description: Metadata with a number.\nmetadata:\n  version: 1.0\n",
        "Number body.\n",
    );
    sandbox.write_skill(
        &workspace,
        "user-only",
        "description: Only a user invokes it.\ndisable-model-invocation: true\n",
        "User body.\n",
    );
    // Refused by the provider (no description): skipped by every listing.
    sandbox.write_skill(&workspace, "no-description", "", "Body.\n");
    let good = workspace.join(".agents/skills/good");
    std::fs::create_dir_all(good.join("references/deep")).unwrap();
    std::fs::write(good.join("references/guide.md"), "Guide.\n").unwrap();
    std::fs::write(good.join("references/deep/data.txt"), "Data.\n").unwrap();
    std::fs::write(good.join("run.sh"), "echo run\n").unwrap();
    workspace
}

const LONG_RULE: &str = "`description` is 1025 characters; the Agent Skills specification allows at most 1024";
const METADATA_RULE: &str = "`metadata.version` is a number; the Agent Skills specification allows only string values";

fn left_out(name: &str, line: usize, rule: &str) -> String {
    format!(
        "skill \"{name}\" is not served over the Skills extension: it breaks a rule of the Agent Skills specification (SKILL.md:{line}: {rule})"
    )
}

#[test]
fn a_skill_that_breaks_a_client_rule_or_that_the_model_may_not_invoke_is_not_served_over_the_extension() {
    let sandbox = Sandbox::new();
    let workspace = workspace(&sandbox);
    let mut server = StdioServer::start(&sandbox, &workspace, &["--no-watch"]);

    let skills = server.request("skills/list", json!({}));
    assert_eq!(uris(&skills, "skills"), ["skill://good/SKILL.md"]);
    let resources = server.request("resources/list", json!({}));
    assert_eq!(uris(&resources, "resources"), ["skill://good/SKILL.md"]);
    for (name, line, rule) in [("long-description", 3, LONG_RULE), ("number-metadata", 5, METADATA_RULE)] {
        let uri = format!("skill://{name}/SKILL.md");
        let get = server.request("skills/get", json!({"uri": uri}));
        assert_eq!(get["error"]["code"], -32602, "{get}");
        assert_eq!(get["error"]["message"], left_out(name, line, rule));
        let read = server.request("resources/read", json!({"uri": uri}));
        assert_eq!(read["error"]["message"], left_out(name, line, rule), "{read}");
        assert_eq!(read["error"]["data"], json!({"uri": uri}));
        // The tool serves what the component accepts: it still loads.
        let call = server.request("tools/call", json!({"name": "skill", "arguments": {"name": name}}));
        assert_eq!(call["result"]["isError"], false, "{call}");
    }
    // A user-only skill: the user's prompt, never the extension's.
    let get = server.request("skills/get", json!({"uri": "skill://user-only/SKILL.md"}));
    assert_eq!(get["error"]["code"], -32602);
    assert_eq!(get["error"]["message"], "no skill \"user-only\" is served here");
    let read = server.request("resources/read", json!({"uri": "skill://user-only/SKILL.md"}));
    assert_eq!(read["error"]["message"], "no skill \"user-only\" is served here");
    let prompts = server.request("prompts/list", json!({}));
    let names: Vec<&str> =
        prompts["result"]["prompts"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"user-only"), "{prompts}");
    let prompt = server.request("prompts/get", json!({"name": "user-only"}));
    assert!(prompt["result"]["messages"][0]["content"]["text"].as_str().unwrap().contains("User body."), "{prompt}");

    // One warning line per skill left out, naming the rule, and one per
    // file the listing skipped, with `skill-host skills`' reason.
    let stderr = server.stop();
    let skills = sandbox.run(&["skills", "--cwd", path(&workspace)]);
    let skipped: Vec<String> = stdout(&skills)
        .lines()
        .filter_map(|line| line.strip_prefix("skipped: ").map(|rest| format!("warning: skipped {rest}")))
        .collect();
    assert_eq!(skipped.len(), 1, "{}", stdout(&skills));
    assert_eq!(stderr.lines().filter(|l| *l == skipped[0]).count(), 1, "{stderr}");
    for (name, line, rule) in [("long-description", 3, LONG_RULE), ("number-metadata", 5, METADATA_RULE)] {
        let warning = format!("warning: {}", left_out(name, line, rule));
        assert_eq!(stderr.lines().filter(|l| *l == warning).count(), 1, "{stderr}");
    }
    // `skill-host lint` reports the same rules, at the same lines.
    let lint = sandbox.run(&["lint", path(&workspace.join(".agents/skills"))]);
    let report = stdout(&lint);
    assert!(report.contains(&format!("long-description/SKILL.md:3: error: {LONG_RULE}")), "{report}");
    assert!(report.contains(&format!("number-metadata/SKILL.md:5: error: {METADATA_RULE}")), "{report}");
}

/// `userOnly` (§3.13) is the configuration's `disable-model-invocation`:
/// the extension serves such a skill as it serves a user-only one, not at
/// all, and the tool refuses it; the user's prompt still has it.
#[test]
fn a_skill_the_configuration_makes_user_only_is_not_served_over_the_extension() {
    let sandbox = Sandbox::new();
    let workspace = workspace(&sandbox);
    let config = sandbox.path().join("user-only.json");
    std::fs::write(&config, r#"{"userOnly":["go?d"]}"#).unwrap();
    let mut server = StdioServer::start(&sandbox, &workspace, &["--no-watch", "--config", path(&config)]);

    assert!(uris(&server.request("skills/list", json!({})), "skills").is_empty());
    assert!(uris(&server.request("resources/list", json!({})), "resources").is_empty());
    let get = server.request("skills/get", json!({"uri": "skill://good/SKILL.md"}));
    assert_eq!(get["error"]["message"], "no skill \"good\" is served here", "{get}");
    let read = server.request("resources/read", json!({"uri": "skill://good/references/guide.md"}));
    assert_eq!(read["error"]["message"], "no skill \"good\" is served here", "{read}");
    let call = server.request("tools/call", json!({"name": "skill", "arguments": {"name": "good"}}));
    assert_eq!(call["result"]["isError"], true, "{call}");
    assert_eq!(
        call["result"]["content"][0]["text"], "Error: skill \"good\" is not available for model invocation",
        "{call}"
    );
    let prompt = server.request("prompts/get", json!({"name": "good"}));
    assert!(prompt["result"]["messages"][0]["content"]["text"].as_str().unwrap().contains("Good body."), "{prompt}");
    server.stop();
}

#[test]
fn a_skill_folder_lists_its_children_through_resources_directory_read() {
    let sandbox = Sandbox::new();
    let workspace = workspace(&sandbox);
    let mut server = StdioServer::start(&sandbox, &workspace, &["--no-watch"]);
    let children = |server: &mut StdioServer, uri: &str| {
        let answer = server.request("resources/directory/read", json!({"uri": uri}));
        answer["result"]["resources"].clone()
    };
    let size = |relative: &str| std::fs::metadata(workspace.join(".agents/skills/good").join(relative)).unwrap().len();
    let root = json!([
        {"uri": "skill://good/SKILL.md", "name": "SKILL.md", "size": size("SKILL.md")},
        {"uri": "skill://good/references", "name": "references", "mimeType": "inode/directory"},
        {"uri": "skill://good/run.sh", "name": "run.sh", "size": size("run.sh")},
    ]);
    assert_eq!(children(&mut server, "skill://good"), root);
    assert_eq!(children(&mut server, "skill://good/"), root);
    assert_eq!(
        children(&mut server, "skill://good/references"),
        json!([
            {"uri": "skill://good/references/deep", "name": "deep", "mimeType": "inode/directory"},
            {"uri": "skill://good/references/guide.md", "name": "guide.md", "size": size("references/guide.md")},
        ])
    );
    for (uri, message) in [
        ("skill://good/SKILL.md", "skill://good/SKILL.md is not a directory of a served skill"),
        ("skill://good/nope", "skill://good/nope is not a directory of a served skill"),
        ("skill://nope", "no skill \"nope\" is served here"),
        ("skill://user-only", "no skill \"user-only\" is served here"),
        ("file:///etc", "file:///etc is not a skill resource: it must start with skill://"),
    ] {
        let answer = server.request("resources/directory/read", json!({"uri": uri}));
        assert_eq!(answer["error"]["code"], -32602, "{uri}: {answer}");
        assert_eq!(answer["error"]["message"], message, "{uri}");
    }
    let paged = server.request("resources/directory/read", json!({"uri": "skill://good", "cursor": "x"}));
    assert_eq!(paged["error"]["code"], -32602);
}

#[test]
fn answers_may_be_cached_by_the_user_s_client_for_a_minute_only_while_the_server_watches() {
    let sandbox = Sandbox::new();
    let workspace = workspace(&sandbox);
    for (args, ttl) in [(&["--no-watch"][..], 0), (&[][..], 60_000)] {
        let mut server = StdioServer::start(&sandbox, &workspace, args);
        for (method, params) in [
            ("tools/list", json!({})),
            ("prompts/list", json!({})),
            ("resources/list", json!({})),
            ("resources/read", json!({"uri": "skill://good/SKILL.md"})),
            ("skills/list", json!({})),
            ("skills/get", json!({"uri": "skill://good/SKILL.md"})),
            ("resources/directory/read", json!({"uri": "skill://good"})),
        ] {
            let answer = server.request(method, params);
            assert_eq!(answer["result"]["ttlMs"], ttl, "{method} {args:?}: {answer}");
            assert_eq!(answer["result"]["cacheScope"], "private", "{method} {args:?}");
        }
    }
}

#[test]
fn the_tool_description_carries_the_catalog_under_every_key_that_changes_it() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let configs = [
        json!({}),
        json!({"catalogSource": "skill-catalog"}),
        json!({"catalogSource": "skill-catalog", "userInvocation": true}),
        json!({"catalogDescriptionMaxLength": 20}),
        json!({"catalogBudget": 60}),
        json!({"catalogBudget": 60, "catalogPinned": ["release-notes"]}),
        json!({"catalogExclude": ["release-*"]}),
        json!({"catalogUpdates": "delta"}),
        json!({"skillSearch": true}),
        json!({"userInvocation": true}),
        json!({"loadedSkills": true}),
    ];
    for (at, config) in configs.iter().enumerate() {
        let file = sandbox.path().join(format!("config{at}.json"));
        std::fs::write(&file, config.to_string()).unwrap();
        // The catalog `skill-host step` publishes first for a new session.
        let session = sandbox.path().join(format!("session{at}.jsonl"));
        let output = sandbox.run(&[
            "step",
            "--json",
            "--session",
            path(&session),
            "--cwd",
            path(&workspace),
            "--config",
            path(&file),
        ]);
        let decision: Value = serde_json::from_str(&stdout(&output)).unwrap();
        let catalog = decision["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|message| matches!(message["source"]["kind"].as_str(), Some("plugin" | "skill-catalog")))
            .map(|message| message["content"][0]["text"].as_str().unwrap().to_owned())
            .unwrap_or_else(|| panic!("{config}: step published no catalog: {decision}"));
        let mut server = StdioServer::start(&sandbox, &workspace, &["--no-watch", "--config", path(&file)]);
        let tools = server.request("tools/list", json!({}));
        let description = tools["result"]["tools"][0]["description"].as_str().unwrap();
        assert!(
            description.ends_with(&format!("\n\n{catalog}")),
            "{config}: the tool description lost the catalog:\n{description}\n--- expected to end with ---\n{catalog}"
        );
    }
}

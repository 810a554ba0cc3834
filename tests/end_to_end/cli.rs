//! The `skill-host` command line (docs/spec.md §6) on the example workspace: the
//! catalog lifecycle, the tool's result and errors, and exit codes.

use serde_json::Value;

use crate::common::{Sandbox, path, repo_root, stderr, stdout};

const INITIAL_HEAD: &str = "<system-reminder>\nA skill is a reusable set of task-specific instructions. The following skills are available in this session:\n\n<available_skills>\n";
const INITIAL_TAIL: &str = "</available_skills>\n\nIf the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. Load all applicable skills, then follow their full instructions. This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded.\n</system-reminder>";
const REPLACEMENT_HEAD: &str = "<system-reminder>\nThe available skill catalog changed. This complete catalog replaces every earlier available-skills list in this session:\n\n<available_skills>\n";
const REPLACEMENT_TAIL: &str = "</available_skills>\n\nUse only names in this replacement catalog. If the user names a listed skill, or the task clearly matches its description, call the `skill` tool with the exact name before acting.\n</system-reminder>";

/// The example workspace's catalog entries: sorted by name, the user-only
/// `deploy-production` left out, `review-pr` escaped and cut at 500 characters.
const EXAMPLE_ENTRIES: &str = "- `commit-message`: Write a commit message for the staged changes.\n- `release-notes`: Draft release notes for the next version from the merged pull requests since the last tag.\n- `review-pr`: Review a pull request for correctness, tests &amp; style. Checks that every changed &lt;public&gt; item has docs, that error paths are tested, and that the change does what its description says. It reads the diff file by file, runs the tests locally when the change touches behaviour, compares the change against the linked issue, and looks for missing edge cases: empty inputs, very large inputs, invalid UTF-8, concurrent access, and failures of every external call. It writes its findings as review comme...\n- `triage-bug`: Triage a bug report. Reproduce it, find the smallest failing case, and label it with severity and the owning component.\n";

#[test]
fn step_compact_and_load_on_the_example_workspace() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let session = sandbox.path().join("session.jsonl");
    let step = || sandbox.run(&["step", "--session", path(&session), "--cwd", path(&workspace)]);

    // The initial catalog, exactly.
    let first = step();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_eq!(stdout(&first), format!("{INITIAL_HEAD}{EXAMPLE_ENTRIES}{INITIAL_TAIL}\n"));

    // Unchanged: nothing, and nothing appended.
    let before = std::fs::read(&session).unwrap();
    let second = step();
    assert_eq!((second.status.code(), stdout(&second)), (Some(0), String::new()));
    assert_eq!(std::fs::read(&session).unwrap(), before);

    // A new skill: the full replacement.
    sandbox.write_skill(&workspace, "add-tests", "description: Add tests for the change.\n", "Write tests.");
    let third = step();
    let entries_with_new = format!("- `add-tests`: Add tests for the change.\n{EXAMPLE_ENTRIES}");
    assert_eq!(stdout(&third), format!("{REPLACEMENT_HEAD}{entries_with_new}{REPLACEMENT_TAIL}\n"));
    assert_eq!(stdout(&step()), "");

    // Compaction hides it; the next step re-establishes it as a replacement.
    let compact = sandbox.run(&["compact", "--session", path(&session)]);
    assert_eq!((compact.status.code(), stdout(&compact)), (Some(0), String::new()));
    assert_eq!(stdout(&step()), format!("{REPLACEMENT_HEAD}{entries_with_new}{REPLACEMENT_TAIL}\n"));
    assert_eq!(stdout(&step()), "");

    // Proposed messages are entered before the catalog and recorded.
    std::fs::remove_dir_all(workspace.join(".agents/skills/add-tests")).unwrap();
    let with_message = sandbox.run(&["step", "--session", path(&session), "--message", "Ship it.", "--json"]);
    let decision: Value = serde_json::from_str(&stdout(&with_message)).unwrap();
    assert_eq!(decision["kind"], "enter");
    assert_eq!(decision["messages"][0]["content"][0]["text"], "Ship it.");
    assert_eq!(decision["messages"][0]["source"], serde_json::json!({"kind": "user"}));
    assert_eq!(
        decision["messages"][1]["content"][0]["text"],
        format!("{REPLACEMENT_HEAD}{EXAMPLE_ENTRIES}{REPLACEMENT_TAIL}")
    );
    assert_eq!(decision["messages"][1]["source"], serde_json::json!({"kind": "plugin", "plugin": "dsh-tool-skill"}));

    // Every line of the log is JSON, with increasing seqs.
    let log = std::fs::read_to_string(&session).unwrap();
    let seqs: Vec<u64> =
        log.lines().skip(1).map(|line| serde_json::from_str::<Value>(line).unwrap()["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|pair| pair[0] < pair[1]), "{seqs:?}");
}

#[test]
fn load_prints_the_exact_result_and_records_it() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let session = sandbox.path().join("session.jsonl");
    let output = sandbox.run(&["load", "release-notes", "--cwd", path(&workspace), "--session", path(&session)]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let base = workspace.join(".agents/skills/release-notes");
    assert_eq!(
        stdout(&output),
        format!(
            "<skill_content name=\"release-notes\">\n<skill_resources>\nBase directory for this skill: {}\nResolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed.\n</skill_resources>\n\n<skill_instructions>\n# Draft release notes\n\n1. List the pull requests merged since the last tag: `git log --merges <tag>..HEAD`.\n2. Group them as described in `references/style.md`: features, fixes, breaking changes.\n3. Write one line per change, in the imperative, linking the pull request.\n4. Put breaking changes first, each with the migration a user must do.\n</skill_instructions>\n</skill_content>\n",
            base.display()
        )
    );
    let log = std::fs::read_to_string(&session).unwrap();
    let last: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "tool/result");
    assert_eq!(last["data"]["message"]["content"][0]["isError"], false);

    // A flat file's resource base is its root; the model-only skill loads.
    let flat = sandbox.run(&["load", "commit-message", "--cwd", path(&workspace), "--json"]);
    let value: Value = serde_json::from_str(&stdout(&flat)).unwrap();
    assert_eq!(
        value["ok"]["resourceBase"],
        serde_json::json!({"kind": "directory", "path": path(&workspace.join(".agents/skills"))})
    );
    assert_eq!(value["ok"]["provider"], "local");
    assert_eq!(sandbox.run(&["load", "review-pr", "--cwd", path(&workspace)]).status.code(), Some(0));
}

#[test]
fn load_errors_print_exactly_and_exit_1() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let session = sandbox.path().join("session.jsonl");
    for (name, expected) in [
        ("Deploy_Production", "Error: invalid skill name \"Deploy_Production\"\n"),
        ("no-such-skill", "Error: skill \"no-such-skill\" is unknown or no longer available\n"),
        ("deploy-production", "Error: skill \"deploy-production\" is not available for model invocation\n"),
    ] {
        let output = sandbox.run(&["load", name, "--cwd", path(&workspace), "--session", path(&session)]);
        assert_eq!((output.status.code(), stdout(&output)), (Some(1), expected.to_owned()), "{name}");
    }
    let log = std::fs::read_to_string(&session).unwrap();
    let last: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(last["data"]["message"]["content"][0]["isError"], true);
}

#[test]
fn a_harness_session_is_replayed_without_republishing_its_visible_catalog() {
    let sandbox = Sandbox::new();
    let project = sandbox.path().join("project");
    sandbox.write_skill(&project, "first-skill", "description: The first skill.\n", "First body.");
    sandbox.write_skill(&project, "second-skill", "description: The second skill.\n", "Second body.");
    let session = sandbox.path().join("seeded.jsonl");
    std::fs::copy(repo_root().join("tests/fixtures/seeded-session.jsonl"), &session).unwrap();
    let before = std::fs::read(&session).unwrap();
    let output = sandbox.run(&["step", "--session", path(&session), "--cwd", path(&project)]);
    assert_eq!((output.status.code(), stdout(&output)), (Some(0), String::new()), "{}", stderr(&output));
    assert_eq!(std::fs::read(&session).unwrap(), before, "nothing appended");

    // A changed description is a replacement, not an initial catalog.
    sandbox.write_skill(&project, "second-skill", "description: The second skill, changed.\n", "Second body.");
    let output = sandbox.run(&["step", "--session", path(&session), "--cwd", path(&project)]);
    assert_eq!(
        stdout(&output),
        format!(
            "{REPLACEMENT_HEAD}- `first-skill`: The first skill.\n- `second-skill`: The second skill, changed.\n{REPLACEMENT_TAIL}\n"
        )
    );
    // The earlier lines are untouched.
    assert!(std::fs::read(&session).unwrap().starts_with(&before));
}

#[test]
fn hidden_and_shadowed_tool_views_publish_no_catalog() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let session = sandbox.path().join("session.jsonl");
    for view in ["hidden", "shadowed"] {
        let output =
            sandbox.run(&["step", "--session", path(&session), "--cwd", path(&workspace), "--tool-view", view]);
        assert_eq!((output.status.code(), stdout(&output)), (Some(0), String::new()));
    }
}

#[test]
fn skills_lists_winners_with_their_policy_as_json() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    // A duplicate in a lower-ranked root is shadowed by the project's.
    let user_skill = sandbox.path().join("home/agents/skills/triage-bug");
    std::fs::create_dir_all(&user_skill).unwrap();
    std::fs::write(user_skill.join("SKILL.md"), "---\nname: triage-bug\ndescription: User copy.\n---\nBody\n").unwrap();
    std::fs::write(workspace.join(".agents/skills/broken.md"), "no frontmatter here\n").unwrap();
    let output = sandbox.run(&["skills", "--cwd", path(&workspace), "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let listing: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let names: Vec<&str> =
        listing["skills"].as_array().unwrap().iter().map(|skill| skill["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["commit-message", "deploy-production", "release-notes", "review-pr", "triage-bug"]);
    let deploy = &listing["skills"][1];
    assert_eq!(deploy["source"], "project-dsh");
    assert_eq!(deploy["rank"], 100);
    assert_eq!(deploy["invocation"], serde_json::json!({"modelInvocable": false, "userInvocable": true}));
    assert_eq!(listing["shadowed"][0]["name"], "triage-bug");
    assert_eq!(listing["shadowed"][0]["source"], "user-agents");
    assert_eq!(listing["shadowed"][0]["by"]["source"], "project-dsh");
    assert_eq!(listing["skipped"][0]["path"], path(&workspace.join(".agents/skills/broken.md")));
    assert_eq!(listing["complete"], true);

    let table = sandbox.run(&["skills", "--cwd", path(&workspace)]);
    assert!(stdout(&table).starts_with("NAME "), "{}", stdout(&table));
    assert!(stdout(&table).contains("deploy-production  project-dsh"), "{}", stdout(&table));
}

#[test]
fn usage_errors_exit_2() {
    let sandbox = Sandbox::new();
    assert_eq!(sandbox.run(&["step"]).status.code(), Some(2));
    assert_eq!(sandbox.run(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(sandbox.run(&["step", "--session", "s", "--tool-view", "sideways"]).status.code(), Some(2));
}

#[test]
fn host_failures_exit_3_with_one_line_and_leave_the_session_untouched() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let session = sandbox.path().join("session.jsonl");
    assert_eq!(sandbox.run(&["step", "--session", path(&session), "--cwd", path(&workspace)]).status.code(), Some(0));
    let before = std::fs::read(&session).unwrap();

    let not_a_component = sandbox.path().join("not-a-component.wasm");
    std::fs::write(&not_a_component, b"\0asm garbage").unwrap();
    let output =
        sandbox.run(&["--plugin", path(&not_a_component), "step", "--session", path(&session), "--message", "hi"]);
    assert_eq!(output.status.code(), Some(3));
    let message = stderr(&output);
    assert!(message.starts_with("error: cannot load the plugin component: "), "{message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert_eq!(std::fs::read(&session).unwrap(), before);

    // Global options are accepted after the command too.
    let config = sandbox.path().join("config.json");
    std::fs::write(&config, r#"{"catalogDescriptionMaxLength":"short"}"#).unwrap();
    let output = sandbox.run(&["step", "--session", path(&session), "--config", path(&config)]);
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        stderr(&output),
        "error: tool-skill: catalogDescriptionMaxLength must be an integer greater than or equal to 3\n"
    );
    assert_eq!(std::fs::read(&session).unwrap(), before);

    let missing = sandbox.run(&["compact", "--session", path(&sandbox.path().join("missing.jsonl"))]);
    assert_eq!(missing.status.code(), Some(3));
    assert!(stderr(&missing).starts_with("error: "), "{}", stderr(&missing));
}

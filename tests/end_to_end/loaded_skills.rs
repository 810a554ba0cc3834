//! Loaded skills stay true (`loadedSkills`, docs/spec.md §3.12) through the
//! command line, as the issue walks through it: load, edit, step; step
//! again; load and edit again; delete; compact. With the option off, the
//! same session gets exactly today's output.

use std::path::Path;

use crate::common::{Sandbox, path, stderr, stdout};

const CHANGED: &str = "<system-reminder>\nThe instructions of skill `commit-message` changed after you loaded them. Call the `skill` tool with the name `commit-message` again before following them further.\n</system-reminder>\n";
const GONE: &str = "<system-reminder>\nSkill `commit-message` is no longer available. The instructions you loaded for it earlier no longer apply; do not follow them.\n</system-reminder>\n";

fn edit(skill: &Path, body: &str) {
    let text = std::fs::read_to_string(skill).unwrap();
    let frontmatter_end = text.find("\n---\n").unwrap() + 5;
    std::fs::write(skill, format!("{}{body}\n", &text[..frontmatter_end])).unwrap();
}

#[test]
fn a_loaded_skill_that_changes_is_said_once_per_change_and_compaction_recalls_it() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let config = sandbox.path().join("config.json");
    std::fs::write(&config, r#"{"loadedSkills": true}"#).unwrap();
    let session = sandbox.path().join("s.jsonl");
    let skill = workspace.join(".agents/skills/commit-message.md");
    let with = |args: &[&str]| {
        let mut all = vec!["--config", path(&config)];
        all.extend_from_slice(args);
        let output = sandbox.run(&all);
        assert!(output.status.code().is_some_and(|code| code <= 1), "{args:?}: {}", stderr(&output));
        stdout(&output)
    };
    let step = || with(&["step", "--session", path(&session), "--cwd", path(&workspace)]);
    let load = || with(&["load", "commit-message", "--session", path(&session)]);

    assert!(step().starts_with("<system-reminder>\nA skill is a reusable set"));
    load();
    assert_eq!(step(), "", "what the model loaded is current");
    edit(&skill, "New steps.");
    assert_eq!(step(), CHANGED);
    assert_eq!(step(), "", "said once");
    load();
    edit(&skill, "Newer steps.");
    assert_eq!(step(), CHANGED, "a further change after a new load is said again");
    std::fs::remove_file(&skill).unwrap();
    let removed = step();
    assert!(removed.starts_with("<system-reminder>\nThe available skill catalog changed."), "{removed}");
    assert!(removed.ends_with(&format!("\n\n{GONE}")), "{removed}");
    assert_eq!(step(), "");

    // Compaction: the catalog again, and the reminder of what is still loadable.
    load_then_compact(&sandbox, &config, &workspace);
}

fn load_then_compact(sandbox: &Sandbox, config: &Path, workspace: &Path) {
    let session = sandbox.path().join("compacted.jsonl");
    let run = |args: &[&str]| {
        let mut all = vec!["--config", path(config)];
        all.extend_from_slice(args);
        stdout(&sandbox.run(&all))
    };
    run(&["step", "--session", path(&session), "--cwd", path(workspace)]);
    run(&["load", "release-notes", "--session", path(&session)]);
    assert_eq!(sandbox.run(&["compact", "--session", path(&session)]).status.code(), Some(0));
    let after = run(&["step", "--session", path(&session)]);
    assert!(after.starts_with("<system-reminder>\nThe available skill catalog changed."), "{after}");
    assert!(
        after.ends_with("\n\n<system-reminder>\nYou loaded these skills earlier in this session, but their instructions are no longer in view: `release-notes`. Call the `skill` tool again for each one before relying on it.\n</system-reminder>\n"),
        "{after}"
    );
    assert_eq!(run(&["step", "--session", path(&session)]), "");
}

#[test]
fn with_the_option_off_the_same_session_gets_todays_output() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let session = sandbox.path().join("s.jsonl");
    let skill = workspace.join(".agents/skills/commit-message.md");
    let step = || stdout(&sandbox.run(&["step", "--session", path(&session), "--cwd", path(&workspace)]));
    step();
    let loaded = sandbox.run(&["load", "commit-message", "--session", path(&session)]);
    assert_eq!(loaded.status.code(), Some(0));
    // The recorded result is the reference's: no load record in its source.
    let log = std::fs::read_to_string(&session).unwrap();
    let result: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    let source = result["data"]["message"]["source"].as_object().unwrap();
    assert_eq!(source.keys().collect::<Vec<_>>(), ["callId", "kind"]);
    edit(&skill, "New steps.");
    assert_eq!(step(), "");
}

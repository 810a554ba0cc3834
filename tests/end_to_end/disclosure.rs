//! The seed's two opt-in behaviours through the command line: user `/name`
//! invocation (`userInvocation`) and Pi's way of disclosing skills
//! (`system-prompt`, `expand`).

use crate::common::{Sandbox, path, stderr, stdout};

#[test]
fn system_prompt_lists_model_invocable_skills_with_locations() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let output = sandbox.run(&["system-prompt", "--cwd", path(&workspace)]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let skills = workspace.join(".agents/skills");
    let expected = format!(
        "\n\nThe following skills provide specialized instructions for specific tasks.\nUse the read tool to load a skill's file when the task matches its description.\nWhen a skill file references a relative path, resolve it against the skill directory (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.\n\n<available_skills>\n  <skill>\n    <name>commit-message</name>\n    <description>Write a commit message for the staged changes.</description>\n    <location>{agents}/commit-message.md</location>\n  </skill>\n  <skill>\n    <name>release-notes</name>\n    <description>Draft release notes for the next version from the merged pull requests since the last tag.</description>\n    <location>{agents}/release-notes/SKILL.md</location>\n  </skill>\n  <skill>\n    <name>review-pr</name>\n    <description>Review a pull request for correctness, tests &amp; style. Checks that every changed &lt;public&gt; item has docs, that error paths are tested, and that the change does what its description says. It reads the diff file by file, runs the tests locally when the change touches behaviour, compares the change against the linked issue, and looks for missing edge cases: empty inputs, very large inputs, invalid UTF-8, concurrent access, and failures of every external call. It writes its findings as review comments anchored to lines, separating blocking problems from suggestions, and ends with a summary that says whether the pull request can merge as it is, after small fixes, or needs another round.</description>\n    <location>{agents}/review-pr/SKILL.md</location>\n  </skill>\n  <skill>\n    <name>triage-bug</name>\n    <description>Triage a bug report. Reproduce it, find the smallest failing case, and label it with severity and the owning component.</description>\n    <location>{dsh}/triage-bug/SKILL.md</location>\n  </skill>\n</available_skills>",
        agents = skills.display(),
        dsh = workspace.join(".dsh/skills").display(),
    );
    assert_eq!(stdout(&output), expected);
}

#[test]
fn system_prompt_is_empty_without_visible_skills() {
    let sandbox = Sandbox::new();
    let empty = sandbox.path().join("empty-project");
    std::fs::create_dir_all(&empty).unwrap();
    let output = sandbox.run(&["system-prompt", "--cwd", path(&empty)]);
    assert_eq!((output.status.code(), stdout(&output)), (Some(0), String::new()));
}

#[test]
fn expand_wraps_the_body_and_appends_the_arguments() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let file = workspace.join(".agents/skills/commit-message.md");
    let output = sandbox.run(&["expand", "--cwd", path(&workspace), "/skill:commit-message  amend the last one "]);
    assert_eq!(
        stdout(&output),
        format!(
            "<skill name=\"commit-message\" location=\"{}\">\nReferences are relative to {}.\n\nWrite the subject in the imperative, at most 72 characters, saying what changed.\nLeave one blank line, then say why the change was needed and anything a\nreviewer cannot see from the diff.\n</skill>\n\namend the last one",
            file.display(),
            workspace.join(".agents/skills").display()
        )
    );
    let bundle = workspace.join(".dsh/skills/triage-bug");
    let output = sandbox.run(&["expand", "--cwd", path(&workspace), "/skill:triage-bug"]);
    assert!(
        stdout(&output).starts_with(&format!(
            "<skill name=\"triage-bug\" location=\"{}/SKILL.md\">\nReferences are relative to {}.\n\n# Triage a bug report\n",
            bundle.display(),
            bundle.display()
        )),
        "{}",
        stdout(&output)
    );
    assert!(stdout(&output).ends_with("severity.\n</skill>"), "{}", stdout(&output));
}

#[test]
fn expand_returns_other_text_unchanged() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    for text in ["hello /skill:commit-message", "/skill:no-such-skill args", "/skill:review-pr", "/commit-message", ""]
    {
        let output = sandbox.run(&["expand", "--cwd", path(&workspace), text]);
        assert_eq!((output.status.code(), stdout(&output)), (Some(0), text.to_owned()), "{text}");
    }
}

#[test]
fn a_users_slash_name_loads_the_skill_when_user_invocation_is_on() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let config = sandbox.path().join("config.json");
    std::fs::write(&config, r#"{"userInvocation": true}"#).unwrap();
    let session = sandbox.path().join("session.jsonl");
    let output = sandbox.run(&[
        "step",
        "--session",
        path(&session),
        "--cwd",
        path(&workspace),
        "--config",
        path(&config),
        "--message",
        "ship it with /deploy-production and /review-pr, not /usr/bin",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let blocks: Vec<&str> = text.split("\n\n<skill_content").collect();
    // The user's message, the catalog with the extra line, then one injection:
    // deploy-production is user-only (reachable only this way); review-pr is model-only.
    assert_eq!(blocks.len(), 2, "{text}");
    assert!(
        blocks[0].starts_with("ship it with /deploy-production and /review-pr, not /usr/bin\n\n<system-reminder>\n")
    );
    assert!(
        blocks[0].ends_with("Follow it, and do not call the `skill` tool again for that skill.\n</system-reminder>")
    );
    assert!(blocks[1].starts_with(" name=\"deploy-production\">\n<skill_resources>\nBase directory for this skill: "));
    assert!(
        blocks[1]
            .ends_with("then watch the error rate for fifteen minutes.\n</skill_instructions>\n</skill_content>\n")
    );
    let log = std::fs::read_to_string(&session).unwrap();
    let last: serde_json::Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(
        last["data"]["source"],
        serde_json::json!({"kind": "skill-invocation", "name": "deploy-production", "form": "instructions"})
    );

    // Off by default: the same message is plain prose.
    let plain = sandbox.path().join("plain.jsonl");
    let output =
        sandbox.run(&["step", "--session", path(&plain), "--cwd", path(&workspace), "--message", "/deploy-production"]);
    assert!(!stdout(&output).contains("<skill_content"), "{}", stdout(&output));
    assert!(!stdout(&output).contains("A user may also invoke"), "{}", stdout(&output));
}

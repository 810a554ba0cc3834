//! Every scenario under `tests/scenarios/` replayed through `skill-host
//! replay`, its output compared with `NAME.expected.json`.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::{Sandbox, repo_root, scenarios_in, stderr, stdout};

fn scenarios() -> Vec<PathBuf> {
    scenarios_in(&repo_root().join("tests/scenarios"))
}

#[test]
fn every_scenario_has_an_expected_output_and_there_are_at_least_twelve() {
    let scenarios = scenarios();
    assert!(scenarios.len() >= 12, "only {} scenarios", scenarios.len());
    for scenario in &scenarios {
        assert!(scenario.with_extension("expected.json").exists(), "{} has no expected output", scenario.display());
    }
}

/// `replay` prints its document byte for byte as `NAME.expected.json` holds
/// it (docs/spec.md §7): the tool value's keys in their documented order
/// (`name`, `provider`, `resourceBase`, `content`, §3.3), every other
/// object's sorted, one-space indentation and a final line break. Parsed
/// JSON would not see a change of order, so the bytes are compared.
#[test]
fn every_scenario_replays_to_its_expected_output_byte_for_byte() {
    let sandbox = Sandbox::new();
    let mut failures = Vec::new();
    for scenario in scenarios() {
        let output = sandbox.run(&["replay", scenario.to_str().unwrap()]);
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        if !output.status.success() {
            failures.push(format!("{name}: exit {:?}: {}", output.status.code(), stderr(&output)));
            continue;
        }
        let actual = stdout(&output);
        let expected = std::fs::read_to_string(scenario.with_extension("expected.json")).unwrap();
        if actual != expected {
            let line = actual.lines().zip(expected.lines()).position(|(a, e)| a != e);
            let same: Option<Value> = serde_json::from_str(&actual).ok();
            let order_only = same.is_some() && same == serde_json::from_str(&expected).ok();
            failures.push(format!(
                "{name}: differs from line {} (same JSON, other bytes: {order_only}):\n--- expected\n{expected}\n--- actual\n{actual}",
                line.map_or_else(|| "(the end)".to_owned(), |index| (index + 1).to_string()),
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `load --json` prints `{"ok":value,"text":…}` on one line with the value's
/// keys in the order the tool documents them, as the expected files hold it.
#[test]
fn load_json_prints_the_tool_value_in_its_documented_order() {
    let sandbox = Sandbox::new();
    let project = sandbox.path().join("project");
    sandbox.write_skill(&project, "deploy-preview", "description: Deploy a preview.\n", "Run the preview pipeline.");
    let output = sandbox.run(&["load", "deploy-preview", "--cwd", project.to_str().unwrap(), "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let base = project.join(".agents/skills/deploy-preview");
    let base = serde_json::to_string(base.to_str().unwrap()).unwrap();
    let text = serde_json::to_string(&format!(
        "<skill_content name=\"deploy-preview\">\n<skill_resources>\nBase directory for this skill: {}\nResolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed.\n</skill_resources>\n\n<skill_instructions>\nRun the preview pipeline.\n</skill_instructions>\n</skill_content>",
        project.join(".agents/skills/deploy-preview").display()
    ))
    .unwrap();
    assert_eq!(
        stdout(&output),
        format!(
            "{{\"ok\":{{\"name\":\"deploy-preview\",\"provider\":\"local\",\"resourceBase\":{{\"kind\":\"directory\",\"path\":{base}}},\"content\":\"Run the preview pipeline.\"}},\"text\":{text}}}\n"
        )
    );
    // The committed expected output holds the same order.
    let expected = std::fs::read_to_string(repo_root().join("tests/scenarios/tool-calls.expected.json")).unwrap();
    let keys: Vec<&str> = ["\"name\"", "\"provider\"", "\"resourceBase\"", "\"kind\"", "\"url\"", "\"content\""]
        .into_iter()
        .filter(|key| expected.contains(key))
        .collect();
    let positions: Vec<usize> = keys.iter().map(|key| expected.find(key).unwrap()).collect();
    assert!(positions.windows(2).all(|pair| pair[0] < pair[1]), "{keys:?} at {positions:?}");
}

#[test]
fn a_configuration_the_plugin_refuses_ends_the_replay_with_exit_3() {
    let sandbox = Sandbox::new();
    let scenario = sandbox.path().join("bad-config.json");
    std::fs::write(&scenario, r#"{"config":{"catalogDescriptionMaxLength":2},"steps":[{"op":"pre-step"}]}"#).unwrap();
    let output = sandbox.run(&["replay", scenario.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        stderr(&output),
        "error: tool-skill: catalogDescriptionMaxLength must be an integer greater than or equal to 3\n"
    );
    assert_eq!(stdout(&output), "");
}

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

#[test]
fn every_scenario_replays_to_its_expected_output() {
    let sandbox = Sandbox::new();
    let mut failures = Vec::new();
    for scenario in scenarios() {
        let output = sandbox.run(&["replay", scenario.to_str().unwrap()]);
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        if !output.status.success() {
            failures.push(format!("{name}: exit {:?}: {}", output.status.code(), stderr(&output)));
            continue;
        }
        let actual: Value = serde_json::from_str(&stdout(&output)).expect("replay prints JSON");
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(scenario.with_extension("expected.json")).unwrap()).unwrap();
        if actual != expected {
            failures.push(format!(
                "{name}:\n--- expected\n{}\n--- actual\n{}",
                serde_json::to_string_pretty(&expected).unwrap(),
                serde_json::to_string_pretty(&actual).unwrap()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
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

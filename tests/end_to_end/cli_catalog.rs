//! `skill-host catalog`: what the catalog costs under a configuration, and
//! why each skill is listed whole, shortened, left out by the budget,
//! excluded, or kept from the model by its policy (the other reasons, a
//! failed provider, pins: `cli_catalog_why.rs`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Sandbox, path, stderr, stdout};

/// A budget that lists `alpha` whole and `beta` cut, and has no room left
/// for `zulu`; `draft-notes` is excluded by the second pattern, not the first.
const CONFIG: &str = r#"{"catalogBudget":42,"catalogExclude":["old-?","draft-*"]}"#;

/// A project with five skills, one of each status under [`CONFIG`].
fn project(sandbox: &Sandbox) -> PathBuf {
    let project = sandbox.path().join("project");
    // Model-only: listed like any other.
    sandbox.write_skill(&project, "alpha", "description: Lint.\nuser-invocable: false\n", "Lint.");
    // Whitespace runs collapse (30 characters whole); `&` is shown escaped.
    sandbox.write_skill(&project, "beta", "description: \"Build &  publish   the docs site.\"\n", "Build.");
    sandbox.write_skill(&project, "draft-notes", "description: Keep draft notes.\n", "Draft.");
    sandbox.write_skill(
        &project,
        "manual-deploy",
        "description: Deploy by hand.\ndisable-model-invocation: true\n",
        "Deploy.",
    );
    sandbox.write_skill(&project, "zulu", "description: Zap the caches.\n", "Zap.");
    project
}

/// `catalog` in `project` with the configuration `config`.
fn catalog(sandbox: &Sandbox, project: &Path, config: &str, json: bool) -> std::process::Output {
    let file = sandbox.path().join("config.json");
    std::fs::write(&file, config).unwrap();
    let mut args = vec!["catalog", "--cwd", path(project), "--config", path(&file)];
    if json {
        args.push("--json");
    }
    sandbox.run(&args)
}

#[test]
fn the_report_says_what_the_catalog_costs_and_why_each_skill_is_missing() {
    let sandbox = Sandbox::new();
    let project = project(&sandbox);

    let output = catalog(&sandbox, &project, CONFIG, false);
    assert_eq!((output.status.code(), stderr(&output)), (Some(0), String::new()));
    // Entry lines "- `alpha`: Lint.\n" (17) and "- `beta`: Build &amp;...\n" (25);
    // `beta` shows "Build &..." (10 characters) of its 30.
    assert_eq!(
        stdout(&output),
        "entry lines: 42 characters (budget 42)\n\
         message: 669 characters\n\
         Catalog coverage: 2 of 3 skills listed, 1 with a shortened description; 1 left out, still loaded by exact name.\n\
         \n\
         NAME           STATUS                      SHOWN\n\
         alpha          listed                      5/5\n\
         beta           shortened by catalogBudget  10/30\n\
         draft-notes    excluded by \"draft-*\"       -\n\
         manual-deploy  not model-invocable         -\n\
         zulu           left out by catalogBudget   -\n"
    );

    let output = catalog(&sandbox, &project, CONFIG, true);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        report,
        json!({
            "entryCharacters": 42,
            "budget": 42,
            "messageCharacters": 669,
            "coverage": "Catalog coverage: 2 of 3 skills listed, 1 with a shortened description; 1 left out, still loaded by exact name.",
            "skills": [
                {"name": "alpha", "status": "listed", "by": null, "pinned": false, "shown": 5, "full": 5, "pattern": null},
                {"name": "beta", "status": "shortened", "by": "catalogBudget", "pinned": false, "shown": 10, "full": 30, "pattern": null},
                {"name": "draft-notes", "status": "excluded", "by": null, "pinned": false, "shown": null, "full": null, "pattern": "draft-*"},
                {"name": "manual-deploy", "status": "not-model-invocable", "by": null, "pinned": false, "shown": null, "full": null, "pattern": null},
                {"name": "zulu", "status": "left-out", "by": "catalogBudget", "pinned": false, "shown": null, "full": null, "pattern": null},
            ],
            "failedProviders": [],
            "unmatchedPins": [],
            "complete": true,
        })
    );

    // The counts are the published message's: `step` shows the same catalog.
    let session = sandbox.path().join("session.jsonl");
    let step = sandbox.run(&[
        "step",
        "--session",
        path(&session),
        "--cwd",
        path(&project),
        "--config",
        path(&sandbox.path().join("config.json")),
    ]);
    let text = stdout(&step);
    assert_eq!(text.strip_suffix('\n').unwrap().chars().count(), 669);
    assert!(
        text.contains("<available_skills>\n- `alpha`: Lint.\n- `beta`: Build &amp;...\nCatalog coverage: "),
        "{text}"
    );
}

#[test]
fn without_options_every_model_invocable_skill_is_listed_and_no_budget_is_named() {
    let sandbox = Sandbox::new();
    let project = project(&sandbox);
    let output = catalog(&sandbox, &project, "{}", false);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    let (counts, table) = text.split_once("\n\n").unwrap();
    // Four entry lines: alpha 17, beta 45 ("&amp;"), draft-notes 35, zulu 26.
    assert!(counts.starts_with("entry lines: 123 characters\nmessage: "), "{counts}");
    assert!(!counts.contains("Catalog coverage"), "{counts}");
    assert_eq!(
        table,
        "NAME           STATUS               SHOWN\n\
         alpha          listed               5/5\n\
         beta           listed               30/30\n\
         draft-notes    listed               17/17\n\
         manual-deploy  not model-invocable  -\n\
         zulu           listed               15/15\n"
    );
}

#[test]
fn with_no_catalog_published_the_counts_are_zero_and_the_table_is_still_shown() {
    let sandbox = Sandbox::new();
    let project = sandbox.path().join("project");
    sandbox.write_skill(&project, "by-hand", "description: Only by hand.\ndisable-model-invocation: true\n", "Hand.");
    let output = catalog(&sandbox, &project, r#"{"catalogBudget":100}"#, false);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "entry lines: 0 characters (budget 100)\nmessage: 0 characters\n\nNAME     STATUS               SHOWN\nby-hand  not model-invocable  -\n"
    );
}

#[test]
fn a_refused_configuration_is_the_plugins_error() {
    let sandbox = Sandbox::new();
    let project = project(&sandbox);
    let output = catalog(&sandbox, &project, r#"{"catalogExclude":["Bad_Name"]}"#, false);
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(stdout(&output), "");
    assert_eq!(
        stderr(&output),
        "error: tool-skill: catalogExclude must be an array of at most 1024 skill names or patterns (a-z, 0-9, \"-\", \"*\" and \"?\")\n"
    );
}

/// `--check`, for a skill author's CI: exit 1 naming each model-invocable
/// skill not listed whole (excluded and user-only ones do not count), 0 when
/// all are whole; the report on stdout is unchanged.
#[test]
fn check_fails_when_a_skill_would_be_shortened_or_left_out() {
    let sandbox = Sandbox::new();
    let project = project(&sandbox);
    let check = |config: &str, json: bool| {
        let file = sandbox.path().join("check.json");
        std::fs::write(&file, config).unwrap();
        let mut args = vec!["catalog", "--cwd", path(&project), "--config", path(&file), "--check"];
        if json {
            args.push("--json");
        }
        sandbox.run(&args)
    };

    let output = check(CONFIG, false);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), stdout(&catalog(&sandbox, &project, CONFIG, false)));
    assert_eq!(
        stderr(&output),
        "check: \"beta\" shortened by catalogBudget (10 of 30 characters)\n\
         check: \"zulu\" left out by catalogBudget\n\
         check: 2 of 3 model-invocable skills would not be shown whole\n"
    );
    assert_eq!(check(CONFIG, true).status.code(), Some(1));

    // With room for every entry: `draft-notes` excluded and `manual-deploy`
    // user-only are the configuration's and the skill's choice, not a failure.
    let roomy = r#"{"catalogBudget":1000,"catalogExclude":["draft-*"]}"#;
    let output = check(roomy, false);
    assert_eq!((output.status.code(), stderr(&output)), (Some(0), String::new()));

    // The cap on every description shortens too.
    let output = check(r#"{"catalogDescriptionMaxLength":20,"catalogExclude":["draft-*"]}"#, false);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        "check: \"beta\" shortened by catalogDescriptionMaxLength (20 of 30 characters)\n\
         check: 1 of 3 model-invocable skills would not be shown whole\n"
    );
}

//! `skill-host catalog` says why: a catalog not published because a
//! provider failed names that provider; a pinned skill is marked, listed cut
//! rather than left out while others are listed, and each cut names the key
//! that made it; a `catalogPinned` name that matches no skill is a warning;
//! summarised, name-only and user-only skills have statuses of their own.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{Sandbox, path, stderr, stdout};

/// `catalog --cwd project` with `config` and the extra global options `extra`.
fn catalog(sandbox: &Sandbox, project: &Path, config: &str, extra: &[&str], json: bool) -> std::process::Output {
    let file = sandbox.path().join("config.json");
    std::fs::write(&file, config).unwrap();
    let mut args = extra.to_vec();
    args.extend(["catalog", "--cwd", path(project), "--config", path(&file)]);
    if json {
        args.push("--json");
    }
    sandbox.run(&args)
}

fn project(sandbox: &Sandbox) -> PathBuf {
    let project = sandbox.path().join("project");
    sandbox.write_skill(&project, "alpha", "description: Lint.\n", "Lint.");
    sandbox.write_skill(
        &project,
        "pinned-one",
        "description: Keep this skill first in every catalog, whatever else is listed beside it, as it matters most.\n",
        "Pinned.",
    );
    sandbox.write_skill(&project, "zulu", "description: Zap the caches.\n", "Zap.");
    project
}

/// An index URL on a loopback port nothing listens on: the listing fails at once.
fn closed_index() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/index.json")
}

#[test]
fn with_a_failed_provider_and_no_budget_the_provider_is_named_not_the_budget() {
    let sandbox = Sandbox::new();
    let project = project(&sandbox);
    let index = closed_index();
    let output = catalog(&sandbox, &project, "{}", &["--remote", &index], false);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stderr(&output).starts_with("warning: skill provider \"remote\" skipped: "), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        "entry lines: 0 characters\n\
         message: 0 characters\n\
         \n\
         NAME        STATUS                                SHOWN\n\
         alpha       not listed: provider \"remote\" failed  -\n\
         pinned-one  not listed: provider \"remote\" failed  -\n\
         zulu        not listed: provider \"remote\" failed  -\n\
         incomplete: some skill state could not be read (see warnings)\n"
    );
    let output = catalog(&sandbox, &project, "{}", &["--remote", &index], true);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["failedProviders"], serde_json::json!(["remote"]));
    assert_eq!(report["skills"][0]["status"], "provider-failed");
}

#[test]
fn a_pinned_skill_longer_than_the_budget_is_listed_cut_and_marked_while_others_are_listed() {
    let sandbox = Sandbox::new();
    let project = project(&sandbox);
    let config = r#"{"catalogBudget":60,"catalogPinned":["pinned-one"]}"#;
    let output = catalog(&sandbox, &project, config, &[], false);
    assert_eq!((output.status.code(), stderr(&output)), (Some(0), String::new()));
    // pinned-one's whole line (111) does not fit: it takes its `...` (20),
    // alpha and zulu theirs (15, 14); the 11 left give alpha its 2 and
    // the two others 4 each.
    assert_eq!(
        stdout(&output),
        "entry lines: 58 characters (budget 60)\n\
         message: 644 characters\n\
         Catalog coverage: 3 of 3 skills listed, 2 with shortened descriptions.\n\
         \n\
         NAME        STATUS                              SHOWN\n\
         alpha       listed                              5/5\n\
         pinned-one  shortened by catalogBudget, pinned  7/94\n\
         zulu        shortened by catalogBudget          6/15\n"
    );
    let output = catalog(&sandbox, &project, config, &[], true);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        report["skills"][1],
        serde_json::json!({"name": "pinned-one", "status": "shortened", "by": "catalogBudget", "pinned": true, "shown": 7, "full": 94, "pattern": null})
    );
}

#[test]
fn a_cut_by_the_description_cap_is_told_apart_from_the_budgets() {
    let sandbox = Sandbox::new();
    let project = project(&sandbox);
    let config = r#"{"catalogBudget":1000,"catalogDescriptionMaxLength":10}"#;
    let output = catalog(&sandbox, &project, config, &[], false);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("\npinned-one  shortened by catalogDescriptionMaxLength  10/94\n"), "{text}");
    assert!(text.contains("\nzulu        shortened by catalogDescriptionMaxLength  10/15\n"), "{text}");
}

#[test]
fn a_pinned_name_that_matches_no_skill_is_a_warning_and_in_the_report() {
    let sandbox = Sandbox::new();
    let project = project(&sandbox);
    let config = r#"{"catalogBudget":1000,"catalogPinned":["ghost","zulu"]}"#;
    let output = catalog(&sandbox, &project, config, &[], false);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "warning: catalogPinned names \"ghost\", which matches no skill\n");
    let text = stdout(&output);
    assert!(
        text.ends_with("\nzulu        listed, pinned  15/15\ncatalogPinned names \"ghost\", which matches no skill\n"),
        "{text}"
    );
    let output = catalog(&sandbox, &project, config, &[], true);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["unmatchedPins"], serde_json::json!(["ghost"]));
}

/// `catalogSummaries`, `catalogNameOnly` and `userOnly` each have their
/// status; only a summarised skill fails `--check`, the other two being the
/// configuration's choice.
#[test]
fn summarised_name_only_and_user_only_skills_are_told_apart() {
    let sandbox = Sandbox::new();
    let project = sandbox.path().join("project");
    sandbox.write_skill(&project, "alpha", "description: Lint the code. Use before a commit.\n", "Lint.");
    sandbox.write_skill(&project, "deploy-prod", "description: Deploy production.\n", "Deploy.");
    sandbox.write_skill(&project, "legacy-tool", "description: Old tool.\n", "Old.");
    sandbox.write_skill(&project, "zulu", "description: Zap. Caches too.\n", "Zap.");
    // Shortest lines 15 + 21 + 14 = 50; first sentences: zulu 1 more, alpha
    // 11; then zulu whole, 12 more; alpha whole would take 21.
    let config =
        r#"{"catalogBudget":74,"catalogSummaries":true,"catalogNameOnly":["legacy-*"],"userOnly":["x","deploy-*"]}"#;
    let output = catalog(&sandbox, &project, config, &[], false);
    assert_eq!((output.status.code(), stderr(&output)), (Some(0), String::new()));
    let text = stdout(&output);
    let (counts, table) = text.split_once("\n\n").unwrap();
    assert!(
        counts.starts_with("entry lines: 74 characters (budget 74)\nmessage: ")
            && counts.ends_with("\nCatalog coverage: 3 of 3 skills listed, 1 with only its first sentence."),
        "{counts}"
    );
    assert_eq!(
        table,
        "NAME         STATUS                       SHOWN\n\
         alpha        summarised by catalogBudget  14/35\n\
         deploy-prod  user-only by \"deploy-*\"      -\n\
         legacy-tool  name only by \"legacy-*\"      3/9\n\
         zulu         listed                       16/16\n"
    );
    let output = catalog(&sandbox, &project, config, &[], true);
    let report: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let rows: Vec<(&str, &str, &Value, &Value)> = report["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (row["name"].as_str().unwrap(), row["status"].as_str().unwrap(), &row["by"], &row["pattern"]))
        .collect();
    assert_eq!(
        rows,
        [
            ("alpha", "summarised", &Value::from("catalogBudget"), &Value::Null),
            ("deploy-prod", "user-only", &Value::Null, &Value::from("deploy-*")),
            ("legacy-tool", "name-only", &Value::Null, &Value::from("legacy-*")),
            ("zulu", "listed", &Value::Null, &Value::Null),
        ]
    );
    let check = sandbox.run(&[
        "catalog",
        "--cwd",
        path(&project),
        "--config",
        path(&sandbox.path().join("config.json")),
        "--check",
    ]);
    assert_eq!(check.status.code(), Some(1));
    assert_eq!(
        stderr(&check),
        "check: \"alpha\" summarised by catalogBudget (14 of 35 characters)\n\
         check: 1 of 2 model-invocable skills would not be shown whole\n"
    );
}

//! `skill-host catalog` says why: a catalog not published because a
//! provider failed names that provider; a pinned skill is marked, listed cut
//! rather than left out while others are listed, and each cut names the key
//! that made it; a `catalogPinned` name that matches no skill is a warning.

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

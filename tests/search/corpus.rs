//! The search quality corpus (docs/spec.md §3.14, docs/performance.md):
//! the public skill collections in `tests/fixtures/corpus/`, the
//! hand-written realistic skills of `distractors.json`, and generated
//! team-internal skills up to any size, with the labelled queries of
//! `queries.json`. Shared by the hit-rate test
//! (`tests/end_to_end/search_quality.rs`) and the timing bench
//! (`host-runner/examples/search_bench.rs`), which include this file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use skill_host::providers::local::{LocalProvider, LocalRoots};
use skill_host::{RuntimeSkill, SkillRegistry};

/// The skill collections searched, under `tests/fixtures/corpus/`.
pub const COLLECTIONS: [&str; 2] = ["anthropic-skills", "dsh-agents-skills"];

/// One labelled query: what a user asked, the skill that serves it, and
/// how the user asked (`loose-name`, `paraphrase`, `task-without-name`).
#[derive(Debug, Clone)]
pub struct LabelledQuery {
    pub query: String,
    pub expected: String,
    pub kind: String,
}

/// `tests/search/` in the checkout at `root`.
fn folder(root: &Path) -> PathBuf {
    root.join("tests/search")
}

/// The labelled queries, in file order.
pub fn queries(root: &Path) -> Vec<LabelledQuery> {
    let text = std::fs::read_to_string(folder(root).join("queries.json")).expect("tests/search/queries.json");
    let listed: Vec<Value> = serde_json::from_str(&text).expect("queries.json is a JSON array");
    listed
        .iter()
        .map(|entry| {
            let field = |key: &str| entry[key].as_str().unwrap_or_else(|| panic!("{key} in {entry}")).to_owned();
            LabelledQuery { query: field("query"), expected: field("expected"), kind: field("kind") }
        })
        .collect()
}

/// The hand-written skills of `distractors.json`: `[name, description]`.
pub fn distractors(root: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(folder(root).join("distractors.json")).expect("tests/search/distractors.json");
    serde_json::from_str(&text).expect("distractors.json is an array of [name, description]")
}

/// The skills of the collections plus the distractors: 23 + 76.
pub fn base_skill_count(root: &Path) -> usize {
    let collected: usize = COLLECTIONS
        .iter()
        .map(|collection| {
            std::fs::read_dir(root.join("tests/fixtures/corpus").join(collection))
                .unwrap()
                .filter(|entry| entry.as_ref().unwrap().path().join("SKILL.md").is_file())
                .count()
        })
        .sum();
    collected + distractors(root).len()
}

/// A registry over the collections (a local provider with them as custom
/// roots), the distractors, and generated skills up to `total` skills in
/// all (none when `total` is at most the base count).
pub fn registry(root: &Path, total: usize) -> Arc<SkillRegistry> {
    let registry = Arc::new(SkillRegistry::new());
    let roots = LocalRoots {
        custom: COLLECTIONS.iter().map(|collection| root.join("tests/fixtures/corpus").join(collection)).collect(),
        ..LocalRoots::default()
    };
    registry.register_provider(Arc::new(LocalProvider::new(roots)));
    for (name, description) in distractors(root) {
        registry.register_runtime(RuntimeSkill::new(&name, &description, "Steps.")).unwrap();
    }
    for (name, description) in generated(total.saturating_sub(base_skill_count(root))) {
        registry.register_runtime(RuntimeSkill::new(&name, &description, "Steps.")).unwrap();
    }
    registry
}

const AREAS: [&str; 25] = [
    "billing",
    "payments",
    "inventory",
    "crm",
    "payroll",
    "warehouse",
    "shipping",
    "analytics",
    "search",
    "auth",
    "notifications",
    "catalog",
    "checkout",
    "support",
    "marketing",
    "onboarding",
    "compliance",
    "logistics",
    "telemetry",
    "fleet",
    "ledger",
    "pricing",
    "recommendations",
    "identity",
    "storage",
];

/// (name part, what the description calls it).
const OBJECTS: [(&str, &str); 20] = [
    ("invoices", "invoices"),
    ("orders", "orders"),
    ("tickets", "support tickets"),
    ("events", "events"),
    ("records", "records"),
    ("accounts", "customer accounts"),
    ("reports", "weekly reports"),
    ("dashboards", "dashboards"),
    ("alerts", "alerts"),
    ("exports", "data exports"),
    ("backups", "backups"),
    ("schemas", "database schemas"),
    ("configs", "configuration files"),
    ("users", "user records"),
    ("metrics", "metrics"),
    ("feeds", "product feeds"),
    ("jobs", "scheduled jobs"),
    ("queues", "message queues"),
    ("webhooks", "webhooks"),
    ("certificates", "TLS certificates"),
];

/// (name part, the description's verb, where, when to use it).
const ACTIONS: [(&str, &str, &str, &str); 15] = [
    ("sync", "Synchronise", "between the {area} service and the data warehouse", "the two sides disagree"),
    ("audit", "Audit", "of the {area} team for gaps and policy violations", "preparing for a quarterly review"),
    ("export", "Export", "from the {area} system to CSV or Parquet", "finance or a partner asks for a dump"),
    ("import", "Import", "into the {area} system from a partner's files", "a new partner is onboarded"),
    ("migrate", "Migrate", "of the {area} platform to the new cluster", "the old cluster is being retired"),
    ("monitor", "Watch", "of the {area} service and page the on-call engineer", "latency or error rates climb"),
    ("backfill", "Backfill", "in the {area} database after an outage", "a pipeline skipped a day"),
    ("reconcile", "Reconcile", "against the {area} ledger at month end", "totals do not add up"),
    ("validate", "Validate", "of the {area} service against the schema registry", "a deploy changes their format"),
    ("archive", "Archive", "of the {area} team older than the retention period", "storage costs grow"),
    ("cleanup", "Clean up", "left behind in the {area} environment", "staging fills up with stale data"),
    ("debug", "Debug", "of the {area} service step by step from its logs", "something fails without a clear error"),
    ("rotate", "Rotate credentials for", "of the {area} service without downtime", "a secret may have leaked"),
    ("review", "Review", "of the {area} team before they ship", "a change touches production data"),
    ("document", "Document", "of the {area} service in the internal wiki", "a runbook is missing or stale"),
];

/// `count` generated team-internal skills, deterministic: the
/// area × object × action combinations visited with a stride coprime to
/// their number, so neighbours differ in every part.
pub fn generated(count: usize) -> Vec<(String, String)> {
    let combinations = AREAS.len() * OBJECTS.len() * ACTIONS.len();
    assert!(count <= combinations, "at most {combinations} generated skills");
    (0..count)
        .map(|i| {
            let k = (i * 7919) % combinations;
            let area = AREAS[k % AREAS.len()];
            let (object, object_text) = OBJECTS[(k / AREAS.len()) % OBJECTS.len()];
            let (action, verb, place, when) = ACTIONS[k / (AREAS.len() * OBJECTS.len())];
            let name = format!("{area}-{object}-{action}");
            let place = place.replace("{area}", area);
            let description = format!("{verb} the {object_text} {place}. Use when {when}.");
            (name, description)
        })
        .collect()
}

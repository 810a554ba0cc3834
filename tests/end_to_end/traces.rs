//! The traces kept in `tests/traces/` (docs/spec.md §7.2) are what
//! `skill-host replay --trace` records today: one per scenario of
//! `tests/scenarios/` (the embedded plugin), one per case of the hostile
//! plugin in `tests/traces/hostile/` and of the hostile files plugin in
//! `tests/traces/hostile-files/` (under [`HOSTILE_LIMITS`]). The other
//! hosts replay them (`hosts/node`, `hosts/python`).
//!
//! `DSH_UPDATE_TRACES=1 cargo test -p end-to-end --test end_to_end traces`
//! writes them afresh; without it, a trace that is missing or differs fails.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{Sandbox, path, repo_root, scenarios_in, stderr};

static HOSTILE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hostile_plugin.wasm"));
static HOSTILE_FILES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hostile_files_plugin.wasm"));

/// The limits the hostile plugin's cases run under (as in `cross_host.rs`).
pub(crate) const HOSTILE_LIMITS: [&str; 6] = ["--timeout-ms", "500", "--memory-mb", "32", "--max-text-bytes", "1000"];

/// The trace kept beside `scenario` in `dir`: `<name>.trace.json`.
fn trace_path(dir: &Path, scenario: &Path) -> PathBuf {
    let name = scenario.file_stem().unwrap().to_string_lossy();
    dir.join(format!("{name}.trace.json"))
}

/// Records `scenario`'s trace with `plugin` (the embedded one when `None`).
fn record(sandbox: &Sandbox, plugin: Option<&Path>, limits: &[&str], scenario: &Path) -> Value {
    let out = sandbox.path().join("recorded.trace.json");
    let mut args: Vec<&str> = Vec::new();
    if let Some(plugin) = plugin {
        args.extend(["--plugin", path(plugin)]);
    }
    args.extend(limits);
    args.extend(["replay", path(scenario), "--trace", path(&out)]);
    let output = sandbox.run(&args);
    // A hostile case fails its step (exit 3); its trace is written all the same.
    assert!(matches!(output.status.code(), Some(0 | 3)), "{}: {}", scenario.display(), stderr(&output));
    let text =
        std::fs::read_to_string(&out).unwrap_or_else(|error| panic!("{}: no trace: {error}", scenario.display()));
    normalised(serde_json::from_str(&text).expect("a trace is JSON"))
}

/// What varies between two recordings of one scenario, made alike: the
/// tool calls' ids the session gives results (`call-` and a fresh UUID)
/// become `call-` and their ordinal in the same shape; and a call that ran
/// into its deadline made as many imports as the time allowed, so its
/// trailing repeats of one import are kept once (a replayer answers further
/// repeats alike, docs/spec.md §7.2).
fn normalised(trace: Value) -> Value {
    let mut trace: Value = serde_json::from_str(&numbered_call_ids(&trace.to_string())).unwrap();
    for call in trace["calls"].as_array_mut().expect("calls").iter_mut() {
        let deadline = call["outcome"]["error"].as_str().is_some_and(|error| error.contains("exceeded its deadline"));
        if let (true, Some(imports)) = (deadline, call["imports"].as_array_mut()) {
            while imports.len() > 1 && imports[imports.len() - 1] == imports[imports.len() - 2] {
                imports.pop();
            }
        }
    }
    trace
}

/// `text` with every `call-<UUID>` replaced by `call-<its ordinal, as a UUID>`.
fn numbered_call_ids(text: &str) -> String {
    const PREFIX: &str = "call-";
    let is_uuid = |id: &str| {
        id.len() == 36
            && id
                .char_indices()
                .all(|(at, c)| if [8, 13, 18, 23].contains(&at) { c == '-' } else { c.is_ascii_hexdigit() })
    };
    let mut seen: Vec<String> = Vec::new();
    let (mut out, mut rest) = (String::with_capacity(text.len()), text);
    while let Some(at) = rest.find(PREFIX) {
        let (before, after) = rest.split_at(at + PREFIX.len());
        out.push_str(before);
        let id = after.get(..36).filter(|id| is_uuid(id));
        let Some(id) = id else {
            rest = after;
            continue;
        };
        let ordinal = seen.iter().position(|known| known == id).unwrap_or_else(|| {
            seen.push(id.to_owned());
            seen.len() - 1
        });
        out.push_str(&format!("00000000-0000-0000-0000-{ordinal:012}"));
        rest = &after[36..];
    }
    out.push_str(rest);
    out
}

/// Compares (or, with `DSH_UPDATE_TRACES=1`, writes) each trace; returns
/// what is missing or stale.
fn check(kept: &Path, recorded: Value) -> Option<String> {
    let mut text = serde_json::to_string_pretty(&recorded).unwrap();
    text.push('\n');
    if updating() {
        std::fs::write(kept, &text).unwrap();
        return None;
    }
    match std::fs::read_to_string(kept) {
        Ok(existing) if existing == text => None,
        Ok(_) => Some(format!("{} is stale", kept.display())),
        Err(_) => Some(format!("{} is missing", kept.display())),
    }
}

/// Whether `DSH_UPDATE_TRACES=1` asks for the traces to be written afresh.
fn updating() -> bool {
    std::env::var("DSH_UPDATE_TRACES").is_ok_and(|value| value == "1")
}

/// The traces kept in `dir` that belong to none of `cases`: removed when
/// updating, else returned as problems.
fn orphans(dir: &Path, cases: &[PathBuf]) -> Vec<String> {
    let wanted: Vec<PathBuf> = cases.iter().map(|case| trace_path(dir, case)).collect();
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let kept = entry.unwrap().path();
        if !kept.to_string_lossy().ends_with(".trace.json") || wanted.contains(&kept) {
            continue;
        }
        if updating() {
            std::fs::remove_file(&kept).unwrap();
        } else {
            problems.push(format!("{} is the trace of no case", kept.display()));
        }
    }
    problems
}

const STALE: &str = "run `DSH_UPDATE_TRACES=1 cargo test -p end-to-end --test end_to_end traces` and review the change";

#[test]
fn every_scenario_has_its_trace_as_recorded_today() {
    let sandbox = Sandbox::new();
    let dir = repo_root().join("tests/traces/scenarios");
    let scenarios = scenarios_in(&repo_root().join("tests/scenarios"));
    let mut problems: Vec<String> = scenarios
        .iter()
        .filter_map(|scenario| check(&trace_path(&dir, scenario), record(&sandbox, None, &[], scenario)))
        .collect();
    problems.extend(orphans(&dir, &scenarios));
    assert!(problems.is_empty(), "{}\n{STALE}", problems.join("\n"));
}

#[test]
fn every_hostile_case_has_its_trace_as_recorded_today() {
    cases_recorded_today("hostile", "hostile_plugin.wasm", HOSTILE, 20);
}

/// The cases of `tests/fixtures/hostile-files-plugin`, a 0.4.0 plugin whose
/// tool results claim files its registry did not read for it.
#[test]
fn every_hostile_file_case_has_its_trace_as_recorded_today() {
    cases_recorded_today("hostile-files", "hostile_files_plugin.wasm", HOSTILE_FILES, 5);
}

/// Each case in `tests/traces/{folder}` has its trace, as `component`
/// (written out as `file`) records it today under [`HOSTILE_LIMITS`].
fn cases_recorded_today(folder: &str, file: &str, component: &[u8], at_least: usize) {
    let sandbox = Sandbox::new();
    let plugin = sandbox.path().join(file);
    std::fs::write(&plugin, component).unwrap();
    let dir = repo_root().join("tests/traces").join(folder);
    let cases: Vec<PathBuf> =
        scenarios_in(&dir).into_iter().filter(|path| !path.to_string_lossy().ends_with(".trace.json")).collect();
    assert!(cases.len() >= at_least, "the cases are in {}", dir.display());
    let mut problems: Vec<String> = cases
        .iter()
        .filter_map(|case| check(&trace_path(&dir, case), record(&sandbox, Some(&plugin), &HOSTILE_LIMITS, case)))
        .collect();
    problems.extend(orphans(&dir, &cases));
    assert!(problems.is_empty(), "{}\n{STALE}", problems.join("\n"));
}

/// What `--trace` writes, and where it refuses: a call that fails before
/// the plugin runs leaves the trace as it was; only the first plugin a
/// command loads is traced; nothing is written when no plugin loaded; a
/// file that is not a trace is never overwritten; `mcp` refuses the option.
#[test]
fn a_trace_holds_the_calls_that_ran_and_overwrites_nothing_else() {
    use skill_host::session::{SessionHeader, SessionLog, SharedSession};
    use skill_host::{Decision, Plugin, SandboxLimits, SkillRegistry, StepInput, TraceRecorder, run_step};

    let recorder = TraceRecorder::new();
    let plugin =
        Plugin::traced(skill_host::EMBEDDED_PLUGIN, "{}", SandboxLimits::default(), None, recorder.clone()).unwrap();
    let registry = std::sync::Arc::new(SkillRegistry::new());
    let session = SharedSession::new(SessionLog::in_memory(SessionHeader::new(None)));
    // A proposed message with no source fails before the plugin is called.
    let sourceless = Decision::Enter(vec![serde_json::json!({"role": "user", "content": []})]);
    assert!(run_step(&plugin, &registry, &session, &StepInput::default(), sourceless).is_err());
    let trace = recorder.to_json();
    assert_eq!(trace["calls"].as_array().unwrap().len(), 1, "{trace}");
    assert_eq!(trace["calls"][0]["outcome"], serde_json::json!({"ok": null}), "the configure's outcome stands");

    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    // `catalog` with a budget loads two plugins: the first is traced.
    let config = sandbox.path().join("config.json");
    std::fs::write(&config, r#"{"catalogBudget":2000}"#).unwrap();
    let trace = sandbox.path().join("catalog.trace.json");
    let output =
        sandbox.run(&["--config", path(&config), "--trace", path(&trace), "catalog", "--cwd", path(&workspace)]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert_eq!(recorded["config"], r#"{"catalogBudget":2000}"#);
    let calls: Vec<&str> =
        recorded["calls"].as_array().unwrap().iter().map(|call| call["call"].as_str().unwrap()).collect();
    assert_eq!(calls, ["configure", "pre-step"]);
    // A component that does not load: no trace.
    let bad = sandbox.path().join("bad.wasm");
    std::fs::write(&bad, "not wasm").unwrap();
    let none = sandbox.path().join("none.trace.json");
    let output = sandbox.run(&["--plugin", path(&bad), "--trace", path(&none), "load", "x"]);
    assert_eq!(output.status.code(), Some(3));
    assert!(!none.exists());
    // A session log named by mistake is left as it is.
    let log = sandbox.path().join("session.jsonl");
    std::fs::write(&log, "{\"type\":\"session\"}\n").unwrap();
    let output = sandbox.run(&["--trace", path(&log), "load", "x"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output).trim_end(),
        format!("error: --trace {} holds something other than a trace; it is not overwritten", log.display())
    );
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "{\"type\":\"session\"}\n");
    let output = sandbox.run(&["--trace", path(&none), "mcp"]);
    assert_eq!(
        (output.status.code(), stderr(&output).trim_end()),
        (Some(2), "error: --trace is not available with mcp")
    );
}

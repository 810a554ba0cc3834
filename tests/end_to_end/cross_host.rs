//! The same component in a second, independent host: `hosts/node/`, a
//! Node.js host built on jco that shares no code with `host-runner`. Every
//! trace kept in `tests/traces/` (docs/spec.md §7.2: what `skill-host replay
//! --trace` recorded at the WIT boundary, for every scenario with the
//! embedded plugin and for each case of the hostile plugin) is replayed by
//! `node hosts/node/trace.mjs` on the same component: the Node host's own
//! sandbox and validation, its imports answered from the trace, and it must
//! return the same values and reach the same outcomes, error texts included
//! (a trap the engine describes by its prefix, a guest panic by its location
//! and message). An altered trace must be reported. Beside that, the drop-in
//! for `@deepseek-ai/dsh-tool-skill` stops the hostile plugin in a DeepSeek
//! Harness, and the Node host's unit tests pass.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use serde_json::Value;

use crate::common::{Sandbox, path, repo_root, scenarios_in, stderr, stdout};

static HOSTILE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hostile_plugin.wasm"));
static HOSTILE_FILES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hostile_files_plugin.wasm"));

/// `hosts/node/`, checked to be ready to run.
fn node_host() -> PathBuf {
    let dir = repo_root().join("hosts/node");
    assert!(
        dir.join("node_modules/@bytecodealliance/jco").is_dir(),
        "the Node.js host's dependencies are missing: run `npm install --no-audit --no-fund` in hosts/node (.ci/run does)"
    );
    dir
}

/// `node` with the given arguments, in the repository.
fn node(args: &[&str]) -> Output {
    Command::new("node")
        .args(args)
        .current_dir(repo_root())
        .output()
        .unwrap_or_else(|error| panic!("cannot run `node` (Node.js 20 or later is required): {error}"))
}

/// The component `skill-host` carries, written out by `skill-host component`.
fn component(sandbox: &Sandbox) -> PathBuf {
    let path = sandbox.path().join("skill_plugin.wasm");
    let output = sandbox.run(&["component", "--output", path.to_str().unwrap()]);
    assert!(output.status.success(), "skill-host component failed: {}", stderr(&output));
    assert_eq!(std::fs::read(&path).unwrap(), skill_host::EMBEDDED_PLUGIN, "the written component is the embedded one");
    path
}

/// The hostile plugin, written out.
fn hostile(sandbox: &Sandbox) -> PathBuf {
    let plugin = sandbox.path().join("hostile_plugin.wasm");
    std::fs::write(&plugin, HOSTILE).unwrap();
    plugin
}

/// What one command did.
#[derive(Debug)]
pub(crate) struct Replay {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Replay {
    fn from(output: &Output) -> Self {
        Self { code: output.status.code(), stdout: stdout(output), stderr: stderr(output) }
    }
}

/// `node hosts/node/trace.mjs TRACE --plugin PLUGIN`: the Node host replaying
/// a trace. Exit 0 and nothing printed when it agrees, 1 and a line per
/// mismatch when not, 3 and `error: …` for a component it refuses to load.
pub(crate) fn replay_trace(trace: &Path, plugin: &Path) -> Replay {
    let script = node_host().join("trace.mjs");
    Replay::from(&node(&[path(&script), path(trace), "--plugin", path(plugin)]))
}

/// Records `scenario`'s trace with `skill-host --plugin PLUGIN [extra…]
/// replay SCENARIO --trace OUT`; returns what skill-host did and the trace.
pub(crate) fn record_trace(sandbox: &Sandbox, plugin: &Path, extra: &[&str], scenario: &Path) -> (Replay, PathBuf) {
    let trace = scenario.with_extension("trace.json");
    let mut args = vec!["--plugin", path(plugin)];
    args.extend_from_slice(extra);
    args.extend(["replay", path(scenario), "--trace", path(&trace)]);
    (Replay::from(&sandbox.run(&args)), trace)
}

/// Replays `traces` (each with its plugin) in the Node host on two threads
/// (the machines have two cores); returns every trace it disagrees with.
fn disagreements(traces: &[(PathBuf, &Path)]) -> Vec<String> {
    // Fail here, on the test's own thread, with the fix when node_modules is missing.
    node_host();
    let queue = Mutex::new(traces.iter());
    let found = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let Some((trace, plugin)) = queue.lock().unwrap().next() else { return };
                    let replay = replay_trace(trace, plugin);
                    if replay.code != Some(0) || !replay.stdout.is_empty() {
                        let name = trace.strip_prefix(repo_root()).unwrap_or(trace).display().to_string();
                        found
                            .lock()
                            .unwrap()
                            .push(format!("{name}: exit {:?}\n{}{}", replay.code, replay.stdout, replay.stderr));
                    }
                }
            });
        }
    });
    found.into_inner().unwrap()
}

/// The traces kept in `dir` (`*.trace.json`).
fn traces_in(dir: &Path) -> Vec<PathBuf> {
    scenarios_in(dir).into_iter().filter(|file| file.to_string_lossy().ends_with(".trace.json")).collect()
}

#[test]
fn every_stored_trace_replays_in_the_node_host() {
    let sandbox = Sandbox::new();
    let plugin = component(&sandbox);
    let hostile = hostile(&sandbox);
    let scenarios = traces_in(&repo_root().join("tests/traces/scenarios"));
    let cases = traces_in(&repo_root().join("tests/traces/hostile"));
    let liar = sandbox.path().join("hostile_files_plugin.wasm");
    std::fs::write(&liar, HOSTILE_FILES).unwrap();
    let file_cases = traces_in(&repo_root().join("tests/traces/hostile-files"));
    assert!(scenarios.len() >= 40, "only {} scenario traces", scenarios.len());
    assert!(cases.len() >= 20, "only {} hostile traces", cases.len());
    assert!(file_cases.len() >= 5, "only {} hostile file traces", file_cases.len());
    let traces: Vec<(PathBuf, &Path)> = scenarios
        .into_iter()
        .map(|trace| (trace, plugin.as_path()))
        .chain(cases.into_iter().map(|trace| (trace, hostile.as_path())))
        .chain(file_cases.into_iter().map(|trace| (trace, liar.as_path())))
        .collect();
    let failures = disagreements(&traces);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The replay can fail: a trace altered in one import's answer, or in a
/// hostile case's error text, is reported with the call it concerns.
#[test]
fn the_node_host_reports_an_altered_trace() {
    let sandbox = Sandbox::new();
    let plugin = component(&sandbox);
    let hostile = hostile(&sandbox);
    let read = |file: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(repo_root().join("tests/traces").join(file)).unwrap()).unwrap()
    };
    let write = |name: &str, trace: &Value| {
        let file = sandbox.path().join(name);
        std::fs::write(&file, trace.to_string()).unwrap();
        file
    };

    // A skill's body the registry answered differently: the plugin's decision differs from the trace's.
    let mut trace = read("scenarios/user-invocation.trace.json");
    let (call, answer) = trace["calls"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
        .find_map(|(index, call)| {
            let imports = call["imports"].as_array_mut().unwrap();
            imports.iter_mut().find(|entry| entry["import"] == "registry.get-skill").map(|entry| (index, entry))
        })
        .expect("a get-skill import");
    let content = answer["answer"]["Ok"]["content"].as_str().unwrap().to_owned();
    answer["answer"]["Ok"]["content"] = Value::String(format!("{content} (altered)"));
    let replay = replay_trace(&write("altered-answer.trace.json", &trace), &plugin);
    assert_eq!(replay.code, Some(1), "{replay:?}");
    let lines: Vec<&str> = replay.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{}", replay.stdout);
    assert!(lines[0].starts_with(&format!("call {call} (pre-step on instance 0): import ")), "{}", lines[0]);
    assert!(lines[0].contains("the plugin called step.decide") && lines[0].contains("(altered)"), "{}", lines[0]);

    // A hostile case's error worded otherwise.
    let mut trace = read("hostile/two-catalogs.trace.json");
    let outcome = &mut trace["calls"][1]["outcome"]["error"];
    assert_eq!(outcome, "plugin call `pre-step` returned invalid output: more than one catalog was added");
    *outcome =
        Value::String("plugin call `pre-step` returned invalid output: more than two catalogs were added".into());
    let replay = replay_trace(&write("altered-error.trace.json", &trace), &hostile);
    assert_eq!(replay.code, Some(1), "{replay:?}");
    assert_eq!(
        replay.stdout,
        "call 1 (pre-step on instance 0): its outcome is {\"error\":\"plugin call `pre-step` returned invalid output: \
         more than one catalog was added\"}, the trace's {\"error\":\"plugin call `pre-step` returned invalid output: \
         more than two catalogs were added\"}\n"
    );
}

/// The hostile plugin through the drop-in for `@deepseek-ai/dsh-tool-skill`
/// (hosts/node/dsh), in a DeepSeek Harness built from its published
/// packages: each misbehaviour is stopped with its error, the session is
/// left as it was, and the harness's next call is served by a fresh instance.
#[test]
fn the_drop_in_stops_a_hostile_plugin_and_the_harness_keeps_serving() {
    let sandbox = Sandbox::new();
    let plugin = hostile(&sandbox);
    let script = node_host().join("dsh-harness/hostile.mjs");
    let output = node(&[script.to_str().unwrap(), plugin.to_str().unwrap()]);
    assert!(output.status.success(), "dsh-harness/hostile.mjs failed:\n{}", stderr(&output));
    let cases: Vec<Value> = stdout(&output).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let pre_step = |reason: &str| format!("plugin call `pre-step` {reason}");
    let invoke = |reason: &str| format!("Error: plugin call `invoke` {reason}");
    let expected = [
        ("loop", pre_step("exceeded its deadline of 500 ms")),
        ("alloc", pre_step("exceeded its memory cap of 32 MiB")),
        ("panic", pre_step("trapped: ")),
        ("import-loop", pre_step("exceeded its deadline of 500 ms")),
        (
            "forge",
            pre_step(
                "returned invalid output: an added message has source {\"kind\":\"user\"}; the plugin may only write {\"kind\":\"plugin\",\"plugin\":\"dsh-tool-skill\"} or a skill invocation",
            ),
        ),
        ("two-catalogs", pre_step("returned invalid output: more than one catalog was added")),
        ("many-messages", pre_step("returned invalid output: it added 1000 messages; a pre-step may add at most 64")),
        (
            "big-text",
            pre_step(
                "returned invalid output: added message 1's content block 1 is 2000 bytes, over the cap of 1000 bytes per text",
            ),
        ),
        ("loop", invoke("exceeded its deadline of 500 ms")),
        ("import-loop", invoke("exceeded its deadline of 500 ms")),
        ("alloc", invoke("exceeded its memory cap of 32 MiB")),
        (
            "other-skill",
            invoke(
                "returned invalid output: the value is skill \"other-skill\", but the arguments asked for \"a-skill\"",
            ),
        ),
        ("bare-error", invoke("returned invalid output: a tool error must read `Error: <message>`")),
        ("step-outside", invoke("trapped: the plugin called `step.decide` outside a pre-step")),
    ];
    assert_eq!(cases.len(), expected.len(), "{}", stdout(&output));
    for (case, (mode, error)) in cases.iter().zip(expected) {
        assert_eq!(case["mode"], mode, "{case}");
        let seen = case["error"].as_str().unwrap_or_else(|| panic!("no error: {case}"));
        if mode == "panic" {
            assert!(seen.starts_with(&error) && seen.contains("hostile plugin panicked on purpose"), "{case}");
        } else {
            assert_eq!(seen, error, "{case}");
        }
        assert_eq!(case["served"], true, "{case}");
    }
}

/// The Node host's own unit tests (its JSON, sandbox WASI and memory cap).
#[test]
fn the_node_hosts_unit_tests_pass() {
    let mut files: Vec<String> = std::fs::read_dir(node_host().join("test"))
        .unwrap()
        .map(|entry| entry.unwrap().path().to_string_lossy().into_owned())
        .filter(|path| path.ends_with(".test.mjs"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "hosts/node/test holds no *.test.mjs");
    // Files, not the folder: Node 20 and 22 read a folder argument differently.
    let mut args = vec!["--test".to_owned()];
    args.extend(files);
    let output = node(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(output.status.success(), "node --test hosts/node/test failed:\n{}\n{}", stdout(&output), stderr(&output));
}

/// A hand-written plugin (handwritten.rs) that decides a catalog of 100 (or
/// 300) content blocks all naming the same MiB: skill-host refuses to copy
/// that out of a guest capped at 64 MiB, and its trace replays in the Node
/// host, which refuses it in the same words, before the copy is made (300
/// MiB would not even fit in the Node host's worker heap).
#[test]
fn both_hosts_bound_what_one_import_call_copies_out() {
    let sandbox = Sandbox::new();
    let scenario = sandbox.path().join("aliased.json");
    std::fs::write(&scenario, r#"{"steps":[{"op":"pre-step"}]}"#).unwrap();
    let expected = "plugin call `pre-step` trapped: too much data is being copied between the host and the guest: \
                    fuel allocated for hostcalls has been exhausted";
    for blocks in [100, 300] {
        let plugin = sandbox.path().join(format!("aliased-{blocks}.wasm"));
        std::fs::write(&plugin, crate::handwritten::aliased(blocks).component()).unwrap();
        let (rust, trace) = record_trace(&sandbox, &plugin, &[], &scenario);
        assert_eq!(
            (rust.code, rust.stderr.as_str()),
            (Some(3), format!("error: {expected}\n").as_str()),
            "{blocks} blocks"
        );
        let recorded: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
        assert_eq!(recorded["calls"][1]["outcome"]["error"], expected, "{blocks} blocks");
        let node = replay_trace(&trace, &plugin);
        assert_eq!(
            (node.code, node.stdout.as_str(), node.stderr.as_str()),
            (Some(0), "", ""),
            "node host, {blocks} blocks"
        );
    }
}

/// Any session, not only a scenario, is traced (`--trace`, global): the
/// steps and a load of a session file on disk, over the example
/// workspace's local skills, each command writing its trace; the Node host
/// replays each with no mismatch.
#[test]
fn a_session_on_disk_is_traced_command_by_command_and_replays_in_the_node_host() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let session = sandbox.path().join("session.jsonl");
    let plugin = component(&sandbox);
    let config = sandbox.path().join("config.json");
    std::fs::write(&config, r#"{"loadedSkills":true,"skillReads":true}"#).unwrap();
    let commands: [&[&str]; 4] = [
        &["step", "--session", path(&session), "--cwd", path(&workspace)],
        &["load", "release-notes", "--session", path(&session)],
        &["load", "release-notes", "--section", "no such heading", "--session", path(&session)],
        &["step", "--session", path(&session)],
    ];
    for (index, command) in commands.iter().enumerate() {
        let trace = sandbox.path().join(format!("command-{index}.trace.json"));
        let mut args = vec!["--config", path(&config), "--trace", path(&trace)];
        args.extend_from_slice(command);
        let output = sandbox.run(&args);
        assert!(matches!(output.status.code(), Some(0 | 1)), "{command:?}: {}", stderr(&output));
        let recorded: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
        let calls = recorded["calls"].as_array().unwrap();
        assert!(calls.iter().any(|call| call["call"] != "configure"), "{command:?} traced no call: {recorded}");
        let replay = replay_trace(&trace, &plugin);
        assert_eq!((replay.code, replay.stdout.as_str()), (Some(0), ""), "{command:?}: {}", replay.stderr);
    }
}

//! The same component in a second, independent host: `hosts/node/`, a
//! Node.js host built on jco that shares no code with `host-runner`. Every
//! scenario under `tests/scenarios/` (and every probe under
//! `hosts/node/conformance/`, edge cases of the scenario format and of JSON
//! itself) is replayed by `skill-host replay` and by `node
//! hosts/node/replay.mjs` on the very `.wasm` that `skill-host component`
//! writes out, and the two must agree: the same exit code, the same JSON
//! document byte for byte, the same `error: …` line.
//!
//! But for one kind of failure: a scenario the scenario runner itself
//! refuses (not JSON, or not the shape of docs/spec.md §7), before the plugin starts.
//! The Rust host words that with serde's text and the Node host with its
//! own, so there only the exit code (3) is compared. A refusal is told apart
//! by its line, which each host writes only then: exit code 3 and exactly one
//! line starting `error: scenario <the path as given>: ` (an unreadable
//! file is `cannot read scenario …`; a provider's skill, a runtime skill or a
//! session seed refused while replaying are worded `provider N: …`, `runtime
//! skill N: …`, `session log …`, alike in both hosts, and still compared
//! byte for byte). Both hosts must call it a refusal, or the lines are
//! compared and differ. Every other failure (a plugin trap, a refused
//! configuration, a cap, the hostile plugin's misbehaviour) is compared byte
//! for byte.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use serde_json::Value;

use crate::common::{Sandbox, repo_root, scenarios_in, stderr, stdout};

static HOSTILE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hostile_plugin.wasm"));

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

/// What one host did with one scenario.
#[derive(Debug)]
pub(crate) struct Replay {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Replay {
    fn from(output: &Output) -> Self {
        let stdout = stdout(output);
        Self { code: output.status.code(), stdout, stderr: stderr(output) }
    }
}

pub(crate) fn replay_in_both(sandbox: &Sandbox, plugin: &Path, scenario: &Path, extra: &[&str]) -> (Replay, Replay) {
    let node_host = node_host();
    let mut rust_args = vec!["--plugin", plugin.to_str().unwrap()];
    rust_args.extend_from_slice(extra);
    rust_args.extend(["replay", scenario.to_str().unwrap()]);
    let replay = node_host.join("replay.mjs");
    let mut node_args = vec![replay.to_str().unwrap(), "--plugin", plugin.to_str().unwrap()];
    node_args.extend_from_slice(extra);
    node_args.push(scenario.to_str().unwrap());
    (Replay::from(&sandbox.run(&rust_args)), Replay::from(&node(&node_args)))
}

/// Whether `replay` is the scenario runner refusing `scenario` itself (see
/// the module's comment): exit code 3 and one `error: scenario <path>: …` line.
fn refused_scenario(replay: &Replay, scenario: &Path) -> bool {
    let prefix = format!("error: scenario {}: ", scenario.display());
    replay.code == Some(3) && replay.stderr.starts_with(&prefix) && replay.stderr.lines().count() == 1
}

/// Where the two hosts disagree on one scenario, if they do.
fn disagreement(name: &str, scenario: &Path, rust: &Replay, node: &Replay) -> Option<String> {
    if rust.code != node.code {
        return Some(format!(
            "{name}: skill-host exited {:?} ({}), the Node host {:?} ({})",
            rust.code,
            rust.stderr.trim(),
            node.code,
            node.stderr.trim()
        ));
    }
    if rust.code == Some(0) {
        // Byte for byte: the order of a document's keys is output too (§7).
        return (rust.stdout != node.stdout)
            .then(|| format!("{name}:\n--- skill-host\n{}\n--- node\n{}", rust.stdout, node.stdout));
    }
    if !node.stdout.is_empty() {
        return Some(format!("{name}: the Node host failed but printed:\n{}", node.stdout));
    }
    // Both refused the file itself, each in its own words: the exit code is all.
    if refused_scenario(rust, scenario) && refused_scenario(node, scenario) {
        return None;
    }
    (rust.stderr != node.stderr)
        .then(|| format!("{name}: different failures:\n  skill-host: {}  node:       {}", rust.stderr, node.stderr))
}

/// Replays `scenarios` on two threads (the machines have two cores) and collects
/// every disagreement.
fn disagreements(sandbox: &Sandbox, plugin: &Path, scenarios: &[PathBuf]) -> Vec<String> {
    // Fail here, on the test's own thread, with the fix when node_modules is missing.
    node_host();
    let queue = Mutex::new(scenarios.iter());
    let found = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let Some(scenario) = queue.lock().unwrap().next() else { return };
                    let (rust, node) = replay_in_both(sandbox, plugin, scenario, &[]);
                    let name = scenario.strip_prefix(repo_root()).unwrap_or(scenario).display().to_string();
                    if let Some(problem) = disagreement(&name, scenario, &rust, &node) {
                        found.lock().unwrap().push(problem);
                    }
                }
            });
        }
    });
    found.into_inner().unwrap()
}

#[test]
fn every_scenario_replays_identically_in_the_node_host() {
    let sandbox = Sandbox::new();
    let plugin = component(&sandbox);
    let scenarios = scenarios_in(&repo_root().join("tests/scenarios"));
    assert!(scenarios.len() >= 12, "only {} scenarios", scenarios.len());
    let failures = disagreements(&sandbox, &plugin, &scenarios);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn conformance_probes_fail_and_succeed_alike_in_both_hosts() {
    let sandbox = Sandbox::new();
    let plugin = component(&sandbox);
    let probes = scenarios_in(&node_host().join("conformance"));
    assert!(!probes.is_empty(), "hosts/node/conformance holds no probe");
    let failures = disagreements(&sandbox, &plugin, &probes);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Malformed scenarios both hosts refuse before the plugin starts, each in
/// its own words: the shapes where serde's derive (the Rust host) and a
/// reader written by hand (the Node host) could part. Among them, what
/// serde's derive would take but no scenario means (structures as sequences,
/// unit names as maps, ops by index, a structure's field twice) and the
/// depth serde_json stops at.
#[test]
fn both_hosts_refuse_the_same_malformed_scenarios() {
    let sandbox = Sandbox::new();
    let plugin = component(&sandbox);
    let deep = format!(r#"{{"steps":[{{"op":"invoke","arguments":{}{}}}]}}"#, "[".repeat(125), "]".repeat(125));
    let malformed = [
        ("not-json", r#"{"steps":[}"#),
        ("byte-order-mark", "\u{feff}{\"steps\":[]}"),
        ("lone-surrogate", r#"{"steps":[{"op":"propose","messages":["\ud800"]}]}"#),
        ("too-deep", deep.as_str()),
        ("a-sequence", r#"[null,null,null,null,null,[]]"#),
        ("no-steps", r#"{"cwd":"/w"}"#),
        ("unknown-field", r#"{"steps":[],"stepz":[]}"#),
        ("steps-twice", r#"{"steps":[],"steps":[]}"#),
        ("cwd-a-number", r#"{"cwd":5,"steps":[]}"#),
        ("step-a-sequence", r#"{"steps":[["compact"]]}"#),
        ("op-by-index", r#"{"steps":[{"op":3}]}"#),
        ("op-twice", r#"{"steps":[{"op":"invoke","op":"compact"}]}"#),
        (
            "unknown-op-after-a-refused-config",
            r#"{"config":{"catalogDescriptionMaxLength":2},"steps":[{"op":"dance"}]}"#,
        ),
        ("tool-view-as-a-map", r#"{"steps":[{"op":"pre-step","toolView":{"hidden":null}}]}"#),
        ("tool-view-capitalised", r#"{"steps":[{"op":"pre-step","toolView":"Hidden"}]}"#),
        ("reject-a-number", r#"{"steps":[{"op":"pre-step","reject":5}]}"#),
        ("reject-with-malformed-messages", r#"{"steps":[{"op":"pre-step","reject":null,"messages":5}]}"#),
        ("message-without-source", r#"{"steps":[{"op":"propose","messages":[{"content":[]}]}]}"#),
        ("invoke-with-neither", r#"{"steps":[{"op":"invoke"}]}"#),
        ("set-providers-null", r#"{"steps":[{"op":"set-providers","providers":null}]}"#),
        ("provider-a-sequence", r#"{"providers":[["p",true,null,[]]],"steps":[]}"#),
        ("provider-without-name", r#"{"providers":[{"skills":[]}],"steps":[]}"#),
        ("skills-a-string", r#"{"providers":[{"name":"p","skills":"x"}],"steps":[]}"#),
        (
            "loaded-a-number",
            r#"{"providers":[{"name":"p","skills":[{"name":"a","description":"d","content":"c","loaded":5}]}],"steps":[]}"#,
        ),
        ("runtime-without-content", r#"{"runtime":[{"name":"a-b","description":"d"}],"steps":[]}"#),
        (
            "runtime-invocation-of-three",
            r#"{"runtime":[{"name":"a-b","description":"d","content":"c","invocation":[true,false,true]}],"steps":[]}"#,
        ),
        (
            "runtime-resource-base",
            r#"{"runtime":[{"name":"a-b","description":"d","content":"c","resourceBase":{"kind":"file"}}],"steps":[]}"#,
        ),
        ("event-without-type", r#"{"session":[{"data":{}}],"steps":[]}"#),
        (
            "append-as-a-map",
            r#"{"session":[{"type":"user/message","data":{},"surfaceOp":{"append":null}}],"steps":[]}"#,
        ),
        (
            "replace-as-a-sequence",
            r#"{"session":[{"type":"user/message","data":{},"surfaceOp":["replace",0,0]}],"steps":[]}"#,
        ),
        (
            "replace-by-float",
            r#"{"session":[{"type":"user/message","data":{},"surfaceOp":{"op":"replace","start":1.0,"end":2}}],"steps":[]}"#,
        ),
    ];
    for (name, text) in malformed {
        let scenario = sandbox.path().join(format!("malformed-{name}.json"));
        std::fs::write(&scenario, text).unwrap();
        let (rust, node) = replay_in_both(&sandbox, &plugin, &scenario, &[]);
        for (host, replay) in [("skill-host", &rust), ("node host", &node)] {
            assert!(refused_scenario(replay, &scenario), "{host}, {name}: {replay:?}");
            assert_eq!(replay.stdout, "", "{host}, {name}");
        }
    }
}

/// The hostile plugin (tests/fixtures/hostile-plugin) in both hosts: each way
/// it misbehaves ends the same way, and the Node host survives it.
#[test]
fn both_hosts_contain_a_hostile_plugin_alike() {
    let sandbox = Sandbox::new();
    let plugin = sandbox.path().join("hostile_plugin.wasm");
    std::fs::write(&plugin, HOSTILE).unwrap();
    // One file per scenario: `name` tells apart two of the same mode.
    let scenario_named = |name: &str, mode: &str, extra: &str, steps: &str| {
        let path = sandbox.path().join(format!("hostile-{name}.json"));
        let text = format!(r#"{{"config":{{"mode":"{mode}"{extra}}},"steps":{steps}}}"#);
        std::fs::write(&path, text).unwrap();
        path
    };
    let steps = r#"[{"op":"pre-step","messages":["hello /a-skill"]},{"op":"pre-step","reject":"no"}]"#;
    let scenario_with = |mode: &str, extra: &str, steps: &str| scenario_named(mode, mode, extra, steps);
    let scenario = |mode: &str| scenario_with(mode, "", steps);
    let limits = ["--timeout-ms", "500", "--memory-mb", "32", "--max-text-bytes", "1000"];
    // Failures both hosts word identically.
    let exact = [
        ("loop", "error: plugin call `pre-step` exceeded its deadline of 500 ms\n"),
        ("alloc", "error: plugin call `pre-step` exceeded its memory cap of 32 MiB\n"),
        ("two-catalogs", "error: plugin call `pre-step` returned invalid output: more than one catalog was added\n"),
        ("reject", "error: plugin call `pre-step` returned invalid output: the plugin may not change a reject\n"),
        (
            "decide-twice",
            "error: plugin call `pre-step` returned invalid output: it decided 2 times; a pre-step decides at most once\n",
        ),
        (
            "bad-index",
            "error: plugin call `pre-step` returned invalid output: it kept proposed message 1 out of order or out of range (1 proposed)\n",
        ),
        (
            "keep-twice",
            "error: plugin call `pre-step` returned invalid output: it kept proposed message 0 out of order or out of range (1 proposed)\n",
        ),
        (
            "forge",
            "error: plugin call `pre-step` returned invalid output: an added message has source {\"kind\":\"user\"}; the plugin may only write {\"kind\":\"plugin\",\"plugin\":\"dsh-tool-skill\"} or a skill invocation\n",
        ),
    ];
    // The output caps, and the step interface only in a pre-step.
    let capped = [
        (
            scenario_with("many-messages", r#","count":1000"#, steps),
            "error: plugin call `pre-step` returned invalid output: it added 1000 messages; a pre-step may add at most 64\n",
        ),
        (
            scenario_with("big-text", r#","bytes":2000"#, steps),
            "error: plugin call `pre-step` returned invalid output: added message 1's content block 1 is 2000 bytes, over the cap of 1000 bytes per text\n",
        ),
        (
            scenario_with("step-outside", r#","on":"invoke""#, r#"[{"op":"invoke","name":"a-skill"}]"#),
            "error: plugin call `invoke` trapped: the plugin called `step.decide` outside a pre-step\n",
        ),
        (
            scenario_with("many-filters", r#","count":17"#, steps),
            "error: plugin call `pre-step` trapped: the plugin passed 17 source filters to `session.list-user-messages`; at most 16 are allowed\n",
        ),
        (
            scenario_with("other-skill", "", r#"[{"op":"invoke","name":"a-skill"}]"#),
            "error: plugin call `invoke` returned invalid output: the value is skill \"other-skill\", but the arguments asked for \"a-skill\"\n",
        ),
        (
            scenario_with("many-matches", "", r#"[{"op":"invoke","arguments":{"query":"a"}}]"#),
            "error: plugin call `invoke` returned invalid output: it returned 6 search matches; at most 5 are allowed\n",
        ),
        (
            scenario_with("bare-error", "", r#"[{"op":"invoke","name":"a-skill"}]"#),
            "error: plugin call `invoke` returned invalid output: a tool error must read `Error: <message>`\n",
        ),
        (
            scenario_named(
                "big-text-invoke",
                "big-text",
                r#","bytes":2000,"on":"invoke""#,
                r#"[{"op":"invoke","name":"a-skill"}]"#,
            ),
            "error: plugin call `invoke` returned invalid output: the text is 2000 bytes, over the cap of 1000 bytes per text\n",
        ),
    ];
    let exact = exact.map(|(mode, expected)| (scenario(mode), expected));
    for (scenario, expected) in exact.into_iter().chain(capped) {
        let (rust, node) = replay_in_both(&sandbox, &plugin, &scenario, &limits);
        let name = scenario.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!((rust.code, rust.stderr.as_str()), (Some(3), expected), "skill-host, {name}");
        assert_eq!((node.code, node.stderr.as_str()), (Some(3), expected), "node host, {name}");
    }
    // Traps: the engines describe them differently, but both say it trapped,
    // and both pass on the guest's panic message.
    for (mode, detail) in [("panic", "hostile plugin panicked on purpose"), ("stack", "")] {
        let (rust, node) = replay_in_both(&sandbox, &plugin, &scenario(mode), &limits);
        for (host, replay) in [("skill-host", &rust), ("node host", &node)] {
            assert_eq!(replay.code, Some(3), "{host}, mode {mode}: {}", replay.stderr);
            assert!(replay.stderr.starts_with("error: plugin call `pre-step` trapped: "), "{host}: {}", replay.stderr);
            assert!(replay.stderr.contains(detail), "{host}: {}", replay.stderr);
        }
    }
    // A `/a-skill` the user typed allows one injection: both hosts accept it.
    let inject = scenario("inject");
    let (rust, node) = replay_in_both(&sandbox, &plugin, &inject, &limits);
    assert_eq!(disagreement("inject", &inject, &rust, &node), None);
    assert_eq!(rust.code, Some(0), "{}", rust.stderr);
}

/// The hostile plugin through the drop-in for `@deepseek-ai/dsh-tool-skill`
/// (hosts/node/dsh), in a DeepSeek Harness built from its published
/// packages: each misbehaviour is stopped with its error, the session is
/// left as it was, and the harness's next call is served by a fresh instance.
#[test]
fn the_drop_in_stops_a_hostile_plugin_and_the_harness_keeps_serving() {
    let sandbox = Sandbox::new();
    let plugin = sandbox.path().join("hostile_plugin.wasm");
    std::fs::write(&plugin, HOSTILE).unwrap();
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
/// 300) content blocks all naming the same MiB: both hosts refuse to copy
/// that out of a guest capped at 64 MiB, in the same words, before the copy
/// is made (300 MiB would not even fit in the Node host's worker heap).
#[test]
fn both_hosts_bound_what_one_import_call_copies_out() {
    let sandbox = Sandbox::new();
    let scenario = sandbox.path().join("aliased.json");
    std::fs::write(&scenario, r#"{"steps":[{"op":"pre-step"}]}"#).unwrap();
    for blocks in [100, 300] {
        let plugin = sandbox.path().join(format!("aliased-{blocks}.wasm"));
        std::fs::write(&plugin, crate::handwritten::aliased(blocks).component()).unwrap();
        let (rust, node) = replay_in_both(&sandbox, &plugin, &scenario, &[]);
        let expected = "error: plugin call `pre-step` trapped: too much data is being copied between the host and the guest: \
                        fuel allocated for hostcalls has been exhausted\n";
        assert_eq!((rust.code, rust.stderr.as_str()), (Some(3), expected), "skill-host, {blocks} blocks");
        assert_eq!((node.code, node.stderr.as_str()), (Some(3), expected), "node host, {blocks} blocks");
    }
}

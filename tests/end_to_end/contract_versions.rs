//! Every released contract version loads: a plugin built against
//! `dsh:skill@0.1.0` (`tests/fixtures/plugin-v0-1`, from
//! `wit/released/0.1.0`) runs under today's host with its 0.1.0 behaviour,
//! through the library and through `skill-host --plugin`, every export and
//! import converted; the hostile plugin is a `0.2.0` one (its cases, in
//! `cross_host.rs` and the host's tests, run through the 0.2.0 conversions);
//! a version the host does not know is refused with the versions it runs.

use std::sync::Arc;

use serde_json::json;
use sha2::{Digest, Sha256};
use skill_host::providers::local::{LocalProvider, LocalRoots};
use skill_host::{ContractVersion, HostError, Plugin, SandboxLimits, SkillRegistry, ToolOutcome};

use crate::common::{Sandbox, path, plugin as embedded, repo_root, stderr, stdout};
use crate::handwritten::Guest;

static PLUGIN_V0_1: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/plugin_v0_1.wasm"));
static HOSTILE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hostile_plugin.wasm"));

/// `wit/released/0.2.0/world.wit`'s SHA-256, as released.
const RELEASED_0_2_0: &str = "f9ec91819d7e4f4fa3a45cfe9ba6c2b2bfa6e5d1752ff876606396bed48cff83";

/// `wit/released/0.3.0/world.wit`'s SHA-256, as released.
const RELEASED_0_3_0: &str = "53dba17b0485ca3d51445ad08e200c4c569718c46d0c5d44ef9df725ec944433";

/// The refusal of a version the host does not run, after `cannot load the plugin component: `.
const NOT_RUN: &str = "the component exports dsh:skill/plugin@0.5.0, but this host runs one that exports dsh:skill/plugin@0.4.0 or dsh:skill/plugin@0.3.0 or dsh:skill/plugin@0.2.0 or dsh:skill/plugin@0.1.0";

/// The example workspace's model-invocable skills, as the 0.1.0 plugin lists them.
const CATALOG: &str = "0.1.0 catalog: commit-message, release-notes, review-pr, triage-bug";

#[test]
fn a_0_1_0_plugin_runs_every_export_under_todays_host() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let plugin = Plugin::new(PLUGIN_V0_1, "{}", SandboxLimits::default()).expect("the 0.1.0 plugin loads");
    assert_eq!(plugin.contract_version(), ContractVersion::V0_1_0);
    assert_eq!(embedded().contract_version(), ContractVersion::CURRENT);

    // Exports with no imports: the definition, and a refused configuration.
    let definition = plugin.definition().unwrap();
    assert_eq!(definition.description, "Load a skill by name (a dsh:skill@0.1.0 plugin).");
    assert_eq!(definition.parameters["required"], json!(["name"]));
    match Plugin::new(PLUGIN_V0_1, r#"{"refuse":true}"#, SandboxLimits::default()) {
        Err(HostError::Config(message)) => assert_eq!(message, r#"this 0.1.0 plugin refuses {"refuse":true}"#),
        other => panic!("expected the plugin's refusal, got {:?}", other.err()),
    }

    // `invoke`: a 0.1.0 skill-result becomes the current value, its load recorded.
    let registry = Arc::new(SkillRegistry::new());
    registry.register_provider(Arc::new(LocalProvider::new(LocalRoots::default())));
    let cwd = Some(path(&workspace));
    match plugin.invoke(&registry, cwd, r#"{"name":"release-notes"}"#).unwrap() {
        ToolOutcome::Success { value, text, loaded } => {
            assert_eq!(value["name"], "release-notes");
            assert_eq!(value["provider"], "local");
            let content = value["content"].as_str().unwrap();
            assert!(content.starts_with("# Draft release notes"), "{content}");
            assert_eq!(text, format!("0.1.0 loaded release-notes:\n{content}"));
            let loaded = loaded.expect("the 0.1.0 plugin records its load");
            assert_eq!((loaded.name.as_str(), loaded.provider.as_str()), ("release-notes", "local"));
            assert!(loaded.body_digest.is_some_and(|digest| digest.starts_with("sha256:")));
        }
        other => panic!("expected a skill, got {other:?}"),
    }
    assert_eq!(
        plugin.invoke(&registry, cwd, r#"{"name":"no-such-skill"}"#).unwrap().text(),
        "Error: no skill named no-such-skill"
    );

    // `system-prompt` (registry.list-skills) and `expand`.
    let prompt = plugin.system_prompt(&registry, cwd).unwrap();
    assert!(prompt.starts_with("0.1.0 skills: ") && prompt.contains("deploy-production"), "{prompt}");
    assert_eq!(plugin.expand(&registry, cwd, "/skill:review-pr").unwrap(), "0.1.0 expanded: /skill:review-pr");
}

#[test]
fn skill_host_runs_a_0_1_0_plugin_from_a_file() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let component = sandbox.path().join("plugin-v0-1.wasm");
    std::fs::write(&component, PLUGIN_V0_1).unwrap();
    let session = sandbox.path().join("session.jsonl");
    let step =
        || sandbox.run(&["--plugin", path(&component), "step", "--session", path(&session), "--cwd", path(&workspace)]);

    // The pre-step reads the registry's snapshot and the session (through
    // the 0.1.0 records of both), and adds its catalog once.
    let first = step();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert_eq!(stdout(&first).trim_end(), CATALOG);
    let second = step();
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    assert_eq!(stdout(&second), "", "the catalog is shown: the 0.1.0 plugin found it in the session");

    let load = sandbox.run(&["--plugin", path(&component), "load", "commit-message", "--cwd", path(&workspace)]);
    assert_eq!(load.status.code(), Some(0), "{}", stderr(&load));
    assert!(stdout(&load).starts_with("0.1.0 loaded commit-message:\n"), "{}", stdout(&load));
}

#[test]
fn the_wit_of_each_accepted_version_is_printed_as_released() {
    let sandbox = Sandbox::new();
    for (argument, file) in [
        (None, "wit/world.wit"),
        (Some("0.4.0"), "wit/world.wit"),
        (Some("0.3.0"), "wit/released/0.3.0/world.wit"),
        (Some("0.2.0"), "wit/released/0.2.0/world.wit"),
        (Some("0.1.0"), "wit/released/0.1.0/world.wit"),
    ] {
        let mut args = vec!["component", "--wit"];
        args.extend(argument);
        let output = sandbox.run(&args);
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(stdout(&output), std::fs::read_to_string(repo_root().join(file)).unwrap(), "{args:?}");
    }
    for version in ContractVersion::ACCEPTED {
        let released = version.wit();
        assert!(released.contains(&format!("\npackage dsh:skill@{};\n", version.number())), "{version:?}");
    }
    // A released WIT is never edited (a change is a new version): each as released.
    for (file, digest) in [
        ("wit/released/0.1.0/world.wit", "827f3b06f2fdd03eb1d3b2e05f9e9fe45ef89b2fa5a89daa388b3a0a29791fda"),
        ("wit/released/0.2.0/world.wit", RELEASED_0_2_0),
        ("wit/released/0.3.0/world.wit", RELEASED_0_3_0),
    ] {
        let released = std::fs::read(repo_root().join(file)).unwrap();
        assert_eq!(
            Sha256::digest(&released).iter().map(|byte| format!("{byte:02x}")).collect::<String>(),
            digest,
            "{file} changed; it must stay as released"
        );
    }
    let unknown = sandbox.run(&["component", "--wit", "0.5.0"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(
        stderr(&unknown).trim_end(),
        "error: this host runs no contract version \"0.5.0\"; it runs 0.4.0, 0.3.0, 0.2.0, 0.1.0"
    );
}

#[test]
fn a_contract_version_the_host_does_not_run_is_refused_with_those_it_does() {
    let future = Guest::default().component_at("0.5.0");
    let error = Plugin::new(&future, "{}", SandboxLimits::default()).err().expect("0.5.0 is refused");
    assert_eq!(error.to_string(), format!("cannot load the plugin component: {NOT_RUN}"));
    // The same plugin at a version the host runs loads: only the version was refused.
    for (number, version) in [("0.3.0", ContractVersion::V0_3_0), ("0.2.0", ContractVersion::V0_2_0)] {
        let runs = Guest::default().component_at(number);
        assert_eq!(Plugin::new(&runs, "{}", SandboxLimits::default()).unwrap().contract_version(), version);
    }
    // The hostile plugin, built against wit/released/0.2.0, is a 0.2.0 one.
    let hostile = Plugin::new(HOSTILE, r#"{"mode":"none"}"#, SandboxLimits::default()).unwrap();
    assert_eq!(hostile.contract_version(), ContractVersion::V0_2_0);
}

/// The Node host runs the same 0.1.0 component with the same results: the
/// trace skill-host records of a scenario of pre-steps, a compaction and
/// loads replays in the Node host (hosts/node/trace.mjs) with no mismatch.
#[test]
fn both_hosts_replay_a_0_1_0_plugin_alike() {
    let sandbox = Sandbox::new();
    let component = sandbox.path().join("plugin-v0-1.wasm");
    std::fs::write(&component, PLUGIN_V0_1).unwrap();
    let scenario = sandbox.path().join("v0-1.json");
    let skill = |name: &str, invocable: bool| {
        json!({"name": name, "description": format!("{name} skill."), "content": format!("{name} body."),
               "invocation": {"modelInvocable": invocable, "userInvocable": true}})
    };
    let steps = json!([
        {"op": "pre-step", "messages": [{"role": "user", "content": [{"type": "text", "text": "hello"}], "source": {"kind": "user"}}]},
        {"op": "pre-step", "messages": []},
        {"op": "invoke", "name": "b-skill"},
        {"op": "invoke", "name": "missing"},
        {"op": "compact"},
        {"op": "pre-step", "messages": []},
    ]);
    let text = json!({
        "providers": [{"name": "memory", "skills": [skill("b-skill", true), skill("a-skill", true), skill("hidden", false)]}],
        "steps": steps,
    });
    std::fs::write(&scenario, text.to_string()).unwrap();
    let (rust, trace) = crate::cross_host::record_trace(&sandbox, &component, &[], &scenario);
    assert_eq!(rust.code, Some(0), "{}", rust.stderr);
    let replayed: serde_json::Value = serde_json::from_str(&rust.stdout).unwrap();
    let steps = replayed["steps"].as_array().unwrap();
    assert_eq!(steps[0]["messages"][1]["text"], "0.1.0 catalog: a-skill, b-skill");
    assert_eq!(steps[1]["messages"], json!([]), "the catalog is shown");
    assert_eq!(steps[2]["ok"]["name"], "b-skill");
    assert_eq!(steps[2]["text"], "0.1.0 loaded b-skill:\nb-skill body.");
    assert_eq!(steps[3]["error"], "Error: no skill named missing");
    assert_eq!(steps[5]["messages"][0]["text"], "0.1.0 catalog: a-skill, b-skill", "compaction hid it");
    // Every export's call and import is in the trace, in the current version's terms.
    let recorded: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert_eq!(recorded["contract"], "0.1.0");
    let calls: Vec<&str> =
        recorded["calls"].as_array().unwrap().iter().map(|call| call["call"].as_str().unwrap()).collect();
    assert_eq!(calls, ["configure", "pre-step", "pre-step", "invoke", "invoke", "pre-step"]);
    let node = crate::cross_host::replay_trace(&trace, &component);
    assert_eq!((node.code, node.stdout.as_str(), node.stderr.as_str()), (Some(0), "", ""));
}

/// `bytes` with every `from` replaced by `to`, of the same length.
fn patched(bytes: &[u8], from: &str, to: &str) -> Vec<u8> {
    let (from, to) = (from.as_bytes(), to.as_bytes());
    assert_eq!(from.len(), to.len());
    let mut out = bytes.to_vec();
    let mut replaced = 0;
    let mut at = 0;
    while let Some(found) = out[at..].windows(from.len()).position(|window| window == from) {
        out[at + found..at + found + from.len()].copy_from_slice(to);
        at += found + from.len();
        replaced += 1;
    }
    assert!(replaced > 0, "no {} in the component", String::from_utf8_lossy(from));
    out
}

/// Loads `component` in both hosts, skill-host replaying a scenario and the
/// Node host a trace; both must refuse to load it.
fn both_refuse(sandbox: &Sandbox, component: &[u8]) -> (crate::cross_host::Replay, crate::cross_host::Replay) {
    let plugin = sandbox.path().join("refused.wasm");
    std::fs::write(&plugin, component).unwrap();
    let scenario = sandbox.path().join("refused.json");
    std::fs::write(&scenario, json!({"steps": [{"op": "invoke", "name": "x"}]}).to_string()).unwrap();
    let (rust, _) = crate::cross_host::record_trace(sandbox, &plugin, &[], &scenario);
    let trace = sandbox.path().join("refused.trace.json");
    let limits = json!({"timeout_ms": 1000, "memory_bytes": 67108864, "max_added_messages": 64,
                        "max_text_bytes": 16777216, "max_output_bytes": 33554432});
    let calls = json!([{"instance": 0, "call": "configure", "args": {"config": "{}"}, "imports": [],
                        "returned": {"Ok": null}, "outcome": {"ok": null}}]);
    let text = json!({"trace": 1, "contract": "0.4.0", "config": "{}", "limits": limits, "calls": calls});
    std::fs::write(&trace, text.to_string()).unwrap();
    let node = crate::cross_host::replay_trace(&trace, &plugin);
    for (host, replay) in [("skill-host", &rust), ("node", &node)] {
        assert_eq!(replay.code, Some(3), "{host}: {}", replay.stderr);
        assert_eq!(replay.stdout, "", "{host} printed a replay");
    }
    (rust, node)
}

/// Both hosts refuse a component of a contract version they do not run
/// when they load it, with the same text (not a trap in its first call).
#[test]
fn both_hosts_refuse_a_version_they_do_not_run_alike() {
    let sandbox = Sandbox::new();
    let (rust, node) = both_refuse(&sandbox, &Guest::default().component_at("0.5.0"));
    assert_eq!(rust.stderr.trim_end(), format!("error: cannot load the plugin component: {NOT_RUN}"));
    assert_eq!(node.stderr, rust.stderr);
}

/// A component that exports one version's plugin interface and imports
/// another's (the real plugin with only its export renamed to 0.1.0) is
/// refused by both hosts when they load it: each links the imports of the
/// version it exports. skill-host's text goes on with the first function its
/// linker found missing, which the Node host does not name.
#[test]
fn both_hosts_refuse_a_component_importing_another_version_than_it_exports() {
    let sandbox = Sandbox::new();
    let current = sandbox.path().join("plugin.wasm");
    let output = sandbox.run(&["component", "--output", path(&current)]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let mixed = patched(&std::fs::read(&current).unwrap(), "dsh:skill/plugin@0.4.0", "dsh:skill/plugin@0.2.0");
    let (rust, node) = both_refuse(&sandbox, &mixed);
    let refusal = "error: cannot load the plugin component: component imports instance `dsh:skill/registry@0.4.0`, but a matching implementation was not found in the linker";
    assert!(rust.stderr.starts_with(refusal), "{}", rust.stderr);
    assert_eq!(node.stderr.trim_end(), refusal);
}

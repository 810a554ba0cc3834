//! The host library with the real component: the tool definition, aborts,
//! and the sandbox containing a plugin that misbehaves on purpose.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use skill_host::message::{self, user_source};
use skill_host::session::{SessionHeader, SessionLog};
use skill_host::{
    Decision, HostError, Plugin, RuntimeSkill, SandboxLimits, SkillRegistry, StepInput, StepOutcome, ToolOutcome,
    run_step,
};

use crate::common::plugin;

static HOSTILE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hostile_plugin.wasm"));

fn registry() -> Arc<SkillRegistry> {
    let registry = Arc::new(SkillRegistry::new());
    registry.register_runtime(RuntimeSkill::new("triage-bug", "Triage a bug report.", "Steps.")).unwrap();
    registry
}

fn session() -> Arc<Mutex<SessionLog>> {
    Arc::new(Mutex::new(SessionLog::in_memory(SessionHeader::new(Some("/workspace".to_owned())))))
}

fn input() -> StepInput {
    StepInput { cwd: Some("/workspace".to_owned()), ..StepInput::default() }
}

#[test]
fn the_tool_definition_is_exact() {
    let definition = plugin().definition().unwrap();
    assert_eq!(definition.name, "skill");
    assert_eq!(
        definition.description,
        "Load the full instructions for an available skill. Call this with the exact skill name from the session skill catalog before acting on a task that names or clearly matches that skill."
    );
    assert_eq!(
        definition.parameters,
        json!({"type":"object","properties":{"name":{"type":"string","description":"The exact skill name from the available skills list."}},"required":["name"]})
    );
}

#[test]
fn an_aborted_step_is_reported_and_appends_nothing() {
    let session = session();
    let abort = Arc::new(AtomicBool::new(true));
    let input = StepInput { abort: Some(abort), ..input() };
    let outcome = run_step(plugin(), &registry(), &session, &input, Decision::Enter(vec![])).unwrap();
    assert_eq!(outcome, StepOutcome::Aborted);
    assert_eq!(session.lock().unwrap().next_seq(), 0);
}

#[test]
fn proposed_messages_come_back_as_proposed_with_their_ids() {
    let session = session();
    let proposed = message::user_message(user_source(), "hello");
    let outcome = run_step(plugin(), &registry(), &session, &input(), Decision::Enter(vec![proposed.clone()])).unwrap();
    let StepOutcome::Decided(Decision::Enter(messages)) = outcome else { panic!("{outcome:?}") };
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0], proposed);
    assert_eq!(messages[1]["source"], json!({"kind": "plugin", "plugin": "dsh-tool-skill"}));
    assert_eq!(session.lock().unwrap().next_seq(), 2);
}

#[test]
fn the_tool_reads_the_registry_through_the_sandbox() {
    let outcome = plugin().invoke(&registry(), Some("/workspace"), r#"{"name":"triage-bug"}"#).unwrap();
    let ToolOutcome::Success { value, text } = outcome else { panic!("{outcome:?}") };
    assert_eq!(value, json!({"name": "triage-bug", "provider": "runtime", "content": "Steps."}));
    assert_eq!(
        text,
        "<skill_content name=\"triage-bug\">\n<skill_resources>\nResources for this skill are managed by provider \"runtime\".\nLoad referenced resources only as needed.\n</skill_resources>\n\n<skill_instructions>\nSteps.\n</skill_instructions>\n</skill_content>"
    );
}

fn hostile(mode: &str, limits: SandboxLimits) -> Plugin {
    Plugin::new(HOSTILE, &json!({ "mode": mode }).to_string(), limits).expect("the hostile plugin loads")
}

/// Runs a hostile pre-step and checks that the real plugin still serves the
/// next call and the session is untouched.
fn contained(mode: &str, limits: SandboxLimits) -> HostError {
    let session = session();
    let registry = registry();
    let proposed = Decision::Enter(vec![message::user_message(user_source(), "hi")]);
    let error = run_step(&hostile(mode, limits), &registry, &session, &input(), proposed).unwrap_err();
    assert_eq!(session.lock().unwrap().next_seq(), 0, "{mode}: the session must be untouched");
    let next = run_step(plugin(), &registry, &session, &input(), Decision::Enter(vec![])).unwrap();
    assert!(matches!(next, StepOutcome::Decided(Decision::Enter(ref messages)) if messages.len() == 1), "{next:?}");
    error
}

#[test]
fn an_endless_loop_stops_at_the_deadline() {
    let limits = SandboxLimits { timeout: Duration::from_millis(50), ..SandboxLimits::default() };
    let started = Instant::now();
    let error = contained("loop", limits);
    assert!(matches!(error, HostError::Timeout { call: "pre-step", .. }), "{error:?}");
    assert_eq!(error.to_string(), "plugin call `pre-step` exceeded its deadline of 50 ms");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[test]
fn unbounded_allocation_stops_at_the_memory_cap() {
    let limits = SandboxLimits { memory_bytes: 16 * 1024 * 1024, ..SandboxLimits::default() };
    let error = contained("alloc", limits);
    assert!(
        matches!(error, HostError::MemoryLimit { call: "pre-step", limit_bytes } if limit_bytes == 16 << 20),
        "{error:?}"
    );
    assert_eq!(error.to_string(), "plugin call `pre-step` exceeded its memory cap of 16 MiB");
}

#[test]
fn a_guest_panic_reports_its_message() {
    let error = contained("panic", SandboxLimits::default());
    let HostError::Trap { call, stderr, .. } = &error else { panic!("{error:?}") };
    assert_eq!(*call, "pre-step");
    assert!(stderr.contains("hostile plugin panicked on purpose"), "{stderr}");
    assert!(error.to_string().contains("hostile plugin panicked on purpose"), "{error}");
}

#[test]
fn stack_exhaustion_is_a_trap() {
    let error = contained("stack", SandboxLimits::default());
    let HostError::Trap { reason, .. } = &error else { panic!("{error:?}") };
    assert!(reason.contains("stack"), "{reason}");
}

#[test]
fn outputs_the_plugin_may_not_produce_are_refused() {
    for (mode, reason) in [
        (
            "forge",
            "an added message has source {\"kind\":\"user\"}; the plugin may only write {\"kind\":\"plugin\",\"plugin\":\"dsh-tool-skill\"} or a skill invocation",
        ),
        ("two-catalogs", "more than one catalog was added"),
        ("reject", "the plugin may not turn an enter into a reject"),
        ("inject", "skill \"a-skill\" was injected without a user's /a-skill"),
        (
            "tamper",
            "an added message has source {\"kind\":\"user\"}; the plugin may only write {\"kind\":\"plugin\",\"plugin\":\"dsh-tool-skill\"} or a skill invocation",
        ),
    ] {
        let error = contained(mode, SandboxLimits::default());
        assert_eq!(error.to_string(), format!("plugin call `pre-step` returned invalid output: {reason}"), "{mode}");
    }
}

//! The host library with the real component: the tool definition, aborts,
//! and proposed messages. The sandbox against a plugin that misbehaves on
//! purpose is `hostile.rs`.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde_json::json;
use skill_host::message::{self, user_source};
use skill_host::session::{SessionHeader, SessionLog, SharedSession};
use skill_host::{Decision, RuntimeSkill, SkillRegistry, StepInput, StepOutcome, ToolOutcome, run_step};

use crate::common::plugin;

fn registry() -> Arc<SkillRegistry> {
    let registry = Arc::new(SkillRegistry::new());
    registry.register_runtime(RuntimeSkill::new("triage-bug", "Triage a bug report.", "Steps.")).unwrap();
    registry
}

fn session() -> SharedSession {
    SharedSession::new(SessionLog::in_memory(SessionHeader::new(Some("/workspace".to_owned()))))
}

fn input() -> StepInput {
    StepInput { cwd: Some("/workspace".into()), ..StepInput::default() }
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
fn another_configuration_of_the_same_component_answers_as_configured_and_is_refused_alike() {
    let searching = plugin().with_config(r#"{"skillSearch":true}"#).unwrap();
    assert!(searching.definition().unwrap().parameters["properties"]["query"].is_object());
    // The plugin it was made from keeps its own configuration.
    assert!(plugin().definition().unwrap().parameters["properties"].get("query").is_none());
    let refused = plugin().with_config(r#"{"skillSearch":1}"#).err().expect("a refused configuration");
    assert_eq!(refused.to_string(), "tool-skill: skillSearch must be a boolean");
}

#[test]
fn an_aborted_step_is_reported_and_appends_nothing() {
    let session = session();
    let abort = Arc::new(AtomicBool::new(true));
    let input = StepInput { abort: Some(abort), ..input() };
    let outcome = run_step(plugin(), &registry(), &session, &input, Decision::Enter(vec![])).unwrap();
    assert_eq!(outcome, StepOutcome::Aborted);
    assert_eq!(session.lock().next_seq(), 0);
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
    assert_eq!(session.lock().next_seq(), 2);
}

#[test]
fn the_tool_reads_the_registry_through_the_sandbox() {
    let outcome = plugin().invoke(&registry(), Some("/workspace"), r#"{"name":"triage-bug"}"#).unwrap();
    let ToolOutcome::Success { value, text, .. } = outcome else { panic!("{outcome:?}") };
    assert_eq!(value, json!({"name": "triage-bug", "provider": "runtime", "content": "Steps."}));
    assert_eq!(
        text,
        "<skill_content name=\"triage-bug\">\n<skill_resources>\nResources for this skill are managed by provider \"runtime\".\nLoad referenced resources only as needed.\n</skill_resources>\n\n<skill_instructions>\nSteps.\n</skill_instructions>\n</skill_content>"
    );
}

//! Tests of the user-invocation injection: `/name` in a user's message.

use super::*;

fn loaded(name: &str, user_invocable: bool, model_invocable: bool) -> SkillDefinition {
    SkillDefinition {
        name: name.to_owned(),
        description: "D.".to_owned(),
        invocation: InvocationPolicy { model_invocable, user_invocable },
        provider: "runtime".to_owned(),
        resource_base: None,
        path: None,
        content: format!("{name} body"),
    }
}

fn injection(name: &str) -> Message {
    Message {
        source: format!(r#"{{"kind":"skill-invocation","name":"{name}","form":"instructions"}}"#),
        content: vec![ContentBlock::Text(format!(
            "<skill_content name=\"{name}\">\n<skill_resources>\nResources for this skill are managed by provider \"runtime\".\nLoad referenced resources only as needed.\n</skill_resources>\n\n<skill_instructions>\n{name} body\n</skill_instructions>\n</skill_content>"
        ))],
    }
}

fn with_user_invocation(registry: &FakeRegistry, proposed: Vec<Message>) -> Result<Decision, StepError> {
    let config = Config { user_invocation: true, ..Config::default() };
    applied(
        &config,
        &mut Memory::default(),
        &context(ToolView::Visible),
        Decision::Enter(proposed),
        registry,
        &FakeSession::default(),
    )
}

#[test]
fn a_users_slash_name_injects_the_skill_after_everything_else() {
    let registry = FakeRegistry::with(&[("a", "One.")]);
    *registry.loaded.borrow_mut() =
        vec![loaded("a", true, true), loaded("hidden", true, false), loaded("model-only", false, true)];
    let proposed = vec![user("use /hidden and /a, then /a again, /model-only, /unknown")];
    let Ok(Decision::Enter(messages)) = with_user_invocation(&registry, proposed.clone()) else { panic!() };
    assert_eq!(
        messages,
        vec![
            proposed[0].clone(),
            catalog_of(&[("a", "One.")]).initial_message(true),
            injection("hidden"),
            injection("a"),
        ]
    );
}

#[test]
fn user_invocation_is_off_by_default_and_never_touches_a_reject() {
    let registry = FakeRegistry::with(&[]);
    *registry.loaded.borrow_mut() = vec![loaded("a", true, true)];
    assert_eq!(run(&registry, &FakeSession::default(), vec![user("/a")]), vec![user("/a")]);
    let reject = Decision::Reject;
    let config = Config { user_invocation: true, ..Config::default() };
    let outcome = applied(
        &config,
        &mut Memory::default(),
        &context(ToolView::Visible),
        reject.clone(),
        &registry,
        &FakeSession::default(),
    );
    assert_eq!(outcome, Ok(reject));
}

#[test]
fn injections_survive_an_incomplete_snapshot_and_a_hidden_tool() {
    let registry = FakeRegistry::with(&[("a", "One.")]);
    registry.snapshot.borrow_mut().as_mut().unwrap().complete = false;
    *registry.loaded.borrow_mut() = vec![loaded("a", true, true)];
    assert_eq!(
        with_user_invocation(&registry, vec![user("/a")]),
        Ok(Decision::Enter(vec![user("/a"), injection("a")]))
    );
    let config = Config { user_invocation: true, ..Config::default() };
    let outcome = applied(
        &config,
        &mut Memory::default(),
        &context(ToolView::Hidden),
        Decision::Enter(vec![user("/a")]),
        &registry,
        &FakeSession::default(),
    );
    assert_eq!(outcome, Ok(Decision::Enter(vec![user("/a"), injection("a")])));
}

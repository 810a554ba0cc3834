//! Tests of the user-invocation injection: `/name` in a user's message.

use super::*;
use crate::gesture::MAX_INVOKED_SKILLS;

fn loaded(name: &str, user_invocable: bool, model_invocable: bool) -> SkillDefinition {
    SkillDefinition {
        body_digest: None,
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

fn note(names: &[String]) -> Message {
    let listed: Vec<String> = names.iter().map(|name| format!("/{name}")).collect();
    Message {
        source: r#"{"kind":"skill-invocation","form":"not-loaded"}"#.to_owned(),
        content: vec![ContentBlock::Text(format!(
            "Not loaded: {}. At most 16 user-invoked skills are loaded at once; ask the user to invoke the others in a later message.",
            listed.join(", ")
        ))],
    }
}

/// `count` user-invocable skills `s1`…, loadable; the message names them in
/// reverse order, after an unknown name and a skill that is not
/// user-invocable, and names one of them twice.
fn many_named(count: usize) -> (FakeRegistry, Vec<String>, Message) {
    let registry = FakeRegistry::with(&[("a", "One.")]);
    let names: Vec<String> = (1..=count).rev().map(|index| format!("s{index}")).collect();
    let mut skills: Vec<_> = names.iter().map(|name| loaded(name, true, true)).collect();
    skills.push(loaded("model-only", false, true));
    *registry.loaded.borrow_mut() = skills;
    let text = format!(
        "/unknown /model-only {} /{}",
        names.iter().map(|name| format!("/{name}")).collect::<Vec<_>>().join(" "),
        names[0]
    );
    (registry, names, user(&text))
}

#[test]
fn at_most_sixteen_skills_are_injected_and_one_note_names_the_rest() {
    let (registry, names, proposed) = many_named(70);
    let Ok(Decision::Enter(messages)) = with_user_invocation(&registry, vec![proposed.clone()]) else { panic!() };
    let mut expected = vec![proposed, catalog_of(&[("a", "One.")]).initial_message(true)];
    // First-seen order; the unknown name and the skill that is not
    // user-invocable come first but take no place.
    expected.extend(names[..16].iter().map(|name| injection(name)));
    expected.push(note(&names[16..]));
    assert_eq!(messages, expected);
    assert_eq!(names[16], "s54");
    assert_eq!(names.len() - 16, 54);
}

#[test]
fn exactly_sixteen_skills_are_injected_without_a_note() {
    let (registry, names, proposed) = many_named(MAX_INVOKED_SKILLS);
    let Ok(Decision::Enter(messages)) = with_user_invocation(&registry, vec![proposed.clone()]) else { panic!() };
    let mut expected = vec![proposed, catalog_of(&[("a", "One.")]).initial_message(true)];
    expected.extend(names.iter().map(|name| injection(name)));
    assert_eq!(messages, expected);
    // One more, and it is named in the note.
    let (registry, names, proposed) = many_named(MAX_INVOKED_SKILLS + 1);
    let Ok(Decision::Enter(messages)) = with_user_invocation(&registry, vec![proposed]) else { panic!() };
    assert_eq!(messages.last(), Some(&note(&names[16..])));
    assert_eq!(messages.len(), 1 + 1 + 16 + 1);
}

#[test]
fn names_that_are_not_injected_are_not_counted_and_not_noted() {
    // Seventeen loadable skills, but the first is not user-invocable and the
    // second loads under another name: fifteen are injected, and no note.
    let registry = FakeRegistry::with(&[]);
    let names: Vec<String> = (1..=17).map(|index| format!("s{index}")).collect();
    let mut skills: Vec<_> = names.iter().map(|name| loaded(name, true, true)).collect();
    skills[0].invocation.user_invocable = false;
    skills[1].name = "elsewhere".to_owned();
    *registry.loaded.borrow_mut() = skills;
    let text: Vec<String> = names.iter().map(|name| format!("/{name}")).collect();
    let proposed = user(&format!("/missing {}", text.join(" ")));
    let Ok(Decision::Enter(messages)) = with_user_invocation(&registry, vec![proposed.clone()]) else { panic!() };
    let mut expected = vec![proposed];
    expected.extend(names[2..].iter().map(|name| injection(name)));
    assert_eq!(messages, expected);
}

#[test]
fn the_most_a_pre_step_adds_stays_well_within_the_hosts_default_cap() {
    // 64 is the hosts' default cap on added messages:
    // `OutputLimits::default().max_added_messages` in
    // host-runner/src/sandbox/mod.rs (the tests in host-runner/src/plugin.rs
    // check it against these constants) and
    // `DEFAULT_OUTPUT_LIMITS.maxAddedMessages` in hosts/node/src/output.mjs.
    // A catalog, the loaded-skill notices and their reminder, every
    // injection and the note must fit in half of it.
    const HOST_DEFAULT_MAX_ADDED_MESSAGES: usize = 64;
    assert_eq!(
        skill_rules::MAX_PLUGIN_ADDED_MESSAGES,
        1 + crate::loaded::MAX_SKILL_NOTICES + 1 + MAX_INVOKED_SKILLS + 1
    );
    const { assert!(2 * skill_rules::MAX_PLUGIN_ADDED_MESSAGES <= HOST_DEFAULT_MAX_ADDED_MESSAGES) };
    // The case of the bug: seventy skills named, with a catalog to publish.
    let (registry, _, proposed) = many_named(70);
    let Ok(Some(decided)) = super::pre_step(
        &Config { user_invocation: true, ..Config::default() },
        &mut Memory::default(),
        &context(ToolView::Visible),
        Decision::Enter(vec![proposed]),
        &registry,
        &FakeSession::default(),
    ) else {
        panic!()
    };
    // Without loaded skills: the catalog, every injection and the note.
    let added = decided.iter().filter(|message| matches!(message, DecidedMessage::Added(_))).count();
    assert_eq!(added, 1 + MAX_INVOKED_SKILLS + 1);
}

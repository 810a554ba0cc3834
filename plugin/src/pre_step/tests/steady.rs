//! Tests of what the pre-step remembers between steps: the steady step
//! settled from memory, and when it is not.

use super::*;

#[test]
fn a_steady_step_with_remembered_state_copies_no_skills_and_no_message_content() {
    let (registry, mut session) = published_skill_a();
    for _ in 0..20 {
        session.push(user("chatter"));
    }
    let mut memory = Memory::default();
    for _ in 0..3 {
        let outcome = applied(
            &Config::default(),
            &mut memory,
            &context(ToolView::Visible),
            Decision::Enter(vec![]),
            &registry,
            &session,
        );
        assert_eq!(outcome, Ok(Decision::Enter(vec![])));
    }
    assert_eq!(registry.snapshots_taken.get(), 3);
    assert_eq!(registry.unchanged.get(), 2, "the skills crossed the boundary once");
    assert_eq!(session.contents_read.get(), 1, "the catalog message was read once");
    // A new revision is rebuilt, not served from memory.
    registry.snapshot.borrow_mut().as_mut().unwrap().revision = 2;
    registry.snapshot.borrow_mut().as_mut().unwrap().skills[0].description = "Changed.".to_owned();
    let outcome = applied(
        &Config::default(),
        &mut memory,
        &context(ToolView::Visible),
        Decision::Enter(vec![]),
        &registry,
        &session,
    );
    assert_eq!(outcome, Ok(Decision::Enter(vec![catalog_of(&[("a", "Changed.")]).replacement_message(false)])));
}

#[test]
fn the_hosts_revision_and_history_version_spare_every_call_when_nothing_changed() {
    let (registry, mut session) = published_skill_a();
    let mut memory = Memory::default();
    let mut context = context(ToolView::Visible);
    let step = |memory: &mut Memory, context: &StepContext, session: &FakeSession| {
        applied(&Config::default(), memory, context, Decision::Enter(vec![]), &registry, session)
    };
    assert_eq!(step(&mut memory, &context, &session), Ok(Decision::Enter(vec![])));
    assert_eq!((registry.snapshots_taken.get(), session.pages_read.get()), (1, 1));
    // The host now reports the revision the plugin holds, and the same history.
    context.registry_revision = Some(1);
    assert_eq!(step(&mut memory, &context, &session), Ok(Decision::Enter(vec![])));
    assert_eq!((registry.snapshots_taken.get(), session.pages_read.get()), (1, 1), "no call crossed");
    // Compaction hides the catalog: a new history version makes the plugin look again.
    session.hidden.insert(0);
    context.history_version = 1;
    assert_eq!(
        step(&mut memory, &context, &session),
        Ok(Decision::Enter(vec![catalog_of(&[("a", "One.")]).replacement_message(false)]))
    );
    assert_eq!(session.pages_read.get(), 2);
    // A revision the plugin never saw is asked for.
    context.registry_revision = Some(99);
    step(&mut memory, &context, &session).unwrap();
    assert_eq!(registry.snapshots_taken.get(), 2);
}

#[test]
fn a_step_decided_from_memory_still_stops_on_abort_retires_for_a_hidden_tool_and_reads_proposals() {
    let registry = FakeRegistry::with(&[("a", "One.")]);
    let mut session = FakeSession::default();
    let published = catalog_of(&[("a", "One.")]).initial_message(false);
    session.push(published.clone());
    let mut memory = Memory::default();
    let steady = steady_context();
    let mut step = |context: &StepContext, proposed: Vec<Message>| {
        applied(&Config::default(), &mut memory, context, Decision::Enter(proposed), &registry, &session)
    };
    // The first step reads the registry and the history and remembers that
    // the step is current; the next ones only compare.
    for _ in 0..3 {
        assert_eq!(step(&steady, vec![]), Ok(Decision::Enter(vec![])));
    }
    // None of these is that steady step.
    assert_eq!(step(&StepContext { aborted: true, ..steady }, vec![]), Err(StepError::Aborted));
    assert_eq!(
        step(&StepContext { tool_view: ToolView::Hidden, ..steady }, vec![]),
        Ok(Decision::Enter(vec![catalog_of(&[]).replacement_message(false)]))
    );
    assert_eq!(step(&steady, vec![user("hi"), published]), Ok(Decision::Enter(vec![user("hi")])));
    assert_eq!(step(&steady, vec![]), Ok(Decision::Enter(vec![])));
}

#[test]
fn only_the_same_session_history_version_and_revision_is_settled_from_memory() {
    let registry = FakeRegistry::with(&[("a", "One.")]);
    let mut seven = FakeSession::default();
    seven.push(catalog_of(&[("a", "One.")]).initial_message(false));
    let eight = FakeSession::default();
    let mut memory = Memory::default();
    let steady = steady_context();
    let mut step = |context: &StepContext, session: &FakeSession| {
        applied(&Config::default(), &mut memory, context, Decision::Enter(vec![]), &registry, session)
    };
    for _ in 0..3 {
        assert_eq!(step(&steady, &seven), Ok(Decision::Enter(vec![])));
    }
    // Another session, at the same history version and revision, shows no catalog yet.
    assert_eq!(
        step(&StepContext { session: 8, ..steady }, &eight),
        Ok(Decision::Enter(vec![catalog_of(&[("a", "One.")]).initial_message(false)]))
    );
    // The registry moves on and the history does not: a replacement, as
    // often as the host asks without appending it.
    if let Ok(snapshot) = &mut *registry.snapshot.borrow_mut() {
        snapshot.revision = 2;
        snapshot.skills[0].description = "Changed.".to_owned();
    }
    let moved = StepContext { registry_revision: Some(2), ..steady };
    for _ in 0..3 {
        assert_eq!(
            step(&moved, &seven),
            Ok(Decision::Enter(vec![catalog_of(&[("a", "Changed.")]).replacement_message(false)]))
        );
    }
    // Back at the revision the session shows.
    assert_eq!(step(&steady, &seven), Ok(Decision::Enter(vec![])));
}

#[test]
fn a_catalog_of_another_revision_than_the_hosts_settles_nothing_for_later_steps() {
    // The host says it holds revision 2, but the registry answers with 1
    // (it moved between the two): the step is current for revision 1, the
    // catalog's, not for the revision the host named.
    let (registry, session) = published_skill_a();
    let mut memory = Memory::default();
    let claimed = StepContext { registry_revision: Some(2), ..steady_context() };
    let mut step = || applied(&Config::default(), &mut memory, &claimed, Decision::Enter(vec![]), &registry, &session);
    assert_eq!(step(), Ok(Decision::Enter(vec![])));
    // Revision 2 arrives, with another description: it must be published.
    if let Ok(snapshot) = &mut *registry.snapshot.borrow_mut() {
        snapshot.revision = 2;
        snapshot.skills[0].description = "Changed.".to_owned();
    }
    assert_eq!(step(), Ok(Decision::Enter(vec![catalog_of(&[("a", "Changed.")]).replacement_message(false)])));
}

#[test]
fn a_steady_step_stays_steady_after_its_catalog_and_history_are_forgotten() {
    let (registry, session) = published_skill_a();
    let mut memory = Memory::default();
    let steady = steady_context();
    for _ in 0..2 {
        let decided = applied(&Config::default(), &mut memory, &steady, Decision::Enter(vec![]), &registry, &session);
        assert_eq!(decided, Ok(Decision::Enter(vec![])));
    }
    assert_eq!((registry.snapshots_taken.get(), session.pages_read.get()), (1, 1));
    // Sixteen other revisions push revision 1's catalog out.
    for revision in 100..116 {
        memory.remember_catalog(revision, Rc::new(catalog_of(&[("b", "Two.")])));
    }
    assert!(memory.catalog(1).is_none());
    // Nothing is asked again: what the step concluded cannot have changed.
    let decided = applied(&Config::default(), &mut memory, &steady, Decision::Enter(vec![]), &registry, &session);
    assert_eq!(decided, Ok(Decision::Enter(vec![])));
    assert_eq!((registry.snapshots_taken.get(), session.pages_read.get()), (1, 1));
}

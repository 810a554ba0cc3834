//! Tests of delta updates (`catalogUpdates: "delta"`, docs/spec.md §3.13):
//! what an update publishes, how later steps and other processes read it,
//! and when a complete catalog comes back.

use super::*;
use crate::catalog_update::{ShownCatalog, Update};

fn delta() -> Config {
    Config::parse(r#"{"catalogUpdates":"delta"}"#).unwrap()
}

/// One step with a fresh memory (a new process), appending what it added.
fn step(config: &Config, registry: &FakeRegistry, session: &mut FakeSession) -> Vec<Message> {
    let messages = match applied(
        config,
        &mut Memory::default(),
        &context(ToolView::Visible),
        Decision::Enter(vec![]),
        registry,
        session,
    ) {
        Ok(Decision::Enter(messages)) => messages,
        other => panic!("expected enter, got {other:?}"),
    };
    for message in &messages {
        session.push(message.clone());
    }
    messages
}

fn update_of(from: &[(&str, &str)], to: &[(&str, &str)]) -> Message {
    Update::between(&ShownCatalog::of(&catalog_of(from)), &ShownCatalog::of(&catalog_of(to))).unwrap().message()
}

#[test]
fn a_change_after_the_first_catalog_publishes_only_what_changed() {
    let mut session = FakeSession::default();
    let first = [("a", "One."), ("b", "Two."), ("c", "Three.")];
    assert_eq!(step(&delta(), &FakeRegistry::with(&first), &mut session), [catalog_of(&first).initial_message(false)]);
    let second = [("a", "One."), ("b", "Two, changed."), ("d", "Four.")];
    assert_eq!(step(&delta(), &FakeRegistry::with(&second), &mut session), [update_of(&first, &second)]);
    // The next step, in a new process too, reads the catalog with its update: current.
    assert_eq!(step(&delta(), &FakeRegistry::with(&second), &mut session), []);
    // So does the default configuration.
    assert_eq!(step(&Config::default(), &FakeRegistry::with(&second), &mut session), []);
    // Updates fold in order.
    let third = [("a", "One."), ("d", "Four.")];
    assert_eq!(step(&delta(), &FakeRegistry::with(&third), &mut session), [update_of(&second, &third)]);
    assert_eq!(step(&delta(), &FakeRegistry::with(&third), &mut session), []);
    // Without delta updates, a change after updates publishes a complete replacement.
    let fourth = [("a", "One!")];
    assert_eq!(
        step(&Config::default(), &FakeRegistry::with(&fourth), &mut session),
        [catalog_of(&fourth).replacement_message(false)]
    );
}

#[test]
fn compaction_hiding_any_part_brings_back_the_complete_catalog() {
    let first = [("a", "One."), ("b", "Two.")];
    let second = [("a", "One."), ("b", "Two, changed.")];
    for hide in [0, 1] {
        let mut session = FakeSession::default();
        step(&delta(), &FakeRegistry::with(&first), &mut session);
        step(&delta(), &FakeRegistry::with(&second), &mut session);
        session.hidden.insert(hide);
        assert_eq!(
            step(&delta(), &FakeRegistry::with(&second), &mut session),
            [catalog_of(&second).replacement_message(false)],
            "message {hide} hidden"
        );
        // And then updates again.
        let third = [("a", "One.")];
        assert_eq!(step(&delta(), &FakeRegistry::with(&third), &mut session), [update_of(&second, &third)]);
    }
}

#[test]
fn when_every_skill_is_gone_the_complete_empty_catalog_says_so() {
    let mut session = FakeSession::default();
    step(&delta(), &FakeRegistry::with(&[("a", "One.")]), &mut session);
    let messages = step(&delta(), &FakeRegistry::with(&[]), &mut session);
    assert_eq!(messages, [catalog_of(&[]).replacement_message(false)]);
    assert!(messages[0].single_text().unwrap().contains("Do not use names from earlier skill catalogs."));
}

#[test]
fn an_update_longer_than_the_catalog_is_a_complete_catalog_instead() {
    let names: Vec<String> = (0..40).map(|i| format!("old-skill-{i}")).collect();
    let first: Vec<(&str, &str)> = names.iter().map(|name| (name.as_str(), "Old.")).collect();
    let mut session = FakeSession::default();
    step(&delta(), &FakeRegistry::with(&first), &mut session);
    // Forty names removed for one added: the complete catalog is shorter.
    let messages = step(&delta(), &FakeRegistry::with(&[("a", "New.")]), &mut session);
    assert_eq!(messages, [catalog_of(&[("a", "New.")]).replacement_message(false)]);
}

#[test]
fn one_changed_description_among_a_thousand_costs_under_two_percent() {
    let names: Vec<String> = (0..1000).map(|i| format!("skill-{i:04}")).collect();
    let description = "Guides a task of this kind step by step: collect context first, apply the smallest change, and verify with the project's own tooling.";
    let before: Vec<(&str, &str)> = names.iter().map(|name| (name.as_str(), description)).collect();
    let mut after = before.clone();
    after[500].1 = "A new description for this one skill.";
    let mut session = FakeSession::default();
    let complete = step(&delta(), &FakeRegistry::with(&before), &mut session);
    let update = step(&delta(), &FakeRegistry::with(&after), &mut session);
    let (complete, update) = (complete[0].single_text().unwrap().len(), update[0].single_text().unwrap().len());
    assert!(update * 50 < complete, "update {update} of complete {complete}");
}

#[test]
fn a_proposed_update_equal_to_the_one_due_stays_in_place() {
    let first = [("a", "One."), ("b", "Two.")];
    let second = [("a", "One."), ("b", "Two, changed.")];
    let mut session = FakeSession::default();
    step(&delta(), &FakeRegistry::with(&first), &mut session);
    let due = update_of(&first, &second);
    let decided = pre_step(
        &delta(),
        &mut Memory::default(),
        &context(ToolView::Visible),
        Decision::Enter(vec![due.clone()]),
        &FakeRegistry::with(&second),
        &session,
    );
    assert_eq!(decided, Ok(None));
    // A stale one is replaced in place.
    let stale = update_of(&first, &[("a", "One.")]);
    let messages = run_config(&delta(), &FakeRegistry::with(&second), &session, vec![user("hi"), stale]);
    assert_eq!(messages, [user("hi"), due]);
}

fn run_config(config: &Config, registry: &FakeRegistry, session: &FakeSession, proposed: Vec<Message>) -> Vec<Message> {
    match applied(
        config,
        &mut Memory::default(),
        &context(ToolView::Visible),
        Decision::Enter(proposed),
        registry,
        session,
    ) {
        Ok(Decision::Enter(messages)) => messages,
        other => panic!("expected enter, got {other:?}"),
    }
}

#[test]
fn a_budgeted_catalog_updates_its_coverage_line() {
    let config = Config::parse(r#"{"catalogUpdates":"delta","catalogBudget":2000}"#).unwrap();
    let many: Vec<(String, &str)> = (0..30).map(|i| (format!("s{i:02}"), "A description of some length.")).collect();
    let first: Vec<(&str, &str)> = many.iter().map(|(name, description)| (name.as_str(), *description)).collect();
    let mut session = FakeSession::default();
    step(&config, &FakeRegistry::with(&first), &mut session);
    let second = &first[..29];
    let messages = step(&config, &FakeRegistry::with(second), &mut session);
    let text = messages[0].single_text().unwrap();
    assert!(
        text.contains(
            "<available_skills_update>\nCatalog coverage: 29 of 29 skills listed.\n</available_skills_update>"
        ),
        "{text}"
    );
    assert!(text.ends_with("Removed from the catalog, do not use: `s29`.\n</system-reminder>"), "{text}");
    assert_eq!(step(&config, &FakeRegistry::with(second), &mut session), []);
}

#[test]
fn a_foreign_name_no_host_accepts_brings_a_complete_catalog() {
    let mut session = FakeSession::default();
    session.push(Message {
        source: r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":"One."},{"name":"Bad Name","description":"x"}]}"#.to_owned(),
        content: vec![ContentBlock::Text("catalog".to_owned())],
    });
    let messages = step(&delta(), &FakeRegistry::with(&[("a", "One.")]), &mut session);
    assert_eq!(messages, [catalog_of(&[("a", "One.")]).replacement_message(false)]);
}

#[test]
fn no_update_is_written_past_a_hidden_newer_catalog_nor_onto_an_empty_one() {
    let first = [("a", "One."), ("b", "Two.")];
    let mut session = FakeSession::default();
    session.push(catalog_of(&first).initial_message(false));
    let hidden = session.push(catalog_of(&[("z", "Z.")]).replacement_message(false));
    session.hidden.insert(hidden);
    let second = [("a", "One."), ("b", "Two, changed.")];
    assert_eq!(
        step(&delta(), &FakeRegistry::with(&second), &mut session),
        [catalog_of(&second).replacement_message(false)]
    );
    assert_eq!(step(&delta(), &FakeRegistry::with(&second), &mut session), []);
    // After the empty catalog (which says no skill is available), a complete one.
    assert_eq!(step(&delta(), &FakeRegistry::with(&[]), &mut session), [catalog_of(&[]).replacement_message(false)]);
    assert_eq!(
        step(&delta(), &FakeRegistry::with(&first), &mut session),
        [catalog_of(&first).replacement_message(false)]
    );
}

#[test]
fn a_skill_the_budget_leaves_out_is_never_called_removed() {
    let config = Config::parse(r#"{"catalogUpdates":"delta","catalogBudget":30}"#).unwrap();
    let first = [("b", "Two."), ("c", "Three.")];
    let mut session = FakeSession::default();
    step(&config, &FakeRegistry::with(&first), &mut session);
    // `a` comes first in name order and pushes `c` out: a complete catalog.
    let second = [("a", "One."), ("b", "Two."), ("c", "Three.")];
    let messages = step(&config, &FakeRegistry::with(&second), &mut session);
    let expected = Catalog::for_config(&FakeRegistry::with(&second).snapshot.borrow().clone().unwrap().skills, &config);
    assert_eq!(expected.left_out, ["c"]);
    assert_eq!(messages, [expected.replacement_message(false)]);
}

#[test]
fn by_default_an_update_is_neither_taken_from_a_proposal_nor_counted_when_malformed() {
    let (registry, session) = published_skill_a();
    let proposed = Message {
        source: r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":[]}"#.to_owned(),
        content: vec![ContentBlock::Text("something else entirely".to_owned())],
    };
    assert_eq!(run(&registry, &session, vec![proposed.clone()]), std::slice::from_ref(&proposed));
    // A session holding only a malformed update was never published to.
    let mut session = FakeSession::default();
    session.push(Message { content: vec![ContentBlock::Text("hi".to_owned())], ..proposed });
    assert_eq!(run(&registry, &session, vec![]), [catalog_of(&[("a", "One.")]).initial_message(false)]);
}

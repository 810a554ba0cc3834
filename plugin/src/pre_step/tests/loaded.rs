//! Tests of the loaded-skills notices (`loadedSkills`, docs/spec.md §3.12):
//! a changed or removed skill the model loaded is said once, and what
//! compaction hid is recalled once, all read back from the session.

use super::*;
use crate::loaded::{changed_text, gone_text, reload_text};

fn config() -> Config {
    Config { loaded_skills: true, ..Config::default() }
}

/// The tool result the host records for a load of `name` with `digest`.
fn load_record(name: &str, digest: &str) -> Message {
    let source = serde_json::json!({"kind": "tool", "callId": "c", "plugin": "dsh-tool-skill",
        "loaded": {"name": name, "provider": "runtime", "bodyDigest": digest}});
    Message { source: source.to_string(), content: vec![ContentBlock::Other("{}".to_owned())] }
}

/// Sets skill `a`'s body digest (a new revision each time, as the host's registry would).
fn set_digest(registry: &FakeRegistry, digest: Option<&str>) {
    let mut snapshot = registry.snapshot.borrow_mut();
    let snapshot = snapshot.as_mut().unwrap();
    snapshot.revision += 1;
    snapshot.skills[0].body_digest = digest.map(str::to_owned);
}

/// One step with nothing proposed; what it adds is appended to the session,
/// as a host appends it, and returned.
fn step(registry: &FakeRegistry, session: &mut FakeSession, memory: &mut Memory) -> Vec<Message> {
    let context = StepContext {
        history_version: session.messages.len() as u64 + session.hidden.len() as u64 * 1000,
        ..context(ToolView::Visible)
    };
    let Ok(Decision::Enter(added)) = applied(&config(), memory, &context, Decision::Enter(vec![]), registry, &*session)
    else {
        panic!("expected enter")
    };
    for message in &added {
        session.push(message.clone());
    }
    added
}

fn text(message: &Message) -> &str {
    message.single_text().unwrap()
}

#[test]
fn a_changed_skill_is_said_once_per_change_and_a_removed_one_once() {
    let (registry, mut session) = published_skill_a();
    set_digest(&registry, Some("sha256:1"));
    session.push(load_record("a", "sha256:1"));
    let mut memory = Memory::default();
    assert_eq!(step(&registry, &mut session, &mut memory), vec![], "the body the model has is current");

    set_digest(&registry, Some("sha256:2"));
    let added = step(&registry, &mut session, &mut memory);
    assert_eq!(added.len(), 1);
    assert_eq!(text(&added[0]), changed_text("a"));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&added[0].source).unwrap(),
        serde_json::json!({"kind": "skill-notice", "form": "changed", "name": "a", "provider": "runtime", "bodyDigest": "sha256:2"})
    );
    // Said once: not again on later steps, in this instance or a new one.
    assert_eq!(step(&registry, &mut session, &mut memory), vec![]);
    assert_eq!(step(&registry, &mut session, &mut Memory::default()), vec![]);
    // A further change is said again.
    set_digest(&registry, Some("sha256:3"));
    assert_eq!(
        step(&registry, &mut session, &mut Memory::default()).iter().map(text).collect::<Vec<_>>(),
        [changed_text("a")]
    );
    // Loaded again: current, nothing to say.
    session.push(load_record("a", "sha256:3"));
    assert_eq!(step(&registry, &mut session, &mut memory), vec![]);
    // Removed: the replacement catalog, then the notice.
    registry.snapshot.borrow_mut().as_mut().unwrap().skills.clear();
    registry.snapshot.borrow_mut().as_mut().unwrap().revision += 1;
    let added = step(&registry, &mut session, &mut memory);
    assert_eq!(
        added,
        vec![
            catalog_of(&[]).replacement_message(false),
            Message {
                source: r#"{"form":"gone","kind":"skill-notice","name":"a"}"#.to_owned(),
                content: vec![ContentBlock::Text(gone_text("a"))],
            }
        ]
    );
    assert_eq!(step(&registry, &mut session, &mut memory), vec![]);
}

#[test]
fn compaction_that_hides_a_load_is_followed_by_one_reminder() {
    let (registry, mut session) = published_skill_a();
    set_digest(&registry, Some("sha256:1"));
    let load = session.push(load_record("a", "sha256:1"));
    let mut memory = Memory::default();
    assert_eq!(step(&registry, &mut session, &mut memory), vec![]);
    // Compaction hides everything so far.
    session.hidden.extend(0..=load);
    let added = step(&registry, &mut session, &mut memory);
    assert_eq!(
        added.iter().map(text).collect::<Vec<_>>(),
        [
            catalog_of(&[("a", "One.")]).replacement_message(false).single_text().unwrap().to_owned(),
            reload_text(&["a"]),
        ]
    );
    assert_eq!(step(&registry, &mut session, &mut memory), vec![]);
    // A second compaction hides the reminder too: it is given again.
    let last = session.messages.len() as u64 - 1;
    session.hidden.extend(0..=last);
    let added = step(&registry, &mut session, &mut memory);
    assert_eq!(added.last().map(text), Some(reload_text(&["a"]).as_str()));
}

#[test]
fn no_notice_on_an_incomplete_snapshot_a_hidden_tool_or_an_unknown_digest() {
    let (registry, mut session) = published_skill_a();
    set_digest(&registry, Some("sha256:1"));
    session.push(load_record("a", "sha256:1"));
    set_digest(&registry, Some("sha256:2"));
    registry.snapshot.borrow_mut().as_mut().unwrap().complete = false;
    assert_eq!(step(&registry, &mut session, &mut Memory::default()), vec![]);
    registry.snapshot.borrow_mut().as_mut().unwrap().complete = true;
    for view in [ToolView::Hidden, ToolView::Shadowed] {
        let context = StepContext { history_version: 99, ..context(view) };
        let Ok(Decision::Enter(added)) =
            applied(&config(), &mut Memory::default(), &context, Decision::Enter(vec![]), &registry, &session)
        else {
            panic!()
        };
        assert!(added.iter().all(|message| !message.source.contains("skill-notice")), "{view:?}: {added:?}");
    }
    // A provider that cannot tell its body's digest gives no notice.
    set_digest(&registry, None);
    assert_eq!(step(&registry, &mut session, &mut Memory::default()), vec![]);
    // And with the option off, nothing at all.
    set_digest(&registry, Some("sha256:3"));
    let Ok(Decision::Enter(added)) = applied(
        &Config::default(),
        &mut Memory::default(),
        &context(ToolView::Visible),
        Decision::Enter(vec![]),
        &registry,
        &session,
    ) else {
        panic!()
    };
    assert_eq!(added, vec![]);
}

#[test]
fn at_most_eight_notices_a_step_and_the_rest_on_the_next() {
    let names: Vec<String> = (0..10).map(|index| format!("s{index}")).collect();
    let skills: Vec<(&str, &str)> = names.iter().map(|name| (name.as_str(), "D.")).collect();
    let registry = FakeRegistry::with(&skills);
    let mut session = FakeSession::default();
    session.push(catalog_of(&skills).initial_message(false));
    for name in &names {
        session.push(load_record(name, "sha256:old"));
    }
    {
        let mut snapshot = registry.snapshot.borrow_mut();
        let snapshot = snapshot.as_mut().unwrap();
        for skill in &mut snapshot.skills {
            skill.body_digest = Some("sha256:new".to_owned());
        }
    }
    let mut memory = Memory::default();
    assert_eq!(step(&registry, &mut session, &mut memory).len(), crate::loaded::MAX_SKILL_NOTICES);
    assert_eq!(
        step(&registry, &mut session, &mut memory).iter().map(text).collect::<Vec<_>>(),
        [changed_text("s8"), changed_text("s9")]
    );
    assert_eq!(step(&registry, &mut session, &mut memory), vec![]);
}

#[test]
fn the_texts_are_exact() {
    assert_eq!(
        changed_text("pdf"),
        "<system-reminder>\nThe instructions of skill `pdf` changed after you loaded them. Call the `skill` tool with the name `pdf` again before following them further.\n</system-reminder>"
    );
    assert_eq!(
        gone_text("pdf"),
        "<system-reminder>\nSkill `pdf` is no longer available. The instructions you loaded for it earlier no longer apply; do not follow them.\n</system-reminder>"
    );
    assert_eq!(
        reload_text(&["a", "b-c"]),
        "<system-reminder>\nYou loaded these skills earlier in this session, but their instructions are no longer in view: `a`, `b-c`. Call the `skill` tool again for each one before relying on it.\n</system-reminder>"
    );
}

#[test]
fn a_reminder_names_at_most_the_hosts_limit_and_the_rest_follow() {
    let names: Vec<String> = (0..300).map(|index| format!("s{index:03}")).collect();
    let skills: Vec<(&str, &str)> = names.iter().map(|name| (name.as_str(), "D.")).collect();
    let registry = FakeRegistry::with(&skills);
    let mut session = FakeSession::default();
    session.push(catalog_of(&skills).initial_message(false));
    for name in &names {
        session.push(load_record(name, "sha256:1"));
    }
    for skill in &mut registry.snapshot.borrow_mut().as_mut().unwrap().skills {
        skill.body_digest = Some("sha256:1".to_owned());
    }
    let last = session.messages.len() as u64 - 1;
    session.hidden.extend(0..=last);
    let mut memory = Memory::default();
    let names_in = |message: &Message| {
        let source: serde_json::Value = serde_json::from_str(&message.source).unwrap();
        source["names"].as_array().map_or(0, Vec::len)
    };
    let first = step(&registry, &mut session, &mut memory);
    assert_eq!(names_in(first.last().unwrap()), skill_rules::MAX_RELOAD_NAMES);
    let second = step(&registry, &mut session, &mut memory);
    assert_eq!(second.len(), 1);
    assert_eq!(names_in(&second[0]), 300 - skill_rules::MAX_RELOAD_NAMES);
    assert_eq!(step(&registry, &mut session, &mut memory), vec![]);
}

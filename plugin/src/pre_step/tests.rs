//! Tests of the pre-step against a fake registry and session: the catalog
//! projection and the decision's shape.

mod delta;
mod invocation;
mod loaded;
mod steady;

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::rc::Rc;

use super::*;
use crate::catalog::{self, Catalog};
use crate::types::{
    InvocationPolicy, MessageRef, MessageRefPage, SkillDefinition, SkillSummary, Snapshot, SnapshotAnswer,
    SourceFilter, ToolView,
};

struct FakeRegistry {
    snapshot: RefCell<Result<Snapshot, RegistryError>>,
    snapshots_taken: Cell<usize>,
    /// How many snapshots were answered `unchanged`.
    unchanged: Cell<usize>,
    loaded: RefCell<Vec<SkillDefinition>>,
}

impl FakeRegistry {
    fn with(skills: &[(&str, &str)]) -> Self {
        let skills = skills
            .iter()
            .map(|(name, description)| SkillSummary {
                name: (*name).to_owned(),
                description: (*description).to_owned(),
                when_to_use: None,
                invocation: InvocationPolicy { model_invocable: true, user_invocable: true },
                provider: "runtime".to_owned(),
                source: "runtime".to_owned(),
                path: None,
                body_digest: None,
            })
            .collect();
        Self {
            snapshot: RefCell::new(Ok(Snapshot { complete: true, revision: 1, skills })),
            snapshots_taken: Cell::new(0),
            unchanged: Cell::new(0),
            loaded: RefCell::new(Vec::new()),
        }
    }
}

impl Registry for FakeRegistry {
    fn snapshot(&self, known: Option<u64>) -> Result<SnapshotAnswer, RegistryError> {
        self.snapshots_taken.set(self.snapshots_taken.get() + 1);
        let snapshot = self.snapshot.borrow().clone()?;
        if snapshot.complete && known == Some(snapshot.revision) {
            self.unchanged.set(self.unchanged.get() + 1);
            return Ok(SnapshotAnswer::Unchanged);
        }
        Ok(SnapshotAnswer::Changed(snapshot))
    }
    fn list(&self, _name: Option<&str>) -> Result<Vec<SkillSummary>, RegistryError> {
        unreachable!()
    }
    fn get(&self, name: &str) -> Result<Option<SkillDefinition>, RegistryError> {
        Ok(self.loaded.borrow().iter().find(|skill| skill.name == name).cloned())
    }
}

/// A session: user messages in seq order plus the hidden set.
#[derive(Default)]
struct FakeSession {
    messages: Vec<(u64, Message)>,
    hidden: HashSet<u64>,
    pages_read: Cell<usize>,
    contents_read: Cell<usize>,
}

impl FakeSession {
    fn push(&mut self, message: Message) -> u64 {
        let seq = self.messages.len() as u64;
        self.messages.push((seq, message));
        seq
    }
}

impl SessionHistory for FakeSession {
    fn list_user_messages(&self, filters: &[SourceFilter], before: Option<u64>, limit: u32) -> MessageRefPage {
        self.pages_read.set(self.pages_read.get() + 1);
        let matching: Vec<_> = self
            .messages
            .iter()
            .rev()
            .filter(|(seq, _)| before.is_none_or(|before| *seq < before))
            .filter(|(_, message)| {
                let source: serde_json::Value = serde_json::from_str(&message.source).unwrap();
                filters.iter().any(|filter| {
                    source["kind"] == filter.kind.as_str()
                        && filter.plugin.as_ref().is_none_or(|plugin| source["plugin"] == plugin.as_str())
                })
            })
            .take(limit as usize + 1)
            .map(|(seq, _)| MessageRef { seq: *seq, visible: !self.hidden.contains(seq) })
            .collect();
        let more = matching.len() > limit as usize;
        let refs: Vec<_> = matching.into_iter().take(limit as usize).collect();
        let next = if more { refs.last().map(|reference| reference.seq) } else { None };
        MessageRefPage { refs, next }
    }
    fn get_user_message(&self, seq: u64) -> Option<Message> {
        self.contents_read.set(self.contents_read.get() + 1);
        self.messages.iter().find(|(held, _)| *held == seq).map(|(_, message)| message.clone())
    }
}

/// The pre-step's answer applied to the proposal, as a host applies it.
fn applied(
    config: &Config,
    memory: &mut Memory,
    context: &StepContext,
    decision: Decision,
    registry: &impl Registry,
    session: &impl SessionHistory,
) -> Result<Decision, StepError> {
    let proposed = match &decision {
        Decision::Enter(messages) => messages.clone(),
        Decision::Reject => Vec::new(),
    };
    Ok(match pre_step(config, memory, context, decision.clone(), registry, session)? {
        None => decision,
        Some(decided) => Decision::Enter(
            decided
                .into_iter()
                .map(|message| match message {
                    DecidedMessage::Proposed(index) => proposed[index as usize].clone(),
                    DecidedMessage::Added(message) => message,
                })
                .collect(),
        ),
    })
}

fn user(text: &str) -> Message {
    Message { source: r#"{"kind":"user"}"#.to_owned(), content: vec![ContentBlock::Text(text.to_owned())] }
}

fn context(tool_view: ToolView) -> StepContext {
    StepContext { session: 7, registry_revision: None, history_version: 0, tool_view, aborted: false }
}

fn run(registry: &FakeRegistry, session: &FakeSession, proposed: Vec<Message>) -> Vec<Message> {
    run_with(registry, session, proposed, ToolView::Visible)
}

fn run_with(registry: &FakeRegistry, session: &FakeSession, proposed: Vec<Message>, view: ToolView) -> Vec<Message> {
    match applied(
        &Config::default(),
        &mut Memory::default(),
        &context(view),
        Decision::Enter(proposed),
        registry,
        session,
    ) {
        Ok(Decision::Enter(messages)) => messages,
        other => panic!("expected enter, got {other:?}"),
    }
}

/// A registry listing skill `a` (revision 1) and a session that already
/// shows its catalog.
fn published_skill_a() -> (FakeRegistry, FakeSession) {
    let registry = FakeRegistry::with(&[("a", "One.")]);
    let mut session = FakeSession::default();
    session.push(catalog_of(&[("a", "One.")]).initial_message(false));
    (registry, session)
}

/// A visible step of session 7 at history version 0, the host holding revision 1.
fn steady_context() -> StepContext {
    StepContext { registry_revision: Some(1), ..context(ToolView::Visible) }
}

fn catalog_of(skills: &[(&str, &str)]) -> Catalog {
    let registry = FakeRegistry::with(skills);
    let snapshot = registry.snapshot.borrow().clone().unwrap();
    Catalog::from_skills(&snapshot.skills, 500)
}

#[test]
fn initial_catalog_is_appended_after_the_proposed_messages() {
    let registry = FakeRegistry::with(&[("a", "One.")]);
    let messages = run(&registry, &FakeSession::default(), vec![user("hi")]);
    assert_eq!(messages, vec![user("hi"), catalog_of(&[("a", "One.")]).initial_message(false)]);
}

#[test]
fn nothing_on_an_unchanged_step() {
    let (registry, session) = published_skill_a();
    assert_eq!(run(&registry, &session, vec![user("hi")]), vec![user("hi")]);
}

#[test]
fn replacement_when_a_skill_is_added_or_a_description_changes() {
    let mut session = FakeSession::default();
    session.push(catalog_of(&[("a", "One.")]).initial_message(false));
    for skills in [&[("a", "One."), ("b", "Two.")][..], &[("a", "Changed.")][..]] {
        let messages = run(&FakeRegistry::with(skills), &session, vec![]);
        assert_eq!(messages, vec![catalog_of(skills).replacement_message(false)]);
    }
}

#[test]
fn empty_replacement_when_every_skill_is_removed() {
    let mut session = FakeSession::default();
    session.push(catalog_of(&[("a", "One.")]).initial_message(false));
    let messages = run(&FakeRegistry::with(&[]), &session, vec![]);
    assert_eq!(messages, vec![catalog_of(&[]).replacement_message(false)]);
}

#[test]
fn nothing_when_nothing_was_ever_published_and_nothing_is_listed() {
    assert_eq!(run(&FakeRegistry::with(&[]), &FakeSession::default(), vec![user("hi")]), vec![user("hi")]);
}

#[test]
fn incomplete_snapshot_keeps_the_decision_unchanged() {
    let registry = FakeRegistry::with(&[]);
    registry.snapshot.borrow_mut().as_mut().unwrap().complete = false;
    let mut session = FakeSession::default();
    session.push(catalog_of(&[("a", "One.")]).initial_message(false));
    let stale = catalog_of(&[("z", "Stale.")]).initial_message(false);
    assert_eq!(run(&registry, &session, vec![user("hi"), stale.clone()]), vec![user("hi"), stale]);
}

#[test]
fn compaction_is_followed_by_a_replacement_re_establishing_the_catalog() {
    let mut session = FakeSession::default();
    let seq = session.push(catalog_of(&[("a", "One.")]).initial_message(false));
    session.hidden.insert(seq);
    let messages = run(&FakeRegistry::with(&[("a", "One.")]), &session, vec![]);
    assert_eq!(messages, vec![catalog_of(&[("a", "One.")]).replacement_message(false)]);
}

#[test]
fn the_newest_visible_catalog_counts_even_behind_hidden_ones() {
    let mut session = FakeSession::default();
    session.push(catalog_of(&[("a", "One.")]).initial_message(false));
    for _ in 0..40 {
        session.push(user("chatter"));
        let hidden = session.push(catalog_of(&[("b", "Two.")]).replacement_message(false));
        session.hidden.insert(hidden);
    }
    assert_eq!(run(&FakeRegistry::with(&[("a", "One.")]), &session, vec![]), vec![]);
    assert!(session.pages_read.get() > 1, "the scan must page past hidden catalogs");
}

#[test]
fn hidden_or_shadowed_tool_retires_a_published_catalog_and_takes_no_snapshot() {
    for view in [ToolView::Hidden, ToolView::Shadowed] {
        let registry = FakeRegistry::with(&[("a", "One.")]);
        let mut session = FakeSession::default();
        assert_eq!(run_with(&registry, &session, vec![], view), vec![]);
        session.push(catalog_of(&[("a", "One.")]).initial_message(false));
        assert_eq!(run_with(&registry, &session, vec![], view), vec![catalog_of(&[]).replacement_message(false)]);
        assert_eq!(registry.snapshots_taken.get(), 0);
    }
}

#[test]
fn a_proposed_duplicate_of_the_visible_catalog_is_removed() {
    let current = catalog_of(&[("a", "One.")]);
    let mut session = FakeSession::default();
    session.push(current.initial_message(false));
    let proposed = vec![user("x"), current.replacement_message(false), user("y")];
    assert_eq!(run(&FakeRegistry::with(&[("a", "One.")]), &session, proposed), vec![user("x"), user("y")]);
}

#[test]
fn a_proposed_catalog_matching_the_current_one_is_kept() {
    let current = catalog_of(&[("a", "One.")]);
    let proposed = vec![current.initial_message(false), user("y")];
    assert_eq!(run(&FakeRegistry::with(&[("a", "One.")]), &FakeSession::default(), proposed.clone()), proposed);
}

#[test]
fn a_proposed_stale_catalog_is_replaced_in_place() {
    let stale = catalog_of(&[("old", "Old.")]).initial_message(false);
    let messages =
        run(&FakeRegistry::with(&[("a", "One.")]), &FakeSession::default(), vec![user("x"), stale, user("y")]);
    assert_eq!(messages, vec![user("x"), catalog_of(&[("a", "One.")]).initial_message(false), user("y")]);
}

#[test]
fn a_proposed_catalog_is_removed_when_nothing_is_listed_and_nothing_was_published() {
    let stale = catalog_of(&[("old", "Old.")]).initial_message(false);
    assert_eq!(run(&FakeRegistry::with(&[]), &FakeSession::default(), vec![stale, user("y")]), vec![user("y")]);
}

#[test]
fn a_reject_passes_through_without_any_registry_or_session_call() {
    let registry = FakeRegistry::with(&[("a", "One.")]);
    let session = FakeSession::default();
    let reject = Decision::Reject;
    assert_eq!(
        applied(
            &Config::default(),
            &mut Memory::default(),
            &context(ToolView::Visible),
            reject.clone(),
            &registry,
            &session
        ),
        Ok(reject)
    );
    assert_eq!(registry.snapshots_taken.get(), 0);
    assert_eq!(session.pages_read.get(), 0);
}

#[test]
fn an_aborted_step_reports_abort() {
    let registry = FakeRegistry::with(&[("a", "One.")]);
    let mut aborted = context(ToolView::Visible);
    aborted.aborted = true;
    assert_eq!(
        applied(
            &Config::default(),
            &mut Memory::default(),
            &aborted,
            Decision::Enter(vec![]),
            &registry,
            &FakeSession::default()
        ),
        Err(StepError::Aborted)
    );
    *registry.snapshot.borrow_mut() = Err(RegistryError::Aborted);
    assert_eq!(
        applied(
            &Config::default(),
            &mut Memory::default(),
            &context(ToolView::Visible),
            Decision::Enter(vec![]),
            &registry,
            &FakeSession::default()
        ),
        Err(StepError::Aborted)
    );
}

#[test]
fn a_later_generation_catalog_in_the_session_is_not_republished() {
    let mut session = FakeSession::default();
    session.push(Message {
        source: r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":"One."}]}"#.to_owned(),
        content: vec![ContentBlock::Text("…".to_owned())],
    });
    assert_eq!(run(&FakeRegistry::with(&[("a", "One.")]), &session, vec![]), vec![]);
    // …but it counts as published: a change gets a replacement.
    assert_eq!(
        run(&FakeRegistry::with(&[("a", "Two.")]), &session, vec![]),
        vec![catalog_of(&[("a", "Two.")]).replacement_message(false)]
    );
}

#[test]
fn configuration_caps_descriptions() {
    let config = Config { catalog_description_max_length: 5, ..Config::default() };
    let registry = FakeRegistry::with(&[("a", "abcdefgh")]);
    let Ok(Decision::Enter(messages)) = applied(
        &config,
        &mut Memory::default(),
        &context(ToolView::Visible),
        Decision::Enter(vec![]),
        &registry,
        &FakeSession::default(),
    ) else {
        panic!()
    };
    assert!(messages[0].single_text().unwrap().contains("- `a`: ab...\n"));
}

#[test]
fn a_decision_names_the_proposed_messages_it_keeps_by_index() {
    let registry = FakeRegistry::with(&[("a-skill", "Does a.")]);
    let session = FakeSession::default();
    let decide = |proposed: Vec<Message>| {
        super::pre_step(
            &Config::default(),
            &mut Memory::default(),
            &context(ToolView::Visible),
            Decision::Enter(proposed),
            &registry,
            &session,
        )
        .unwrap()
    };
    // The first step publishes: the proposal kept, the catalog added.
    let Some(decided) = decide(vec![user("hi")]) else { panic!("nothing published") };
    let [DecidedMessage::Proposed(0), DecidedMessage::Added(current)] = decided.as_slice() else {
        panic!("{decided:?}")
    };
    // Proposed [stale catalog, user, current catalog]: the stale one is
    // replaced in place by a copy of the current one. Matching by
    // content would take the later proposed copy for it and leave the
    // user's message unmatched, to be refused as forged.
    let stale = Message {
        source: current.source.clone(),
        content: vec![ContentBlock::Text("<available_skills>\n</available_skills>".to_owned())],
    };
    assert!(catalog::is_catalog(&stale));
    let decided = decide(vec![stale, user("hi"), current.clone()]);
    assert_eq!(
        decided,
        Some(vec![DecidedMessage::Added(current.clone()), DecidedMessage::Proposed(1), DecidedMessage::Proposed(2)])
    );
    // A proposal that stands sends nothing.
    assert_eq!(decide(vec![current.clone(), user("hi")]), None);
}

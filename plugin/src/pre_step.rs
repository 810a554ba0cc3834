//! The pre-step (SPEC §3.8): projects the skill catalog into the decision the
//! host's other listeners produced, before every model step; with user
//! invocation on, it also loads the skills a user named with `/name`.

use std::rc::Rc;

use crate::catalog::{self, Catalog, CatalogDigest, PLUGIN_NAME, SKILL_CATALOG_KIND};
use crate::config::Config;
use crate::gesture::{invocation_source, invoked_skill_names};
use crate::memory::{Memory, SteadyStep};
use crate::tool::{self, SkillResult};
use crate::types::{
    ContentBlock, DecidedMessage, Decision, Message, Registry, RegistryError, SessionHistory, SnapshotAnswer,
    SourceFilter, StepContext, StepError, ToolView,
};

/// How many history references to read across the boundary at a time.
/// Catalog messages are few, and the newest visible one is usually first.
const HISTORY_PAGE: u32 = 16;

/// What the session's history says about earlier catalogs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CatalogHistory {
    /// Some catalog was ever published in this session.
    pub published: bool,
    /// The digest of the newest published catalog still on the visible surface.
    pub visible_digest: Option<CatalogDigest>,
}

impl CatalogHistory {
    /// Scans durable user messages newest first (step 6): the first catalog
    /// found means `published`; the newest visible one gives the digest, so
    /// the scan goes on past catalogs that compaction hid. A message's
    /// content is read (and its digest computed) once per instance.
    pub fn scan(session: &impl SessionHistory, key: u64, memory: &mut Memory) -> Self {
        let filters = [
            SourceFilter { kind: "plugin".to_owned(), plugin: Some(PLUGIN_NAME.to_owned()) },
            SourceFilter { kind: SKILL_CATALOG_KIND.to_owned(), plugin: None },
        ];
        let mut history = Self::default();
        let mut before = None;
        loop {
            let page = session.list_user_messages(&filters, before, HISTORY_PAGE);
            for reference in &page.refs {
                let digest = match memory.digest(key, reference.seq) {
                    Some(known) => known,
                    None => {
                        let digest =
                            session.get_user_message(reference.seq).and_then(|m| catalog::published_digest(&m));
                        memory.remember_digest(key, reference.seq, digest);
                        digest
                    }
                };
                let Some(digest) = digest else { continue };
                history.published = true;
                if reference.visible {
                    history.visible_digest = Some(digest);
                    return history;
                }
            }
            match page.next {
                // A cursor that does not move back would loop forever: a host bug, stop.
                Some(next) if before.is_none_or(|previous| next < previous) => before = Some(next),
                _ => return history,
            }
        }
    }
}

/// Runs the pre-step on the decision the host's other listeners proposed
/// and returns what to change, in the shape the host's `step.decide` takes:
/// proposed messages kept by their index, the rest added. `None` when the
/// proposal stands as it is (always for a reject): nothing to send.
///
/// Inlined into the export, so that the steady step (see
/// [`already_current`]) is a few comparisons with no call: in WebAssembly
/// every call costs about as much as the comparisons themselves.
#[inline]
pub fn pre_step(
    config: &Config,
    memory: &mut Memory,
    context: &StepContext,
    decision: Decision,
    registry: &impl Registry,
    session: &impl SessionHistory,
) -> Result<Option<Vec<DecidedMessage>>, StepError> {
    match decision {
        // 1. A reject passes through unchanged.
        Decision::Reject => Ok(None),
        Decision::Enter(proposed) if proposed.is_empty() && already_current(memory, context) => Ok(None),
        Decision::Enter(proposed) => decide(config, memory, context, proposed, registry, session),
    }
}

/// The pre-step for an entering proposal that memory alone cannot settle.
fn decide(
    config: &Config,
    memory: &mut Memory,
    context: &StepContext,
    proposed: Vec<Message>,
    registry: &impl Registry,
    session: &impl SessionHistory,
) -> Result<Option<Vec<DecidedMessage>>, StepError> {
    let count = proposed.len();
    let entries = enter(config, memory, context, proposed, registry, session)?;
    let unchanged = entries.len() == count
        && entries.iter().enumerate().all(|(index, entry)| entry.proposed.is_some_and(|kept| kept as usize == index));
    if unchanged {
        return Ok(None);
    }
    Ok(Some(
        entries
            .into_iter()
            .map(|entry| match entry.proposed {
                Some(index) => DecidedMessage::Proposed(index),
                None => DecidedMessage::Added(entry.message),
            })
            .collect(),
    ))
}

/// The steady step, decided from memory alone: the step is not aborted, the
/// tool is visible, and an earlier step of this session at this history
/// version and registry revision reached step 8 with the current catalog
/// already visible (it remembered so). With nothing proposed, steps 2 to 8
/// then change nothing (no duplicate to drop, no `/name` to load), so there
/// is nothing to read and nothing to decide.
#[inline]
fn already_current(memory: &Memory, context: &StepContext) -> bool {
    !context.aborted
        && context.tool_view == ToolView::Visible
        && context.registry_revision.is_some_and(|registry_revision| {
            memory.is_steady(SteadyStep {
                session: context.session,
                history_version: context.history_version,
                registry_revision,
            })
        })
}

/// A message of the decision being made, with its index in the proposal
/// when it is a proposed one: the pre-step drops, replaces and appends, and
/// says which it did rather than leaving it to be worked out from contents.
struct Entry {
    proposed: Option<u32>,
    message: Message,
}

impl Entry {
    fn added(message: Message) -> Self {
        Self { proposed: None, message }
    }
}

/// Steps 2 to 11 for an entering proposal, then the skills a user invoked.
fn enter(
    config: &Config,
    memory: &mut Memory,
    context: &StepContext,
    messages: Vec<Message>,
    registry: &impl Registry,
    session: &impl SessionHistory,
) -> Result<Vec<Entry>, StepError> {
    // 2. An aborted step stops here.
    if context.aborted {
        return Err(StepError::Aborted);
    }
    let invoked = if config.user_invocation { invoked_skill_names(&messages) } else { Vec::new() };
    let entries = messages
        .into_iter()
        .enumerate()
        .map(|(index, message)| Entry {
            proposed: Some(u32::try_from(index).expect("a proposal's count fits in u32")),
            message,
        })
        .collect();
    let mut entries = project_catalog(config, memory, context, entries, registry, session)?;
    // User-explicit invocation comes after every other message, the catalog included.
    for name in invoked {
        let skill = match registry.get(&name) {
            Ok(skill) => skill,
            Err(RegistryError::Aborted) => return Err(StepError::Aborted),
            // A failing provider leaves the `/name` as plain prose, like an unknown name.
            Err(RegistryError::Failed(_)) => None,
        };
        let Some(skill) = skill.filter(|skill| skill.invocation.user_invocable && skill.name == name) else {
            continue;
        };
        let text = tool::render(&SkillResult {
            name: skill.name,
            provider: skill.provider,
            resource_base: skill.resource_base,
            content: skill.content,
        });
        entries
            .push(Entry::added(Message { source: invocation_source(&name), content: vec![ContentBlock::Text(text)] }));
    }
    Ok(entries)
}

/// Steps 3 to 11 of SPEC §3.8 for an entering step.
fn project_catalog(
    config: &Config,
    memory: &mut Memory,
    context: &StepContext,
    mut messages: Vec<Entry>,
    registry: &impl Registry,
    session: &impl SessionHistory,
) -> Result<Vec<Entry>, StepError> {
    // 3. Only this plugin's own, visible tool gets a catalog; a hidden or
    //    shadowed tool gets an empty complete one, so earlier names are retired.
    // The revision is that of the registry snapshot the catalog was built from.
    let (catalog, revision) = match context.tool_view {
        ToolView::Visible => {
            // The host holds the snapshot whose catalog is remembered: no call at all.
            let held = context.registry_revision.and_then(|revision| Some((memory.catalog(revision)?, revision)));
            match held {
                Some((catalog, revision)) => (catalog, Some(revision)),
                None => match snapshot_catalog(config, memory, registry)? {
                    Some((catalog, revision)) => (catalog, Some(revision)),
                    // 4. Incomplete: keep the last good catalog and retry next step.
                    None => return Ok(messages),
                },
            }
        }
        ToolView::Hidden | ToolView::Shadowed => {
            (Rc::new(Catalog::from_skills(&[], config.catalog_description_max_length)), None)
        }
    };
    // 6. What the session already shows (reused while its history is unchanged).
    let history = match memory.history(context.session, context.history_version) {
        Some(history) => history,
        None => {
            let history = CatalogHistory::scan(session, context.session, memory);
            memory.remember_history(context.session, context.history_version, history);
            history
        }
    };
    // 7. A catalog another listener (or an earlier attempt) already proposed.
    let existing = messages.iter().position(|entry| catalog::is_catalog(&entry.message));
    // 8. The visible catalog is current: nothing to add, and drop a duplicate.
    if history.visible_digest == Some(catalog.digest) {
        // What this concluded holds for every later step of this session at
        // this history version whose host holds the revision the catalog was
        // built from: the next one with nothing proposed need not come this far.
        if let Some(registry_revision) = revision {
            let step =
                SteadyStep { session: context.session, history_version: context.history_version, registry_revision };
            memory.remember_steady(step);
        }
        remove(&mut messages, existing);
        return Ok(messages);
    }
    // 9. The proposed catalog is already the current one.
    if let Some(index) = existing
        && catalog::published_digest(&messages[index].message) == Some(catalog.digest)
    {
        return Ok(messages);
    }
    // 10. Nothing was ever published and nothing is listed: no tombstone needed.
    if !history.published && catalog.len == 0 {
        remove(&mut messages, existing);
        return Ok(messages);
    }
    // 11. Publish: initial the first time, a replacement ever after.
    let message = if history.published {
        catalog.replacement_message(config.user_invocation)
    } else {
        catalog.initial_message(config.user_invocation)
    };
    match existing {
        Some(index) => messages[index] = Entry::added(message),
        None => messages.push(Entry::added(message)),
    }
    Ok(messages)
}

/// Steps 3 to 5 through the registry: the catalog of the current snapshot
/// and its revision, or `None` when the snapshot is incomplete.
fn snapshot_catalog(
    config: &Config,
    memory: &mut Memory,
    registry: &impl Registry,
) -> Result<Option<(Rc<Catalog>, u64)>, StepError> {
    let known = memory.known_revision();
    Ok(match registry.snapshot(known) {
        Err(RegistryError::Aborted) => return Err(StepError::Aborted),
        // The contract says snapshots fail only by abort; anything else is
        // treated as an incomplete observation, never as a deletion.
        Err(RegistryError::Failed(_)) => None,
        // `unchanged` for a revision never offered would be a host bug: keep the last good catalog.
        Ok(SnapshotAnswer::Unchanged) => known.and_then(|revision| Some((memory.catalog(revision)?, revision))),
        Ok(SnapshotAnswer::Changed(snapshot)) if !snapshot.complete => None,
        // 5. Entries and digest of the model-invocable skills.
        Ok(SnapshotAnswer::Changed(snapshot)) => {
            let catalog = Rc::new(Catalog::from_skills(&snapshot.skills, config.catalog_description_max_length));
            memory.remember_catalog(snapshot.revision, Rc::clone(&catalog));
            Some((catalog, snapshot.revision))
        }
    })
}

fn remove(messages: &mut Vec<Entry>, index: Option<usize>) {
    if let Some(index) = index {
        messages.remove(index);
    }
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::collections::HashSet;

    use super::*;
    use crate::types::{InvocationPolicy, MessageRef, MessageRefPage, SkillDefinition, SkillSummary, Snapshot};

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
                    invocation: InvocationPolicy { model_invocable: true, user_invocable: true },
                    provider: "runtime".to_owned(),
                    source: "runtime".to_owned(),
                    path: None,
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

    fn run_with(
        registry: &FakeRegistry,
        session: &FakeSession,
        proposed: Vec<Message>,
        view: ToolView,
    ) -> Vec<Message> {
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
            source: r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":"One."}]}"#
                .to_owned(),
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
        let mut step =
            || applied(&Config::default(), &mut memory, &claimed, Decision::Enter(vec![]), &registry, &session);
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
            let decided =
                applied(&Config::default(), &mut memory, &steady, Decision::Enter(vec![]), &registry, &session);
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
            Some(vec![
                DecidedMessage::Added(current.clone()),
                DecidedMessage::Proposed(1),
                DecidedMessage::Proposed(2)
            ])
        );
        // A proposal that stands sends nothing.
        assert_eq!(decide(vec![current.clone(), user("hi")]), None);
    }
}

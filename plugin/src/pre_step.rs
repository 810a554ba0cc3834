//! The pre-step (SPEC §3.8): projects the skill catalog into the decision the
//! host's other listeners produced, before every model step.

use crate::catalog::{self, Catalog, CatalogDigest, PLUGIN_NAME, SKILL_CATALOG_KIND};
use crate::config::Config;
use crate::types::{
    Decision, Message, Registry, RegistryError, SessionHistory, Snapshot, SourceFilter, StepContext, StepError,
    ToolView,
};

/// How many history messages to read across the boundary at a time. Catalog
/// messages are few, and the newest visible one is usually on the first page.
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
    /// the scan goes on past catalogs that compaction hid.
    pub fn scan(session: &impl SessionHistory) -> Self {
        let filters = [
            SourceFilter {
                kind: "plugin".to_owned(),
                plugin: Some(PLUGIN_NAME.to_owned()),
            },
            SourceFilter {
                kind: SKILL_CATALOG_KIND.to_owned(),
                plugin: None,
            },
        ];
        let mut history = Self::default();
        let mut before = None;
        loop {
            let page = session.read_user_messages(&filters, before, HISTORY_PAGE);
            for event in &page.messages {
                if !catalog::is_catalog(&event.message) {
                    continue;
                }
                history.published = true;
                if session.is_visible(event.seq) {
                    history.visible_digest = catalog::published_digest(&event.message);
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

/// Runs the pre-step and returns the decision the host must use.
pub fn pre_step(
    config: &Config,
    context: &StepContext,
    decision: Decision,
    registry: &impl Registry,
    session: &impl SessionHistory,
) -> Result<Decision, StepError> {
    // 1. A reject passes through unchanged.
    let Decision::Enter(mut messages) = decision else {
        return Ok(decision);
    };
    // 2. An aborted step stops here.
    if context.aborted {
        return Err(StepError::Aborted);
    }
    // 3. Only this plugin's own, visible tool gets a catalog; a hidden or
    //    shadowed tool gets an empty complete one, so earlier names are retired.
    let snapshot = match context.tool_view {
        ToolView::Visible => match registry.snapshot(context.cwd.as_deref()) {
            Ok(snapshot) => snapshot,
            Err(RegistryError::Aborted) => return Err(StepError::Aborted),
            // The contract says snapshots fail only by abort; anything else
            // is treated as an incomplete observation, never as a deletion.
            Err(RegistryError::Failed(_)) => return Ok(Decision::Enter(messages)),
        },
        ToolView::Hidden | ToolView::Shadowed => Snapshot {
            complete: true,
            revision: 0,
            skills: Vec::new(),
        },
    };
    // 4. Incomplete: keep the last good catalog and retry next step.
    if !snapshot.complete {
        return Ok(Decision::Enter(messages));
    }
    // 5. Entries and digest of the model-invocable skills.
    let catalog = Catalog::from_skills(&snapshot.skills, config.catalog_description_max_length);
    // 6. What the session already shows.
    let history = CatalogHistory::scan(session);
    // 7. A catalog another listener (or an earlier attempt) already proposed.
    let existing = messages.iter().position(catalog::is_catalog);
    // 8. The visible catalog is current: nothing to add, and drop a duplicate.
    if history.visible_digest == Some(catalog.digest) {
        remove(&mut messages, existing);
        return Ok(Decision::Enter(messages));
    }
    // 9. The proposed catalog is already the current one.
    if let Some(index) = existing
        && catalog::published_digest(&messages[index]) == Some(catalog.digest)
    {
        return Ok(Decision::Enter(messages));
    }
    // 10. Nothing was ever published and nothing is listed: no tombstone needed.
    if !history.published && catalog.len == 0 {
        remove(&mut messages, existing);
        return Ok(Decision::Enter(messages));
    }
    // 11. Publish: initial the first time, a replacement ever after.
    let message = if history.published {
        catalog.replacement_message()
    } else {
        catalog.initial_message()
    };
    match existing {
        Some(index) => messages[index] = message,
        None => messages.push(message),
    }
    Ok(Decision::Enter(messages))
}

fn remove(messages: &mut Vec<Message>, index: Option<usize>) {
    if let Some(index) = index {
        messages.remove(index);
    }
}

#[cfg(test)]
mod tests {
    use std::cell::{Cell, RefCell};
    use std::collections::HashSet;

    use super::*;
    use crate::types::{ContentBlock, InvocationPolicy, SkillDefinition, SkillSummary, UserMessage, UserMessagePage};

    struct FakeRegistry {
        snapshot: RefCell<Result<Snapshot, RegistryError>>,
        snapshots_taken: Cell<usize>,
    }

    impl FakeRegistry {
        fn with(skills: &[(&str, &str)]) -> Self {
            let skills = skills
                .iter()
                .map(|(name, description)| SkillSummary {
                    name: (*name).to_owned(),
                    description: (*description).to_owned(),
                    invocation: InvocationPolicy {
                        model_invocable: true,
                        user_invocable: true,
                    },
                    provider: "runtime".to_owned(),
                    source: "runtime".to_owned(),
                })
                .collect();
            Self {
                snapshot: RefCell::new(Ok(Snapshot {
                    complete: true,
                    revision: 1,
                    skills,
                })),
                snapshots_taken: Cell::new(0),
            }
        }
    }

    impl Registry for FakeRegistry {
        fn snapshot(&self, _cwd: Option<&str>) -> Result<Snapshot, RegistryError> {
            self.snapshots_taken.set(self.snapshots_taken.get() + 1);
            self.snapshot.borrow().clone()
        }
        fn list(&self, _cwd: Option<&str>) -> Result<Vec<SkillSummary>, RegistryError> {
            unreachable!()
        }
        fn get(&self, _cwd: Option<&str>, _name: &str) -> Result<Option<SkillDefinition>, RegistryError> {
            unreachable!()
        }
    }

    /// A session: user messages in seq order plus the visible set.
    #[derive(Default)]
    struct FakeSession {
        messages: Vec<UserMessage>,
        hidden: HashSet<u64>,
        pages_read: Cell<usize>,
    }

    impl FakeSession {
        fn push(&mut self, message: Message) -> u64 {
            let seq = self.messages.len() as u64;
            self.messages.push(UserMessage { seq, message });
            seq
        }
    }

    impl SessionHistory for FakeSession {
        fn read_user_messages(&self, filters: &[SourceFilter], before: Option<u64>, limit: u32) -> UserMessagePage {
            self.pages_read.set(self.pages_read.get() + 1);
            let matching: Vec<_> = self
                .messages
                .iter()
                .rev()
                .filter(|event| before.is_none_or(|before| event.seq < before))
                .filter(|event| {
                    let source: serde_json::Value = serde_json::from_str(&event.message.source).unwrap();
                    filters.iter().any(|filter| {
                        source["kind"] == filter.kind.as_str()
                            && filter
                                .plugin
                                .as_ref()
                                .is_none_or(|plugin| source["plugin"] == plugin.as_str())
                    })
                })
                .take(limit as usize + 1)
                .cloned()
                .collect();
            let more = matching.len() > limit as usize;
            let messages: Vec<_> = matching.into_iter().take(limit as usize).collect();
            let next = if more {
                messages.last().map(|event| event.seq)
            } else {
                None
            };
            UserMessagePage { messages, next }
        }
        fn is_visible(&self, seq: u64) -> bool {
            !self.hidden.contains(&seq)
        }
    }

    fn user(text: &str) -> Message {
        Message {
            source: r#"{"kind":"user"}"#.to_owned(),
            content: vec![ContentBlock::Text(text.to_owned())],
        }
    }

    fn context(tool_view: ToolView) -> StepContext {
        StepContext {
            cwd: Some("/w".to_owned()),
            tool_view,
            aborted: false,
        }
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
        match pre_step(
            &Config::default(),
            &context(view),
            Decision::Enter(proposed),
            registry,
            session,
        ) {
            Ok(Decision::Enter(messages)) => messages,
            other => panic!("expected enter, got {other:?}"),
        }
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
        assert_eq!(
            messages,
            vec![user("hi"), catalog_of(&[("a", "One.")]).initial_message()]
        );
    }

    #[test]
    fn nothing_on_an_unchanged_step() {
        let registry = FakeRegistry::with(&[("a", "One.")]);
        let mut session = FakeSession::default();
        session.push(catalog_of(&[("a", "One.")]).initial_message());
        assert_eq!(run(&registry, &session, vec![user("hi")]), vec![user("hi")]);
    }

    #[test]
    fn replacement_when_a_skill_is_added_or_a_description_changes() {
        let mut session = FakeSession::default();
        session.push(catalog_of(&[("a", "One.")]).initial_message());
        for skills in [&[("a", "One."), ("b", "Two.")][..], &[("a", "Changed.")][..]] {
            let messages = run(&FakeRegistry::with(skills), &session, vec![]);
            assert_eq!(messages, vec![catalog_of(skills).replacement_message()]);
        }
    }

    #[test]
    fn empty_replacement_when_every_skill_is_removed() {
        let mut session = FakeSession::default();
        session.push(catalog_of(&[("a", "One.")]).initial_message());
        let messages = run(&FakeRegistry::with(&[]), &session, vec![]);
        assert_eq!(messages, vec![catalog_of(&[]).replacement_message()]);
    }

    #[test]
    fn nothing_when_nothing_was_ever_published_and_nothing_is_listed() {
        assert_eq!(
            run(&FakeRegistry::with(&[]), &FakeSession::default(), vec![user("hi")]),
            vec![user("hi")]
        );
    }

    #[test]
    fn incomplete_snapshot_keeps_the_decision_unchanged() {
        let registry = FakeRegistry::with(&[]);
        registry.snapshot.borrow_mut().as_mut().unwrap().complete = false;
        let mut session = FakeSession::default();
        session.push(catalog_of(&[("a", "One.")]).initial_message());
        let stale = catalog_of(&[("z", "Stale.")]).initial_message();
        assert_eq!(
            run(&registry, &session, vec![user("hi"), stale.clone()]),
            vec![user("hi"), stale]
        );
    }

    #[test]
    fn compaction_is_followed_by_a_replacement_re_establishing_the_catalog() {
        let mut session = FakeSession::default();
        let seq = session.push(catalog_of(&[("a", "One.")]).initial_message());
        session.hidden.insert(seq);
        let messages = run(&FakeRegistry::with(&[("a", "One.")]), &session, vec![]);
        assert_eq!(messages, vec![catalog_of(&[("a", "One.")]).replacement_message()]);
    }

    #[test]
    fn the_newest_visible_catalog_counts_even_behind_hidden_ones() {
        let mut session = FakeSession::default();
        session.push(catalog_of(&[("a", "One.")]).initial_message());
        for _ in 0..40 {
            session.push(user("chatter"));
            let hidden = session.push(catalog_of(&[("b", "Two.")]).replacement_message());
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
            session.push(catalog_of(&[("a", "One.")]).initial_message());
            assert_eq!(
                run_with(&registry, &session, vec![], view),
                vec![catalog_of(&[]).replacement_message()]
            );
            assert_eq!(registry.snapshots_taken.get(), 0);
        }
    }

    #[test]
    fn a_proposed_duplicate_of_the_visible_catalog_is_removed() {
        let current = catalog_of(&[("a", "One.")]);
        let mut session = FakeSession::default();
        session.push(current.initial_message());
        let proposed = vec![user("x"), current.replacement_message(), user("y")];
        assert_eq!(
            run(&FakeRegistry::with(&[("a", "One.")]), &session, proposed),
            vec![user("x"), user("y")]
        );
    }

    #[test]
    fn a_proposed_catalog_matching_the_current_one_is_kept() {
        let current = catalog_of(&[("a", "One.")]);
        let proposed = vec![current.initial_message(), user("y")];
        assert_eq!(
            run(
                &FakeRegistry::with(&[("a", "One.")]),
                &FakeSession::default(),
                proposed.clone()
            ),
            proposed
        );
    }

    #[test]
    fn a_proposed_stale_catalog_is_replaced_in_place() {
        let stale = catalog_of(&[("old", "Old.")]).initial_message();
        let messages = run(
            &FakeRegistry::with(&[("a", "One.")]),
            &FakeSession::default(),
            vec![user("x"), stale, user("y")],
        );
        assert_eq!(
            messages,
            vec![user("x"), catalog_of(&[("a", "One.")]).initial_message(), user("y")]
        );
    }

    #[test]
    fn a_proposed_catalog_is_removed_when_nothing_is_listed_and_nothing_was_published() {
        let stale = catalog_of(&[("old", "Old.")]).initial_message();
        assert_eq!(
            run(
                &FakeRegistry::with(&[]),
                &FakeSession::default(),
                vec![stale, user("y")]
            ),
            vec![user("y")]
        );
    }

    #[test]
    fn a_reject_passes_through_without_any_registry_or_session_call() {
        let registry = FakeRegistry::with(&[("a", "One.")]);
        let session = FakeSession::default();
        let reject = Decision::Reject(Some("{\"reason\":\"budget\"}".to_owned()));
        assert_eq!(
            pre_step(
                &Config::default(),
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
            pre_step(
                &Config::default(),
                &aborted,
                Decision::Enter(vec![]),
                &registry,
                &FakeSession::default()
            ),
            Err(StepError::Aborted)
        );
        *registry.snapshot.borrow_mut() = Err(RegistryError::Aborted);
        assert_eq!(
            pre_step(
                &Config::default(),
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
            vec![catalog_of(&[("a", "Two.")]).replacement_message()]
        );
    }

    #[test]
    fn configuration_caps_descriptions() {
        let config = Config {
            catalog_description_max_length: 5,
        };
        let registry = FakeRegistry::with(&[("a", "abcdefgh")]);
        let Ok(Decision::Enter(messages)) = pre_step(
            &config,
            &context(ToolView::Visible),
            Decision::Enter(vec![]),
            &registry,
            &FakeSession::default(),
        ) else {
            panic!()
        };
        assert!(messages[0].single_text().unwrap().contains("- `a`: ab...\n"));
    }
}

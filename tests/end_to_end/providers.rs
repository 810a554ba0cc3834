//! Skill providers that misbehave, through the real component, each with the
//! reference's outcome (docs/spec.md §3.3, §4.1). The others are tested elsewhere: a
//! listing that fails in `scenarios/incomplete-snapshot-keeps-last-catalog.json`
//! and the registry's unit tests, a provider that hangs in `deadlines.rs`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use skill_host::providers::local::{LocalProvider, LocalRoots};
use skill_host::session::{SessionHeader, SessionLog, SharedSession};
use skill_host::test_support::providers::{Fake, candidate};
use skill_host::{Decision, SkillCandidate, SkillRegistry, StepInput, StepOutcome, ToolOutcome, run_step};

use crate::common::{Sandbox, plugin};

fn session() -> SharedSession {
    SharedSession::new(SessionLog::in_memory(SessionHeader::new(Some("/workspace".to_owned()))))
}

/// The text of the messages a step entered.
fn step_texts(registry: &Arc<SkillRegistry>, session: &SharedSession, cwd: &str) -> Vec<String> {
    let input = StepInput { cwd: Some(cwd.into()), ..StepInput::default() };
    let outcome = run_step(plugin(), registry, session, &input, Decision::Enter(vec![])).unwrap();
    let StepOutcome::Decided(Decision::Enter(messages)) = outcome else { panic!("{outcome:?}") };
    messages.iter().map(|data| skill_host::message::single_text(data).unwrap().to_owned()).collect()
}

#[test]
fn a_provider_that_invalidates_itself_on_every_listing_keeps_the_last_catalog_without_looping() {
    let triage =
        SkillCandidate { description: "Triage a bug report.".to_owned(), ..candidate("flapping", "triage-bug") };
    let flapping = Arc::new(Fake::with_candidates("flapping", vec![triage]));
    let registry = Arc::new(SkillRegistry::new());
    registry.register_provider(flapping.clone());
    let session = session();
    assert_eq!(step_texts(&registry, &session, "/workspace").len(), 1, "the first step publishes the catalog");

    // From now on it invalidates its registry during every listing, as a
    // provider whose source changes all the time would.
    flapping.invalidate_during(&registry, usize::MAX);
    registry.invalidate();
    let lists = flapping.lists.load(Ordering::SeqCst);
    for round in 1..=3 {
        // Superseded twice, so incomplete: the model keeps its catalog.
        assert_eq!(step_texts(&registry, &session, "/workspace"), Vec::<String>::new(), "round {round}");
        // Listed once and retried once, never cached.
        assert_eq!(flapping.lists.load(Ordering::SeqCst), lists + 2 * round, "round {round}");
    }
    assert_eq!(session.lock().next_seq(), 1);
    // The tool still loads what the incomplete listing holds.
    let outcome = plugin().invoke(&registry, Some("/workspace"), r#"{"name":"triage-bug"}"#).unwrap();
    assert!(matches!(outcome, ToolOutcome::Success { .. }), "{outcome:?}");
}

/// A project with one skill in `.agents/skills`, and a registry over it whose
/// user-level roots are empty.
fn local_project(sandbox: &Sandbox, name: &str) -> (std::path::PathBuf, Arc<SkillRegistry>) {
    let project = sandbox.path().join("project");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    sandbox.write_skill(&project, name, "description: Triage a bug report.\n", "Steps.");
    let roots = LocalRoots {
        dsh_home: Some(sandbox.path().join("home/dsh")),
        agents_home: Some(sandbox.path().join("home/agents")),
        ..LocalRoots::default()
    };
    let registry = Arc::new(SkillRegistry::new());
    registry.register_provider(Arc::new(LocalProvider::new(roots)));
    (project, registry)
}

#[test]
fn a_body_that_disappears_between_listing_and_loading_is_unknown_or_no_longer_available() {
    let sandbox = Sandbox::new();
    let (project, registry) = local_project(&sandbox, "triage-bug");
    let cwd = project.to_str().unwrap();
    let session = session();
    let catalog = step_texts(&registry, &session, cwd);
    assert!(catalog[0].contains("- `triage-bug`: Triage a bug report."), "{catalog:?}");

    // Listed (the catalog and the cached snapshot have it), then deleted.
    std::fs::remove_dir_all(project.join(".agents/skills/triage-bug")).unwrap();
    let outcome = plugin().invoke(&registry, Some(cwd), r#"{"name":"triage-bug"}"#).unwrap();
    assert_eq!(
        outcome,
        ToolOutcome::Error { text: "Error: skill \"triage-bug\" is unknown or no longer available".to_owned() }
    );
}

#[test]
fn a_body_that_changes_name_is_unknown_and_the_next_catalog_follows_it() {
    let sandbox = Sandbox::new();
    let (project, registry) = local_project(&sandbox, "triage-bug");
    let cwd = project.to_str().unwrap();
    let session = session();
    assert_eq!(step_texts(&registry, &session, cwd).len(), 1);
    assert_eq!(step_texts(&registry, &session, cwd), Vec::<String>::new(), "the catalog is current");

    // The file keeps its place but now names another skill.
    let file = project.join(".agents/skills/triage-bug/SKILL.md");
    std::fs::write(&file, "---\nname: triage-issue\ndescription: Triage an issue.\n---\nSteps.\n").unwrap();
    let outcome = plugin().invoke(&registry, Some(cwd), r#"{"name":"triage-bug"}"#).unwrap();
    assert_eq!(
        outcome,
        ToolOutcome::Error { text: "Error: skill \"triage-bug\" is unknown or no longer available".to_owned() }
    );
    // The rename invalidated the provider, so the next step lists afresh and
    // replaces the catalog; nothing else would have told the registry.
    let replacement = step_texts(&registry, &session, cwd);
    assert_eq!(replacement.len(), 1, "{replacement:?}");
    assert!(replacement[0].starts_with("<system-reminder>\nThe available skill catalog changed."), "{replacement:?}");
    assert!(replacement[0].contains("- `triage-issue`: Triage an issue.\n</available_skills>"), "{replacement:?}");
    assert!(!replacement[0].contains("triage-bug"), "{replacement:?}");
}

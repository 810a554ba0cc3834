//! The registry's rules (docs/spec.md §4.1) against fake providers.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::*;
use crate::test_support::providers::{Fake, ranked};

fn registry_with(providers: Vec<Arc<Fake>>) -> Arc<SkillRegistry> {
    let registry = Arc::new(SkillRegistry::new());
    for provider in providers {
        registry.register_provider(provider);
    }
    registry
}

fn winners(snapshot: &RegistrySnapshot) -> Vec<(String, String)> {
    snapshot.skills.iter().map(|winner| (winner.candidate.name.clone(), winner.candidate.provider.clone())).collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

#[test]
fn duplicates_go_to_the_lowest_rank_then_provider_order_then_the_providers_own_order() {
    let first = Arc::new(Fake::new("first", &[("b", 300), ("tie", 100), ("own", 100), ("own", 100)]));
    let second = Arc::new(Fake::new("second", &[("b", 200), ("tie", 100), ("a", 500)]));
    let registry = registry_with(vec![first, second]);
    let snapshot = registry.snapshot(None);
    assert!(snapshot.complete);
    // Sorted by name; `b` from the lower rank, `tie` from the first provider.
    assert_eq!(winners(&snapshot), pairs(&[("a", "second"), ("b", "second"), ("own", "first"), ("tie", "first")]));
    let shadowed: Vec<_> =
        snapshot.shadowed.iter().map(|s| (s.candidate.name.as_str(), s.by_source.as_str())).collect();
    assert_eq!(shadowed, [("own", "first"), ("tie", "first"), ("b", "second")]);
}

#[test]
fn runtime_skills_rank_250_and_the_first_registration_wins() {
    let registry = registry_with(vec![Arc::new(Fake::new("disk", &[("low", 100), ("high", 300)]))]);
    assert_eq!(registry.register_runtime(RuntimeSkill::new("low", "Runtime.", "x")), Ok(true));
    assert_eq!(registry.register_runtime(RuntimeSkill::new("high", "Runtime.", "first")), Ok(true));
    assert_eq!(registry.register_runtime(RuntimeSkill::new("high", "Again.", "second")), Ok(false));
    assert_eq!(
        registry.register_runtime(RuntimeSkill::new("Bad_Name", "x", "x")),
        Err("invalid skill name \"Bad_Name\"".to_owned())
    );
    assert_eq!(
        registry.register_runtime(RuntimeSkill::new("empty", "", "x")),
        Err("skill \"empty\" requires a description".to_owned())
    );
    let snapshot = registry.snapshot(None);
    assert_eq!(winners(&snapshot), pairs(&[("high", "runtime"), ("low", "disk")]));
    assert_eq!(registry.get(None, "high").unwrap().unwrap().content, "first");
}

#[test]
fn a_failing_provider_is_omitted_and_makes_the_snapshot_incomplete() {
    let registry =
        registry_with(vec![Arc::new(Fake::failing("broken", "disk on fire")), Arc::new(Fake::new("ok", &[("a", 1)]))]);
    let snapshot = registry.snapshot(None);
    assert!(!snapshot.complete);
    assert_eq!(winners(&snapshot), pairs(&[("a", "ok")]));
    assert_eq!(snapshot.warnings, ["skill provider \"broken\" skipped: disk on fire"]);
    // The tool's lookup still works for the others.
    assert_eq!(registry.list(None).unwrap().skills.len(), 1);
}

#[test]
fn an_explicitly_incomplete_listing_contributes_but_is_never_cached() {
    let partial = Arc::new(Fake::new("partial", &[("a", 1)]));
    partial.listing.lock().unwrap().as_mut().unwrap().complete = false;
    let registry = registry_with(vec![partial.clone()]);
    for _ in 0..3 {
        let snapshot = registry.snapshot(None);
        assert!(!snapshot.complete);
        assert_eq!(winners(&snapshot), pairs(&[("a", "partial")]));
    }
    assert_eq!(partial.lists.load(Ordering::SeqCst), 3);
}

#[test]
fn invalid_candidates_fail_the_tools_listing_and_leave_the_snapshot_incomplete() {
    for (bad, message) in [
        (ranked("p", "Not_Kebab", 1), "skill provider \"p\" returned invalid skill name \"Not_Kebab\""),
        (
            SkillCandidate { description: String::new(), ..ranked("p", "empty", 1) },
            "skill provider \"p\" returned skill \"empty\" without a description",
        ),
        (ranked("other", "stolen", 1), "skill provider \"p\" returned skill \"stolen\" for provider \"other\""),
    ] {
        let provider = Arc::new(Fake::new("p", &[("fine", 1)]));
        provider.listing.lock().unwrap().as_mut().unwrap().candidates.push(bad);
        let registry = registry_with(vec![provider]);
        assert!(!registry.snapshot(None).complete);
        assert_eq!(registry.list(None).unwrap_err(), RegistryError::Failed(message.to_owned()));
    }
}

#[test]
fn complete_snapshots_are_cached_per_cwd_until_invalidated() {
    let provider = Arc::new(Fake::new("p", &[("a", 1)]));
    let registry = registry_with(vec![provider.clone()]);
    let first = registry.snapshot(Some(Path::new("/one")));
    let again = registry.snapshot(Some(Path::new("/one")));
    assert_eq!(provider.lists.load(Ordering::SeqCst), 1);
    assert_eq!(first.revision, again.revision);
    registry.snapshot(Some(Path::new("/two")));
    assert_eq!(provider.lists.load(Ordering::SeqCst), 2);
    registry.invalidate();
    let fresh = registry.snapshot(Some(Path::new("/one")));
    assert_eq!(provider.lists.load(Ordering::SeqCst), 3);
    assert_ne!(fresh.revision, first.revision);
}

#[test]
fn the_cache_is_bounded_and_evicts_the_oldest() {
    let provider = Arc::new(Fake::new("p", &[("a", 1)]));
    let registry = SkillRegistry::with_cache_capacity(2);
    registry.register_provider(provider.clone());
    for cwd in ["/1", "/2", "/3"] {
        registry.snapshot(Some(Path::new(cwd)));
    }
    assert_eq!(provider.lists.load(Ordering::SeqCst), 3);
    registry.snapshot(Some(Path::new("/3")));
    registry.snapshot(Some(Path::new("/2")));
    assert_eq!(provider.lists.load(Ordering::SeqCst), 3, "the two newest stay cached");
    registry.snapshot(Some(Path::new("/1")));
    assert_eq!(provider.lists.load(Ordering::SeqCst), 4, "the oldest was evicted");
}

#[test]
fn a_snapshot_superseded_once_is_retried_and_twice_is_incomplete() {
    let provider = Arc::new(Fake::new("p", &[("a", 1)]));
    let registry = registry_with(vec![provider.clone()]);
    provider.invalidate_during(&registry, 1);
    let snapshot = registry.snapshot(None);
    assert!(snapshot.complete);
    assert_eq!(provider.lists.load(Ordering::SeqCst), 2);

    provider.invalidate_during(&registry, 2);
    registry.invalidate();
    let snapshot = registry.snapshot(None);
    assert!(!snapshot.complete);
    assert_eq!(winners(&snapshot), pairs(&[("a", "p")]));
    // Not cached: the next snapshot lists again.
    registry.snapshot(None);
    assert_eq!(provider.lists.load(Ordering::SeqCst), 5);
    provider.invalidate_during(&registry, 0);
}

#[test]
fn bodies_are_loaded_from_the_winning_provider_every_time() {
    let loser = Arc::new(Fake::new("loser", &[("a", 500)]));
    let winner = Arc::new(Fake::new("winner", &[("a", 100)]));
    let registry = registry_with(vec![loser.clone(), winner.clone()]);
    for _ in 0..3 {
        let definition = registry.get(None, "a").unwrap().unwrap();
        assert_eq!(definition.summary.provider, "winner");
    }
    assert_eq!((winner.loads.load(Ordering::SeqCst), loser.loads.load(Ordering::SeqCst)), (3, 0));
    assert_eq!(registry.get(None, "missing").unwrap(), None);
    assert_eq!(registry.get(None, "../a").unwrap(), None);
}

#[test]
fn a_renamed_definition_counts_as_unknown_and_invalidates() {
    let provider = Arc::new(Fake::new("p", &[("a", 1)]).renaming_to("b"));
    let registry = registry_with(vec![provider.clone()]);
    registry.snapshot(None);
    assert_eq!(provider.lists.load(Ordering::SeqCst), 1);
    assert_eq!(registry.get(None, "a").unwrap(), None);
    registry.snapshot(None);
    assert_eq!(provider.lists.load(Ordering::SeqCst), 2, "the rename invalidated the cache");
}

#[test]
fn a_providers_load_failure_carries_its_text() {
    let provider = Arc::new(Fake::new("p", &[("a", 1)]).failing_loads("permission denied"));
    let registry = registry_with(vec![provider]);
    assert_eq!(registry.get(None, "a").unwrap_err(), RegistryError::Failed("permission denied".to_owned()));
}

#[test]
fn an_incomplete_listing_is_a_warning_that_says_why() {
    let partial = Arc::new(Fake::new("partial", &[("a", 1)]));
    {
        let mut listing = partial.listing.lock().unwrap();
        let listing = listing.as_mut().unwrap();
        listing.complete = false;
        listing.problems = vec!["cannot read skill file /r/x.md: Input/output error (os error 5)".to_owned()];
    }
    let quiet = Arc::new(Fake::new("quiet", &[("b", 1)]));
    quiet.listing.lock().unwrap().as_mut().unwrap().complete = false;
    let registry = registry_with(vec![partial, quiet]);
    assert!(registry.last_incomplete_warnings().is_empty(), "nothing listed yet");
    let snapshot = registry.snapshot(None);
    let expected = [
        "skill provider \"partial\" listed incompletely: cannot read skill file /r/x.md: Input/output error (os error 5)",
        "skill provider \"quiet\" listed incompletely",
    ];
    assert_eq!(snapshot.warnings, expected);
    assert_eq!(registry.last_incomplete_warnings(), expected);
}

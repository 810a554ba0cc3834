//! Providers under a budget: a provider that hangs costs a call its deadline
//! (or nothing after an abort), never the registry's state.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::super::*;
use crate::test_support::providers::Gated;

/// How long a test waits for something that must happen soon; only reached
/// when the behaviour under test is broken.
const BOUND: Duration = Duration::from_secs(5);

fn names(snapshot: &RegistrySnapshot) -> Vec<&str> {
    snapshot.skills.iter().map(|winner| winner.candidate.name.as_str()).collect()
}

fn within(millis: u64) -> ProviderDeadline {
    ProviderDeadline::until(Instant::now() + Duration::from_millis(millis))
}

fn overdue(registry: &SkillRegistry, index: usize) -> usize {
    lock(&registry.contents).providers[index].overdue()
}

/// Polls (bounded) until the abandoned calls of provider `index` have returned.
fn wait_until_no_overdue(registry: &SkillRegistry, index: usize) {
    let start = Instant::now();
    while overdue(registry, index) > 0 {
        assert!(start.elapsed() < BOUND, "an abandoned call never finished");
        thread::sleep(Duration::from_millis(1));
    }
}

fn cached(registry: &SkillRegistry) -> usize {
    lock(&registry.cache).entries.len()
}

#[test]
fn a_hung_provider_makes_the_snapshot_incomplete_by_the_deadline_and_its_late_answer_is_dropped() {
    let (slow, entered) = Gated::named("slow", &["late"]);
    slow.hold_lists.store(true, Ordering::SeqCst);
    let (quick, _) = Gated::named("quick", &["a"]);
    let registry = SkillRegistry::new();
    registry.register_provider(slow.clone());
    registry.register_provider(quick);
    let generation = registry.generation();

    let start = Instant::now();
    let snapshot = registry.snapshot_within(None, &within(50));
    let elapsed = start.elapsed();
    assert_eq!(entered.try_recv(), Ok("list"), "the provider was called");
    assert!(elapsed >= Duration::from_millis(50), "it waited for the deadline ({elapsed:?})");
    assert!(elapsed < BOUND, "it returned at the deadline ({elapsed:?})");
    assert!(!snapshot.complete);
    assert_eq!(names(&snapshot), ["a"], "the providers that answered still count");
    assert_eq!(snapshot.warnings, ["skill provider \"slow\" skipped: did not answer before the call's deadline"]);
    assert_eq!(cached(&registry), 0, "an incomplete snapshot is never cached");
    assert_eq!(overdue(&registry, 0), 1, "the abandoned call is still running, detached");

    // The hung call returns its listing now; nobody takes it.
    slow.open_gate();
    wait_until_no_overdue(&registry, 0);
    assert_eq!(cached(&registry), 0, "the late answer was dropped");
    assert_eq!(registry.generation(), generation, "and changed nothing");
    let fresh = registry.snapshot_within(None, &within(5_000));
    assert!(fresh.complete);
    assert_eq!(names(&fresh), ["a", "late"]);
    assert_eq!(slow.calls.load(Ordering::SeqCst), 2);
}

#[test]
fn an_abort_abandons_a_hung_provider_without_waiting_for_a_deadline() {
    let (slow, entered) = Gated::named("slow", &["late"]);
    slow.hold_lists.store(true, Ordering::SeqCst);
    let registry = SkillRegistry::new();
    registry.register_provider(slow.clone());
    let abort = Arc::new(AtomicBool::new(false));
    let raiser = {
        let abort = Arc::clone(&abort);
        thread::spawn(move || {
            // Raised only once the provider is known to be hanging.
            assert_eq!(entered.recv_timeout(BOUND), Ok("list"));
            abort.store(true, Ordering::SeqCst);
        })
    };
    // No deadline at all: only the abort can end the wait.
    let snapshot = registry.snapshot_within(None, &ProviderDeadline::unbounded().with_abort(Some(abort)));
    raiser.join().unwrap();
    assert!(!snapshot.complete);
    assert!(snapshot.skills.is_empty());
    assert_eq!(snapshot.warnings, ["skill provider \"slow\" skipped: was abandoned because the step was aborted"]);
    slow.open_gate();
    wait_until_no_overdue(&registry, 0);
}

#[test]
fn a_provider_whose_earlier_calls_still_hang_is_not_called_again() {
    let (slow, _entered) = Gated::named("slow", &["late"]);
    slow.hold_lists.store(true, Ordering::SeqCst);
    let registry = SkillRegistry::new();
    registry.register_provider(slow.clone());
    for _ in 0..MAX_OVERDUE {
        assert!(!registry.snapshot_within(None, &within(10)).complete);
    }
    assert_eq!(slow.calls.load(Ordering::SeqCst), MAX_OVERDUE);

    // Refused at once, no thread started, even with time to spare.
    let start = Instant::now();
    let snapshot = registry.snapshot_within(None, &within(60_000));
    assert!(start.elapsed() < BOUND);
    assert_eq!(slow.calls.load(Ordering::SeqCst), MAX_OVERDUE);
    assert_eq!(
        snapshot.warnings,
        [format!(
            "skill provider \"slow\" skipped: still has {MAX_OVERDUE} earlier calls running that did not answer in time"
        )]
    );

    // Once they return, it is called again.
    slow.open_gate();
    wait_until_no_overdue(&registry, 0);
    let snapshot = registry.snapshot_within(None, &within(5_000));
    assert!(snapshot.complete);
    assert_eq!(names(&snapshot), ["late"]);
    assert_eq!(slow.calls.load(Ordering::SeqCst), MAX_OVERDUE + 1);
}

#[test]
fn a_hung_load_fails_the_lookup_with_a_text_that_says_so() {
    let (slow, entered) = Gated::named("slow", &["review"]);
    slow.hold_loads.store(true, Ordering::SeqCst);
    let registry = SkillRegistry::new();
    registry.register_provider(slow.clone());
    assert_eq!(
        registry.get_within(None, "review", &within(50)),
        Err(RegistryError::Failed("skill provider \"slow\" did not answer before the call's deadline".to_owned()))
    );
    assert_eq!(entered.try_iter().collect::<Vec<_>>(), ["list", "load"]);
    // The listing answered in time, so it was cached; only the load hung.
    assert_eq!(cached(&registry), 1);
    slow.open_gate();
    wait_until_no_overdue(&registry, 0);
    let loaded = registry.get_within(None, "review", &within(5_000)).unwrap().unwrap();
    assert_eq!(loaded.content, "review body");
}

#[test]
fn a_provider_that_panics_under_a_budget_is_a_failed_listing() {
    let (boom, _) = Gated::named("boom", &["a"]);
    boom.panics.store(true, Ordering::SeqCst);
    let (quick, _) = Gated::named("quick", &["b"]);
    let registry = SkillRegistry::new();
    registry.register_provider(boom);
    registry.register_provider(quick);
    let snapshot = registry.snapshot_within(None, &within(5_000));
    assert!(!snapshot.complete);
    assert_eq!(names(&snapshot), ["b"]);
    assert_eq!(snapshot.warnings, ["skill provider \"boom\" skipped: panicked"]);
    assert_eq!(overdue(&registry, 0), 0, "a call that returned, even by panicking, is not overdue");
}

#[test]
fn answers_within_the_budget_are_used_and_cached_and_unbounded_calls_stay_on_the_callers_thread() {
    let (quick, _) = Gated::named("quick", &["a", "b"]);
    let registry = SkillRegistry::new();
    registry.register_provider(quick.clone());
    let snapshot = registry.snapshot_within(Some(Path::new("/w")), &within(5_000));
    assert!(snapshot.complete);
    assert_eq!(names(&snapshot), ["a", "b"]);
    assert_ne!(*quick.thread.lock().unwrap(), Some(thread::current().id()), "a bounded call runs on its own thread");
    assert_eq!(registry.snapshot_within(Some(Path::new("/w")), &within(5_000)).revision, snapshot.revision);
    assert_eq!(quick.calls.load(Ordering::SeqCst), 1, "the complete snapshot was cached");

    registry.invalidate();
    registry.snapshot(Some(Path::new("/w")));
    assert_eq!(*quick.thread.lock().unwrap(), Some(thread::current().id()));
}

#[test]
fn a_name_missing_while_a_provider_hung_names_that_provider_and_a_listed_one_loads_from_the_same_listing() {
    let (slow, _entered) = Gated::named("slow", &["late"]);
    slow.hold_lists.store(true, Ordering::SeqCst);
    let (quick, _) = Gated::named("quick", &["a"]);
    let registry = SkillRegistry::new();
    registry.register_provider(slow.clone());
    registry.register_provider(quick.clone());

    let snapshot = registry.snapshot_within(None, &within(30));
    assert_eq!(snapshot.unanswered, ["skill provider \"slow\" did not answer before the call's deadline"]);
    // The hung provider might have had it: the lookup says which one it waited for.
    let missing = snapshot.lookup("late");
    assert_eq!(missing, Err(RegistryError::Failed(snapshot.unanswered[0].clone())));
    // A name the listing has is loaded from it, without listing again.
    let lists_before = quick.calls.load(Ordering::SeqCst);
    let loaded = registry.get_listed(&snapshot, None, "a", &within(2_000)).unwrap().unwrap();
    assert_eq!(loaded.summary.name, "a");
    assert_eq!(quick.calls.load(Ordering::SeqCst), lists_before + 1, "one load, no second listing");
    assert_eq!(
        registry.get_listed(&snapshot, None, "late", &within(2_000)),
        Err(RegistryError::Failed("skill provider \"slow\" did not answer before the call's deadline".to_owned()))
    );
    assert_eq!(
        registry.last_incomplete_warnings(),
        ["skill provider \"slow\" skipped: did not answer before the call's deadline"]
    );
    slow.open_gate();
    wait_until_no_overdue(&registry, 0);
}

//! A skill provider that hangs, through the real component: the step's
//! deadline and abort reach it, so the step returns, the catalog the model
//! already has stays, and an abort aborts.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use skill_host::session::{SessionHeader, SessionLog, SharedSession};
/// The provider that hangs on demand (`slow`, listing `triage-bug`), shared
/// with the unit tests and with `turns.rs`.
pub(crate) use skill_host::test_support::providers::Gated;
use skill_host::{Decision, Plugin, SandboxLimits, SkillRegistry, StepInput, StepOutcome, ToolOutcome, run_step};

use crate::common::plugin;

/// How long a test waits for a call that must return; reached only when the
/// provider's hang reached the step.
const HANG: Duration = Duration::from_secs(20);

fn session() -> SharedSession {
    SharedSession::new(SessionLog::in_memory(SessionHeader::new(Some("/workspace".to_owned()))))
}

/// Runs `call` on its own thread and waits at most [`HANG`], so that a hang
/// fails the test instead of stalling the suite.
pub(crate) fn returns<T: Send + 'static>(call: impl FnOnce() -> T + Send + 'static) -> (T, Duration) {
    let (done, result) = mpsc::channel();
    thread::spawn(move || {
        let start = Instant::now();
        let value = call();
        let _ = done.send((value, start.elapsed()));
    });
    result.recv_timeout(HANG).expect("the call hung with its provider")
}

#[test]
fn a_hung_provider_leaves_the_step_on_time_with_the_published_catalog_kept() {
    let (slow, entered) = Gated::new();
    let registry = Arc::new(SkillRegistry::new());
    registry.register_provider(slow.clone());
    let session = session();
    let input = StepInput { cwd: Some("/workspace".into()), ..StepInput::default() };

    let first = run_step(plugin(), &registry, &session, &input, Decision::Enter(vec![])).unwrap();
    let StepOutcome::Decided(Decision::Enter(messages)) = first else { panic!("{first:?}") };
    assert_eq!(messages.len(), 1, "the first step publishes the catalog");
    assert_eq!(session.lock().next_seq(), 1);

    // The skills may have changed, and the provider now hangs.
    slow.hold_lists.store(true, Ordering::SeqCst);
    registry.invalidate();
    while entered.try_recv().is_ok() {}
    let (outcome, elapsed) = {
        let (registry, session, input) = (Arc::clone(&registry), session.clone(), input.clone());
        returns(move || run_step(plugin(), &registry, &session, &input, Decision::Enter(vec![])))
    };
    assert_eq!(entered.try_recv(), Ok("list"), "the step asked the provider");
    // Not a trap: the step's own deadline (1 s) was kept.
    assert_eq!(outcome.unwrap(), StepOutcome::Decided(Decision::Enter(vec![])));
    let timeout = SandboxLimits::default().timeout;
    assert!(elapsed < timeout * 2, "the step took {elapsed:?}");
    assert_eq!(session.lock().next_seq(), 1, "no replacement catalog, empty or otherwise");

    slow.open_gate();
}

#[test]
fn an_abort_raised_while_a_provider_hangs_aborts_the_step() {
    // A deadline far away: only the abort can end this step soon.
    let plugin = Arc::new(
        Plugin::embedded("{}", SandboxLimits { timeout: Duration::from_secs(120), ..SandboxLimits::default() })
            .unwrap(),
    );
    let (slow, entered) = Gated::new();
    slow.hold_lists.store(true, Ordering::SeqCst);
    let registry = Arc::new(SkillRegistry::new());
    registry.register_provider(slow.clone());
    let session = session();
    let abort = Arc::new(AtomicBool::new(false));
    let input = StepInput { cwd: Some("/workspace".into()), abort: Some(Arc::clone(&abort)), ..StepInput::default() };

    let raiser = thread::spawn(move || {
        assert_eq!(entered.recv_timeout(HANG), Ok("list"), "the step asked the provider");
        abort.store(true, Ordering::SeqCst);
    });
    let (outcome, elapsed) = {
        let (registry, session) = (Arc::clone(&registry), session.clone());
        returns(move || run_step(&plugin, &registry, &session, &input, Decision::Enter(vec![])))
    };
    raiser.join().unwrap();
    assert_eq!(outcome.unwrap(), StepOutcome::Aborted);
    assert!(elapsed < HANG, "the step took {elapsed:?}");
    assert_eq!(session.lock().next_seq(), 0);

    slow.open_gate();
}

#[test]
fn a_tool_call_whose_provider_hangs_fails_with_an_error_that_says_so() {
    let (slow, entered) = Gated::new();
    slow.hold_loads.store(true, Ordering::SeqCst);
    let registry = Arc::new(SkillRegistry::new());
    registry.register_provider(slow.clone());
    let (outcome, _) = {
        let registry = Arc::clone(&registry);
        returns(move || plugin().invoke(&registry, Some("/workspace"), r#"{"name":"triage-bug"}"#))
    };
    assert_eq!(entered.try_iter().collect::<Vec<_>>(), ["list", "load"]);
    assert_eq!(
        outcome.unwrap(),
        ToolOutcome::Error {
            text: "Error: skill provider \"slow\" did not answer before the call's deadline".to_owned()
        }
    );
    slow.open_gate();
}

//! Two hosts stepping one session file at once take turns: the file's lock
//! is held from reading the history to appending the decision, so the second
//! step sees the first one's catalog and publishes none of its own.

use std::path::Path;
use std::process::Child;
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::Duration;

use skill_host::session::{SessionLog, SharedSession};
use skill_host::{Decision, SkillRegistry, StepInput, StepOutcome, run_step};

use crate::common::{Sandbox, path, plugin, stderr};
use crate::deadlines::{Gated, returns};

/// How long the second step is given to (wrongly) finish while the first is
/// still inside its pre-step. Passing never depends on it: with the lock the
/// second step cannot finish in any amount of time; without the lock it
/// finishes in a few milliseconds and the test fails.
const OVERLAP: Duration = Duration::from_millis(250);

/// The catalogs the plugin published into a session file.
fn catalogs_in(session: &Path) -> usize {
    let text = std::fs::read_to_string(session).unwrap();
    text.lines().filter(|line| line.contains(r#""plugin":"dsh-tool-skill""#)).count()
}

fn entered(outcome: Result<StepOutcome, skill_host::HostError>) -> usize {
    match outcome.unwrap() {
        StepOutcome::Decided(Decision::Enter(messages)) => messages.len(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_step_waits_for_the_step_another_handle_is_taking_and_publishes_no_second_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session.jsonl");
    let open = || SharedSession::new(SessionLog::open_or_create(&file, Some("/workspace")).unwrap());
    let (first_session, second_session) = (open(), open());
    let input = StepInput { cwd: Some("/workspace".into()), ..StepInput::default() };

    // The first host's provider holds its listing until the test lets go.
    let (held, calls) = Gated::new();
    held.hold_lists.store(true, Ordering::SeqCst);
    let first_registry = Arc::new(SkillRegistry::new());
    first_registry.register_provider(held.clone());
    let first = {
        let (registry, session, input) = (first_registry, first_session, input.clone());
        thread::spawn(move || run_step(plugin(), &registry, &session, &input, Decision::Enter(vec![])))
    };
    assert_eq!(calls.recv_timeout(Duration::from_secs(20)), Ok("list"), "the first step reached its provider");

    // The second host lists the same skill at once.
    let (prompt, _) = Gated::new();
    let second_registry = Arc::new(SkillRegistry::new());
    second_registry.register_provider(prompt);
    let (done, second) = mpsc::channel();
    thread::spawn(move || {
        let _ = done.send(run_step(plugin(), &second_registry, &second_session, &input, Decision::Enter(vec![])));
    });
    assert!(
        second.recv_timeout(OVERLAP).is_err(),
        "the second step finished while the first was still deciding on the same session"
    );

    held.open_gate();
    let (first, _) = returns(move || first.join().unwrap());
    assert_eq!(entered(first), 1, "the first step publishes the catalog");
    let second = second.recv_timeout(Duration::from_secs(20)).expect("the second step went on once the first was done");
    assert_eq!(entered(second), 0, "the second step saw the first one's catalog");
    assert_eq!(catalogs_in(&file), 1);
}

#[test]
fn concurrent_skill_host_steps_on_a_new_session_publish_one_catalog() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    for round in 0..4 {
        let session = sandbox.path().join(format!("session-{round}.jsonl"));
        let args = ["step", "--session", path(&session), "--cwd", path(&workspace)];
        let children: Vec<Child> = (0..3).map(|_| sandbox.command(&args).spawn().expect("skill-host starts")).collect();
        for child in children {
            let output = child.wait_with_output().unwrap();
            assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        }
        assert_eq!(catalogs_in(&session), 1, "round {round}: {}", std::fs::read_to_string(&session).unwrap());
        let log = SessionLog::open(&session).unwrap();
        assert_eq!(log.warnings(), &[] as &[String]);
    }
}

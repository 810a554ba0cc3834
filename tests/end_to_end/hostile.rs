//! The sandbox holds: a plugin that misbehaves on purpose
//! (`tests/fixtures/hostile-plugin`) is stopped at its deadline or cap with
//! an error that names what happened, the host keeps serving (the same
//! runtime's other exports, and the real plugin), and the session file stays
//! byte for byte as it was. Each behaviour runs through the library and
//! through `skill-host --plugin`.
//!
//! Deadlines are driven by hand ([`DeadlineClock::Manual`]): the tests wait
//! for the guest to reach its loop, then advance the clock, so they neither
//! sleep nor race the wall clock. One test keeps the real ticker.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skill_host::message::{self, user_source};
use skill_host::session::{SessionLog, SharedSession};
use skill_host::test_support::providers::candidate;
use skill_host::{
    DeadlineClock, Decision, HostError, OutputLimits, Plugin, SandboxLimits, SkillProvider, SkillRegistry, StepInput,
    StepOutcome, run_step,
};
use skill_host::{Listing, ProviderError, SkillCandidate, SkillDefinition};

use crate::common::{Sandbox, plugin, stderr, stdout};

static HOSTILE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hostile_plugin.wasm"));

/// The skill the hostile plugin's `loop` and `import-loop` modes ask for.
const LOOPED_SKILL: &str = "looped-skill";
/// How long a test waits for something that must happen; reached only when
/// the sandbox failed to stop the guest.
const HANG: Duration = Duration::from_secs(30);
/// A deadline no test reaches on the wall clock: manual-clock tests advance
/// past it by hand, and skill providers (which keep a wall-clock deadline)
/// never run out of time.
const MANUAL_TIMEOUT: Duration = Duration::from_secs(600);
/// One tick of the deadline clock.
const TICK: Duration = Duration::from_millis(2);

/// A provider that lists [`LOOPED_SKILL`] and reports every load, so a test
/// knows that the guest is running (and how often it called in).
struct Signalling {
    loads: Mutex<Sender<()>>,
}

impl Signalling {
    fn new() -> (Arc<Self>, Receiver<()>) {
        let (loads, calls) = mpsc::channel();
        (Arc::new(Self { loads: Mutex::new(loads) }), calls)
    }
}

fn looped_candidate() -> SkillCandidate {
    SkillCandidate { description: "Loaded by the hostile plugin.".to_owned(), ..candidate("signalling", LOOPED_SKILL) }
}

impl SkillProvider for Signalling {
    fn name(&self) -> &str {
        "signalling"
    }

    fn list(&self, _cwd: Option<&Path>) -> Result<Listing, ProviderError> {
        Ok(Listing { candidates: vec![looped_candidate()], complete: true, ..Listing::default() })
    }

    fn load(&self, _cwd: Option<&Path>, candidate: &SkillCandidate) -> Result<Option<SkillDefinition>, ProviderError> {
        let _ = self.loads.lock().unwrap().send(());
        Ok(Some(SkillDefinition { summary: candidate.clone(), content: "Body.".to_owned() }))
    }
}

fn hostile(config: Value, limits: SandboxLimits) -> Plugin {
    Plugin::new(HOSTILE, &config.to_string(), limits).expect("the hostile plugin loads")
}

fn manual(limits: SandboxLimits) -> SandboxLimits {
    SandboxLimits { timeout: MANUAL_TIMEOUT, clock: DeadlineClock::Manual, ..limits }
}

/// A session file with one step of the real plugin in it (the catalog), in a
/// temporary directory.
struct SessionFile {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl SessionFile {
    fn new(registry: &Arc<SkillRegistry>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let session = SharedSession::new(SessionLog::open_or_create(&path, Some("/workspace")).unwrap());
        run_step(plugin(), registry, &session, &input(), Decision::Enter(vec![])).unwrap();
        Self { _dir: dir, path }
    }

    fn open(&self) -> SharedSession {
        SharedSession::new(SessionLog::open(&self.path).unwrap())
    }

    fn bytes(&self) -> Vec<u8> {
        std::fs::read(&self.path).unwrap()
    }
}

fn input() -> StepInput {
    StepInput { cwd: Some("/workspace".into()), ..StepInput::default() }
}

fn registry() -> (Arc<SkillRegistry>, Receiver<()>) {
    let (provider, loads) = Signalling::new();
    let registry = Arc::new(SkillRegistry::new());
    registry.register_provider(provider);
    (registry, loads)
}

fn proposed() -> Decision {
    Decision::Enter(vec![message::user_message(user_source(), "hi")])
}

/// What a contained misbehaviour left behind.
struct Contained {
    error: HostError,
    elapsed: Duration,
}

/// Runs one hostile pre-step against a session file, with `drive` running
/// beside it (to advance a manual clock), then checks that nothing was lost:
/// the file is byte-identical, the same hostile runtime still answers
/// `definition` (its misbehaviour is limited to `pre-step`), and the real
/// plugin's next step on the same session works (and, the catalog being
/// current, appends nothing).
fn contained_with(
    config: Value,
    limits: SandboxLimits,
    drive: impl FnOnce(&Plugin, &Receiver<()>) + Send,
) -> Contained {
    let (registry, loads) = registry();
    let file = SessionFile::new(&registry);
    let before = file.bytes();
    let mut config = config;
    config["on"] = json!("pre-step");
    let hostile = hostile(config, limits);
    let session = file.open();
    let started = Instant::now();
    let error = thread::scope(|scope| {
        let (done, result) = mpsc::channel();
        let (hostile, registry, session) = (&hostile, &registry, &session);
        scope.spawn(move || {
            let _ = done.send(run_step(hostile, registry, session, &input(), proposed()));
        });
        // On any failure, free the guest first, so the scope can end and the
        // test fails instead of hanging.
        let free = || {
            if let Some(clock) = hostile.manual_clock() {
                clock.advance(MANUAL_TIMEOUT * 2);
            }
        };
        if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drive(hostile, &loads))) {
            free();
            std::panic::resume_unwind(panic);
        }
        result.recv_timeout(HANG).unwrap_or_else(|_| {
            free();
            panic!("the sandbox did not stop the guest")
        })
    })
    .expect_err("the hostile pre-step must fail");
    let elapsed = started.elapsed();
    assert_eq!(file.bytes(), before, "the session file changed: {error}");
    assert_eq!(hostile.definition().expect("the same runtime serves the next call").description, "hostile");
    let next = run_step(plugin(), &registry, &session, &input(), proposed()).expect("the real plugin serves");
    assert!(matches!(next, StepOutcome::Decided(Decision::Enter(ref messages)) if messages.len() == 1), "{next:?}");
    Contained { error, elapsed }
}

fn contained(config: Value, limits: SandboxLimits) -> Contained {
    contained_with(config, limits, |_, _| {})
}

/// Waits for the guest's next registry load, failing instead of hanging.
fn next_load(loads: &Receiver<()>) {
    loads.recv_timeout(HANG).expect("the guest called the registry");
}

#[test]
fn an_endless_loop_stops_exactly_at_the_deadline_of_a_manual_clock() {
    let outcome = contained_with(json!({"mode": "loop"}), manual(SandboxLimits::default()), |hostile, loads| {
        next_load(loads);
        hostile.manual_clock().expect("a manual clock").advance(MANUAL_TIMEOUT);
    });
    assert!(matches!(outcome.error, HostError::Timeout { call: "pre-step", .. }), "{:?}", outcome.error);
    assert_eq!(outcome.error.to_string(), "plugin call `pre-step` exceeded its deadline of 600000 ms");
}

#[test]
fn an_import_called_in_a_tight_loop_runs_until_the_last_tick_and_no_further() {
    let outcome = contained_with(json!({"mode": "import-loop"}), manual(SandboxLimits::default()), |hostile, loads| {
        let clock = hostile.manual_clock().expect("a manual clock");
        next_load(loads);
        // One tick short of the deadline the guest keeps calling in...
        clock.advance(MANUAL_TIMEOUT - TICK);
        for _ in 0..3 {
            next_load(loads);
        }
        // ...and the last tick stops it.
        clock.advance(TICK);
    });
    assert_eq!(outcome.error.to_string(), "plugin call `pre-step` exceeded its deadline of 600000 ms");
}

#[test]
fn an_endless_loop_stops_at_the_deadline_of_the_real_ticker() {
    let limits = SandboxLimits { timeout: Duration::from_millis(50), ..SandboxLimits::default() };
    let outcome = contained(json!({"mode": "loop"}), limits);
    assert!(matches!(outcome.error, HostError::Timeout { call: "pre-step", .. }), "{:?}", outcome.error);
    assert_eq!(outcome.error.to_string(), "plugin call `pre-step` exceeded its deadline of 50 ms");
    // Not before the deadline; well before a hang (the bound only guards
    // against a ticker that never stops the guest, so a slow machine passes).
    assert!(outcome.elapsed >= Duration::from_millis(50), "stopped after {:?}", outcome.elapsed);
    assert!(outcome.elapsed < HANG, "took {:?}", outcome.elapsed);
}

#[test]
fn unbounded_allocation_stops_at_the_memory_cap() {
    let limits = SandboxLimits { memory_bytes: 16 * 1024 * 1024, ..manual(SandboxLimits::default()) };
    let outcome = contained(json!({"mode": "alloc"}), limits);
    assert!(
        matches!(outcome.error, HostError::MemoryLimit { call: "pre-step", limit_bytes } if limit_bytes == 16 << 20),
        "{:?}",
        outcome.error
    );
    assert_eq!(outcome.error.to_string(), "plugin call `pre-step` exceeded its memory cap of 16 MiB");
}

#[test]
fn unbounded_recursion_exhausts_the_stack() {
    let outcome = contained(json!({"mode": "stack"}), manual(SandboxLimits::default()));
    assert!(matches!(outcome.error, HostError::StackExhausted { call: "pre-step" }), "{:?}", outcome.error);
    assert_eq!(outcome.error.to_string(), "plugin call `pre-step` trapped: call stack exhausted");
}

#[test]
fn a_guest_panic_reports_its_message_and_location() {
    let outcome = contained(json!({"mode": "panic"}), manual(SandboxLimits::default()));
    let HostError::Panic { call, location, message } = &outcome.error else { panic!("{:?}", outcome.error) };
    assert_eq!((*call, message.as_str()), ("pre-step", "hostile plugin panicked on purpose"));
    assert!(location.starts_with("src/lib.rs:"), "{location}");
    assert_eq!(
        outcome.error.to_string(),
        format!("plugin call `pre-step` trapped: the guest panicked at {location}: hostile plugin panicked on purpose")
    );
}

#[test]
fn a_trap_after_the_guest_called_the_host_changes_nothing() {
    let outcome = contained(json!({"mode": "trap-after-import"}), manual(SandboxLimits::default()));
    assert!(matches!(outcome.error, HostError::Trap { call: "pre-step", .. }), "{:?}", outcome.error);
    assert_eq!(outcome.error.to_string(), "plugin call `pre-step` trapped: wasm `unreachable` instruction executed");
}

#[test]
fn only_a_pre_step_may_decide_a_step() {
    let (registry, _loads) = registry();
    let plugin = hostile(json!({"mode": "step-outside"}), manual(SandboxLimits::default()));
    let arguments = json!({ "name": LOOPED_SKILL }).to_string();
    assert_eq!(
        plugin.invoke(&registry, Some("/workspace"), &arguments).unwrap_err().to_string(),
        "plugin call `invoke` trapped: the plugin called `step.decide` outside a pre-step"
    );
}

#[test]
fn a_page_of_user_messages_takes_at_most_sixteen_filters() {
    let (registry, _loads) = registry();
    let file = SessionFile::new(&registry);
    let session = file.open();
    let filters =
        |count: u64| hostile(json!({"mode": "many-filters", "count": count}), manual(SandboxLimits::default()));
    run_step(&filters(16), &registry, &session, &input(), proposed()).expect("sixteen filters are allowed");
    assert_eq!(
        run_step(&filters(17), &registry, &session, &input(), proposed()).unwrap_err().to_string(),
        "plugin call `pre-step` trapped: the plugin passed 17 source filters to `session.list-user-messages`; at most 16 are allowed"
    );
}

#[test]
fn a_rejected_step_stays_rejected() {
    let (registry, _loads) = registry();
    let file = SessionFile::new(&registry);
    let session = file.open();
    let before = file.bytes();
    let rejecting = hostile(json!({"mode": "reject"}), manual(SandboxLimits::default()));
    let reject = Decision::Reject(Some("{\"reason\":\"budget\"}".to_owned()));
    assert_eq!(
        run_step(&rejecting, &registry, &session, &input(), reject.clone()).unwrap_err().to_string(),
        "plugin call `pre-step` returned invalid output: the plugin may not change a reject"
    );
    assert_eq!(file.bytes(), before);
    // The real plugin passes it through, reason and all.
    assert_eq!(
        run_step(plugin(), &registry, &session, &input(), reject.clone()).unwrap(),
        StepOutcome::Decided(reject)
    );
}

#[test]
fn a_hundred_mib_of_text_cannot_be_built_under_the_default_memory_cap() {
    // The guest needs the text in its own memory before it can return it, so
    // with the defaults the memory cap (64 MiB) trips first.
    let outcome = contained(json!({"mode": "big-text"}), manual(SandboxLimits::default()));
    assert_eq!(outcome.error.to_string(), "plugin call `pre-step` exceeded its memory cap of 64 MiB");
}

#[test]
fn a_hundred_mib_of_text_is_refused_by_the_text_cap_when_memory_allows_it() {
    let limits = SandboxLimits { memory_bytes: 256 << 20, ..manual(SandboxLimits::default()) };
    let outcome = contained(json!({"mode": "big-text"}), limits);
    assert_eq!(
        outcome.error.to_string(),
        "plugin call `pre-step` returned invalid output: added message 1's content block 1 is 104857600 bytes, over the cap of 16777216 bytes per text"
    );
}

#[test]
fn the_text_cap_admits_exactly_its_size() {
    let output = OutputLimits { max_text_bytes: 1000, ..OutputLimits::default() };
    let limits = SandboxLimits { output, ..manual(SandboxLimits::default()) };
    let (registry, _loads) = registry();
    let file = SessionFile::new(&registry);
    let session = file.open();
    let at_cap = hostile(json!({"mode": "big-text", "bytes": 1000}), limits);
    let outcome = run_step(&at_cap, &registry, &session, &input(), proposed()).unwrap();
    let StepOutcome::Decided(Decision::Enter(messages)) = outcome else { panic!("{outcome:?}") };
    assert_eq!(message::single_text(&messages[1]).map(str::len), Some(1000));

    let over = hostile(json!({"mode": "big-text", "bytes": 1001}), limits);
    let error = run_step(&over, &registry, &session, &input(), proposed()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "plugin call `pre-step` returned invalid output: added message 1's content block 1 is 1001 bytes, over the cap of 1000 bytes per text"
    );
}

#[test]
fn the_total_output_cap_counts_every_added_text() {
    // Source (43 bytes) and text (1000 bytes) of the added catalog: 1043.
    for (cap, accepted) in [(1043, true), (1042, false)] {
        let output = OutputLimits { max_output_bytes: cap, ..OutputLimits::default() };
        let limits = SandboxLimits { output, ..manual(SandboxLimits::default()) };
        let (registry, _loads) = registry();
        let file = SessionFile::new(&registry);
        let session = file.open();
        let plugin = hostile(json!({"mode": "big-text", "bytes": 1000}), limits);
        let result = run_step(&plugin, &registry, &session, &input(), proposed());
        match accepted {
            true => assert!(result.is_ok(), "{result:?}"),
            false => assert_eq!(
                result.unwrap_err().to_string(),
                "plugin call `pre-step` returned invalid output: its texts add up to more than the cap of 1042 bytes per call (at added message 1's content block 1)"
            ),
        }
    }
}

#[test]
fn a_million_messages_are_refused_by_count_before_any_is_read() {
    let outcome = contained(json!({"mode": "many-messages"}), manual(SandboxLimits::default()));
    assert_eq!(
        outcome.error.to_string(),
        "plugin call `pre-step` returned invalid output: it added 1000000 messages; a pre-step may add at most 64"
    );
}

#[test]
fn outputs_the_plugin_may_not_produce_are_refused() {
    for (mode, reason) in [
        (
            "forge",
            "an added message has source {\"kind\":\"user\"}; the plugin may only write {\"kind\":\"plugin\",\"plugin\":\"dsh-tool-skill\"} or a skill invocation",
        ),
        ("two-catalogs", "more than one catalog was added"),
        ("decide-twice", "it decided 2 times; a pre-step decides at most once"),
        ("bad-index", "it kept proposed message 1 out of order or out of range (1 proposed)"),
        ("keep-twice", "it kept proposed message 0 out of order or out of range (1 proposed)"),
        ("inject", "skill \"a-skill\" was injected without a user's /a-skill"),
        (
            "tamper",
            "an added message has source {\"kind\":\"user\"}; the plugin may only write {\"kind\":\"plugin\",\"plugin\":\"dsh-tool-skill\"} or a skill invocation",
        ),
    ] {
        let outcome = contained(json!({ "mode": mode }), manual(SandboxLimits::default()));
        assert_eq!(
            outcome.error.to_string(),
            format!("plugin call `pre-step` returned invalid output: {reason}"),
            "{mode}"
        );
    }
}

#[test]
fn tool_results_are_checked_before_anyone_sees_them() {
    let (registry, _loads) = registry();
    let arguments = json!({ "name": LOOPED_SKILL }).to_string();
    for (config, reason) in [
        (
            json!({"mode": "other-skill"}),
            "the value is skill \"other-skill\", but the arguments asked for \"looped-skill\"",
        ),
        (json!({"mode": "bare-error"}), "a tool error must read `Error: <message>`"),
        (json!({"mode": "big-text", "bytes": 2000}), "the text is 2000 bytes, over the cap of 1000 bytes per text"),
    ] {
        let output = OutputLimits { max_text_bytes: 1000, ..OutputLimits::default() };
        let plugin = hostile(config, SandboxLimits { output, ..manual(SandboxLimits::default()) });
        let error = plugin.invoke(&registry, Some("/workspace"), &arguments).unwrap_err();
        assert_eq!(error.to_string(), format!("plugin call `invoke` returned invalid output: {reason}"));
    }
    // Search matches: only for a query, and at most five.
    let matching = hostile(json!({"mode": "many-matches"}), manual(SandboxLimits::default()));
    for (arguments, reason) in [
        (arguments.as_str(), "it returned search matches, but the arguments have no query"),
        (r#"{"query":"a"}"#, "it returned 6 search matches; at most 5 are allowed"),
    ] {
        let error = matching.invoke(&registry, Some("/workspace"), arguments).unwrap_err();
        assert_eq!(error.to_string(), format!("plugin call `invoke` returned invalid output: {reason}"));
    }
    // The same checks pass the real plugin's result.
    assert!(plugin().invoke(&registry, Some("/workspace"), &arguments).is_ok());
}

#[test]
fn the_other_exports_texts_are_capped_too() {
    let (registry, _loads) = registry();
    let output = OutputLimits { max_text_bytes: 1000, ..OutputLimits::default() };
    let limits = SandboxLimits { output, ..manual(SandboxLimits::default()) };
    let plugin = hostile(json!({"mode": "big-text", "bytes": 1001}), limits);
    let cap = "1001 bytes, over the cap of 1000 bytes per text";
    assert_eq!(
        plugin.definition().unwrap_err().to_string(),
        format!("plugin call `definition` returned invalid output: the description is {cap}")
    );
    assert_eq!(
        plugin.system_prompt(&registry, Some("/workspace")).unwrap_err().to_string(),
        format!("plugin call `system-prompt` returned invalid output: the system prompt is {cap}")
    );
    assert_eq!(
        plugin.expand(&registry, Some("/workspace"), "/skill:looped-skill").unwrap_err().to_string(),
        format!("plugin call `expand` returned invalid output: the expansion is {cap}")
    );
}

/// The hostile component on disk, for `skill-host --plugin`.
fn hostile_component(sandbox: &Sandbox) -> PathBuf {
    let path = sandbox.path().join("hostile.wasm");
    std::fs::write(&path, HOSTILE).unwrap();
    path
}

#[test]
fn skill_host_contains_every_misbehaviour_with_a_one_line_error() {
    let sandbox = Sandbox::new();
    let component = hostile_component(&sandbox);
    let workspace = sandbox.example_workspace();
    let session = sandbox.path().join("session.jsonl");
    let path = |path: &Path| path.to_str().unwrap().to_owned();
    let step = |extra: &[&str]| {
        let mut args = vec!["step", "--session", session.to_str().unwrap(), "--cwd", workspace.to_str().unwrap()];
        args.extend_from_slice(extra);
        sandbox.run(&args)
    };
    assert_eq!(step(&[]).status.code(), Some(0));

    for (config, limits, expected) in [
        (
            json!({"mode": "loop"}),
            &["--timeout-ms", "100"][..],
            "plugin call `pre-step` exceeded its deadline of 100 ms",
        ),
        (
            json!({"mode": "import-loop"}),
            &["--timeout-ms", "100"],
            "plugin call `pre-step` exceeded its deadline of 100 ms",
        ),
        (json!({"mode": "alloc"}), &[], "plugin call `pre-step` exceeded its memory cap of 64 MiB"),
        (json!({"mode": "stack"}), &[], "plugin call `pre-step` trapped: call stack exhausted"),
        (json!({"mode": "panic"}), &[], "plugin call `pre-step` trapped: the guest panicked at src/lib.rs:"),
        (
            json!({"mode": "trap-after-import"}),
            &[],
            "plugin call `pre-step` trapped: wasm `unreachable` instruction executed",
        ),
        (json!({"mode": "big-text"}), &[], "plugin call `pre-step` exceeded its memory cap of 64 MiB"),
        (
            json!({"mode": "big-text"}),
            &["--memory-mb", "256"],
            "plugin call `pre-step` returned invalid output: added message 1's content block 1 is 104857600 bytes, over the cap of 16777216 bytes per text",
        ),
        (
            json!({"mode": "big-text", "bytes": 2000}),
            &["--max-text-bytes", "1000"],
            "plugin call `pre-step` returned invalid output: added message 1's content block 1 is 2000 bytes, over the cap of 1000 bytes per text",
        ),
        (
            json!({"mode": "many-messages"}),
            // Lifting a million messages in a debug build takes most of the
            // default second on a busy machine; the cap, not the deadline,
            // is what this case checks.
            &["--timeout-ms", "10000"],
            "plugin call `pre-step` returned invalid output: it added 1000000 messages; a pre-step may add at most 64",
        ),
        (
            json!({"mode": "many-messages", "count": 3}),
            &["--max-added-messages", "1"],
            "plugin call `pre-step` returned invalid output: it added 3 messages; a pre-step may add at most 1",
        ),
        (
            json!({"mode": "forge"}),
            &[],
            "plugin call `pre-step` returned invalid output: an added message has source {\"kind\":\"user\"}",
        ),
    ] {
        let config_file = sandbox.path().join("hostile.json");
        std::fs::write(&config_file, config.to_string()).unwrap();
        let before = std::fs::read(&session).unwrap();
        let mut args = vec!["--plugin".to_owned(), path(&component), "--config".to_owned(), path(&config_file)];
        args.extend(limits.iter().map(|arg| (*arg).to_owned()));
        args.extend(["--message".to_owned(), "hi".to_owned()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = step(&args);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(3), "{config}: {message}");
        assert_eq!(message.lines().count(), 1, "{config}: {message}");
        assert!(message.starts_with(&format!("error: {expected}")), "{config}: {message}");
        assert_eq!(stdout(&output), "", "{config}");
        assert_eq!(std::fs::read(&session).unwrap(), before, "{config}: the session file changed");
        // The real plugin's next step on the same session works, and finds
        // its catalog current.
        let next = step(&["--message", "next"]);
        assert_eq!(next.status.code(), Some(0), "{config}: {}", stderr(&next));
        assert_eq!(stdout(&next), "next\n", "{config}");
    }
}

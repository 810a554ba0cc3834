use super::*;

#[test]
fn a_component_is_compiled_once_per_process_under_the_ticker() {
    let limits = SandboxLimits::default();
    let first = Sandbox::new(EMBEDDED_PLUGIN, "{}", limits).unwrap();
    let second = Sandbox::new(EMBEDDED_PLUGIN, r#"{"skillSearch":true}"#, limits).unwrap();
    assert!(Arc::ptr_eq(&first.runtime, &second.runtime));
    assert!(Arc::ptr_eq(&first.runtime, &first.reconfigured("{}").unwrap().runtime));
    // A manual clock moves its engine's epoch for every sandbox on it: never shared.
    let manual = SandboxLimits { clock: DeadlineClock::Manual, ..limits };
    let own = Sandbox::new(EMBEDDED_PLUGIN, "{}", manual).unwrap();
    assert!(!Arc::ptr_eq(&own.runtime, &first.runtime));
    assert!(!Arc::ptr_eq(&own.runtime, &Sandbox::new(EMBEDDED_PLUGIN, "{}", manual).unwrap().runtime));
}

#[test]
fn an_allocation_the_guest_could_not_make_is_recognised() {
    assert!(allocation_failed("memory allocation of 1048576 bytes failed"));
    assert!(allocation_failed("noise\nmemory allocation of 8 bytes failed\nmore"));
    assert!(!allocation_failed("memory allocation of many bytes failed"));
    assert!(!allocation_failed("thread 'main' panicked at src/lib.rs:1:1:\nmemory allocation failed"));
}

#[test]
fn the_ticker_counts_the_time_elapsed_not_its_wake_ups() {
    // A wake-up 7.5 ticks late (a busy machine) catches up 7 ticks at once.
    let mut increments = 0;
    let late = EPOCH_TICK * 7 + EPOCH_TICK / 2;
    assert_eq!(catch_up(0, late, || increments += 1), 7);
    assert_eq!(increments, 7);
    // An early wake-up adds nothing.
    assert_eq!(catch_up(7, late, || increments += 1), 7);
    assert_eq!(increments, 7);
}

#[test]
fn a_manual_clock_stops_a_call_at_exactly_its_timeout() {
    let limits =
        SandboxLimits { timeout: Duration::from_millis(10), clock: DeadlineClock::Manual, ..SandboxLimits::default() };
    assert_eq!(deadline_ticks(limits), 5);
    // The ticker's current tick may be about to end: one more.
    assert_eq!(deadline_ticks(SandboxLimits { clock: DeadlineClock::Ticker, ..limits }), 6);
}

#[test]
fn a_panic_message_and_its_location_are_read_from_the_guests_stderr() {
    let stderr = "\nthread '<unnamed>' (1) panicked at src/lib.rs:85:20:\nbad input: x\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace";
    assert_eq!(panic_message(stderr), Some(("src/lib.rs:85:20".to_owned(), "bad input: x".to_owned())));
    assert_eq!(panic_message("some other output"), None);
}

//! Tests of waiting for a lock another log holds: bounded by the log's
//! `LockWait`, announced once, and kept for every later lock.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::*;

/// A holder of the session's lock, and a session file to hold it on.
fn held_session(dir: &TempDir) -> Result<(PathBuf, SessionLog), Box<dyn Error>> {
    let path = session_file(dir, SEEDED_SESSION)?;
    let mut holder = SessionLog::open(&path)?;
    assert!(holder.hold()?);
    Ok((path, holder))
}

#[test]
fn a_busy_lock_is_announced_once_and_given_up_after_the_timeout() -> TestResult {
    static NOTICES: AtomicUsize = AtomicUsize::new(0);
    fn notice(_: &Path) {
        NOTICES.fetch_add(1, Ordering::SeqCst);
    }
    let dir = TempDir::new()?;
    let (path, _holder) = held_session(&dir)?;
    let wait = LockWait { timeout: Some(Duration::from_millis(50)), on_wait: Some(notice) };
    let started = Instant::now();
    let error = SessionLog::open_waiting(&path, wait).err().ok_or("opened under another's lock")?;
    let SessionError::LockTimeout { waited, .. } = &error else {
        return Err(format!("expected a lock timeout, got {error:?}").into());
    };
    assert!(*waited == Duration::from_millis(50) && started.elapsed() >= *waited, "{waited:?}");
    assert!(started.elapsed() < Duration::from_secs(10), "the wait was not bounded");
    assert_eq!(
        error.to_string(),
        format!("session log {}: still locked by another process after {} ms", path.display(), waited.as_millis())
    );
    assert_eq!(NOTICES.load(Ordering::SeqCst), 1, "the wait is announced once");
    Ok(())
}

#[test]
fn a_waiter_gets_the_lock_once_the_holder_lets_go() -> TestResult {
    static NOTICES: AtomicUsize = AtomicUsize::new(0);
    fn notice(_: &Path) {
        NOTICES.fetch_add(1, Ordering::SeqCst);
    }
    let dir = TempDir::new()?;
    let (path, mut holder) = held_session(&dir)?;
    let wait = LockWait { timeout: Some(Duration::from_secs(20)), on_wait: Some(notice) };
    let waiter = std::thread::spawn(move || SessionLog::open_waiting(&path, wait));
    while NOTICES.load(Ordering::SeqCst) == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    holder.append_user_messages(vec![(user_data("while holding"), SurfaceOp::Append)])?;
    holder.release();
    let log = waiter.join().map_err(|_| "waiter panicked")??;
    assert_eq!(log.next_seq(), 5, "the waiter read what the holder appended");
    assert_eq!(NOTICES.load(Ordering::SeqCst), 1);
    Ok(())
}

#[test]
fn a_free_lock_is_taken_without_a_notice() -> TestResult {
    static NOTICES: AtomicUsize = AtomicUsize::new(0);
    fn notice(_: &Path) {
        NOTICES.fetch_add(1, Ordering::SeqCst);
    }
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let wait = LockWait { timeout: Some(Duration::ZERO), on_wait: Some(notice) };
    let mut log = SessionLog::open_waiting(&path, wait)?;
    log.append_user_messages(vec![(user_data("a"), SurfaceOp::Append)])?;
    assert!(log.hold()?);
    log.release();
    log.refresh()?;
    assert_eq!(NOTICES.load(Ordering::SeqCst), 0);
    Ok(())
}

#[test]
fn a_log_keeps_its_lock_wait_for_every_later_lock() -> TestResult {
    static NOTICES: AtomicUsize = AtomicUsize::new(0);
    fn notice(_: &Path) {
        NOTICES.fetch_add(1, Ordering::SeqCst);
    }
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let wait = LockWait { timeout: Some(Duration::from_millis(20)), on_wait: Some(notice) };
    let mut log = SessionLog::open_waiting(&path, wait)?;
    let mut holder = SessionLog::open(&path)?;
    assert!(holder.hold()?);
    let timed_out = |result: Result<(), SessionError>| matches!(result, Err(SessionError::LockTimeout { .. }));
    assert!(timed_out(log.refresh()), "refresh");
    assert!(timed_out(log.hold().map(drop)), "hold");
    assert!(timed_out(log.append_user_messages(vec![(user_data("x"), SurfaceOp::Append)]).map(drop)), "append");
    assert!(timed_out(log.compact("x").map(drop)), "compact");
    assert_eq!(NOTICES.load(Ordering::SeqCst), 4, "one notice per lock waited for");
    assert_eq!(fs::read_to_string(&path)?, SEEDED_SESSION);
    assert_eq!(log.next_seq(), 4);
    holder.release();
    assert_eq!(log.append_user_messages(vec![(user_data("x"), SurfaceOp::Append)])?, [4]);
    Ok(())
}

#[test]
fn a_new_session_times_out_on_a_lock_without_leaving_a_file() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("new.jsonl");
    let wait = LockWait { timeout: Some(Duration::from_millis(20)), on_wait: None };
    let mut log = SessionLog::open_or_create_waiting(&path, None, wait)?;
    let mut holder = SessionLog::open_or_create(&path, None)?;
    assert!(holder.hold()?);
    let appended = log.append_user_messages(vec![(user_data("x"), SurfaceOp::Append)]);
    assert!(matches!(appended, Err(SessionError::LockTimeout { .. })), "{appended:?}");
    holder.release();
    assert!(!path.exists(), "neither the holder nor the waiter wrote anything");
    Ok(())
}

//! Tests of the session header: written once, synthesised when missing, and
//! a file that is no session log refused.

use super::*;

#[test]
fn a_missing_header_gets_a_synthetic_one() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("abc-session.jsonl");
    fs::write(&path, format!("{}\n{}\n", user_line(0, "a"), user_line(1, "b")))?;
    let log = SessionLog::open(&path)?;
    assert_eq!(log.header().id, "abc-session");
    assert_eq!(log.header().created_at, 1_700_000_000_000);
    assert_eq!(log.header().cwd, None);
    assert_eq!(log.warnings().len(), 1);
    assert!(log.warnings()[0].starts_with("line 1: no session header"));
    assert_eq!(log.surface(), &[0, 1]);
    Ok(())
}

#[test]
fn a_synthetic_header_is_the_same_after_an_append() -> TestResult {
    // Found by the property tests and the fuzzer: when the first event has no
    // time, or no line is an event at all, the time of the first event
    // appended later used to become the synthetic createdAt.
    let dir = TempDir::new()?;
    let path = dir.path().join("headless.jsonl");
    for content in ["{\"type\":\"future/thing\",\"seq\":0}\n", "{\"type\":\"s)ession\",\"version\":0}\n{\"torn"] {
        fs::write(&path, content)?;
        let mut log = SessionLog::open(&path)?;
        assert_eq!(log.header().created_at, 0, "{content}");
        log.append_user_messages(vec![(user_data("a"), SurfaceOp::Append)])?;
        assert_eq!(SessionLog::open(&path)?.header(), log.header(), "{content}");
    }
    Ok(())
}

#[test]
fn a_file_that_is_not_a_session_log_is_refused() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, "# README\n\nhello\n")?;
    let error = SessionLog::open(&path).err().ok_or("opened a README")?;
    assert!(matches!(error, SessionError::BadHeader { .. }), "{error}");
    assert!(error.to_string().contains("session.jsonl"), "{error}");

    let newer = r#"{"type":"session","version":1,"id":"s","createdAt":1}"#;
    fs::write(&path, format!("{newer}\n"))?;
    let error = SessionLog::open(&path).err().ok_or("opened a newer format")?;
    assert_eq!(
        error.to_string(),
        format!(
            "session log {}: bad session header: version must be 0, got 1; the log was written by another harness version",
            path.display()
        )
    );
    Ok(())
}

#[test]
fn open_or_create_writes_a_header_once() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("new.jsonl");
    let log = SessionLog::open_or_create(&path, Some("/workspace"))?;
    assert_eq!(log.header().cwd.as_deref(), Some("/workspace"));
    assert_eq!(log.next_seq(), 0);
    let written = fs::read_to_string(&path)?;
    assert_eq!(
        written,
        format!(
            "{{\"type\":\"session\",\"version\":0,\"id\":\"{}\",\"createdAt\":{},\"cwd\":\"/workspace\"}}\n",
            log.header().id,
            log.header().created_at
        )
    );
    let again = SessionLog::open_or_create(&path, Some("/elsewhere"))?;
    assert_eq!(again.header(), log.header());
    assert_eq!(fs::read_to_string(&path)?, written);
    Ok(())
}

#[test]
fn an_empty_file_gets_its_header_with_the_first_append() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, "")?;
    let mut log = SessionLog::open(&path)?;
    assert_eq!(log.warnings().len(), 1);
    assert_eq!(log.append_user_messages(vec![(user_data("a"), SurfaceOp::Append)])?, [0]);
    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.warnings(), &[] as &[String]);
    assert_eq!(reopened.header(), log.header());
    assert_eq!(texts(&reopened), [(0, "a".to_owned())]);
    Ok(())
}

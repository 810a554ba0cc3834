//! Tests of the session header: written once, with the first append of a
//! new session (which until then creates and writes nothing), synthesised
//! when missing, and a file that is no session log refused.

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
fn open_or_create_writes_the_header_with_the_first_append_and_only_once() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("new.jsonl");
    let mut log = SessionLog::open_or_create(&path, Some("/workspace"))?;
    assert!(!path.exists(), "opening created the file");
    assert_eq!(log.header().cwd.as_deref(), Some("/workspace"));
    assert_eq!(log.next_seq(), 0);
    assert_eq!(log.warnings(), &[] as &[String], "a new session is no cause for a warning");
    let header = log.header().clone();

    assert_eq!(log.append_user_messages(vec![(user_data("a"), SurfaceOp::Append)])?, [0]);
    assert_eq!(log.header(), &header, "the header written is the one the log showed");
    let written = fs::read_to_string(&path)?;
    let (first, rest) = written.split_once('\n').ok_or("no header line")?;
    assert_eq!(
        first,
        format!(
            "{{\"type\":\"session\",\"version\":0,\"id\":\"{}\",\"createdAt\":{},\"cwd\":\"/workspace\"}}",
            header.id, header.created_at
        )
    );
    assert!(rest.starts_with(r#"{"type":"user/message","seq":0,"#) && rest.matches('\n').count() == 1);

    let mut again = SessionLog::open_or_create(&path, Some("/elsewhere"))?;
    assert_eq!(again.header(), &header);
    assert_eq!(again.append_user_messages(vec![(user_data("b"), SurfaceOp::Append)])?, [1]);
    let reread = fs::read_to_string(&path)?;
    assert!(reread.starts_with(&written));
    assert_eq!(reread.matches(r#""type":"session""#).count(), 1);
    Ok(())
}

#[test]
fn a_session_not_created_yet_reads_as_empty_and_creates_nothing() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("new.jsonl");
    let mut log = SessionLog::open_or_create(&path, None)?;
    log.refresh()?;
    assert_eq!(log.user_messages().len(), 0);
    assert_eq!(log.read_user_messages()?, []);
    assert_eq!(log.user_message(0)?, None);
    assert_eq!(log.surface(), &[] as &[u64]);
    assert_eq!(log.path(), Some(path.as_path()));
    drop(log);
    assert!(!path.exists(), "reading a new session created its file");
    // `open` still wants an existing log.
    let missing = SessionLog::open(&path).err().ok_or("opened a missing file")?;
    assert!(matches!(&missing, SessionError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound));
    assert!(!path.exists());
    Ok(())
}

#[test]
fn open_or_create_leaves_an_empty_file_empty_until_the_first_append() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, "")?;
    let mut log = SessionLog::open_or_create(&path, Some("/w"))?;
    assert_eq!(fs::read(&path)?, b"", "opening wrote into the empty file");
    assert_eq!(log.warnings(), &[] as &[String]);
    log.append_event("turn/start", json!({"turn": 1}), None)?;
    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.header(), log.header());
    assert_eq!(reopened.header().cwd.as_deref(), Some("/w"));
    assert_eq!(reopened.next_seq(), 1);
    Ok(())
}

#[test]
fn a_failed_first_append_leaves_no_file() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("new.jsonl");
    let mut log = SessionLog::open_or_create(&path, None)?;
    // Refused before the file is opened.
    let malformed = log.append_user_messages(vec![(json!("hi"), SurfaceOp::Append)]);
    assert!(matches!(malformed, Err(SessionError::InvalidEvent { .. })));
    // Refused under the lock, once the file was created to take it.
    let off_the_surface = log.append_user_messages(vec![(user_data("x"), SurfaceOp::Replace { start: 0, end: 0 })]);
    assert!(matches!(off_the_surface, Err(SessionError::BadSurfaceRange { .. })));
    assert!(!path.exists(), "a failed append left a file behind");
    assert_eq!(log.next_seq(), 0);
    // A later append still starts the session properly.
    assert_eq!(log.append_user_messages(vec![(user_data("a"), SurfaceOp::Append)])?, [0]);
    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.warnings(), &[] as &[String]);
    assert_eq!(reopened.header(), log.header());
    Ok(())
}

#[test]
fn the_header_of_whoever_appends_first_wins() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("new.jsonl");
    let mut late = SessionLog::open_or_create(&path, Some("/late"))?;
    let mut early = SessionLog::open_or_create(&path, Some("/early"))?;
    assert_ne!(late.header(), early.header());
    assert_eq!(early.append_user_messages(vec![(user_data("first"), SurfaceOp::Append)])?, [0]);
    assert_eq!(late.append_user_messages(vec![(user_data("second"), SurfaceOp::Append)])?, [1]);
    assert_eq!(late.header(), early.header(), "the header read from the file replaced the fresh one");
    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.header().cwd.as_deref(), Some("/early"));
    assert_eq!(reopened.warnings(), &[] as &[String]);
    assert_eq!(texts(&reopened), [(0, "first".to_owned()), (1, "second".to_owned())]);
    Ok(())
}

#[test]
fn a_header_too_long_to_read_back_is_not_written() -> TestResult {
    let path = Path::new("/x/new.jsonl");
    let header = SessionHeader { id: "s".to_owned(), created_at: 1, cwd: Some("d".repeat(100)) };
    let line = super::super::appending::header_line(&header, path, 1000)?;
    let length = line.len() as u64;
    assert!(super::super::appending::header_line(&header, path, length).is_ok(), "a line of exactly the limit");
    let error = super::super::appending::header_line(&header, path, length - 1).err().ok_or("wrote the header")?;
    assert!(matches!(error, SessionError::BadHeader { .. }), "{error}");
    assert_eq!(
        error.to_string(),
        format!(
            "session log /x/new.jsonl: bad session header: cannot write the header: the line would be {length} bytes, over the {} bytes a session line may have",
            length - 1
        )
    );
    Ok(())
}

#[test]
fn an_empty_file_gets_its_header_with_the_first_append() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, "")?;
    let mut log = SessionLog::open(&path)?;
    assert_eq!(log.warnings(), ["the file is empty; a header is written with the first append"]);
    assert_eq!(log.append_user_messages(vec![(user_data("a"), SurfaceOp::Append)])?, [0]);
    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.warnings(), &[] as &[String]);
    assert_eq!(reopened.header(), log.header());
    assert_eq!(texts(&reopened), [(0, "a".to_owned())]);
    Ok(())
}

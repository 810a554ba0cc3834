//! Tests of appending: the bytes written, surface ops and replacements,
//! refused events, compaction and in-memory sessions.

use super::*;

#[test]
fn append_keeps_earlier_bytes_and_round_trips() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut log = SessionLog::open(&path)?;
    let data = json!({
        "content": [{"type": "text", "text": "Ship it."}],
        "source": {"kind": "user"},
        "role": "user",
        "id": "m-4",
    });
    assert_eq!(log.append_user_messages(vec![(data.clone(), SurfaceOp::Append)])?, [4]);
    assert_eq!(log.surface(), &[3, 1, 2, 4]);

    let written = fs::read_to_string(&path)?;
    let appended = written.strip_prefix(SEEDED_SESSION).ok_or("the earlier lines changed")?;
    assert!(appended.ends_with('\n') && appended.matches('\n').count() == 1);
    let time = serde_json::from_str::<Value>(appended)?["time"].as_i64().ok_or("no time")?;
    assert!(time > 1_700_000_000_000);
    assert_eq!(
        appended,
        format!("{{\"type\":\"user/message\",\"seq\":4,\"time\":{time},\"data\":{data},\"surfaceOp\":\"append\"}}\n")
    );

    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.warnings(), &[] as &[String]);
    assert_eq!(reopened.surface(), &[3, 1, 2, 4]);
    assert_eq!(reopened.read_user_messages()?, log.read_user_messages()?);
    assert_eq!(reopened.next_seq(), 5);
    Ok(())
}

#[test]
fn append_after_a_torn_last_line_starts_a_new_line() -> TestResult {
    let dir = TempDir::new()?;
    let intact = format!("{HEADER}\n{}\n", user_line(0, "first"));
    let torn = r#"{"type":"user/message","seq":1,"time":17000"#;
    let path = session_file(&dir, &format!("{intact}{torn}"))?;

    let mut log = SessionLog::open(&path)?;
    assert_eq!(log.warnings().len(), 1);
    assert!(log.warnings()[0].starts_with("line 3: skipped: unreadable JSON"));
    assert!(log.warnings()[0].contains("torn write"));
    assert_eq!(log.append_user_messages(vec![(user_data("second"), SurfaceOp::Append)])?, [1]);

    let written = fs::read_to_string(&path)?;
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[2], torn, "the torn line is kept as it was");
    assert!(lines[3].starts_with(r#"{"type":"user/message","seq":1,"#));
    assert!(written.starts_with(&intact));

    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.warnings().len(), 1);
    assert!(reopened.warnings()[0].starts_with("line 3: skipped: unreadable JSON"));
    assert_eq!(texts(&reopened), [(0, "first".to_owned()), (1, "second".to_owned())]);
    assert_eq!(reopened.surface(), &[0, 1]);
    Ok(())
}

#[test]
fn replace_hides_older_nodes_and_records_them() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, &format!("{HEADER}\n"))?;
    let mut log = SessionLog::open(&path)?;
    let seqs = log.append_user_messages(vec![
        (user_data("a"), SurfaceOp::Append),
        (user_data("b"), SurfaceOp::Append),
        (user_data("c"), SurfaceOp::Append),
    ])?;
    assert_eq!(seqs, [0, 1, 2]);
    let replacing = log.append_user_messages(vec![(user_data("a and b"), SurfaceOp::Replace { start: 0, end: 1 })])?;
    assert_eq!(replacing, [3]);
    assert_eq!(log.surface(), &[3, 2]);
    assert!(!log.is_visible(0) && !log.is_visible(1));
    assert_eq!(log.read_user_messages()?.len(), 4, "hidden messages stay durable");

    let last = events(&path)?.pop().ok_or("no events")?;
    assert_eq!(last["surfaceOp"], json!({"op": "replace", "start": 0, "end": 1}));
    assert_eq!(last["sourceEventSeqs"], json!([0, 1]));
    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.warnings(), &[] as &[String]);
    assert_eq!(reopened.surface(), &[3, 2]);
    Ok(())
}

#[test]
fn a_replacement_off_the_surface_is_refused_and_nothing_changes() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut log = SessionLog::open(&path)?;
    let error = log
        .append_user_messages(vec![(user_data("x"), SurfaceOp::Replace { start: 0, end: 2 })])
        .err()
        .ok_or("replaced a hidden node")?;
    assert_eq!(
        error.to_string(),
        format!("session log {}: cannot replace surface range 0..=2: seq 0 is not on the surface", path.display())
    );
    assert_eq!(fs::read_to_string(&path)?, SEEDED_SESSION);
    assert_eq!(log.surface(), &[3, 1, 2]);
    assert_eq!(log.next_seq(), 4);
    assert_eq!(log.read_user_messages()?.len(), 3);
    Ok(())
}

#[test]
fn malformed_events_are_refused_before_writing() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut log = SessionLog::open(&path)?;
    let stray_op = log.append_event("turn/start", json!({"turn": 2}), Some(SurfaceOp::Append));
    assert!(matches!(stray_op, Err(SessionError::InvalidEvent { .. })));
    let not_a_message = log.append_user_messages(vec![(json!("hi"), SurfaceOp::Append)]);
    assert!(matches!(not_a_message, Err(SessionError::InvalidEvent { .. })));
    assert_eq!(fs::read_to_string(&path)?, SEEDED_SESSION);
    assert_eq!(log.next_seq(), 4);
    Ok(())
}

#[test]
fn other_events_append_with_or_without_a_surface_op() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut log = SessionLog::open(&path)?;
    assert_eq!(log.append_event("turn/start", json!({"turn": 2}), None)?, 4);
    let result = json!({"message": {"role": "user", "content": [], "id": "m-5"}});
    assert_eq!(log.append_event("tool/result", result, Some(SurfaceOp::Append))?, 5);
    assert_eq!(log.surface(), &[3, 1, 2, 5]);
    assert_eq!(log.read_user_messages()?.len(), 3);
    let written = events(&path)?;
    assert_eq!(written[4]["type"], "turn/start");
    assert!(written[4].get("surfaceOp").is_none());
    assert_eq!(written[5]["surfaceOp"], "append");
    // A message recorded without an op is log-only, and reads back quietly.
    let recorded = json!({"message": {"role": "user", "content": [], "id": "m-6"}});
    assert_eq!(log.append_event("tool/result", recorded, None)?, 6);
    assert_eq!(log.surface(), &[3, 1, 2, 5]);
    assert!(events(&path)?[6].get("surfaceOp").is_none());
    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.warnings(), &[] as &[String]);
    assert_eq!(reopened.surface(), &[3, 1, 2, 5]);
    assert_eq!(reopened.next_seq(), 7);
    Ok(())
}

#[test]
fn compaction_replaces_the_whole_surface() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut log = SessionLog::open(&path)?;
    assert_eq!(log.compact("Everything so far.")?, 4);
    assert_eq!(log.surface(), &[4]);
    let summary = log.read_user_messages()?.pop().ok_or("no summary")?;
    assert_eq!(summary.seq, 4);
    assert_eq!(summary.source, json!({"kind": "plugin", "plugin": COMPACTION_PLUGIN}));
    assert_eq!(summary.content, [json!({"type": "text", "text": "Everything so far."})]);

    // The seeded surface is [3, 1, 2]: positions, not seq order, bound it.
    let last = events(&path)?.pop().ok_or("no events")?;
    assert_eq!(last["surfaceOp"], json!({"op": "replace", "start": 3, "end": 2}));
    assert_eq!(last["sourceEventSeqs"], json!([3, 1, 2]));
    assert_eq!(last["data"]["role"], "user");
    assert!(last["data"]["id"].is_string());
    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.warnings(), &[] as &[String]);
    assert_eq!(reopened.surface(), &[4]);
    Ok(())
}

#[test]
fn compacting_an_empty_surface_appends() -> TestResult {
    let mut log = SessionLog::in_memory(SessionHeader::new(None));
    assert!(log.header().created_at > 1_700_000_000_000);
    assert_ne!(log.header().id, SessionHeader::new(None).id);
    assert_eq!(log.compact("Nothing yet.")?, 0);
    assert_eq!(log.surface(), &[0]);
    Ok(())
}

#[test]
fn a_batch_is_one_write_with_consecutive_seqs() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut log = SessionLog::open(&path)?;
    let next = log.next_seq();
    // A batch may replace a message appended earlier in the same batch.
    let seqs = log.append_user_messages(vec![
        (user_data("draft"), SurfaceOp::Append),
        (user_data("final"), SurfaceOp::Replace { start: next, end: next }),
    ])?;
    assert_eq!(seqs, [4, 5]);
    assert_eq!(log.surface(), &[3, 1, 2, 5]);
    let last = events(&path)?.pop().ok_or("no events")?;
    assert_eq!(last["sourceEventSeqs"], json!([4]));
    assert_eq!(SessionLog::open(&path)?.surface(), &[3, 1, 2, 5]);
    Ok(())
}

#[test]
fn in_memory_sessions_never_touch_a_file() -> TestResult {
    let header = SessionHeader { id: "replay".to_owned(), created_at: 1, cwd: Some("/workspace".to_owned()) };
    let mut log = SessionLog::in_memory(header.clone());
    assert_eq!(log.path(), None);
    assert_eq!(log.next_seq(), 0);
    let seqs =
        log.append_user_messages(vec![(user_data("a"), SurfaceOp::Append), (user_data("b"), SurfaceOp::Append)])?;
    assert_eq!(seqs, [0, 1]);
    log.append_event("tool/result", json!({"message": {}}), Some(SurfaceOp::Append))?;
    assert_eq!(log.compact("summary")?, 3);
    assert_eq!(log.surface(), &[3]);
    assert_eq!(texts(&log).len(), 3);
    assert_eq!(log.header(), &header);
    log.refresh()?;
    let refused = log.append_user_messages(vec![(user_data("x"), SurfaceOp::Replace { start: 0, end: 0 })]);
    let error = refused.err().ok_or("replaced a hidden node")?;
    assert!(error.to_string().starts_with("session log <in-memory session>:"), "{error}");
    Ok(())
}

/// A user message planned as the first event of an empty session.
fn planned(text: &str) -> Result<crate::session::index::PlannedBatch, Box<dyn Error>> {
    use crate::session::index::{EventRequest, OpRequest, SessionIndex, USER_MESSAGE};
    let request = EventRequest {
        kind: USER_MESSAGE.to_owned(),
        data: json!({"content": [{"type": "text", "text": text}], "role": "user", "id": "m"}),
        op: OpRequest::Given(SurfaceOp::Append),
    };
    SessionIndex::default().plan(vec![request], 1_700_000_000_000).map_err(|_| "the plan failed".into())
}

#[test]
fn a_batch_with_a_line_over_the_limit_is_refused() -> TestResult {
    use crate::session::index::PlanError;
    let batch = planned("some text")?;
    let line = batch.bytes.len() as u64 - 1;
    assert!(batch.check_line_lengths(line).is_ok(), "a line of exactly the limit is read back");
    match batch.check_line_lengths(line - 1) {
        Err(PlanError::Invalid { event_type, reason }) => {
            assert_eq!(event_type, "user/message");
            assert_eq!(
                reason,
                format!("the line would be {line} bytes, over the {} bytes a session line may have", line - 1)
            );
        }
        _ => return Err("a line over the limit was accepted".into()),
    }
    assert_eq!(
        crate::session::index::line_too_long(super::super::MAX_LINE_BYTES + 1, super::super::MAX_LINE_BYTES).as_deref(),
        Some("the line would be 67108865 bytes, over the 64 MiB (67108864 bytes) a session line may have")
    );
    assert_eq!(crate::session::index::line_too_long(67_108_864, super::super::MAX_LINE_BYTES), None);
    Ok(())
}

#[test]
fn an_append_with_a_line_over_64_mib_writes_nothing() -> TestResult {
    let limit = super::super::MAX_LINE_BYTES;
    // A text that makes the line one byte too long (the time has as many
    // digits as the one the plan above used).
    let overhead = planned("")?.bytes.len() as u64 - 1;
    let text = "a".repeat((limit - overhead + 1) as usize);
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut log = SessionLog::open(&path)?;
    let data = json!({"content": [{"type": "text", "text": text}], "role": "user", "id": "m"});
    let error = log.append_user_messages(vec![(data, SurfaceOp::Append)]).err().ok_or("wrote an unreadable line")?;
    assert_eq!(
        error.to_string(),
        format!(
            "session log {}: cannot append user/message: the line would be {} bytes, over the 64 MiB (67108864 bytes) a session line may have",
            path.display(),
            limit + 1
        )
    );
    assert_eq!(fs::read_to_string(&path)?, SEEDED_SESSION);
    assert_eq!(log.next_seq(), 4);
    assert_eq!(log.surface(), &[3, 1, 2]);
    assert_eq!(log.read_user_messages()?.len(), 3);
    Ok(())
}

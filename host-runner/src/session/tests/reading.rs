//! Tests of reading a session file: what DeepSeek Harness writes, the lines
//! skipped with a warning, and user messages read back on demand.

use super::*;

#[test]
fn reads_the_seeded_harness_session() -> TestResult {
    let dir = TempDir::new()?;
    let log = SessionLog::open(&session_file(&dir, SEEDED_SESSION)?)?;
    assert_eq!(
        log.header(),
        &SessionHeader {
            id: "seeded-demo".to_owned(),
            created_at: 1_700_000_000_000,
            cwd: Some("/workspace".to_owned()),
        }
    );
    assert_eq!(log.warnings(), &[] as &[String]);
    assert_eq!(log.surface(), &[3, 1, 2]);
    assert!(!log.is_visible(0));
    assert!(log.is_visible(1) && log.is_visible(2) && log.is_visible(3));
    assert_eq!(log.next_seq(), 4);
    let seqs: Vec<u64> = log.read_user_messages()?.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, [0, 1, 3]);
    let messages = log.read_user_messages()?;
    let catalog = &messages[1];
    assert_eq!(catalog.source["kind"], "skill-catalog");
    assert_eq!(catalog.source["entries"][1]["name"], "second-skill");
    assert_eq!(
        catalog.content,
        [
            json!({"type": "text", "text": "<system-reminder>\n(catalog text as written by an earlier run)\n</system-reminder>"})
        ]
    );
    assert_eq!(messages[2].source, json!({"kind": "plugin", "plugin": "compaction"}));
    Ok(())
}

#[test]
fn a_complete_last_line_without_newline_is_read_and_kept_apart() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, &format!("{HEADER}\n{}", user_line(0, "first")))?;
    let mut log = SessionLog::open(&path)?;
    assert_eq!(log.warnings(), &[] as &[String]);
    assert_eq!(log.append_user_messages(vec![(user_data("second"), SurfaceOp::Append)])?, [1]);
    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.warnings(), &[] as &[String]);
    assert_eq!(reopened.surface(), &[0, 1]);
    Ok(())
}

#[test]
fn non_json_lines_are_warned_and_skipped() -> TestResult {
    let dir = TempDir::new()?;
    let content =
        format!("{HEADER}\n{}\nnot json at all\n[1, 2]\n{{\"seq\":9\n{}\n", user_line(0, "a"), user_line(1, "b"));
    let path = session_file(&dir, &content)?;
    let log = SessionLog::open(&path)?;
    assert_eq!(log.warnings().len(), 3, "{:?}", log.warnings());
    assert_eq!(log.warnings()[0], "line 3: skipped: not a JSON object");
    assert_eq!(log.warnings()[1], "line 4: skipped: not a JSON object");
    assert!(log.warnings()[2].starts_with("line 5: skipped: unreadable JSON ("));
    assert_eq!(texts(&log), [(0, "a".to_owned()), (1, "b".to_owned())]);
    assert_eq!(fs::read_to_string(&path)?, content, "reading never rewrites");
    Ok(())
}

#[test]
fn unknown_event_types_are_kept_and_ignored() -> TestResult {
    let dir = TempDir::new()?;
    let unknown =
        r#"{"type":"future/thing","seq":1,"time":1700000000001,"data":{"x":[1,{"y":null}]},"ignorable":true}"#;
    let content = format!("{HEADER}\n{}\n{unknown}\n", user_line(0, "a"));
    let path = session_file(&dir, &content)?;
    let mut log = SessionLog::open(&path)?;
    assert_eq!(log.warnings(), &[] as &[String]);
    assert_eq!(log.surface(), &[0]);
    assert!(!log.is_visible(1));
    assert_eq!(log.next_seq(), 2, "an unknown event still takes its seq");
    assert_eq!(log.append_user_messages(vec![(user_data("b"), SurfaceOp::Append)])?, [2]);
    assert!(fs::read_to_string(&path)?.starts_with(&content));
    Ok(())
}

#[test]
fn duplicate_and_out_of_order_seqs_are_warned_and_not_indexed() -> TestResult {
    let dir = TempDir::new()?;
    let content = format!(
        "{HEADER}\n{}\n{}\n{}\n{}\n",
        user_line(0, "a"),
        user_line(2, "b"),
        user_line(2, "dup"),
        user_line(1, "late")
    );
    let log = SessionLog::open(&session_file(&dir, &content)?)?;
    assert_eq!(
        log.warnings(),
        [
            "line 4: ignored user/message: seq 2 is a duplicate of seq 2 read before it",
            "line 5: ignored user/message: seq 1 is older than seq 2 read before it",
        ]
    );
    assert_eq!(texts(&log), [(0, "a".to_owned()), (2, "b".to_owned())]);
    assert_eq!(log.surface(), &[0, 2]);
    assert_eq!(log.next_seq(), 3);
    Ok(())
}

#[test]
fn a_seq_beyond_what_the_harness_can_write_is_skipped_and_never_overflows() -> TestResult {
    let dir = TempDir::new()?;
    let line = |seq: u64| json!({"type": "user/message", "seq": seq, "time": 1, "data": user_data("big"), "surfaceOp": "append"});
    let content = format!("{HEADER}\n{}\n{}\n{}\n", user_line(0, "a"), line(u64::MAX), line(9_007_199_254_740_992));
    let mut log = SessionLog::open(&session_file(&dir, &content)?)?;
    assert_eq!(
        log.warnings(),
        [
            "line 3: skipped user/message: seq 18446744073709551615 is above 9007199254740991, the largest DeepSeek Harness can write",
            "line 4: skipped user/message: seq 9007199254740992 is above 9007199254740991, the largest DeepSeek Harness can write",
        ]
    );
    assert_eq!(log.next_seq(), 1);
    assert_eq!(log.append_user_messages(vec![(user_data("b"), SurfaceOp::Append)])?, [1]);

    // At the largest seq, nothing more can be appended, and nothing is written.
    let at_the_largest = format!("{HEADER}\n{}\n", line(9_007_199_254_740_991));
    let path = session_file(&dir, &at_the_largest)?;
    let mut full = SessionLog::open(&path)?;
    let error = full.append_user_messages(vec![(user_data("c"), SurfaceOp::Append)]).err().ok_or("appended")?;
    assert_eq!(
        error.to_string(),
        format!(
            "session log {}: cannot append user/message: its seq 9007199254740992 would be above 9007199254740991, the largest DeepSeek Harness can read",
            path.display()
        )
    );
    assert_eq!(fs::read_to_string(&path)?, at_the_largest);
    Ok(())
}

#[test]
fn a_header_after_the_first_line_is_warned_and_ignored() -> TestResult {
    let dir = TempDir::new()?;
    let other = r#"{"type":"session","version":0,"id":"other","createdAt":2}"#;
    let content = format!("{HEADER}\n{other}\n{}\n", user_line(0, "a"));
    let log = SessionLog::open(&session_file(&dir, &content)?)?;
    assert_eq!(log.header().id, "s-1");
    assert_eq!(log.warnings(), ["line 2: skipped: a session header after the first line"]);
    assert_eq!(texts(&log), [(0, "a".to_owned())]);
    Ok(())
}

#[test]
fn a_loose_replacement_in_a_file_falls_back_with_a_warning() -> TestResult {
    let dir = TempDir::new()?;
    let replace = |seq: u64, start: u64, end: u64| {
        json!({
            "type": "user/message", "seq": seq, "time": 1,
            "data": user_data("summary"),
            "surfaceOp": {"op": "replace", "start": start, "end": end},
        })
        .to_string()
    };
    let content = format!(
        "{HEADER}\n{}\n{}\n{}\n{}\n{}\n",
        user_line(0, "a"),
        user_line(1, "b"),
        user_line(2, "c"),
        // Seq 9 is not on the surface: the nodes with seqs in 1..=9 go.
        replace(3, 1, 9),
        // Nothing lies in 20..=30: appended at the end.
        replace(4, 20, 30)
    );
    let log = SessionLog::open(&session_file(&dir, &content)?)?;
    assert_eq!(log.surface(), &[0, 3, 4]);
    assert_eq!(
        log.warnings(),
        [
            "line 5: seq 3 replaces 1..=9, whose ends are not both on the surface in that order; hid the 2 surface node(s) with seqs in that range instead",
            "line 6: seq 4 replaces 20..=30, but no surface node lies in that range; appended it at the end",
        ]
    );
    Ok(())
}

#[test]
fn user_messages_are_read_back_from_the_file_on_demand() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut log = SessionLog::open(&path)?;
    let appended = log.append_user_messages(vec![(user_data("appended here"), SurfaceOp::Append)])?;
    let infos: Vec<(u64, &str, Option<&str>)> =
        log.user_messages().map(|message| (message.seq, message.kind, message.plugin)).collect();
    assert_eq!(
        infos,
        [(0, "user", None), (1, "skill-catalog", None), (3, "plugin", Some(COMPACTION_PLUGIN)), (4, "user", None)]
    );
    assert_eq!(appended, [4]);
    // Both what was read and what this log appended come back whole.
    let catalog = log.user_message(1)?.ok_or("no seq 1")?;
    assert_eq!(catalog.source["entries"][0]["name"], "first-skill");
    let ours = log.user_message(4)?.ok_or("no seq 4")?;
    assert_eq!(ours.content, [json!({"type": "text", "text": "appended here"})]);
    assert_eq!(log.user_message(2)?, None, "seq 2 is an assistant message");
    Ok(())
}

#[test]
fn a_message_whose_line_was_rewritten_is_an_error_never_another_message() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let log = SessionLog::open(&path)?;
    // Same length, another seq in the catalog's place.
    fs::write(&path, SEEDED_SESSION.replace(r#""seq":1,"#, r#""seq":7,"#))?;
    let error = log.user_message(1).err().ok_or("read a rewritten line")?;
    assert!(matches!(error, SessionError::Changed { seq: 1, .. }), "{error:?}");
    assert!(error.to_string().contains("user message seq 1 is no longer at byte"), "{error}");
    assert!(error.to_string().contains("the line now holds user/message seq 7"), "{error}");
    // Cut short.
    fs::write(&path, &SEEDED_SESSION[..SEEDED_SESSION.len() / 2])?;
    let error = log.user_message(3).err().ok_or("read past the end")?;
    assert!(error.to_string().contains("the file ends"), "{error}");
    Ok(())
}

#[test]
fn a_user_message_with_invalid_utf8_in_its_text_is_not_indexed_rather_than_unreadable() -> TestResult {
    // Found by the session_log fuzz target: skipping the content without
    // building it let invalid UTF-8 into the index, and reading the message
    // back then failed.
    let dir = TempDir::new()?;
    let mut bytes = format!("{HEADER}\n").into_bytes();
    bytes.extend_from_slice(br#"{"type":"user/message","seq":0,"time":1,"data":{"content":[{"type":"text","text":"a"#);
    bytes.extend_from_slice(&[0x92, 0x9b]);
    bytes.extend_from_slice(b"\"}],\"source\":{\"kind\":\"user\"}},\"surfaceOp\":\"append\"}\n");
    bytes.extend_from_slice(format!("{}\n", user_line(1, "fine")).as_bytes());
    let path = dir.path().join("session.jsonl");
    fs::write(&path, &bytes)?;
    let log = SessionLog::open(&path)?;
    assert_eq!(log.user_messages().map(|message| message.seq).collect::<Vec<_>>(), [1]);
    assert_eq!(log.warnings().len(), 1, "{:?}", log.warnings());
    assert!(log.warnings()[0].starts_with("line 2: user message seq 0 not indexed"), "{:?}", log.warnings());
    assert_eq!(texts(&log), [(1, "fine".to_owned())]);
    Ok(())
}

#[test]
fn a_line_over_the_cap_is_skipped_unread_and_the_next_is_indexed() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("session.jsonl");
    let head = format!("{HEADER}\n");
    fs::write(&path, &head)?;
    // 100 MiB without a newline, sparse on disk: a hostile file costs the
    // reader no more than the cap.
    let long = 100 * 1024 * 1024;
    fs::OpenOptions::new().write(true).open(&path)?.set_len((head.len() + long) as u64)?;
    let mut file = fs::OpenOptions::new().append(true).open(&path)?;
    std::io::Write::write_all(&mut file, format!("\n{}\n", user_line(0, "after")).as_bytes())?;
    let log = SessionLog::open(&path)?;
    assert_eq!(texts(&log), [(0, "after".to_owned())]);
    assert_eq!(
        log.warnings(),
        [format!("line 2: skipped: {} bytes long, over the 67108864 bytes a line may have", long + 1)]
    );
    Ok(())
}

#[test]
fn warnings_stop_at_a_hundred_and_count_the_rest() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("session.jsonl");
    fs::write(&path, format!("{HEADER}\n{}{}\n", "x\n".repeat(250), user_line(0, "kept")))?;
    let mut log = SessionLog::open(&path)?;
    assert_eq!(texts(&log), [(0, "kept".to_owned())]);
    let warnings = log.warnings();
    assert_eq!(warnings.len(), 101);
    assert_eq!(warnings[99], "line 101: skipped: not a JSON object");
    assert_eq!(warnings[100], "… and 150 more lines with a warning, not listed");
    // Lines appended later add to the count.
    let mut file = fs::OpenOptions::new().append(true).open(&path)?;
    std::io::Write::write_all(&mut file, b"y\n")?;
    log.refresh()?;
    assert_eq!(log.warnings().len(), 101);
    assert_eq!(log.warnings()[100], "… and 151 more lines with a warning, not listed");
    Ok(())
}

#[test]
fn a_lone_surrogate_written_by_javascript_does_not_cost_the_line() -> TestResult {
    // DeepSeek Harness cuts descriptions by UTF-16 unit, so a catalog entry
    // can end inside an emoji; JSON.parse reads it, and so must we.
    let dir = TempDir::new()?;
    let path = dir.path().join("session.jsonl");
    let line = r#"{"type":"user/message","seq":0,"time":1,"data":{"content":[{"type":"text","text":"ab\ud83d"}],"source":{"kind":"skill-catalog","entries":[{"name":"a","description":"ab\ud83d"}]},"role":"user","id":"m"},"surfaceOp":"append"}"#;
    fs::write(&path, format!("{HEADER}\n{line}\n"))?;
    let log = SessionLog::open(&path)?;
    assert!(log.warnings().is_empty(), "{:?}", log.warnings());
    assert_eq!(texts(&log), [(0, "ab\u{fffd}".to_owned())]);
    let message = log.user_message(0)?.ok_or("not indexed")?;
    assert_eq!(message.source["entries"][0]["description"], "ab\u{fffd}");
    Ok(())
}

#[test]
fn a_tool_result_whose_source_names_a_plugin_is_read_as_a_user_message() -> TestResult {
    let dir = TempDir::new()?;
    let path = dir.path().join("s.jsonl");
    let result = |seq: u64, source: Value| {
        json!({"type": "tool/result", "seq": seq, "time": 1, "surfaceOp": "append", "data": {"message": {
            "id": format!("m-{seq}"), "role": "user", "source": source,
            "content": [{"type": "tool-result", "toolCallId": "c", "isError": false, "content": [{"type": "text", "text": "r"}]}]}}})
    };
    let recorded = json!({"kind": "tool", "callId": "c", "plugin": "dsh-tool-skill", "loaded": {"name": "a", "provider": "local"}});
    let lines = [
        r#"{"type":"session","version":0,"id":"s","createdAt":1}"#.to_owned(),
        result(0, json!({"kind": "tool", "callId": "c"})).to_string(),
        result(1, recorded.clone()).to_string(),
        // Another plugin's record stays out of the skill plugin's reach.
        result(2, json!({"kind": "tool", "callId": "c", "plugin": "other-plugin"})).to_string(),
    ];
    std::fs::write(&path, lines.join("\n") + "\n")?;
    let mut log = SessionLog::open(&path)?;
    // An ordinary result is not indexed; the plugin's record is, read back whole.
    let read = log.read_user_messages()?;
    assert_eq!(read.iter().map(|m| m.seq).collect::<Vec<_>>(), [1]);
    assert_eq!(read[0].source, recorded);
    assert_eq!(read[0].content[0]["type"], "tool-result");
    assert_eq!(
        log.user_messages_of_kind("tool").map(|m| (m.seq, m.plugin)).collect::<Vec<_>>(),
        [(1, Some("dsh-tool-skill"))]
    );
    // The same when this log appends it.
    let version = log.history_version();
    let seq = log.append_event("tool/result", result(0, recorded.clone())["data"].clone(), Some(SurfaceOp::Append))?;
    assert!(log.history_version() > version);
    assert_eq!(log.user_message(seq)?.map(|m| m.source), Some(recorded));
    let version = log.history_version();
    log.append_event(
        "tool/result",
        result(0, json!({"kind": "tool", "callId": "d"}))["data"].clone(),
        Some(SurfaceOp::Append),
    )?;
    assert_eq!(log.history_version(), version, "an ordinary result leaves the history alone");
    Ok(())
}

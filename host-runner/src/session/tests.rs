//! Tests of the session log against real files in a temporary directory.

use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::{COMPACTION_PLUGIN, SessionError, SessionHeader, SessionLog, SurfaceOp};

type TestResult = Result<(), Box<dyn Error>>;

/// A byte-exact copy of `tools/dsh-reference/scenarios/seeded-session.jsonl`,
/// a session written by DeepSeek Harness: three appended messages, then a
/// compaction summary (seq 3) replacing seq 0.
const SEEDED_SESSION: &str = concat!(
    r##"{"type":"session","version":0,"id":"seeded-demo","createdAt":1700000000000,"cwd":"/workspace"}"##,
    "\n",
    r##"{"type":"user/message","seq":0,"time":1700000000001,"data":{"content":[{"type":"text","text":"Please help me prepare the release."}],"source":{"kind":"user"},"role":"user","id":"m-0"},"surfaceOp":"append"}"##,
    "\n",
    r##"{"type":"user/message","seq":1,"time":1700000000002,"data":{"content":[{"type":"text","text":"<system-reminder>\n(catalog text as written by an earlier run)\n</system-reminder>"}],"source":{"kind":"skill-catalog","form":"catalog","entries":[{"name":"first-skill","description":"The first skill."},{"name":"second-skill","description":"The second skill."}]},"role":"user","id":"m-1"},"surfaceOp":"append"}"##,
    "\n",
    r##"{"type":"assistant/message","seq":2,"time":1700000000003,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"text","text":"Sure, starting now."}],"source":{"kind":"model","provider":"deepseek","model":"deepseek-chat"},"id":"m-2"}},"surfaceOp":"append"}"##,
    "\n",
    r##"{"type":"user/message","seq":3,"time":1700000000004,"data":{"content":[{"type":"text","text":"Summary of the earlier conversation."}],"source":{"kind":"plugin","plugin":"compaction"},"role":"user","id":"m-3"},"surfaceOp":{"op":"replace","start":0,"end":0},"sourceEventSeqs":[0]}"##,
    "\n",
);

const HEADER: &str = r#"{"type":"session","version":0,"id":"s-1","createdAt":1700000000000,"cwd":"/w"}"#;

fn session_file(dir: &TempDir, content: &str) -> Result<PathBuf, Box<dyn Error>> {
    let path = dir.path().join("session.jsonl");
    fs::write(&path, content)?;
    Ok(path)
}

fn user_line(seq: u64, text: &str) -> String {
    json!({
        "type": "user/message",
        "seq": seq,
        "time": 1_700_000_000_000_u64 + seq,
        "data": user_data(text),
        "surfaceOp": "append",
    })
    .to_string()
}

fn user_data(text: &str) -> Value {
    json!({
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "user"},
        "role": "user",
        "id": super::new_message_id(),
    })
}

fn texts(log: &SessionLog) -> Vec<(u64, String)> {
    log.read_user_messages()
        .expect("the messages read back")
        .iter()
        .map(|message| {
            let text = message.content[0]["text"].as_str().unwrap_or_default();
            (message.seq, text.to_owned())
        })
        .collect()
}

/// The event lines of a file, parsed.
fn events(path: &Path) -> Result<Vec<Value>, Box<dyn Error>> {
    let mut events = Vec::new();
    for line in fs::read_to_string(path)?.lines().skip(1) {
        events.push(serde_json::from_str(line)?);
    }
    Ok(events)
}

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
fn compaction_covers_what_another_process_appended() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut stale = SessionLog::open(&path)?;
    let mut other = SessionLog::open(&path)?;
    other.append_user_messages(vec![(user_data("late"), SurfaceOp::Append)])?;
    assert_eq!(stale.compact("All of it.")?, 5);
    assert_eq!(stale.surface(), &[5]);
    let last = events(&path)?.pop().ok_or("no events")?;
    assert_eq!(last["sourceEventSeqs"], json!([3, 1, 2, 4]));
    Ok(())
}

#[test]
fn two_handles_appending_alternately_never_collide() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut first = SessionLog::open(&path)?;
    let mut second = SessionLog::open(&path)?;
    let mut seqs = Vec::new();
    for round in 0..3 {
        seqs.extend(first.append_user_messages(vec![(user_data(&format!("first {round}")), SurfaceOp::Append)])?);
        seqs.extend(second.append_user_messages(vec![(user_data(&format!("second {round}")), SurfaceOp::Append)])?);
    }
    assert_eq!(seqs, [4, 5, 6, 7, 8, 9]);
    // Each handle picked up the other's lines before writing.
    assert_eq!(first.next_seq(), 9);
    assert_eq!(texts(&first).len(), 3 + 5);
    assert_eq!(second.read_user_messages()?, SessionLog::open(&path)?.read_user_messages()?);

    let reopened = SessionLog::open(&path)?;
    assert_eq!(reopened.warnings(), &[] as &[String]);
    assert_eq!(reopened.surface(), &[3, 1, 2, 4, 5, 6, 7, 8, 9]);
    let appended: Vec<String> = texts(&reopened).into_iter().skip(3).map(|(_, t)| t).collect();
    assert_eq!(appended, ["first 0", "second 0", "first 1", "second 1", "first 2", "second 2"]);
    Ok(())
}

#[test]
fn concurrent_appenders_lose_nothing() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, &format!("{HEADER}\n"))?;
    let writers: Vec<_> = (0..2)
        .map(|writer| {
            let path = path.clone();
            std::thread::spawn(move || -> Result<Vec<u64>, SessionError> {
                let mut log = SessionLog::open(&path)?;
                let mut seqs = Vec::new();
                for n in 0..25 {
                    let text = format!("writer {writer} message {n}");
                    seqs.extend(log.append_user_messages(vec![(user_data(&text), SurfaceOp::Append)])?);
                }
                Ok(seqs)
            })
        })
        .collect();
    let mut seqs = Vec::new();
    for writer in writers {
        seqs.extend(writer.join().map_err(|_| "writer panicked")??);
    }
    seqs.sort_unstable();
    assert_eq!(seqs, (0..50).collect::<Vec<u64>>());
    let log = SessionLog::open(&path)?;
    assert_eq!(log.warnings(), &[] as &[String]);
    assert_eq!(log.read_user_messages()?.len(), 50);
    assert_eq!(log.surface(), (0..50).collect::<Vec<u64>>().as_slice());
    Ok(())
}

#[test]
fn an_append_waits_for_the_lock_and_then_reads_what_the_holder_wrote() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, &format!("{HEADER}\n{}\n", user_line(0, "a")))?;
    let mut log = SessionLog::open(&path)?;
    // Another writer holds the lock (a second open file takes its own lock,
    // even in this process).
    let holder = fs::OpenOptions::new().append(true).open(&path)?;
    holder.lock()?;
    let (done, appended) = std::sync::mpsc::channel();
    let writer = std::thread::spawn(move || {
        let seqs = log.append_user_messages(vec![(user_data("waited"), SurfaceOp::Append)]);
        let _ = done.send(());
        seqs
    });
    // Without the lock it would be done long before this; with it, never.
    // (The wait only lets a missing lock show: it cannot fail a correct one.)
    assert!(appended.recv_timeout(std::time::Duration::from_millis(300)).is_err(), "appended under another's lock");
    std::io::Write::write_all(&mut &holder, format!("{}\n", user_line(1, "the holder's")).as_bytes())?;
    holder.unlock()?;
    let seqs = writer.join().map_err(|_| "writer panicked")??;
    assert_eq!(seqs, [2], "the waiting append read the holder's line first");
    let reread = SessionLog::open(&path)?;
    assert_eq!(reread.warnings(), &[] as &[String]);
    assert_eq!(texts(&reread), [(0, "a".to_owned()), (1, "the holder's".to_owned()), (2, "waited".to_owned())]);
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
fn a_file_rewritten_behind_the_log_is_not_appended_to() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut log = SessionLog::open(&path)?;
    fs::write(&path, format!("{HEADER}\n"))?;
    let error = log
        .append_user_messages(vec![(user_data("x"), SurfaceOp::Append)])
        .err()
        .ok_or("appended to a rewritten file")?;
    assert!(matches!(error, SessionError::Shrunk { .. }), "{error}");
    assert_eq!(fs::read_to_string(&path)?, format!("{HEADER}\n"));
    Ok(())
}

#[test]
fn a_vanished_file_is_an_error_naming_it() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut log = SessionLog::open(&path)?;
    fs::remove_file(&path)?;
    let error = log.compact("x").err().ok_or("appended to a missing file")?;
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert!(message.contains("opening for append"), "{message}");
    assert!(!path.exists(), "a vanished session is not recreated");
    let missing = SessionLog::open(&path).err().ok_or("opened a missing file")?;
    assert!(missing.to_string().contains("opening"), "{missing}");
    Ok(())
}

#[test]
fn refresh_picks_up_other_writers() -> TestResult {
    let dir = TempDir::new()?;
    let path = session_file(&dir, SEEDED_SESSION)?;
    let mut reader = SessionLog::open(&path)?;
    SessionLog::open(&path)?.append_user_messages(vec![(user_data("new"), SurfaceOp::Append)])?;
    assert_eq!(reader.next_seq(), 4);
    reader.refresh()?;
    assert_eq!(reader.next_seq(), 5);
    assert!(reader.is_visible(4));
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

//! Tests of the session log against real files in a temporary directory.
//!
//! The shared fixtures are here; the tests are grouped by what they exercise.

mod appending;
mod concurrency;
mod files;
mod header;
mod locking;
mod reading;

use std::error::Error;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::{COMPACTION_PLUGIN, LockWait, SessionError, SessionHeader, SessionLog, SurfaceOp};

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

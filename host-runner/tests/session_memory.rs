//! Reading a large session file streams it: the memory a read takes is
//! bounded by its longest line and a few dozen bytes per indexed event, never
//! by the size of the file or the text of its messages (user messages are
//! read back from the file when the plugin asks for one). A counting global
//! allocator (this test binary's own) measures the peak.
//!
//! The always-on tests read 24 MB sessions, one shaped like an agent run and
//! one made only of user messages; the ignored ones read 200 MB and print the
//! time and the peak (`cargo test --release -p skill-host --test
//! session_memory -- --ignored --nocapture`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use serde_json::json;
use skill_host::session::SessionLog;

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged to the system allocator.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            let now = IN_USE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(now, Ordering::SeqCst);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(pointer, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::SeqCst);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One measurement at a time: the counters are global.
fn measuring() -> MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What a written session is made of.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// Per ten events one short user message, three assistant messages of
    /// 2 KB and six tool results of 20 KB.
    AgentRun,
    /// Only user messages of 1 KB each.
    UserMessages,
}

/// Writes a session of `shape` until the file holds `bytes`. Returns the
/// number of events.
fn write_session(path: &Path, bytes: u64, shape: Shape) -> u64 {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(out, r#"{{"type":"session","version":0,"id":"large","createdAt":1700000000000,"cwd":"/w"}}"#).unwrap();
    let (assistant, tool, said) = ("a".repeat(2_000), "t".repeat(20_000), "u".repeat(1_000));
    let (mut seq, mut written) = (0_u64, 0_u64);
    while written < bytes {
        let text = match shape {
            Shape::AgentRun => format!("Fix file {seq}."),
            Shape::UserMessages => format!("{seq}: {said}"),
        };
        let step = if shape == Shape::UserMessages { 0 } else { seq % 10 };
        let event = match step {
            0 => json!({"type": "user/message", "seq": seq, "time": 1, "surfaceOp": "append",
                        "data": {"content": [{"type": "text", "text": text}],
                                 "source": {"kind": "user"}, "role": "user", "id": format!("m-{seq}")}}),
            1..=3 => json!({"type": "assistant/message", "seq": seq, "time": 1, "surfaceOp": "append",
                            "data": {"message": {"role": "assistant", "content": [{"type": "text", "text": assistant}]}}}),
            _ => json!({"type": "tool/result", "seq": seq, "time": 1, "surfaceOp": "append",
                        "data": {"message": {"role": "user", "content": [{"type": "tool-result", "toolCallId": "c",
                                 "content": [{"type": "text", "text": tool}]}]}}}),
        };
        let line = event.to_string();
        writeln!(out, "{line}").unwrap();
        written += line.len() as u64 + 1;
        seq += 1;
    }
    out.flush().unwrap();
    seq
}

/// Opens `path` and returns the log and the peak bytes allocated while
/// reading it.
fn peak_while_opening(path: &Path, events: u64, shape: Shape) -> (SessionLog, usize) {
    let baseline = IN_USE.load(Ordering::SeqCst);
    PEAK.store(baseline, Ordering::SeqCst);
    let log = SessionLog::open(path).unwrap();
    let peak = PEAK.load(Ordering::SeqCst) - baseline;
    assert_eq!(log.warnings(), &[] as &[String]);
    assert_eq!(log.next_seq(), events);
    let user_messages = if shape == Shape::UserMessages { events } else { events.div_ceil(10) };
    assert_eq!(log.user_messages().len() as u64, user_messages);
    (log, peak)
}

/// The newest user message still reads back whole, from the file.
fn newest_reads_back(log: &SessionLog, events: u64) {
    let newest = log.user_messages().next_back().unwrap().seq;
    let message = log.user_message(newest).unwrap().unwrap();
    let text = message.content[0]["text"].as_str().unwrap();
    assert!(text.starts_with(&format!("{newest}: ")) && text.len() > 1_000, "{text:?}");
    assert_eq!(newest, events - 1);
}

#[test]
fn reading_a_24_mb_session_takes_a_bounded_amount_of_memory() {
    let _one = measuring();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.jsonl");
    let events = write_session(&path, 24_000_000, Shape::AgentRun);
    let (_, peak) = peak_while_opening(&path, events, Shape::AgentRun);
    // The reader's buffer (64 KiB), one line (20 KB) and the index of ~170
    // short user messages and ~1,700 surface nodes: far below the file.
    assert!(peak < 2_000_000, "reading 24 MB took {peak} bytes at the peak");
}

#[test]
fn a_24_mb_session_of_user_messages_is_indexed_without_their_text() {
    let _one = measuring();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("talkative.jsonl");
    let events = write_session(&path, 24_000_000, Shape::UserMessages);
    let (log, peak) = peak_while_opening(&path, events, Shape::UserMessages);
    // ~23,000 messages of 1 KB: holding their text would take the file's
    // size; the index takes a few dozen bytes each (plus growth slack).
    let per_message = peak as u64 / events;
    assert!(
        per_message < 256,
        "reading 24 MB of user messages took {peak} bytes at the peak ({per_message} per message)"
    );
    newest_reads_back(&log, events);
}

#[test]
#[ignore = "writes and reads 200 MB; run by hand to measure"]
fn reading_a_200_mb_session_streams() {
    for shape in [Shape::AgentRun, Shape::UserMessages] {
        let _one = measuring();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("large.jsonl");
        let events = write_session(&path, 200_000_000, shape);
        let started = Instant::now();
        let (log, peak) = peak_while_opening(&path, events, shape);
        let elapsed = started.elapsed();
        let what = if shape == Shape::AgentRun { "agent run" } else { "user messages only" };
        println!("200 MB ({what}), {events} events: read in {elapsed:?}, peak {peak} bytes allocated while reading");
        if shape == Shape::UserMessages {
            newest_reads_back(&log, events);
            assert!(peak < 40_000_000, "reading 200 MB of user messages took {peak} bytes at the peak");
        } else {
            assert!(peak < 8_000_000, "reading 200 MB took {peak} bytes at the peak");
        }
    }
}

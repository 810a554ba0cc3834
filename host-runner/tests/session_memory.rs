//! Reading a large session file streams it: the memory a read takes is
//! bounded by its longest line and the user messages it indexes, never by the
//! size of the file. A counting global allocator (this test binary's own)
//! measures the peak.
//!
//! The always-on test reads a 24 MB session; the ignored one reads 200 MB and
//! prints the time and the peak (`cargo test --release -p host-runner --test
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

/// Writes a session shaped like a long agent run: per ten events one short
/// user message, three assistant messages of 2 KB and six tool results of
/// 20 KB, until the file holds `bytes`. Returns the number of events.
fn write_session(path: &Path, bytes: u64) -> u64 {
    let mut out = BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(out, r#"{{"type":"session","version":0,"id":"large","createdAt":1700000000000,"cwd":"/w"}}"#).unwrap();
    let (assistant, tool) = ("a".repeat(2_000), "t".repeat(20_000));
    let (mut seq, mut written) = (0_u64, 0_u64);
    while written < bytes {
        let event = match seq % 10 {
            0 => json!({"type": "user/message", "seq": seq, "time": 1, "surfaceOp": "append",
                        "data": {"content": [{"type": "text", "text": format!("Fix file {seq}.")}],
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

/// Opens `path` and returns the peak bytes allocated while reading it.
fn peak_while_opening(path: &Path, events: u64) -> usize {
    let baseline = IN_USE.load(Ordering::SeqCst);
    PEAK.store(baseline, Ordering::SeqCst);
    let log = SessionLog::open(path).unwrap();
    let peak = PEAK.load(Ordering::SeqCst) - baseline;
    assert_eq!(log.warnings(), &[] as &[String]);
    assert_eq!(log.next_seq(), events);
    assert_eq!(log.user_messages().len() as u64, events.div_ceil(10));
    peak
}

#[test]
fn reading_a_24_mb_session_takes_a_bounded_amount_of_memory() {
    let _one = measuring();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.jsonl");
    let events = write_session(&path, 24_000_000);
    let peak = peak_while_opening(&path, events);
    // The reader's buffer (64 KiB), one line (20 KB) and the index of ~170
    // short user messages and ~1,700 surface nodes: far below the file.
    assert!(peak < 2_000_000, "reading 24 MB took {peak} bytes at the peak");
}

#[test]
#[ignore = "writes and reads 200 MB; run by hand to measure"]
fn reading_a_200_mb_session_streams() {
    let _one = measuring();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.jsonl");
    let events = write_session(&path, 200_000_000);
    let started = Instant::now();
    let peak = peak_while_opening(&path, events);
    let elapsed = started.elapsed();
    println!("200 MB, {events} events: read in {elapsed:?}, peak {peak} bytes allocated while reading");
    assert!(peak < 8_000_000, "reading 200 MB took {peak} bytes at the peak");
}

//! The session log reader (`skill_host::SessionLog`, docs/spec.md §5): any
//! file either opens, with every unreadable line skipped and the file left
//! byte for byte as it was, or is refused with an error; an opened log's
//! index is well formed; and after one append, reading the file afresh gives
//! exactly the index the appending log holds, with the earlier bytes intact.

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use skill_host::session::{SessionLog, SurfaceOp};

/// One file, rewritten for every input; in memory where the system has a
/// tmpfs, because every append syncs.
fn path() -> &'static PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = DIR.get_or_init(|| {
            tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).expect("a temporary directory")
        });
        dir.path().join("fuzz-session.jsonl")
    })
}

fuzz_target!(|data: &[u8]| {
    let path = path();
    std::fs::write(path, data).expect("writing the input");
    let Ok(mut log) = SessionLog::open(path) else {
        assert_eq!(std::fs::read(path).expect("reading back"), data, "a refused open changed the file");
        return;
    };
    assert_eq!(std::fs::read(path).expect("reading back"), data, "opening changed the file");

    let seqs: Vec<u64> = log.user_messages().map(|message| message.seq).collect();
    // Every indexed message reads back from its line, source and content.
    let read = log.read_user_messages().expect("an indexed message no longer reads");
    assert_eq!(read.iter().map(|event| event.seq).collect::<Vec<_>>(), seqs);
    assert!(seqs.windows(2).all(|pair| pair[0] < pair[1]), "user messages out of order: {seqs:?}");
    assert!(seqs.iter().all(|&seq| seq < log.next_seq()), "a seq at or past next_seq {}", log.next_seq());
    let mut surface = log.surface().to_vec();
    assert!(surface.iter().all(|&seq| seq < log.next_seq() && log.is_visible(seq)));
    surface.sort_unstable();
    surface.dedup();
    assert_eq!(surface.len(), log.surface().len(), "a seq twice on the surface: {:?}", log.surface());

    let message = json!({
        "content": [{"type": "text", "text": "appended by the fuzzer"}],
        "source": {"kind": "user"},
        "role": "user",
        "id": "fuzz",
    });
    let appended = match log.append_user_messages(vec![(message, SurfaceOp::Append)]) {
        Ok(appended) => appended,
        // Only a log whose seqs are used up refuses, and writes nothing.
        Err(error) => {
            assert!(error.to_string().contains("the largest DeepSeek Harness can read"), "{error}");
            assert_eq!(std::fs::read(path).expect("reading back"), data, "a refused append changed the file");
            return;
        }
    };
    assert_eq!(appended.len(), 1);
    let written = std::fs::read(path).expect("reading back");
    assert!(written.starts_with(data), "the append changed earlier bytes");

    let reread = SessionLog::open(path).expect("reopening after an append");
    assert_eq!(reread.header(), log.header());
    assert_eq!(reread.next_seq(), log.next_seq());
    assert_eq!(reread.surface(), log.surface());
    assert_eq!(
        reread.read_user_messages().expect("reading back"),
        log.read_user_messages().expect("reading back")
    );
});

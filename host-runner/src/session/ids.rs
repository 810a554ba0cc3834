//! Session and message ids without a random-number crate.
//!
//! DeepSeek Harness mints UUIDs; ours are shaped like a UUIDv7 (48-bit
//! millisecond time first, so they sort by creation) so they sit naturally
//! beside the harness's own. Uniqueness within a process comes from a counter
//! in the id; across processes from the pid and the per-process random keys
//! of std's `RandomState`.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch; 0 if the clock is before it.
pub(super) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
}

/// A fresh id, unique within this process (it embeds a counter) and, with
/// overwhelming likelihood, across processes (pid and random hasher keys).
pub(super) fn new_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    static KEYS: OnceLock<RandomState> = OnceLock::new();
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.subsec_nanos());
    let noise = KEYS.get_or_init(RandomState::new).hash_one((std::process::id(), nanos, count));
    let millis = u64::try_from(now_ms()).unwrap_or(0) & 0xffff_ffff_ffff;
    // Layout: 48 bits time | version 7 | 12 bits noise | variant 0b10 |
    // 32 bits counter | 30 bits noise.
    let high = (millis << 16) | 0x7000 | (noise >> 52);
    let low = (0b10 << 62) | ((count & 0xffff_ffff) << 30) | (noise & 0x3fff_ffff);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0xffff,
        low >> 48,
        low & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_uuid_shaped_and_unique() {
        let ids: Vec<String> = (0..1000).map(|_| new_id()).collect();
        let distinct: HashSet<&String> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
        for id in &ids {
            let groups: Vec<usize> = id.split('-').map(str::len).collect();
            assert_eq!(groups, [8, 4, 4, 4, 12], "{id}");
            assert_eq!(id.as_bytes()[14], b'7', "{id}");
            assert!(matches!(id.as_bytes()[19], b'8' | b'9' | b'a' | b'b'), "{id}");
        }
    }
}

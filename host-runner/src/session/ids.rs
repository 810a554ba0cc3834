//! Session and message ids: UUIDv7 (the `uuid` crate), 48-bit millisecond
//! time first so they sort by creation, beside the harness's own UUIDs.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch; 0 if the clock is before it.
pub(super) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
}

/// A fresh UUIDv7, in its lower-case hyphenated form: random bits beside
/// the time, and a counter that keeps ids made within one millisecond
/// ordered and distinct.
pub(super) fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
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

//! The containers a reused plugin instance remembers things in between
//! calls, so a steady-state step does no work proportional to the catalog or
//! the session. Each feature owns what it remembers, in these containers:
//! the pre-step its catalogs, history scans and steady step
//! (`crate::pre_step::Memory`), loaded skills their versions and scans
//! (`crate::loaded::LoadedMemory`).
//!
//! Every container is bounded, and forgetting only costs recomputation. All
//! are keyed by host-chosen integers (registry revisions, the host's session
//! key, seqs, history versions): events never change once written, and equal
//! revisions or history versions mean equal contents. This module knows
//! nothing of what is kept.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::rc::Rc;

/// The keys here are host-chosen integers, not attacker-chosen strings, and
/// SipHash costs more than the rest of a steady-state step in wasm: mix the
/// integers with a multiply instead.
#[derive(Default)]
struct IntegerHasher(u64);

impl Hasher for IntegerHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl std::fmt::Debug for IntegerHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IntegerHasher")
    }
}

type IntegerMap<K, V> = HashMap<K, V, BuildHasherDefault<IntegerHasher>>;

/// What was built for each of the last `CAPACITY` registry revisions,
/// oldest first; remembering one more forgets the oldest.
#[derive(Debug)]
pub struct ByRevision<T, const CAPACITY: usize> {
    held: Vec<(u64, Rc<T>)>,
}

impl<T, const CAPACITY: usize> ByRevision<T, CAPACITY> {
    /// Holds nothing yet.
    pub const fn new() -> Self {
        Self { held: Vec::new() }
    }

    /// The revision remembered last.
    pub fn newest_revision(&self) -> Option<u64> {
        self.held.last().map(|(revision, _)| *revision)
    }

    /// What is remembered for `revision`.
    pub fn get(&self, revision: u64) -> Option<Rc<T>> {
        self.held.iter().rev().find(|(held, _)| *held == revision).map(|(_, value)| Rc::clone(value))
    }

    /// Remembers `value` for `revision`, forgetting the oldest when full.
    pub fn remember(&mut self, revision: u64, value: Rc<T>) {
        self.held.retain(|(held, _)| *held != revision);
        if self.held.len() == CAPACITY {
            self.held.remove(0);
        }
        self.held.push((revision, value));
    }
}

impl<T, const CAPACITY: usize> Default for ByRevision<T, CAPACITY> {
    fn default() -> Self {
        Self::new()
    }
}

/// Values by integer keys (a session's messages, say), up to `CAPACITY` of
/// them: remembering one more when full forgets them all and starts over.
#[derive(Debug)]
pub struct ByKey<K, V, const CAPACITY: usize> {
    held: IntegerMap<K, V>,
}

impl<K: Hash + Eq, V, const CAPACITY: usize> ByKey<K, V, CAPACITY> {
    /// Holds nothing yet.
    pub const fn new() -> Self {
        Self { held: HashMap::with_hasher(BuildHasherDefault::new()) }
    }

    /// What is remembered for `key`.
    #[inline]
    pub fn get(&self, key: &K) -> Option<&V> {
        self.held.get(key)
    }

    /// Remembers `value` for `key`, starting over first when full.
    pub fn remember(&mut self, key: K, value: V) {
        if self.held.len() >= CAPACITY {
            self.held.clear();
        }
        self.held.insert(key, value);
    }
}

impl<K: Hash + Eq, V, const CAPACITY: usize> Default for ByKey<K, V, CAPACITY> {
    fn default() -> Self {
        Self::new()
    }
}

/// One value per session, concluded at a history version and worth nothing
/// at another, for up to `CAPACITY` sessions: a new session when full
/// forgets them all and starts over.
#[derive(Debug)]
pub struct BySession<T, const CAPACITY: usize> {
    held: IntegerMap<u64, (u64, T)>,
}

impl<T, const CAPACITY: usize> BySession<T, CAPACITY> {
    /// Holds nothing yet.
    pub const fn new() -> Self {
        Self { held: HashMap::with_hasher(BuildHasherDefault::new()) }
    }

    /// What is remembered for `session` at `version`.
    pub fn get(&self, session: u64, version: u64) -> Option<&T> {
        self.held.get(&session).filter(|(held, _)| *held == version).map(|(_, value)| value)
    }

    /// Remembers `value` for `session` at `version`, in place of what it
    /// held at another.
    pub fn remember(&mut self, session: u64, version: u64, value: T) {
        if self.held.len() >= CAPACITY && !self.held.contains_key(&session) {
            self.held.clear();
        }
        self.held.insert(session, (version, value));
    }
}

impl<T, const CAPACITY: usize> Default for BySession<T, CAPACITY> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_revision_forgets_the_oldest_when_full() {
        let mut held: ByRevision<&str, 2> = ByRevision::new();
        held.remember(1, Rc::new("one"));
        held.remember(2, Rc::new("two"));
        held.remember(1, Rc::new("one again"));
        assert_eq!(held.newest_revision(), Some(1));
        held.remember(3, Rc::new("three"));
        assert_eq!(held.get(2), None);
        assert_eq!(held.get(1).as_deref(), Some(&"one again"));
        assert_eq!(held.get(3).as_deref(), Some(&"three"));
    }

    #[test]
    fn by_key_starts_over_when_full() {
        let mut held: ByKey<(u64, u64), u8, 2> = ByKey::new();
        held.remember((1, 1), 1);
        held.remember((1, 2), 2);
        assert_eq!(held.get(&(1, 1)), Some(&1));
        held.remember((1, 3), 3);
        assert_eq!((held.get(&(1, 1)), held.get(&(1, 2)), held.get(&(1, 3))), (None, None, Some(&3)));
    }

    #[test]
    fn by_session_answers_for_one_version_and_starts_over_for_a_new_session_when_full() {
        let mut held: BySession<&str, 2> = BySession::new();
        held.remember(1, 10, "one at 10");
        held.remember(2, 10, "two at 10");
        assert_eq!(held.get(1, 11), None);
        // A session already held is replaced without forgetting the others.
        held.remember(1, 11, "one at 11");
        assert_eq!((held.get(1, 11), held.get(2, 10)), (Some(&"one at 11"), Some(&"two at 10")));
        held.remember(3, 10, "three at 10");
        assert_eq!((held.get(1, 11), held.get(2, 10), held.get(3, 10)), (None, None, Some(&"three at 10")));
    }
}

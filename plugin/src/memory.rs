//! What a reused plugin instance remembers between calls, so a steady-state
//! step does no work proportional to the catalog or the session:
//! - the catalog built for each registry revision, since equal revisions
//!   mean equal skill lists (whatever the working directory);
//! - the catalog digest (or "not a catalog") of each session message read,
//!   keyed by the host's session key and the seq, since events never change;
//! - what the last history scan of each session concluded, with the history
//!   version it was made at (equal versions mean an unchanged history).
//!
//! Both are bounded; forgetting only costs recomputation.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

use crate::catalog::{Catalog, CatalogDigest};
use crate::pre_step::CatalogHistory;

/// How many revisions' catalogs are kept.
const CATALOGS: usize = 16;
/// How many message digests are kept before starting over.
const DIGESTS: usize = 1 << 16;
/// How many sessions' history conclusions are kept before starting over.
const HISTORIES: usize = 256;

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

type IntegerMap<K, V> = HashMap<K, V, BuildHasherDefault<IntegerHasher>>;

/// The instance's memory. Dropped with the instance (after any trap).
#[derive(Debug, Default)]
pub struct Memory {
    /// Most recently used last.
    catalogs: Vec<(u64, Rc<Catalog>)>,
    digests: IntegerMap<(u64, u64), Option<CatalogDigest>>,
    histories: IntegerMap<u64, (u64, CatalogHistory)>,
}

impl std::fmt::Debug for IntegerHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IntegerHasher")
    }
}

impl Memory {
    /// The revision of the catalog remembered last, to offer the registry:
    /// the instance does not know which working directory a call is for, and
    /// the last one is the likeliest to be asked about again.
    pub fn known_revision(&self) -> Option<u64> {
        self.catalogs.last().map(|(revision, _)| *revision)
    }

    /// The catalog remembered for `revision`.
    pub fn catalog(&self, revision: u64) -> Option<Rc<Catalog>> {
        self.catalogs.iter().rev().find(|(held, _)| *held == revision).map(|(_, catalog)| Rc::clone(catalog))
    }

    /// Remembers the catalog of a complete snapshot, forgetting the oldest
    /// when full.
    pub fn remember_catalog(&mut self, revision: u64, catalog: Rc<Catalog>) {
        self.catalogs.retain(|(held, _)| *held != revision);
        if self.catalogs.len() == CATALOGS {
            self.catalogs.remove(0);
        }
        self.catalogs.push((revision, catalog));
    }

    /// The digest remembered for a session message: `Some(None)` means "known not a catalog".
    pub fn digest(&self, session: u64, seq: u64) -> Option<Option<CatalogDigest>> {
        self.digests.get(&(session, seq)).copied()
    }

    /// The history conclusion for `session` made at `version`, if remembered.
    pub fn history(&self, session: u64, version: u64) -> Option<CatalogHistory> {
        self.histories.get(&session).filter(|(held, _)| *held == version).map(|(_, history)| *history)
    }

    /// Remembers a history conclusion for `session` at `version`.
    pub fn remember_history(&mut self, session: u64, version: u64, history: CatalogHistory) {
        if self.histories.len() >= HISTORIES && !self.histories.contains_key(&session) {
            self.histories.clear();
        }
        self.histories.insert(session, (version, history));
    }

    /// Remembers what a session message is.
    pub fn remember_digest(&mut self, session: u64, seq: u64, digest: Option<CatalogDigest>) {
        if self.digests.len() >= DIGESTS {
            self.digests.clear();
        }
        self.digests.insert((session, seq), digest);
    }
}

//! What a reused plugin instance remembers between calls, so a steady-state
//! step does no work proportional to the catalog or the session:
//! - the catalog built for each registry revision, since equal revisions
//!   mean equal skill lists (whatever the working directory);
//! - the catalog digest (or "not a catalog") of each session message read,
//!   keyed by the host's session key and the seq, since events never change;
//! - what the last history scan of each session concluded, with the history
//!   version it was made at (equal versions mean an unchanged history);
//! - the last step found already showing the current catalog (a
//!   [`SteadyStep`]): the next steady step compares three integers and is done.
//!
//! The first three are bounded, and forgetting them only costs
//! recomputation. The steady step is one slot, and it outlives the catalog
//! and the history it was found from on purpose: what they concluded about
//! that session, version and revision can never change.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;

use crate::catalog::{Catalog, CatalogDigest, Published};
use crate::catalog_update::ShownCatalog;
use crate::loaded::{Event, LoadedHistory, Versions};
use crate::pre_step::CatalogHistory;

/// How many revisions' catalogs are kept.
const CATALOGS: usize = 16;
/// How many message digests are kept before starting over.
const DIGESTS: usize = 1 << 16;
/// How many effective catalogs are kept before starting over.
const SHOWN: usize = 16;
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

/// A step the pre-step may settle from memory: with nothing proposed, a
/// visible tool and no abort, a step of this session at this history version
/// and registry revision already shows the current catalog. That never stops
/// being true: a session's events never change under one history version, a
/// revision's skill list never changes, and the configuration is fixed for
/// the memory's lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SteadyStep {
    /// The host's session key.
    pub session: u64,
    /// The session's history version.
    pub history_version: u64,
    /// The registry revision the host holds.
    pub registry_revision: u64,
}

/// The instance's memory. Dropped with the instance (after any trap).
#[derive(Debug)]
pub struct Memory {
    /// In the order they were remembered, oldest first.
    catalogs: Vec<(u64, Rc<Catalog>)>,
    digests: IntegerMap<(u64, u64), Option<Published>>,
    /// With updates in a session: what the model sees of a complete catalog
    /// and the updates up to a seq, by session, catalog seq and newest seq.
    shown: IntegerMap<(u64, u64, u64), (Rc<ShownCatalog>, CatalogDigest)>,
    histories: IntegerMap<u64, (u64, CatalogHistory)>,
    /// The last step found already showing the current catalog.
    steady: Option<SteadyStep>,
    /// With `loadedSkills`: each revision's skill versions (as `catalogs`),
    /// what each recorded load or notice is, and each session's scan.
    versions: Vec<(u64, Rc<Versions>)>,
    loaded_events: IntegerMap<(u64, u64), Rc<Event>>,
    loaded_histories: IntegerMap<u64, (u64, Rc<LoadedHistory>)>,
}

impl std::fmt::Debug for IntegerHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("IntegerHasher")
    }
}

impl Default for Memory {
    fn default() -> Self {
        Self::new()
    }
}

impl Memory {
    /// Remembers nothing yet. A `const fn`, so the instance's state needs no
    /// lazy initialisation check on every call.
    pub const fn new() -> Self {
        Self {
            catalogs: Vec::new(),
            digests: HashMap::with_hasher(BuildHasherDefault::new()),
            shown: HashMap::with_hasher(BuildHasherDefault::new()),
            histories: HashMap::with_hasher(BuildHasherDefault::new()),
            steady: None,
            versions: Vec::new(),
            loaded_events: HashMap::with_hasher(BuildHasherDefault::new()),
            loaded_histories: HashMap::with_hasher(BuildHasherDefault::new()),
        }
    }

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

    /// Whether `step` is the step last found already showing the current catalog.
    #[inline]
    pub fn is_steady(&self, step: SteadyStep) -> bool {
        self.steady == Some(step)
    }

    /// Remembers that `step` already shows the current catalog.
    pub fn remember_steady(&mut self, step: SteadyStep) {
        self.steady = Some(step);
    }

    /// What a session message was read as: `Some(None)` means "known not a catalog".
    pub fn published(&self, session: u64, seq: u64) -> Option<Option<Published>> {
        self.digests.get(&(session, seq)).copied()
    }

    /// What the model sees of the catalog at `base` with the updates up to `newest`.
    pub fn shown(&self, session: u64, base: u64, newest: u64) -> Option<(Rc<ShownCatalog>, CatalogDigest)> {
        self.shown.get(&(session, base, newest)).cloned()
    }

    /// Remembers what the model sees of a catalog and its updates.
    pub fn remember_shown(&mut self, session: u64, base: u64, newest: u64, shown: (Rc<ShownCatalog>, CatalogDigest)) {
        if self.shown.len() >= SHOWN {
            self.shown.clear();
        }
        self.shown.insert((session, base, newest), shown);
    }

    /// The history conclusion for `session` made at `version`, if remembered.
    pub fn history(&self, session: u64, version: u64) -> Option<CatalogHistory> {
        self.histories.get(&session).filter(|(held, _)| *held == version).map(|(_, history)| history.clone())
    }

    /// Remembers a history conclusion for `session` at `version`.
    pub fn remember_history(&mut self, session: u64, version: u64, history: CatalogHistory) {
        if self.histories.len() >= HISTORIES && !self.histories.contains_key(&session) {
            self.histories.clear();
        }
        self.histories.insert(session, (version, history));
    }

    /// The skill versions remembered for `revision`.
    pub fn versions(&self, revision: u64) -> Option<Rc<Versions>> {
        self.versions.iter().rev().find(|(held, _)| *held == revision).map(|(_, versions)| Rc::clone(versions))
    }

    /// Remembers a complete snapshot's skill versions, forgetting the oldest when full.
    pub fn remember_versions(&mut self, revision: u64, versions: Rc<Versions>) {
        self.versions.retain(|(held, _)| *held != revision);
        if self.versions.len() == CATALOGS {
            self.versions.remove(0);
        }
        self.versions.push((revision, versions));
    }

    /// What a recorded load or notice was read as.
    pub fn loaded_event(&self, session: u64, seq: u64) -> Option<Rc<Event>> {
        self.loaded_events.get(&(session, seq)).cloned()
    }

    /// Remembers what a recorded load or notice is.
    pub fn remember_loaded_event(&mut self, session: u64, seq: u64, event: Rc<Event>) {
        if self.loaded_events.len() >= DIGESTS {
            self.loaded_events.clear();
        }
        self.loaded_events.insert((session, seq), event);
    }

    /// The loaded-skills scan of `session` made at `version`, if remembered.
    pub fn loaded_history(&self, session: u64, version: u64) -> Option<Rc<LoadedHistory>> {
        self.loaded_histories.get(&session).filter(|(held, _)| *held == version).map(|(_, history)| Rc::clone(history))
    }

    /// Remembers a loaded-skills scan of `session` at `version`.
    pub fn remember_loaded_history(&mut self, session: u64, version: u64, history: Rc<LoadedHistory>) {
        if self.loaded_histories.len() >= HISTORIES && !self.loaded_histories.contains_key(&session) {
            self.loaded_histories.clear();
        }
        self.loaded_histories.insert(session, (version, history));
    }

    /// Remembers what a session message is.
    pub fn remember_published(&mut self, session: u64, seq: u64, published: Option<Published>) {
        if self.digests.len() >= DIGESTS {
            self.digests.clear();
        }
        self.digests.insert((session, seq), published);
    }
}

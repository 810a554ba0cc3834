//! What a reused plugin instance remembers between pre-steps, so a
//! steady-state step does no work proportional to the catalog or the
//! session:
//! - the catalog built for each registry revision, since equal revisions
//!   mean equal skill lists (whatever the working directory);
//! - what the history scan read and concluded of each session
//!   ([`HistoryMemory`]);
//! - the last step found already showing the current catalog (a
//!   [`SteadyStep`]): the next steady step compares three integers and is done;
//! - with `loadedSkills`, what the loaded-skills notices read
//!   ([`LoadedMemory`]).
//!
//! All but the steady step are bounded, and forgetting them only costs
//! recomputation. The steady step is one slot, and it outlives the catalog
//! and the history it was found from on purpose: what they concluded about
//! that session, version and revision can never change.

use std::rc::Rc;

use crate::catalog::Catalog;
use crate::loaded::LoadedMemory;
use crate::memory::ByRevision;

use super::history::HistoryMemory;

/// How many revisions' catalogs are kept.
const CATALOGS: usize = 16;

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
    catalogs: ByRevision<Catalog, CATALOGS>,
    /// The last step found already showing the current catalog.
    steady: Option<SteadyStep>,
    /// What the history scan (step 6) read and concluded.
    pub(super) history: HistoryMemory,
    /// With `loadedSkills`: what the loaded-skills notices read.
    pub(super) loaded: LoadedMemory,
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
        Self { catalogs: ByRevision::new(), steady: None, history: HistoryMemory::new(), loaded: LoadedMemory::new() }
    }

    /// The revision of the catalog remembered last, to offer the registry:
    /// the instance does not know which working directory a call is for, and
    /// the last one is the likeliest to be asked about again.
    pub fn known_revision(&self) -> Option<u64> {
        self.catalogs.newest_revision()
    }

    /// The catalog remembered for `revision`.
    pub fn catalog(&self, revision: u64) -> Option<Rc<Catalog>> {
        self.catalogs.get(revision)
    }

    /// Remembers the catalog of a complete snapshot, forgetting the oldest
    /// when full.
    pub fn remember_catalog(&mut self, revision: u64, catalog: Rc<Catalog>) {
        self.catalogs.remember(revision, catalog);
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
}

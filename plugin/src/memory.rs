//! What a reused plugin instance remembers between calls, so a steady-state
//! step does no work proportional to the catalog or the session:
//! - the catalog built for each (cwd, registry revision), since equal
//!   revisions mean equal skill lists;
//! - the catalog digest (or "not a catalog") of each session message read,
//!   keyed by the host's session key and the seq, since events never change.
//!
//! Both are bounded; forgetting only costs recomputation.

use std::collections::HashMap;
use std::rc::Rc;

use crate::catalog::{Catalog, CatalogDigest};

/// How many (cwd, revision) catalogs are kept.
const CATALOGS: usize = 16;
/// How many message digests are kept before starting over.
const DIGESTS: usize = 1 << 16;

/// The instance's memory. Dropped with the instance (after any trap).
#[derive(Debug, Default)]
pub struct Memory {
    /// Most recently used last.
    catalogs: Vec<(Option<String>, u64, Rc<Catalog>)>,
    digests: HashMap<(u64, u64), Option<CatalogDigest>>,
}

impl Memory {
    /// The revision of the catalog held for `cwd`, to offer the registry.
    pub fn known_revision(&self, cwd: Option<&str>) -> Option<u64> {
        self.catalogs.iter().rev().find(|(held, _, _)| held.as_deref() == cwd).map(|(_, revision, _)| *revision)
    }

    /// The catalog held for `cwd` at `revision`.
    pub fn catalog(&self, cwd: Option<&str>, revision: u64) -> Option<Rc<Catalog>> {
        self.catalogs
            .iter()
            .rev()
            .find(|(held, held_revision, _)| held.as_deref() == cwd && *held_revision == revision)
            .map(|(_, _, catalog)| Rc::clone(catalog))
    }

    /// Remembers the catalog of a complete snapshot, replacing any older one for `cwd`.
    pub fn remember_catalog(&mut self, cwd: Option<&str>, revision: u64, catalog: Rc<Catalog>) {
        self.catalogs.retain(|(held, _, _)| held.as_deref() != cwd);
        if self.catalogs.len() == CATALOGS {
            self.catalogs.remove(0);
        }
        self.catalogs.push((cwd.map(str::to_owned), revision, catalog));
    }

    /// The digest remembered for a session message: `Some(None)` means "known not a catalog".
    pub fn digest(&self, session: u64, seq: u64) -> Option<Option<CatalogDigest>> {
        self.digests.get(&(session, seq)).copied()
    }

    /// Remembers what a session message is.
    pub fn remember_digest(&mut self, session: u64, seq: u64, digest: Option<CatalogDigest>) {
        if self.digests.len() >= DIGESTS {
            self.digests.clear();
        }
        self.digests.insert((session, seq), digest);
    }
}

//! Step 6 of the pre-step: what the session's history says about the
//! catalogs published earlier, and the updates after them
//! (docs/spec.md §3.13).

use std::rc::Rc;

use crate::catalog::{self, CatalogDigest, PLUGIN_NAME, Published, SKILL_CATALOG_KIND};
use crate::catalog_update::{ShownCatalog, Update};
use crate::memory::{ByKey, BySession};
use crate::types::{SessionHistory, SourceFilter};

/// How many history references to read across the boundary at a time.
/// Catalog messages are few, and the newest visible one is usually first.
const HISTORY_PAGE: u32 = 16;

/// How many message digests are kept before starting over.
const DIGESTS: usize = 1 << 16;
/// How many effective catalogs are kept before starting over.
const SHOWN: usize = 16;
/// How many sessions' history conclusions are kept before starting over.
const HISTORIES: usize = 256;

/// What a reused instance remembers of sessions' histories: the catalog
/// digest (or "not a catalog") of each message read, keyed by the host's
/// session key and the seq, since events never change; with updates, what
/// the model sees of a catalog and its updates; and what the last scan of
/// each session concluded, at the history version it was made at (equal
/// versions mean an unchanged history). Bounded; forgetting only costs
/// recomputation.
#[derive(Debug)]
pub struct HistoryMemory {
    digests: ByKey<(u64, u64), Option<Published>, DIGESTS>,
    /// By session, catalog seq and newest seq.
    shown: ByKey<(u64, u64, u64), (Rc<ShownCatalog>, CatalogDigest), SHOWN>,
    histories: BySession<CatalogHistory, HISTORIES>,
}

impl Default for HistoryMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl HistoryMemory {
    /// Remembers nothing yet.
    pub const fn new() -> Self {
        Self { digests: ByKey::new(), shown: ByKey::new(), histories: BySession::new() }
    }

    /// What the history of session `key` at history `version` says
    /// (reused while its history is unchanged).
    pub fn scanned(&mut self, session: &impl SessionHistory, key: u64, version: u64) -> CatalogHistory {
        if let Some(history) = self.histories.get(key, version) {
            return history.clone();
        }
        let history = CatalogHistory::scan(session, key, self);
        self.histories.remember(key, version, history.clone());
        history
    }
}

/// What the session's history says about earlier catalogs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CatalogHistory {
    /// Some catalog was ever published in this session.
    pub published: bool,
    /// What the model sees of the catalogs published: `None` when nothing
    /// is visible, or when compaction hid part of an updated catalog.
    pub visible: Option<Visible>,
}

/// The catalog on the visible surface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Visible {
    /// The newest visible complete catalog, with no update after it.
    Catalog {
        /// Its seq.
        seq: u64,
        /// Its digest.
        digest: CatalogDigest,
        /// No hidden catalog is newer: an update written now is read back
        /// against this one.
        updatable: bool,
    },
    /// A visible complete catalog with visible updates after it.
    Updated {
        /// The complete catalog's seq.
        base: u64,
        /// The updates' seqs, oldest first.
        updates: Rc<[u64]>,
    },
}

impl CatalogHistory {
    /// Scans durable user messages newest first (step 6): the first catalog
    /// or update found means `published`. Without updates, the newest
    /// visible catalog is what the model sees, so the scan goes on past
    /// catalogs that compaction hid. Updates count only on top of the
    /// complete catalog before them, all of it visible. A message's content
    /// is read (and its digest computed) once per instance.
    pub fn scan(session: &impl SessionHistory, key: u64, memory: &mut HistoryMemory) -> Self {
        let filters = [
            SourceFilter { kind: "plugin".to_owned(), plugin: Some(PLUGIN_NAME.to_owned()) },
            SourceFilter { kind: SKILL_CATALOG_KIND.to_owned(), plugin: None },
        ];
        let mut history = Self::default();
        // Updates newer than the complete catalog being looked for, newest first.
        let mut updates: Vec<u64> = Vec::new();
        let mut hidden_update = false;
        let mut hidden_newer = false;
        session.visit_newest_first(&filters, HISTORY_PAGE, |reference| {
            let published = match memory.digests.get(&(key, reference.seq)) {
                Some(known) => *known,
                None => {
                    let published = session.get_user_message(reference.seq).and_then(|m| catalog::published(&m));
                    memory.digests.remember((key, reference.seq), published);
                    published
                }
            };
            let Some(published) = published else { return true };
            history.published = true;
            match published {
                Published::Update => {
                    updates.push(reference.seq);
                    hidden_update |= !reference.visible;
                    true
                }
                Published::Catalog(digest) if updates.is_empty() => {
                    if reference.visible {
                        history.visible =
                            Some(Visible::Catalog { seq: reference.seq, digest, updatable: !hidden_newer });
                    } else {
                        hidden_newer = true;
                    }
                    // The newest visible catalog ends the scan.
                    !reference.visible
                }
                Published::Catalog(_) => {
                    if reference.visible && !hidden_update {
                        updates.reverse();
                        history.visible =
                            Some(Visible::Updated { base: reference.seq, updates: updates.drain(..).collect() });
                    }
                    // Below an update, only the complete catalog right before it counts.
                    false
                }
            }
        });
        history
    }
}

impl Visible {
    /// Whether an update written now would be read back against this
    /// catalog (docs/spec.md §3.13).
    pub fn updatable(&self) -> bool {
        match self {
            Self::Catalog { updatable, .. } => *updatable,
            Self::Updated { .. } => true,
        }
    }

    /// What the model sees and its [`ShownCatalog::digest`], read from the
    /// session (remembered per session and newest message, since events
    /// never change); `None` when a message no longer reads as what it was.
    pub fn shown(
        &self,
        session: &impl SessionHistory,
        key: u64,
        memory: &mut HistoryMemory,
    ) -> Option<(Rc<ShownCatalog>, CatalogDigest)> {
        let (base, updates) = match self {
            Self::Catalog { seq, .. } => (*seq, &[][..]),
            Self::Updated { base, updates } => (*base, &updates[..]),
        };
        let newest = updates.last().copied().unwrap_or(base);
        if let Some(shown) = memory.shown.get(&(key, base, newest)) {
            return Some(shown.clone());
        }
        let mut shown = ShownCatalog::of_published(&session.get_user_message(base)?)?;
        for &seq in updates {
            shown.apply(&Update::of_published(&session.get_user_message(seq)?)?);
        }
        let digest = shown.digest();
        let shown = (Rc::new(shown), digest);
        memory.shown.remember((key, base, newest), shown.clone());
        Some(shown)
    }
}

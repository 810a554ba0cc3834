//! Step 6 of the pre-step: what the session's history says about the
//! catalogs published earlier.

use crate::catalog::{self, CatalogDigest, PLUGIN_NAME, SKILL_CATALOG_KIND};
use crate::memory::Memory;
use crate::types::{SessionHistory, SourceFilter};

/// How many history references to read across the boundary at a time.
/// Catalog messages are few, and the newest visible one is usually first.
const HISTORY_PAGE: u32 = 16;

/// What the session's history says about earlier catalogs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CatalogHistory {
    /// Some catalog was ever published in this session.
    pub published: bool,
    /// The digest of the newest published catalog still on the visible surface.
    pub visible_digest: Option<CatalogDigest>,
}

impl CatalogHistory {
    /// Scans durable user messages newest first (step 6): the first catalog
    /// found means `published`; the newest visible one gives the digest, so
    /// the scan goes on past catalogs that compaction hid. A message's
    /// content is read (and its digest computed) once per instance.
    pub fn scan(session: &impl SessionHistory, key: u64, memory: &mut Memory) -> Self {
        let filters = [
            SourceFilter { kind: "plugin".to_owned(), plugin: Some(PLUGIN_NAME.to_owned()) },
            SourceFilter { kind: SKILL_CATALOG_KIND.to_owned(), plugin: None },
        ];
        let mut history = Self::default();
        session.visit_newest_first(&filters, HISTORY_PAGE, |reference| {
            let digest = match memory.digest(key, reference.seq) {
                Some(known) => known,
                None => {
                    let digest = session.get_user_message(reference.seq).and_then(|m| catalog::published_digest(&m));
                    memory.remember_digest(key, reference.seq, digest);
                    digest
                }
            };
            let Some(digest) = digest else { return true };
            history.published = true;
            if reference.visible {
                history.visible_digest = Some(digest);
            }
            // The newest visible catalog ends the scan.
            !reference.visible
        });
        history
    }
}

//! Steps 3 to 11 of the pre-step: the catalog of the registry snapshot
//! projected into the proposed messages.

use std::rc::Rc;

use crate::catalog::{self, Catalog};
use crate::catalog_update::Update;
use crate::config::{CatalogUpdates, Config};
use crate::types::{
    Message, Registry, RegistryError, SessionHistory, SnapshotAnswer, StepContext, StepError, ToolView,
};

use super::Entry;
use super::history::{HistoryMemory, Visible};
use super::memory::{Memory, SteadyStep};

/// What the projection saw, besides the messages it returns.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Projection {
    /// The revision of the complete snapshot of a visible tool the step
    /// used; `None` for an incomplete snapshot or a hidden or shadowed tool.
    pub revision: Option<u64>,
    /// Step 8 found the current catalog visible: unless something else is
    /// added, a later step of this session at this history version and
    /// revision with nothing proposed changes nothing (see `steady`).
    pub steady: Option<SteadyStep>,
}

/// Steps 3 to 11 of docs/spec.md §3.8 for an entering step.
pub(super) fn project_catalog(
    config: &Config,
    memory: &mut Memory,
    context: &StepContext,
    mut messages: Vec<Entry>,
    registry: &impl Registry,
    session: &impl SessionHistory,
) -> Result<(Vec<Entry>, Projection), StepError> {
    // 3. Only this plugin's own, visible tool gets a catalog; a hidden or
    //    shadowed tool gets an empty complete one, so earlier names are retired.
    // The revision is that of the registry snapshot the catalog was built from.
    let (catalog, revision) = match context.tool_view {
        ToolView::Visible => {
            // The host holds the snapshot whose catalog is remembered: no call at all.
            let held = context.registry_revision.and_then(|revision| Some((memory.catalog(revision)?, revision)));
            match held {
                Some((catalog, revision)) => (catalog, Some(revision)),
                None => match snapshot_catalog(config, memory, registry)? {
                    Some((catalog, revision)) => (catalog, Some(revision)),
                    // 4. Incomplete: keep the last good catalog and retry next step.
                    None => return Ok((messages, Projection::default())),
                },
            }
        }
        ToolView::Hidden | ToolView::Shadowed => {
            (Rc::new(Catalog::build(&[], config.catalog_description_max_length, config.catalog_form)), None)
        }
    };
    // 6. What the session already shows (reused while its history is unchanged).
    let history = memory.history.scanned(session, context.session, context.history_version);
    // 7. A catalog another listener (or an earlier attempt) already proposed.
    // (Updates only with delta updates on: by default, step 7 is the reference's.)
    let delta = config.catalog_updates == CatalogUpdates::Delta;
    let existing = messages.iter().position(|entry| {
        if delta { catalog::is_catalog_or_update(&entry.message) } else { catalog::is_catalog(&entry.message) }
    });
    let mut projection =
        Projection { revision: revision.filter(|_| context.tool_view == ToolView::Visible), steady: None };
    // 8. The visible catalog is current: nothing to add, and drop a duplicate.
    let shown = |memory: &mut HistoryMemory, visible: &Visible| visible.shown(session, context.session, memory);
    let current = match &history.visible {
        None => false,
        Some(Visible::Catalog { digest, .. }) => *digest == catalog.digest,
        Some(visible @ Visible::Updated { .. }) => {
            shown(&mut memory.history, visible).is_some_and(|(_, seen)| seen == catalog.shown().1)
        }
    };
    if current {
        // What this concluded holds for every later step of this session at
        // this history version whose host holds the revision the catalog was
        // built from: the next one with nothing proposed need not come this far.
        projection.steady = revision.map(|registry_revision| SteadyStep {
            session: context.session,
            history_version: context.history_version,
            registry_revision,
        });
        remove(&mut messages, existing);
        return Ok((messages, projection));
    }
    // 9. The proposed catalog is already the current one.
    if let Some(index) = existing
        && catalog::published_digest(&messages[index].message) == Some(catalog.digest)
    {
        return Ok((messages, projection));
    }
    // 10. Nothing was ever published and nothing is listed: no tombstone needed.
    if !history.published && catalog.total() == 0 {
        remove(&mut messages, existing);
        return Ok((messages, projection));
    }
    // 11. Publish: initial the first time, a replacement ever after; with
    //     delta updates, an update of the visible catalog when it is shorter.
    let message = if !history.published {
        catalog.initial_message(config.user_invocation)
    } else {
        let replacement = catalog.replacement_message(config.user_invocation);
        let update = match &history.visible {
            Some(visible) if delta && catalog.total() > 0 && visible.updatable() => shown(&mut memory.history, visible)
                // An update of an empty catalog would not take back its "no skills" line.
                .filter(|(seen, _)| !seen.entries.is_empty())
                .and_then(|(seen, _)| Update::between(&seen, &catalog.shown().0))
                // A skill the budget left out is still loadable: no "do not use" for it.
                .filter(|update| update.removed.iter().all(|name| catalog.left_out.binary_search(name).is_err())),
            _ => None,
        };
        match update.filter(|update| !update.is_empty()).map(|update| update.message()) {
            Some(update) if text_length(&update) < text_length(&replacement) => update,
            _ => replacement,
        }
    };
    match existing {
        // An earlier attempt's identical message stays where it is.
        Some(index) if messages[index].message == message => {}
        Some(index) => messages[index] = Entry::added(message),
        None => messages.push(Entry::added(message)),
    }
    Ok((messages, projection))
}

/// A message's text length in characters.
fn text_length(message: &Message) -> usize {
    message.single_text().map_or(0, |text| text.chars().count())
}

/// Steps 3 to 5 through the registry: the catalog of the current snapshot
/// and its revision, or `None` when the snapshot is incomplete.
fn snapshot_catalog(
    config: &Config,
    memory: &mut Memory,
    registry: &impl Registry,
) -> Result<Option<(Rc<Catalog>, u64)>, StepError> {
    let known = memory.known_revision();
    Ok(match registry.snapshot(known) {
        Err(RegistryError::Aborted) => return Err(StepError::Aborted),
        // The contract says snapshots fail only by abort; anything else is
        // treated as an incomplete observation, never as a deletion.
        Err(RegistryError::Failed(_)) => None,
        // `unchanged` for a revision never offered would be a host bug: keep the last good catalog.
        Ok(SnapshotAnswer::Unchanged) => known.and_then(|revision| Some((memory.catalog(revision)?, revision))),
        Ok(SnapshotAnswer::Changed(snapshot)) if !snapshot.complete => None,
        // 5. Entries and digest of the model-invocable skills.
        Ok(SnapshotAnswer::Changed(snapshot)) => {
            let catalog = Rc::new(Catalog::for_config(&snapshot.skills, config));
            memory.remember_catalog(snapshot.revision, Rc::clone(&catalog));
            if config.loaded_skills {
                memory
                    .loaded
                    .remember_versions(snapshot.revision, Rc::new(crate::loaded::versions_of(&snapshot.skills)));
            }
            Some((catalog, snapshot.revision))
        }
    })
}

fn remove(messages: &mut Vec<Entry>, index: Option<usize>) {
    if let Some(index) = index {
        messages.remove(index);
    }
}

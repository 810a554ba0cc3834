//! The steady-step shortcut: a step settled from memory alone, with no
//! call across the boundary.

use crate::types::{StepContext, ToolView};

use super::memory::{Memory, SteadyStep};

/// The steady step, decided from memory alone: the step is not aborted, the
/// tool is visible, and an earlier step of this session at this history
/// version and registry revision reached step 8 with the current catalog
/// already visible (it remembered so). With nothing proposed, steps 2 to 8
/// then change nothing (no duplicate to drop, no `/name` to load), so there
/// is nothing to read and nothing to decide.
#[inline]
pub(super) fn already_current(memory: &Memory, context: &StepContext) -> bool {
    !context.aborted
        && context.tool_view == ToolView::Visible
        && context.registry_revision.is_some_and(|registry_revision| {
            memory.is_steady(SteadyStep {
                session: context.session,
                history_version: context.history_version,
                registry_revision,
            })
        })
}

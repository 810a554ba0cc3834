//! `dsh:skill/step`: the proposal a pre-step reads and the decision it makes.
//! The host keeps both; what the plugin decided is checked after the call
//! (see `crate::plugin`).

use crate::bindings::step::{DecidedMessage, Host};
use crate::bindings::types as wit;

/// One pre-step's proposal and what the plugin decided.
#[derive(Clone, Default)]
pub(crate) struct StepCall {
    /// The proposed messages of an entering decision (none for a reject).
    pub proposed: Vec<wit::Message>,
    /// The messages of the plugin's first `decide`, if it made one.
    pub decided: Option<Vec<DecidedMessage>>,
    /// How many times it called `decide` (a valid pre-step: at most once).
    pub decisions: u32,
}

impl Host for super::CallContext {
    fn proposed_messages(&mut self) -> wasmtime::Result<Vec<wit::Message>> {
        match &self.step {
            Some(step) => Ok(step.proposed.clone()),
            None => Err(outside_a_pre_step("proposed-messages")),
        }
    }

    fn decide(&mut self, messages: Vec<DecidedMessage>) -> wasmtime::Result<()> {
        match &mut self.step {
            Some(step) => {
                step.decisions = step.decisions.saturating_add(1);
                step.decided.get_or_insert(messages);
                Ok(())
            }
            None => Err(outside_a_pre_step("decide")),
        }
    }
}

/// Ends a call that used the step interface when there is no step.
fn outside_a_pre_step(function: &str) -> wasmtime::Error {
    wasmtime::format_err!("the plugin called `step.{function}` outside a pre-step")
}

impl From<skill_rules::ToolView> for crate::bindings::plugin::ToolView {
    fn from(view: skill_rules::ToolView) -> Self {
        match view {
            skill_rules::ToolView::Visible => Self::Visible,
            skill_rules::ToolView::Hidden => Self::Hidden,
            skill_rules::ToolView::Shadowed => Self::Shadowed,
        }
    }
}

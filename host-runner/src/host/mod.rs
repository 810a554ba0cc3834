//! The host side of the plugin's imports, one file per WIT interface.

mod registry;
mod session;
mod step;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::registry::{CallBudget, SkillRegistry};
use crate::session::SessionLog;

pub(crate) use session::content_to_wit;
pub(crate) use step::StepCall;

/// What one plugin call may reach: the registry (for the call's working
/// directory only), the session, the step a pre-step decides, whether the
/// step was aborted, and until when providers may take to answer.
#[derive(Clone, Default)]
pub(crate) struct CallHost {
    pub registry: Option<Arc<SkillRegistry>>,
    /// The working directory the call is for: the registry answers for it
    /// alone (the plugin never names one), so the plugin cannot list or load
    /// skills of other projects on the host.
    pub cwd: Option<String>,
    pub session: Option<Arc<Mutex<SessionLog>>>,
    /// The proposal and the decision of a pre-step; `None` in other calls.
    pub step: Option<StepCall>,
    pub abort: Option<Arc<AtomicBool>>,
    /// When the registry's providers must have answered; set by the runtime
    /// for every call from the call's own deadline (`None`: no limit).
    pub provider_deadline: Option<Instant>,
}

impl CallHost {
    /// Reaches nothing: for calls that need no import (configuration).
    pub fn detached() -> Self {
        Self::default()
    }

    fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref().map(Path::new)
    }

    fn aborted(&self) -> bool {
        self.abort.as_ref().is_some_and(|flag| flag.load(Ordering::Relaxed))
    }

    /// The budget registry calls run under: epoch interruption cannot stop a
    /// provider (host code), so the registry itself gives up at the deadline
    /// or on the step's abort.
    fn budget(&self) -> CallBudget {
        let budget = self.provider_deadline.map_or_else(CallBudget::unbounded, CallBudget::until);
        budget.with_abort(self.abort.clone())
    }
}

impl crate::bindings::types::Host for crate::runtime::CallState {}

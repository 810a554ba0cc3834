//! The host side of the plugin's imports, one file per WIT interface.

mod registry;
mod session;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::registry::{CallBudget, SkillRegistry};
use crate::session::SessionLog;

pub(crate) use session::content_to_wit;

/// What one plugin call may reach: the registry (for the call's working
/// directory only), the session, whether the step was aborted, and until
/// when providers may take to answer.
#[derive(Clone, Default)]
pub(crate) struct CallHost {
    pub registry: Option<Arc<SkillRegistry>>,
    /// The working directory the call is for: the only one the plugin may
    /// ask the registry about, so it cannot list or load skills of other
    /// projects on the host.
    pub cwd: Option<String>,
    pub session: Option<Arc<Mutex<SessionLog>>>,
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

    /// Refuses a registry request for another working directory than the
    /// call's: the call ends with a trap that says so.
    fn check_cwd(&self, requested: Option<&str>) -> wasmtime::Result<()> {
        if requested == self.cwd.as_deref() {
            return Ok(());
        }
        Err(wasmtime::format_err!(
            "the plugin asked the registry about working directory {requested:?} in a call for {:?}",
            self.cwd
        ))
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

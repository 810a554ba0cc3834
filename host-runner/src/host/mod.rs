//! The host side of the plugin's imports, one file per WIT interface.

mod registry;
mod session;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::registry::SkillRegistry;
use crate::session::SessionLog;

pub(crate) use session::content_to_wit;

/// What one plugin call may reach: the registry, the session, and whether
/// the step was aborted.
#[derive(Clone, Default)]
pub(crate) struct CallHost {
    pub registry: Option<Arc<SkillRegistry>>,
    pub session: Option<Arc<Mutex<SessionLog>>>,
    pub abort: Option<Arc<AtomicBool>>,
}

impl CallHost {
    /// Reaches nothing: for calls that need no import (configuration).
    pub fn detached() -> Self {
        Self::default()
    }

    fn aborted(&self) -> bool {
        self.abort.as_ref().is_some_and(|flag| flag.load(Ordering::Relaxed))
    }
}

impl crate::bindings::types::Host for crate::runtime::CallState {}

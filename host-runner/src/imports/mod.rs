//! The host side of the plugin's imports, one file per WIT interface.

mod registry;
mod session;
mod step;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
    pub cwd: Option<Arc<str>>,
    pub session: Option<Arc<Mutex<SessionLog>>>,
    /// The proposal and the decision of a pre-step; `None` in other calls.
    pub step: Option<StepCall>,
    pub abort: Option<Arc<AtomicBool>>,
    /// When the registry's providers must have answered; set by the runtime
    /// for every call from the call's own deadline.
    pub provider_deadline: ProviderDeadline,
}

/// When a call's providers must have answered.
#[derive(Clone, Copy, Default)]
pub(crate) enum ProviderDeadline {
    /// No limit.
    #[default]
    Unbounded,
    /// At this instant (`None`: too far to represent).
    At(Option<Instant>),
    /// `window` after the ticker's `tick` (counted from `origin`), when the
    /// call started: worked out only if a provider is asked, so a call that
    /// asks none reads no clock.
    AfterTick { origin: Instant, tick: u64, window: Duration },
}

impl ProviderDeadline {
    fn instant(self) -> Option<Instant> {
        match self {
            Self::Unbounded => None,
            Self::At(deadline) => deadline,
            Self::AfterTick { origin, tick, window } => {
                let tick_micros = crate::runtime::EPOCH_TICK.as_micros() as u64;
                let started = Duration::from_micros(tick.saturating_mul(tick_micros));
                origin.checked_add(started)?.checked_add(window)
            }
        }
    }
}

impl CallHost {
    /// Reaches nothing: for calls that need no import (configuration).
    pub fn detached() -> Self {
        Self::default()
    }

    /// Reaches the registry for `cwd`, nothing else: for the calls that are
    /// not a step (the tool, Pi's system prompt and expansion).
    pub fn registry_for(registry: &Arc<SkillRegistry>, cwd: Option<&str>) -> Self {
        Self { registry: Some(Arc::clone(registry)), cwd: cwd.map(Arc::from), ..Self::default() }
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
        let budget = self.provider_deadline.instant().map_or_else(CallBudget::unbounded, CallBudget::until);
        budget.with_abort(self.abort.clone())
    }
}

impl crate::bindings::types::Host for crate::runtime::CallState {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_after_a_tick_is_counted_from_the_ticker_origin() {
        let origin = Instant::now();
        let window = Duration::from_millis(900);
        let deadline = ProviderDeadline::AfterTick { origin, tick: 500, window };
        // 500 ticks of 2 ms: the call started 1 s after the origin.
        assert_eq!(deadline.instant(), Some(origin + Duration::from_secs(1) + window));
        // Even after years of ticks, a deadline, never "no limit".
        let late = ProviderDeadline::AfterTick { origin, tick: 1 << 40, window };
        assert!(late.instant().is_some_and(|instant| instant > origin));
        assert_eq!(ProviderDeadline::Unbounded.instant(), None);
    }
}

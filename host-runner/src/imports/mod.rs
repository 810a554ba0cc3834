//! The host side of the plugin's imports, one file per WIT interface, each
//! implemented on [`CallContext`]: what one plugin call may reach. The
//! sandbox owns the store and links these implementations to a borrow of the
//! context it holds (as wasmtime-wasi implements each interface on a view of
//! its own), so nothing here knows about stores, engines or instances.

mod registry;
mod session;
mod step;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::registry::{ProviderDeadline, RegistrySnapshot, SkillRegistry};
use crate::session::SharedSession;

pub(crate) use session::content_to_wit;
#[cfg(test)]
pub(crate) use step::written;
pub(crate) use step::{Addition, Decided, StepCall, record};

/// What one plugin call may reach: the registry (for the call's working
/// directory only), the session, the step a pre-step decides, whether the
/// step was aborted, and until when providers may take to answer.
#[derive(Clone, Default)]
pub(crate) struct CallContext {
    pub registry: Option<Arc<SkillRegistry>>,
    /// The working directory the call is for: the registry answers for it
    /// alone (the plugin never names one), so the plugin cannot list or load
    /// skills of other projects on the host.
    pub cwd: Option<Arc<str>>,
    pub session: Option<SharedSession>,
    /// The proposal and the decision of a pre-step; `None` in other calls.
    pub step: Option<StepCall>,
    pub abort: Option<Arc<AtomicBool>>,
    /// When the registry's providers must have answered; set by the sandbox
    /// for every call from the call's own deadline.
    pub deadline: CallDeadline,
    /// The registry's listing this call saw first: every later question of
    /// the call is answered from it, so one call sees one list, and a
    /// provider that did not answer it is not waited for again.
    pub listed: Option<Arc<RegistrySnapshot>>,
    /// What the call records of itself, when its plugin is traced
    /// (docs/spec.md §7.2).
    pub trace: Option<crate::trace::CallTrace>,
    /// The files the registry read as text in this call, as (skill, path):
    /// a tool result may name only these (docs/spec.md §8.5).
    pub files_read: Vec<(String, String)>,
}

/// The part of a call's provider window that a listing for the tool's
/// lookup may take: the rest is left for loading the skill listed, so a
/// provider that never answers the listing cannot leave the one that did
/// answer no time to load. A pre-step's snapshot, which loads nothing by
/// default, keeps the whole window.
const LISTING_SHARE: (u32, u32) = (3, 4);

/// When a call's providers must have answered.
#[derive(Clone, Copy, Default)]
pub(crate) enum CallDeadline {
    /// No limit.
    #[default]
    Unbounded,
    /// At this instant (`None`: too far to represent).
    At(Option<Instant>),
    /// `window` after `ticks` ticks of `tick` counted from `origin`, when the
    /// call started: worked out only if a provider is asked, so a call that
    /// asks none reads no clock.
    AfterTicks { origin: Instant, ticks: u64, tick: Duration, window: Duration },
}

impl CallDeadline {
    fn instant(self) -> Option<Instant> {
        match self {
            Self::Unbounded => None,
            Self::At(deadline) => deadline,
            Self::AfterTicks { origin, ticks, tick, window } => {
                let tick_nanos = u64::try_from(tick.as_nanos()).unwrap_or(u64::MAX);
                let started = Duration::from_nanos(ticks.saturating_mul(tick_nanos));
                origin.checked_add(started)?.checked_add(window)
            }
        }
    }
}

impl CallContext {
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

    /// The deadline registry calls run under: epoch interruption cannot stop
    /// a provider (host code), so the registry itself gives up at the
    /// deadline or on the step's abort.
    fn provider_deadline(&self) -> ProviderDeadline {
        let deadline = self.deadline.instant().map_or_else(ProviderDeadline::unbounded, ProviderDeadline::until);
        deadline.with_abort(self.abort.clone())
    }

    /// The registry's listing for this call (see [`CallContext::listed`]),
    /// taken under the whole provider window, or with `for_a_load` under
    /// [`LISTING_SHARE`] of what is left of it.
    fn listing(&mut self, registry: &SkillRegistry, for_a_load: bool) -> Arc<RegistrySnapshot> {
        if let Some(listed) = &self.listed {
            return Arc::clone(listed);
        }
        let limit = match self.deadline.instant() {
            None => ProviderDeadline::unbounded(),
            Some(deadline) if !for_a_load => ProviderDeadline::until(deadline),
            Some(deadline) => {
                let now = Instant::now();
                let left = deadline.saturating_duration_since(now);
                let (part, whole) = LISTING_SHARE;
                ProviderDeadline::until(now + left * part / whole)
            }
        };
        let listed = registry.snapshot_within(self.cwd(), &limit.with_abort(self.abort.clone()));
        self.listed = Some(Arc::clone(&listed));
        listed
    }
}

impl crate::bindings::types::Host for CallContext {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deadline_after_ticks_is_counted_from_the_ticker_origin() {
        let origin = Instant::now();
        let window = Duration::from_millis(900);
        let tick = Duration::from_millis(2);
        let deadline = CallDeadline::AfterTicks { origin, ticks: 500, tick, window };
        // 500 ticks of 2 ms: the call started 1 s after the origin.
        assert_eq!(deadline.instant(), Some(origin + Duration::from_secs(1) + window));
        // Even after years of ticks, a deadline, never "no limit".
        let late = CallDeadline::AfterTicks { origin, ticks: 1 << 40, tick, window };
        assert!(late.instant().is_some_and(|instant| instant > origin));
        assert_eq!(CallDeadline::Unbounded.instant(), None);
    }
}

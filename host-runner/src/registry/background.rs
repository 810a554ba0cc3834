//! A provider listed in the background, for a long-running host
//! (docs/spec.md §6.9).
//!
//! A one-shot command lists each provider when it needs a listing and waits
//! for it. A server that answers many calls cannot: a provider that hangs
//! would make every call wait for it, and one that is down would be asked
//! again on every call. [`BackgroundListing`] wraps such a provider for one
//! working directory: a thread of its own lists it, keeps the latest answer,
//! and lists again on an interval (the provider's hint, such as an index's
//! `Cache-Control: max-age`, clamped to [`RefreshPolicy`]'s bounds) or,
//! after a failure, on a doubling backoff. A listing is answered at once
//! with the latest answer; only the first one waits, and at most
//! [`RefreshPolicy::first_wait`] from the start.
//!
//! Each answer that differs from the one before is reported to the
//! listener (which invalidates the registry and tells clients), and each
//! new failure once, with the warning `skill-host step` prints for it.

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use super::types::{FileListing, FileRead, Listing, ProviderError, SkillCandidate, SkillDefinition, SkillProvider};
use super::{incomplete_warning, skipped_warning};

/// The listing's error while the first listing has not answered yet.
pub const FIRST_LISTING_PENDING: &str = "its first listing has not answered yet";

/// When a background listing lists again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefreshPolicy {
    /// After a complete listing, when the provider gives no hint.
    pub interval: Duration,
    /// The shortest interval a hint may ask for (`max-age=0` means this).
    pub min_interval: Duration,
    /// The longest interval a hint may ask for.
    pub max_interval: Duration,
    /// After a failed or incomplete listing; doubled after each further
    /// one, up to `max_backoff`.
    pub first_backoff: Duration,
    /// The longest wait after failures.
    pub max_backoff: Duration,
    /// How long the first listing is waited for, counted from its start.
    pub first_wait: Duration,
}

impl Default for RefreshPolicy {
    /// Every minute; a hint between 5 s and an hour; after a failure 1 s,
    /// doubling up to a minute; the first listing waited for 500 ms.
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(60),
            min_interval: Duration::from_secs(5),
            max_interval: Duration::from_secs(3600),
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
            first_wait: Duration::from_millis(500),
        }
    }
}

impl RefreshPolicy {
    /// How long to wait before listing again after an answer: `failures`
    /// failed or incomplete answers in a row, or none and the provider's hint.
    pub fn next_wait(&self, failures: u32, hint: Option<Duration>) -> Duration {
        if failures == 0 {
            return hint.map_or(self.interval, |hint| hint.clamp(self.min_interval, self.max_interval));
        }
        let doubled = self.first_backoff.saturating_mul(1u32 << (failures - 1).min(20));
        doubled.min(self.max_backoff)
    }
}

/// What one background listing brought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListingReport {
    /// The answer differs from the one before (or is the first): views
    /// made from the earlier one are stale.
    pub changed: bool,
    /// A failure or incomplete listing not reported before (the text
    /// `skill-host step` prints after `warning: `); `None` when the listing
    /// was complete or the same failure was already reported.
    pub warning: Option<String>,
}

type Listener = Box<dyn Fn(&ListingReport) + Send + Sync>;
type Hint = Box<dyn Fn() -> Option<Duration> + Send + Sync>;

/// A provider whose listings for one working directory come from a
/// background thread (see the module's documentation). Listings for any
/// other working directory, and every load, go to the provider directly.
pub struct BackgroundListing {
    shared: Arc<Shared>,
}

struct Shared {
    inner: Arc<dyn SkillProvider>,
    cwd: Option<PathBuf>,
    policy: RefreshPolicy,
    hint: Hint,
    listener: OnceLock<Listener>,
    state: Mutex<State>,
    /// Signalled when an answer arrives, and when the listing is dropped.
    wake: Condvar,
}

#[derive(Default)]
struct State {
    latest: Option<Result<Listing, ProviderError>>,
    started: Option<Instant>,
    /// The warning of the latest answer, if it had one.
    warned: Option<String>,
    failures: u32,
    stopped: bool,
}

impl BackgroundListing {
    /// Wraps `inner` for `cwd`. `hint` says how long the latest listing may
    /// be used (for the remote provider, its indexes' max-age). Nothing is
    /// listed until [`start`](Self::start) or the first listing.
    pub fn new(
        inner: Arc<dyn SkillProvider>,
        cwd: Option<PathBuf>,
        policy: RefreshPolicy,
        hint: impl Fn() -> Option<Duration> + Send + Sync + 'static,
    ) -> Self {
        let shared = Shared {
            inner,
            cwd,
            policy,
            hint: Box::new(hint),
            listener: OnceLock::new(),
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        };
        Self { shared: Arc::new(shared) }
    }

    /// Calls `listener` after each listing that changed something or
    /// brought a new warning. Only the first listener set is kept.
    pub fn listen(&self, listener: impl Fn(&ListingReport) + Send + Sync + 'static) {
        let _ = self.shared.listener.set(Box::new(listener));
    }

    /// Starts the background thread (once), so that the first listing is
    /// under way before anyone asks.
    pub fn start(&self) {
        let mut state = lock(&self.shared.state);
        if state.started.is_some() {
            return;
        }
        state.started = Some(Instant::now());
        drop(state);
        let shared = Arc::clone(&self.shared);
        let name = format!("skill-listing-{}", self.shared.inner.name());
        if let Err(error) = thread::Builder::new().name(name).spawn(move || poll(&shared)) {
            let failed = Err(ProviderError(format!("cannot start a thread to list it: {error}")));
            self.shared.record(failed);
        }
    }
}

impl Drop for BackgroundListing {
    fn drop(&mut self) {
        lock(&self.shared.state).stopped = true;
        self.shared.wake.notify_all();
    }
}

impl Shared {
    /// Keeps `answer` as the latest, tells the listener, and returns how
    /// long to wait before listing again.
    fn record(&self, answer: Result<Listing, ProviderError>) -> Duration {
        let warning = match &answer {
            Err(error) => Some(skipped_warning(self.inner.name(), error)),
            Ok(listing) if !listing.complete => Some(incomplete_warning(self.inner.name(), &listing.problems)),
            Ok(_) => None,
        };
        let mut state = lock(&self.state);
        let report = ListingReport {
            changed: state.latest.as_ref() != Some(&answer),
            warning: warning.clone().filter(|warning| state.warned.as_ref() != Some(warning)),
        };
        state.failures = if warning.is_some() { state.failures.saturating_add(1) } else { 0 };
        state.warned = warning;
        state.latest = Some(answer);
        let failures = state.failures;
        drop(state);
        self.wake.notify_all();
        if (report.changed || report.warning.is_some())
            && let Some(listener) = self.listener.get()
        {
            listener(&report);
        }
        self.policy.next_wait(failures, if failures == 0 { (self.hint)() } else { None })
    }
}

/// The background thread: lists, records, waits, until the listing is dropped.
fn poll(shared: &Shared) {
    loop {
        let answer = panic::catch_unwind(AssertUnwindSafe(|| shared.inner.list(shared.cwd.as_deref())))
            .unwrap_or_else(|_| Err(ProviderError("panicked while listing".to_owned())));
        let wait = shared.record(answer);
        let until = Instant::now() + wait;
        let mut state = lock(&shared.state);
        loop {
            if state.stopped {
                return;
            }
            let now = Instant::now();
            if now >= until {
                break;
            }
            state = shared.wake.wait_timeout(state, until - now).unwrap_or_else(|poisoned| poisoned.into_inner()).0;
        }
    }
}

impl SkillProvider for BackgroundListing {
    fn name(&self) -> &str {
        self.shared.inner.name()
    }

    fn list(&self, cwd: Option<&Path>) -> Result<Listing, ProviderError> {
        if cwd != self.shared.cwd.as_deref() {
            return self.shared.inner.list(cwd);
        }
        self.start();
        let mut state = lock(&self.shared.state);
        let until = state.started.unwrap_or_else(Instant::now) + self.shared.policy.first_wait;
        while state.latest.is_none() {
            let now = Instant::now();
            if now >= until {
                return Err(ProviderError(FIRST_LISTING_PENDING.to_owned()));
            }
            state =
                self.shared.wake.wait_timeout(state, until - now).unwrap_or_else(|poisoned| poisoned.into_inner()).0;
        }
        state.latest.clone().expect("checked just above")
    }

    fn load(&self, cwd: Option<&Path>, candidate: &SkillCandidate) -> Result<Option<SkillDefinition>, ProviderError> {
        self.shared.inner.load(cwd, candidate)
    }

    fn list_files(
        &self,
        cwd: Option<&Path>,
        candidate: &SkillCandidate,
        limit: usize,
    ) -> Result<Option<FileListing>, ProviderError> {
        self.shared.inner.list_files(cwd, candidate, limit)
    }

    fn read_file(&self, cwd: Option<&Path>, candidate: &SkillCandidate, path: &str) -> Result<FileRead, ProviderError> {
        self.shared.inner.read_file(cwd, candidate, path)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests;

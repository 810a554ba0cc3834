//! Calling providers under a plugin call's deadline and a step's abort flag.
//!
//! A provider is host code, so the sandbox's epoch deadline cannot interrupt
//! it: a provider that hangs would hang the plugin call that asked for the
//! registry, and with it the step. Under a bounded [`ProviderDeadline`], each
//! provider call therefore runs on a thread of its own while the caller waits
//! for the answer until the deadline passes or the abort flag rises.
//!
//! A call that does not answer in time is abandoned. Its thread cannot be
//! killed, so it is left running, detached; it holds only the provider and
//! its own arguments, never the registry's state, and whatever it returns
//! later is dropped. A provider with [`MAX_OVERDUE`] abandoned calls still
//! running is not called again until one of them returns, so a provider that
//! hangs for good costs a bounded number of threads and no further waiting.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use super::types::SkillProvider;

/// How many abandoned calls of one provider may still be running before the
/// registry stops calling it (each holds a thread).
pub const MAX_OVERDUE: usize = 2;

/// How often a wait without a nearer deadline looks at the abort flag (a
/// plain `AtomicBool` cannot wake a waiter).
const ABORT_POLL: Duration = Duration::from_millis(5);

/// How long registry calls may wait for providers, and the flag that
/// abandons them: a plugin call passes its own deadline and its step's abort
/// flag, so a provider that hangs cannot hang the step.
#[derive(Debug, Clone, Default)]
pub struct ProviderDeadline {
    deadline: Option<Instant>,
    abort: Option<Arc<AtomicBool>>,
}

impl ProviderDeadline {
    /// No deadline and no abort flag: providers are called on the caller's
    /// thread and waited for as long as they take (the command line's
    /// diagnostics, tests).
    pub fn unbounded() -> Self {
        Self::default()
    }

    /// Providers must answer before `deadline`.
    pub fn until(deadline: Instant) -> Self {
        Self { deadline: Some(deadline), abort: None }
    }

    /// The same deadline, also abandoned as soon as `abort` is raised.
    pub fn with_abort(self, abort: Option<Arc<AtomicBool>>) -> Self {
        Self { abort, ..self }
    }

    /// When providers must have answered, if ever.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Whether the abort flag has been raised.
    pub fn is_aborted(&self) -> bool {
        self.abort.as_ref().is_some_and(|flag| flag.load(Ordering::Relaxed))
    }

    fn is_unbounded(&self) -> bool {
        self.deadline.is_none() && self.abort.is_none()
    }
}

/// Why a provider call under a deadline has no answer. Displayed after the
/// provider's name: `skill provider "x" did not answer before the call's deadline`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unanswered {
    /// The deadline passed first.
    #[error("did not answer before the call's deadline")]
    Overdue,
    /// The abort flag rose first.
    #[error("was abandoned because the step was aborted")]
    Aborted,
    /// Earlier abandoned calls are still running; it was not called.
    #[error("still has {0} earlier calls running that did not answer in time")]
    Busy(usize),
    /// The provider panicked.
    #[error("panicked")]
    Panicked,
    /// No thread could be started for the call.
    #[error("could not be called: cannot start a thread: {0}")]
    Thread(String),
}

/// A registered provider with the count of its abandoned calls still running.
#[derive(Clone)]
pub(super) struct Registered {
    pub provider: Arc<dyn SkillProvider>,
    overdue: Arc<AtomicUsize>,
}

impl Registered {
    pub fn new(provider: Arc<dyn SkillProvider>) -> Self {
        Self { provider, overdue: Arc::new(AtomicUsize::new(0)) }
    }

    /// Abandoned calls of this provider that are still running.
    #[cfg(test)]
    pub fn overdue(&self) -> usize {
        self.overdue.load(Ordering::SeqCst)
    }

    /// Starts `work` against the provider: inline under an unbounded deadline,
    /// otherwise on a thread of its own. [`PendingCall::wait`] collects the
    /// answer, so several providers can be started before waiting on any.
    pub fn start<T: Send + 'static>(
        &self,
        limit: &ProviderDeadline,
        work: impl FnOnce(&dyn SkillProvider) -> T + Send + 'static,
    ) -> PendingCall<T> {
        if limit.is_unbounded() {
            // Today's behaviour, at no cost: a panic propagates to the caller.
            return PendingCall::Done(Ok(work(&*self.provider)));
        }
        let overdue = self.overdue.load(Ordering::SeqCst);
        if overdue >= MAX_OVERDUE {
            return PendingCall::Done(Err(Unanswered::Busy(overdue)));
        }
        let slot = Arc::new(Slot { state: Mutex::new(State::Running), answered: Condvar::new() });
        let (provider, worker_slot, counter) =
            (Arc::clone(&self.provider), Arc::clone(&slot), Arc::clone(&self.overdue));
        let spawned =
            thread::Builder::new().name(format!("skill-provider-{}", self.provider.name())).spawn(move || {
                let answer =
                    panic::catch_unwind(AssertUnwindSafe(|| work(&*provider))).map_err(|_| Unanswered::Panicked);
                let mut state = lock(&worker_slot.state);
                if matches!(*state, State::Abandoned) {
                    // Nobody waits any more: the late answer is dropped here.
                    counter.fetch_sub(1, Ordering::SeqCst);
                } else {
                    *state = State::Answered(answer);
                    worker_slot.answered.notify_all();
                }
            });
        match spawned {
            Ok(_detached) => PendingCall::Running { slot, overdue: Arc::clone(&self.overdue) },
            Err(error) => PendingCall::Done(Err(Unanswered::Thread(error.to_string()))),
        }
    }
}

/// A provider call that was started and has not been collected yet.
pub(super) enum PendingCall<T> {
    /// Answered (or refused) when it was started.
    Done(Result<T, Unanswered>),
    /// Running on its own thread.
    Running { slot: Arc<Slot<T>>, overdue: Arc<AtomicUsize> },
}

impl<T> PendingCall<T> {
    /// The call's answer, or why there is none once the deadline passed or the step was aborted.
    pub fn wait(self, limit: &ProviderDeadline) -> Result<T, Unanswered> {
        let (slot, overdue) = match self {
            Self::Done(answer) => return answer,
            Self::Running { slot, overdue } => (slot, overdue),
        };
        let mut state = lock(&slot.state);
        loop {
            // An answer that is there is used, even past the deadline.
            if matches!(*state, State::Answered(_)) {
                let State::Answered(answer) = std::mem::replace(&mut *state, State::Collected) else {
                    unreachable!("matched just above")
                };
                return answer;
            }
            let now = Instant::now();
            let give_up = if limit.is_aborted() {
                Some(Unanswered::Aborted)
            } else if limit.deadline.is_some_and(|deadline| deadline <= now) {
                Some(Unanswered::Overdue)
            } else {
                None
            };
            if let Some(reason) = give_up {
                // Counted under the slot's lock, so the worker's decrement
                // (also under it) always follows this increment.
                *state = State::Abandoned;
                overdue.fetch_add(1, Ordering::SeqCst);
                return Err(reason);
            }
            let mut wait = limit.deadline.map_or(ABORT_POLL, |deadline| deadline - now);
            if limit.abort.is_some() {
                wait = wait.min(ABORT_POLL);
            }
            state = slot.answered.wait_timeout(state, wait).unwrap_or_else(|poisoned| poisoned.into_inner()).0;
        }
    }
}

/// Where a provider's thread leaves its answer.
pub(super) struct Slot<T> {
    state: Mutex<State<T>>,
    answered: Condvar,
}

enum State<T> {
    Running,
    Answered(Result<T, Unanswered>),
    /// The waiter gave up; the worker drops its answer.
    Abandoned,
    /// The waiter took the answer.
    Collected,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests;

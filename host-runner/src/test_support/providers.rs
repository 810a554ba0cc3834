//! Skill providers scripted for tests, and the candidates they list:
//! [`Fake`] answers at once from a listing the test controls, [`Gated`] can
//! hold its calls at a gate (a provider that hangs) and reports each call
//! entering.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::{self, ThreadId};

use crate::{InvocationPolicy, Listing, ProviderError, SkillCandidate, SkillDefinition, SkillProvider, SkillRegistry};

/// The rank [`candidate`] gives.
pub const CANDIDATE_RANK: i64 = 100;

/// Skill `name` as provider `provider` lists it with `rank`: described as
/// "`name` from `provider`", its source the provider's name, the default
/// invocation policy, and no path, resource base, hint or metadata. Change a
/// field with struct update syntax: `SkillCandidate { description, ..ranked(…) }`.
pub fn ranked(provider: &str, name: &str, rank: i64) -> SkillCandidate {
    SkillCandidate {
        listed: None,
        name: name.to_owned(),
        description: format!("{name} from {provider}"),
        when_to_use: None,
        invocation: InvocationPolicy::default(),
        source: provider.to_owned(),
        provider: provider.to_owned(),
        resource_base: None,
        rank,
        path: None,
        metadata: None,
        body_digest: None,
    }
}

/// [`ranked`] with [`CANDIDATE_RANK`].
pub fn candidate(provider: &str, name: &str) -> SkillCandidate {
    ranked(provider, name, CANDIDATE_RANK)
}

/// What a scripted provider loads for `candidate`: the candidate itself, and
/// the body "`name` body".
fn definition(candidate: &SkillCandidate) -> SkillDefinition {
    SkillDefinition { summary: candidate.clone(), content: format!("{} body", candidate.name) }
}

/// A provider whose listing and loads are scripted, counting calls. A load
/// returns the candidate asked for with the body "`name` body", unless told
/// to rename it or to fail.
pub struct Fake {
    name: String,
    /// What every listing returns; a test may change it at any time.
    pub listing: Mutex<Result<Listing, ProviderError>>,
    /// Replaces a loaded definition's name (a file renamed on disk).
    rename_to: Option<String>,
    load_error: Option<String>,
    /// How many listings were asked for.
    pub lists: AtomicUsize,
    /// How many loads were asked for.
    pub loads: AtomicUsize,
    /// Invalidate this registry during the next N listings.
    invalidate: Mutex<(Weak<SkillRegistry>, usize)>,
}

impl Fake {
    /// Provider `name` listing, completely, each `(skill, rank)` as a
    /// [`ranked`] candidate, in that order.
    pub fn new(name: &str, skills: &[(&str, i64)]) -> Self {
        Self::with_candidates(name, skills.iter().map(|(skill, rank)| ranked(name, skill, *rank)).collect())
    }

    /// Provider `name` listing, completely, these candidates.
    pub fn with_candidates(name: &str, candidates: Vec<SkillCandidate>) -> Self {
        Self {
            name: name.to_owned(),
            listing: Mutex::new(Ok(Listing { candidates, complete: true, ..Listing::default() })),
            rename_to: None,
            load_error: None,
            lists: AtomicUsize::new(0),
            loads: AtomicUsize::new(0),
            invalidate: Mutex::new((Weak::new(), 0)),
        }
    }

    /// Provider `name` whose every listing fails with `message`.
    pub fn failing(name: &str, message: &str) -> Self {
        let fake = Self::new(name, &[]);
        *fake.listing.lock().unwrap() = Err(ProviderError(message.to_owned()));
        fake
    }

    /// The same provider, whose loads return the definition renamed to
    /// `name` (as when a skill's file now names another skill).
    #[must_use]
    pub fn renaming_to(self, name: &str) -> Self {
        Self { rename_to: Some(name.to_owned()), ..self }
    }

    /// The same provider, whose loads fail with `message`.
    #[must_use]
    pub fn failing_loads(self, message: &str) -> Self {
        Self { load_error: Some(message.to_owned()), ..self }
    }

    /// Invalidates `registry` during each of the next `listings` listings
    /// (`usize::MAX`: every one), as a provider whose source keeps changing
    /// would; `0` stops it. Holds the registry weakly, so a registry that
    /// holds this provider is still dropped.
    pub fn invalidate_during(&self, registry: &Arc<SkillRegistry>, listings: usize) {
        *self.invalidate.lock().unwrap() = (Arc::downgrade(registry), listings);
    }
}

impl SkillProvider for Fake {
    fn name(&self) -> &str {
        &self.name
    }

    fn list(&self, _cwd: Option<&Path>) -> Result<Listing, ProviderError> {
        self.lists.fetch_add(1, Ordering::SeqCst);
        let mut invalidate = self.invalidate.lock().unwrap();
        if invalidate.1 > 0 {
            invalidate.1 -= 1;
            if let Some(registry) = invalidate.0.upgrade() {
                registry.invalidate();
            }
        }
        drop(invalidate);
        self.listing.lock().unwrap().clone()
    }

    fn load(&self, _cwd: Option<&Path>, candidate: &SkillCandidate) -> Result<Option<SkillDefinition>, ProviderError> {
        self.loads.fetch_add(1, Ordering::SeqCst);
        if let Some(message) = &self.load_error {
            return Err(ProviderError(message.clone()));
        }
        let mut definition = definition(candidate);
        if let Some(name) = &self.rename_to {
            definition.summary.name = name.clone();
        }
        Ok(Some(definition))
    }
}

/// A provider whose calls can be held at a gate until the test opens it. It
/// reports every call entering (`"list"` or `"load"`, on the receiver its
/// constructor returns), so a test never guesses when one is blocked. It
/// lists its candidates completely, and loads the candidate asked for with
/// the body "`name` body".
pub struct Gated {
    name: String,
    candidates: Vec<SkillCandidate>,
    /// While set, every listing waits at the gate until it opens.
    pub hold_lists: AtomicBool,
    /// While set, every load waits at the gate until it opens.
    pub hold_loads: AtomicBool,
    /// When set, every listing panics (once it has entered).
    pub panics: AtomicBool,
    /// How many calls (listings and loads) entered.
    pub calls: AtomicUsize,
    /// The thread of the last call.
    pub thread: Mutex<Option<ThreadId>>,
    open: Mutex<bool>,
    opened: Condvar,
    entered: Mutex<Sender<&'static str>>,
}

impl Gated {
    /// Provider `slow` listing one skill, `triage-bug` ("Triage a bug
    /// report."), its gate closed but nothing held yet.
    pub fn new() -> (Arc<Self>, Receiver<&'static str>) {
        let triage =
            SkillCandidate { description: "Triage a bug report.".to_owned(), ..candidate("slow", "triage-bug") };
        Self::with_candidates("slow", vec![triage])
    }

    /// Provider `name` listing each of `skills` as a [`candidate`], in that
    /// order.
    pub fn named(name: &str, skills: &[&str]) -> (Arc<Self>, Receiver<&'static str>) {
        Self::with_candidates(name, skills.iter().map(|skill| candidate(name, skill)).collect())
    }

    /// Provider `name` listing these candidates.
    pub fn with_candidates(name: &str, candidates: Vec<SkillCandidate>) -> (Arc<Self>, Receiver<&'static str>) {
        let (entered, calls) = mpsc::channel();
        let gated = Self {
            name: name.to_owned(),
            candidates,
            hold_lists: AtomicBool::new(false),
            hold_loads: AtomicBool::new(false),
            panics: AtomicBool::new(false),
            calls: AtomicUsize::new(0),
            thread: Mutex::new(None),
            open: Mutex::new(false),
            opened: Condvar::new(),
            entered: Mutex::new(entered),
        };
        (Arc::new(gated), calls)
    }

    fn enter(&self, call: &'static str, hold: &AtomicBool) {
        self.calls.fetch_add(1, Ordering::SeqCst);
        *self.thread.lock().unwrap() = Some(thread::current().id());
        let _ = self.entered.lock().unwrap().send(call);
        if hold.load(Ordering::SeqCst) {
            let open = self.open.lock().unwrap();
            drop(self.opened.wait_while(open, |open| !*open).unwrap());
        }
    }

    /// Releases every held call and holds none from now on, so no thread
    /// outlives the test's work.
    pub fn open_gate(&self) {
        self.hold_lists.store(false, Ordering::SeqCst);
        self.hold_loads.store(false, Ordering::SeqCst);
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

impl SkillProvider for Gated {
    fn name(&self) -> &str {
        &self.name
    }

    fn list(&self, _cwd: Option<&Path>) -> Result<Listing, ProviderError> {
        self.enter("list", &self.hold_lists);
        assert!(!self.panics.load(Ordering::SeqCst), "provider {} blew up", self.name);
        Ok(Listing { candidates: self.candidates.clone(), complete: true, ..Listing::default() })
    }

    fn load(&self, _cwd: Option<&Path>, candidate: &SkillCandidate) -> Result<Option<SkillDefinition>, ProviderError> {
        self.enter("load", &self.hold_loads);
        Ok(Some(definition(candidate)))
    }
}

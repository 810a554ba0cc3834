//! The skill registry (docs/spec.md §4.1): merges providers and runtime skills into
//! one winning skill per name, caches complete snapshots per cwd, and loads
//! bodies from the winning provider on demand.

mod background;
mod files;
mod provider_deadline;
mod runtime_skills;
mod types;

use std::collections::{HashMap, VecDeque};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

pub use background::{BackgroundListing, FIRST_LISTING_PENDING, ListingReport, RefreshPolicy};
use provider_deadline::Registered;
pub use provider_deadline::{MAX_OVERDUE, ProviderDeadline};
pub use runtime_skills::{RUNTIME_PROVIDER, RUNTIME_RANK, RuntimeSkill};
pub use types::*;

/// How many complete snapshots are cached (one per cwd) by default.
pub const DEFAULT_CACHE_CAPACITY: usize = 128;

/// One winning skill and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Winner {
    /// The candidate as listed.
    pub candidate: SkillCandidate,
    /// The index of its provider in registration order; `None` for runtime skills.
    provider: Option<usize>,
}

/// A candidate that lost to another of the same name.
#[derive(Debug, Clone, PartialEq)]
pub struct Shadowed {
    /// The losing candidate.
    pub candidate: SkillCandidate,
    /// The winner's source and path.
    pub by_source: String,
    /// The winner's path, if any.
    pub by_path: Option<PathBuf>,
}

/// The registry's view for one cwd at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct RegistrySnapshot {
    /// False when a provider failed or listed incompletely.
    pub complete: bool,
    /// Identifies this exact list: equal revisions mean equal skills.
    pub revision: u64,
    /// Winners sorted by name.
    pub skills: Vec<Winner>,
    /// Duplicates that lost, for diagnostics.
    pub shadowed: Vec<Shadowed>,
    /// Files providers refused, for diagnostics.
    pub skipped: Vec<SkippedFile>,
    /// Provider failures and refused candidates, for diagnostics.
    pub warnings: Vec<String>,
    /// The first invalid candidate a provider listed: the tool's lookup fails
    /// with this text (as the reference's registry throws), and the snapshot
    /// is incomplete.
    pub invalid_candidate: Option<String>,
    /// Providers that gave no answer in time (or on abort), each as
    /// `skill provider "x" did not answer before the call's deadline`: any
    /// of them might have listed a name this snapshot lacks.
    pub unanswered: Vec<String>,
}

impl RegistrySnapshot {
    /// The winner named `name` (found by binary search: winners are sorted
    /// by name). A name that is missing while a provider gave no answer is
    /// an error naming that provider: it might have had the skill, so
    /// "unknown" would be a guess.
    pub fn lookup(&self, name: &str) -> Result<Option<&Winner>, RegistryError> {
        match winners_named(self, Some(name)).next() {
            Some(winner) => Ok(Some(winner)),
            None => match self.unanswered.first() {
                Some(unanswered) => Err(RegistryError::Failed(unanswered.clone())),
                None => Ok(None),
            },
        }
    }
}

/// Why a registry call has no answer for the tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// A provider failed; the text is shown to the model as `Error: <text>`.
    #[error("{0}")]
    Failed(String),
}

struct Contents {
    providers: Vec<Registered>,
    runtime: Vec<RuntimeSkill>,
}

struct Cache {
    /// Bumped by every invalidation; a collect that saw it move is superseded.
    generation: u64,
    /// Keyed by the cwd's bytes (empty for no cwd): hashing the raw bytes
    /// rather than a `Path`'s components, with foldhash rather than SipHash,
    /// keeps a steady-state lookup cheap (it is on every pre-step). The map
    /// holds at most `capacity` entries, so colliding keys cannot make it slow.
    entries: HashMap<OsString, Arc<RegistrySnapshot>, foldhash::fast::RandomState>,
    /// Insertion order, oldest first, for eviction.
    order: VecDeque<OsString>,
}

/// The registry. Thread-safe; providers are called without holding its lock.
pub struct SkillRegistry {
    contents: Mutex<Contents>,
    cache: Mutex<Cache>,
    capacity: usize,
    /// See [`SkillRegistry::last_incomplete_warnings`].
    last_incomplete: Mutex<Vec<String>>,
}

impl Default for SkillRegistry {
    fn default() -> Self {
        Self::new()
    }
}

impl SkillRegistry {
    /// An empty registry with the default cache capacity.
    pub fn new() -> Self {
        Self::with_cache_capacity(DEFAULT_CACHE_CAPACITY)
    }

    /// An empty registry caching at most `capacity` snapshots.
    pub fn with_cache_capacity(capacity: usize) -> Self {
        Self {
            contents: Mutex::new(Contents { providers: Vec::new(), runtime: Vec::new() }),
            cache: Mutex::new(Cache { generation: 0, entries: HashMap::default(), order: VecDeque::new() }),
            capacity: capacity.max(1),
            last_incomplete: Mutex::new(Vec::new()),
        }
    }

    /// Registers a provider after those already registered.
    pub fn register_provider(&self, provider: Arc<dyn SkillProvider>) {
        lock(&self.contents).providers.push(Registered::new(provider));
        self.invalidate();
    }

    /// Replaces every provider (a scenario's `set-providers`).
    pub fn set_providers(&self, providers: Vec<Arc<dyn SkillProvider>>) {
        lock(&self.contents).providers = providers.into_iter().map(Registered::new).collect();
        self.invalidate();
    }

    /// Registers a runtime skill; the first registration of a name wins, a
    /// later one is ignored (returns false). Invalid skills are refused.
    pub fn register_runtime(&self, skill: RuntimeSkill) -> Result<bool, String> {
        skill.validate()?;
        let mut contents = lock(&self.contents);
        if contents.runtime.iter().any(|existing| existing.name == skill.name) {
            return Ok(false);
        }
        contents.runtime.push(skill);
        drop(contents);
        self.invalidate();
        Ok(true)
    }

    /// Removes every runtime skill (a scenario's `set-runtime`).
    pub fn clear_runtime(&self) {
        lock(&self.contents).runtime.clear();
        self.invalidate();
    }

    /// Drops every cached snapshot; the next snapshot lists afresh.
    pub fn invalidate(&self) {
        let mut cache = lock(&self.cache);
        cache.generation += 1;
        cache.entries.clear();
        cache.order.clear();
    }

    /// How many invalidations the registry has seen (a provider registered,
    /// a watcher's report, [`SkillRegistry::invalidate`]): a host can tell
    /// that its view may have changed without taking a snapshot.
    pub fn generation(&self) -> u64 {
        lock(&self.cache).generation
    }

    /// The current view for `cwd`: from the cache when complete and still
    /// valid, otherwise listed afresh. A listing superseded by an
    /// invalidation while it ran is retried once; a second supersession
    /// returns it as incomplete. Providers are waited for as long as they take.
    pub fn snapshot(&self, cwd: Option<&Path>) -> Arc<RegistrySnapshot> {
        self.snapshot_within(cwd, &ProviderDeadline::unbounded())
    }

    /// [`SkillRegistry::snapshot`] under `limit`: a provider that has not
    /// answered by its deadline, or when its abort flag rises, counts as a
    /// failed listing, so the snapshot is incomplete (and not cached).
    pub fn snapshot_within(&self, cwd: Option<&Path>, limit: &ProviderDeadline) -> Arc<RegistrySnapshot> {
        let key = cache_key(cwd);
        let mut attempt = 1;
        loop {
            let generation = {
                let cache = lock(&self.cache);
                if let Some(hit) = cache.entries.get(key) {
                    return Arc::clone(hit);
                }
                cache.generation
            };
            let mut fresh = self.collect(cwd, limit);
            fresh.revision = next_revision();
            let mut cache = lock(&self.cache);
            if cache.generation != generation {
                if attempt < 2 {
                    attempt += 1;
                    continue;
                }
                fresh.complete = false;
                return Arc::new(fresh);
            }
            let fresh = Arc::new(fresh);
            if fresh.complete {
                if cache.order.len() >= self.capacity
                    && let Some(oldest) = cache.order.pop_front()
                {
                    cache.entries.remove(&oldest);
                }
                cache.order.push_back(key.to_owned());
                cache.entries.insert(key.to_owned(), Arc::clone(&fresh));
            }
            return fresh;
        }
    }

    /// The revision of the complete snapshot cached for `cwd`, if any. Asks no
    /// provider: a plugin that holds this revision needs nothing more.
    pub fn cached_revision(&self, cwd: Option<&Path>) -> Option<u64> {
        lock(&self.cache).entries.get(cache_key(cwd)).map(|snapshot| snapshot.revision)
    }

    /// The winners for the tool's lookup. Fails when a provider listed an
    /// invalid candidate (the reference's behaviour); a provider that failed
    /// outright is omitted, as in the snapshot.
    pub fn list(&self, cwd: Option<&Path>) -> Result<Arc<RegistrySnapshot>, RegistryError> {
        self.list_within(cwd, &ProviderDeadline::unbounded())
    }

    /// [`SkillRegistry::list`] under `limit` (see [`SkillRegistry::snapshot_within`]).
    pub fn list_within(
        &self,
        cwd: Option<&Path>,
        limit: &ProviderDeadline,
    ) -> Result<Arc<RegistrySnapshot>, RegistryError> {
        let snapshot = self.snapshot_within(cwd, limit);
        if let Some(invalid) = &snapshot.invalid_candidate {
            return Err(RegistryError::Failed(invalid.clone()));
        }
        Ok(snapshot)
    }

    /// Loads the winning definition of `name` afresh from its provider.
    /// `Ok(None)` when nothing has it any more, or when the loaded skill has
    /// another name (renamed on disk: the provider is invalidated).
    pub fn get(&self, cwd: Option<&Path>, name: &str) -> Result<Option<SkillDefinition>, RegistryError> {
        self.get_within(cwd, name, &ProviderDeadline::unbounded())
    }

    /// [`SkillRegistry::get`] under `limit`: a provider that has not loaded
    /// the skill in time fails the lookup with a text that says so.
    pub fn get_within(
        &self,
        cwd: Option<&Path>,
        name: &str,
        limit: &ProviderDeadline,
    ) -> Result<Option<SkillDefinition>, RegistryError> {
        if !is_skill_name(name) {
            return Ok(None);
        }
        let snapshot = self.list_within(cwd, limit)?;
        self.get_listed(&snapshot, cwd, name, limit)
    }

    /// Loads `name` from its winner in `snapshot`, a listing this registry
    /// made for `cwd` (so that one call sees one listing: a provider that
    /// answered it is not asked to list again before its skill is loaded).
    /// Fails like [`SkillRegistry::list_within`] when the snapshot holds an
    /// invalid candidate, and like [`RegistrySnapshot::lookup`] when the name
    /// is missing while a provider gave no answer.
    pub fn get_listed(
        &self,
        snapshot: &RegistrySnapshot,
        cwd: Option<&Path>,
        name: &str,
        limit: &ProviderDeadline,
    ) -> Result<Option<SkillDefinition>, RegistryError> {
        self.load_listed(snapshot, cwd, name, limit, false)
    }

    /// [`SkillRegistry::get_listed`]; `relisted` once the snapshot is the
    /// fresh listing made because a loaded file was not the one listed.
    fn load_listed(
        &self,
        snapshot: &RegistrySnapshot,
        cwd: Option<&Path>,
        name: &str,
        limit: &ProviderDeadline,
        relisted: bool,
    ) -> Result<Option<SkillDefinition>, RegistryError> {
        let Some(winner) = winner_of(snapshot, name)? else {
            return Ok(None);
        };
        let definition = match winner.provider {
            None => lock(&self.contents).runtime.iter().find(|skill| skill.name == name).map(RuntimeSkill::definition),
            Some(_) => self
                .ask_provider(winner, cwd, limit, |provider, cwd, candidate| provider.load(cwd, candidate))?
                .flatten(),
        };
        let Some(definition) = definition else {
            return Ok(None);
        };
        validate_definition(&definition).map_err(RegistryError::Failed)?;
        if definition.summary.name != winner.candidate.name {
            self.invalidate();
            return Ok(None);
        }
        if definition.summary.listed != winner.candidate.listed {
            // Another file than the one listed is at the skill's path (a
            // rename over it, a link put in its place): what was read is
            // judged by a fresh listing, once, never by the stale one.
            self.invalidate();
            if !relisted {
                let fresh = self.list_within(cwd, limit)?;
                return self.load_listed(&fresh, cwd, name, limit, true);
            }
            return Ok(None);
        }
        Ok(Some(definition))
    }

    /// `ask` of the provider that listed `winner`, under `deadline` (its
    /// failure, or no answer in time, is the registry's failure with its
    /// text); `None` for a runtime skill or a provider no longer registered.
    pub(crate) fn ask_provider<T: Send + 'static>(
        &self,
        winner: &Winner,
        cwd: Option<&Path>,
        deadline: &ProviderDeadline,
        ask: impl FnOnce(&dyn SkillProvider, Option<&Path>, &SkillCandidate) -> Result<T, ProviderError> + Send + 'static,
    ) -> Result<Option<T>, RegistryError> {
        let Some(index) = winner.provider else {
            return Ok(None);
        };
        let Some(registered) = lock(&self.contents).providers.get(index).cloned() else {
            return Ok(None);
        };
        let (owned_cwd, candidate) = (cwd.map(Path::to_path_buf), winner.candidate.clone());
        registered
            .start(deadline, move |provider| ask(provider, owned_cwd.as_deref(), &candidate))
            .wait(deadline)
            .map_err(|unanswered| {
                RegistryError::Failed(format!("skill provider \"{}\" {unanswered}", registered.provider.name()))
            })?
            .map(Some)
            .map_err(|error| RegistryError::Failed(error.0))
    }

    /// The warnings of the newest incomplete snapshot this registry listed
    /// (for a command line that acts on whatever its plugin call listed and
    /// says why the view was incomplete); empty when every listing so far
    /// was complete.
    pub fn last_incomplete_warnings(&self) -> Vec<String> {
        lock(&self.last_incomplete).clone()
    }

    fn collect(&self, cwd: Option<&Path>, limit: &ProviderDeadline) -> RegistrySnapshot {
        let (providers, runtime) = {
            let contents = lock(&self.contents);
            (contents.providers.clone(), contents.runtime.clone())
        };
        let mut complete = true;
        let mut warnings = Vec::new();
        let mut skipped = Vec::new();
        let mut invalid_candidate = None;
        let mut unanswered_providers = Vec::new();
        // (rank, provider order, local order) decides duplicates; runtime skills
        // come before every provider at equal rank, sorted by name.
        let mut ranked: Vec<(i64, i64, usize, Winner)> = Vec::new();
        let mut runtime = runtime;
        runtime.sort_by(|a, b| a.name.cmp(&b.name));
        for (local, skill) in runtime.iter().enumerate() {
            ranked.push((RUNTIME_RANK, -1, local, Winner { candidate: skill.candidate(), provider: None }));
        }
        // Every provider is started before any is waited for, so under a
        // deadline one that hangs does not eat the others' time.
        let pending: Vec<_> = providers
            .iter()
            .map(|registered| {
                let owned_cwd = cwd.map(Path::to_path_buf);
                registered.start(limit, move |provider| provider.list(owned_cwd.as_deref()))
            })
            .collect();
        for (index, (registered, pending)) in providers.iter().zip(pending).enumerate() {
            let provider = &registered.provider;
            let listing = match pending.wait(limit) {
                Ok(Ok(listing)) => listing,
                Ok(Err(error)) => {
                    complete = false;
                    warnings.push(skipped_warning(provider.name(), &error));
                    continue;
                }
                Err(unanswered) => {
                    complete = false;
                    warnings.push(format!("skill provider \"{}\" skipped: {unanswered}", provider.name()));
                    unanswered_providers.push(format!("skill provider \"{}\" {unanswered}", provider.name()));
                    continue;
                }
            };
            if let Some(invalid) = listing.candidates.iter().find_map(|c| validate_candidate(c, provider.name()).err())
            {
                // One invalid candidate discredits the whole listing.
                complete = false;
                warnings.push(invalid.clone());
                invalid_candidate.get_or_insert(invalid);
                skipped.extend(listing.skipped);
                continue;
            }
            if !listing.complete {
                complete = false;
                warnings.push(incomplete_warning(provider.name(), &listing.problems));
            }
            skipped.extend(listing.skipped);
            for (local, candidate) in listing.candidates.into_iter().enumerate() {
                let rank = candidate.rank;
                ranked.push((rank, index as i64, local, Winner { candidate, provider: Some(index) }));
            }
        }
        ranked.sort_by_key(|entry| (entry.0, entry.1, entry.2));
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut skills: Vec<Winner> = Vec::new();
        let mut shadowed = Vec::new();
        for (_, _, _, winner) in ranked {
            match seen.get(&winner.candidate.name) {
                Some(&at) => shadowed.push(Shadowed {
                    by_source: skills[at].candidate.source.clone(),
                    by_path: skills[at].candidate.path.clone(),
                    candidate: winner.candidate,
                }),
                None => {
                    seen.insert(winner.candidate.name.clone(), skills.len());
                    skills.push(winner);
                }
            }
        }
        skills.sort_by(|a, b| a.candidate.name.cmp(&b.candidate.name));
        if !complete {
            *lock(&self.last_incomplete) = warnings.clone();
        }
        RegistrySnapshot {
            complete,
            revision: 0,
            skills,
            shadowed,
            skipped,
            warnings,
            invalid_candidate,
            unanswered: unanswered_providers,
        }
    }
}

/// The winner of `name` in `snapshot` for a load or a file call: none for a
/// name outside the grammar (no provider is asked); the snapshot's invalid
/// candidate's text when it holds one; [`RegistrySnapshot::lookup`]'s
/// failure when the name is missing while a provider gave no answer.
pub(crate) fn winner_of<'a>(snapshot: &'a RegistrySnapshot, name: &str) -> Result<Option<&'a Winner>, RegistryError> {
    if !is_skill_name(name) {
        return Ok(None);
    }
    if let Some(invalid) = &snapshot.invalid_candidate {
        return Err(RegistryError::Failed(invalid.clone()));
    }
    snapshot.lookup(name)
}

/// The warning for a provider whose listing failed: its name and why.
fn skipped_warning(provider: &str, error: &ProviderError) -> String {
    format!("skill provider \"{provider}\" skipped: {error}")
}

/// The warning for a provider that listed incompletely: its name and why.
fn incomplete_warning(provider: &str, problems: &[String]) -> String {
    match problems {
        [] => format!("skill provider \"{provider}\" listed incompletely"),
        problems => format!("skill provider \"{provider}\" listed incompletely: {}", problems.join("; ")),
    }
}

fn validate_candidate(candidate: &SkillCandidate, provider: &str) -> Result<(), String> {
    if !is_skill_name(&candidate.name) {
        return Err(format!("skill provider \"{provider}\" returned invalid skill name \"{}\"", candidate.name));
    }
    if candidate.description.is_empty() {
        return Err(format!(
            "skill provider \"{provider}\" returned skill \"{}\" without a description",
            candidate.name
        ));
    }
    if candidate.provider != provider {
        return Err(format!(
            "skill provider \"{provider}\" returned skill \"{}\" for provider \"{}\"",
            candidate.name, candidate.provider
        ));
    }
    Ok(())
}

fn validate_definition(definition: &SkillDefinition) -> Result<(), String> {
    let name = &definition.summary.name;
    if !is_skill_name(name) {
        return Err(format!("loaded skill has invalid name \"{name}\""));
    }
    if definition.summary.description.is_empty() {
        return Err(format!("loaded skill \"{name}\" requires a description"));
    }
    Ok(())
}

/// The winners of `snapshot`, or with `name` only the winner of that name
/// (found by binary search: winners are sorted by name).
pub fn winners_named<'a>(snapshot: &'a RegistrySnapshot, name: Option<&str>) -> impl Iterator<Item = &'a Winner> + 'a {
    let range = match name {
        None => 0..snapshot.skills.len(),
        Some(name) => match snapshot.skills.binary_search_by(|winner| winner.candidate.name.as_str().cmp(name)) {
            Ok(index) => index..index + 1,
            Err(_) => 0..0,
        },
    };
    snapshot.skills[range].iter()
}

/// The cache key of a cwd: its bytes, or empty for no cwd (no cwd is empty).
fn cache_key(cwd: Option<&Path>) -> &OsStr {
    cwd.map_or(OsStr::new(""), Path::as_os_str)
}

/// A revision never handed out before in this process: a plugin instance
/// shared by several registries can trust that equal revisions mean equal lists.
fn next_revision() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Locks, recovering from a poisoned lock: the registry's state stays
/// consistent between statements, so a panic elsewhere never corrupts it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests;

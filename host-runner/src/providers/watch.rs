//! Live refresh for long-running hosts: a [`SkillWatcher`] watches the local
//! provider's roots with [`notify`] and invalidates the registry when, and
//! only when, a change can alter the catalog (docs/spec.md §4.2's layout):
//!
//! - `<root>/<dir>/SKILL.md` or a flat `<root>/<file>.md` added, changed or
//!   removed;
//! - a bundle folder `<root>/<dir>` added or removed;
//! - a root created or deleted. A root that does not exist yet is found when
//!   it appears: its nearest existing ancestor is watched instead, and the
//!   watches move down as the missing folders are created.
//!
//! Anything else inside a bundle (`references/`, `scripts/`, notes beside
//! `SKILL.md`) never invalidates, unless the watcher was started with
//! [`SkillWatcher::start_with_resources`] for a host that serves those files
//! too (`skill-host mcp`): then a change of a file that is not hidden,
//! anywhere below a bundle folder, invalidates as well. Reading skills (the
//! provider's own listing, a host serving the files) produces no
//! invalidation. A burst of changes (a `git checkout`,
//! an editor's write-and-rename) coalesces into one invalidation after a
//! short quiet period, [`DEFAULT_DEBOUNCE`].
//!
//! Only the folders that matter are watched, each non-recursively: every
//! root and each of its direct sub-folders (so a bundle's resource tree costs
//! no watch), or the nearest existing ancestor of a missing root. With
//! resources, each bundle folder is watched recursively instead (falling back
//! to its folder alone when the platform's watch limit is reached).
//!
//! ```no_run
//! use std::path::Path;
//! use std::sync::Arc;
//! use skill_host::SkillRegistry;
//! use skill_host::providers::local::{LocalProvider, LocalRoots};
//! use skill_host::providers::watch::SkillWatcher;
//!
//! let provider = Arc::new(LocalProvider::new(LocalRoots::from_env()));
//! let registry = Arc::new(SkillRegistry::new());
//! registry.register_provider(provider.clone());
//! let roots = provider.roots_for(Some(Path::new("/repo"))).into_iter().map(|root| root.path).collect();
//! // Keep it alive as long as the host runs; dropping it stops watching.
//! let _watcher = SkillWatcher::start(&registry, roots)?;
//! # Ok::<(), skill_host::providers::watch::WatchError>(())
//! ```

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Weak};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, CreateKind, EventKind, ModifyKind, RemoveKind};
use notify::{Event, RecommendedWatcher, RecursiveMode, Watcher};

use crate::registry::SkillRegistry;

/// How long the watched folders must stay quiet after a relevant change
/// before the registry is invalidated, so that a burst invalidates once.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(50);

/// A burst that never goes quiet still invalidates after this many quiet
/// periods, so a folder rewritten without pause cannot hide its changes.
const MAX_DELAY_IN_DEBOUNCES: u32 = 10;

/// How many times one re-arming recomputes the watches when folders keep
/// appearing under it, before settling for the next event to finish the job.
const MAX_ARMING_ROUNDS: usize = 8;

/// The file that makes a folder a skill (as the local provider reads it).
use skill_rules::SKILL_FILE;

/// One invalidation and the changes behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalidation {
    /// The catalog-relevant paths that changed (skill files, bundle
    /// folders, roots), each once, in the order first seen. Empty after a
    /// lapse in the platform's events, when anything may have changed.
    pub paths: Vec<PathBuf>,
}

/// Why a watcher could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WatchError {
    /// The platform's watcher could not be created (on Linux: no inotify
    /// instance left).
    #[error("cannot start watching skill folders: {0}")]
    Start(#[source] notify::Error),
    /// A folder could not be watched because the platform's limit on
    /// watches is reached (on Linux: `fs.inotify.max_user_watches`).
    #[error("cannot watch {}: {source}", .path.display())]
    Watch {
        /// The folder.
        path: PathBuf,
        /// The platform's error.
        source: notify::Error,
    },
    /// The watcher's thread could not be started.
    #[error("cannot start the skill watcher's thread: {0}")]
    Thread(#[source] std::io::Error),
}

/// Watches skill roots and invalidates a registry on catalog-relevant
/// changes. Watching stops when it is dropped.
pub struct SkillWatcher {
    roots: Vec<PathBuf>,
    signals: Sender<Signal>,
    worker: Option<JoinHandle<()>>,
    invalidations: Arc<AtomicU64>,
}

impl SkillWatcher {
    /// Watches `roots` (e.g. the local provider's
    /// [`roots_for`](super::local::LocalProvider::roots_for) a cwd) and
    /// invalidates `registry` after each burst of relevant changes. The
    /// watcher holds the registry weakly: it never keeps it alive.
    ///
    /// When this returns, the watches are in place: any later change is seen.
    pub fn start(registry: &Arc<SkillRegistry>, roots: Vec<PathBuf>) -> Result<Self, WatchError> {
        let registry: Weak<SkillRegistry> = Arc::downgrade(registry);
        Self::start_with(roots, DEFAULT_DEBOUNCE, move |_| {
            if let Some(registry) = registry.upgrade() {
                registry.invalidate();
            }
        })
    }

    /// Watches `roots` and calls `on_change` on the watcher's thread after
    /// each burst of relevant changes, once `debounce` has passed without
    /// another (a longer debounce coalesces slower bursts, at the cost of
    /// latency).
    pub fn start_with(
        roots: Vec<PathBuf>,
        debounce: Duration,
        on_change: impl FnMut(&Invalidation) + Send + 'static,
    ) -> Result<Self, WatchError> {
        Self::start_watching(roots, debounce, false, on_change)
    }

    /// As [`start_with`](Self::start_with), and a change of any file that
    /// is not hidden below a bundle folder (its resources: `references/`,
    /// `scripts/`, …) counts too: for a host that serves those files and
    /// must tell its clients when they change.
    pub fn start_with_resources(
        roots: Vec<PathBuf>,
        debounce: Duration,
        on_change: impl FnMut(&Invalidation) + Send + 'static,
    ) -> Result<Self, WatchError> {
        Self::start_watching(roots, debounce, true, on_change)
    }

    fn start_watching(
        roots: Vec<PathBuf>,
        debounce: Duration,
        resources: bool,
        on_change: impl FnMut(&Invalidation) + Send + 'static,
    ) -> Result<Self, WatchError> {
        let mut seen = BTreeSet::new();
        let roots: Vec<PathBuf> = roots
            .into_iter()
            // Events name paths as they were watched: keep them absolute.
            .map(|root| std::path::absolute(&root).unwrap_or(root))
            .filter(|root| seen.insert(root.clone()))
            .collect();
        let (signals, inbox) = mpsc::channel();
        let events = signals.clone();
        let watcher = RecommendedWatcher::new(
            // Runs on notify's thread: only forward, so that the worker can
            // call `watch` (which waits on that thread) without a deadlock.
            move |event| {
                let _ = events.send(Signal::Event(event));
            },
            notify::Config::default(),
        )
        .map_err(WatchError::Start)?;
        let mut arming = Arming {
            watcher,
            roots: roots.clone(),
            watched: BTreeSet::new(),
            bundles: BTreeSet::new(),
            present: Vec::new(),
            resources,
        };
        arming.arm()?;
        let invalidations = Arc::new(AtomicU64::new(0));
        let worker =
            Worker { arming, debounce, on_change: Box::new(on_change), invalidations: Arc::clone(&invalidations) };
        let worker = thread::Builder::new()
            .name("skill-watcher".to_owned())
            .spawn(move || worker.run(inbox))
            .map_err(WatchError::Thread)?;
        Ok(Self { roots, signals, worker: Some(worker), invalidations })
    }

    /// The roots watched (absolute, without duplicates).
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// How many invalidations this watcher has made.
    pub fn invalidations(&self) -> u64 {
        self.invalidations.load(Ordering::SeqCst)
    }
}

impl Drop for SkillWatcher {
    fn drop(&mut self) {
        let _ = self.signals.send(Signal::Stop);
        if let Some(worker) = self.worker.take()
            // Dropped from its own callback: the thread ends after it returns.
            && worker.thread().id() != thread::current().id()
        {
            let _ = worker.join();
        }
    }
}

enum Signal {
    Event(notify::Result<Event>),
    Stop,
}

/// What one event means for the catalog.
#[derive(Debug, Default, PartialEq, Eq)]
struct Verdict {
    /// Catalog-relevant paths it touched.
    relevant: Vec<PathBuf>,
    /// Folders may have appeared or gone: the watches must be recomputed.
    rearm: bool,
    /// Events were lost: anything may have changed.
    lapse: bool,
}

/// How an event's kind bears on a skill file or folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// Opened or read (the provider's own listing among others): nothing changed.
    Read,
    /// Written, or its permissions changed.
    Content,
    /// Created, removed or renamed (or the platform cannot say).
    Structure,
}

fn change(kind: &EventKind) -> Change {
    match kind {
        // Closing a file opened for writing ends a write.
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => Change::Content,
        EventKind::Access(_) => Change::Read,
        // Metadata: permissions decide whether a skill can be read at all.
        EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Metadata(_)) => Change::Content,
        EventKind::Create(_) | EventKind::Remove(_) | EventKind::Modify(_) | EventKind::Any | EventKind::Other => {
            Change::Structure
        }
    }
}

/// Classifies an event against the roots. `bundles` holds the sub-folders
/// the roots had at the last arming, so that a folder's removal or
/// renaming-away (no longer a folder on disk) is recognised.
fn classify(roots: &[PathBuf], bundles: &BTreeSet<PathBuf>, resources: bool, event: &Event) -> Verdict {
    let mut verdict = Verdict::default();
    if event.need_rescan() || event.paths.is_empty() {
        verdict.lapse = true;
        verdict.rearm = true;
        return verdict;
    }
    let change = change(&event.kind);
    if change == Change::Read {
        return verdict;
    }
    for path in &event.paths {
        for root in roots {
            if root.starts_with(path) {
                // The root or a folder on its way: its existence may have
                // changed, which the re-arming finds out.
                verdict.rearm = true;
                if path == root && change == Change::Structure {
                    verdict.relevant.push(path.clone());
                }
            } else if path.parent() == Some(root.as_path()) {
                let flat_skill = path.as_os_str().as_encoded_bytes().ends_with(b".md");
                if change == Change::Structure {
                    let bundle = matches!(event.kind, EventKind::Create(CreateKind::Folder))
                        || matches!(event.kind, EventKind::Remove(RemoveKind::Folder))
                        || bundles.contains(path)
                        // Followed: a link to a folder is a bundle too.
                        || path.is_dir();
                    if bundle || flat_skill {
                        verdict.relevant.push(path.clone());
                        verdict.rearm = true;
                    }
                } else if flat_skill {
                    verdict.relevant.push(path.clone());
                }
            } else if (path.parent().and_then(Path::parent) == Some(root.as_path())
                && path.file_name().is_some_and(|name| name == SKILL_FILE))
                || (resources && is_resource(root, path))
            {
                verdict.relevant.push(path.clone());
            }
        }
    }
    verdict
}

/// Whether `path` is below a bundle folder of `root` (two or more
/// components down) with no hidden component: a file a host serving a
/// skill's resources lists, or a folder holding some.
fn is_resource(root: &Path, path: &Path) -> bool {
    let Ok(below) = path.strip_prefix(root) else { return false };
    let mut parts = 0;
    for part in below.components() {
        if part.as_os_str().as_encoded_bytes().starts_with(b".") {
            return false;
        }
        parts += 1;
    }
    parts >= 2
}

/// The platform watcher and which folders it watches.
struct Arming {
    watcher: RecommendedWatcher,
    roots: Vec<PathBuf>,
    /// Folders watched now, each non-recursively.
    watched: BTreeSet<PathBuf>,
    /// The roots' sub-folders at the last arming.
    bundles: BTreeSet<PathBuf>,
    /// Whether each root was a folder at the last arming.
    present: Vec<bool>,
    /// Whether bundle folders are watched recursively, for their resources.
    resources: bool,
}

impl Arming {
    /// The folders to watch now, the roots' sub-folders, and which roots exist.
    fn wanted(&self) -> (BTreeSet<PathBuf>, BTreeSet<PathBuf>, Vec<bool>) {
        let (mut watch, mut bundles, mut present) = (BTreeSet::new(), BTreeSet::new(), Vec::new());
        for root in &self.roots {
            present.push(root.is_dir());
            if !root.is_dir() {
                // Missing (or a file): wait for it where it would appear.
                if let Some(ancestor) = root.ancestors().skip(1).find(|dir| dir.is_dir()) {
                    watch.insert(ancestor.to_path_buf());
                }
                continue;
            }
            watch.insert(root.clone());
            // An unreadable root lists nothing here; its own watch still
            // reports when it changes.
            for entry in std::fs::read_dir(root).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    watch.insert(path.clone());
                    bundles.insert(path);
                }
            }
        }
        (watch, bundles, present)
    }

    /// Brings the watches in line with the folders on disk and returns the
    /// roots that appeared or disappeared since the last arming. Watching
    /// before looking again closes the race with folders created meanwhile.
    fn arm(&mut self) -> Result<Vec<PathBuf>, WatchError> {
        let before = self.present.clone();
        let mut refused = BTreeSet::new();
        for _ in 0..MAX_ARMING_ROUNDS {
            let (wanted, bundles, present) = self.wanted();
            self.bundles = bundles;
            self.present = present;
            let stale: Vec<PathBuf> = self.watched.difference(&wanted).cloned().collect();
            for path in stale {
                // Already gone with its folder, at worst.
                let _ = self.watcher.unwatch(&path);
                self.watched.remove(&path);
            }
            let missing: Vec<PathBuf> =
                wanted.difference(&self.watched).filter(|path| !refused.contains(*path)).cloned().collect();
            if missing.is_empty() {
                break;
            }
            for path in missing {
                let mode = if self.resources && self.bundles.contains(&path) {
                    RecursiveMode::Recursive
                } else {
                    RecursiveMode::NonRecursive
                };
                let mut watched = self.watcher.watch(&path, mode);
                if mode == RecursiveMode::Recursive
                    && matches!(&watched, Err(source) if matches!(source.kind, notify::ErrorKind::MaxFilesWatch))
                {
                    // Too many folders below it: its resources go unseen,
                    // its `SKILL.md` is still watched.
                    let _ = self.watcher.unwatch(&path);
                    watched = self.watcher.watch(&path, RecursiveMode::NonRecursive);
                }
                match watched {
                    Ok(()) => {
                        self.watched.insert(path);
                    }
                    Err(source) if matches!(source.kind, notify::ErrorKind::MaxFilesWatch) => {
                        return Err(WatchError::Watch { path, source });
                    }
                    // Removed since it was seen (the next round looks again),
                    // or not watchable (no permission): left out, as the
                    // provider leaves out what it cannot read.
                    Err(_) => {
                        refused.insert(path);
                    }
                }
            }
        }
        let toggled = self
            .roots
            .iter()
            .zip(self.present.iter().zip(before.iter().chain(std::iter::repeat(&false))))
            .filter(|(_, (now, was))| now != was)
            .map(|(root, _)| root.clone())
            .collect();
        Ok(toggled)
    }

    /// Drops the watches on `path` and below after it was removed or renamed
    /// away: a renamed folder's watch would follow it and report its new
    /// contents under the old name.
    fn forget(&mut self, path: &Path) {
        let gone: Vec<PathBuf> = self.watched.iter().filter(|watched| watched.starts_with(path)).cloned().collect();
        for watched in gone {
            let _ = self.watcher.unwatch(&watched);
            self.watched.remove(&watched);
        }
    }
}

/// Relevant changes waiting for the quiet period to end.
struct Pending {
    first: Instant,
    last: Instant,
    paths: Vec<PathBuf>,
    relevant: bool,
    rearm: bool,
}

/// The watcher's thread: classifies events, debounces, re-arms, invalidates.
struct Worker {
    arming: Arming,
    debounce: Duration,
    on_change: Box<dyn FnMut(&Invalidation) + Send>,
    invalidations: Arc<AtomicU64>,
}

impl Worker {
    fn run(mut self, inbox: Receiver<Signal>) {
        let max_delay = self.debounce.saturating_mul(MAX_DELAY_IN_DEBOUNCES);
        let mut pending: Option<Pending> = None;
        loop {
            let signal = match &pending {
                None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(pending) => {
                    let due = (pending.last + self.debounce).min(pending.first + max_delay);
                    inbox.recv_timeout(due.saturating_duration_since(Instant::now()))
                }
            };
            match signal {
                Ok(Signal::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Ok(Signal::Event(event)) => {
                    let verdict = match &event {
                        Ok(event) => {
                            if matches!(event.kind, EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(_))) {
                                for path in &event.paths {
                                    self.arming.forget(path);
                                }
                            }
                            classify(&self.arming.roots, &self.arming.bundles, self.arming.resources, event)
                        }
                        // The platform lost track (e.g. a watch limit): look again.
                        Err(_) => Verdict { relevant: Vec::new(), rearm: true, lapse: true },
                    };
                    if verdict == Verdict::default() {
                        continue;
                    }
                    let now = Instant::now();
                    let waiting = pending.get_or_insert(Pending {
                        first: now,
                        last: now,
                        paths: Vec::new(),
                        relevant: false,
                        rearm: false,
                    });
                    waiting.last = now;
                    waiting.relevant |= verdict.lapse || !verdict.relevant.is_empty();
                    waiting.rearm |= verdict.rearm;
                    for path in verdict.relevant {
                        if !waiting.paths.contains(&path) {
                            waiting.paths.push(path);
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    let Some(mut due) = pending.take() else { continue };
                    // Re-armed before invalidating: whatever was written into
                    // a new folder before its watch existed is read by the
                    // listing that follows the invalidation.
                    if due.rearm {
                        // A watch limit reached now cannot be reported; the
                        // folders already watched keep working.
                        for root in self.arming.arm().unwrap_or_default() {
                            due.relevant = true;
                            if !due.paths.contains(&root) {
                                due.paths.push(root);
                            }
                        }
                    }
                    if due.relevant {
                        self.invalidations.fetch_add(1, Ordering::SeqCst);
                        (self.on_change)(&Invalidation { paths: due.paths });
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;

//! The watcher against real folders, deterministically: after each change a
//! sentinel skill file is renamed into a second ("beacon") root. Events reach
//! the watcher in order, so once the sentinel's invalidation is observed,
//! every event of the change before it has been classified: a change that
//! should not invalidate provably did not when the only invalidation since is
//! the sentinel's. Nothing sleeps; waits are bounded polls of observed state.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, CreateKind, DataChange, EventKind, ModifyKind, RemoveKind, RenameMode};

use super::*;
use crate::providers::local::{LocalProvider, LocalRoots};
use crate::registry::SkillProvider;

/// How long a test waits for what must happen; reached only when broken.
const BOUND: Duration = Duration::from_secs(5);

/// The invalidations a watcher made, with when each was observed.
#[derive(Default)]
struct Log {
    seen: Mutex<Vec<(Instant, Invalidation)>>,
    changed: Condvar,
}

impl Log {
    fn len(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// Waits until an invalidation after the first `from` names `path`.
    fn wait_for(&self, from: usize, path: &Path) -> Vec<(Instant, Invalidation)> {
        let deadline = Instant::now() + BOUND;
        let mut seen = self.seen.lock().unwrap();
        loop {
            if seen[from..].iter().any(|(_, invalidation)| invalidation.paths.iter().any(|p| p == path)) {
                return seen[from..].to_vec();
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no invalidation named {} within {BOUND:?}: {:?}", path.display(), &seen[from..]);
            seen = self.changed.wait_timeout(seen, left).unwrap().0;
        }
    }
}

/// What a change caused.
#[derive(Debug)]
struct Observed {
    /// Invalidations from the change's start up to the sentinel's.
    count: usize,
    /// The paths they named, the sentinel's left out.
    paths: BTreeSet<PathBuf>,
    /// From the change's start to the first invalidation observed.
    latency: Duration,
}

/// A temporary tree with a beacon root for sentinels and a staging folder
/// (never watched) to prepare files that then appear with one rename.
struct Fixture {
    dir: tempfile::TempDir,
    log: Arc<Log>,
    watcher: Option<SkillWatcher>,
    sentinels: usize,
}

impl Fixture {
    /// Creates `folders` (relative), then watches `roots` (relative) and the beacon.
    fn new(folders: &[&str], roots: &[&str], debounce: Duration) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for folder in folders.iter().chain(&["beacon", "staging"]) {
            fs::create_dir_all(dir.path().join(folder)).unwrap();
        }
        let mut watched: Vec<PathBuf> = roots.iter().map(|root| dir.path().join(root)).collect();
        watched.push(dir.path().join("beacon"));
        let log = Arc::new(Log::default());
        let recorder = Arc::clone(&log);
        let watcher = SkillWatcher::start_with(watched, debounce, move |invalidation| {
            recorder.seen.lock().unwrap().push((Instant::now(), invalidation.clone()));
            recorder.changed.notify_all();
        })
        .unwrap();
        Self { dir, log, watcher: Some(watcher), sentinels: 0 }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Writes `relative` in staging and renames it to `to`: one event.
    fn place(&self, to: &str, text: &str) {
        let staged = self.path("staging").join(to.replace('/', "_"));
        fs::write(&staged, text).unwrap();
        fs::rename(&staged, self.path(to)).unwrap();
    }

    /// Runs `change`, then a sentinel, and reports what the change caused.
    fn observe(&mut self, change: impl FnOnce(&Self)) -> Observed {
        let from = self.log.len();
        let start = Instant::now();
        change(self);
        self.sentinels += 1;
        let sentinel = format!("beacon/sentinel-{}.md", self.sentinels);
        self.place(&sentinel, "a sentinel");
        let seen = self.log.wait_for(from, &self.path(&sentinel));
        let sentinel = self.path(&sentinel);
        Observed {
            count: seen.len(),
            paths: seen.iter().flat_map(|(_, i)| i.paths.iter().filter(|p| **p != sentinel).cloned()).collect(),
            latency: seen[0].0 - start,
        }
    }

    /// Asserts that `change` caused no invalidation at all: the only one
    /// since it started is the sentinel's, alone.
    fn assert_quiet(&mut self, what: &str, change: impl FnOnce(&Self)) {
        let observed = self.observe(change);
        assert_eq!((observed.count, observed.paths), (1, BTreeSet::new()), "{what} invalidated");
    }

    /// Asserts that `change` invalidated for exactly `paths` (relative).
    fn assert_invalidates(&mut self, what: &str, paths: &[&str], change: impl FnOnce(&Self)) -> Duration {
        let observed = self.observe(change);
        let expected: BTreeSet<PathBuf> = paths.iter().map(|path| self.path(path)).collect();
        assert_eq!(observed.paths, expected, "{what}");
        observed.latency
    }
}

fn skill(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n---\n\nDo {name}.\n")
}

const QUICK: Duration = DEFAULT_DEBOUNCE;

#[test]
fn skill_files_added_changed_and_removed_invalidate() {
    let mut fx = Fixture::new(&["skills/a"], &["skills"], QUICK);
    fx.assert_invalidates("a SKILL.md added", &["skills/a/SKILL.md"], |fx| fx.place("skills/a/SKILL.md", &skill("a")));
    fx.assert_invalidates("a SKILL.md edited", &["skills/a/SKILL.md"], |fx| {
        fs::write(fx.path("skills/a/SKILL.md"), skill("a") + "More.\n").unwrap();
    });
    fx.assert_invalidates("a SKILL.md removed", &["skills/a/SKILL.md"], |fx| {
        fs::remove_file(fx.path("skills/a/SKILL.md")).unwrap();
    });
    fx.assert_invalidates("a flat skill added", &["skills/flat.md"], |fx| fx.place("skills/flat.md", &skill("flat")));
    fx.assert_invalidates("a flat skill edited", &["skills/flat.md"], |fx| {
        fs::write(fx.path("skills/flat.md"), skill("flat") + "More.\n").unwrap();
    });
    fx.assert_invalidates("a flat skill renamed", &["skills/flat.md", "skills/other.md"], |fx| {
        fs::rename(fx.path("skills/flat.md"), fx.path("skills/other.md")).unwrap();
    });
    fx.assert_invalidates("a flat skill removed", &["skills/other.md"], |fx| {
        fs::remove_file(fx.path("skills/other.md")).unwrap();
    });
}

#[test]
fn bundle_folders_added_renamed_and_removed_invalidate_and_new_ones_are_watched() {
    let mut fx = Fixture::new(&["skills"], &["skills"], QUICK);
    fx.assert_invalidates("an empty bundle folder added", &["skills/a"], |fx| {
        fs::create_dir(fx.path("skills/a")).unwrap();
    });
    // Re-armed: the new folder's SKILL.md is seen.
    fx.assert_invalidates("a SKILL.md in the new folder", &["skills/a/SKILL.md"], |fx| {
        fs::write(fx.path("skills/a/SKILL.md"), skill("a")).unwrap();
    });
    fx.assert_invalidates("a bundle renamed", &["skills/a", "skills/b"], |fx| {
        fs::rename(fx.path("skills/a"), fx.path("skills/b")).unwrap();
    });
    fx.assert_invalidates("the renamed bundle's SKILL.md edited", &["skills/b/SKILL.md"], |fx| {
        fs::write(fx.path("skills/b/SKILL.md"), skill("b")).unwrap();
    });
    fx.assert_invalidates("a bundle removed", &["skills/b", "skills/b/SKILL.md"], |fx| {
        fs::remove_dir_all(fx.path("skills/b")).unwrap();
    });
    // A whole bundle moved in at once, resources and all.
    fx.assert_invalidates("a prepared bundle moved in", &["skills/c"], |fx| {
        fs::create_dir_all(fx.path("staging/c/references")).unwrap();
        fs::write(fx.path("staging/c/SKILL.md"), skill("c")).unwrap();
        fs::write(fx.path("staging/c/references/guide.md"), "guide").unwrap();
        fs::rename(fx.path("staging/c"), fx.path("skills/c")).unwrap();
    });
    fx.assert_invalidates("its SKILL.md edited", &["skills/c/SKILL.md"], |fx| {
        fs::write(fx.path("skills/c/SKILL.md"), skill("c") + "More.\n").unwrap();
    });
}

#[test]
fn folders_replaced_under_the_same_name_are_watched_again() {
    // The old folder's watch died with it: the new one needs its own, which
    // a watcher that still counted the old one would never add.
    let mut fx = Fixture::new(&["skills/a"], &["skills"], QUICK);
    fx.assert_invalidates("setup", &["skills/a/SKILL.md"], |fx| fx.place("skills/a/SKILL.md", &skill("a")));
    fx.assert_invalidates("a bundle regenerated", &["skills/a", "skills/a/SKILL.md"], |fx| {
        fs::remove_dir_all(fx.path("skills/a")).unwrap();
        fs::create_dir(fx.path("skills/a")).unwrap();
    });
    fx.assert_invalidates("the regenerated bundle's SKILL.md", &["skills/a/SKILL.md"], |fx| {
        fs::write(fx.path("skills/a/SKILL.md"), skill("a")).unwrap();
    });
    fx.assert_invalidates("a bundle renamed away and its name reused", &["skills/a", "skills/old"], |fx| {
        fs::rename(fx.path("skills/a"), fx.path("skills/old")).unwrap();
        fs::create_dir(fx.path("skills/a")).unwrap();
    });
    fx.assert_invalidates("the new folder's SKILL.md", &["skills/a/SKILL.md"], |fx| {
        fs::write(fx.path("skills/a/SKILL.md"), skill("a")).unwrap();
    });
    fx.assert_quiet("the renamed folder's resources", |fx| {
        fs::write(fx.path("skills/old/notes.md"), "notes").unwrap();
    });
    fx.assert_invalidates(
        "the root replaced",
        &["skills", "skills/a", "skills/a/SKILL.md", "skills/old", "skills/old/SKILL.md"],
        |fx| {
            fs::remove_dir_all(fx.path("skills")).unwrap();
            fs::create_dir(fx.path("skills")).unwrap();
        },
    );
    fx.assert_invalidates("a skill in the new root", &["skills/n.md"], |fx| fx.place("skills/n.md", &skill("n")));
}

#[test]
fn resource_files_reads_and_other_files_never_invalidate() {
    let mut fx = Fixture::new(&["skills/a/references", "skills/a/scripts"], &["skills"], QUICK);
    fx.assert_invalidates("setup", &["skills/a/SKILL.md"], |fx| fx.place("skills/a/SKILL.md", &skill("a")));
    fx.assert_quiet("resource files inside a bundle", |fx| {
        fs::write(fx.path("skills/a/references/x.md"), "x").unwrap();
        fs::write(fx.path("skills/a/references/x.md"), "x, edited").unwrap();
        fs::write(fx.path("skills/a/scripts/a.py"), "print('a')").unwrap();
        fs::remove_file(fx.path("skills/a/references/x.md")).unwrap();
        fs::create_dir_all(fx.path("skills/a/references/deeper/still")).unwrap();
        fs::write(fx.path("skills/a/references/deeper/still/SKILL.md"), skill("nested")).unwrap();
        fs::remove_dir_all(fx.path("skills/a/scripts")).unwrap();
    });
    fx.assert_quiet("files beside SKILL.md", |fx| {
        fs::write(fx.path("skills/a/notes.md"), "notes").unwrap();
        fs::write(fx.path("skills/a/LICENSE"), "MIT").unwrap();
        fs::rename(fx.path("skills/a/notes.md"), fx.path("skills/a/NOTES.txt")).unwrap();
    });
    fx.assert_quiet("non-Markdown files in a root", |fx| {
        fs::write(fx.path("skills/README.txt"), "readme").unwrap();
        fs::write(fx.path("skills/.DS_Store"), "junk").unwrap();
        fs::remove_file(fx.path("skills/README.txt")).unwrap();
    });
    fx.assert_quiet("reading every skill, as the local provider does", |fx| {
        let provider = LocalProvider::new(LocalRoots { custom: vec![fx.path("skills")], ..LocalRoots::default() });
        let listing = provider.list(None).unwrap();
        assert_eq!(listing.candidates.len(), 1);
        provider.load(None, &listing.candidates[0]).unwrap().unwrap();
        fs::read_to_string(fx.path("skills/a/SKILL.md")).unwrap();
    });
}

#[test]
fn a_missing_root_is_picked_up_when_it_appears_and_deletion_rearms() {
    let mut fx = Fixture::new(&["project"], &["project/.agents/skills"], QUICK);
    fx.assert_quiet("a folder on the way to the root", |fx| {
        fs::create_dir(fx.path("project/.agents")).unwrap();
    });
    fx.assert_quiet("unrelated files beside it", |fx| {
        fs::write(fx.path("project/README.md"), "readme").unwrap();
        fs::write(fx.path("project/.agents/notes.md"), "notes").unwrap();
    });
    fx.assert_invalidates("the root created", &["project/.agents/skills"], |fx| {
        fs::create_dir(fx.path("project/.agents/skills")).unwrap();
    });
    fx.assert_invalidates("a bundle in the new root", &["project/.agents/skills/a"], |fx| {
        fs::create_dir(fx.path("project/.agents/skills/a")).unwrap();
    });
    fx.assert_invalidates("its SKILL.md", &["project/.agents/skills/a/SKILL.md"], |fx| {
        fs::write(fx.path("project/.agents/skills/a/SKILL.md"), skill("a")).unwrap();
    });
    fx.assert_invalidates(
        "the root deleted",
        &["project/.agents/skills", "project/.agents/skills/a", "project/.agents/skills/a/SKILL.md"],
        |fx| fs::remove_dir_all(fx.path("project/.agents/skills")).unwrap(),
    );
    fx.assert_quiet("a Markdown file where the root was, in its parent", |fx| {
        fs::write(fx.path("project/.agents/skills.md"), "not a root").unwrap();
    });
    fx.assert_quiet("the missing root's parent deleted", |fx| {
        fs::remove_dir_all(fx.path("project/.agents")).unwrap();
    });
    // Appearing in one go, two levels below the nearest existing folder.
    fx.assert_invalidates("the root created with its parent and a skill", &["project/.agents/skills"], |fx| {
        fs::create_dir_all(fx.path("staging/agents/skills/b")).unwrap();
        fs::write(fx.path("staging/agents/skills/b/SKILL.md"), skill("b")).unwrap();
        fs::rename(fx.path("staging/agents"), fx.path("project/.agents")).unwrap();
    });
    fx.assert_invalidates("a skill in the recreated root", &["project/.agents/skills/b/SKILL.md"], |fx| {
        fs::write(fx.path("project/.agents/skills/b/SKILL.md"), skill("b") + "More.\n").unwrap();
    });
}

#[test]
fn a_burst_coalesces_into_one_invalidation() {
    // A long quiet period, so that only a stalled machine could split the burst.
    let debounce = Duration::from_millis(750);
    let mut fx = Fixture::new(&["skills"], &["skills"], debounce);
    let from = fx.log.len();
    let start = Instant::now();
    let mut longest_gap = Duration::ZERO;
    let mut last = start;
    for index in 0..20 {
        let bundle = fx.path(&format!("skills/s{index}"));
        fs::create_dir(&bundle).unwrap();
        fs::write(bundle.join("SKILL.md"), skill(&format!("s{index}"))).unwrap();
        fs::write(fx.path(&format!("skills/flat{index}.md")), skill(&format!("flat{index}"))).unwrap();
        longest_gap = longest_gap.max(last.elapsed());
        last = Instant::now();
    }
    assert!(longest_gap < debounce, "the machine stalled for {longest_gap:?} inside the burst");
    let seen = fx.log.wait_for(from, &fx.path("skills/s19"));
    assert_eq!(seen.len(), 1, "one invalidation for the whole burst: {seen:?}");
    let named: BTreeSet<&PathBuf> = seen[0].1.paths.iter().collect();
    for index in 0..20 {
        assert!(named.contains(&fx.path(&format!("skills/s{index}"))));
        assert!(named.contains(&fx.path(&format!("skills/flat{index}.md"))));
    }
    // Nothing of the burst was left over for a second invalidation.
    let observed = fx.observe(|_| {});
    assert_eq!((observed.count, observed.paths), (1, BTreeSet::new()));
}

#[test]
fn the_registry_lists_a_skill_added_while_watched() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    fs::create_dir(&root).unwrap();
    let provider = Arc::new(LocalProvider::new(LocalRoots { custom: vec![root.clone()], ..LocalRoots::default() }));
    let registry = Arc::new(SkillRegistry::new());
    registry.register_provider(provider.clone());
    let roots = provider.roots_for(None).into_iter().map(|root| root.path).collect();
    let watcher = SkillWatcher::start(&registry, roots).unwrap();
    assert_eq!(watcher.roots(), std::slice::from_ref(&root));

    let before = registry.snapshot(None);
    assert!(before.skills.is_empty());
    assert_eq!(registry.snapshot(None).revision, before.revision, "cached until something changes");
    let generation = registry.generation();

    let start = Instant::now();
    fs::create_dir(root.join("review")).unwrap();
    fs::write(root.join("review/SKILL.md"), skill("review")).unwrap();
    // The cache is dropped only by the watcher's invalidation.
    loop {
        let snapshot = registry.snapshot(None);
        if snapshot.skills.iter().any(|winner| winner.candidate.name == "review") {
            break;
        }
        assert!(start.elapsed() < BOUND, "the new skill never appeared");
        std::thread::yield_now();
    }
    assert!(registry.generation() > generation);
    assert!(watcher.invalidations() >= 1);
    println!("registry sees a new skill after {:?}", start.elapsed());
}

#[test]
fn a_dropped_watcher_stops_and_a_dropped_registry_is_not_kept_alive() {
    let mut fx = Fixture::new(&["skills"], &["skills"], QUICK);
    let registry = Arc::new(SkillRegistry::new());
    let weak = Arc::downgrade(&registry);
    let with_registry = SkillWatcher::start(&registry, vec![fx.path("skills")]).unwrap();
    drop(registry);
    assert!(weak.upgrade().is_none(), "the watcher holds the registry weakly");
    let calls = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = Arc::clone(&calls);
    let dropped = SkillWatcher::start_with(vec![fx.path("skills")], QUICK, move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    })
    .unwrap();

    fx.assert_invalidates("a skill", &["skills/a.md"], |fx| fx.place("skills/a.md", &skill("a")));
    // The other watchers have their own threads: wait for them to see it too.
    let start = Instant::now();
    while calls.load(Ordering::SeqCst) < 1 || with_registry.invalidations() < 1 {
        assert!(start.elapsed() < BOUND, "a watcher missed the change");
        std::thread::yield_now();
    }
    drop(dropped);
    // Its thread was joined: nothing can call it any more.
    fx.assert_invalidates("another skill", &["skills/b.md"], |fx| fx.place("skills/b.md", &skill("b")));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // The registry is gone; the watcher that held it weakly still runs.
    let start = Instant::now();
    while with_registry.invalidations() < 2 {
        assert!(start.elapsed() < BOUND, "the watcher stopped with its registry");
        std::thread::yield_now();
    }
    drop(fx.watcher.take());
}

#[test]
fn latency_from_a_change_to_the_invalidation() {
    let mut fx = Fixture::new(&["skills"], &["skills"], QUICK);
    let mut latencies = Vec::new();
    for index in 0..10 {
        let path = format!("skills/s{index}.md");
        latencies.push(fx.assert_invalidates("a flat skill", &[&path], |fx| fx.place(&path, &skill("s"))));
    }
    latencies.sort();
    // Never sooner than the quiet period: bursts must get the chance to coalesce.
    assert!(latencies[0] >= QUICK, "{latencies:?}");
    println!(
        "watcher latency (debounce {QUICK:?}) over {} changes: min {:?}, median {:?}, max {:?}",
        latencies.len(),
        latencies[0],
        latencies[latencies.len() / 2],
        latencies[latencies.len() - 1]
    );
}

/// The classification alone, on events as notify's inotify backend reports them.
#[test]
fn events_are_classified_by_where_they_happen_and_what_they_did() {
    let root = PathBuf::from("/w/skills");
    let roots = [root.clone()];
    let bundles: BTreeSet<PathBuf> = [root.join("known")].into();
    let event = |kind: EventKind, path: &str| Event::new(kind).add_path(PathBuf::from(path));
    let check = |event: Event, relevant: &[&str], rearm: bool| {
        let verdict = classify(&roots, &bundles, false, &event);
        let expected: Vec<PathBuf> = relevant.iter().map(PathBuf::from).collect();
        assert_eq!((verdict.relevant, verdict.rearm), (expected, rearm), "{event:?}");
    };
    let written = EventKind::Modify(ModifyKind::Data(DataChange::Any));
    let closed = EventKind::Access(AccessKind::Close(AccessMode::Write));
    let opened = EventKind::Access(AccessKind::Open(AccessMode::Any));
    let read = EventKind::Access(AccessKind::Close(AccessMode::Read));
    let created = EventKind::Create(CreateKind::File);
    let removed = EventKind::Remove(RemoveKind::File);
    let renamed_away = EventKind::Modify(ModifyKind::Name(RenameMode::From));

    check(event(written, "/w/skills/a/SKILL.md"), &["/w/skills/a/SKILL.md"], false);
    check(event(closed, "/w/skills/a/SKILL.md"), &["/w/skills/a/SKILL.md"], false);
    check(event(opened, "/w/skills/a/SKILL.md"), &[], false);
    check(event(read, "/w/skills/flat.md"), &[], false);
    check(event(written, "/w/skills/flat.md"), &["/w/skills/flat.md"], false);
    check(event(created, "/w/skills/flat.md"), &["/w/skills/flat.md"], true);
    check(event(written, "/w/skills/a/notes.md"), &[], false);
    check(event(written, "/w/skills/a/references/SKILL.md"), &[], false);
    check(event(created, "/w/skills/notes.txt"), &[], false);
    check(event(removed, "/w/skills/notes.txt"), &[], false);
    check(event(written, "/w/skills/FLAT.MD"), &[], false);
    check(event(EventKind::Create(CreateKind::Folder), "/w/skills/new"), &["/w/skills/new"], true);
    check(event(EventKind::Remove(RemoveKind::Folder), "/w/skills/gone"), &["/w/skills/gone"], true);
    check(event(renamed_away, "/w/skills/known"), &["/w/skills/known"], true);
    check(event(renamed_away, "/w/skills/unknown"), &[], false);
    check(event(EventKind::Create(CreateKind::Folder), "/w/skills"), &["/w/skills"], true);
    check(event(EventKind::Create(CreateKind::Folder), "/w"), &[], true);
    check(event(EventKind::Create(CreateKind::Folder), "/w/other"), &[], false);
    check(event(EventKind::Modify(ModifyKind::Metadata(notify::event::MetadataKind::Any)), "/w/skills"), &[], true);
    check(
        Event::new(EventKind::Modify(ModifyKind::Name(RenameMode::Both)))
            .add_path(PathBuf::from("/w/skills/x.md"))
            .add_path(PathBuf::from("/w/skills/y.md")),
        &["/w/skills/x.md", "/w/skills/y.md"],
        true,
    );
    let lapse = classify(&roots, &bundles, false, &Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan));
    assert!(lapse.lapse && lapse.rearm);
}

/// With resources, a change of a file that is not hidden anywhere below a
/// bundle counts; hidden files, reads and files beside the bundles do not.
#[test]
fn with_resources_a_change_below_a_bundle_counts_unless_hidden_or_a_read() {
    let root = PathBuf::from("/w/skills");
    let roots = [root.clone()];
    let bundles: BTreeSet<PathBuf> = [root.join("a")].into();
    let event = |kind: EventKind, path: &str| Event::new(kind).add_path(PathBuf::from(path));
    let written = EventKind::Modify(ModifyKind::Data(DataChange::Any));
    let read = EventKind::Access(AccessKind::Close(AccessMode::Read));
    let relevant = |resources: bool, event: Event| classify(&roots, &bundles, resources, &event).relevant;
    for path in ["/w/skills/a/notes.md", "/w/skills/a/references/style.md", "/w/skills/a/scripts/deep/x.py"] {
        assert_eq!(relevant(true, event(written, path)), [PathBuf::from(path)], "{path}");
        // Without resources, as before: only the catalog's files count.
        assert!(relevant(false, event(written, path)).is_empty(), "{path}");
        assert!(relevant(true, event(read, path)).is_empty(), "a read of {path}");
    }
    for path in ["/w/skills/a/.draft.md", "/w/skills/a/.git/index", "/w/skills/notes.txt", "/w/other/a/b.md"] {
        assert!(relevant(true, event(written, path)).is_empty(), "{path}");
    }
}

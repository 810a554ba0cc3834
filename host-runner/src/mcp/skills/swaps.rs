//! What is served when a skill's files change on disk after the listing:
//! never bytes from outside the folder as listed (docs/security.md).

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{Decisions, SkillsError, manifest, read, resource_uri, served};
use crate::providers::local::{LocalProvider, LocalRoots};
use crate::registry::SkillRegistry;

const SECRET: &str = "OUTSIDE-SECRET";

fn registry(root: &Path) -> SkillRegistry {
    let registry = SkillRegistry::new();
    let roots = LocalRoots { custom: vec![root.to_path_buf()], ..LocalRoots::default() };
    registry.register_provider(Arc::new(LocalProvider::new(roots)));
    registry
}

fn skill_text(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n\n{body}\n")
}

/// Every way the extension reads `relative` of skill `name`: never the secret.
fn assert_nothing_of_the_secret(registry: &SkillRegistry, name: &str, relative: &str) {
    let snapshot = registry.snapshot(None);
    let (_, files) = served(&snapshot, name, &Default::default()).unwrap();
    let uri = resource_uri(name, relative);
    if let Ok(file) = read(&uri, name, relative, &files, &Decisions::default()) {
        assert!(!String::from_utf8_lossy(&file.bytes).contains(SECRET), "resources/read served the outside file");
    }
    if let Ok(skill) = manifest(name, &files) {
        let text = serde_json::to_string(&skill).unwrap();
        assert!(!text.contains(SECRET), "skills/get described the outside file: {text}");
    }
}

#[test]
fn a_flat_skill_swapped_for_a_link_after_listing_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = (dir.path().join("skills"), dir.path().join("outside"));
    fs::create_dir_all(&root).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(root.join("flat.md"), skill_text("flat", "Flat.", "Inside.")).unwrap();
    fs::write(outside.join("secret.md"), format!("{SECRET}\n")).unwrap();
    let registry = registry(&root);
    let snapshot = registry.snapshot(None);
    let (_, files) = served(&snapshot, "flat", &Default::default()).unwrap();
    fs::remove_file(root.join("flat.md")).unwrap();
    symlink(outside.join("secret.md"), root.join("flat.md")).unwrap();

    let uri = resource_uri("flat", "SKILL.md");
    assert_eq!(
        read(&uri, "flat", "SKILL.md", &files, &Decisions::default()).unwrap_err(),
        SkillsError::Changed { name: "flat".into() }
    );
    assert_eq!(manifest("flat", &files).unwrap_err(), SkillsError::Changed { name: "flat".into() });
    assert_eq!(
        SkillsError::Changed { name: "flat".into() }.to_string(),
        "skill \"flat\" changed on disk since it was listed; list the skills again"
    );
    assert_nothing_of_the_secret(&registry, "flat", "SKILL.md");
}

#[test]
fn a_bundle_folder_swapped_for_a_link_after_listing_serves_nothing_from_there() {
    let dir = tempfile::tempdir().unwrap();
    let (root, other) = (dir.path().join("skills"), dir.path().join("other"));
    fs::create_dir_all(root.join("b")).unwrap();
    fs::create_dir_all(&other).unwrap();
    fs::write(root.join("b/SKILL.md"), skill_text("b", "Bundle.", "Inside.")).unwrap();
    fs::write(root.join("b/ref.md"), "inside reference\n").unwrap();
    fs::write(other.join("SKILL.md"), skill_text("b", "Bundle.", SECRET)).unwrap();
    fs::write(other.join("ref.md"), SECRET).unwrap();
    fs::write(other.join("secret.txt"), SECRET).unwrap();
    let registry = registry(&root);
    let snapshot = registry.snapshot(None);
    let (_, files) = served(&snapshot, "b", &Default::default()).unwrap();
    fs::rename(root.join("b"), dir.path().join("b-old")).unwrap();
    symlink(&other, root.join("b")).unwrap();

    for relative in ["SKILL.md", "ref.md", "secret.txt"] {
        let uri = resource_uri("b", relative);
        assert_eq!(
            read(&uri, "b", relative, &files, &Decisions::default()).unwrap_err(),
            SkillsError::Changed { name: "b".into() }
        );
    }
    assert_eq!(manifest("b", &files).unwrap_err(), SkillsError::Changed { name: "b".into() });
    assert_nothing_of_the_secret(&registry, "b", "ref.md");
}

/// A folder inside a bundle swapped between a real folder and a link to an
/// outside one while 20,000 reads run: no read returns the outside file (the
/// check-then-open by path did, 147 times in 20,000). The swapper rests a
/// moment in the real state each round and the reads go on (up to 60 s)
/// until some were served and the folder was swapped 1,000 times, so a
/// loaded machine can make neither side starve the other into proving
/// nothing.
#[test]
fn a_folder_swapped_for_a_link_while_reads_run_never_serves_the_outside_file() {
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = (dir.path().join("skills"), dir.path().join("outside"));
    fs::create_dir_all(root.join("r/sub")).unwrap();
    fs::create_dir_all(outside.join("sub")).unwrap();
    fs::write(root.join("r/SKILL.md"), skill_text("r", "Racing.", "Inside.")).unwrap();
    fs::write(root.join("r/sub/file.txt"), "inside\n").unwrap();
    fs::write(outside.join("sub/file.txt"), SECRET).unwrap();
    let registry = registry(&root);
    let snapshot = registry.snapshot(None);
    let (_, files) = served(&snapshot, "r", &Default::default()).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (stop, swaps, sub, parked, link) =
            (Arc::clone(&stop), Arc::clone(&swaps), root.join("r/sub"), root.join("r/.sub-real"), outside.join("sub"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                fs::rename(&sub, &parked).unwrap();
                symlink(&link, &sub).unwrap();
                fs::remove_file(&sub).unwrap();
                fs::rename(&parked, &sub).unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_micros(50));
            }
        })
    };
    let uri = resource_uri("r", "sub/file.txt");
    // Decisions kept at once, so reads go both ways: afresh when a swap
    // moved a change time, from the kept decision when none did.
    let decisions = Decisions::settled_after(Duration::ZERO);
    let started = Instant::now();
    let (mut reads, mut served_inside) = (0, 0);
    let raced = || swaps.load(Ordering::Relaxed) >= 1_000;
    while (reads < 20_000 || served_inside == 0 || !raced()) && started.elapsed() < Duration::from_secs(60) {
        if let Ok(file) = read(&uri, "r", "sub/file.txt", &files, &decisions) {
            assert_ne!(String::from_utf8_lossy(&file.bytes), SECRET, "read {reads} served the outside file");
            served_inside += 1;
        }
        reads += 1;
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(served_inside > 0, "no read succeeded in {reads}");
    assert!(raced(), "the folder was swapped only {} times while {reads} reads ran", swaps.load(Ordering::Relaxed));
}

/// One decision per skill (issue item 7): `skills/get` (the manifest) and
/// `resources/read` agree on every skill, served or refused.
#[test]
fn every_method_gives_one_answer_per_skill() {
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = (dir.path().join("skills"), dir.path().join("outside"));
    fs::create_dir_all(&outside).unwrap();
    // SKILL.md a link inside its folder, and one out of it: both are the
    // file the listing parsed, so both are served, by every method.
    fs::create_dir_all(root.join("inside-link/docs")).unwrap();
    fs::write(root.join("inside-link/docs/real.md"), skill_text("inside-link", "In.", "Body.")).unwrap();
    symlink("docs/real.md", root.join("inside-link/SKILL.md")).unwrap();
    fs::create_dir_all(root.join("outside-link")).unwrap();
    fs::write(outside.join("real.md"), skill_text("outside-link", "Out.", "Body.")).unwrap();
    symlink(outside.join("real.md"), root.join("outside-link/SKILL.md")).unwrap();
    // Over the extension's 512 files: refused, by every method.
    fs::create_dir_all(root.join("huge")).unwrap();
    fs::write(root.join("huge/SKILL.md"), skill_text("huge", "Huge.", "Body.")).unwrap();
    for i in 0..512 {
        fs::write(root.join(format!("huge/f{i}.txt")), "x").unwrap();
    }
    let registry = registry(&root);
    let snapshot = registry.snapshot(None);
    for name in ["inside-link", "outside-link"] {
        let (_, files) = served(&snapshot, name, &Default::default()).unwrap();
        let skill = manifest(name, &files).unwrap();
        let text = read(&resource_uri(name, "SKILL.md"), name, "SKILL.md", &files, &Decisions::default()).unwrap();
        assert!(String::from_utf8(text.bytes).unwrap().contains(&format!("name: {name}")));
        assert!(files.open(name).is_ok());
        assert_eq!(serde_json::to_value(&skill).unwrap()["uri"], format!("skill://{name}/SKILL.md"));
    }
    let (_, files) = served(&snapshot, "huge", &Default::default()).unwrap();
    let refused = SkillsError::TooManyFiles { name: "huge".into() };
    assert_eq!(files.open("huge").unwrap_err(), refused);
    assert_eq!(manifest("huge", &files).unwrap_err(), refused);
    for relative in ["SKILL.md", "f0.txt"] {
        assert_eq!(
            read(&resource_uri("huge", relative), "huge", relative, &files, &Decisions::default()).unwrap_err(),
            refused
        );
    }
}

/// The `skill` tool's body: a skill file that is another file than listed
/// is loaded per a fresh listing (the catalog then says what is there), and
/// an edit saved by renaming over the file keeps working.
#[test]
fn the_tool_loads_a_swapped_skill_file_per_a_fresh_listing() {
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = (dir.path().join("skills"), dir.path().join("outside"));
    fs::create_dir_all(&root).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(root.join("flat.md"), skill_text("flat", "Flat.", "Inside.")).unwrap();
    let registry = registry(&root);
    assert_eq!(registry.snapshot(None).skills[0].candidate.description, "Flat.");

    // Saved by rename: a new inode, the new body.
    fs::write(root.join(".flat.md.tmp"), skill_text("flat", "Edited.", "Edited body.")).unwrap();
    fs::rename(root.join(".flat.md.tmp"), root.join("flat.md")).unwrap();
    assert_eq!(registry.get(None, "flat").unwrap().unwrap().content, "Edited body.");
    assert_eq!(registry.snapshot(None).skills[0].candidate.description, "Edited.");

    // A link to a file that is not a skill: not loaded, as a fresh listing
    // would skip it.
    fs::write(outside.join("secret.txt"), SECRET).unwrap();
    fs::remove_file(root.join("flat.md")).unwrap();
    symlink(outside.join("secret.txt"), root.join("flat.md")).unwrap();
    assert_eq!(registry.get(None, "flat").unwrap(), None);
}

/// A bundle folder replaced by a FIFO after listing is refused at once by
/// every reader (opening it as a folder does not wait for a writer), and the
/// tool's load answers too: one FIFO must not hang every listing.
#[test]
fn a_bundle_folder_swapped_for_a_fifo_is_refused_without_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    fs::create_dir_all(root.join("b")).unwrap();
    fs::write(root.join("b/SKILL.md"), skill_text("b", "Bundle.", "Inside.")).unwrap();
    let registry = Arc::new(registry(&root));
    let snapshot = registry.snapshot(None);
    let (_, files) = served(&snapshot, "b", &Default::default()).unwrap();
    fs::remove_dir_all(root.join("b")).unwrap();
    let fifo = std::ffi::CString::new(root.join("b").into_os_string().into_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path and a mode; mkfifo touches nothing else.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0, "mkfifo");

    let (done, answers) = std::sync::mpsc::channel();
    let reader = Arc::clone(&registry);
    std::thread::spawn(move || {
        let uri = resource_uri("b", "SKILL.md");
        let read = read(&uri, "b", "SKILL.md", &files, &Decisions::default()).map(|_| ());
        let listed = manifest("b", &files).map(|_| ());
        let loaded = reader.get(None, "b").map(|found| found.is_some());
        let _ = done.send((read, listed, loaded));
    });
    let (read, listed, loaded) =
        answers.recv_timeout(Duration::from_secs(10)).expect("a reader hung on the FIFO in the folder's place");
    assert_eq!(read, Err(SkillsError::Changed { name: "b".into() }));
    assert_eq!(listed, Err(SkillsError::Changed { name: "b".into() }));
    assert_eq!(loaded, Ok(false), "the tool's load after a fresh listing: the skill is gone");
}

/// A link inside a bundle serves only a file the walk serves as itself: a
/// link to a hidden file (a `.env`, a `.git/config`) is neither listed nor
/// read; a link to a listed file is both.
#[test]
fn a_link_to_a_hidden_file_serves_nothing_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("skills");
    fs::create_dir_all(root.join("c/docs")).unwrap();
    fs::write(root.join("c/SKILL.md"), skill_text("c", "Links.", "Inside.")).unwrap();
    fs::write(root.join("c/.env"), SECRET).unwrap();
    fs::write(root.join("c/docs/real.md"), "real\n").unwrap();
    symlink(".env", root.join("c/notes.txt")).unwrap();
    symlink("docs/real.md", root.join("c/alias.md")).unwrap();
    let registry = registry(&root);
    let snapshot = registry.snapshot(None);
    let (_, files) = served(&snapshot, "c", &Default::default()).unwrap();
    let listed = serde_json::to_string(&manifest("c", &files).unwrap()).unwrap();
    assert!(!listed.contains("notes.txt") && listed.contains("alias.md"), "{listed}");
    let uri = resource_uri("c", "notes.txt");
    assert_eq!(
        read(&uri, "c", "notes.txt", &files, &Decisions::default()).unwrap_err(),
        SkillsError::NoSuchFile { uri: uri.clone(), name: "c".into() }
    );
    assert_eq!(
        read(&resource_uri("c", "alias.md"), "c", "alias.md", &files, &Decisions::default()).unwrap().bytes,
        b"real\n"
    );
    assert_nothing_of_the_secret(&registry, "c", "notes.txt");
}

/// How long the fixtures below wait after writing before the first read,
/// and how settled a decision must be to be kept there: well past a
/// timestamp tick, so each later change moves a change time.
const SETTLE: Duration = Duration::from_millis(40);

/// A bundle `k` with `refs/a.md`, listed and settled: its files and the
/// decisions a server keeps.
fn kept_fixture(root: &Path) -> (SkillRegistry, super::SkillFiles, Decisions) {
    fs::create_dir_all(root.join("k/refs")).unwrap();
    fs::write(root.join("k/SKILL.md"), skill_text("k", "Kept.", "Body.")).unwrap();
    fs::write(root.join("k/refs/a.md"), "a\n").unwrap();
    let registry = registry(root);
    let snapshot = registry.snapshot(None);
    let (_, files) = served(&snapshot, "k", &Default::default()).unwrap();
    std::thread::sleep(SETTLE * 2);
    (registry, files, Decisions::settled_after(SETTLE))
}

fn reused(decisions: &Decisions) -> usize {
    decisions.reused.load(Ordering::Relaxed)
}

#[test]
fn a_kept_decision_serves_reads_until_a_file_is_added_removed_or_renamed() {
    let dir = tempfile::tempdir().unwrap();
    let (_registry, files, decisions) = kept_fixture(dir.path());
    let read_k = |relative: &str| read(&resource_uri("k", relative), "k", relative, &files, &decisions);
    assert_eq!(read_k("refs/a.md").unwrap().bytes, b"a\n");
    assert_eq!(reused(&decisions), 0, "the first read walks");
    assert_eq!(read_k("refs/a.md").unwrap().bytes, b"a\n");
    assert_eq!(read_k("SKILL.md").unwrap().bytes, skill_text("k", "Kept.", "Body.").as_bytes());
    assert_eq!(reused(&decisions), 2, "the next ones do not");

    // Added in a sub-folder: its change time moved, so the folder is walked again.
    fs::write(dir.path().join("k/refs/b.md"), "b\n").unwrap();
    assert_eq!(read_k("refs/b.md").unwrap().bytes, b"b\n");
    assert_eq!(reused(&decisions), 2);
    // Just changed, so not kept: read afresh until it has settled.
    assert_eq!(read_k("refs/b.md").unwrap().bytes, b"b\n");
    assert_eq!(reused(&decisions), 2);
    std::thread::sleep(SETTLE * 2);
    read_k("refs/b.md").unwrap();
    read_k("refs/b.md").unwrap();
    assert_eq!(reused(&decisions), 3);

    fs::rename(dir.path().join("k/refs/a.md"), dir.path().join("k/refs/c.md")).unwrap();
    let gone = SkillsError::NoSuchFile { uri: resource_uri("k", "refs/a.md"), name: "k".into() };
    assert_eq!(read_k("refs/a.md").unwrap_err(), gone);
    assert_eq!(read_k("refs/c.md").unwrap().bytes, b"a\n");
    std::thread::sleep(SETTLE * 2);
    read_k("refs/c.md").unwrap();
    fs::remove_dir_all(dir.path().join("k/refs")).unwrap();
    let gone = SkillsError::NoSuchFile { uri: resource_uri("k", "refs/c.md"), name: "k".into() };
    assert_eq!(read_k("refs/c.md").unwrap_err(), gone);
}

#[test]
fn an_edit_of_skill_md_after_a_kept_decision_is_checked_again() {
    let dir = tempfile::tempdir().unwrap();
    let (_registry, files, decisions) = kept_fixture(dir.path());
    let read_a = || read(&resource_uri("k", "refs/a.md"), "k", "refs/a.md", &files, &decisions);
    read_a().unwrap();
    read_a().unwrap();
    assert_eq!(reused(&decisions), 1);
    // Rewritten in place (the same file, as the listing opened it), now
    // breaking a rule every verifying client applies.
    let long = "x".repeat(1_100);
    fs::write(dir.path().join("k/SKILL.md"), skill_text("k", &long, "Body.")).unwrap();
    assert!(matches!(read_a().unwrap_err(), SkillsError::Invalid { name, .. } if name == "k"));
    assert_eq!(reused(&decisions), 1);
}

#[test]
fn a_decision_is_kept_only_once_what_it_rests_on_has_settled() {
    let dir = tempfile::tempdir().unwrap();
    let (_registry, files, _) = kept_fixture(dir.path());
    // Written a moment ago by the standard of the server's own margin.
    let decisions = Decisions::default();
    fs::write(dir.path().join("k/refs/new.md"), "new\n").unwrap();
    for _ in 0..3 {
        read(&resource_uri("k", "refs/a.md"), "k", "refs/a.md", &files, &decisions).unwrap();
    }
    assert_eq!(reused(&decisions), 0);
}

#[test]
fn a_folder_swapped_for_a_link_after_a_kept_decision_serves_nothing_from_outside() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("a.md"), SECRET).unwrap();
    let root = dir.path().join("skills");
    let (registry, files, decisions) = kept_fixture(&root);
    let read_a = || read(&resource_uri("k", "refs/a.md"), "k", "refs/a.md", &files, &decisions);
    read_a().unwrap();
    read_a().unwrap();
    assert_eq!(reused(&decisions), 1);
    fs::rename(root.join("k/refs"), root.join("k/.refs-old")).unwrap();
    symlink(&outside, root.join("k/refs")).unwrap();
    let refused = read_a().unwrap_err();
    assert!(matches!(refused, SkillsError::NoSuchFile { .. } | SkillsError::Outside { .. }), "{refused:?}");
    assert_nothing_of_the_secret(&registry, "k", "refs/a.md");
}

#[test]
fn a_skill_listed_is_read_without_walking_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let (_registry, files, decisions) = kept_fixture(dir.path());
    let listed = decisions.manifest("k", &files).unwrap();
    assert_eq!(listed, manifest("k", &files).unwrap());
    for relative in ["SKILL.md", "refs/a.md"] {
        read(&resource_uri("k", relative), "k", relative, &files, &decisions).unwrap();
    }
    assert_eq!(reused(&decisions), 2);
}

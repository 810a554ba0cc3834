//! The tool's reads of a local skill's files (`list`, `read`): what the
//! Skills extension serves, never a hidden file or one outside the folder,
//! even when links are swapped in while reads run.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{MAX_WALK_ENTRIES, list, read};
use crate::providers::local::{LocalProvider, LocalRoots};
use crate::registry::{FileRead, SkillCandidate, SkillProvider};

const SECRET: &str = "HIDDEN-SECRET";

/// The candidate the local provider lists for `name` under `root`.
fn candidate(root: &Path, name: &str) -> SkillCandidate {
    let provider = LocalProvider::new(LocalRoots { custom: vec![root.to_path_buf()], ..LocalRoots::default() });
    let listing = provider.list(None).unwrap();
    listing.candidates.into_iter().find(|candidate| candidate.name == name).expect("the skill is listed")
}

fn bundle(root: &Path, name: &str) -> std::path::PathBuf {
    let folder = root.join(name);
    fs::create_dir_all(&folder).unwrap();
    fs::write(folder.join("SKILL.md"), format!("---\nname: {name}\ndescription: D.\n---\nBody.\n")).unwrap();
    folder
}

/// Runs `swap` on `folder` in a loop on another thread, each half a swap
/// resting 50 µs, while `read` runs (it says whether a read was served),
/// until 200 reads were served and 1,000 swaps made (at most 60 s); fails
/// unless both happened.
fn while_swapping(folder: &Path, swap: fn(&Path, bool), mut read: impl FnMut(usize) -> bool) {
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (stop, swaps, folder) = (Arc::clone(&stop), Arc::clone(&swaps), folder.to_path_buf());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                for back in [false, true] {
                    swap(&folder, back);
                    std::thread::sleep(Duration::from_micros(50));
                }
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let started = Instant::now();
    let (mut reads, mut served) = (0, 0);
    while (served < 200 || swaps.load(Ordering::Relaxed) < 1_000) && started.elapsed() < Duration::from_secs(60) {
        reads += 1;
        served += usize::from(read(reads));
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(served >= 200 && swaps.load(Ordering::Relaxed) >= 1_000, "{served} served, {swaps:?} swaps");
}

/// A link put at a served file's path after the walk (to a hidden file
/// beside it) opens nothing: the read checks it opened the file the walk
/// served. Before the check, such a swap served the hidden file in about
/// one read in sixteen.
#[test]
fn a_link_swapped_in_after_the_walk_never_serves_a_hidden_file() {
    let dir = tempfile::tempdir().unwrap();
    let folder = bundle(dir.path(), "race");
    fs::write(folder.join(".env"), SECRET).unwrap();
    fs::write(folder.join("a.md"), "plain").unwrap();
    let skill = candidate(dir.path(), "race");
    let swap = |folder: &Path, back: bool| {
        if back {
            let _ = symlink(".env", folder.join("a.lnk"));
            let _ = fs::rename(folder.join("a.lnk"), folder.join("a.md"));
        } else {
            let _ = fs::write(folder.join("a.tmp"), "plain");
            let _ = fs::rename(folder.join("a.tmp"), folder.join("a.md"));
        }
    };
    while_swapping(&folder, swap, |reads| match read(&skill, "a.md") {
        Ok(FileRead::Text(text)) => {
            assert!(!text.contains(SECRET), "read {reads} served the hidden file");
            true
        }
        _ => false,
    });
}

/// A folder of needless entries costs a bounded walk: past the bound, the
/// skill's files are neither listed nor read, with a text that says why.
#[test]
fn a_walk_looks_at_a_bounded_number_of_entries() {
    let dir = tempfile::tempdir().unwrap();
    let folder = bundle(dir.path(), "crowded");
    // Hidden files are looked at (and skipped); a hidden folder is not entered.
    let data = folder.join("data");
    fs::create_dir_all(&data).unwrap();
    for i in 0..MAX_WALK_ENTRIES {
        fs::write(data.join(format!(".{i}")), "").unwrap();
    }
    let skill = candidate(dir.path(), "crowded");
    let refused = "skill \"crowded\" has more than 16384 entries below its folder; at most 16384 are looked at";
    assert_eq!(list(&skill, 10).unwrap_err().0, refused);
    assert_eq!(read(&skill, "SKILL.md").unwrap_err().0, refused);
    // One entry fewer (`data` itself counts) is walked.
    fs::remove_file(data.join(".0")).unwrap();
    assert_eq!(list(&skill, 10).unwrap().map(|listing| listing.total), Some(0));
}

/// A folder swapped for a link to a hidden folder beside it, while walks
/// and reads run, never serves the hidden folder's files: the walk lists a
/// folder through the handle it entered, and a read through the link opens
/// another file than the walk served.
#[test]
fn a_folder_swapped_for_a_link_never_serves_a_hidden_folders_files() {
    let dir = tempfile::tempdir().unwrap();
    let folder = bundle(dir.path(), "race");
    fs::create_dir_all(folder.join("sub")).unwrap();
    fs::write(folder.join("sub/config"), "plain").unwrap();
    fs::create_dir_all(folder.join(".git")).unwrap();
    fs::write(folder.join(".git/config"), SECRET).unwrap();
    symlink(".git", folder.join("link")).unwrap();
    let skill = candidate(dir.path(), "race");
    let swap = |folder: &Path, back: bool| {
        let (to, from) = if back { ("link", "sub.real") } else { ("sub.real", "link") };
        let _ = fs::rename(folder.join("sub"), folder.join(to));
        let _ = fs::rename(folder.join(from), folder.join("sub"));
    };
    while_swapping(&folder, swap, |reads| {
        if let Ok(Some(listing)) = list(&skill, 10) {
            // The real folder, under either of its names; never the link's.
            let real = |path: &str| path == "sub/config" || path == "sub.real/config";
            assert!(listing.files.iter().all(|(path, _)| real(path)), "{listing:?}");
        }
        match read(&skill, "sub/config") {
            Ok(FileRead::Text(text)) => {
                assert!(!text.contains(SECRET), "read {reads} served the hidden folder's file");
                true
            }
            _ => false,
        }
    });
}

//! Tests of files the local provider skips or cannot read: malformed,
//! binary, symbolic links, unreadable entries, FIFOs and oversized files.

use super::*;

#[test]
fn malformed_skills_are_skipped_with_path_and_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(&root.join("good/SKILL.md"), &skill_text("good", "d"));
    write(&root.join("no-frontmatter/SKILL.md"), "# Just markdown\n");
    write(&root.join("bad-name/SKILL.md"), &skill_text("Bad_Name", "d"));
    write(&root.join("camel.md"), "---\nname: camel\ndescription: d\nuserInvocable: false\n---\n");
    write(&root.join("maybe.md"), "---\nname: maybe\ndescription: d\nuser-invocable: maybe\n---\n");
    let listing = list(&custom(&[root]), None);
    assert!(listing.complete);
    assert_eq!(names(&listing), ["good"]);
    let skipped: Vec<(PathBuf, &str)> = listing.skipped.iter().map(|s| (s.path.clone(), s.reason.as_str())).collect();
    assert_eq!(
        skipped,
        [
            (
                root.join("bad-name/SKILL.md"),
                "line 2: `name` \"Bad_Name\" does not match the skill-name grammar ^[a-z0-9]+(?:-[a-z0-9]+)*$"
            ),
            (root.join("camel.md"), "line 4: frontmatter field `userInvocable` is unsupported; use `user-invocable`"),
            (
                root.join("maybe.md"),
                "line 4: frontmatter field `user-invocable` must be a boolean (true/false, yes/no, on/off, 1/0), found \"maybe\""
            ),
            (root.join("no-frontmatter/SKILL.md"), "missing frontmatter (the first line must be exactly `---`)"),
        ]
    );
}

#[test]
fn binary_and_non_utf8_files_are_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    fs::write(root.join("binary.md"), b"---\nname: binary\ndescription: d\n---\n\0\0").unwrap();
    fs::write(root.join("latin1.md"), b"---\nname: latin\ndescription: caf\xe9\n---\n").unwrap();
    let listing = list(&custom(&[root]), None);
    assert!(listing.complete);
    assert_eq!(names(&listing), Vec::<&str>::new());
    assert_eq!(
        listing.skipped,
        vec![
            SkippedFile {
                path: root.join("binary.md"),
                reason: "binary file (contains NUL bytes), not a text skill file".into()
            },
            SkippedFile { path: root.join("latin1.md"), reason: "not UTF-8 text (invalid byte at offset 32)".into() },
        ]
    );
}

#[test]
fn skill_md_that_is_not_a_file_is_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir_all(tmp.path().join("odd/SKILL.md")).unwrap();
    let listing = list(&custom(&[tmp.path()]), None);
    assert!(listing.complete);
    assert_eq!(
        listing.skipped,
        vec![SkippedFile { path: tmp.path().join("odd/SKILL.md"), reason: "not a regular file".into() }]
    );
}

#[cfg(unix)]
#[test]
fn symlinks_are_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let root = tmp.path().join("root");
    write(&store.join("linked-dir/SKILL.md"), &skill_text("linked-dir", "d"));
    write(&store.join("flat.md"), &skill_text("linked-flat", "d"));
    write(&store.join("target/SKILL.md"), &skill_text("linked-file", "d"));
    fs::create_dir_all(root.join("via-file")).unwrap();
    symlink(store.join("linked-dir"), root.join("linked-dir")).unwrap();
    symlink(store.join("flat.md"), root.join("linked-flat.md")).unwrap();
    symlink(store.join("target/SKILL.md"), root.join("via-file/SKILL.md")).unwrap();
    let linked_root = tmp.path().join("linked-root");
    symlink(&root, &linked_root).unwrap();

    let listing = list(&custom(&[&linked_root]), None);
    assert!(listing.complete);
    assert_eq!(listing.skipped, vec![]);
    assert_eq!(names(&listing), ["linked-dir", "linked-flat", "linked-file"]);
    // Paths stay as seen through the links, not their targets.
    assert_eq!(
        listing.candidates[0].resource_base,
        Some(ResourceBase::Directory { path: linked_root.join("linked-dir").to_str().unwrap().into() })
    );
}

#[cfg(unix)]
#[test]
fn broken_symlinks_are_skipped_with_a_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    write(&root.join("good.md"), &skill_text("good", "d"));
    symlink(tmp.path().join("missing-dir"), root.join("dangling-dir")).unwrap();
    symlink(tmp.path().join("missing.md"), root.join("dangling.md")).unwrap();
    fs::create_dir_all(root.join("skill")).unwrap();
    symlink(tmp.path().join("missing-skill.md"), root.join("skill/SKILL.md")).unwrap();
    symlink(root.join("loop.md"), root.join("loop.md")).unwrap();

    let listing = list(&custom(&[&root]), None);
    assert!(listing.complete, "a broken link is the author's state, not an I/O failure");
    assert_eq!(names(&listing), ["good"]);
    let skipped: Vec<(PathBuf, bool)> =
        listing.skipped.iter().map(|s| (s.path.clone(), s.reason.starts_with("broken symbolic link: "))).collect();
    assert_eq!(
        skipped,
        [
            (root.join("dangling-dir"), true),
            (root.join("dangling.md"), true),
            (root.join("loop.md"), true),
            (root.join("skill/SKILL.md"), true),
        ]
    );
}

#[cfg(unix)]
#[test]
fn broken_symlink_root_is_reported_but_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    symlink(tmp.path().join("gone"), &root).unwrap();
    let listing = list(&custom(&[&root]), None);
    assert!(listing.complete);
    assert_eq!(listing.skipped.len(), 1);
    assert_eq!(listing.skipped[0].path, root);
    assert!(listing.skipped[0].reason.starts_with("skill root is a broken symbolic link: "));
}

#[test]
fn unreadable_root_makes_the_listing_incomplete_but_keeps_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good");
    write(&good.join("kept.md"), &skill_text("kept", "d"));
    // A name longer than any filesystem allows fails with ENAMETOOLONG:
    // an I/O error that is neither absence nor a permission setting
    // (which these tests, often run as root, could not rely on).
    let unreadable = tmp.path().join("x".repeat(300));
    let listing = list(&custom(&[&unreadable, &good]), None);
    assert!(!listing.complete);
    assert_eq!(names(&listing), ["kept"]);
    assert_eq!(listing.skipped.len(), 1);
    assert_eq!(listing.skipped[0].path, unreadable);
    assert!(listing.skipped[0].reason.starts_with("cannot read skill root: "), "{:?}", listing.skipped);
}

#[cfg(unix)]
#[test]
fn unfollowable_entry_makes_the_listing_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    write(&root.join("kept.md"), &skill_text("kept", "d"));
    symlink(tmp.path().join("y".repeat(300)), root.join("long-link")).unwrap();
    let listing = list(&custom(&[&root]), None);
    assert!(!listing.complete);
    assert_eq!(names(&listing), ["kept"]);
    assert_eq!(listing.skipped[0].path, root.join("long-link"));
    assert!(listing.skipped[0].reason.starts_with("cannot inspect skill entry: "));
}

#[cfg(target_os = "linux")]
#[test]
fn unreadable_skill_file_makes_the_listing_incomplete() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(&root.join("kept.md"), &skill_text("kept", "d"));
    // A regular file whose read fails with EIO at offset 0.
    symlink("/proc/self/mem", root.join("mem.md")).unwrap();
    let listing = list(&custom(&[root]), None);
    assert!(!listing.complete);
    assert_eq!(names(&listing), ["kept"]);
    assert_eq!(listing.skipped[0].path, root.join("mem.md"));
    assert!(listing.skipped[0].reason.starts_with("cannot read skill file: "), "{:?}", listing.skipped);
    // Why it is incomplete, for the registry's warning: what, where, why.
    let problem = format!("cannot read skill file {}: ", root.join("mem.md").display());
    assert!(listing.problems.len() == 1 && listing.problems[0].starts_with(&problem), "{:?}", listing.problems);
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_without_waiting_for_a_writer() {
    // Whatever passed the kind check before, the file is opened without
    // blocking and judged by what was opened.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("SKILL.md");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let (sender, receiver) = std::sync::mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || sender.send(read_skill_bytes(&path).map_err(|error| error.to_string())));
    let read = receiver.recv_timeout(std::time::Duration::from_secs(10)).expect("the read returns without a writer");
    assert_eq!(read, Ok(Err("not a regular file".to_owned())));
}

#[test]
fn a_file_over_the_limit_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("SKILL.md");
    // Sparse: nine MiB that take no room.
    fs::File::create(&path).unwrap().set_len(MAX_SKILL_FILE_BYTES + 1).unwrap();
    assert_eq!(
        read_skill_bytes(&path).unwrap(),
        Err(format!("skill file is {} bytes, over the 8388608-byte limit", MAX_SKILL_FILE_BYTES + 1))
    );
}

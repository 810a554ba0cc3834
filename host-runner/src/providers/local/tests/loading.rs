//! Tests of loading a listed skill: the body re-read from its file, and
//! the errors when it cannot be.

use super::*;

fn listed_one(root: &Path) -> (LocalProvider, SkillCandidate) {
    let provider = custom(&[root]);
    let mut listing = list(&provider, None);
    assert_eq!(listing.candidates.len(), 1, "{listing:?}");
    (provider, listing.candidates.remove(0))
}

#[test]
fn load_returns_the_body_and_the_listed_placement() {
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("s/SKILL.md"), "---\nname: s\ndescription: d\n---\n\n  Do this.\n\n");
    let (provider, candidate) = listed_one(tmp.path());
    let loaded = provider.load(None, &candidate).unwrap().expect("present");
    assert_eq!(loaded, SkillDefinition { summary: candidate, content: "Do this.".into() });
}

#[test]
fn load_rereads_the_file_every_time() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("s.md");
    write(&file, "---\nname: s\ndescription: d\n---\nFirst.\n");
    let (provider, candidate) = listed_one(tmp.path());
    assert_eq!(provider.load(None, &candidate).unwrap().unwrap().content, "First.");
    write(&file, "---\nname: s\ndescription: changed\ndisable-model-invocation: true\n---\nSecond.\n");
    let loaded = provider.load(None, &candidate).unwrap().unwrap();
    assert_eq!(loaded.content, "Second.");
    assert_eq!(loaded.summary.description, "changed");
    assert!(!loaded.summary.invocation.model_invocable);
}

#[test]
fn load_returns_a_renamed_skill_as_found() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("s.md");
    write(&file, &skill_text("before", "d"));
    let (provider, candidate) = listed_one(tmp.path());
    write(&file, &skill_text("after", "d"));
    let loaded = provider.load(None, &candidate).unwrap().unwrap();
    assert_eq!(loaded.summary.name, "after");
}

#[test]
fn load_finds_nothing_when_the_file_is_gone_or_invalid() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("s.md");
    write(&file, &skill_text("s", "d"));
    let (provider, candidate) = listed_one(tmp.path());
    write(&file, "---\nname: s\n---\nNo description any more.\n");
    assert_eq!(provider.load(None, &candidate), Ok(None));
    fs::write(&file, b"\xff\xfe").unwrap();
    assert_eq!(provider.load(None, &candidate), Ok(None));
    fs::remove_file(&file).unwrap();
    assert_eq!(provider.load(None, &candidate), Ok(None));
}

#[cfg(target_os = "linux")]
#[test]
fn skill_files_over_the_size_limit_are_skipped_and_never_loaded() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let limit = MAX_SKILL_FILE_BYTES as usize;
    // Exactly at the limit: listed and loaded whole.
    let head = "---\nname: at-limit\ndescription: d\n---\n";
    let at_limit = root.join("at-limit.md");
    write(&at_limit, &format!("{head}{}", "x".repeat(limit - head.len())));
    // A 50 MB body: skipped with its size, the listing still complete.
    let head = "---\nname: huge\ndescription: d\n---\n";
    write(&root.join("huge.md"), &format!("{head}{}", "x".repeat(50_000_000)));
    let listing = list(&custom(&[root]), None);
    assert!(listing.complete);
    assert_eq!(names(&listing), ["at-limit"]);
    assert_eq!(
        listing.skipped,
        [SkippedFile {
            path: root.join("huge.md"),
            reason: format!("skill file is {} bytes, over the 8388608-byte limit", 50_000_000 + head.len()),
        }]
    );
    let provider = custom(&[root]);
    let candidate = listing.candidates[0].clone();
    let loaded = provider.load(None, &candidate).unwrap().expect("at the limit loads");
    assert_eq!(loaded.content.len(), limit - "---\nname: at-limit\ndescription: d\n---\n".len());
    // Grown past the limit after the listing: gone, as far as the model knows.
    fs::OpenOptions::new().append(true).open(&at_limit).unwrap().write_all(b"x").unwrap();
    assert_eq!(provider.load(None, &candidate), Ok(None));
}

#[test]
fn load_reports_an_io_failure_as_a_provider_error() {
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("s.md"), &skill_text("s", "d"));
    let (provider, mut candidate) = listed_one(tmp.path());
    candidate.path = Some(PathBuf::from("/proc/self/mem"));
    let err = provider.load(None, &candidate).unwrap_err();
    assert!(err.0.starts_with("cannot read skill file /proc/self/mem: "), "{err}");
}

#[test]
fn load_without_a_path_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("s.md"), &skill_text("s", "d"));
    let (provider, mut candidate) = listed_one(tmp.path());
    candidate.path = None;
    assert_eq!(
        provider.load(None, &candidate),
        Err(ProviderError("skill \"s\" has no file, so the local provider cannot load it".into()))
    );
}

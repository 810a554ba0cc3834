//! Tests of the local provider, against real files in temporary directories.

#[cfg(unix)]
use std::os::unix::fs::symlink;

use std::io::Write;

use super::*;
use crate::registry::InvocationPolicy;

/// Copies of two public skill collections, kept with the end-to-end tests.
const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/corpus");

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("create parent");
    }
    fs::write(path, text).expect("write file");
}

fn skill_text(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n\nBody of {name}.\n")
}

fn custom(dirs: &[&Path]) -> LocalProvider {
    LocalProvider::new(LocalRoots { custom: dirs.iter().map(|d| d.to_path_buf()).collect(), ..LocalRoots::default() })
}

fn names(listing: &Listing) -> Vec<&str> {
    listing.candidates.iter().map(|c| c.name.as_str()).collect()
}

fn list(provider: &LocalProvider, cwd: Option<&Path>) -> Listing {
    provider.list(cwd).expect("the local provider never fails a listing")
}

#[test]
fn name_is_local() {
    assert_eq!(custom(&[]).name(), "local");
}

#[test]
fn lists_folder_and_flat_skills_with_their_resource_bases() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(&root.join("folder-skill/SKILL.md"), &skill_text("folder-skill", "A folder skill."));
    write(&root.join("flat-skill.md"), &skill_text("flat-skill", "A flat skill."));

    let listing = list(&custom(&[root]), None);
    assert!(listing.complete);
    assert_eq!(listing.skipped, vec![]);
    assert_eq!(
        listing.candidates,
        vec![
            SkillCandidate {
                name: "flat-skill".into(),
                description: "A flat skill.".into(),
                when_to_use: None,
                invocation: InvocationPolicy::default(),
                source: "custom".into(),
                provider: "local".into(),
                // A flat file's resources are resolved against its root.
                resource_base: Some(ResourceBase::Directory { path: root.to_str().unwrap().into() }),
                rank: 300,
                path: Some(root.join("flat-skill.md")),
                metadata: None,
            },
            SkillCandidate {
                name: "folder-skill".into(),
                description: "A folder skill.".into(),
                when_to_use: None,
                invocation: InvocationPolicy::default(),
                source: "custom".into(),
                provider: "local".into(),
                resource_base: Some(ResourceBase::Directory {
                    path: root.join("folder-skill").to_str().unwrap().into()
                }),
                rank: 300,
                path: Some(root.join("folder-skill/SKILL.md")),
                metadata: None,
            },
        ]
    );
}

#[test]
fn candidates_carry_optional_fields_and_policy() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        &tmp.path().join("a/SKILL.md"),
        "---\nname: a\ndescription: d\nwhenToUse: Later.\ndisable-model-invocation: true\nuser-invocable: yes\nmetadata:\n  k: v\n---\nBody\n",
    );
    let listing = list(&custom(&[tmp.path()]), None);
    let candidate = &listing.candidates[0];
    assert_eq!(candidate.when_to_use.as_deref(), Some("Later."));
    assert_eq!(candidate.invocation, InvocationPolicy { model_invocable: false, user_invocable: true });
    assert_eq!(candidate.metadata, Some(serde_json::json!({"k": "v"})));
}

#[test]
fn only_one_level_deep_and_only_md_files() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(&root.join("group/nested/SKILL.md"), &skill_text("nested", "Too deep."));
    write(&root.join("group/other.md"), &skill_text("other", "Not SKILL.md."));
    write(&root.join("notes.txt"), &skill_text("notes", "Not markdown."));
    write(&root.join("UPPER.MD"), &skill_text("upper", "Suffix is case-sensitive."));
    write(&root.join("empty-folder/README.md"), "no skill here");
    let listing = list(&custom(&[root]), None);
    assert_eq!(names(&listing), Vec::<&str>::new());
    assert_eq!(listing.skipped, vec![]);
    assert!(listing.complete);
}

#[test]
fn entries_are_listed_in_byte_order() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    // Locale order would put `a-skill` before `B-dir`; byte order puts
    // uppercase first.
    for (entry, name) in [("b-dir", "b"), ("B-dir", "c"), ("a-skill", "d"), ("_x", "e"), ("10", "f"), ("9", "g")] {
        write(&root.join(entry).join("SKILL.md"), &skill_text(name, "d"));
    }
    let listing = list(&custom(&[root]), None);
    // `10` < `9` < `B-dir` < `_x` < `a-skill` < `b-dir`
    assert_eq!(names(&listing), ["f", "g", "c", "e", "d", "b"]);
}

#[test]
fn roots_are_listed_in_rank_order_with_their_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path();
    let project = base.join("project");
    fs::create_dir_all(project.join(".git")).unwrap();
    let cwd = project.join("src/deep");
    fs::create_dir_all(&cwd).unwrap();
    write(&project.join(".dsh/skills/p-dsh/SKILL.md"), &skill_text("p-dsh", "d"));
    write(&project.join(".agents/skills/p-agents/SKILL.md"), &skill_text("p-agents", "d"));
    write(&base.join("custom1/c-one.md"), &skill_text("c-one", "d"));
    write(&base.join("custom2/c-two.md"), &skill_text("c-two", "d"));
    write(&base.join("dsh-home/skills/u-dsh/SKILL.md"), &skill_text("u-dsh", "d"));
    write(&base.join("agents-home/skills/u-agents/SKILL.md"), &skill_text("u-agents", "d"));
    write(&base.join("bundled/b-skill/SKILL.md"), &skill_text("b-skill", "d"));

    let provider = LocalProvider::new(LocalRoots {
        dsh_home: Some(base.join("dsh-home")),
        agents_home: Some(base.join("agents-home")),
        custom: vec![base.join("custom1"), base.join("custom2")],
        bundled: Some(base.join("bundled")),
    });
    let listing = list(&provider, Some(&cwd));
    assert!(listing.complete);
    let got: Vec<(&str, &str, i64)> =
        listing.candidates.iter().map(|c| (c.name.as_str(), c.source.as_str(), c.rank)).collect();
    assert_eq!(
        got,
        [
            ("p-dsh", "project-dsh", 100),
            ("p-agents", "project-agents", 200),
            ("c-one", "custom", 300),
            ("c-two", "custom", 300),
            ("u-dsh", "user-dsh", 400),
            ("u-agents", "user-agents", 500),
            ("b-skill", "bundled", 600),
        ]
    );
    assert_eq!(listing.candidates[0].path, Some(project.join(".dsh/skills/p-dsh/SKILL.md")));

    // Without a cwd there are no project roots.
    let listing = list(&provider, None);
    assert_eq!(names(&listing), ["c-one", "c-two", "u-dsh", "u-agents", "b-skill"]);
}

#[test]
fn project_root_is_the_nearest_ancestor_with_git() {
    let tmp = tempfile::tempdir().unwrap();
    let outer = tmp.path().join("outer");
    let inner = outer.join("inner");
    let cwd = inner.join("a/b");
    fs::create_dir_all(&cwd).unwrap();
    fs::create_dir_all(outer.join(".git")).unwrap();
    assert_eq!(project_root(&cwd), outer);
    // A worktree or submodule has a `.git` file; it counts too.
    write(&inner.join(".git"), "gitdir: ../.git/worktrees/inner\n");
    assert_eq!(project_root(&cwd), inner);
    assert_eq!(project_root(&inner), inner);
    assert_eq!(project_root(&inner.join("a/./b/..")), inner);
}

#[test]
fn project_root_falls_back_to_the_cwd() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().join("x/y");
    fs::create_dir_all(&cwd).unwrap();
    // Unless some ancestor of the temp dir is a repository, which a test
    // machine should not have.
    assert_eq!(project_root(&cwd), cwd);
}

#[test]
fn project_roots_come_from_the_git_ancestor_not_the_cwd() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("p");
    write(&project.join(".git"), "gitdir: elsewhere\n");
    write(&project.join(".agents/skills/top.md"), &skill_text("top", "d"));
    let cwd = project.join("sub");
    write(&cwd.join(".agents/skills/sub.md"), &skill_text("sub", "d"));
    let listing = list(&custom(&[]), Some(&cwd));
    assert_eq!(names(&listing), ["top"]);
}

#[test]
fn system_folder_is_skipped_under_user_dsh_only() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path();
    write(&base.join("dsh/skills/.system/sys-dsh/SKILL.md"), &skill_text("sys-dsh", "d"));
    write(&base.join("dsh/skills/.system/SKILL.md"), &skill_text("system-dsh", "d"));
    write(&base.join("dsh/skills/mine/SKILL.md"), &skill_text("mine", "d"));
    write(&base.join("agents/skills/.system/SKILL.md"), &skill_text("system-agents", "d"));
    write(&base.join("custom/.system/SKILL.md"), &skill_text("system-custom", "d"));
    let provider = LocalProvider::new(LocalRoots {
        dsh_home: Some(base.join("dsh")),
        agents_home: Some(base.join("agents")),
        custom: vec![base.join("custom")],
        bundled: None,
    });
    let listing = list(&provider, None);
    assert_eq!(names(&listing), ["system-custom", "mine", "system-agents"]);
}

#[test]
fn missing_roots_are_empty_and_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let provider = LocalProvider::new(LocalRoots {
        dsh_home: Some(tmp.path().join("no-dsh")),
        agents_home: Some(tmp.path().join("no-agents")),
        custom: vec![tmp.path().join("nope")],
        bundled: Some(tmp.path().join("no-bundle")),
    });
    let listing = list(&provider, Some(tmp.path()));
    assert_eq!(listing, Listing { complete: true, ..Listing::default() });
}

#[test]
fn root_below_a_file_is_absent() {
    let tmp = tempfile::tempdir().unwrap();
    // `<project>/.dsh` is a file, so `.dsh/skills` cannot exist.
    write(&tmp.path().join(".git"), "");
    write(&tmp.path().join(".dsh"), "not a folder");
    let listing = list(&custom(&[]), Some(tmp.path()));
    assert_eq!(listing, Listing { complete: true, ..Listing::default() });
}

#[test]
fn root_that_is_a_file_is_skipped_with_a_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("skills.md");
    write(&file, &skill_text("x", "d"));
    let listing = list(&custom(&[&file]), None);
    assert!(listing.complete);
    assert_eq!(names(&listing), Vec::<&str>::new());
    assert_eq!(listing.skipped, vec![SkippedFile { path: file, reason: "skill root is not a directory".into() }]);
}

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
}

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

fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
    move |key| pairs.iter().find(|(k, _)| *k == key).map(|(_, v)| OsString::from(v))
}

#[test]
fn env_roots_default_under_home() {
    let roots = LocalRoots::from_vars(vars(&[("HOME", "/home/u")]), Some(Path::new("/cwd")));
    assert_eq!(roots.dsh_home, Some(PathBuf::from("/home/u/.dsh")));
    assert_eq!(roots.agents_home, Some(PathBuf::from("/home/u/.agents")));
    assert!(roots.custom.is_empty());
    assert_eq!(roots.bundled, None);
}

#[test]
fn env_roots_honour_overrides() {
    let roots = LocalRoots::from_vars(
        vars(&[("HOME", "/home/u"), ("DSH_HOME", "~/alt-dsh"), ("DSH_AGENTS_HOME", "rel/agents")]),
        Some(Path::new("/cwd")),
    );
    assert_eq!(roots.dsh_home, Some(PathBuf::from("/home/u/alt-dsh")));
    assert_eq!(roots.agents_home, Some(PathBuf::from("/cwd/rel/agents")));
}

#[test]
fn env_roots_treat_blank_overrides_as_unset() {
    let roots = LocalRoots::from_vars(
        vars(&[("HOME", "/home/u"), ("DSH_HOME", "  "), ("DSH_AGENTS_HOME", "")]),
        Some(Path::new("/cwd")),
    );
    assert_eq!(roots.dsh_home, Some(PathBuf::from("/home/u/.dsh")));
    assert_eq!(roots.agents_home, Some(PathBuf::from("/home/u/.agents")));
}

#[test]
fn env_roots_without_home() {
    let roots = LocalRoots::from_vars(vars(&[("DSH_HOME", "/d")]), None);
    assert_eq!(roots.dsh_home, Some(PathBuf::from("/d")));
    assert_eq!(roots.agents_home, None);
    let roots = LocalRoots::from_vars(vars(&[("DSH_AGENTS_HOME", "~/a")]), None);
    assert_eq!(roots.agents_home, None, "`~` needs a home");
}

/// Lists a corpus folder as a custom root: every skill folder in it must
/// be listed and nothing skipped.
fn assert_corpus_lists_every_skill(folder: &str) -> Listing {
    let root = Path::new(CORPUS).join(folder);
    assert!(root.is_dir(), "corpus folder {} is missing", root.display());
    let mut expected: Vec<String> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("SKILL.md").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    expected.sort();
    assert!(!expected.is_empty());
    let listing = list(&custom(&[&root]), None);
    assert!(listing.complete);
    assert_eq!(listing.skipped, vec![]);
    // Each folder is named after its skill.
    assert_eq!(names(&listing), expected);
    for candidate in &listing.candidates {
        let loaded = custom(&[&root]).load(None, candidate).unwrap().expect("loads");
        assert!(!loaded.content.is_empty(), "{} has a body", candidate.name);
        assert_eq!(loaded.summary, *candidate);
    }
    listing
}

#[test]
fn anthropic_skills_corpus_lists_every_skill() {
    let listing = assert_corpus_lists_every_skill("anthropic-skills");
    assert_eq!(listing.candidates.len(), 12);
    assert!(listing.candidates.iter().all(|c| c.invocation == InvocationPolicy::default()));
}

#[test]
fn dsh_agents_skills_corpus_lists_every_skill() {
    let listing = assert_corpus_lists_every_skill("dsh-agents-skills");
    assert_eq!(listing.candidates.len(), 11);
    let translate = listing.candidates.iter().find(|c| c.name == "dsh-translate-docs").unwrap();
    assert_eq!(translate.invocation, InvocationPolicy { model_invocable: false, user_invocable: true });
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

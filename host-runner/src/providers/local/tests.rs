//! Tests of the local provider, against real files in temporary directories.
//!
//! The shared fixtures, the shape of a listing and the public corpora are
//! here; roots, refused files and loading have their own files.

mod loading;
mod refused;
mod roots;

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
fn a_listed_digest_is_the_sha256_of_the_body_and_the_load_agrees() {
    let tmp = tempfile::tempdir().unwrap();
    write(&tmp.path().join("one.md"), "---\nname: one\ndescription: d\n---\nBody.\n");
    let provider = custom(&[tmp.path()]);
    let listed = list(&provider, None).candidates.remove(0);
    // sha256("Body.\n"): the body as the tool returns it, not the frontmatter.
    let body = parse_skill_file("---\nname: one\ndescription: d\n---\nBody.\n").unwrap().body;
    assert_eq!(listed.body_digest, Some(body_digest(&body)));
    let loaded = provider.load(None, &listed).unwrap().unwrap();
    assert_eq!(loaded.summary.body_digest, listed.body_digest);
    // A changed description alone leaves the body's digest as it was.
    write(&tmp.path().join("one.md"), "---\nname: one\ndescription: other\n---\nBody.\n");
    assert_eq!(list(&provider, None).candidates[0].body_digest, listed.body_digest);
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
                body_digest: Some(body_digest(
                    &parse_skill_file(&skill_text("flat-skill", "A flat skill.")).unwrap().body
                )),
                // What the listing opened: the file, no folder of its own.
                listed: Some(ListedFiles { file: identity(&root.join("flat-skill.md")), folder: None }),
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
                body_digest: Some(body_digest(
                    &parse_skill_file(&skill_text("folder-skill", "A folder skill.")).unwrap().body
                )),
                listed: Some(ListedFiles {
                    file: identity(&root.join("folder-skill/SKILL.md")),
                    folder: Some(identity(&root.join("folder-skill"))),
                }),
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

/// The identity of what is at `path`, links followed.
fn identity(path: &Path) -> FileIdentity {
    FileIdentity::of(&fs::metadata(path).unwrap()).unwrap()
}

//! Tests of the skill roots: their rank order and sources, the project
//! root found from the cwd, and the roots taken from the environment.

use super::*;

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

//! The public skill collections in `fixtures/corpus/` through `skill-host`:
//! every skill discovered from each kind of root with the right source, and
//! exactly what `lint` reports on them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::common::{Sandbox, copy_tree, path, repo_root, skill_host_bin, stderr, stdout};

/// The collections, each with its number of skills.
const COLLECTIONS: [(&str, usize); 2] = [("anthropic-skills", 12), ("dsh-agents-skills", 11)];

/// What `skill-host lint anthropic-skills dsh-agents-skills` prints, run in
/// the corpus folder. Read from the files:
/// - `claude-api`'s description is 1068 characters, over the
///   specification's 1024 (and so over the catalog's 500);
/// - `mcp-builder` links to `./reference/*.md` files the fixture left out
///   (the corpus README: "bundled scripts and assets are left out");
/// - `record-browser-gif`'s description is 504 characters, so the catalog
///   cuts its end.
///
/// Every other key in the two collections is known (`license` in the
/// Anthropic skills, the two invocation keys in `dsh-translate-docs`), every
/// name matches its folder, and the links in `dsh-translate-docs` that look
/// missing (`[English](foo.md)`) are inside code spans.
const CORPUS_LINT: &str = "\
anthropic-skills/claude-api/SKILL.md:3: error: `description` is 1068 characters; the Agent Skills specification allows at most 1024
anthropic-skills/claude-api/SKILL.md:3: warning: `description` is 1068 characters with whitespace collapsed; the catalog cuts it to 500 by default
anthropic-skills/mcp-builder/SKILL.md:58: warning: link target `./reference/mcp_best_practices.md` does not exist
anthropic-skills/mcp-builder/SKILL.md:62: warning: link target `./reference/node_mcp_server.md` does not exist
anthropic-skills/mcp-builder/SKILL.md:66: warning: link target `./reference/python_mcp_server.md` does not exist
anthropic-skills/mcp-builder/SKILL.md:83: warning: link target `./reference/node_mcp_server.md` does not exist
anthropic-skills/mcp-builder/SKILL.md:84: warning: link target `./reference/python_mcp_server.md` does not exist
anthropic-skills/mcp-builder/SKILL.md:155: warning: link target `./reference/evaluation.md` does not exist
anthropic-skills/mcp-builder/SKILL.md:204: warning: link target `./reference/mcp_best_practices.md` does not exist
anthropic-skills/mcp-builder/SKILL.md:216: warning: link target `./reference/python_mcp_server.md` does not exist
anthropic-skills/mcp-builder/SKILL.md:223: warning: link target `./reference/node_mcp_server.md` does not exist
anthropic-skills/mcp-builder/SKILL.md:231: warning: link target `./reference/evaluation.md` does not exist
dsh-agents-skills/record-browser-gif/SKILL.md:3: warning: `description` is 504 characters with whitespace collapsed; the catalog cuts it to 500 by default
";

fn corpus() -> PathBuf {
    repo_root().join("tests/fixtures/corpus")
}

/// The collection's skill folders (those holding a `SKILL.md`), sorted.
fn skill_folders(collection: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(corpus().join(collection))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.join("SKILL.md").is_file())
        .map(|path| path.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// A project (marked by `.git`) whose `.agents/skills` is a copy of
/// `collection`.
fn project_with(sandbox: &Sandbox, collection: &str) -> PathBuf {
    let project = sandbox.path().join(format!("project-{collection}"));
    std::fs::create_dir_all(project.join(".git")).unwrap();
    copy_tree(&corpus().join(collection), &project.join(".agents/skills"));
    project
}

/// `skill-host skills --json` with `args`, checked to succeed quietly.
fn skills_json(sandbox: &Sandbox, args: &[&str]) -> Value {
    let output = sandbox.run(&[&["skills", "--json"], args].concat());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    serde_json::from_str(&stdout(&output)).unwrap()
}

/// `skill-host` run in `dir`, with the sandbox's user roots.
fn run_in(sandbox: &Sandbox, dir: &Path, args: &[&str]) -> Output {
    Command::new(skill_host_bin())
        .current_dir(dir)
        .args(args)
        .env("DSH_HOME", sandbox.path().join("home/dsh"))
        .env("DSH_AGENTS_HOME", sandbox.path().join("home/agents"))
        .output()
        .expect("skill-host runs")
}

/// The policy a reader of the collections expects: only
/// `dsh-translate-docs` withholds itself from the model.
fn expected_invocation(name: &str) -> Value {
    json!({"modelInvocable": name != "dsh-translate-docs", "userInvocable": true})
}

#[test]
fn every_skill_of_each_collection_is_listed_from_a_project() {
    let sandbox = Sandbox::new();
    for (collection, count) in COLLECTIONS {
        let project = project_with(&sandbox, collection);
        let listed = skills_json(&sandbox, &["--cwd", path(&project)]);
        let folders = skill_folders(collection);
        assert_eq!(folders.len(), count, "{collection}");
        let expected: Vec<Value> = folders
            .iter()
            .map(|name| {
                json!({
                    "name": name,
                    "source": "project-agents",
                    "rank": 200,
                    "provider": "local",
                    "path": project.join(".agents/skills").join(name).join("SKILL.md").to_str().unwrap(),
                    "invocation": expected_invocation(name),
                })
            })
            .collect();
        let got: Vec<Value> = listed["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|skill| {
                assert!(!skill["description"].as_str().unwrap().is_empty());
                let mut skill = skill.clone();
                skill.as_object_mut().unwrap().remove("description");
                skill
            })
            .collect();
        assert_eq!(got, expected, "{collection}");
        // Nothing is skipped or shadowed: `LICENSE`, `LICENSE.txt`,
        // `references/` and `agents/openai.yaml` are not skill files.
        assert_eq!(listed["shadowed"], json!([]), "{collection}");
        assert_eq!(listed["skipped"], json!([]), "{collection}");
        assert_eq!(listed["complete"], json!(true), "{collection}");
    }
}

#[test]
fn skills_dir_and_bundled_dir_are_custom_and_bundled_roots() {
    let sandbox = Sandbox::new();
    let empty = sandbox.path().join("empty");
    std::fs::create_dir_all(empty.join(".git")).unwrap();
    let anthropic = corpus().join("anthropic-skills");
    let dsh = corpus().join("dsh-agents-skills");

    // Both options before the command, as global options may be.
    let output = sandbox.run(&[
        "--skills-dir",
        path(&anthropic),
        "--bundled-dir",
        path(&dsh),
        "skills",
        "--json",
        "--cwd",
        path(&empty),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let placement = |name: &str| {
        let skill = listed["skills"].as_array().unwrap().iter().find(|skill| skill["name"] == name).unwrap();
        (skill["source"].clone(), skill["rank"].clone(), skill["path"].clone())
    };
    for name in skill_folders("anthropic-skills") {
        let file = anthropic.join(&name).join("SKILL.md");
        assert_eq!(placement(&name), (json!("custom"), json!(300), json!(path(&file))));
    }
    for name in skill_folders("dsh-agents-skills") {
        let file = dsh.join(&name).join("SKILL.md");
        assert_eq!(placement(&name), (json!("bundled"), json!(600), json!(path(&file))));
    }
    assert_eq!(listed["skills"].as_array().unwrap().len(), 23);

    // Repeated --skills-dir roots keep their order; the same collection as
    // a later root and as the bundled root is shadowed by the first, skill
    // by skill.
    let listed = skills_json(
        &sandbox,
        &[
            "--cwd",
            path(&empty),
            "--skills-dir",
            path(&dsh),
            "--skills-dir",
            path(&anthropic),
            "--bundled-dir",
            path(&dsh),
        ],
    );
    assert_eq!(listed["skills"].as_array().unwrap().len(), 23);
    let shadowed: Vec<(String, Value, Value)> = listed["shadowed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap().to_owned(), s["source"].clone(), s["by"]["source"].clone()))
        .collect();
    let expected: Vec<(String, Value, Value)> =
        skill_folders("dsh-agents-skills").into_iter().map(|name| (name, json!("bundled"), json!("custom"))).collect();
    assert_eq!(shadowed, expected);
}

#[test]
fn lint_output_on_the_collections_is_pinned() {
    let sandbox = Sandbox::new();
    let output = run_in(&sandbox, &corpus(), &["lint", "anthropic-skills", "dsh-agents-skills"]);
    assert_eq!(stdout(&output), CORPUS_LINT);
    assert_eq!(stderr(&output), "23 skill files: 1 error, 12 warnings\n");
    assert_eq!(output.status.code(), Some(1));

    // Warnings alone pass.
    let output = run_in(&sandbox, &corpus(), &["lint", "dsh-agents-skills"]);
    assert_eq!(stdout(&output), CORPUS_LINT.lines().last().unwrap().to_owned() + "\n");
    assert_eq!(stderr(&output), "11 skill files: 0 errors, 1 warning\n");
    assert_eq!(output.status.code(), Some(0));

    // A bundle folder and a single file are linted alone.
    let output = run_in(&sandbox, &corpus(), &["lint", "anthropic-skills/claude-api"]);
    assert_eq!(stdout(&output), CORPUS_LINT.lines().take(2).map(|line| format!("{line}\n")).collect::<String>());
    assert_eq!(output.status.code(), Some(1));
    let output = run_in(&sandbox, &corpus(), &["lint", "anthropic-skills/skill-creator/SKILL.md"]);
    assert_eq!((stdout(&output), stderr(&output)), (String::new(), "1 skill file: 0 errors, 0 warnings\n".into()));
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn lint_without_dirs_reads_the_roots_the_local_provider_reads() {
    let sandbox = Sandbox::new();
    let project = project_with(&sandbox, "dsh-agents-skills");
    let anthropic = corpus().join("anthropic-skills");
    // From a folder inside the project: its `.agents/skills`, then the
    // custom root, in the provider's rank order.
    let inside = project.join("src");
    std::fs::create_dir_all(&inside).unwrap();
    let output = run_in(&sandbox, &inside, &["lint", "--skills-dir", path(&anthropic)]);
    let skills = project.join(".agents/skills");
    let expected: String = CORPUS_LINT
        .lines()
        .filter(|line| line.starts_with("dsh-agents-skills/"))
        .chain(CORPUS_LINT.lines().filter(|line| line.starts_with("anthropic-skills/")))
        .map(|line| {
            let line = line.replacen("dsh-agents-skills/", &format!("{}/", skills.display()), 1).replacen(
                "anthropic-skills/",
                &format!("{}/", anthropic.display()),
                1,
            );
            line + "\n"
        })
        .collect();
    assert_eq!(stdout(&output), expected);
    assert_eq!(stderr(&output), "23 skill files: 1 error, 12 warnings\n");
    assert_eq!(output.status.code(), Some(1));

    // `--cwd` names the folder instead; a folder with no roots has nothing.
    let output = sandbox.run(&["lint", "--cwd", path(&sandbox.path().join("home"))]);
    assert_eq!((stdout(&output), stderr(&output)), (String::new(), "0 skill files: 0 errors, 0 warnings\n".into()));
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn lint_of_a_missing_path_is_a_host_failure() {
    let sandbox = Sandbox::new();
    let missing = sandbox.path().join("missing");
    let output = sandbox.run(&["lint", path(&missing)]);
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        stderr(&output),
        format!("error: cannot lint {}: No such file or directory (os error 2)\n", missing.display())
    );
}

//! The drop-in as a DeepSeek Harness user gets it: the tarball made by the
//! documented command (`npm run pack` in hosts/node, with the `skill-host`
//! this test run built), installed into a fresh npm project outside the
//! repository together with examples/dsh-agent and its published packages,
//! and the example run on Node 22 with no cargo, rustc or skill-host on
//! `PATH` and `HOME`/`XDG_CACHE_HOME` in the project's temporary folder. The
//! model must see the skill catalog and load a skill through the `skill`
//! tool, from the translation of the component the tarball carries: the
//! installed project holds no jco, and nothing is cached or written.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{copy_tree, path, repo_root, skill_host_bin, stderr, stdout};
use crate::mcp_conformance::{node, output_within};

/// Each npm command and the example itself; a run takes seconds.
const DEADLINE: Duration = Duration::from_secs(180);

/// npm as the README runs it: against the warm cache that hosts/node's
/// install filled, without audit or funding requests.
fn npm(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("npm");
    command.args(args).current_dir(dir).env_remove("npm_config_prefix");
    command
}

/// Copies `entries` (files or folders) of `from` into `to`: not what an
/// install left there (node_modules, tarballs).
fn copy_entries(from: &Path, to: &Path, entries: &[&str]) {
    std::fs::create_dir_all(to).unwrap();
    for entry in entries {
        let source = from.join(entry);
        if source.is_dir() {
            copy_tree(&source, &to.join(entry));
        } else {
            std::fs::copy(&source, to.join(entry)).unwrap_or_else(|error| panic!("{}: {error}", source.display()));
        }
    }
}

/// `PATH` without any folder holding cargo, rustc or skill-host, Node 22's first.
fn path_without_rust(node: &Path) -> std::ffi::OsString {
    let current = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![node.parent().unwrap().to_path_buf()];
    dirs.extend(
        std::env::split_paths(&current)
            .filter(|dir| ["cargo", "rustc", "skill-host"].iter().all(|tool| !dir.join(tool).exists())),
    );
    std::env::join_paths(dirs).unwrap()
}

#[test]
fn the_packed_drop_in_runs_the_example_agent_without_rust() {
    assert!(
        repo_root().join("hosts/node/node_modules/@bytecodealliance/jco").is_dir(),
        "the Node.js host's dependencies are missing: run `npm install --no-audit --no-fund` in hosts/node (.ci/run does)"
    );
    let node = node();
    let started = Instant::now();
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path().canonicalize().unwrap();
    assert!(!root.starts_with(repo_root()), "the project must be outside the repository");

    // The tarball, by the documented command, in a copy of hosts/node's
    // package files: `npm run pack` writes plugin.wasm beside package.json
    // while it packs, which the drop-in tests running meanwhile would read.
    let package = root.join("dsh-tool-skill-wasm");
    copy_entries(
        &repo_root().join("hosts/node"),
        &package,
        &["package.json", ".npmrc", "README.md", "scripts", "src", "dsh"],
    );
    // Its packages (jco translates the component while packing), as installed.
    std::os::unix::fs::symlink(repo_root().join("hosts/node/node_modules"), package.join("node_modules")).unwrap();
    let packs = root.join("packs");
    std::fs::create_dir_all(&packs).unwrap();
    let mut pack = npm(&package, &["run", "pack", "--", "--pack-destination", path(&packs)]);
    pack.env("SKILL_HOST", skill_host_bin());
    let output = output_within(pack, DEADLINE, "npm run pack");
    assert!(output.status.success(), "npm run pack failed:\n{}\n{}", stdout(&output), stderr(&output));
    let tarball: Vec<PathBuf> = std::fs::read_dir(&packs).unwrap().map(|entry| entry.unwrap().path()).collect();
    let [tarball] = tarball.as_slice() else { panic!("npm run pack made {tarball:?}") };
    assert!(path(tarball).ends_with(".tgz"), "{}", tarball.display());
    assert!(!package.join("plugin.wasm").exists(), "npm run pack leaves no plugin.wasm behind");
    assert!(!package.join("transpiled").exists(), "npm run pack leaves no transpiled/ behind");

    // A fresh project: the example, its packages, the tarball.
    let project = root.join("project");
    copy_entries(
        &repo_root().join("examples/dsh-agent"),
        &project,
        &["package.json", ".npmrc", "README.md", "agent.mjs", "skills"],
    );
    let install = npm(&project, &["install", "--prefer-offline", "--no-audit", "--no-fund", path(tarball)]);
    let output = output_within(install, DEADLINE, "npm install");
    assert!(output.status.success(), "npm install failed:\n{}\n{}", stdout(&output), stderr(&output));
    let installed = project.join("node_modules/dsh-tool-skill-wasm");
    assert!(installed.join("plugin.wasm").is_file(), "the tarball carries plugin.wasm");
    assert!(installed.join("transpiled").is_dir(), "the tarball carries plugin.wasm's translation");
    assert!(
        !project.join("node_modules/@bytecodealliance/jco").exists(),
        "jco is not installed with the package: its translation is packed"
    );

    // The example, as a user without Rust runs it.
    let (home, cache) = (root.join("home"), root.join("cache"));
    std::fs::create_dir_all(&home).unwrap();
    let mut run = Command::new(&node);
    run.arg("agent.mjs")
        .current_dir(&project)
        .env_clear()
        .env("PATH", path_without_rust(&node))
        .env("HOME", &home)
        .env("XDG_CACHE_HOME", &cache);
    let output = output_within(run, DEADLINE, "examples/dsh-agent on Node 22");
    let (out, err) = (stdout(&output), stderr(&output));
    assert!(output.status.success(), "the example failed:\n{out}\n{err}");
    assert!(out.contains("== the catalog the model received (a user message, source kind skill-catalog):"), "{out}");
    assert!(out.contains("<available_skills>"), "{out}");
    assert!(
        out.contains("- `release-notes`: Draft release notes from the merged changes since the last tag."),
        "{out}"
    );
    assert!(out.contains("- `triage-bug`: "), "{out}");
    assert!(out.contains("== the model called: skill {\"name\":\"release-notes\"}"), "{out}");
    assert!(out.contains("<skill_content name=\"release-notes\">"), "{out}");
    assert!(out.contains("2. Group them under Added, Changed and Fixed"), "the skill's body: {out}");
    assert!(!out.contains("(an error)"), "{out}");
    assert!(out.contains("I loaded the skill and will follow it."), "{out}");
    assert!(!err.contains("cannot write the component cache"), "{err}");

    // The packed translation ran: nothing cached, per user or inside node_modules.
    assert!(!cache.join("dsh-tool-skill-wasm").exists(), "nothing cached under $XDG_CACHE_HOME");
    assert!(!installed.join(".cache").exists(), "nothing cached inside the installed package");
    eprintln!("dsh_agent: packed, installed and ran in {:.1} s", started.elapsed().as_secs_f64());
}

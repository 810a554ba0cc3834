//! Shared fixtures: the `skill-host` binary, isolated workspaces, and one
//! plugin compiled for the whole test binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use skill_host::{Plugin, SandboxLimits};

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ lives in the repository").to_path_buf()
}

/// The embedded plugin, compiled once (a debug-build compile takes a while).
pub fn plugin() -> &'static Plugin {
    static PLUGIN: OnceLock<Plugin> = OnceLock::new();
    PLUGIN.get_or_init(|| Plugin::embedded("{}", SandboxLimits::default()).expect("the embedded plugin loads"))
}

/// The `skill-host` binary that `cargo test --workspace` built beside this test.
pub fn skill_host_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    // target/<profile>/deps/end_to_end-<hash> → target/<profile>/skill-host
    let bin = exe.parent().and_then(Path::parent).expect("tests run from target/<profile>/deps").join("skill-host");
    assert!(bin.exists(), "{} is missing: run the tests with `cargo test --workspace`", bin.display());
    bin
}

/// A temporary directory holding a project (no `.git` above it) and empty
/// user-level skill roots, so nothing from the machine leaks in.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir_all(dir.path().join("home/dsh")).unwrap();
        std::fs::create_dir_all(dir.path().join("home/agents")).unwrap();
        Self { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A copy of `examples/workspace` inside the sandbox.
    pub fn example_workspace(&self) -> PathBuf {
        let target = self.path().join("workspace");
        copy_tree(&repo_root().join("examples/workspace"), &target);
        target
    }

    /// Writes `<project>/.agents/skills/<name>/SKILL.md`.
    pub fn write_skill(&self, project: &Path, name: &str, frontmatter: &str, body: &str) {
        let dir = project.join(".agents/skills").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), format!("---\nname: {name}\n{frontmatter}---\n\n{body}\n")).unwrap();
    }

    /// Runs `skill-host` with the user-level roots pointed into the sandbox.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("skill-host runs")
    }

    /// The `skill-host` command [`run`](Self::run) runs, to start it without waiting.
    pub fn command(&self, args: &[&str]) -> Command {
        self.command_of(&skill_host_bin(), args)
    }

    /// `program` with `args`, run as [`command`](Self::command) runs
    /// `skill-host`: with the user-level roots pointed into the sandbox.
    pub fn command_of(&self, program: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(program);
        command
            .args(args)
            .env("DSH_HOME", self.path().join("home/dsh"))
            .env("DSH_AGENTS_HOME", self.path().join("home/agents"))
            // One compiled-component cache for the whole run, kept out of the user's home.
            .env("SKILL_HOST_CACHE_DIR", concat!(env!("CARGO_TARGET_TMPDIR"), "/skill-host-cache"));
        command
    }
}

/// Copies a folder recursively (files and folders; the fixtures hold no links).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The scenario files in `dir` (`*.json` but not `*.expected.json`), sorted.
pub fn scenarios_in(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("cannot list {}: {error}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .filter(|path| !path.to_string_lossy().ends_with(".expected.json"))
        .collect();
    found.sort();
    found
}

/// A path as the `&str` a command line takes.
pub fn path(path: &Path) -> &str {
    path.to_str().expect("test paths are UTF-8")
}

/// stdout as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// stderr as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

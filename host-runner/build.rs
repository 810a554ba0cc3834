//! Builds the plugin component (`plugin/`) for `wasm32-wasip2` and leaves it
//! in `OUT_DIR` for `include_bytes!`, so `skill-host` carries its plugin.
//!
//! The nested cargo gets its own target directory (the outer build holds the
//! lock on the workspace's) and none of the outer build's `CARGO_*`
//! variables, which describe the host crate, not the plugin.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest_dir.parent().expect("host-runner lives inside the workspace").to_path_buf();
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // `rules/` too: the plugin depends on skill-rules.
    for watched in [
        "plugin/src",
        "plugin/Cargo.toml",
        "plugin/build.rs",
        "rules",
        "wit",
        "Cargo.toml",
        "Cargo.lock",
        "build-support",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    println!("cargo:rerun-if-env-changed=SKILL_PLUGIN_WASM");

    let destination = out_dir.join("skill_plugin.wasm");
    // An escape hatch for unusual toolchains: use a component built elsewhere.
    if let Some(prebuilt) = env::var_os("SKILL_PLUGIN_WASM") {
        std::fs::copy(&prebuilt, &destination).unwrap_or_else(|error| {
            panic!("cannot copy SKILL_PLUGIN_WASM={}: {error}", Path::new(&prebuilt).display())
        });
        return;
    }
    require_target();

    let target_dir = out_dir.join("plugin-target");
    let mut command = nested_cargo(&root, &target_dir);
    command.args(["--package", "skill-plugin"]);
    let status = command.status().unwrap_or_else(|error| panic!("cannot run cargo to build the plugin: {error}"));
    if !status.success() {
        panic!(
            "building the plugin component (cargo build -p skill-plugin --target {TARGET} --release) failed: {status}"
        );
    }
    let built = target_dir.join(TARGET).join("release").join("skill_plugin.wasm");
    std::fs::copy(&built, &destination)
        .unwrap_or_else(|error| panic!("cannot copy the built plugin {}: {error}", built.display()));
}

/// Makes sure the wasm target is installed. When it is missing and rustup is
/// on `PATH`, adds it to the toolchain this build runs on (the README's first
/// command then works on a machine with only Rust and rustup), with a warning
/// saying so; otherwise fails early, with the fix: the nested build's own
/// error ("can't find crate for `core`") does not say what to do.
fn require_target() {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let installed = || -> Option<bool> {
        let output = Command::new(&rustc).args(["--print", "sysroot"]).output().ok()?;
        let sysroot = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
        output.status.success().then(|| sysroot.join("lib/rustlib").join(TARGET).exists())
    };
    if installed() != Some(false) {
        return; // Installed, or no sysroot: let the nested build report what is wrong.
    }
    // rustup sets RUSTUP_TOOLCHAIN for the tools it runs, so this adds the
    // target to the toolchain building this crate, not to the default one.
    // Its output goes to stderr: a build script's stdout is read by cargo.
    let added = Command::new("rustup")
        .args(["target", "add", TARGET])
        .stdout(std::io::stderr())
        .status()
        .is_ok_and(|status| status.success());
    if added && installed() == Some(true) {
        println!(
            "cargo:warning=the Rust target `{TARGET}` was missing; ran `rustup target add {TARGET}` to build the plugin component"
        );
        return;
    }
    panic!(
        "the Rust target `{TARGET}` is not installed, and the plugin component is built for it: run `rustup target add {TARGET}`"
    );
}

include!("../build-support/nested_cargo.rs");

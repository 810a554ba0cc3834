//! Builds the hostile test plugin (`fixtures/hostile-plugin`) for
//! `wasm32-wasip2` into `OUT_DIR`, with its own target directory and none of
//! the outer build's cargo variables (see host-runner/build.rs).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let fixture = manifest_dir.join("fixtures/hostile-plugin");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for watched in ["src", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", fixture.join(watched).display());
    }
    println!("cargo:rerun-if-changed={}", manifest_dir.join("../wit").display());

    let target_dir = out_dir.join("hostile-target");
    let mut command = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command
        .current_dir(&fixture)
        .args(["build", "--release", "--target", "wasm32-wasip2", "--target-dir"])
        .arg(&target_dir);
    for (key, _) in env::vars_os() {
        let key = key.to_string_lossy();
        if (key.starts_with("CARGO_") && key != "CARGO_HOME")
            || matches!(
                key.as_ref(),
                "RUSTFLAGS"
                    | "RUSTC_WRAPPER"
                    | "RUSTC_WORKSPACE_WRAPPER"
                    | "TARGET"
                    | "PROFILE"
                    | "OPT_LEVEL"
                    | "DEBUG"
                    | "HOST"
                    | "RUSTC"
                    | "RUSTDOC"
            )
        {
            command.env_remove(key.as_ref());
        }
    }
    let status = command.status().unwrap_or_else(|error| panic!("cannot run cargo for the hostile plugin: {error}"));
    assert!(
        status.success(),
        "building tests/fixtures/hostile-plugin for wasm32-wasip2 failed: {status} (is the target installed? `rustup target add wasm32-wasip2`)"
    );
    let built = target_dir.join("wasm32-wasip2/release/hostile_plugin.wasm");
    std::fs::copy(&built, out_dir.join("hostile_plugin.wasm"))
        .unwrap_or_else(|error| panic!("cannot copy {}: {error}", built.display()));
}

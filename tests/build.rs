//! Builds the hostile test plugin (`fixtures/hostile-plugin`) for
//! `wasm32-wasip2` into `OUT_DIR`, with its own target directory and none of
//! the outer build's cargo variables (see host-runner/build.rs).

use std::env;
use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let fixture = manifest_dir.join("fixtures/hostile-plugin");
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for watched in ["src", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", fixture.join(watched).display());
    }
    println!("cargo:rerun-if-changed={}", manifest_dir.join("../wit").display());
    println!("cargo:rerun-if-changed={}", manifest_dir.join("../build-support").display());

    let target_dir = out_dir.join("hostile-target");
    let mut command = nested_cargo(&fixture, &target_dir);
    let status = command.status().unwrap_or_else(|error| panic!("cannot run cargo for the hostile plugin: {error}"));
    assert!(
        status.success(),
        "building tests/fixtures/hostile-plugin for wasm32-wasip2 failed: {status} (is the target installed? `rustup target add wasm32-wasip2`)"
    );
    let built = target_dir.join("wasm32-wasip2/release/hostile_plugin.wasm");
    std::fs::copy(&built, out_dir.join("hostile_plugin.wasm"))
        .unwrap_or_else(|error| panic!("cannot copy {}: {error}", built.display()));
}

include!("../build-support/nested_cargo.rs");

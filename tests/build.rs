//! Builds the test plugins (`fixtures/hostile-plugin`,
//! `fixtures/hostile-files-plugin` and `fixtures/plugin-v0-1`, built against
//! the released `dsh:skill@0.1.0`)
//! for `wasm32-wasip2` into `OUT_DIR`, with their own target directory (one
//! for both, so their dependencies are compiled once) and none of the outer
//! build's cargo variables (see host-runner/build.rs).

use std::env;
use std::path::PathBuf;

/// Each fixture's folder under `fixtures/`, and the `.wasm` it builds.
const FIXTURES: [(&str, &str); 3] = [
    ("hostile-plugin", "hostile_plugin.wasm"),
    ("hostile-files-plugin", "hostile_files_plugin.wasm"),
    ("plugin-v0-1", "plugin_v0_1.wasm"),
];

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed={}", manifest_dir.join("../wit").display());
    println!("cargo:rerun-if-changed={}", manifest_dir.join("../build-support").display());
    let target_dir = out_dir.join("hostile-target");
    for (folder, wasm) in FIXTURES {
        let fixture = manifest_dir.join("fixtures").join(folder);
        for watched in ["src", "Cargo.toml"] {
            println!("cargo:rerun-if-changed={}", fixture.join(watched).display());
        }
        let mut command = nested_cargo(&fixture, &target_dir);
        let status = command.status().unwrap_or_else(|error| panic!("cannot run cargo for {folder}: {error}"));
        assert!(
            status.success(),
            "building tests/fixtures/{folder} for wasm32-wasip2 failed: {status} (is the target installed? `rustup target add wasm32-wasip2`)"
        );
        let built = target_dir.join("wasm32-wasip2/release").join(wasm);
        std::fs::copy(&built, out_dir.join(wasm))
            .unwrap_or_else(|error| panic!("cannot copy {}: {error}", built.display()));
    }
}

include!("../build-support/nested_cargo.rs");

// Shared by the build scripts that compile a guest for wasm32-wasip2
// (`host-runner/build.rs`, `tests/build.rs`), through `include!`: a build
// script cannot depend on a workspace crate of its own.

/// A `cargo build` for a nested guest crate in `dir`, with its own target
/// directory (the outer build holds the lock on the workspace's) and none of
/// the outer build's settings, which describe the host crate, not the guest.
fn nested_cargo(dir: &std::path::Path, target_dir: &std::path::Path) -> std::process::Command {
    let mut command = std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(dir).args(["build", "--release", "--target", "wasm32-wasip2", "--target-dir"]).arg(target_dir);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        let inherited_build_setting = (key.starts_with("CARGO_") && key != "CARGO_HOME")
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
            );
        if inherited_build_setting {
            command.env_remove(key.as_ref());
        }
    }
    command
}

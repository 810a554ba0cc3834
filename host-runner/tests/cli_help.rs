//! The binary starts and documents its commands. (Being an integration test
//! of skill-host, this also makes `cargo test --workspace` build the
//! `skill-host` binary that the end-to-end tests in `tests/` drive.)

use std::process::Command;

#[test]
fn help_lists_every_command_and_global_option() {
    let output = Command::new(env!("CARGO_BIN_EXE_skill-host")).arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for word in [
        "step",
        "load",
        "compact",
        "skills",
        "replay",
        "lint",
        "--plugin",
        "--config",
        "--timeout-ms",
        "--memory-mb",
        "--max-added-messages",
        "--max-text-bytes",
        "--max-output-bytes",
        "--skills-dir",
        "--bundled-dir",
        "--remote",
    ] {
        assert!(help.contains(word), "--help does not mention {word}:\n{help}");
    }
}

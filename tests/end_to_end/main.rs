//! End-to-end tests: the real plugin component, built by host-runner's build
//! script, driven through the host library and the `skill-host` binary.
//! One test binary, so the component is compiled once per run.

mod cli;
mod common;
mod disclosure;
mod library;
mod scenarios;

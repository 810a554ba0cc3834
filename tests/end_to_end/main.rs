//! End-to-end tests: the real plugin component, built by host-runner's build
//! script, driven through the host library and the `skill-host` binary.
//! One test binary, so the component is compiled once per run.

mod cli;
mod common;
mod corpus;
mod cross_host;
mod deadlines;
mod disclosure;
mod library;
mod remote;
mod scenarios;
mod wit_contract;

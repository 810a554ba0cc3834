//! End-to-end tests: the real plugin component, built by host-runner's build
//! script, driven through the host library and the `skill-host` binary.
//! One test binary, so the component is compiled once per run.

mod bad_input;
mod bad_paths;
mod cli;
mod cli_catalog;
mod cli_catalog_why;
mod common;
mod contract_versions;
mod corpus;
mod cross_host;
mod deadlines;
mod disclosure;
mod dsh_agent;
mod handwritten;
mod hostile;
mod library;
mod loaded_skills;
mod mcp;
mod mcp_conformance;
mod mcp_http;
mod mcp_limits;
mod mcp_notify;
mod mcp_remote;
mod mcp_served;
mod mcp_stdio;
mod mcp_swaps;
mod mcp_ts_client;
mod patterns;
mod providers;
mod remote;
mod scenarios;
mod search;
mod search_quality;
mod skill_files;
mod traces;
mod turns;
mod wit_contract;

//! `replay`: a scenario file against in-memory providers (docs/spec.md §7).

use std::path::PathBuf;

use super::scenario::Scenario;
use anyhow::{Context, Result};
use clap::Args;

use super::common::{GlobalOptions, pretty, print_line, read_text_input};

/// Largest scenario file read, in bytes.
const MAX_SCENARIO_BYTES: u64 = 64 * 1024 * 1024;

/// Run a scenario file against in-memory providers.
#[derive(Args)]
pub struct ReplayArgs {
    /// The scenario (docs/spec.md §7).
    scenario: PathBuf,
}

impl ReplayArgs {
    pub fn run(self, global: &GlobalOptions) -> Result<u8> {
        let text = read_text_input(&self.scenario, "scenario", MAX_SCENARIO_BYTES)?;
        let mut parsed = Scenario::parse(&text).with_context(|| format!("scenario {}", self.scenario.display()))?;
        // The scenario's own configuration wins over --config.
        if parsed.config.is_none() {
            parsed.config = global.config()?;
        }
        let cache = skill_host::component_cache::default_dir();
        // `--trace` (global): the recorder `main` writes out.
        let output = parsed.replay(&global.component()?, global.limits(), cache.as_deref(), global.take_recorder())?;
        print_line(&pretty(&output), None)?;
        Ok(0)
    }
}

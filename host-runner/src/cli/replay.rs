//! `replay`: a scenario file against in-memory providers (docs/spec.md §7).

use std::path::PathBuf;

use super::scenario::Scenario;
use anyhow::{Context, Result};
use clap::Args;
use skill_host::TraceRecorder;

use super::common::{GlobalOptions, pretty, print_line, read_text_input};

/// Largest scenario file read, in bytes.
const MAX_SCENARIO_BYTES: u64 = 64 * 1024 * 1024;

/// Run a scenario file against in-memory providers.
#[derive(Args)]
pub struct ReplayArgs {
    /// The scenario (docs/spec.md §7).
    scenario: PathBuf,
    /// Also write the trace of every plugin call to this file (docs/spec.md
    /// §7.2), even when a step fails.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
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
        let recorder = self.trace.as_ref().map(|_| TraceRecorder::new());
        let output = parsed.replay(&global.component()?, global.limits(), cache.as_deref(), recorder.clone());
        if let (Some(path), Some(recorder)) = (&self.trace, &recorder) {
            let mut text = serde_json::to_string_pretty(&recorder.to_json())?;
            text.push('\n');
            std::fs::write(path, text).with_context(|| format!("cannot write the trace {}", path.display()))?;
        }
        print_line(&pretty(&output?), None)?;
        Ok(0)
    }
}

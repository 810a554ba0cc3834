//! `load`: the `skill` tool, called as the model would call it.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use serde_json::json;
use skill_host::{SessionLog, ToolOutcome, record_tool_result};

use super::common::{GlobalOptions, absolute, for_stdout, warn_all};

/// Exit code of a `load` whose tool call failed.
const EXIT_TOOL_ERROR: u8 = 1;

/// Call the `skill` tool as the model would.
#[derive(Args)]
pub struct LoadArgs {
    /// The skill name.
    name: String,
    /// Record the call's result in this session file.
    #[arg(long, value_name = "FILE")]
    session: Option<PathBuf>,
    /// The working directory (default: the session's, else the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

impl LoadArgs {
    pub fn run(self, global: &GlobalOptions) -> Result<u8> {
        let log = self.session.as_deref().map(|path| SessionLog::open_or_create(path, None)).transpose()?;
        if let Some(log) = &log {
            warn_all(log.warnings());
        }
        let cwd = match &self.cwd {
            Some(cwd) => Some(absolute(cwd)?),
            None => log.as_ref().and_then(|log| log.header().cwd.clone()).or(Some(absolute(Path::new("."))?)),
        };
        let plugin = global.load_plugin()?;
        let registry = global.registry();
        let arguments = json!({ "name": self.name }).to_string();
        let outcome = plugin.invoke(&registry, cwd.as_deref(), &arguments)?;
        if let Some(mut log) = log {
            record_tool_result(&mut log, &outcome)?;
        }
        if self.json {
            match &outcome {
                ToolOutcome::Success { value, text } => {
                    println!("{}", for_stdout(&json!({"ok": value, "text": text}).to_string()));
                }
                ToolOutcome::Error { text } => println!("{}", for_stdout(&json!({ "error": text }).to_string())),
            }
        } else {
            println!("{}", for_stdout(outcome.text()));
        }
        Ok(match outcome {
            ToolOutcome::Success { .. } => 0,
            ToolOutcome::Error { .. } => EXIT_TOOL_ERROR,
        })
    }
}

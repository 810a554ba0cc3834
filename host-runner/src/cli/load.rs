//! `load`: the `skill` tool, called as the model would call it.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use serde_json::{Value, json};
use skill_host::ToolOutcome;
use skill_host::message;
use skill_host::session::{SessionLog, SurfaceOp};

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
            log.append_event("tool/result", tool_result(&outcome), Some(SurfaceOp::Append))?;
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

/// The `data` of a `tool/result` event recording a `skill` call, in DeepSeek Harness's shape.
fn tool_result(outcome: &ToolOutcome) -> Value {
    let call_id = format!("call-{}", message::new_message_id());
    let is_error = matches!(outcome, ToolOutcome::Error { .. });
    json!({
        "message": {
            "id": message::new_message_id(),
            "role": "user",
            "source": {"kind": "tool", "callId": call_id},
            "content": [{
                "type": "tool-result",
                "toolCallId": call_id,
                "isError": is_error,
                "content": [{"type": "text", "text": outcome.text()}],
            }],
        },
    })
}

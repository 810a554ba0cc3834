//! `load`: the `skill` tool, called as the model would call it.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use serde_json::json;
use skill_host::{SessionLog, ToolOutcome, record_tool_result};

use super::common::{GlobalOptions, absolute, print_line, warn_all, working_directory};
use super::tool_record::ToolRecord;

/// Exit code of a `load` whose tool call failed.
const EXIT_TOOL_ERROR: u8 = 1;

/// Call the `skill` tool as the model would.
#[derive(Args)]
pub struct LoadArgs {
    /// The skill name.
    #[arg(required_unless_present = "query")]
    name: Option<String>,
    /// Search the skills instead (with `skillSearch` configured): the
    /// tool's `query` argument.
    #[arg(long, value_name = "TEXT", conflicts_with = "name")]
    query: Option<String>,
    /// Load only this section of the skill (with `skillReads` configured):
    /// the tool's `section` argument, a heading of its instructions.
    #[arg(long, value_name = "HEADING", requires = "name")]
    section: Option<String>,
    /// Read only this file of the skill (with `skillReads` configured): the
    /// tool's `path` argument, a path inside the skill such as
    /// `references/api.md`.
    #[arg(long, value_name = "PATH", requires = "name", conflicts_with = "section")]
    path: Option<String>,
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
        // Everything that can be refused is, before the session is touched.
        let cwd = self.cwd.as_deref().map(working_directory).transpose()?;
        let plugin = global.load_plugin()?;
        let registry = global.registry();
        let log = self
            .session
            .as_deref()
            .map(|path| SessionLog::open_or_create_waiting(path, cwd.as_deref(), global.lock_wait()))
            .transpose()?;
        if let Some(log) = &log {
            warn_all(log.warnings());
        }
        let cwd = match cwd {
            Some(cwd) => Some(cwd),
            None => log.as_ref().and_then(|log| log.header().cwd.clone()).or(Some(absolute(Path::new("."))?)),
        };
        let mut arguments = match &self.query {
            Some(query) => json!({ "query": query }),
            None => json!({ "name": self.name }),
        };
        if let Some(section) = &self.section {
            arguments["section"] = json!(section);
        }
        if let Some(path) = &self.path {
            arguments["path"] = json!(path);
        }
        let arguments = arguments.to_string();
        let outcome = plugin.invoke(&registry, cwd.as_deref(), &arguments);
        warn_all(&registry.last_incomplete_warnings());
        let outcome = outcome?;
        let mut recorded = None;
        if let Some(mut log) = log {
            record_tool_result(&mut log, &outcome)?;
            recorded = Some(format!("the tool result is recorded in session log {}", self.session_shown()));
        }
        let code = match outcome {
            ToolOutcome::Success { .. } => 0,
            ToolOutcome::Error { .. } => EXIT_TOOL_ERROR,
        };
        let text = if self.json {
            serde_json::to_string(&ToolRecord::from(outcome)).expect("serialising JSON to memory cannot fail")
        } else {
            outcome.text().to_owned()
        };
        print_line(&text, recorded)?;
        Ok(code)
    }

    fn session_shown(&self) -> String {
        self.session.as_deref().map(|path| path.display().to_string()).unwrap_or_default()
    }
}

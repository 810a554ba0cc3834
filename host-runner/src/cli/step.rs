//! `step`: one pre-step for a session file, its decision appended.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use serde_json::json;
use skill_host::message;
use skill_host::session::{SessionLog, SharedSession};
use skill_host::{Decision, StepInput, StepOutcome, ToolView, run_step};

use super::common::{GlobalOptions, message_text, print_line, warn_all, working_directory};

/// Run one pre-step for a session and append what it decides.
#[derive(Args)]
pub struct StepArgs {
    /// The session file (created with a header if missing).
    #[arg(long, value_name = "FILE")]
    session: PathBuf,
    /// The working directory (sets the header's cwd when creating; overrides it otherwise).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// A user message proposed for this step (repeatable).
    #[arg(long = "message", value_name = "TEXT")]
    messages: Vec<String>,
    /// How the agent's tool view resolves `skill`.
    #[arg(long, default_value = "visible", value_parser = tool_view_parser())]
    tool_view: ToolView,
    /// Print the decision as JSON.
    #[arg(long)]
    json: bool,
}

/// `--tool-view`: one of the views' names.
fn tool_view_parser() -> impl TypedValueParser<Value = ToolView> {
    PossibleValuesParser::new(ToolView::ALL.map(ToolView::name))
        .map(|name| ToolView::from_name(&name).expect("clap allows only the views' names"))
}

impl StepArgs {
    pub fn run(self, global: &GlobalOptions) -> Result<u8> {
        // Everything that can be refused is, before the session is touched.
        let cwd = self.cwd.as_deref().map(working_directory).transpose()?;
        let plugin = global.load_plugin()?;
        let registry = global.registry();
        let log = SessionLog::open_or_create_waiting(&self.session, cwd.as_deref(), global.lock_wait())?;
        warn_all(log.warnings());
        let cwd = cwd.or_else(|| log.header().cwd.clone());
        let session = SharedSession::new(log);
        let input = StepInput { cwd: cwd.map(Arc::from), tool_view: self.tool_view, abort: None, preview: false };
        let proposed = self.messages.iter().map(|text| message::user_message(message::user_source(), text)).collect();
        let outcome = run_step(&plugin, &registry, &session, &input, Decision::Enter(proposed));
        warn_all(&registry.last_incomplete_warnings());
        let StepOutcome::Decided(Decision::Enter(messages)) = outcome? else {
            anyhow::bail!("the pre-step did not enter the step");
        };
        let recorded = (!messages.is_empty())
            .then(|| format!("the step's messages are recorded in session log {}", self.session.display()));
        if self.json {
            print_line(&json!({"kind": "enter", "messages": messages}).to_string(), recorded)?;
        } else if !messages.is_empty() {
            let texts: Vec<String> = messages.iter().map(message_text).collect();
            print_line(&texts.join("\n\n"), recorded)?;
        }
        Ok(0)
    }
}

//! `step`: one pre-step for a session file, its decision appended.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anyhow::Result;
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use serde_json::json;
use skill_host::message;
use skill_host::session::SessionLog;
use skill_host::{Decision, StepInput, StepOutcome, ToolView, run_step};

use super::common::{GlobalOptions, absolute, for_stdout, message_text, warn_all};

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
        let cwd = self.cwd.as_deref().map(absolute).transpose()?;
        let log = SessionLog::open_or_create(&self.session, cwd.as_deref())?;
        warn_all(log.warnings());
        let cwd = cwd.or_else(|| log.header().cwd.clone());
        let plugin = global.load_plugin()?;
        let registry = global.registry();
        let session = Arc::new(Mutex::new(log));
        let input = StepInput { cwd: cwd.map(Arc::from), tool_view: self.tool_view, abort: None, preview: false };
        let proposed = self.messages.iter().map(|text| message::user_message(message::user_source(), text)).collect();
        let outcome = run_step(&plugin, &registry, &session, &input, Decision::Enter(proposed))?;
        let StepOutcome::Decided(Decision::Enter(messages)) = outcome else {
            anyhow::bail!("the pre-step did not enter the step: {outcome:?}");
        };
        if self.json {
            println!("{}", for_stdout(&json!({"kind": "enter", "messages": messages}).to_string()));
        } else if !messages.is_empty() {
            let texts: Vec<String> = messages.iter().map(message_text).collect();
            println!("{}", for_stdout(&texts.join("\n\n")));
        }
        Ok(0)
    }
}

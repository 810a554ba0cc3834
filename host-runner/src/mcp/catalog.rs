//! What the component decides for an MCP client: the `skill` tool's
//! description and results, and the prompts' messages. Every model-facing
//! text here is the component's; the host only joins the tool description
//! and the catalog with [`DESCRIPTION_SEPARATOR`] (docs/spec.md §6.9).

use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::message::{single_text, user_message, user_source};
use crate::{Decision, HostError, Plugin, SessionHeader, SessionLog, SkillRegistry, StepInput, StepOutcome, run_step};

/// Between the component's tool description (§3.2) and its catalog (§3.6)
/// in the MCP tool's description.
pub const DESCRIPTION_SEPARATOR: &str = "\n\n";

/// The `kind` of the source of the message a user's `/name` injects (§3.10).
const INVOCATION_KIND: &str = "skill-invocation";

/// The catalog message the component publishes first in a new session for
/// `cwd`: a pre-step previewed on an empty in-memory session. `None` when it
/// publishes none (no model-invocable skill, or an incomplete listing: the
/// component then keeps what the model has, which for a new client is
/// nothing).
pub fn initial_catalog(
    plugin: &Plugin,
    registry: &Arc<SkillRegistry>,
    cwd: Option<&str>,
) -> Result<Option<String>, HostError> {
    let messages = preview(plugin, registry, cwd, Vec::new())?;
    Ok(messages.iter().find(|message| source_kind(message) == Some("plugin")).and_then(single_text).map(str::to_owned))
}

/// The tool description a client without the Skills extension sees: the
/// component's own description, then its initial catalog when there is one.
pub fn tool_description(
    description: &str,
    plugin: &Plugin,
    registry: &Arc<SkillRegistry>,
    cwd: Option<&str>,
) -> Result<String, HostError> {
    Ok(match initial_catalog(plugin, registry, cwd)? {
        Some(catalog) => format!("{description}{DESCRIPTION_SEPARATOR}{catalog}"),
        None => description.to_owned(),
    })
}

/// The block the component injects when a user types `/name` (§3.10): what
/// the prompt `name` returns. `None` when the component injects nothing (an
/// unknown skill, one that is not user-invocable, a failing provider).
/// `prompt_plugin` must be configured with `"userInvocation": true`.
pub fn invocation_block(
    prompt_plugin: &Plugin,
    registry: &Arc<SkillRegistry>,
    cwd: Option<&str>,
    name: &str,
) -> Result<Option<String>, HostError> {
    let gesture = user_message(user_source(), &format!("/{name}"));
    let messages = preview(prompt_plugin, registry, cwd, vec![gesture])?;
    Ok(messages
        .iter()
        .find(|message| {
            source_kind(message) == Some(INVOCATION_KIND) && message["source"]["name"].as_str() == Some(name)
        })
        .and_then(single_text)
        .map(str::to_owned))
}

/// The messages a pre-step would enter for a new session on `cwd` with
/// `proposed` (nothing is recorded: the session is in memory and previewed).
fn preview(
    plugin: &Plugin,
    registry: &Arc<SkillRegistry>,
    cwd: Option<&str>,
    proposed: Vec<Value>,
) -> Result<Vec<Value>, HostError> {
    let session = Arc::new(Mutex::new(SessionLog::in_memory(SessionHeader::new(cwd.map(str::to_owned)))));
    let input = StepInput { cwd: cwd.map(Arc::from), preview: true, ..StepInput::default() };
    match run_step(plugin, registry, &session, &input, Decision::Enter(proposed))? {
        StepOutcome::Decided(Decision::Enter(messages)) => Ok(messages),
        // Nothing rejects or aborts a previewed step of our own.
        StepOutcome::Decided(Decision::Reject(_)) | StepOutcome::Aborted => Ok(Vec::new()),
    }
}

fn source_kind(message: &Value) -> Option<&str> {
    message["source"]["kind"].as_str()
}

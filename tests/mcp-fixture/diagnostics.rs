//! The five diagnostic tools of the MCP SDKs' conformance servers that the
//! suite's `server-stateless` scenario (SEP-2575) calls, each built on the
//! rmcp mechanism its requirement is about:
//!
//! | tool | what it lets the suite check | how |
//! |---|---|---|
//! | `test_missing_capability` | a request that needs a capability the client did not declare gets -32021 and HTTP 400 | [`RequestContext::client_capabilities`], [`ErrorData::missing_required_client_capability`] |
//! | `test_streaming_elicitation` | a response stream carries no request of the server's own | the elicitation goes back in an [`InputRequiredResult`] (SEP-2322), never as `elicitation/create` on the stream |
//! | `test_logging_tool` | no `notifications/message` for a request whose `_meta` names no `logLevel` | it always logs, through the peer; the front door drops what the request did not ask for |
//! | `test_trigger_tool_change` | `notifications/tools/list_changed` reaches a listen stream | it writes a new skill the model may invoke (not a prompt): the tool's catalog changes |
//! | `test_trigger_prompt_change` | `notifications/prompts/list_changed` reaches it | it writes a new skill only a user may invoke: the prompts change |
//!
//! The trigger tools change what is served for real, on disk: the
//! notifications come from the product's own watcher and notifier.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock, ElicitRequest,
    ElicitRequestParams, ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, JsonObject, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;

/// Fails with -32021 unless the client declared `sampling`.
pub const MISSING_CAPABILITY: &str = "test_missing_capability";
/// Asks for confirmation through an input-required result.
pub const STREAMING_ELICITATION: &str = "test_streaming_elicitation";
/// Logs one message to the client.
pub const LOGGING: &str = "test_logging_tool";
/// Adds a model-invocable skill: the tool list changes.
pub const TOOL_CHANGE: &str = "test_trigger_tool_change";
/// Adds a user-invocable skill hidden from the model: the prompt list changes.
pub const PROMPT_CHANGE: &str = "test_trigger_prompt_change";

/// The key of the elicitation in [`STREAMING_ELICITATION`]'s input requests.
const CONFIRMATION: &str = "confirmation";
/// The `requestState` a retry of [`STREAMING_ELICITATION`] echoes.
const CONFIRMATION_STATE: &str = "test_streaming_elicitation:confirmation";

/// The tools, as `tools/list` lists them after the product's own.
pub fn tools() -> Vec<Tool> {
    [
        (
            MISSING_CAPABILITY,
            "Requires the client's sampling capability: a client that did not declare it gets -32021.",
        ),
        (
            STREAMING_ELICITATION,
            "Asks the client to confirm, in an input-required result (elicitation), never as a request on the \
             response stream.",
        ),
        (LOGGING, "Logs one message at level info, delivered only if the request's _meta asks for that level."),
        (TOOL_CHANGE, "Adds a skill the model may invoke but a user may not: the skill tool's catalog changes."),
        (PROMPT_CHANGE, "Adds a skill a user may invoke but the model may not: the prompts change."),
    ]
    .map(|(name, description)| Tool::new(name, description, Arc::new(no_arguments())))
    .into()
}

fn no_arguments() -> JsonObject {
    let mut schema = JsonObject::new();
    schema.insert("type".to_owned(), json!("object"));
    schema.insert("properties".to_owned(), json!({}));
    schema
}

/// The answer to `request` when it calls a diagnostic tool, else `None`.
pub async fn call(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    skills: &SkillWriter,
) -> Option<Result<CallToolResponse, ErrorData>> {
    Some(match request.name.as_ref() {
        MISSING_CAPABILITY => missing_capability(context),
        STREAMING_ELICITATION => streaming_elicitation(request, context),
        LOGGING => logging(context).await,
        TOOL_CHANGE => skills.add(Invocation::ModelOnly).await,
        PROMPT_CHANGE => skills.add(Invocation::UserOnly).await,
        _ => return None,
    })
}

fn text(text: String) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text)]).into()
}

#[expect(deprecated, reason = "sampling is deprecated by SEP-2577; it is still the capability the suite names")]
fn missing_capability(context: &RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
    let declared = context.client_capabilities().is_some_and(|declared| declared.sampling.is_some());
    if !declared {
        let required = ClientCapabilities::builder().enable_sampling().build();
        return Err(ErrorData::missing_required_client_capability(required));
    }
    Ok(text("the client declared sampling".to_owned()))
}

fn streaming_elicitation(
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let declared = context.client_capabilities().is_some_and(|declared| declared.elicitation.is_some());
    if !declared {
        let required = ClientCapabilities::builder().enable_elicitation().build();
        return Err(ErrorData::missing_required_client_capability(required));
    }
    // The retry: the client answered and echoed the state.
    let answer = request.input_responses.as_ref().and_then(|responses| responses.get(CONFIRMATION));
    if let (Some(answer), Some(CONFIRMATION_STATE)) = (answer, request.request_state.as_deref()) {
        let action = answer["action"].as_str().unwrap_or("(none)");
        return Ok(text(format!("the client answered the elicitation: {action}")));
    }
    let schema = ElicitationSchema::builder()
        .required_bool_property("confirmed", |confirmed| confirmed.title("Confirmed"))
        .build_unchecked();
    let question = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: "Confirm the conformance probe.".to_owned(),
        requested_schema: schema,
    });
    let requests = InputRequests::from([(CONFIRMATION.to_owned(), InputRequest::Elicitation(question))]);
    Ok(InputRequiredResult::new(Some(requests), Some(CONFIRMATION_STATE.to_owned())).into())
}

#[expect(deprecated, reason = "logging is deprecated by SEP-2577; it is still what the requirement is about")]
async fn logging(context: &RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
    use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
    let message = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!("test_logging_tool ran"))
        .with_logger("mcp-conformance-fixture");
    context
        .peer
        .notify_logging_message(message)
        .await
        .map_err(|error| ErrorData::internal_error(format!("the log message was not sent: {error}"), None))?;
    Ok(text("logged one message at level info".to_owned()))
}

/// Who may invoke a skill the trigger tools add.
#[derive(Debug, Clone, Copy)]
pub enum Invocation {
    /// The model only (`user-invocable: false`): in the tool's catalog, not a prompt.
    ModelOnly,
    /// A user only (`disable-model-invocation: true`): a prompt, not in the catalog.
    UserOnly,
}

/// Writes the trigger tools' skills into the served project's skill folder,
/// each folder whole: written in `staging`, then renamed into `skills`, so
/// the watcher never sees half a skill.
pub struct SkillWriter {
    skills: PathBuf,
    staging: PathBuf,
    added: AtomicU64,
}

impl SkillWriter {
    /// A writer into `skills`; `staging` must be on the same file system
    /// and outside every watched root.
    pub fn new(skills: PathBuf, staging: PathBuf) -> Self {
        Self { skills, staging, added: AtomicU64::new(0) }
    }

    /// Adds a new skill, a different one on every call.
    async fn add(&self, invocation: Invocation) -> Result<CallToolResponse, ErrorData> {
        let number = self.added.fetch_add(1, Ordering::Relaxed) + 1;
        let (name, field) = match invocation {
            Invocation::ModelOnly => (format!("conformance-tool-{number}"), "user-invocable: false"),
            Invocation::UserOnly => (format!("conformance-prompt-{number}"), "disable-model-invocation: true"),
        };
        let manifest = format!(
            "---\nname: {name}\ndescription: Added by the conformance fixture, change {number}.\n{field}\n---\n\n\
             # {name}\n\nA skill the conformance fixture added to change what is listed.\n"
        );
        let (staged, target) = (self.staging.join(&name), self.skills.join(&name));
        let written = tokio::task::spawn_blocking(move || {
            std::fs::create_dir_all(&staged)?;
            std::fs::write(staged.join("SKILL.md"), manifest)?;
            std::fs::rename(&staged, &target)
        })
        .await;
        match written {
            Ok(Ok(())) => Ok(text(format!("added the skill {name}"))),
            Ok(Err(error)) => Err(ErrorData::internal_error(format!("cannot add the skill {name}: {error}"), None)),
            Err(error) => Err(ErrorData::internal_error(format!("the skill writer failed: {error}"), None)),
        }
    }
}

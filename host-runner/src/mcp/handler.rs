//! The rmcp handler: each MCP method answered from the registry and the
//! component. Plugin calls and file reads run on tokio's blocking pool, so
//! the session keeps reading while one is under way.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use rmcp::model::ErrorCode;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, GetSkillRequestParams, GetSkillResult, Implementation, ListPromptsResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, Role, ServerCapabilities, ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};
use serde::Serialize;
use serde_json::Value;

use super::notify::Fingerprint;
use super::skills::{self, SkillFiles, SkillsError};
use super::{CACHE_TTL_MS, McpServer, State, catalog};
use crate::registry::{RegistrySnapshot, Winner, is_skill_name};
use crate::{HostError, ToolOutcome};

/// The server's name in `serverInfo`.
pub const SERVER_NAME: &str = "skill-host";

impl State {
    fn cwd_path(&self) -> Option<&Path> {
        self.cwd.as_deref().map(Path::new)
    }

    /// The registry's listing for the cwd. A skill file it skipped is said
    /// once on the server's log, with `skill-host skills`' reason, the first
    /// time a listing skips it.
    fn snapshot(&self) -> Arc<RegistrySnapshot> {
        let snapshot = self.registry.snapshot(self.cwd_path());
        let seen = self.skips_seen.swap(snapshot.revision, std::sync::atomic::Ordering::Relaxed);
        if seen != snapshot.revision {
            for skipped in &snapshot.skipped {
                self.warn_once(&format_args!("skipped {}: {}", skipped.path.display(), skipped.reason));
            }
        }
        snapshot
    }

    pub(super) fn tool(&self) -> Result<Tool, HostError> {
        let description =
            catalog::tool_description(&self.definition.description, &self.plugin, &self.registry, self.cwd.as_deref())?;
        let schema = match &self.definition.parameters {
            Value::Object(schema) => schema.clone(),
            _ => serde_json::Map::new(),
        };
        Ok(Tool::new(self.definition.name.clone(), description, Arc::new(schema)))
    }

    /// How long a client may cache an answer: [`CACHE_TTL_MS`] while the
    /// server watches (a change is notified), else 0 (docs/spec.md §6.9).
    pub(super) fn ttl_ms(&self) -> u64 {
        if self.watching.load(std::sync::atomic::Ordering::Relaxed) { CACHE_TTL_MS } else { 0 }
    }

    /// What `tools/list` answers: the one tool.
    fn tools_listing(&self) -> Result<ListToolsResult, HostError> {
        // The catalog lists through the registry itself: its skips are said here.
        drop(self.snapshot());
        let mut result = ListToolsResult::with_all_items(vec![self.tool()?]);
        (result.ttl_ms, result.cache_scope) = (Some(self.ttl_ms()), Some(CACHE_SCOPE));
        Ok(result)
    }

    /// What `prompts/list` answers: a prompt per user-invocable skill.
    fn prompts_listing(&self, snapshot: &RegistrySnapshot) -> ListPromptsResult {
        let mut result = ListPromptsResult::with_all_items(
            snapshot
                .skills
                .iter()
                .filter(|winner| winner.candidate.invocation.user_invocable)
                .map(|winner| {
                    Prompt::new(winner.candidate.name.clone(), Some(winner.candidate.description.clone()), None)
                })
                .collect(),
        );
        (result.ttl_ms, result.cache_scope) = (Some(self.ttl_ms()), Some(CACHE_SCOPE));
        result
    }

    /// What `resources/list` answers: the `SKILL.md` of each skill the
    /// Skills extension serves.
    fn resources_listing(&self, snapshot: &RegistrySnapshot, manifests: &mut Manifests) -> ListResourcesResult {
        let mut result = ListResourcesResult::with_all_items(
            self.served_skills(snapshot.skills.iter(), manifests)
                .into_iter()
                .map(|winner| {
                    Resource::new(skills::skill_uri(&winner.candidate.name), winner.candidate.name.clone())
                        .with_description(winner.candidate.description.clone())
                        .with_mime_type("text/markdown")
                })
                .collect(),
        );
        (result.ttl_ms, result.cache_scope) = (Some(self.ttl_ms()), Some(CACHE_SCOPE));
        result
    }

    /// What `skills/list` answers for `cursor`, and why skills on that page
    /// were left out of it; `Err` for a cursor this server did not give.
    fn skills_listing(
        &self,
        snapshot: &RegistrySnapshot,
        cursor: Option<&str>,
        manifests: &mut Manifests,
    ) -> Result<(ListSkillsResult, Vec<SkillsError>), String> {
        let page = skills::page(snapshot, cursor, &self.user_only)?;
        let mut listed = Vec::with_capacity(page.skills.len());
        let mut left_out = Vec::new();
        for (winner, files) in &page.skills {
            match manifests.of(&winner.candidate.name, files, &self.decisions) {
                Ok(skill) => listed.push(skill),
                Err(error) => left_out.push(error),
            }
        }
        let mut result = ListSkillsResult::with_all_items(listed);
        result.next_cursor = page.next;
        (result.ttl_ms, result.cache_scope) = (Some(self.ttl_ms()), Some(CACHE_SCOPE));
        Ok((result, left_out))
    }

    /// What the client lists now, for change notifications: every list
    /// method's answer, as the client receives it (serialised), computed by
    /// the functions that answer it, so no listed field can be left out of
    /// the comparison. `skills/list` counts all its pages.
    ///
    /// A change on disk can overtake the computation: a skill refused as
    /// changed since the cached listing invalidates the registry (as the
    /// watcher does a moment later). Then the lists are computed again, from
    /// the fresh listing, so that a transient refusal is never announced as
    /// a change (at most three rounds; the watcher's next wake-up covers a
    /// disk that keeps changing).
    pub(super) fn fingerprint(&self) -> Result<Fingerprint, HostError> {
        let mut round = 1;
        loop {
            let generation = self.registry.generation();
            let print = self.listed_now()?;
            if self.registry.generation() == generation || round == 3 {
                return Ok(print);
            }
            round += 1;
        }
    }

    fn listed_now(&self) -> Result<Fingerprint, HostError> {
        let tools = as_listed(&self.tools_listing()?);
        let snapshot = self.snapshot();
        let prompts = as_listed(&self.prompts_listing(&snapshot));
        // Each skill's manifest (every file read and digested) once for both lists.
        let mut manifests = Manifests::remembered();
        let resources = as_listed(&self.resources_listing(&snapshot, &mut manifests));
        let mut pages = Vec::new();
        let mut cursor = None;
        loop {
            match self.skills_listing(&snapshot, cursor.as_deref(), &mut manifests) {
                Ok((page, left_out)) => {
                    for error in left_out {
                        let _ = self.skills_error(error);
                    }
                    cursor = page.next_cursor.clone();
                    pages.push(as_listed(&page));
                }
                // Not reached with the server's own cursors; still an answer.
                Err(why) => {
                    pages.push(Value::String(why));
                    break;
                }
            }
            if cursor.is_none() {
                break;
            }
        }
        Ok(Fingerprint { tools, prompts, resources, skills: Value::Array(pages) })
    }
}

/// Each skill's manifest ([`skills::Decisions::manifest`]), computed when asked; with
/// [`Manifests::remembered`], once per skill, for answers computed together
/// from one listing (the change notifications' lists).
struct Manifests(Option<std::collections::HashMap<String, Result<rmcp::model::Skill, SkillsError>>>);

impl Manifests {
    /// Computed every time asked: what a method answers now.
    fn fresh() -> Self {
        Self(None)
    }

    /// Computed once per skill, then remembered.
    fn remembered() -> Self {
        Self(Some(std::collections::HashMap::new()))
    }

    /// The manifest of `name`, its decision kept in `decisions` for the
    /// reads that follow.
    fn of(
        &mut self,
        name: &str,
        files: &SkillFiles,
        decisions: &skills::Decisions,
    ) -> Result<rmcp::model::Skill, SkillsError> {
        match &mut self.0 {
            None => decisions.manifest(name, files),
            Some(known) => known.entry(name.to_owned()).or_insert_with(|| decisions.manifest(name, files)).clone(),
        }
    }
}

/// Who may cache an answer: only the requesting user's client. The skills
/// are the user's own (a home folder's, a workspace's), so no intermediary
/// may serve them to another user (docs/spec.md §6.9).
const CACHE_SCOPE: CacheScope = CacheScope::Private;

/// A list method's answer as the client receives it.
fn as_listed(result: &impl Serialize) -> Value {
    // rmcp's result types have string keys and no floats: serialising cannot fail.
    serde_json::to_value(result).unwrap_or_else(|error| Value::String(format!("unserialisable answer: {error}")))
}

/// Runs `work` on the blocking pool with the server's state.
async fn blocking<T: Send + 'static>(
    server: &McpServer,
    work: impl FnOnce(&State) -> Result<T, ErrorData> + Send + 'static,
) -> Result<T, ErrorData> {
    let state = Arc::clone(&server.state);
    tokio::task::spawn_blocking(move || work(&state))
        .await
        .unwrap_or_else(|error| Err(ErrorData::internal_error(format!("the request's worker failed: {error}"), None)))
}

fn host_failure(error: HostError) -> ErrorData {
    ErrorData::internal_error(error.to_string(), None)
}

impl State {
    /// `error` for the client; a skill that changed since it was listed
    /// invalidates the registry first, so the next listing is fresh (and,
    /// with the watcher on, a `list_changed` follows through notify.rs).
    fn skills_error(&self, error: SkillsError) -> ErrorData {
        if let SkillsError::Changed { .. } = error {
            self.registry.invalidate();
        }
        skills_error(error)
    }

    /// `work` on the served skill `name`; when the skill changed on disk
    /// since the cached listing (a save by rename, a swap), once more on a
    /// fresh listing, as the tool's load does, so a client never sees a
    /// refusal that only the cache's age caused.
    fn with_fresh_listing<T>(
        &self,
        name: &str,
        work: impl Fn(&SkillFiles) -> Result<T, SkillsError>,
    ) -> Result<T, ErrorData> {
        let attempt = || {
            let snapshot = self.snapshot();
            let (_, files) = skills::served(&snapshot, name, &self.user_only)?;
            work(&files)
        };
        match attempt() {
            Err(SkillsError::Changed { .. }) => {
                self.registry.invalidate();
                attempt().map_err(|error| self.skills_error(error))
            }
            other => other.map_err(|error| self.skills_error(error)),
        }
    }

    /// Writes `warning: {why}` on the server's log the first time it is
    /// given: the listings are computed again for every call and every
    /// change notification, and a refusal is news once.
    fn warn_once(&self, why: &impl std::fmt::Display) {
        let text = why.to_string();
        let mut warned = self.warned.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if warned.insert(text.clone()) {
            // A closed stderr loses the warning, never the answer.
            let _ = writeln!(std::io::stderr(), "warning: {text}");
        }
    }

    /// The skills the extension serves now, each with the decision
    /// ([`skills::Decisions::manifest`]: it opens, its files are within the limits and
    /// readable, its frontmatter parses) every method applies: listed by
    /// `resources/list`, `skills/list`, read by `resources/read` and
    /// `skills/get` only when it opens. A refusal is said on the server's
    /// log.
    fn served_skills<'a>(
        &self,
        winners: impl Iterator<Item = &'a Winner>,
        manifests: &mut Manifests,
    ) -> Vec<&'a Winner> {
        winners
            .filter(|winner| {
                let Some(files) = SkillFiles::served_by_extension(winner, &self.user_only) else { return false };
                match manifests.of(&winner.candidate.name, &files, &self.decisions) {
                    Ok(_) => true,
                    Err(error) => {
                        self.warn_once(&error);
                        let _ = self.skills_error(error);
                        false
                    }
                }
            })
            .collect()
    }
}

/// A refusal for the client: the server's fault (a file it cannot read, a
/// skill that changed under it) is an internal error; a resource not served
/// here is "not found" (`-32002`, which rmcp answers as `-32602` to a
/// 2026-07-28 client, SEP-2164); a malformed request, `-32602`.
fn skills_error(error: SkillsError) -> ErrorData {
    match error {
        SkillsError::Unknown(_) | SkillsError::NoSuchFile { .. } | SkillsError::Invalid { .. } => {
            ErrorData::resource_not_found(error.to_string(), None)
        }
        SkillsError::Unreadable { .. } | SkillsError::Changed { .. } => {
            ErrorData::internal_error(error.to_string(), None)
        }
        _ => ErrorData::invalid_params(error.to_string(), None),
    }
}

/// `error` as `-32602` when it says the request named nothing served here:
/// what `skills/get` and `resources/directory/read` answer (SEP-2640).
fn not_served_is_invalid(error: ErrorData) -> ErrorData {
    if error.code == ErrorCode::RESOURCE_NOT_FOUND {
        ErrorData::invalid_params(error.message, error.data)
    } else {
        error
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_skills_with_directory_read()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        blocking(self, |state| state.tools_listing().map_err(host_failure)).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != self.state.definition.name {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}; this server has one tool, {:?}", request.name, self.state.definition.name),
                None,
            ));
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default()).to_string();
        let outcome = blocking(self, move |state| {
            state.plugin.invoke(&state.registry, state.cwd.as_deref(), &arguments).map_err(host_failure)
        })
        .await?;
        let result = match outcome {
            ToolOutcome::Success { text, .. } => CallToolResult::success(vec![ContentBlock::text(text)]),
            ToolOutcome::Error { text } => CallToolResult::error(vec![ContentBlock::text(text)]),
        };
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        blocking(self, |state| Ok(state.prompts_listing(&state.snapshot()))).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let name = request.name;
        if !is_skill_name(&name) {
            return Err(ErrorData::invalid_params(format!("unknown prompt {name:?}"), None));
        }
        blocking(self, move |state| {
            let block = catalog::invocation_block(&state.prompt_plugin, &state.registry, state.cwd.as_deref(), &name)
                .map_err(host_failure)?;
            let block = block.ok_or_else(|| {
                ErrorData::invalid_params(format!("prompt {name:?} is unknown or not user-invocable"), None)
            })?;
            let description = state.snapshot().lookup(&name).ok().flatten().map(|w| w.candidate.description.clone());
            let result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, block)]);
            Ok(match description {
                Some(description) => result.with_description(description),
                None => result,
            }
            .into())
        })
        .await
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let cursor = request.and_then(|request| request.cursor);
        blocking(self, move |state| {
            let (result, left_out) = state
                .skills_listing(&state.snapshot(), cursor.as_deref(), &mut Manifests::fresh())
                .map_err(|why| ErrorData::invalid_params(why, None))?;
            for error in left_out {
                // Left out of the list, said once on the server's log.
                state.warn_once(&error);
                let _ = state.skills_error(error);
            }
            Ok(result)
        })
        .await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let uri = request.uri;
        blocking(self, move |state| {
            let (name, relative) = skills::parse_uri(&uri).map_err(skills_error)?;
            if relative != skill_rules::SKILL_FILE {
                return Err(ErrorData::invalid_params(format!("{uri} is not the URI of a skill's SKILL.md"), None));
            }
            let skill = state
                .with_fresh_listing(&name, |files| state.decisions.manifest(&name, files))
                .map_err(not_served_is_invalid)?;
            let mut result = GetSkillResult::new(skill);
            (result.ttl_ms, result.cache_scope) = (Some(state.ttl_ms()), Some(CACHE_SCOPE));
            Ok(result)
        })
        .await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        if request.cursor.is_some() {
            // Every directory is one page: no cursor was given.
            return Err(ErrorData::invalid_params("invalid cursor: not one this server gave", None));
        }
        let uri = request.uri;
        blocking(self, move |state| {
            let (name, relative) = skills::parse_directory_uri(&uri).map_err(skills_error)?;
            let children = state
                .with_fresh_listing(&name, |files| skills::directory(&uri, &name, &relative, files))
                .map_err(not_served_is_invalid)?;
            let mut result = ReadResourceDirectoryResult::with_all_items(children);
            (result.ttl_ms, result.cache_scope) = (Some(state.ttl_ms()), Some(CACHE_SCOPE));
            Ok(result)
        })
        .await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        blocking(self, |state| Ok(state.resources_listing(&state.snapshot(), &mut Manifests::fresh()))).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        blocking(self, move |state| {
            // SEP-2164: a resource not served names the URI in `data`.
            let with_uri = |mut error: ErrorData| {
                if error.code == ErrorCode::RESOURCE_NOT_FOUND || error.code == ErrorCode::INVALID_PARAMS {
                    error.data = Some(serde_json::json!({ "uri": uri }));
                }
                error
            };
            let (name, relative) = skills::parse_uri(&uri).map_err(skills_error).map_err(with_uri)?;
            let file = state
                .with_fresh_listing(&name, |files| skills::read(&uri, &name, &relative, files, &state.decisions))
                .map_err(with_uri)?;
            let contents = if file.text {
                let text = String::from_utf8(file.bytes).expect("checked as UTF-8");
                ResourceContents::text(text, uri.clone())
            } else {
                ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(&file.bytes), uri.clone())
            };
            let mut result = ReadResourceResult::new(vec![contents.with_mime_type(file.mime_type)]);
            (result.ttl_ms, result.cache_scope) = (Some(state.ttl_ms()), Some(CACHE_SCOPE));
            Ok(result.into())
        })
        .await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // This session's change notifications (notify.rs), on stdio and on
        // each HTTP session alike.
        self.state.notifier.add_peer(context.peer);
    }

    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().prompts_list_changed().resources_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let id = self.state.notifier.subscribe(context.sink().clone());
        context.cancelled().await;
        self.state.notifier.unsubscribe(id);
        Ok(())
    }
}

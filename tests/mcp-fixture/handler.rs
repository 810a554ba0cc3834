//! [`ConformanceFixture`]: the product's [`McpServer`] with the diagnostic
//! tools added, and nothing else changed.
//!
//! Every method of rmcp's [`ServerHandler`] is forwarded to the server, the
//! ones it implements and the ones it leaves to rmcp's defaults alike, so
//! the fixture answers as the product does even after the product overrides
//! another one. Only `tools/list` and `tools/call` differ: the first lists
//! the diagnostic tools after the product's own, the second answers them.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelledNotificationParam, CompleteRequestParams,
    CompleteResult, CustomNotification, CustomRequest, CustomResult, DiscoverResult, GetPromptRequestParams,
    GetPromptResponse, GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion,
    ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse,
    ServerConfig, SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ErrorData, ServerHandler};
use skill_host::mcp::McpServer;

use crate::diagnostics::{self, SkillWriter};

/// The product's server, with the diagnostic tools ([`diagnostics`]).
#[derive(Clone)]
pub struct ConformanceFixture {
    server: McpServer,
    skills: Arc<SkillWriter>,
}

impl ConformanceFixture {
    /// `server` with the diagnostic tools; the trigger tools write with `skills`.
    pub fn new(server: McpServer, skills: SkillWriter) -> Self {
        Self { server, skills: Arc::new(skills) }
    }
}

impl ServerHandler for ConformanceFixture {
    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut listing = self.server.list_tools(request, context).await?;
        listing.tools.extend(diagnostics::tools());
        Ok(listing)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match diagnostics::call(&request, &context, &self.skills).await {
            Some(answer) => answer,
            None => self.server.call_tool(request, context).await,
        }
    }

    // Everything else is the product's.

    fn get_info(&self) -> ServerConfig {
        self.server.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.server.supported_protocol_versions()
    }

    fn negotiate_initialize(&self, request: &InitializeRequestParams) -> Result<InitializeResult, ErrorData> {
        self.server.negotiate_initialize(request)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.server.initialize(request, context).await
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        self.server.discover(context).await
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.server.ping(context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.server.complete(request, context).await
    }

    #[expect(deprecated, reason = "logging/setLevel is deprecated by SEP-2577; forwarded as the product answers it")]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.server.set_level(request, context).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.server.get_tool(name)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.server.list_prompts(request, context).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.server.get_prompt(request, context).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.server.list_resources(request, context).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.server.list_resource_templates(request, context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.server.read_resource(request, context).await
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.server.read_resource_directory(request, context).await
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        self.server.list_skills(request, context).await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.server.get_skill(request, context).await
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        self.server.accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.server.listen(context).await
    }

    #[expect(deprecated, reason = "forwarded for a 2025 session, as the product answers it")]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.server.subscribe(request, context).await
    }

    #[expect(deprecated, reason = "forwarded for a 2025 session, as the product answers it")]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.server.unsubscribe(request, context).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.server.get_task(request, context).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.server.update_task(request, context).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.server.cancel_task(request, context).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        self.server.on_custom_request(request, context).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.server.on_initialized(context).await
    }

    async fn on_cancelled(&self, notification: CancelledNotificationParam, context: NotificationContext<RoleServer>) {
        self.server.on_cancelled(notification, context).await
    }

    async fn on_progress(&self, notification: ProgressNotificationParam, context: NotificationContext<RoleServer>) {
        self.server.on_progress(notification, context).await
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.server.on_roots_list_changed(context).await
    }

    async fn on_custom_notification(&self, notification: CustomNotification, context: NotificationContext<RoleServer>) {
        self.server.on_custom_notification(notification, context).await
    }
}

//! The plugin as the host uses it: each export called in the sandbox, its
//! output validated before use, messages converted to and from the session
//! log's shape.

mod decision;
mod output;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde_json::{Value, json};

use crate::bindings::Guest;
use crate::bindings::plugin as api;
use crate::bindings::types as wit;
use crate::error::HostError;
use crate::imports::{CallContext, StepCall, content_to_wit};
use crate::registry::{ResourceBase, ResourceBaseJson, SkillRegistry, is_skill_name};
use crate::sandbox::{EMBEDDED_PLUGIN, ManualClock, Sandbox, SandboxLimits, StoreState};
use crate::session::SharedSession;
use crate::trace::{self, TraceRecorder, traced};
use wasmtime::Store;

use self::decision::{apply_decision, is_digest};
use self::output::OutputCheck;

pub use skill_rules::ToolView;

/// A step decision: messages are user-message `data` objects as the session
/// log stores them (`content`, `source`, `role`, `id`).
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Enter the step with these messages.
    Enter(Vec<Value>),
    /// Do not run the step; the listener's opaque reason.
    Reject(Option<String>),
}

/// What a pre-step produced.
#[derive(Debug, Clone, PartialEq)]
pub enum StepOutcome {
    /// The decision to use.
    Decided(Decision),
    /// The step was aborted.
    Aborted,
}

/// The `skill` tool's definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDefinition {
    /// `skill`.
    pub name: String,
    /// The description the model sees.
    pub description: String,
    /// The parameters' JSON Schema.
    pub parameters: Value,
}

/// Which body a successful `skill` call returned, recorded with the result
/// in the session when the plugin asks (its `loadedSkills` configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedSkill {
    /// The skill's name (the value's).
    pub name: String,
    /// The provider that served it (the value's).
    pub provider: String,
    /// The body's digest, as the registry gave it.
    pub body_digest: Option<String>,
}

/// The longest body digest a plugin may hand back (`sha256:` and 64 hex
/// digits is 71).
const MAX_DIGEST_BYTES: usize = 128;

/// The result of a `skill` call.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// `value` is `{name, provider, resourceBase?, content}`; `text` what the model sees.
    Success {
        /// The canonical value.
        value: Value,
        /// The rendered text.
        text: String,
        /// What to record of the load, when the plugin asks.
        loaded: Option<LoadedSkill>,
    },
    /// The model sees `text` (`Error: …`).
    Error {
        /// The error text.
        text: String,
    },
}

impl ToolOutcome {
    /// The one text block the model sees.
    pub fn text(&self) -> &str {
        match self {
            Self::Success { text, .. } | Self::Error { text } => text,
        }
    }
}

/// Inputs of one pre-step besides the decision.
#[derive(Debug, Clone, Default)]
pub struct StepInput {
    /// The session's working directory (shared, so a step copies no string).
    pub cwd: Option<Arc<str>>,
    /// How `skill` resolves for the agent.
    pub tool_view: ToolView,
    /// Raised when the step is aborted, before or during the call; a skill
    /// provider still answering is then abandoned and the step is aborted.
    pub abort: Option<Arc<AtomicBool>>,
    /// Decide without appending the decision to the session: a preview of
    /// what the step would enter. The plugin still remembers what it read.
    pub preview: bool,
}

/// A loaded, configured plugin component.
pub struct Plugin {
    sandbox: Sandbox,
}

impl Plugin {
    /// Compiles `component` and checks that it accepts `config` (JSON).
    pub fn new(component: &[u8], config: &str, limits: SandboxLimits) -> Result<Self, HostError> {
        Ok(Self { sandbox: Sandbox::new(component, config, limits)? })
    }

    /// Like [`new`](Self::new), keeping the compiled component in `cache_dir`
    /// between processes (see [`crate::sandbox::component_cache`]).
    pub fn new_cached(
        component: &[u8],
        config: &str,
        limits: SandboxLimits,
        cache_dir: &std::path::Path,
    ) -> Result<Self, HostError> {
        Ok(Self { sandbox: Sandbox::with_cache(component, config, limits, Some(cache_dir))? })
    }

    /// Like [`new_cached`](Self::new_cached) (`cache_dir` optional),
    /// recording every call in `recorder`: the trace another host replays
    /// (docs/spec.md §7.2, [`TraceRecorder::to_json`]).
    pub fn traced(
        component: &[u8],
        config: &str,
        limits: SandboxLimits,
        cache_dir: Option<&std::path::Path>,
        recorder: TraceRecorder,
    ) -> Result<Self, HostError> {
        Ok(Self { sandbox: Sandbox::traced(component, config, limits, cache_dir, recorder)? })
    }

    /// The plugin built into this host.
    pub fn embedded(config: &str, limits: SandboxLimits) -> Result<Self, HostError> {
        Self::new(EMBEDDED_PLUGIN, config, limits)
    }

    /// The same component under the same limits with another configuration
    /// (JSON): it shares this plugin's compiled component, engine and epoch
    /// ticker, so nothing is compiled again; its instances are its own.
    pub fn with_config(&self, config: &str) -> Result<Self, HostError> {
        Ok(Self { sandbox: self.sandbox.reconfigured(config)? })
    }

    /// The configuration the plugin accepted (JSON).
    pub(crate) fn config(&self) -> &str {
        self.sandbox.config()
    }

    /// The contract version the component was built for (its plugin
    /// export's); an earlier one runs through its own bindings.
    pub fn contract_version(&self) -> crate::ContractVersion {
        self.sandbox.contract_version()
    }

    /// The limits every call runs under.
    pub fn limits(&self) -> SandboxLimits {
        self.sandbox.limits()
    }

    /// The handle that advances the deadline clock, when the limits say
    /// [`DeadlineClock::Manual`](crate::DeadlineClock::Manual); `None` under
    /// the ticker.
    pub fn manual_clock(&self) -> Option<ManualClock> {
        self.sandbox.manual_clock()
    }

    fn output_check(&self, call: &'static str) -> OutputCheck {
        OutputCheck::new(call, self.sandbox.limits().output)
    }

    /// Runs one plugin method, and when traced sets what the host concluded
    /// on the call it made (none when it failed before calling).
    fn traced_method<T>(
        &self,
        run: impl FnOnce() -> Result<T, HostError>,
        value: impl FnOnce(&T) -> Value,
    ) -> Result<T, HostError> {
        let Some(recorder) = self.sandbox.recorder() else { return run() };
        trace::begin_call();
        let result = run();
        recorder.conclude(&result, value);
        result
    }

    /// The `skill` tool's definition, as the plugin declares it.
    pub fn definition(&self) -> Result<ToolDefinition, HostError> {
        self.traced_method(|| self.definition_checked(), |definition| {
            json!({"name": definition.name, "description": definition.description, "parameters": definition.parameters})
        })
    }

    fn definition_checked(&self) -> Result<ToolDefinition, HostError> {
        let definition = self.sandbox.call("definition", CallContext::detached(), |store, plugin| {
            traced(store, |_| json!({}), |store| plugin.call_definition(store))
        })?;
        let mut check = self.output_check("definition");
        check.text(|| "the name".to_owned(), &definition.name)?;
        check.text(|| "the description".to_owned(), &definition.description)?;
        check.text(|| "the parameters".to_owned(), &definition.parameters)?;
        let parameters = serde_json::from_str(&definition.parameters).map_err(|error| HostError::InvalidOutput {
            call: "definition",
            reason: format!("parameters are not JSON: {error}"),
        })?;
        Ok(ToolDefinition { name: definition.name, description: definition.description, parameters })
    }

    /// Runs the pre-step for a session and returns the validated decision
    /// ([`crate::run_step`] is the step boundary that calls it).
    /// Every message returned is either one of the proposed messages
    /// (returned as proposed, id included) or one the plugin wrote: a
    /// catalog, a skill a user invoked, or the note naming the invoked
    /// skills it did not load.
    pub(crate) fn pre_step(
        &self,
        registry: &Arc<SkillRegistry>,
        session: &SharedSession,
        input: &StepInput,
        decision: Decision,
    ) -> Result<StepOutcome, HostError> {
        self.traced_method(
            || self.pre_step_checked(registry, session, input, decision),
            |outcome| match outcome {
                StepOutcome::Aborted => json!("aborted"),
                StepOutcome::Decided(Decision::Reject(reason)) => json!({ "reject": reason }),
                // Without ids: the host gives added messages fresh ones.
                StepOutcome::Decided(Decision::Enter(messages)) => json!({
                    "enter": messages.iter().map(|data| {
                        let mut data = data.clone();
                        if let Some(fields) = data.as_object_mut() {
                            fields.remove("id");
                        }
                        data
                    }).collect::<Vec<_>>()
                }),
            },
        )
    }

    fn pre_step_checked(
        &self,
        registry: &Arc<SkillRegistry>,
        session: &SharedSession,
        input: &StepInput,
        decision: Decision,
    ) -> Result<StepOutcome, HostError> {
        let (session_key, history_version) = {
            let log = session.lock();
            (log.key(), log.history_version())
        };
        let (proposal, proposed) = match &decision {
            Decision::Enter(messages) => {
                let count = u32::try_from(messages.len())
                    .map_err(|_| HostError::Input(format!("{} proposed messages are too many", messages.len())))?;
                let proposed = match messages.as_slice() {
                    // The steady step: nothing to convert (collecting even no
                    // messages through `Result` cost ~60 instructions a step).
                    [] => Vec::new(),
                    messages => messages.iter().map(message_to_wit).collect::<Result<_, _>>()?,
                };
                (api::Proposal::Enter(count), proposed)
            }
            Decision::Reject(_) => (api::Proposal::Reject, Vec::new()),
        };
        let context = api::StepContext {
            session: session_key,
            history_version,
            registry_revision: registry.cached_revision(input.cwd.as_deref().map(std::path::Path::new)),
            proposal,
            tool_view: input.tool_view.into(),
            aborted: input.abort.as_ref().is_some_and(|flag| flag.load(std::sync::atomic::Ordering::Relaxed)),
        };
        let call = CallContext {
            registry: Some(Arc::clone(registry)),
            cwd: input.cwd.clone(),
            session: Some(session.clone()),
            abort: input.abort.clone(),
            step: Some(StepCall { proposed, ..StepCall::default() }),
            // The sandbox sets it from the call's own deadline.
            ..CallContext::default()
        };
        let (returned, step) = self.sandbox.call("pre-step", call, |store, plugin| {
            // The proposed messages too: the host checks the decision against them.
            let args = |state: &StoreState| {
                let proposed = state.call.step.as_ref().map(|step| trace::value(&step.proposed));
                json!({ "context": trace::value(&context), "proposed": proposed })
            };
            let returned = traced(store, args, |store| plugin.call_pre_step(store, context))?;
            Ok((returned, store.data_mut().call.step.take().unwrap_or_default()))
        })?;
        match returned {
            Err(api::StepError::Aborted) => Ok(StepOutcome::Aborted),
            Ok(()) => apply_decision(decision, step, self.sandbox.limits().output).map(StepOutcome::Decided),
        }
    }

    /// Pi-style disclosure: the system-prompt block for `cwd`'s model-invocable
    /// skills with their file locations (empty when there are none).
    pub fn system_prompt(&self, registry: &Arc<SkillRegistry>, cwd: Option<&str>) -> Result<String, HostError> {
        self.traced_method(|| self.system_prompt_checked(registry, cwd), |text| json!(text))
    }

    fn system_prompt_checked(&self, registry: &Arc<SkillRegistry>, cwd: Option<&str>) -> Result<String, HostError> {
        let call = CallContext::registry_for(registry, cwd);
        let run = |store: &mut Store<StoreState>, plugin: &Guest| {
            traced(store, |_| json!({}), |store| plugin.call_system_prompt(store))
        };
        match self.sandbox.call("system-prompt", call, run)? {
            Ok(text) => {
                self.output_check("system-prompt").text(|| "the system prompt".to_owned(), &text)?;
                Ok(text)
            }
            Err(api::StepError::Aborted) => Err(aborted("system-prompt")),
        }
    }

    /// Pi's `/skill:NAME args` command: the expanded text, or `text` unchanged.
    pub fn expand(&self, registry: &Arc<SkillRegistry>, cwd: Option<&str>, text: &str) -> Result<String, HostError> {
        self.traced_method(|| self.expand_checked(registry, cwd, text), |text| json!(text))
    }

    fn expand_checked(
        &self,
        registry: &Arc<SkillRegistry>,
        cwd: Option<&str>,
        text: &str,
    ) -> Result<String, HostError> {
        let call = CallContext::registry_for(registry, cwd);
        let run = |store: &mut Store<StoreState>, plugin: &Guest| {
            traced(store, |_| json!({ "text": text }), |store| plugin.call_expand(store, text))
        };
        match self.sandbox.call("expand", call, run)? {
            Ok(text) => {
                self.output_check("expand").text(|| "the expansion".to_owned(), &text)?;
                Ok(text)
            }
            Err(api::StepError::Aborted) => Err(aborted("expand")),
        }
    }

    /// Calls the `skill` tool with the model's JSON `arguments`.
    pub fn invoke(
        &self,
        registry: &Arc<SkillRegistry>,
        cwd: Option<&str>,
        arguments: &str,
    ) -> Result<ToolOutcome, HostError> {
        self.traced_method(
            || self.invoke_checked(registry, cwd, arguments),
            |outcome| match outcome {
                ToolOutcome::Success { value, text, loaded } => json!({
                    "value": value,
                    "text": text,
                    "loaded": loaded.as_ref().map(|loaded| json!({
                        "name": loaded.name, "provider": loaded.provider, "body_digest": loaded.body_digest,
                    })),
                }),
                ToolOutcome::Error { text } => json!({ "error": text }),
            },
        )
    }

    fn invoke_checked(
        &self,
        registry: &Arc<SkillRegistry>,
        cwd: Option<&str>,
        arguments: &str,
    ) -> Result<ToolOutcome, HostError> {
        let call = CallContext::registry_for(registry, cwd);
        let run = |store: &mut Store<StoreState>, plugin: &Guest| {
            let returned =
                traced(store, |_| json!({ "arguments": arguments }), |store| plugin.call_invoke(store, arguments))?;
            Ok((returned, std::mem::take(&mut store.data_mut().call.files_read)))
        };
        let (returned, files_read) = self.sandbox.call("invoke", call, run)?;
        validate_tool_result(&returned, arguments, &files_read, self.output_check("invoke"))?;
        Ok(match returned {
            Ok(success) => {
                let value = match success.value {
                    api::ToolValue::Skill(result) => {
                        let mut value = json!({"name": result.name, "provider": result.provider});
                        if let Some(base) = result.resource_base.map(ResourceBase::from) {
                            value["resourceBase"] = ResourceBaseJson::serialize(&base, serde_json::value::Serializer)
                                .expect("a resource base is a JSON object");
                        }
                        value["content"] = Value::String(result.content);
                        value
                    }
                    api::ToolValue::File(file) => {
                        json!({"name": file.name, "provider": file.provider, "path": file.path, "content": file.content})
                    }
                    api::ToolValue::Matches(matches) => {
                        let matches: Vec<Value> = matches
                            .into_iter()
                            .map(|found| json!({"name": found.name, "description": found.description}))
                            .collect();
                        json!({ "matches": matches })
                    }
                };
                let loaded = success.loaded.map(|loaded| LoadedSkill {
                    name: loaded.name,
                    provider: loaded.provider,
                    body_digest: loaded.body_digest,
                });
                ToolOutcome::Success { value, text: success.text, loaded }
            }
            Err(text) => ToolOutcome::Error { text },
        })
    }
}

/// Checks a `skill` call's result before anyone sees it: every string within
/// the caps; a success names a valid skill, the one the arguments asked for,
/// and a provider; an error reads `Error: …` as the model must see it.
fn validate_tool_result(
    returned: &Result<api::ToolSuccess, String>,
    arguments: &str,
    files_read: &[(String, String)],
    mut check: OutputCheck,
) -> Result<(), HostError> {
    let invalid = |reason: String| HostError::InvalidOutput { call: "invoke", reason };
    let success = match returned {
        Err(text) => {
            check.text(|| "the error text".to_owned(), text)?;
            if !text.starts_with("Error: ") {
                return Err(invalid("a tool error must read `Error: <message>`".to_owned()));
            }
            return Ok(());
        }
        Ok(success) => success,
    };
    check.text(|| "the text".to_owned(), &success.text)?;
    let (name, provider) = match &success.value {
        api::ToolValue::Skill(value) => {
            check.text(|| "the value's name".to_owned(), &value.name)?;
            check.text(|| "the value's provider".to_owned(), &value.provider)?;
            check.text(|| "the value's content".to_owned(), &value.content)?;
            if let Some(
                wit::ResourceBase::Directory(base) | wit::ResourceBase::Url(base) | wit::ResourceBase::Opaque(base),
            ) = &value.resource_base
            {
                check.text(|| "the value's resource base".to_owned(), base)?;
            }
            (&value.name, &value.provider)
        }
        api::ToolValue::File(file) => {
            check.text(|| "the value's name".to_owned(), &file.name)?;
            check.text(|| "the value's provider".to_owned(), &file.provider)?;
            check.text(|| "the value's path".to_owned(), &file.path)?;
            check.text(|| "the value's content".to_owned(), &file.content)?;
            (&file.name, &file.provider)
        }
        api::ToolValue::Matches(matches) => return validate_matches(matches, success, arguments, check),
    };
    validate_named(name, provider, success, arguments)?;
    // A file only when the registry read it for this call (docs/spec.md §8.5).
    if let api::ToolValue::File(file) = &success.value
        && !files_read.iter().any(|(skill, path)| *skill == file.name && *path == file.path)
    {
        return Err(invalid(format!(
            "the value is file {} of skill \"{}\", which the registry did not read for this call",
            json_quoted(&file.path),
            file.name
        )));
    }
    Ok(())
}

/// Checks a skill or a file value: it names a valid skill, the one the
/// arguments asked for, and a provider; the load it records is the value's.
fn validate_named(name: &str, provider: &str, success: &api::ToolSuccess, arguments: &str) -> Result<(), HostError> {
    let invalid = |reason: String| HostError::InvalidOutput { call: "invoke", reason };
    if !is_skill_name(name) {
        return Err(invalid(format!("the value names skill {}, which is not a valid skill name", json_quoted(name))));
    }
    // The tool loads exactly the skill it was asked for (docs/spec.md §3.3).
    let requested = serde_json::from_str::<Value>(arguments).ok();
    let requested = requested.as_ref().and_then(|arguments| arguments.get("name")).and_then(Value::as_str);
    if requested != Some(name) {
        return Err(invalid(format!(
            "the value is skill \"{}\", but the arguments asked for {}",
            name,
            requested.map_or_else(|| "no valid name".to_owned(), |name| format!("\"{name}\""))
        )));
    }
    if provider.is_empty() {
        return Err(invalid(format!("the value of skill \"{}\" names no provider", name)));
    }
    if let Some(loaded) = &success.loaded {
        if loaded.name != name || loaded.provider != provider {
            return Err(invalid(format!(
                "the load it records is skill \"{}\" of provider \"{}\", not the value's",
                loaded.name, loaded.provider
            )));
        }
        if let Some(digest) = &loaded.body_digest
            && !is_digest(digest)
        {
            return Err(invalid(format!(
                "the load it records has a body digest that is not up to {MAX_DIGEST_BYTES} printable ASCII characters"
            )));
        }
    }
    Ok(())
}

/// Checks what a `query` found (docs/spec.md §3.14): asked for by a string
/// `query` and no `name`, at most [`skill_rules::MAX_SEARCH_MATCHES`] distinct valid
/// skill names, no load to record.
fn validate_matches(
    matches: &[api::SkillMatch],
    success: &api::ToolSuccess,
    arguments: &str,
    mut check: OutputCheck,
) -> Result<(), HostError> {
    let invalid = |reason: String| HostError::InvalidOutput { call: "invoke", reason };
    let arguments = serde_json::from_str::<Value>(arguments).ok();
    let query = arguments.as_ref().and_then(|arguments| arguments.get("query")).and_then(Value::as_str);
    let named = arguments.as_ref().is_some_and(|arguments| arguments.get("name").is_some());
    if query.is_none() || named {
        return Err(invalid("it returned search matches, but the arguments have no query".to_owned()));
    }
    if matches.len() > skill_rules::MAX_SEARCH_MATCHES {
        return Err(invalid(format!(
            "it returned {} search matches; at most {} are allowed",
            matches.len(),
            skill_rules::MAX_SEARCH_MATCHES
        )));
    }
    for (index, found) in matches.iter().enumerate() {
        check.text(|| format!("search match {index}'s name"), &found.name)?;
        check.text(|| format!("search match {index}'s description"), &found.description)?;
        if !is_skill_name(&found.name) || matches[..index].iter().any(|earlier| earlier.name == found.name) {
            return Err(invalid(format!(
                "search match {index} names skill {}, which is not a valid skill name or is listed twice",
                json_quoted(&found.name)
            )));
        }
    }
    if success.loaded.is_some() {
        return Err(invalid("it records a load for search matches".to_owned()));
    }
    Ok(())
}

/// Only a step has an abort signal; another call reporting one is invalid.
fn aborted(call: &'static str) -> HostError {
    HostError::InvalidOutput { call, reason: "reported an abort outside a step".to_owned() }
}

fn message_to_wit(data: &Value) -> Result<wit::Message, HostError> {
    let source = data
        .get("source")
        .filter(|source| source.is_object())
        .ok_or_else(|| HostError::Input(format!("a proposed message has no source object: {data}")))?;
    let content = data
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| HostError::Input(format!("a proposed message has no content array: {data}")))?;
    Ok(wit::Message { source: source.to_string(), content: content_to_wit(content) })
}

/// `text` as a JSON string literal, as the Node and Python hosts quote a name
/// in an error (`JSON.stringify`): `"\u0001"`, not Rust's `"\u{1}"`.
fn json_quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

#[cfg(test)]
mod tests;

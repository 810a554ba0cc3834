//! The plugin as the host uses it: each export called in the sandbox, its
//! output validated before use, messages converted to and from the session
//! log's shape.

mod output;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, LazyLock, Mutex};

use serde_json::{Value, json};

use crate::bindings::plugin as api;
use crate::bindings::step::DecidedMessage;
use crate::bindings::types as wit;
use crate::error::HostError;
use crate::imports::{CallContext, StepCall, content_to_wit};
use crate::message::{self, CATALOG_SOURCE};
use crate::registry::{ResourceBase, ResourceBaseJson, SkillRegistry, is_skill_name};
use crate::sandbox::{EMBEDDED_PLUGIN, ManualClock, OutputLimits, Sandbox, SandboxLimits};
use crate::session::SessionLog;

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

    /// The plugin built into this host.
    pub fn embedded(config: &str, limits: SandboxLimits) -> Result<Self, HostError> {
        Self::new(EMBEDDED_PLUGIN, config, limits)
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

    /// The `skill` tool's definition, as the plugin declares it.
    pub fn definition(&self) -> Result<ToolDefinition, HostError> {
        let definition = self.sandbox.call("definition", CallContext::detached(), |store, plugin| {
            plugin.dsh_skill_plugin().call_definition(store)
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
        session: &Arc<Mutex<SessionLog>>,
        input: &StepInput,
        decision: Decision,
    ) -> Result<StepOutcome, HostError> {
        let (session_key, history_version) = {
            let log = crate::step::lock(session);
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
            session: Some(Arc::clone(session)),
            abort: input.abort.clone(),
            step: Some(StepCall { proposed, ..StepCall::default() }),
            // The sandbox sets it from the call's own deadline.
            ..CallContext::default()
        };
        let (returned, step) = self.sandbox.call("pre-step", call, |store, plugin| {
            let returned = plugin.dsh_skill_plugin().call_pre_step(&mut *store, context)?;
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
        let call = CallContext::registry_for(registry, cwd);
        match self
            .sandbox
            .call("system-prompt", call, |store, plugin| plugin.dsh_skill_plugin().call_system_prompt(store))?
        {
            Ok(text) => {
                self.output_check("system-prompt").text(|| "the system prompt".to_owned(), &text)?;
                Ok(text)
            }
            Err(api::StepError::Aborted) => Err(aborted("system-prompt")),
        }
    }

    /// Pi's `/skill:NAME args` command: the expanded text, or `text` unchanged.
    pub fn expand(&self, registry: &Arc<SkillRegistry>, cwd: Option<&str>, text: &str) -> Result<String, HostError> {
        let call = CallContext::registry_for(registry, cwd);
        match self.sandbox.call("expand", call, |store, plugin| plugin.dsh_skill_plugin().call_expand(store, text))? {
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
        let call = CallContext::registry_for(registry, cwd);
        let returned = self
            .sandbox
            .call("invoke", call, |store, plugin| plugin.dsh_skill_plugin().call_invoke(store, arguments))?;
        validate_tool_result(&returned, arguments, self.output_check("invoke"))?;
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
    let value = match &success.value {
        api::ToolValue::Skill(value) => value,
        api::ToolValue::Matches(matches) => return validate_matches(matches, success, arguments, check),
    };
    check.text(|| "the value's name".to_owned(), &value.name)?;
    check.text(|| "the value's provider".to_owned(), &value.provider)?;
    check.text(|| "the value's content".to_owned(), &value.content)?;
    if let Some(wit::ResourceBase::Directory(base) | wit::ResourceBase::Url(base) | wit::ResourceBase::Opaque(base)) =
        &value.resource_base
    {
        check.text(|| "the value's resource base".to_owned(), base)?;
    }
    if !is_skill_name(&value.name) {
        return Err(invalid(format!("the value names skill {:?}, which is not a valid skill name", value.name)));
    }
    // The tool loads exactly the skill it was asked for (docs/spec.md §3.3).
    let requested = serde_json::from_str::<Value>(arguments).ok();
    let requested = requested.as_ref().and_then(|arguments| arguments.get("name")).and_then(Value::as_str);
    if requested != Some(value.name.as_str()) {
        return Err(invalid(format!(
            "the value is skill \"{}\", but the arguments asked for {}",
            value.name,
            requested.map_or_else(|| "no valid name".to_owned(), |name| format!("\"{name}\""))
        )));
    }
    if value.provider.is_empty() {
        return Err(invalid(format!("the value of skill \"{}\" names no provider", value.name)));
    }
    if let Some(loaded) = &success.loaded {
        if loaded.name != value.name || loaded.provider != value.provider {
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
                "search match {index} names skill {:?}, which is not a valid skill name or is listed twice",
                found.name
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

/// The source of the note that names the user-invoked skills a pre-step did
/// not load (docs/spec.md §3.10).
static INVOCATION_NOTE_SOURCE: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(skill_rules::INVOCATION_NOTE_SOURCE).expect("the invocation note's source is JSON")
});

/// Applies what the plugin decided to the proposal, checking it first: a
/// reject cannot be changed; an enter may keep proposed messages (by index,
/// in their order, each once) and add at most one catalog with the plugin's
/// own source, plus one skill injection per distinct `/name` a user wrote in
/// a proposed message, plus at most one note naming the skills it did not
/// load.
fn apply_decision(proposed: Decision, step: StepCall, limits: OutputLimits) -> Result<Decision, HostError> {
    let invalid = |reason: String| HostError::InvalidOutput { call: "pre-step", reason };
    if step.decisions > 1 {
        return Err(invalid(format!("it decided {} times; a pre-step decides at most once", step.decisions)));
    }
    let mut proposed = match proposed {
        Decision::Reject(reason) if step.decided.is_none() => return Ok(Decision::Reject(reason)),
        Decision::Reject(_) => return Err(invalid("the plugin may not change a reject".to_owned())),
        Decision::Enter(proposed) => proposed,
    };
    let Some(decided) = step.decided else {
        return Ok(Decision::Enter(proposed));
    };
    let mut check = OutputCheck::new("pre-step", limits);
    check.added_count(decided.iter().filter(|message| matches!(message, DecidedMessage::Added(_))).count())?;
    let invocable = gesture_names(&proposed);
    let mut kept_up_to = 0;
    let mut catalogs = 0;
    let mut notes = 0;
    let mut added_count = 0;
    let mut injected: Vec<String> = Vec::new();
    let mut noticed: Vec<String> = Vec::new();
    let mut reloads = 0;
    // Never more than the proposal and the cap, however long the list is.
    let mut messages = Vec::with_capacity(decided.len().min(proposed.len().saturating_add(limits.max_added_messages)));
    for message in decided {
        let message = match message {
            DecidedMessage::Proposed(index) => {
                let index = index as usize;
                if index < kept_up_to || index >= proposed.len() {
                    return Err(invalid(format!(
                        "it kept proposed message {index} out of order or out of range ({} proposed)",
                        proposed.len()
                    )));
                }
                kept_up_to = index + 1;
                // Each index is taken once (they only go up).
                messages.push(std::mem::take(&mut proposed[index]));
                continue;
            }
            DecidedMessage::Added(message) => message,
        };
        added_count += 1;
        check.added_message(added_count, &message)?;
        let added = added_message(&message).map_err(invalid)?;
        match &added {
            Added::Catalog(_) => {
                catalogs += 1;
                if catalogs > 1 {
                    return Err(invalid("more than one catalog was added".to_owned()));
                }
            }
            Added::Invocation(name, _) => {
                if !invocable.contains(name) || injected.contains(name) {
                    return Err(invalid(format!("skill \"{name}\" was injected without a user's /{name}")));
                }
                injected.push(name.clone());
            }
            Added::Note(_) => {
                notes += 1;
                if notes > 1 {
                    return Err(invalid("more than one invocation note was added".to_owned()));
                }
            }
            Added::Notice(Notice::About(name), _) => {
                if noticed.contains(name) {
                    return Err(invalid(format!("skill \"{name}\" got more than one notice")));
                }
                noticed.push(name.clone());
            }
            Added::Notice(Notice::Reload, _) => {
                reloads += 1;
                if reloads > 1 {
                    return Err(invalid("more than one reload notice was added".to_owned()));
                }
            }
        }
        messages.push(match added {
            Added::Catalog(data) | Added::Invocation(_, data) | Added::Note(data) | Added::Notice(_, data) => data,
        });
    }
    Ok(Decision::Enter(messages))
}

/// A message the plugin added, accepted.
enum Added {
    /// A catalog: the plugin's own source, one text block.
    Catalog(Value),
    /// A user-invoked skill's instructions.
    Invocation(String, Value),
    /// The note naming the user-invoked skills not loaded.
    Note(Value),
    /// A notice about skills the model loaded (docs/spec.md §3.12).
    Notice(Notice, Value),
}

/// What a skill notice is about.
enum Notice {
    /// One skill changed or went away.
    About(String),
    /// The skills whose loaded instructions compaction hid.
    Reload,
}

/// The source `kind` of a skill notice.
const NOTICE_KIND: &str = "skill-notice";

/// Reads a skill notice's source: exactly the fields of its form.
fn notice(source: &Value) -> Option<Notice> {
    let fields = source.as_object()?;
    let string = |key: &str| fields.get(key).and_then(Value::as_str);
    let named = || string("name").filter(|name| is_skill_name(name)).map(|name| Notice::About(name.to_owned()));
    match string("form")? {
        "changed" => {
            let digest = match fields.get("bodyDigest") {
                None => true,
                Some(Value::String(digest)) => is_digest(digest),
                Some(_) => false,
            };
            let provider = string("provider").is_some_and(|provider| !provider.is_empty());
            let expected = 4 + usize::from(fields.contains_key("bodyDigest"));
            (digest && provider && fields.len() == expected).then(named)?
        }
        "gone" => (fields.len() == 3).then(named)?,
        "reload" => {
            let names = fields.get("names")?.as_array()?;
            if names.is_empty() || names.len() > skill_rules::MAX_RELOAD_NAMES || fields.len() != 3 {
                return None;
            }
            let mut seen = std::collections::HashSet::with_capacity(names.len());
            names
                .iter()
                .all(|name| name.as_str().is_some_and(|name| is_skill_name(name) && seen.insert(name)))
                .then_some(Notice::Reload)
        }
        _ => None,
    }
}

/// The source of a catalog in DeepSeek Harness 0.1.0-rc.8's form (with
/// `catalogSource: "skill-catalog"`, docs/spec.md §3.1): exactly `kind`,
/// `form`, `entries`, an optional `"update": true` and, under a budget, a
/// string `coverage` (§3.13), each entry exactly a skill `name` and a
/// string `description`.
fn is_skill_catalog_source(source: &Value) -> bool {
    let Some(fields) = source.as_object() else { return false };
    let update = match fields.get("update") {
        None => 0,
        Some(Value::Bool(true)) => 1,
        Some(_) => return false,
    };
    let coverage = match fields.get("coverage") {
        None => 0,
        Some(Value::String(_)) => 1,
        Some(_) => return false,
    };
    let entries = fields.get("entries").and_then(Value::as_array);
    fields.len() == 3 + update + coverage
        && fields.get("kind").and_then(Value::as_str) == Some(skill_rules::SKILL_CATALOG_KIND)
        && fields.get("form").and_then(Value::as_str) == Some("catalog")
        && entries.is_some_and(|entries| {
            entries.iter().all(|entry| {
                entry.as_object().is_some_and(|entry| {
                    entry.len() == 2
                        && entry.get("name").and_then(Value::as_str).is_some_and(is_skill_name)
                        && entry.get("description").is_some_and(Value::is_string)
                })
            })
        })
}

/// The source of a catalog update (with `catalogUpdates: "delta"`,
/// docs/spec.md §3.13): exactly the catalog source's `kind` and `plugin`,
/// `"form": "catalog-update"` and `removed`, distinct skill names.
fn is_catalog_update_source(source: &Value) -> bool {
    let Some(fields) = source.as_object() else { return false };
    let Some(removed) = fields.get("removed").and_then(Value::as_array) else { return false };
    let mut seen = std::collections::HashSet::with_capacity(removed.len());
    fields.len() == 4
        && fields.get("kind") == CATALOG_SOURCE.get("kind")
        && fields.get("plugin") == CATALOG_SOURCE.get("plugin")
        && fields.get("form").and_then(Value::as_str) == Some(skill_rules::CATALOG_UPDATE_FORM)
        && removed.iter().all(|name| name.as_str().is_some_and(|name| is_skill_name(name) && seen.insert(name)))
}

/// A body digest a plugin may hand back: up to [`MAX_DIGEST_BYTES`] of printable ASCII.
fn is_digest(digest: &str) -> bool {
    digest.len() <= MAX_DIGEST_BYTES && digest.bytes().all(|byte| byte.is_ascii_graphic())
}

fn added_message(message: &wit::Message) -> Result<Added, String> {
    let source: Value = serde_json::from_str(&message.source)
        .map_err(|error| format!("an added message's source is not JSON: {error}"))?;
    let [wit::ContentBlock::Text(text)] = message.content.as_slice() else {
        return Err("an added message must be exactly one text block".to_owned());
    };
    if source == *CATALOG_SOURCE || is_skill_catalog_source(&source) || is_catalog_update_source(&source) {
        return Ok(Added::Catalog(message::user_message(source, text)));
    }
    if source == *INVOCATION_NOTE_SOURCE {
        return Ok(Added::Note(message::user_message(source, text)));
    }
    if source.get("kind").and_then(Value::as_str) == Some(NOTICE_KIND) {
        return match notice(&source) {
            Some(notice) => Ok(Added::Notice(notice, message::user_message(source, text))),
            None => {
                Err(format!("an added skill notice has source {source}, which is not a changed, gone or reload notice"))
            }
        };
    }
    let invocation = source.as_object().and_then(|fields| {
        let name = fields.get("name")?.as_str()?;
        let exact = fields.len() == 3
            && fields.get("kind")?.as_str()? == "skill-invocation"
            && fields.get("form")?.as_str()? == "instructions";
        exact.then(|| name.to_owned())
    });
    match invocation {
        Some(name) => Ok(Added::Invocation(name, message::user_message(source, text))),
        None => Err(format!(
            "an added message has source {source}; the plugin may only write {} or a skill invocation",
            *CATALOG_SOURCE
        )),
    }
}

/// Every `/name` token in the proposed messages' text (a superset of what the
/// plugin may inject: it also checks the source is the user's own).
fn gesture_names(proposed: &[Value]) -> Vec<String> {
    let mut names = Vec::new();
    for data in proposed {
        let blocks = data.get("content").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        for text in blocks.iter().filter_map(|block| block.get("text").and_then(Value::as_str)) {
            for token in text.split(|c: char| c.is_whitespace() || c == '\u{FEFF}') {
                if let Some(name) = token.strip_prefix('/') {
                    names.push(name.to_owned());
                }
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn added(source: &str, texts: &[&str]) -> DecidedMessage {
        DecidedMessage::Added(wit::Message {
            source: source.to_owned(),
            content: texts.iter().map(|text| wit::ContentBlock::Text((*text).to_owned())).collect(),
        })
    }

    fn injection(name: &str) -> DecidedMessage {
        added(&format!(r#"{{"kind":"skill-invocation","name":"{name}","form":"instructions"}}"#), &["body"])
    }

    const NOTE: &str = r#"{"kind":"skill-invocation","form":"not-loaded"}"#;

    fn notice_about(name: &str) -> DecidedMessage {
        added(&format!(r#"{{"kind":"skill-notice","form":"gone","name":"{name}"}}"#), &["gone"])
    }

    #[test]
    fn skill_notices_are_accepted_only_in_their_exact_shapes_and_once() {
        let accepted = [
            r#"{"kind":"skill-notice","form":"changed","name":"a","provider":"local","bodyDigest":"sha256:00"}"#,
            r#"{"provider":"p","name":"b","form":"changed","kind":"skill-notice"}"#,
            r#"{"kind":"skill-notice","form":"gone","name":"c"}"#,
            r#"{"kind":"skill-notice","form":"reload","names":["d","e"]}"#,
        ];
        let decided = accepted.iter().map(|source| added(source, &["text"])).collect();
        let Ok(Decision::Enter(messages)) = apply(&[], decided) else { panic!() };
        assert_eq!(messages.len(), 4);
        assert_eq!(messages[2]["source"], serde_json::json!({"kind": "skill-notice", "form": "gone", "name": "c"}));
        for bad in [
            r#"{"kind":"skill-notice","form":"gone","name":"Bad"}"#,
            r#"{"kind":"skill-notice","form":"gone","name":"c","extra":1}"#,
            r#"{"kind":"skill-notice","form":"changed","name":"a"}"#,
            r#"{"kind":"skill-notice","form":"changed","name":"a","provider":""}"#,
            r#"{"kind":"skill-notice","form":"changed","name":"a","provider":"p","bodyDigest":"has space"}"#,
            r#"{"kind":"skill-notice","form":"changed","name":"a","provider":"p","bodyDigest":7}"#,
            r#"{"kind":"skill-notice","form":"reload","names":[]}"#,
            r#"{"kind":"skill-notice","form":"reload","names":["d","d"]}"#,
            &format!(
                r#"{{"kind":"skill-notice","form":"reload","names":[{}]}}"#,
                (0..=skill_rules::MAX_RELOAD_NAMES).map(|at| format!("\"n{at}\"")).collect::<Vec<_>>().join(",")
            ),
            r#"{"kind":"skill-notice","form":"stale","name":"c"}"#,
        ] {
            let source: Value = serde_json::from_str(bad).unwrap();
            assert_eq!(
                refusal(apply(&[], vec![added(bad, &["text"])])),
                format!("an added skill notice has source {source}, which is not a changed, gone or reload notice"),
                "{bad}"
            );
        }
        assert_eq!(
            refusal(apply(&[], vec![notice_about("a"), notice_about("a")])),
            "skill \"a\" got more than one notice"
        );
        let reload = r#"{"kind":"skill-notice","form":"reload","names":["d"]}"#;
        assert_eq!(
            refusal(apply(&[], vec![added(reload, &["r"]), added(reload, &["r"])])),
            "more than one reload notice was added"
        );
        assert_eq!(
            refusal(apply(&[], vec![added(accepted[2], &["a", "b"])])),
            "an added message must be exactly one text block"
        );
    }

    #[test]
    fn a_catalog_in_the_skill_catalog_form_is_accepted_only_in_its_exact_shape_and_once() {
        let initial = r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":"One."}]}"#;
        let update = r#"{"entries":[],"update":true,"form":"catalog","kind":"skill-catalog"}"#;
        let budgeted = r#"{"kind":"skill-catalog","form":"catalog","entries":[],"coverage":"Catalog coverage: 0 of 0 skills listed."}"#;
        for source in [initial, update, budgeted] {
            let Ok(Decision::Enter(messages)) = apply(&[], vec![added(source, &["catalog"])]) else { panic!() };
            assert_eq!(messages[0]["source"], serde_json::from_str::<Value>(source).unwrap());
        }
        assert_eq!(
            refusal(apply(&[], vec![added(initial, &["c"]), added(&CATALOG_SOURCE.to_string(), &["c"])])),
            "more than one catalog was added"
        );
        for bad in [
            r#"{"kind":"skill-catalog","form":"catalog"}"#,
            r#"{"kind":"skill-catalog","form":"catalog","update":false,"entries":[]}"#,
            r#"{"kind":"skill-catalog","form":"list","entries":[]}"#,
            r#"{"kind":"skill-catalog","form":"catalog","entries":[],"extra":1}"#,
            r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"Bad","description":"x"}]}"#,
            r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":1}]}"#,
            r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":"x","more":1}]}"#,
            r#"{"kind":"skill-catalog","form":"catalog","entries":{}}"#,
            r#"{"kind":"skill-catalog","form":"catalog","entries":[],"coverage":1}"#,
        ] {
            assert_refused_as_foreign(bad);
        }
    }

    /// A message added with source `bad` is refused as no source the plugin may write.
    fn assert_refused_as_foreign(bad: &str) {
        let source: Value = serde_json::from_str(bad).unwrap();
        assert_eq!(
            refusal(apply(&[], vec![added(bad, &["text"])])),
            format!(
                "an added message has source {source}; the plugin may only write {} or a skill invocation",
                *CATALOG_SOURCE
            ),
            "{bad}"
        );
    }

    #[test]
    fn a_catalog_update_is_accepted_only_in_its_exact_shape_and_as_the_one_catalog() {
        let update = r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":["a","b"]}"#;
        let Ok(Decision::Enter(messages)) = apply(&[], vec![added(update, &["update"])]) else { panic!() };
        assert_eq!(messages[0]["source"], serde_json::from_str::<Value>(update).unwrap());
        assert_eq!(
            refusal(apply(&[], vec![added(update, &["u"]), added(&CATALOG_SOURCE.to_string(), &["c"])])),
            "more than one catalog was added"
        );
        for bad in [
            r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update"}"#,
            r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":["a","a"]}"#,
            r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":["A"]}"#,
            r#"{"kind":"plugin","plugin":"other","form":"catalog-update","removed":[]}"#,
            r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog","removed":[]}"#,
            r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":[],"x":1}"#,
        ] {
            assert_refused_as_foreign(bad);
        }
    }

    #[test]
    fn search_matches_answer_a_query_with_at_most_five_distinct_skills_and_record_no_load() {
        let found = |names: &[&str], loaded: bool| -> Result<api::ToolSuccess, String> {
            Ok(api::ToolSuccess {
                value: api::ToolValue::Matches(
                    names
                        .iter()
                        .map(|name| api::SkillMatch { name: (*name).to_owned(), description: "d".to_owned() })
                        .collect(),
                ),
                text: "t".to_owned(),
                loaded: loaded.then(|| api::LoadedSkill {
                    name: "a".to_owned(),
                    provider: "p".to_owned(),
                    body_digest: None,
                }),
            })
        };
        let check = || OutputCheck::new("invoke", OutputLimits::default());
        assert!(validate_tool_result(&found(&["a", "b"], false), r#"{"query":"x"}"#, check()).is_ok());
        for (returned, arguments, reason) in [
            (found(&["a"], false), r#"{"name":"a"}"#, "it returned search matches, but the arguments have no query"),
            (
                found(&["a"], false),
                r#"{"name":"a","query":"x"}"#,
                "it returned search matches, but the arguments have no query",
            ),
            (
                found(&["a", "b", "c", "d", "e", "f"], false),
                r#"{"query":"x"}"#,
                "it returned 6 search matches; at most 5 are allowed",
            ),
            (
                found(&["a", "a"], false),
                r#"{"query":"x"}"#,
                "search match 1 names skill \"a\", which is not a valid skill name or is listed twice",
            ),
            (found(&["a"], true), r#"{"query":"x"}"#, "it records a load for search matches"),
        ] {
            match validate_tool_result(&returned, arguments, check()) {
                Err(HostError::InvalidOutput { call: "invoke", reason: got }) => assert_eq!(got, reason),
                other => panic!("expected a refusal, got {other:?}"),
            }
        }
    }

    /// The decision `decided` made on one user message naming `names`.
    fn apply(names: &[String], decided: Vec<DecidedMessage>) -> Result<Decision, HostError> {
        let text: Vec<String> = names.iter().map(|name| format!("/{name}")).collect();
        let proposed = message::user_message(message::user_source(), &text.join(" "));
        let step = StepCall { decided: Some(decided), decisions: 1, ..StepCall::default() };
        apply_decision(Decision::Enter(vec![proposed]), step, OutputLimits::default())
    }

    fn refusal(result: Result<Decision, HostError>) -> String {
        match result {
            Err(HostError::InvalidOutput { call: "pre-step", reason }) => reason,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn the_default_cap_holds_everything_the_plugin_adds_to_a_step() {
        // A catalog, the notices and the reminder (docs/spec.md §3.12),
        // MAX_INVOKED_SKILLS injections and the note (§3.10).
        assert_eq!(
            skill_rules::MAX_PLUGIN_ADDED_MESSAGES,
            1 + skill_rules::MAX_SKILL_NOTICES + 1 + skill_rules::MAX_INVOKED_SKILLS + 1
        );
        assert!(OutputLimits::default().max_added_messages >= skill_rules::MAX_PLUGIN_ADDED_MESSAGES);
        // That worst case, with seventy skills named, is accepted as it is.
        let names: Vec<String> = (1..=70).map(|index| format!("s{index}")).collect();
        let mut decided = vec![DecidedMessage::Proposed(0), added(&CATALOG_SOURCE.to_string(), &["catalog"])];
        decided.extend((0..skill_rules::MAX_SKILL_NOTICES).map(|index| notice_about(&format!("n{index}"))));
        decided.push(added(r#"{"kind":"skill-notice","form":"reload","names":["r"]}"#, &["reload"]));
        decided.extend(names[..skill_rules::MAX_INVOKED_SKILLS].iter().map(|name| injection(name)));
        decided.push(added(skill_rules::INVOCATION_NOTE_SOURCE, &["Not loaded: /s17, …"]));
        assert_eq!(decided.len() - 1, skill_rules::MAX_PLUGIN_ADDED_MESSAGES);
        let Ok(Decision::Enter(messages)) = apply(&names, decided) else { panic!() };
        assert_eq!(messages.len(), 1 + skill_rules::MAX_PLUGIN_ADDED_MESSAGES);
        let note = messages.last().unwrap();
        assert_eq!(note["source"], serde_json::json!({"kind": "skill-invocation", "form": "not-loaded"}));
        assert_eq!(message::single_text(note), Some("Not loaded: /s17, …"));
        assert_eq!(note["role"], "user");
    }

    #[test]
    fn the_note_is_accepted_once_in_any_key_order_and_as_one_text_block() {
        let names = ["a".to_owned()];
        assert_eq!(NOTE, skill_rules::INVOCATION_NOTE_SOURCE);
        for source in [
            NOTE,
            r#"{"form":"not-loaded","kind":"skill-invocation"}"#,
            "{ \"form\" : \"not-loaded\", \"kind\":\"skill-invocation\" }",
        ] {
            let Ok(Decision::Enter(messages)) = apply(&names, vec![injection("a"), added(source, &["n"])]) else {
                panic!("{source}")
            };
            assert_eq!(messages.len(), 2);
        }
        assert_eq!(
            refusal(apply(&names, vec![added(NOTE, &["n"]), added(NOTE, &["n"])])),
            "more than one invocation note was added"
        );
        for texts in [&[][..], &["n", "n"][..]] {
            assert_eq!(
                refusal(apply(&names, vec![added(NOTE, texts)])),
                "an added message must be exactly one text block"
            );
        }
        let other = DecidedMessage::Added(wit::Message {
            source: NOTE.to_owned(),
            content: vec![wit::ContentBlock::Other(r#"{"type":"image"}"#.to_owned())],
        });
        assert_eq!(refusal(apply(&names, vec![other])), "an added message must be exactly one text block");
    }

    #[test]
    fn anything_else_like_the_note_keeps_todays_refusal() {
        for source in [
            r#"{"kind":"skill-invocation","form":"not-loaded","name":"a"}"#,
            r#"{"kind":"skill-invocation","form":"not-loaded","extra":1}"#,
            r#"{"kind":"skill-invocation","form":"Not-loaded"}"#,
            r#"{"kind":"skill-invocation"}"#,
            r#"{"kind":"skill-invocation","form":["not-loaded"]}"#,
        ] {
            let parsed: Value = serde_json::from_str(source).unwrap();
            assert_eq!(
                refusal(apply(&["a".to_owned()], vec![added(source, &["n"])])),
                format!(
                    "an added message has source {parsed}; the plugin may only write {{\"kind\":\"plugin\",\"plugin\":\"dsh-tool-skill\"}} or a skill invocation"
                ),
                "{source}"
            );
        }
    }
}

//! Scenario files (SPEC §7): the plugin driven through in-memory providers and
//! an in-memory session, one step at a time, with a JSON record of each step.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use skill_host::message::{self, single_text};
use skill_host::providers::memory::{self, LoadOutcome, MemoryProvider, MemorySkill};
use skill_host::{
    Decision, HostError, InvocationPolicy, Plugin, RuntimeSkill, SandboxLimits, SessionHeader, SessionLog,
    SkillProvider, SkillRegistry, StepInput, StepOutcome, SurfaceOp, ToolOutcome, ToolView, run_step,
};

/// The cwd of a scenario that names none.
pub const DEFAULT_CWD: &str = "/workspace";
/// The text of the summary a `compact` step writes.
pub const COMPACTION_SUMMARY: &str = "Summary of the earlier conversation.";

/// A parsed scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Plugin configuration JSON (`None`: the scenario sets none).
    pub config: Option<String>,
    /// The session's cwd.
    pub cwd: String,
    providers: Vec<Value>,
    runtime: Vec<Value>,
    session: Vec<Value>,
    steps: Vec<Value>,
}

impl Scenario {
    /// Parses a scenario document; errors name the field at fault.
    pub fn parse(text: &str) -> Result<Self, HostError> {
        let document: Value = serde_json::from_str(text)
            .map_err(|error| HostError::Input(format!("scenario is not valid JSON: {error}")))?;
        let Value::Object(mut fields) = document else {
            return Err(HostError::Input("scenario must be a JSON object".to_owned()));
        };
        for key in fields.keys() {
            if !["config", "cwd", "providers", "runtime", "session", "steps"].contains(&key.as_str()) {
                return Err(HostError::Input(format!("scenario has an unknown field `{key}`")));
            }
        }
        let list = |fields: &mut Map<String, Value>, key: &str| -> Result<Vec<Value>, HostError> {
            match fields.remove(key) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => Ok(items),
                Some(_) => Err(HostError::Input(format!("scenario field `{key}` must be an array"))),
            }
        };
        let config = match fields.remove("config") {
            None | Some(Value::Null) => None,
            Some(config) => Some(config.to_string()),
        };
        let cwd = match fields.remove("cwd") {
            None | Some(Value::Null) => DEFAULT_CWD.to_owned(),
            Some(Value::String(cwd)) => cwd,
            Some(_) => return Err(HostError::Input("scenario field `cwd` must be a string".to_owned())),
        };
        if !fields.contains_key("steps") {
            return Err(HostError::Input("scenario has no `steps`".to_owned()));
        }
        Ok(Self {
            config,
            cwd,
            providers: list(&mut fields, "providers")?,
            runtime: list(&mut fields, "runtime")?,
            session: list(&mut fields, "session")?,
            steps: list(&mut fields, "steps")?,
        })
    }

    /// Runs every step against `component` and returns `{"steps":[…]}`.
    /// `cache_dir`, when given, keeps the compiled component between runs.
    pub fn replay(
        &self,
        component: &[u8],
        limits: SandboxLimits,
        cache_dir: Option<&std::path::Path>,
    ) -> Result<Value, HostError> {
        let config = self.config.as_deref().unwrap_or("{}");
        let plugin = match cache_dir {
            Some(dir) => Plugin::new_cached(component, config, limits, dir)?,
            None => Plugin::new(component, config, limits)?,
        };
        let registry = Arc::new(SkillRegistry::new());
        registry.set_providers(providers(&self.providers)?);
        set_runtime(&registry, &self.runtime)?;
        let session = Arc::new(Mutex::new(SessionLog::in_memory(SessionHeader::new(Some(self.cwd.clone())))));
        seed(&session, &self.session)?;
        let mut records = Vec::with_capacity(self.steps.len());
        for (index, step) in self.steps.iter().enumerate() {
            let record = self.run(&plugin, &registry, &session, step).map_err(|error| match error {
                HostError::Input(reason) => HostError::Input(format!("step {index}: {reason}")),
                other => other,
            })?;
            records.push(record);
        }
        Ok(json!({ "steps": records }))
    }

    fn run(
        &self,
        plugin: &Plugin,
        registry: &Arc<SkillRegistry>,
        session: &Arc<Mutex<SessionLog>>,
        step: &Value,
    ) -> Result<Value, HostError> {
        let op = step.get("op").and_then(Value::as_str).ok_or_else(|| input("a step needs an `op` string"))?;
        match op {
            "pre-step" | "propose" => {
                let proposed = match step.get("reject") {
                    None => Decision::Enter(proposed_messages(step.get("messages"))?),
                    Some(Value::Null) => Decision::Reject(None),
                    Some(Value::String(reason)) => Decision::Reject(Some(reason.clone())),
                    Some(_) => return Err(input("`reject` must be a reason string or null")),
                };
                let input = StepInput {
                    cwd: Some(self.cwd.as_str().into()),
                    tool_view: tool_view(step.get("toolView"))?,
                    abort: None,
                    preview: op == "propose",
                };
                let outcome = run_step(plugin, registry, session, &input, proposed)?;
                Ok(decision_record(&outcome))
            }
            "invoke" => {
                let arguments = match (step.get("arguments"), step.get("name")) {
                    (Some(arguments), _) => arguments.to_string(),
                    (None, Some(name)) => json!({ "name": name }).to_string(),
                    (None, None) => return Err(input("an invoke step needs `name` or `arguments`")),
                };
                Ok(match plugin.invoke(registry, Some(&self.cwd), &arguments)? {
                    ToolOutcome::Success { value, text } => json!({"ok": value, "text": text}),
                    ToolOutcome::Error { text } => json!({ "error": text }),
                })
            }
            "compact" => {
                lock(session).compact(COMPACTION_SUMMARY)?;
                Ok(json!({}))
            }
            "set-providers" => {
                let list = step
                    .get("providers")
                    .and_then(Value::as_array)
                    .ok_or_else(|| input("`set-providers` needs a `providers` array"))?;
                registry.set_providers(providers(list)?);
                Ok(json!({}))
            }
            "set-runtime" => {
                let list = step
                    .get("runtime")
                    .and_then(Value::as_array)
                    .ok_or_else(|| input("`set-runtime` needs a `runtime` array"))?;
                set_runtime(registry, list)?;
                Ok(json!({}))
            }
            other => Err(input(&format!("unknown step op `{other}`"))),
        }
    }
}

/// Locks the scenario's session (never poisoned: a step that panicked ends the replay).
fn lock(session: &Mutex<SessionLog>) -> std::sync::MutexGuard<'_, SessionLog> {
    session.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn input(reason: &str) -> HostError {
    HostError::Input(reason.to_owned())
}

/// The record of a pre-step or proposal: every message of the decision.
fn decision_record(outcome: &StepOutcome) -> Value {
    match outcome {
        StepOutcome::Decided(Decision::Enter(messages)) => {
            let messages: Vec<Value> = messages
                .iter()
                .map(|data| match single_text(data) {
                    Some(text) => json!({"source": data["source"], "text": text}),
                    None => json!({"source": data["source"], "content": data["content"]}),
                })
                .collect();
            json!({"kind": "enter", "messages": messages})
        }
        StepOutcome::Decided(Decision::Reject(_)) => json!({"kind": "reject"}),
        StepOutcome::Aborted => json!({"kind": "aborted"}),
    }
}

fn tool_view(value: Option<&Value>) -> Result<ToolView, HostError> {
    match value.and_then(Value::as_str) {
        None if value.is_none_or(Value::is_null) => Ok(ToolView::Visible),
        Some("visible") => Ok(ToolView::Visible),
        Some("hidden") => Ok(ToolView::Hidden),
        Some("shadowed") => Ok(ToolView::Shadowed),
        _ => Err(input("`toolView` must be \"visible\", \"hidden\" or \"shadowed\"")),
    }
}

/// A step's proposed messages: user-message `data` objects (an id is added
/// when missing), or plain strings as user messages.
fn proposed_messages(value: Option<&Value>) -> Result<Vec<Value>, HostError> {
    let Some(value) = value.filter(|value| !value.is_null()) else {
        return Ok(Vec::new());
    };
    let items = value.as_array().ok_or_else(|| input("`messages` must be an array"))?;
    items
        .iter()
        .map(|item| match item {
            Value::String(text) => Ok(message::user_message(message::user_source(), text)),
            Value::Object(fields) => {
                let mut data = fields.clone();
                if !data.get("source").is_some_and(Value::is_object) {
                    return Err(input("a proposed message needs a `source` object"));
                }
                if !data.get("content").is_some_and(Value::is_array) {
                    return Err(input("a proposed message needs a `content` array"));
                }
                data.entry("role").or_insert_with(|| json!("user"));
                data.entry("id").or_insert_with(|| json!(message::new_message_id()));
                Ok(Value::Object(data))
            }
            _ => Err(input("a proposed message must be an object or a string")),
        })
        .collect()
}

fn providers(list: &[Value]) -> Result<Vec<Arc<dyn SkillProvider>>, HostError> {
    list.iter()
        .enumerate()
        .map(|(index, value)| {
            let provider = |reason: String| HostError::Input(format!("provider {index}: {reason}"));
            let name = value
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| provider("needs a `name` string".to_owned()))?;
            let complete = match value.get("complete") {
                None | Some(Value::Null) => true,
                Some(Value::Bool(complete)) => *complete,
                Some(_) => return Err(provider("`complete` must be a boolean".to_owned())),
            };
            let fail = match value.get("fail") {
                None | Some(Value::Null) => None,
                Some(Value::String(message)) => Some(message.clone()),
                Some(_) => return Err(provider("`fail` must be a string or null".to_owned())),
            };
            let skills = value
                .get("skills")
                .and_then(Value::as_array)
                .map(|skills| skills.iter().map(memory_skill).collect::<Result<Vec<_>, _>>())
                .transpose()
                .map_err(provider)?
                .unwrap_or_default();
            let built = MemoryProvider::new(name.to_owned(), complete, fail, skills).map_err(provider)?;
            Ok(Arc::new(built) as Arc<dyn SkillProvider>)
        })
        .collect()
}

fn memory_skill(value: &Value) -> Result<MemorySkill, String> {
    let Value::Object(fields) = value else {
        return Err("a skill must be an object".to_owned());
    };
    let mut fields = fields.clone();
    let loaded = match fields.remove("loaded") {
        None => LoadOutcome::AsListed,
        Some(Value::Null) => LoadOutcome::Missing,
        Some(Value::Object(changes)) => LoadOutcome::Changed(changes),
        Some(_) => return Err("`loaded` must be an object or null".to_owned()),
    };
    Ok(MemorySkill { fields, loaded })
}

fn set_runtime(registry: &SkillRegistry, list: &[Value]) -> Result<(), HostError> {
    registry.clear_runtime();
    for (index, value) in list.iter().enumerate() {
        let runtime = |reason: String| HostError::Input(format!("runtime skill {index}: {reason}"));
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let mut skill = RuntimeSkill::new(
            text("name").ok_or_else(|| runtime("needs a `name` string".to_owned()))?,
            text("description").ok_or_else(|| runtime("needs a `description` string".to_owned()))?,
            text("content").ok_or_else(|| runtime("needs a `content` string".to_owned()))?,
        );
        if let Some(invocation) = value.get("invocation").filter(|value| !value.is_null()) {
            skill.invocation = serde_json::from_value::<InvocationPolicy>(invocation.clone())
                .map_err(|error| runtime(format!("`invocation`: {error}")))?;
        }
        skill.when_to_use = text("whenToUse");
        if let Some(source) = text("source") {
            skill.source = source;
        }
        if let Some(provider) = text("provider") {
            skill.provider = provider;
        }
        skill.resource_base = memory::resource_base(value.get("resourceBase")).map_err(runtime)?;
        registry.register_runtime(skill).map_err(runtime)?;
    }
    Ok(())
}

/// Seeds the session with the scenario's events, seq assigned in order.
fn seed(session: &Mutex<SessionLog>, events: &[Value]) -> Result<(), HostError> {
    let mut log = lock(session);
    for (index, event) in events.iter().enumerate() {
        let seed = |reason: &str| HostError::Input(format!("session event {index}: {reason}"));
        let event_type = event.get("type").and_then(Value::as_str).ok_or_else(|| seed("needs a `type` string"))?;
        let data = event.get("data").cloned().unwrap_or_else(|| json!({}));
        let op = match event.get("surfaceOp") {
            None | Some(Value::Null) => None,
            Some(Value::String(op)) if op == "append" => Some(SurfaceOp::Append),
            Some(op) if op.get("op").and_then(Value::as_str) == Some("replace") => {
                let bound = |key: &str| {
                    op.get(key).and_then(Value::as_u64).ok_or_else(|| seed("a replace needs `start` and `end` seqs"))
                };
                Some(SurfaceOp::Replace { start: bound("start")?, end: bound("end")? })
            }
            Some(_) => {
                return Err(seed("`surfaceOp` must be \"append\" or {\"op\":\"replace\",\"start\",\"end\"}"));
            }
        };
        if event_type == "user/message" {
            log.append_user_messages(vec![(data, op.unwrap_or(SurfaceOp::Append))])?;
        } else {
            log.append_event(event_type, data, op)?;
        }
    }
    Ok(())
}

//! Scenario files (docs/spec.md §7): the plugin driven through in-memory
//! providers and an in-memory session, one step at a time, with a JSON record
//! of each step.
//!
//! The file is read whole by serde into the types below, so a malformed
//! scenario is refused before the plugin starts, in serde's words (with a
//! line and column). What is checked later, while replaying, is what the
//! library checks, in its words: the in-memory provider's skills, runtime
//! registrations and the session log's seeding.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, Error as _, MapAccess, Visitor};
use serde_json::{Map, Value, json};

use super::tool_record::ToolRecord;
use skill_host::message::{self, single_text};
use skill_host::providers::memory::{self, LoadOutcome, MemoryProvider, MemorySkill};
use skill_host::{
    Decision, HostError, InvocationPolicy, Plugin, ResourceBase, RuntimeSkill, SandboxLimits, SessionHeader,
    SessionLog, SharedSession, SkillProvider, SkillRegistry, StepInput, StepOutcome, SurfaceOp, ToolView,
    TraceRecorder, record_tool_result, run_step,
};

/// The cwd of a scenario that names none.
pub const DEFAULT_CWD: &str = "/workspace";
/// The text of the summary a `compact` step writes.
pub const COMPACTION_SUMMARY: &str = "Summary of the earlier conversation.";

/// A parsed scenario.
///
/// - `null` is a missing field, but where `present` reads it.
/// - A field no type names is ignored, but at the top level.
/// - The structures are JSON objects only (see `Object`), and serde refuses a
///   field of theirs given twice.
/// - The values kept as JSON (`config`, skills, messages, arguments, event
///   data, `surfaceOp`, `invocation`, `resourceBase`) are read as `Value`s,
///   where a key given twice is its last value.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Scenario {
    /// Plugin configuration as JSON text (`None`: the scenario sets none).
    #[serde(default, deserialize_with = "json_text")]
    pub config: Option<String>,
    /// The session's cwd.
    #[serde(default = "default_cwd", deserialize_with = "cwd")]
    pub cwd: String,
    #[serde(default, deserialize_with = "objects")]
    providers: Vec<ProviderEntry>,
    #[serde(default, deserialize_with = "objects")]
    runtime: Vec<RuntimeEntry>,
    #[serde(default, deserialize_with = "objects")]
    session: Vec<SeedEvent>,
    /// Required, though `null` is an empty list like everywhere else.
    #[serde(deserialize_with = "objects")]
    steps: Vec<Step>,
}

/// One step; `op` names it, the other fields are the op's.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
#[expect(clippy::enum_variant_names, reason = "the variants are the ops, `pre-step` among them")]
enum Step {
    /// Runs the plugin and appends what it enters, like a step boundary.
    PreStep(Proposal),
    /// Runs the plugin and records the decision without appending it.
    Propose(Proposal),
    /// Calls the tool.
    Invoke(Invoke),
    /// Hides the surface behind a summary (docs/spec.md §5.4).
    Compact,
    /// Replaces the registry's providers.
    SetProviders {
        #[serde(deserialize_with = "some_objects")]
        providers: Vec<ProviderEntry>,
    },
    /// Replaces the registry's runtime skills.
    SetRuntime {
        #[serde(deserialize_with = "some_objects")]
        runtime: Vec<RuntimeEntry>,
    },
}

/// What a `pre-step` or `propose` proposes, and the tool view it runs with.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Proposal {
    /// Missing: enter `messages`; `null` or a string: reject, without or with
    /// a reason (the messages, still read, are not proposed).
    #[serde(default, deserialize_with = "present")]
    reject: Option<Option<String>>,
    #[serde(default, deserialize_with = "list")]
    messages: Vec<ProposedMessage>,
    #[serde(default, deserialize_with = "tool_view")]
    tool_view: ToolView,
}

/// A proposed user message: a plain string, or the log's `data` object as
/// given (`role` and `id` are added when it is proposed).
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "Value")]
enum ProposedMessage {
    Text(String),
    Data(Map<String, Value>),
}

impl TryFrom<Value> for ProposedMessage {
    type Error = &'static str;

    fn try_from(value: Value) -> Result<Self, Self::Error> {
        match value {
            Value::String(text) => Ok(Self::Text(text)),
            Value::Object(data) if !data.get("source").is_some_and(Value::is_object) => {
                Err("a proposed message needs a `source` object")
            }
            Value::Object(data) if !data.get("content").is_some_and(Value::is_array) => {
                Err("a proposed message needs a `content` array")
            }
            Value::Object(data) => Ok(Self::Data(data)),
            _ => Err("a proposed message must be a string or an object"),
        }
    }
}

/// An `invoke`: `arguments` (any JSON, `null` included) or else `name`.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "InvokeFields")]
struct Invoke {
    /// The tool's JSON arguments.
    arguments: String,
}

#[derive(Deserialize)]
struct InvokeFields {
    #[serde(default, deserialize_with = "present")]
    arguments: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    name: Option<Value>,
}

impl TryFrom<InvokeFields> for Invoke {
    type Error = &'static str;

    fn try_from(fields: InvokeFields) -> Result<Self, Self::Error> {
        let arguments = match (fields.arguments, fields.name) {
            (Some(arguments), _) => arguments,
            (None, Some(name)) => json!({ "name": name }),
            (None, None) => return Err("an invoke step needs `name` or `arguments`"),
        };
        Ok(Self { arguments: arguments.to_string() })
    }
}

/// A provider: its skills stay JSON objects, which [`MemoryProvider`]
/// checks itself when the replay builds it.
#[derive(Debug, Clone, Deserialize)]
struct ProviderEntry {
    name: String,
    #[serde(default)]
    complete: Option<bool>,
    #[serde(default)]
    fail: Option<String>,
    #[serde(default, deserialize_with = "list")]
    skills: Vec<SkillEntry>,
}

/// A provider's skill: its fields, less `loaded` (what a load finds).
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "Map<String, Value>")]
struct SkillEntry(MemorySkill);

impl TryFrom<Map<String, Value>> for SkillEntry {
    type Error = &'static str;

    fn try_from(mut fields: Map<String, Value>) -> Result<Self, Self::Error> {
        let loaded = match fields.remove("loaded") {
            None => LoadOutcome::AsListed,
            Some(Value::Null) => LoadOutcome::Missing,
            Some(Value::Object(changes)) => LoadOutcome::Changed(changes),
            Some(_) => return Err("`loaded` must be an object or null"),
        };
        Ok(Self(MemorySkill { fields, loaded }))
    }
}

/// A runtime skill. `whenToUse`, `source` and `provider` count only as
/// strings; any other value leaves the default.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuntimeEntry {
    name: String,
    description: String,
    content: String,
    #[serde(default, deserialize_with = "invocation")]
    invocation: Option<InvocationPolicy>,
    #[serde(default, deserialize_with = "string_or_ignored")]
    when_to_use: Option<String>,
    #[serde(default, deserialize_with = "string_or_ignored")]
    source: Option<String>,
    #[serde(default, deserialize_with = "string_or_ignored")]
    provider: Option<String>,
    #[serde(default, deserialize_with = "resource_base")]
    resource_base: Option<ResourceBase>,
}

/// A seeded session event. `data` defaults to `{}` (an explicit `null`
/// stays `null`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SeedEvent {
    #[serde(rename = "type")]
    event_type: String,
    #[serde(default, deserialize_with = "present")]
    data: Option<Value>,
    #[serde(default)]
    surface_op: Option<SurfaceOpJson>,
}

/// `"append"` or `{"op":"replace","start":S,"end":E}` (read as a `Value`,
/// other fields ignored).
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(try_from = "Value")]
struct SurfaceOpJson(SurfaceOp);

impl TryFrom<Value> for SurfaceOpJson {
    type Error = &'static str;

    fn try_from(value: Value) -> Result<Self, Self::Error> {
        let seq = |key: &str| value.get(key).and_then(Value::as_u64);
        match (&value, value.get("op").and_then(Value::as_str)) {
            (Value::String(op), _) if op == "append" => Ok(Self(SurfaceOp::Append)),
            (Value::Object(_), Some("replace")) => match (seq("start"), seq("end")) {
                (Some(start), Some(end)) => Ok(Self(SurfaceOp::Replace { start, end })),
                _ => Err("a replace needs `start` and `end` seqs"),
            },
            _ => Err("`surfaceOp` must be \"append\" or {\"op\":\"replace\",\"start\",\"end\"}"),
        }
    }
}

/// `T` read from a JSON object only: serde's derives also take a sequence of
/// the fields (and a tagged enum one whose first element is the tag), which
/// no scenario means.
#[derive(Debug, Clone, Copy)]
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Fields<T> {
            type Value = T;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map))
            }
        }
        deserializer.deserialize_map(Fields(PhantomData)).map(Object)
    }
}

fn default_cwd() -> String {
    DEFAULT_CWD.to_owned()
}

/// A list; `null` is an empty one.
fn list<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

/// A list of [`Object`]s; `null` is an empty one.
fn objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Vec<T>, D::Error> {
    Ok(list::<D, Object<T>>(deserializer)?.into_iter().map(|Object(item)| item).collect())
}

/// A list of [`Object`]s, `null` refused.
fn some_objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Vec<T>, D::Error> {
    Ok(Vec::<Object<T>>::deserialize(deserializer)?.into_iter().map(|Object(item)| item).collect())
}

/// A field that is there, `null` included (`Some(None)`), as opposed to a
/// missing one (`None`, through `#[serde(default)]`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// Any JSON value but `null`, as its text.
fn json_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<Value>::deserialize(deserializer)?.map(|value| value.to_string()))
}

fn cwd<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(deserializer)?.unwrap_or_else(default_cwd))
}

fn string_or_ignored<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::String(text) => Some(text),
        _ => None,
    })
}

/// An [`InvocationPolicy`] read from a `Value`, as the in-memory provider
/// reads its skills' (a map of both flags, or a sequence of two).
fn invocation<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<InvocationPolicy>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::Null => Ok(None),
        value => serde_json::from_value(value).map(Some).map_err(D::Error::custom),
    }
}

fn resource_base<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<ResourceBase>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    memory::resource_base(Some(&value)).map_err(D::Error::custom)
}

/// A [`ToolView`] by its name (`"visible"`, `"hidden"` or `"shadowed"`);
/// `null` is visible.
fn tool_view<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ToolView, D::Error> {
    let Some(name) = Option::<String>::deserialize(deserializer)? else {
        return Ok(ToolView::Visible);
    };
    ToolView::from_name(&name).ok_or_else(|| {
        let names = ToolView::ALL.map(|view| format!("`{}`", view.name())).join(", ");
        D::Error::custom(format!("unknown tool view `{name}`, expected one of {names}"))
    })
}

impl Scenario {
    /// Parses a scenario document; a malformed one gets serde's text.
    pub fn parse(text: &str) -> Result<Self, HostError> {
        let Object(scenario) = serde_json::from_str(text).map_err(|error| HostError::Input(error.to_string()))?;
        Ok(scenario)
    }

    /// Runs every step against `component` and returns `{"steps":[…]}`.
    /// `cache_dir`, when given, keeps the compiled component between runs.
    /// With `recorder`, every plugin call is traced into it (docs/spec.md §7.2).
    pub fn replay(
        &self,
        component: &[u8],
        limits: SandboxLimits,
        cache_dir: Option<&std::path::Path>,
        recorder: Option<TraceRecorder>,
    ) -> Result<Replayed, HostError> {
        let config = self.config.as_deref().unwrap_or("{}");
        let plugin = match (recorder, cache_dir) {
            (Some(recorder), cache_dir) => Plugin::traced(component, config, limits, cache_dir, recorder)?,
            (None, Some(dir)) => Plugin::new_cached(component, config, limits, dir)?,
            (None, None) => Plugin::new(component, config, limits)?,
        };
        let registry = Arc::new(SkillRegistry::new());
        registry.set_providers(providers(&self.providers)?);
        set_runtime(&registry, &self.runtime)?;
        let session = SharedSession::new(SessionLog::in_memory(SessionHeader::new(Some(self.cwd.clone()))));
        seed(&session, &self.session)?;
        let mut records = Vec::with_capacity(self.steps.len());
        for (index, step) in self.steps.iter().enumerate() {
            let record = self.run(&plugin, &registry, &session, step).map_err(|error| match error {
                HostError::Input(reason) => HostError::Input(format!("step {index}: {reason}")),
                other => other,
            })?;
            records.push(record);
        }
        Ok(Replayed { steps: records })
    }

    fn run(
        &self,
        plugin: &Plugin,
        registry: &Arc<SkillRegistry>,
        session: &SharedSession,
        step: &Step,
    ) -> Result<StepRecord, HostError> {
        match step {
            Step::PreStep(proposal) | Step::Propose(proposal) => {
                let proposed = match &proposal.reject {
                    None => Decision::Enter(proposal.messages.iter().map(ProposedMessage::data).collect()),
                    Some(reason) => Decision::Reject(reason.clone()),
                };
                let input = StepInput {
                    cwd: Some(self.cwd.as_str().into()),
                    tool_view: proposal.tool_view,
                    abort: None,
                    preview: matches!(step, Step::Propose(_)),
                };
                let outcome = run_step(plugin, registry, session, &input, proposed)?;
                Ok(StepRecord::Other(decision_record(&outcome)))
            }
            Step::Invoke(Invoke { arguments }) => {
                let outcome = plugin.invoke(registry, Some(&self.cwd), arguments)?;
                // Recorded as a harness (and `skill-host load --session`) records it.
                record_tool_result(&mut session.lock(), &outcome)?;
                Ok(StepRecord::Invoke(ToolRecord::from(outcome)))
            }
            Step::Compact => {
                session.lock().compact(COMPACTION_SUMMARY)?;
                Ok(StepRecord::Other(json!({})))
            }
            Step::SetProviders { providers: list } => {
                registry.set_providers(providers(list)?);
                Ok(StepRecord::Other(json!({})))
            }
            Step::SetRuntime { runtime } => {
                set_runtime(registry, runtime)?;
                Ok(StepRecord::Other(json!({})))
            }
        }
    }
}

impl ProposedMessage {
    /// The user message's `data`, with a fresh id when it names none.
    fn data(&self) -> Value {
        match self {
            Self::Text(text) => message::user_message(message::user_source(), text),
            Self::Data(fields) => {
                let mut data = fields.clone();
                data.entry("role").or_insert_with(|| json!("user"));
                data.entry("id").or_insert_with(|| json!(message::new_message_id()));
                Value::Object(data)
            }
        }
    }
}

/// What `replay` prints: `{"steps":[…]}`, a record per step (docs/spec.md §7).
#[derive(Debug, serde::Serialize)]
pub struct Replayed {
    /// The records, in the steps' order.
    pub steps: Vec<StepRecord>,
}

/// One step's record: an `invoke`'s, its value in documented order, or any
/// other step's JSON.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum StepRecord {
    Invoke(ToolRecord),
    Other(Value),
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

/// The in-memory providers; a malformed skill is refused here, in
/// [`MemoryProvider`]'s words.
fn providers(list: &[ProviderEntry]) -> Result<Vec<Arc<dyn SkillProvider>>, HostError> {
    list.iter()
        .enumerate()
        .map(|(index, entry)| {
            let skills = entry.skills.iter().map(|SkillEntry(skill)| skill.clone()).collect();
            let built =
                MemoryProvider::new(entry.name.clone(), entry.complete.unwrap_or(true), entry.fail.clone(), skills)
                    .map_err(|reason| HostError::Input(format!("provider {index}: {reason}")))?;
            Ok(Arc::new(built) as Arc<dyn SkillProvider>)
        })
        .collect()
}

fn set_runtime(registry: &SkillRegistry, list: &[RuntimeEntry]) -> Result<(), HostError> {
    registry.clear_runtime();
    for (index, entry) in list.iter().enumerate() {
        let mut skill = RuntimeSkill::new(entry.name.clone(), entry.description.clone(), entry.content.clone());
        if let Some(invocation) = entry.invocation {
            skill.invocation = invocation;
        }
        skill.when_to_use.clone_from(&entry.when_to_use);
        if let Some(source) = &entry.source {
            skill.source.clone_from(source);
        }
        if let Some(provider) = &entry.provider {
            skill.provider.clone_from(provider);
        }
        skill.resource_base.clone_from(&entry.resource_base);
        registry
            .register_runtime(skill)
            .map_err(|reason| HostError::Input(format!("runtime skill {index}: {reason}")))?;
    }
    Ok(())
}

/// Seeds the session with the scenario's events, seq assigned in order.
fn seed(session: &SharedSession, events: &[SeedEvent]) -> Result<(), HostError> {
    let mut log = session.lock();
    for event in events {
        let data = event.data.clone().unwrap_or_else(|| json!({}));
        let op = event.surface_op.map(|SurfaceOpJson(op)| op);
        if event.event_type == "user/message" {
            log.append_user_messages(vec![(data, op.unwrap_or(SurfaceOp::Append))])?;
        } else {
            log.append_event(&event.event_type, data, op)?;
        }
    }
    Ok(())
}

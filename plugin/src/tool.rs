//! The `skill` tool: its definition (docs/spec.md §3.2), execution order (§3.3) and
//! result rendering (§3.4).

use serde_json::{Map, Value};

use crate::config::Config;
use crate::escape;
use crate::files::{self, FileResult};
use crate::search::{self, Matches};
use crate::types::{LoadedSkill, Registry, RegistryError, ResourceBase, SkillDefinition, SkillSummary};
use crate::user_only::UserOnly;
use crate::{reads, sections};

/// The tool's name.
pub const TOOL_NAME: &str = "skill";
/// The tool's description for the model.
pub const TOOL_DESCRIPTION: &str = "Load the full instructions for an available skill. Call this with the exact skill name from the session skill catalog before acting on a task that names or clearly matches that skill.";
/// The tool's parameters as JSON Schema.
pub const TOOL_PARAMETERS: &str = r#"{"type":"object","properties":{"name":{"type":"string","description":"The exact skill name from the available skills list."}},"required":["name"]}"#;

/// With `skillSearch` (docs/spec.md §3.14): the tool's description.
pub const SEARCH_TOOL_DESCRIPTION: &str = "Load the full instructions for an available skill, or find skills by `query`. Call this with the exact skill name from the session skill catalog before acting on a task that names or clearly matches that skill. When the catalog leaves skills out and none listed fits, call it with `query` to find them.";
/// With `skillSearch`: the tool's parameters, `name` or `query`.
pub const SEARCH_TOOL_PARAMETERS: &str = r#"{"type":"object","properties":{"name":{"type":"string","description":"The exact skill name from the available skills list."},"query":{"type":"string","description":"Words describing the task, to find skills by; give this or name, not both."}}}"#;

/// The tool's description and parameters as `config` makes them.
pub fn definition(config: &Config) -> (String, &'static str) {
    let (description, parameters) = match (config.skill_search, config.skill_reads) {
        (false, false) => (TOOL_DESCRIPTION, TOOL_PARAMETERS),
        (true, false) => (SEARCH_TOOL_DESCRIPTION, SEARCH_TOOL_PARAMETERS),
        (false, true) => (TOOL_DESCRIPTION, reads::READS_TOOL_PARAMETERS),
        (true, true) => (SEARCH_TOOL_DESCRIPTION, reads::READS_SEARCH_TOOL_PARAMETERS),
    };
    let sentence = if config.skill_reads { reads::READS_SENTENCE } else { "" };
    ([description, sentence].concat(), parameters)
}

/// What a successful call returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolReturn {
    /// A loaded skill, and with `loadedSkills` which body it was.
    Skill(SkillResult, Option<LoadedSkill>),
    /// A file of a skill (`skillReads`), and with `loadedSkills` which
    /// body its skill had.
    File(FileResult, Option<LoadedSkill>),
    /// The skills a `query` found (`skillSearch`).
    Matches(Matches),
}

/// The canonical success value: `{name, provider, resourceBase?, content}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillResult {
    /// The skill's name.
    pub name: String,
    /// The provider that served it.
    pub provider: String,
    /// Its resource base, if any.
    pub resource_base: Option<ResourceBase>,
    /// The instructions.
    pub content: String,
}

/// Why a call failed; `Display` is the message, [`ToolError::model_text`] what the model sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// The arguments do not fit the schema (the reference's argument validator's wording).
    InvalidArguments(String),
    /// The name does not match the skill-name grammar.
    InvalidName(String),
    /// No provider has (or still has) the skill.
    Unknown(String),
    /// The skill exists but the model may not invoke it.
    NotModelInvocable(String),
    /// A provider failed; its own text.
    Provider(String),
    /// The step was aborted while the registry answered.
    Aborted,
    /// No heading of the skill is the `section` asked for (`skillReads`);
    /// `headings` lists those it has, if any.
    NoSection { name: String, section: String, headings: Option<String> },
    /// A file the `path` argument names could not be read (`skillReads`):
    /// the whole message.
    File(String),
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InvalidArguments(violation) => write!(f, "invalid arguments: {violation}"),
            Self::InvalidName(name) => write!(f, "invalid skill name \"{name}\""),
            Self::Unknown(name) => write!(f, "skill \"{name}\" is unknown or no longer available"),
            Self::NotModelInvocable(name) => {
                write!(f, "skill \"{name}\" is not available for model invocation")
            }
            Self::Provider(text) | Self::File(text) => f.write_str(text),
            Self::Aborted => f.write_str("the operation was aborted"),
            Self::NoSection { name, section, headings } => {
                let section = serde_json::to_string(section).expect("a string serialises");
                match headings {
                    Some(headings) => {
                        write!(f, "skill \"{name}\" has no section {section}; its headings are {headings}")
                    }
                    None => write!(f, "skill \"{name}\" has no section {section}; it has no headings"),
                }
            }
        }
    }
}

impl ToolError {
    /// The one text block the model sees: `Error: <message>`.
    pub fn model_text(&self) -> String {
        format!("Error: {self}")
    }
}

impl From<RegistryError> for ToolError {
    fn from(error: RegistryError) -> Self {
        match error {
            RegistryError::Aborted => Self::Aborted,
            RegistryError::Failed(text) => Self::Provider(text),
        }
    }
}

/// Runs the tool as configured: with `skillSearch`, a `query` searches
/// instead (docs/spec.md §3.14); otherwise [`invoke`], the body cut to
/// `skillBodyMaxLength` when set, and with `loadedSkills` which body it
/// returned, for the host to record.
pub fn invoke_with(config: &Config, registry: &impl Registry, arguments: &str) -> Result<ToolReturn, ToolError> {
    // A `userOnly` skill is refused and not found, as one the model may not invoke.
    let registry = &UserOnly::new(registry, &config.user_only);
    // Read once; `name` (or `query`) is checked before `section` and `path`.
    let mut fields = argument_fields(arguments)?;
    let name = if config.skill_search {
        match call_argument(&mut fields)? {
            Call::Load(name) => name,
            Call::Search(query) => {
                if config.skill_reads {
                    let (section, path) = part_arguments(&mut fields)?;
                    if let Some(key) = section.map(|_| "section").or(path.map(|_| "path")) {
                        return Err(ToolError::InvalidArguments(format!(
                            "\"{key}\" goes with \"name\", not \"query\""
                        )));
                    }
                }
                return search::search(config, registry, &query).map(ToolReturn::Matches);
            }
        }
    } else {
        skill_name_argument(&mut fields)?
    };
    let (section, path) = if config.skill_reads { part_arguments(&mut fields)? } else { (None, None) };
    if let Some(path) = path {
        let summary = invocable(registry, name)?;
        let loaded = config.loaded_skills.then(|| LoadedSkill {
            name: summary.name.clone(),
            provider: summary.provider.clone(),
            body_digest: summary.body_digest.clone(),
        });
        let file = files::read(registry, &summary, path, config.skill_body_max_length)?;
        return Ok(ToolReturn::File(file, loaded));
    }
    let definition = load_named(registry, name)?;
    let loaded = config.loaded_skills.then(|| LoadedSkill {
        name: definition.name.clone(),
        provider: definition.provider.clone(),
        body_digest: definition.body_digest.clone(),
    });
    let result = match section {
        Some(section) => reads::section_result(definition, &section, config)?,
        None => {
            let mut result = result_of(definition, config);
            if let Some(limit) = config.skill_resource_manifest
                && let Some(manifest) = files::manifest(registry, &result.name, limit, config.skill_reads)?
            {
                result.content = files::with_manifest(result.content, &manifest);
            }
            result
        }
    };
    Ok(ToolReturn::Skill(result, loaded))
}

/// The `section` and `path` arguments (`skillReads`): at most one of them.
fn part_arguments(fields: &mut Map<String, Value>) -> Result<(Option<String>, Option<String>), ToolError> {
    let section = reads::section_argument(fields)?;
    let path = files::path_argument(fields)?;
    if section.is_some() && path.is_some() {
        return Err(ToolError::InvalidArguments("give \"section\" or \"path\", not both".to_owned()));
    }
    Ok((section, path))
}

/// The result of a loaded definition, its body cut to `skillBodyMaxLength`
/// characters (with `skillReads`, the outline of what was left out follows).
pub fn result_of(definition: SkillDefinition, config: &Config) -> SkillResult {
    // The outline points to the tool: only for a skill the model may load.
    let outline = config.skill_reads && definition.invocation.model_invocable;
    let content = match config.skill_body_max_length {
        Some(max) => cap_body(&definition, max, outline).unwrap_or(definition.content),
        None => definition.content,
    };
    SkillResult {
        name: definition.name,
        provider: definition.provider,
        resource_base: definition.resource_base,
        content,
    }
}

/// A body over `max` characters, cut at the last line break at or before
/// `max` characters (at `max` itself when there is none) and followed by
/// [`cut_line`] and, with `outline`, the sections left out
/// ([`sections::outline`]); `None` when the body fits.
pub fn cap_body(definition: &SkillDefinition, max: usize, outline: bool) -> Option<String> {
    let body = &definition.content;
    let (mut text, kept) = cut_with_line(body, max, |omitted| cut_line(definition, omitted))?;
    if let Some(left) = outline.then(|| sections::outline(body, kept)).flatten() {
        text.push('\n');
        text.push_str(&left);
    }
    Some(text)
}

/// `text` over `max` characters, cut at the last line break at or before
/// `max` characters (at `max` itself when there is none) and followed, on a
/// line of its own, by `line` of how many characters were left out; with
/// how many bytes of `text` were kept. `None` when it fits.
pub fn cut_with_line(text: &str, max: usize, line: impl FnOnce(usize) -> String) -> Option<(String, usize)> {
    let end = text.char_indices().nth(max).map(|(at, _)| at)?;
    let kept = match text[..end].rfind('\n') {
        Some(newline) => &text[..=newline],
        None => &text[..end],
    };
    let omitted = text[kept.len()..].chars().count();
    let separator = if kept.ends_with('\n') { "" } else { "\n" };
    Some((format!("{kept}{separator}{}", line(omitted)), kept.len()))
}

/// The line that ends a cut body: how much was left out and where the whole
/// text is (docs/spec.md §3.12).
pub fn cut_line(definition: &SkillDefinition, omitted: usize) -> String {
    let location = match (&definition.path, &definition.resource_base) {
        (Some(path), _) => format!("is in {}", escape::text(path)),
        (None, Some(ResourceBase::Url { url })) => format!("is at {}", escape::text(url)),
        (None, Some(ResourceBase::Directory { path })) => format!("is in {}", escape::text(path)),
        _ => format!("is held by provider \"{}\"", escape::text(&definition.provider)),
    };
    format!("[{omitted} more characters of these instructions were left out; the whole text {location}.]")
}

/// Runs the tool for JSON `arguments` in the order of docs/spec.md §3.3.
pub fn invoke(registry: &impl Registry, arguments: &str) -> Result<SkillResult, ToolError> {
    let SkillDefinition { name, provider, resource_base, content, .. } = load(registry, arguments)?;
    Ok(SkillResult { name, provider, resource_base, content })
}

/// The definition the tool returns for `arguments`, in the order of docs/spec.md §3.3.
fn load(registry: &impl Registry, arguments: &str) -> Result<SkillDefinition, ToolError> {
    load_named(registry, skill_name_argument(&mut argument_fields(arguments)?)?)
}

/// The definition the tool returns for the `name` argument (§3.3 from step 2).
fn load_named(registry: &impl Registry, name: String) -> Result<SkillDefinition, ToolError> {
    let name = invocable(registry, name)?.name;
    let Some(definition) = registry.get(&name)? else {
        return Err(ToolError::Unknown(name));
    };
    // Rechecked after loading: the file may have changed its policy since the
    // listing, and a body the model may not see is never disclosed.
    if !definition.invocation.model_invocable {
        return Err(ToolError::NotModelInvocable(name));
    }
    Ok(definition)
}

/// The listed skill `name`, which the model may invoke (§3.3 steps 2 to 4).
fn invocable(registry: &impl Registry, name: String) -> Result<SkillSummary, ToolError> {
    if !is_skill_name(&name) {
        return Err(ToolError::InvalidName(name));
    }
    let listed = registry.list(Some(&name))?;
    let Some(summary) = listed.into_iter().find(|skill| skill.name == name) else {
        return Err(ToolError::Unknown(name));
    };
    if !summary.invocation.model_invocable {
        return Err(ToolError::NotModelInvocable(name));
    }
    Ok(summary)
}

/// The `name` argument, validated as the reference's schema validator does.
fn skill_name_argument(fields: &mut Map<String, Value>) -> Result<String, ToolError> {
    match fields.remove("name") {
        Some(Value::String(name)) => Ok(name),
        None => Err(ToolError::InvalidArguments("missing required property \"name\"".to_owned())),
        Some(_) => Err(ToolError::InvalidArguments("\"name\" must be a string".to_owned())),
    }
}

/// The arguments' fields: they must be a JSON object.
fn argument_fields(arguments: &str) -> Result<Map<String, Value>, ToolError> {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(fields)) => Ok(fields),
        _ => Err(ToolError::InvalidArguments("\"arguments\" must be an object".to_owned())),
    }
}

/// What a call with `skillSearch` on asks for.
enum Call {
    Load(String),
    Search(String),
}

/// The `name` or `query` argument: exactly one of them, a string.
fn call_argument(fields: &mut Map<String, Value>) -> Result<Call, ToolError> {
    let invalid = |violation: &str| Err(ToolError::InvalidArguments(violation.to_owned()));
    match (fields.remove("name"), fields.remove("query")) {
        (Some(_), Some(_)) => invalid("give \"name\" or \"query\", not both"),
        (None, None) => invalid("missing property \"name\" or \"query\""),
        (Some(Value::String(name)), None) => Ok(Call::Load(name)),
        (Some(_), None) => invalid("\"name\" must be a string"),
        (None, Some(Value::String(query))) => Ok(Call::Search(query)),
        (None, Some(_)) => invalid("\"query\" must be a string"),
    }
}

pub use skill_rules::is_skill_name;

const DIRECTORY_GUIDANCE: &str = "Resolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed.";
const URL_GUIDANCE: &str = "Resolve relative URLs mentioned by this skill against the base URL before using them. Load referenced resources only as needed.";
const AS_NEEDED_GUIDANCE: &str = "Load referenced resources only as needed.";

/// Renders a result as the text the model sees (docs/spec.md §3.4). The body is
/// inserted verbatim, never escaped.
pub fn render(result: &SkillResult) -> String {
    let (first, second) = match &result.resource_base {
        None => (
            format!("Resources for this skill are managed by provider \"{}\".", escape::text(&result.provider)),
            AS_NEEDED_GUIDANCE,
        ),
        Some(ResourceBase::Directory { path }) => {
            (format!("Base directory for this skill: {}", escape::text(path)), DIRECTORY_GUIDANCE)
        }
        Some(ResourceBase::Url { url }) => (format!("Base URL for this skill: {}", escape::text(url)), URL_GUIDANCE),
        Some(ResourceBase::Opaque { description }) => {
            (format!("Resources for this skill: {}", escape::text(description)), AS_NEEDED_GUIDANCE)
        }
    };
    [
        &format!("<skill_content name=\"{}\">", escape::attr(&result.name)),
        "<skill_resources>",
        &first,
        second,
        "</skill_resources>",
        "",
        "<skill_instructions>",
        &result.content,
        "</skill_instructions>",
        "</skill_content>",
    ]
    .join("\n")
}

#[cfg(test)]
mod tests;

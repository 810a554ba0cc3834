//! The `skill` tool: its definition (docs/spec.md §3.2), execution order (§3.3) and
//! result rendering (§3.4).

use serde_json::Value;

use crate::config::Config;
use crate::escape;
use crate::search::{self, Matches};
use crate::types::{LoadedSkill, Registry, RegistryError, ResourceBase, SkillDefinition};
use crate::user_only::UserOnly;

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
pub fn definition(config: &Config) -> (&'static str, &'static str) {
    if config.skill_search {
        (SEARCH_TOOL_DESCRIPTION, SEARCH_TOOL_PARAMETERS)
    } else {
        (TOOL_DESCRIPTION, TOOL_PARAMETERS)
    }
}

/// What a successful call returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolReturn {
    /// A loaded skill, and with `loadedSkills` which body it was.
    Skill(SkillResult, Option<LoadedSkill>),
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
            Self::Provider(text) => f.write_str(text),
            Self::Aborted => f.write_str("the operation was aborted"),
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
    let name = if config.skill_search {
        match call_argument(arguments)? {
            Call::Load(name) => name,
            Call::Search(query) => return search::search(config, registry, &query).map(ToolReturn::Matches),
        }
    } else {
        skill_name_argument(arguments)?
    };
    let definition = load_named(registry, name)?;
    let loaded = config.loaded_skills.then(|| LoadedSkill {
        name: definition.name.clone(),
        provider: definition.provider.clone(),
        body_digest: definition.body_digest.clone(),
    });
    Ok(ToolReturn::Skill(result_of(definition, config.skill_body_max_length), loaded))
}

/// The result of a loaded definition, its body cut to `max_length` characters.
pub fn result_of(definition: SkillDefinition, max_length: Option<usize>) -> SkillResult {
    let content = match max_length {
        Some(max) => cap_body(&definition, max).unwrap_or(definition.content),
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
/// [`cut_line`]; `None` when the body fits.
pub fn cap_body(definition: &SkillDefinition, max: usize) -> Option<String> {
    let body = &definition.content;
    let end = body.char_indices().nth(max).map(|(at, _)| at)?;
    let kept = match body[..end].rfind('\n') {
        Some(newline) => &body[..=newline],
        None => &body[..end],
    };
    let omitted = body[kept.len()..].chars().count();
    let separator = if kept.ends_with('\n') { "" } else { "\n" };
    Some(format!("{kept}{separator}{}", cut_line(definition, omitted)))
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
    load_named(registry, skill_name_argument(arguments)?)
}

/// The definition the tool returns for the `name` argument (§3.3 from step 2).
fn load_named(registry: &impl Registry, name: String) -> Result<SkillDefinition, ToolError> {
    if !is_skill_name(&name) {
        return Err(ToolError::InvalidName(name));
    }
    let listed = registry.list(Some(&name))?;
    let Some(summary) = listed.iter().find(|skill| skill.name == name) else {
        return Err(ToolError::Unknown(name));
    };
    if !summary.invocation.model_invocable {
        return Err(ToolError::NotModelInvocable(name));
    }
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

/// The `name` argument, validated as the reference's schema validator does.
fn skill_name_argument(arguments: &str) -> Result<String, ToolError> {
    let Ok(Value::Object(mut fields)) = serde_json::from_str::<Value>(arguments) else {
        return Err(ToolError::InvalidArguments("\"arguments\" must be an object".to_owned()));
    };
    match fields.remove("name") {
        Some(Value::String(name)) => Ok(name),
        None => Err(ToolError::InvalidArguments("missing required property \"name\"".to_owned())),
        Some(_) => Err(ToolError::InvalidArguments("\"name\" must be a string".to_owned())),
    }
}

/// What a call with `skillSearch` on asks for.
enum Call {
    Load(String),
    Search(String),
}

/// The `name` or `query` argument: exactly one of them, a string.
fn call_argument(arguments: &str) -> Result<Call, ToolError> {
    let invalid = |violation: &str| Err(ToolError::InvalidArguments(violation.to_owned()));
    let Ok(Value::Object(mut fields)) = serde_json::from_str::<Value>(arguments) else {
        return invalid("\"arguments\" must be an object");
    };
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
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::types::{InvocationPolicy, SkillSummary, SnapshotAnswer};

    #[test]
    fn definition_is_exact() {
        assert_eq!(TOOL_NAME, "skill");
        assert_eq!(
            TOOL_DESCRIPTION,
            "Load the full instructions for an available skill. Call this with the exact skill name from the session skill catalog before acting on a task that names or clearly matches that skill."
        );
        let parameters: Value = serde_json::from_str(TOOL_PARAMETERS).unwrap();
        assert_eq!(
            parameters,
            serde_json::json!({"type":"object","properties":{"name":{"type":"string","description":"The exact skill name from the available skills list."}},"required":["name"]})
        );
    }

    #[test]
    fn with_search_the_definition_takes_name_or_query_and_the_arguments_are_checked() {
        let search = Config::parse(r#"{"skillSearch":true}"#).unwrap();
        assert_eq!(super::definition(&Config::default()), (TOOL_DESCRIPTION, TOOL_PARAMETERS));
        assert_eq!(super::definition(&search), (SEARCH_TOOL_DESCRIPTION, SEARCH_TOOL_PARAMETERS));
        assert_eq!(
            SEARCH_TOOL_DESCRIPTION,
            "Load the full instructions for an available skill, or find skills by `query`. Call this with the exact skill name from the session skill catalog before acting on a task that names or clearly matches that skill. When the catalog leaves skills out and none listed fits, call it with `query` to find them."
        );
        let parameters: Value = serde_json::from_str(SEARCH_TOOL_PARAMETERS).unwrap();
        assert_eq!(
            parameters,
            serde_json::json!({"type":"object","properties":{
                "name":{"type":"string","description":"The exact skill name from the available skills list."},
                "query":{"type":"string","description":"Words describing the task, to find skills by; give this or name, not both."}}})
        );
        let registry = FakeRegistry::new(vec![summary("a", true)], vec![]);
        for (arguments, error) in [
            (r#"{}"#, r#"Error: invalid arguments: missing property "name" or "query""#),
            (r#"{"name":"a","query":"a"}"#, r#"Error: invalid arguments: give "name" or "query", not both"#),
            (r#"{"query":3}"#, r#"Error: invalid arguments: "query" must be a string"#),
            (r#"{"name":3}"#, r#"Error: invalid arguments: "name" must be a string"#),
            (r#"[]"#, r#"Error: invalid arguments: "arguments" must be an object"#),
        ] {
            assert_eq!(invoke_with(&search, &registry, arguments).unwrap_err().model_text(), error, "{arguments}");
        }
        // Without search, `query` is just another extra argument.
        assert_eq!(
            invoke_with(&Config::default(), &registry, r#"{"query":"a"}"#).unwrap_err().model_text(),
            r#"Error: invalid arguments: missing required property "name""#
        );
        let Ok(ToolReturn::Matches(found)) = invoke_with(&search, &registry, r#"{"query":"a"}"#) else { panic!() };
        assert_eq!(found.best.len(), 1);
    }

    /// A registry with one listing and one loaded definition per name, counting loads.
    struct FakeRegistry {
        listed: Vec<SkillSummary>,
        loaded: Vec<SkillDefinition>,
        list_error: Option<RegistryError>,
        get_error: Option<RegistryError>,
        loads: Cell<usize>,
    }

    fn policy(model_invocable: bool) -> InvocationPolicy {
        InvocationPolicy { model_invocable, user_invocable: true }
    }

    fn summary(name: &str, model_invocable: bool) -> SkillSummary {
        SkillSummary {
            body_digest: None,
            name: name.to_owned(),
            description: "D.".to_owned(),
            when_to_use: None,
            invocation: policy(model_invocable),
            provider: "memory".to_owned(),
            source: "memory".to_owned(),
            path: None,
        }
    }

    fn definition(name: &str, model_invocable: bool) -> SkillDefinition {
        SkillDefinition {
            body_digest: None,
            name: name.to_owned(),
            description: "D.".to_owned(),
            invocation: policy(model_invocable),
            provider: "memory".to_owned(),
            resource_base: Some(ResourceBase::Directory { path: "/skills/x".to_owned() }),
            path: None,
            content: format!("{name} body"),
        }
    }

    #[test]
    fn a_long_body_is_cut_at_a_line_break_with_a_line_saying_where_the_rest_is() {
        // 200,000 characters in lines of 100 (99 and a newline), with a
        // two-byte character so counting is by characters, not bytes.
        let line = format!("é{}\n", "x".repeat(98));
        let body = line.repeat(2_000);
        let skill = SkillDefinition {
            path: Some("/skills/big/SKILL.md".to_owned()),
            content: body.clone(),
            ..definition("big", true)
        };
        let cut = cap_body(&skill, 20_050).unwrap();
        let kept = line.repeat(200);
        assert_eq!(
            cut,
            format!(
                "{kept}[180000 more characters of these instructions were left out; the whole text is in /skills/big/SKILL.md.]"
            )
        );
        // At the cap exactly, or under it: untouched.
        assert_eq!(cap_body(&skill, 200_000), None);
        assert_eq!(result_of(skill.clone(), Some(200_000)).content, body);
        // No line break within the cap: cut at the cap, never inside a character.
        let one_line = SkillDefinition { content: "é".repeat(3_000), path: None, ..definition("one", true) };
        assert_eq!(
            cap_body(&one_line, 1_000).unwrap(),
            format!(
                "{}\n[2000 more characters of these instructions were left out; the whole text is in /skills/x.]",
                "é".repeat(1_000)
            )
        );
        // Where the rest is: a URL, or the provider.
        let remote = SkillDefinition {
            resource_base: Some(ResourceBase::Url { url: "http://h/s/".to_owned() }),
            ..one_line.clone()
        };
        assert!(cap_body(&remote, 1_000).unwrap().ends_with("the whole text is at http://h/s/.]"));
        let held = SkillDefinition { resource_base: None, ..one_line };
        assert!(cap_body(&held, 1_000).unwrap().ends_with("the whole text is held by provider \"memory\".]"));
    }

    #[test]
    fn the_configured_tool_records_its_load_only_with_loaded_skills() {
        let mut loaded = definition("a", true);
        loaded.body_digest = Some("sha256:ab".to_owned());
        let registry = FakeRegistry::new(vec![summary("a", true)], vec![loaded]);
        let ToolReturn::Skill(_, record) = invoke_with(&Config::default(), &registry, r#"{"name":"a"}"#).unwrap()
        else {
            panic!("a skill")
        };
        assert_eq!(record, None);
        let config = Config { loaded_skills: true, ..Config::default() };
        let ToolReturn::Skill(_, record) = invoke_with(&config, &registry, r#"{"name":"a"}"#).unwrap() else {
            panic!("a skill")
        };
        assert_eq!(
            record,
            Some(LoadedSkill { name: "a".into(), provider: "memory".into(), body_digest: Some("sha256:ab".into()) })
        );
    }

    impl FakeRegistry {
        fn new(listed: Vec<SkillSummary>, loaded: Vec<SkillDefinition>) -> Self {
            Self { listed, loaded, list_error: None, get_error: None, loads: Cell::new(0) }
        }
    }

    impl Registry for FakeRegistry {
        fn snapshot(&self, _known: Option<u64>) -> Result<SnapshotAnswer, RegistryError> {
            unreachable!("the tool never takes snapshots")
        }
        fn list(&self, name: Option<&str>) -> Result<Vec<SkillSummary>, RegistryError> {
            let listed = self.listed.iter().filter(|skill| name.is_none_or(|name| skill.name == name)).cloned();
            self.list_error.clone().map_or_else(|| Ok(listed.collect()), Err)
        }
        fn get(&self, name: &str) -> Result<Option<SkillDefinition>, RegistryError> {
            self.loads.set(self.loads.get() + 1);
            if let Some(error) = self.get_error.clone() {
                return Err(error);
            }
            Ok(self.loaded.iter().find(|skill| skill.name == name).cloned())
        }
    }

    fn call(registry: &FakeRegistry, arguments: &str) -> Result<String, String> {
        invoke(registry, arguments).map(|result| render(&result)).map_err(|error| error.model_text())
    }

    #[test]
    fn success_returns_only_name_provider_resource_base_and_content() {
        let registry = FakeRegistry::new(vec![summary("a-skill", true)], vec![definition("a-skill", true)]);
        let result = invoke(&registry, r#"{"name":"a-skill"}"#).unwrap();
        assert_eq!(
            result,
            SkillResult {
                name: "a-skill".to_owned(),
                provider: "memory".to_owned(),
                resource_base: Some(ResourceBase::Directory { path: "/skills/x".to_owned() }),
                content: "a-skill body".to_owned(),
            }
        );
    }

    #[test]
    fn invalid_name_is_refused_before_the_registry_is_asked() {
        let mut registry = FakeRegistry::new(vec![], vec![]);
        registry.list_error = Some(RegistryError::Failed("must not be reached".to_owned()));
        assert_eq!(
            call(&registry, r#"{"name":"Deploy_Preview"}"#),
            Err("Error: invalid skill name \"Deploy_Preview\"".to_owned())
        );
        for bad in ["", "-a", "a-", "a--b", "a/b", "../x", "A"] {
            assert_eq!(
                call(&registry, &serde_json::json!({ "name": bad }).to_string()),
                Err(format!("Error: invalid skill name \"{bad}\""))
            );
        }
    }

    #[test]
    fn arguments_that_do_not_fit_the_schema_get_the_validators_wording() {
        let registry = FakeRegistry::new(vec![], vec![]);
        assert_eq!(
            call(&registry, "{}"),
            Err("Error: invalid arguments: missing required property \"name\"".to_owned())
        );
        assert_eq!(
            call(&registry, r#"{"name":3}"#),
            Err("Error: invalid arguments: \"name\" must be a string".to_owned())
        );
        assert_eq!(call(&registry, "[]"), Err("Error: invalid arguments: \"arguments\" must be an object".to_owned()));
    }

    #[test]
    fn unlisted_skill_is_unknown() {
        let registry = FakeRegistry::new(vec![summary("other", true)], vec![]);
        assert_eq!(
            call(&registry, r#"{"name":"no-such-skill"}"#),
            Err("Error: skill \"no-such-skill\" is unknown or no longer available".to_owned())
        );
    }

    #[test]
    fn listed_but_not_model_invocable_is_refused_without_loading_the_body() {
        let registry = FakeRegistry::new(vec![summary("rotate-keys", false)], vec![definition("rotate-keys", true)]);
        assert_eq!(
            call(&registry, r#"{"name":"rotate-keys"}"#),
            Err("Error: skill \"rotate-keys\" is not available for model invocation".to_owned())
        );
        assert_eq!(registry.loads.get(), 0);
    }

    #[test]
    fn listed_but_gone_at_load_is_unknown() {
        let registry = FakeRegistry::new(vec![summary("a-skill", true)], vec![]);
        assert_eq!(
            call(&registry, r#"{"name":"a-skill"}"#),
            Err("Error: skill \"a-skill\" is unknown or no longer available".to_owned())
        );
    }

    #[test]
    fn policy_is_rechecked_after_loading() {
        let registry = FakeRegistry::new(vec![summary("a-skill", true)], vec![definition("a-skill", false)]);
        assert_eq!(
            call(&registry, r#"{"name":"a-skill"}"#),
            Err("Error: skill \"a-skill\" is not available for model invocation".to_owned())
        );
    }

    #[test]
    fn provider_failures_get_the_same_wrapper() {
        let mut registry = FakeRegistry::new(vec![summary("a-skill", true)], vec![]);
        registry.get_error = Some(RegistryError::Failed("disk on fire".to_owned()));
        assert_eq!(call(&registry, r#"{"name":"a-skill"}"#), Err("Error: disk on fire".to_owned()));
        registry.list_error = Some(RegistryError::Failed("listing failed".to_owned()));
        assert_eq!(call(&registry, r#"{"name":"a-skill"}"#), Err("Error: listing failed".to_owned()));
    }

    fn rendered(resource_base: Option<ResourceBase>) -> String {
        render(&SkillResult {
            name: "a\"<&>".to_owned(),
            provider: "p<&>\"".to_owned(),
            resource_base,
            content: "Body <b>&amp;</b>\n  kept".to_owned(),
        })
    }

    #[test]
    fn renders_provider_managed_guidance() {
        assert_eq!(
            rendered(None),
            "<skill_content name=\"a&quot;&lt;&amp;>\">\n<skill_resources>\nResources for this skill are managed by provider \"p&lt;&amp;&gt;\"\".\nLoad referenced resources only as needed.\n</skill_resources>\n\n<skill_instructions>\nBody <b>&amp;</b>\n  kept\n</skill_instructions>\n</skill_content>"
        );
    }

    #[test]
    fn renders_directory_guidance() {
        assert_eq!(
            rendered(Some(ResourceBase::Directory { path: "/s/<x>&".to_owned() })),
            "<skill_content name=\"a&quot;&lt;&amp;>\">\n<skill_resources>\nBase directory for this skill: /s/&lt;x&gt;&amp;\nResolve relative paths mentioned by this skill against the base directory before using them. Load referenced resources only as needed.\n</skill_resources>\n\n<skill_instructions>\nBody <b>&amp;</b>\n  kept\n</skill_instructions>\n</skill_content>"
        );
    }

    #[test]
    fn renders_url_guidance() {
        assert_eq!(
            rendered(Some(ResourceBase::Url { url: "https://x.test/?a=1&b=\"2\"".to_owned() })),
            "<skill_content name=\"a&quot;&lt;&amp;>\">\n<skill_resources>\nBase URL for this skill: https://x.test/?a=1&amp;b=\"2\"\nResolve relative URLs mentioned by this skill against the base URL before using them. Load referenced resources only as needed.\n</skill_resources>\n\n<skill_instructions>\nBody <b>&amp;</b>\n  kept\n</skill_instructions>\n</skill_content>"
        );
    }

    #[test]
    fn renders_opaque_guidance() {
        assert_eq!(
            rendered(Some(ResourceBase::Opaque { description: "Ask <ops>.".to_owned() })),
            "<skill_content name=\"a&quot;&lt;&amp;>\">\n<skill_resources>\nResources for this skill: Ask &lt;ops&gt;.\nLoad referenced resources only as needed.\n</skill_resources>\n\n<skill_instructions>\nBody <b>&amp;</b>\n  kept\n</skill_instructions>\n</skill_content>"
        );
    }
}

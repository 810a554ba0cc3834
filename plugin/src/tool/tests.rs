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
    assert_eq!(super::definition(&Config::default()), (TOOL_DESCRIPTION.to_owned(), TOOL_PARAMETERS));
    assert_eq!(super::definition(&search), (SEARCH_TOOL_DESCRIPTION.to_owned(), SEARCH_TOOL_PARAMETERS));
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
    let cut = cap_body(&skill, 20_050, false).unwrap();
    let kept = line.repeat(200);
    assert_eq!(
        cut,
        format!(
            "{kept}[180000 more characters of these instructions were left out; the whole text is in /skills/big/SKILL.md.]"
        )
    );
    // At the cap exactly, or under it: untouched.
    assert_eq!(cap_body(&skill, 200_000, false), None);
    assert_eq!(
        result_of(skill.clone(), &Config { skill_body_max_length: Some(200_000), ..Config::default() }).content,
        body
    );
    // No line break within the cap: cut at the cap, never inside a character.
    let one_line = SkillDefinition { content: "é".repeat(3_000), path: None, ..definition("one", true) };
    assert_eq!(
        cap_body(&one_line, 1_000, false).unwrap(),
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
    assert!(cap_body(&remote, 1_000, false).unwrap().ends_with("the whole text is at http://h/s/.]"));
    let held = SkillDefinition { resource_base: None, ..one_line };
    assert!(cap_body(&held, 1_000, false).unwrap().ends_with("the whole text is held by provider \"memory\".]"));
}

#[test]
fn the_configured_tool_records_its_load_only_with_loaded_skills() {
    let mut loaded = definition("a", true);
    loaded.body_digest = Some("sha256:ab".to_owned());
    let registry = FakeRegistry::new(vec![summary("a", true)], vec![loaded]);
    let ToolReturn::Skill(_, record) = invoke_with(&Config::default(), &registry, r#"{"name":"a"}"#).unwrap() else {
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
    assert_eq!(call(&registry, "{}"), Err("Error: invalid arguments: missing required property \"name\"".to_owned()));
    assert_eq!(call(&registry, r#"{"name":3}"#), Err("Error: invalid arguments: \"name\" must be a string".to_owned()));
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

#[test]
fn with_reads_the_definition_offers_a_section_beside_the_name() {
    let reads = Config { skill_reads: true, ..Config::default() };
    let (description, parameters) = super::definition(&reads);
    assert_eq!(description, format!("{TOOL_DESCRIPTION}{}", reads::READS_SENTENCE));
    assert!(description.ends_with(
        " To load one part of a long skill, call it with `name` and `section`, a heading of its instructions; to read one of its files, with `name` and `path`, the file's path inside the skill."
    ));
    let schema: Value = serde_json::from_str(parameters).unwrap();
    assert_eq!(schema["required"], serde_json::json!(["name"]));
    assert_eq!(schema["properties"]["section"]["type"], "string");
    let both = Config { skill_reads: true, skill_search: true, ..Config::default() };
    let (description, parameters) = super::definition(&both);
    assert_eq!(description, format!("{SEARCH_TOOL_DESCRIPTION}{}", reads::READS_SENTENCE));
    let schema: Value = serde_json::from_str(parameters).unwrap();
    let properties: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(properties, ["name", "path", "query", "section"]);
    assert!(schema.get("required").is_none());
    // The parameters differ from the plain ones only by the section and the path.
    let plain: Value = serde_json::from_str(SEARCH_TOOL_PARAMETERS).unwrap();
    let mut without = schema.clone();
    without["properties"].as_object_mut().unwrap().remove("section");
    without["properties"].as_object_mut().unwrap().remove("path");
    assert_eq!(without, plain);
}

//! Reading part of a skill (`skillReads`, docs/spec.md §3.15): the tool's
//! `section` argument and what its definition says of it. The sections
//! themselves are [`crate::sections`]'.

use serde_json::{Map, Value};

use crate::config::Config;
use crate::sections;
use crate::tool::{SkillResult, ToolError, cap_body};
use crate::types::SkillDefinition;

/// What the tool's description says of `section`, after its first sentences.
pub const READS_SENTENCE: &str = " To load one part of a long skill, call it with `name` and `section`, a heading of its instructions; to read one of its files, with `name` and `path`, the file's path inside the skill.";

/// The tool's parameters with `skillReads`.
pub const READS_TOOL_PARAMETERS: &str = r#"{"type":"object","properties":{"name":{"type":"string","description":"The exact skill name from the available skills list."},"section":{"type":"string","description":"A heading of the skill's instructions, exact or in any case: only that section is loaded."},"path":{"type":"string","description":"A file of the skill, by its path inside the skill (such as references/api.md): only that file is read."}},"required":["name"]}"#;

/// The tool's parameters with `skillReads` and `skillSearch`.
pub const READS_SEARCH_TOOL_PARAMETERS: &str = r#"{"type":"object","properties":{"name":{"type":"string","description":"The exact skill name from the available skills list."},"query":{"type":"string","description":"Words describing the task, to find skills by; give this or name, not both."},"section":{"type":"string","description":"A heading of the skill's instructions, exact or in any case: only that section is loaded."},"path":{"type":"string","description":"A file of the skill, by its path inside the skill (such as references/api.md): only that file is read."}}}"#;

/// The `section` argument among the call's fields, when given (checked
/// after `name` and `query`).
pub fn section_argument(fields: &mut Map<String, Value>) -> Result<Option<String>, ToolError> {
    match fields.remove("section") {
        None => Ok(None),
        Some(Value::String(section)) => Ok(Some(section)),
        Some(_) => Err(ToolError::InvalidArguments("\"section\" must be a string".to_owned())),
    }
}

/// The result of a section read: the section `wanted` names, cut as a body
/// is (`skillBodyMaxLength`, with its outline), or the error listing the
/// headings there are.
pub fn section_result(definition: SkillDefinition, wanted: &str, config: &Config) -> Result<SkillResult, ToolError> {
    let found = sections::headings(&definition.content);
    let Some(heading) = sections::find(&found, wanted) else {
        return Err(ToolError::NoSection {
            name: definition.name,
            section: wanted.to_owned(),
            headings: (!found.is_empty()).then(|| sections::listed(&found)),
        });
    };
    let section = SkillDefinition { content: heading.section(&definition.content).to_owned(), ..definition };
    let content = match config.skill_body_max_length {
        Some(max) => cap_body(&section, max, true).unwrap_or(section.content),
        None => section.content,
    };
    Ok(SkillResult { name: section.name, provider: section.provider, resource_base: section.resource_base, content })
}

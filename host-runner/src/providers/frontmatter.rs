//! Parsing a `SKILL.md` text: the `---` frontmatter block, its YAML, and the
//! skill fields it must carry (docs/spec.md §4.2).
//!
//! The YAML is read through `yaml-rust2`'s event parser into a small tree of
//! our own, because the skill files are untrusted input: aliases are refused
//! rather than expanded (no "billion laughs"), nesting and size are capped,
//! and plain scalars resolve by the YAML 1.2 core schema (`yes` stays a
//! string, as in DeepSeek Harness's `yaml` package).

mod fields;
mod scalar;
mod split;
mod yaml;

use crate::registry::{InvocationPolicy, is_skill_name};

pub(crate) use self::fields::LEGACY_INVOCATION_KEYS;
pub(crate) use self::yaml::{Node, Value};

use self::fields::{Fields, invocation_policy};
use self::split::{split_frontmatter, trim_ecmascript};
use self::yaml::parse_yaml;

/// Largest frontmatter block accepted, in bytes (the text between the two
/// `---` lines). Real frontmatter is a few hundred bytes; the cap bounds the
/// work an untrusted file can make the parser do.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// Deepest collection nesting accepted in the frontmatter (the top-level
/// mapping counts as 1).
pub const MAX_FRONTMATTER_DEPTH: usize = 64;

/// The fields of a valid skill file.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedSkill {
    /// The `name` field; matches the skill-name grammar.
    pub name: String,
    /// The `description` field; non-empty, as written.
    pub description: String,
    /// The `whenToUse` field, kept only when it is a non-empty string.
    pub when_to_use: Option<String>,
    /// From `disable-model-invocation` and `user-invocable` (both default to
    /// invocable).
    pub invocation: InvocationPolicy,
    /// The `metadata` field, kept only when it is a mapping.
    pub metadata: Option<serde_json::Value>,
    /// The text after the closing `---` line, trimmed of ECMAScript
    /// whitespace at both ends.
    pub body: String,
}

/// Parses a `SKILL.md` text.
///
/// `Err` carries a human reason without the file path (the caller adds it),
/// for example "frontmatter requires \`name\`" or "line 3: \`name\` must be a
/// non-empty string, found a number". Line numbers count from the file's
/// first line.
pub fn parse_skill_file(text: &str) -> Result<ParsedSkill, String> {
    let (fields, body) = read_frontmatter(text)?;

    // Checked in the reference's order, so the reason names the same fault.
    let (name, name_line) = fields.required_string("name")?;
    let (description, _) = fields.required_string("description")?;
    if !is_skill_name(&name) {
        return Err(format!(
            "line {name_line}: `name` {name:?} does not match the skill-name grammar ^[a-z0-9]+(?:-[a-z0-9]+)*$"
        ));
    }
    let invocation = invocation_policy(&fields)?;
    let when_to_use = fields.get("whenToUse").and_then(|node| match &node.value {
        Value::Str(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    });
    let metadata =
        fields.get("metadata").filter(|node| matches!(node.value, Value::Map(_))).map(|node| node.value.to_json());
    Ok(ParsedSkill { name, description, when_to_use, invocation, metadata, body: trim_ecmascript(body).to_string() })
}

/// The top-level frontmatter entries of a skill file, each key (as a
/// string) with the file line it is on, for diagnostics such as the linter's.
/// Fails as [`parse_skill_file`] does when there is no frontmatter mapping;
/// the skill fields themselves are not checked.
pub(crate) fn frontmatter_entries(text: &str) -> Result<Vec<(String, usize, Node)>, String> {
    read_frontmatter(text).map(|(fields, _)| fields.entries)
}

/// The frontmatter of a skill file as a JSON object, every key the author
/// wrote with its value (the Skills extension's `frontmatter`, carried
/// verbatim). Fails as [`parse_skill_file`] does when there is no
/// frontmatter mapping.
#[cfg(feature = "mcp")]
pub(crate) fn frontmatter_json(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let (fields, _) = read_frontmatter(text)?;
    Ok(fields.entries.iter().map(|(key, _, node)| (key.clone(), node.value.to_json())).collect())
}

/// Splits off the frontmatter and reads it as a YAML mapping: the fields and
/// the body that follows.
fn read_frontmatter(text: &str) -> Result<(Fields, &str), String> {
    let block = split_frontmatter(text)?;
    if block.yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(format!(
            "frontmatter is {} bytes, larger than the {} KiB limit",
            block.yaml.len(),
            MAX_FRONTMATTER_BYTES / 1024
        ));
    }
    let root = parse_yaml(block.yaml, block.first_line)?;
    let Some(root) = root else {
        return Err("frontmatter is empty; it must be a YAML mapping".to_string());
    };
    let Value::Map(entries) = root.value else {
        return Err(format!("line {}: frontmatter must be a YAML mapping, found {}", root.line, root.value.kind()));
    };
    Ok((Fields::new(entries), block.body))
}

#[cfg(test)]
mod tests;

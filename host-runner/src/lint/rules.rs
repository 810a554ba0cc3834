//! The rules a skill file's text is checked against: the Agent Skills
//! specification's fields and this project's reasons.

use crate::providers::frontmatter::{LEGACY_INVOCATION_KEYS, Node, Value, frontmatter_entries, parse_skill_file};
use crate::registry::{InvocationPolicy, is_skill_name};

use super::report::TextFinding;
use skill_rules::is_ecmascript_whitespace;

use super::{CATALOG_DESCRIPTION_CHARS, MAX_COMPATIBILITY_CHARS, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS};

/// The frontmatter keys of the Agent Skills specification.
const SPEC_KEYS: [&str; 6] = ["name", "description", "license", "compatibility", "metadata", "allowed-tools"];

/// The keys this project reads besides the specification's (docs/spec.md §4.2).
const PROJECT_KEYS: [&str; 3] = ["whenToUse", "disable-model-invocation", "user-invocable"];

/// Where a skill file's expected name comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamePlace {
    /// A bundle's `SKILL.md`: the folder's name.
    Folder,
    /// A flat `<name>.md`: the file's stem.
    File,
}

/// Lints a skill file's text. `expected` is the name the file's place
/// requires, if any. Findings come in rule order, not sorted.
pub fn lint_text(text: &str, expected: Option<(&str, NamePlace)>) -> Vec<TextFinding> {
    let mut found = Vec::new();
    let parsed = parse_skill_file(text);
    if let Err(reason) = &parsed {
        let (line, message) = split_reason(reason);
        found.push(TextFinding::error(line.unwrap_or(1), message));
    }
    // The provider stops at its first refusal; the specification's checks
    // still run on whatever mapping there is, so one pass shows every fault.
    let Ok(entries) = frontmatter_entries(text) else {
        return found;
    };
    for (key, line, node) in &entries {
        match key.as_str() {
            "name" => check_name(*line, node, expected, &mut found),
            "description" => check_description(*line, node, &mut found),
            "compatibility" => check_compatibility(*line, node, &mut found),
            "license" => {
                if !matches!(node.value, Value::Str(_)) {
                    found.push(TextFinding::error(
                        *line,
                        format!("`license` must be a string, found {}", node.value.kind()),
                    ));
                }
            }
            "metadata" => check_metadata(*line, node, &mut found),
            "allowed-tools" => check_allowed_tools(*line, node, &mut found),
            "whenToUse" => match &node.value {
                Value::Str(s) if !s.is_empty() => {}
                other => {
                    let kind = if matches!(other, Value::Str(_)) { "an empty string" } else { other.kind() };
                    found.push(TextFinding::warning(
                        *line,
                        format!("`whenToUse` is ignored: it must be a non-empty string, found {kind}"),
                    ));
                }
            },
            key if SPEC_KEYS.contains(&key) || PROJECT_KEYS.contains(&key) => {}
            // Reported by the provider's own reason.
            key if LEGACY_INVOCATION_KEYS.iter().any(|(legacy, _)| *legacy == key) => {}
            key => found.push(TextFinding::error(
                *line,
                format!(
                    "unknown frontmatter key `{key}` (known: {}, {})",
                    SPEC_KEYS.join(", "),
                    PROJECT_KEYS.join(", ")
                ),
            )),
        }
    }
    if let Ok(parsed) = &parsed {
        if parsed.invocation == (InvocationPolicy { model_invocable: false, user_invocable: false }) {
            let line = entries.iter().find(|(key, _, _)| key == "disable-model-invocation").map_or(1, |e| e.1);
            found.push(TextFinding::warning(
                line,
                "neither the model nor a user can invoke this skill (`disable-model-invocation` is true and `user-invocable` is false)",
            ));
        }
        if parsed.body.is_empty() {
            found.push(TextFinding::warning(closing_line(text), "no instructions after the frontmatter"));
        }
    }
    found
}

/// Splits a provider reason into the file line it names and the rest:
/// `line N: …` and `invalid YAML frontmatter: line N column C: …` (the forms
/// [`parse_skill_file`] documents).
pub(super) fn split_reason(reason: &str) -> (Option<usize>, String) {
    let number = |text: &str| -> Option<(usize, usize)> {
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        text[..digits].parse().ok().map(|n| (n, digits))
    };
    if let Some(rest) = reason.strip_prefix("line ")
        && let Some((line, digits)) = number(rest)
        && let Some(message) = rest[digits..].strip_prefix(": ")
    {
        return (Some(line), message.to_string());
    }
    const YAML: &str = "invalid YAML frontmatter: line ";
    if let Some(rest) = reason.strip_prefix(YAML)
        && let Some((line, digits)) = number(rest)
    {
        return (Some(line), format!("invalid YAML frontmatter:{}", &rest[digits..]));
    }
    (None, reason.to_string())
}

fn check_name(line: usize, node: &Node, expected: Option<(&str, NamePlace)>, found: &mut Vec<TextFinding>) {
    // A missing, mistyped or ungrammatical name is the provider's reason.
    let Value::Str(name) = &node.value else {
        return;
    };
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        found.push(TextFinding::client_rule(
            line,
            format!("`name` is {chars} characters; the Agent Skills specification allows at most {MAX_NAME_CHARS}"),
        ));
    }
    if let Some((expected, place)) = expected
        && is_skill_name(name)
        && name != expected
    {
        let message = match place {
            NamePlace::Folder => format!("`name` \"{name}\" does not match its folder name \"{expected}\""),
            NamePlace::File => format!("`name` \"{name}\" does not match its file name \"{expected}.md\""),
        };
        found.push(TextFinding::client_rule(line, message));
    }
}

fn check_description(line: usize, node: &Node, found: &mut Vec<TextFinding>) {
    let Value::Str(description) = &node.value else {
        return;
    };
    let chars = description.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        found.push(TextFinding::client_rule(
            line,
            format!(
                "`description` is {chars} characters; the Agent Skills specification allows at most {MAX_DESCRIPTION_CHARS}"
            ),
        ));
    }
    // What the catalog measures: whitespace runs collapsed, trimmed.
    let shown = description.split(is_ecmascript_whitespace).filter(|word| !word.is_empty()).collect::<Vec<_>>();
    if shown.is_empty() && !description.is_empty() {
        found.push(TextFinding::error(line, "`description` is only whitespace"));
    }
    let shown_chars = shown.iter().map(|word| word.chars().count()).sum::<usize>() + shown.len().saturating_sub(1);
    if shown_chars > CATALOG_DESCRIPTION_CHARS {
        found.push(TextFinding::warning(
            line,
            format!(
                "`description` is {shown_chars} characters with whitespace collapsed; the catalog cuts it to {CATALOG_DESCRIPTION_CHARS} by default"
            ),
        ));
    }
}

fn check_compatibility(line: usize, node: &Node, found: &mut Vec<TextFinding>) {
    let message = match &node.value {
        Value::Str(s) if s.is_empty() => "`compatibility` is empty; leave it out instead".to_string(),
        Value::Str(s) if s.chars().count() > MAX_COMPATIBILITY_CHARS => format!(
            "`compatibility` is {} characters; the Agent Skills specification allows at most {MAX_COMPATIBILITY_CHARS}",
            s.chars().count()
        ),
        Value::Str(_) => return,
        other => format!("`compatibility` must be a string, found {}", other.kind()),
    };
    found.push(TextFinding::client_rule(line, message));
}

fn check_metadata(line: usize, node: &Node, found: &mut Vec<TextFinding>) {
    let Value::Map(entries) = &node.value else {
        found.push(TextFinding::client_rule(
            line,
            format!("`metadata` must be a mapping, found {}; it is ignored", node.value.kind()),
        ));
        return;
    };
    for (key, value) in entries {
        if !matches!(value.value, Value::Str(_)) {
            let line = key.line;
            let key = match &key.value {
                Value::Str(s) => s.clone(),
                other => other.kind().to_string(),
            };
            found.push(TextFinding::client_rule(
                line,
                format!(
                    "`metadata.{key}` is {}; the Agent Skills specification allows only string values",
                    value.value.kind()
                ),
            ));
        }
    }
}

fn check_allowed_tools(line: usize, node: &Node, found: &mut Vec<TextFinding>) {
    match &node.value {
        Value::Str(_) => {}
        Value::Seq(items) if items.iter().all(|item| matches!(item.value, Value::Str(_))) => {
            found.push(TextFinding::warning(
                line,
                "`allowed-tools` is a sequence; the Agent Skills specification defines a space-separated string",
            ));
        }
        other => found.push(TextFinding::error(
            line,
            format!("`allowed-tools` must be a space-separated string, found {}", other.kind()),
        )),
    }
}

/// The line of the closing `---` (the file parsed, so there is one).
pub(super) fn closing_line(text: &str) -> usize {
    text.split('\n')
        .enumerate()
        .skip(1)
        .find(|(_, line)| line.strip_suffix('\r').unwrap_or(line) == "---")
        .map_or(1, |(index, _)| index + 1)
}

//! The skill fields read from the frontmatter mapping: keys looked up as
//! strings, required strings, and the invocation policy.

use crate::registry::InvocationPolicy;

use super::{Node, Value};

/// Keys DeepSeek Harness refuses, each with the spelling to use instead.
/// A skill that carries one is dropped (fail closed) rather than having its
/// policy silently ignored.
pub(crate) const LEGACY_INVOCATION_KEYS: [(&str, &str); 3] = [
    ("disableModelInvocation", "disable-model-invocation"),
    ("modelInvocable", "disable-model-invocation"),
    ("userInvocable", "user-invocable"),
];

/// The top-level frontmatter mapping, looked up by key string.
pub(super) struct Fields {
    /// Key string, the key's line, the value.
    pub(super) entries: Vec<(String, usize, Node)>,
}

impl Fields {
    pub(super) fn new(entries: Vec<(Node, Node)>) -> Self {
        Self { entries: entries.into_iter().map(|(key, value)| (key.value.key_string(), key.line, value)).collect() }
    }

    /// The value under `key`. Keys that collide only after conversion to
    /// strings (`1` and `"1"`) resolve to the last, as a JavaScript object
    /// built from the mapping would.
    pub(super) fn get(&self, key: &str) -> Option<&Node> {
        self.entries.iter().rev().find(|(k, _, _)| k == key).map(|(_, _, v)| v)
    }

    /// A required non-empty string, with the line it is on.
    pub(super) fn required_string(&self, key: &str) -> Result<(String, usize), String> {
        match self.get(key) {
            None => Err(format!("frontmatter requires `{key}`")),
            Some(Node { value: Value::Str(s), line }) if !s.is_empty() => Ok((s.clone(), *line)),
            Some(node) => {
                Err(format!("line {}: `{key}` must be a non-empty string, found {}", node.line, node.value.kind()))
            }
        }
    }
}

/// Reads the invocation policy. Anything ambiguous drops the skill: a skill
/// meant to be hidden from the model must never become visible because its
/// author misspelt the key or the value.
pub(super) fn invocation_policy(fields: &Fields) -> Result<InvocationPolicy, String> {
    for (legacy, canonical) in LEGACY_INVOCATION_KEYS {
        if let Some((_, line, _)) = fields.entries.iter().find(|(k, _, _)| k == legacy) {
            return Err(format!("line {line}: frontmatter field `{legacy}` is unsupported; use `{canonical}`"));
        }
    }
    let disable_model = invocation_flag(fields, "disable-model-invocation")?;
    let user = invocation_flag(fields, "user-invocable")?;
    Ok(InvocationPolicy { model_invocable: disable_model != Some(true), user_invocable: user != Some(false) })
}

/// One invocation key: absent → `None`; a YAML boolean, the number 1 or 0,
/// or a string that lower-cases to true/yes/on/1 or false/no/off/0.
fn invocation_flag(fields: &Fields, key: &str) -> Result<Option<bool>, String> {
    let Some(node) = fields.get(key) else {
        return Ok(None);
    };
    let flag = match &node.value {
        Value::Bool(b) => Some(*b),
        Value::Int(1) => Some(true),
        Value::Int(0) => Some(false),
        // JavaScript has one number type, so the reference also takes `1.0`
        // (and `-0`) for 1 and 0.
        Value::Float(f) if *f == 1.0 => Some(true),
        Value::Float(f) if *f == 0.0 => Some(false),
        // `to_lowercase` is Unicode-aware like JavaScript's `toLowerCase`.
        Value::Str(s) => match s.to_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Some(true),
            "false" | "no" | "off" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    };
    match flag {
        Some(flag) => Ok(Some(flag)),
        None => Err(format!(
            "line {}: frontmatter field `{key}` must be a boolean (true/false, yes/no, on/off, 1/0), found {}",
            node.line,
            node.value.describe()
        )),
    }
}

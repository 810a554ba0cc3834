//! The `skill` tool's outcome as `load --json` and `replay` print it:
//! `{"ok":value,"text":…}` or `{"error":…}` (docs/spec.md §6, §7).
//!
//! The library holds the value as a `serde_json::Value`, whose objects sort
//! their keys; the tool documents its value as `{name, provider,
//! resourceBase?, content}` (§3.3), with a resource base's `kind` first, and
//! the scenario files are compared byte for byte. So the value is printed in
//! that order here. serde_json's `preserve_order` feature would do it too,
//! but it reaches every map of every crate in the build (the session log,
//! the documents the Node host must match), for the sake of one value.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use skill_host::ToolOutcome;

/// The documented order of the keys of the tool value and of the objects in
/// it: a skill's `{name, provider, resourceBase, content}`, a resource
/// base's `{kind, path | url | description}`, search's `{matches}` and each
/// match's `{name, description}`. Keys not named here follow, sorted.
const KEY_ORDER: [&str; 9] =
    ["name", "kind", "provider", "path", "url", "description", "resourceBase", "content", "matches"];

/// One `invoke`'s record.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum ToolRecord {
    /// The value, and the text the model sees.
    Ok {
        #[serde(serialize_with = "in_documented_order")]
        ok: Value,
        text: String,
    },
    /// The error text the model sees (`Error: …`).
    Error { error: String },
}

impl From<ToolOutcome> for ToolRecord {
    fn from(outcome: ToolOutcome) -> Self {
        match outcome {
            ToolOutcome::Success { value, text, .. } => Self::Ok { ok: value, text },
            ToolOutcome::Error { text } => Self::Error { error: text },
        }
    }
}

fn in_documented_order<S: Serializer>(value: &Value, serializer: S) -> Result<S::Ok, S::Error> {
    DocumentedOrder(value).serialize(serializer)
}

/// A JSON value whose objects list their keys in [`KEY_ORDER`].
struct DocumentedOrder<'a>(&'a Value);

impl Serialize for DocumentedOrder<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(object) => {
                let mut keys: Vec<&String> = object.keys().collect();
                // Stable: the keys KEY_ORDER does not name stay sorted.
                keys.sort_by_key(|key| KEY_ORDER.iter().position(|known| known == key).unwrap_or(KEY_ORDER.len()));
                let mut map = serializer.serialize_map(Some(keys.len()))?;
                for key in keys {
                    map.serialize_entry(key, &DocumentedOrder(&object[key]))?;
                }
                map.end()
            }
            Value::Array(items) => serializer.collect_seq(items.iter().map(DocumentedOrder)),
            other => other.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_value_prints_in_its_documented_order() {
        let record = |value: Value| serde_json::to_string(&ToolRecord::Ok { ok: value, text: "t".to_owned() }).unwrap();
        assert_eq!(
            record(
                json!({"content": "C", "name": "a", "provider": "p", "resourceBase": {"path": "/s", "kind": "directory"}})
            ),
            r#"{"ok":{"name":"a","provider":"p","resourceBase":{"kind":"directory","path":"/s"},"content":"C"},"text":"t"}"#
        );
        assert_eq!(
            record(
                json!({"resourceBase": {"description": "d", "kind": "opaque"}, "provider": "p", "name": "a", "content": "C"})
            ),
            r#"{"ok":{"name":"a","provider":"p","resourceBase":{"kind":"opaque","description":"d"},"content":"C"},"text":"t"}"#
        );
        assert_eq!(
            record(json!({"matches": [{"description": "d", "name": "a"}]})),
            r#"{"ok":{"matches":[{"name":"a","description":"d"}]},"text":"t"}"#
        );
        let error = ToolRecord::Error { error: "Error: x".to_owned() };
        assert_eq!(serde_json::to_string(&error).unwrap(), r#"{"error":"Error: x"}"#);
    }
}

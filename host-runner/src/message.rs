//! User messages in the session log's shape, and the sources that matter here.

use std::sync::LazyLock;

use serde_json::{Value, json};

pub use crate::session::new_message_id;

/// The source of catalog messages the plugin writes (docs/spec.md §3.1).
pub static CATALOG_SOURCE: LazyLock<Value> =
    LazyLock::new(|| serde_json::from_str(skill_rules::CATALOG_SOURCE).expect("the catalog source is JSON"));

/// The source of a direct user message.
pub fn user_source() -> Value {
    json!({"kind": "user"})
}

/// The source of a compaction summary.
pub fn compaction_source() -> Value {
    json!({"kind": "plugin", "plugin": "compaction"})
}

/// A user-message `data` object with one text block and a fresh id.
pub fn user_message(source: Value, text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "source": source, "role": "user", "id": new_message_id()})
}

/// The text of a message whose content is exactly one text block.
pub fn single_text(data: &Value) -> Option<&str> {
    match data.get("content")?.as_array()?.as_slice() {
        [block] if block.get("type").and_then(Value::as_str) == Some("text") => block.get("text")?.as_str(),
        _ => None,
    }
}

//! `dsh:skill/session`: pages of the session's user messages and the
//! visibility of a seq, read in place (never the whole session).

use serde_json::Value;

use crate::bindings::session::{Host, SourceFilter, UserMessage, UserMessagePage};
use crate::bindings::types as wit;
use crate::runtime::CallState;

/// The most messages one page carries, whatever the plugin asks for.
const MAX_PAGE: u32 = 256;

impl Host for CallState {
    fn read_user_messages(
        &mut self,
        filters: Vec<SourceFilter>,
        before: Option<u64>,
        limit: u32,
    ) -> wasmtime::Result<UserMessagePage> {
        let Some(session) = &self.host.session else {
            return Ok(UserMessagePage {
                messages: Vec::new(),
                next: None,
            });
        };
        let session = session.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let limit = limit.clamp(1, MAX_PAGE) as usize;
        let mut messages = Vec::new();
        let mut next = None;
        let matching = session
            .user_messages()
            .iter()
            .rev()
            .filter(|event| before.is_none_or(|before| event.seq < before))
            .filter(|event| filters.iter().any(|filter| matches(filter, &event.source)));
        for event in matching {
            if messages.len() == limit {
                // There is more: the next page starts below the last one returned.
                next = messages.last().map(|message: &UserMessage| message.seq);
                break;
            }
            messages.push(UserMessage {
                seq: event.seq,
                message: wit::Message {
                    source: event.source.to_string(),
                    content: content_to_wit(&event.content),
                },
            });
        }
        Ok(UserMessagePage { messages, next })
    }

    fn is_visible(&mut self, seq: u64) -> wasmtime::Result<bool> {
        Ok(self.host.session.as_ref().is_some_and(|session| {
            session
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .is_visible(seq)
        }))
    }
}

fn matches(filter: &SourceFilter, source: &Value) -> bool {
    source.get("kind").and_then(Value::as_str) == Some(filter.kind.as_str())
        && filter
            .plugin
            .as_deref()
            .is_none_or(|plugin| source.get("plugin").and_then(Value::as_str) == Some(plugin))
}

/// Stored content blocks as WIT blocks: `{"type":"text","text":…}` is text,
/// anything else travels as its JSON.
pub(crate) fn content_to_wit(blocks: &[Value]) -> Vec<wit::ContentBlock> {
    blocks
        .iter()
        .map(|block| {
            match (
                block.get("type").and_then(Value::as_str),
                block.get("text").and_then(Value::as_str),
            ) {
                (Some("text"), Some(text)) => wit::ContentBlock::Text(text.to_owned()),
                _ => wit::ContentBlock::Other(block.to_string()),
            }
        })
        .collect()
}

//! `dsh:skill/session`: references to the session's user messages, one page
//! at a time through a per-kind index, and one message's content on demand.
//! The session is never copied whole.

use serde_json::{Value, json};

use crate::bindings::session::{Host, MessageRef, MessageRefPage, SourceFilter};
use crate::bindings::types as wit;
use crate::session::UserMessageInfo;

/// The most references one page carries, whatever the plugin asks for.
const MAX_PAGE: u32 = 256;
/// The most source filters one request may carry: each message of a listed
/// kind is checked against them, in host time the deadline cannot stop.
pub(crate) const MAX_FILTERS: usize = 16;

impl Host for super::CallContext {
    fn list_user_messages(
        &mut self,
        filters: Vec<SourceFilter>,
        before: Option<u64>,
        limit: u32,
    ) -> wasmtime::Result<MessageRefPage> {
        let answer = self.user_message_page(&filters, before, limit);
        let args = || json!({ "filters": crate::trace::value(&filters), "before": before, "limit": limit });
        self.trace_import("session.list-user-messages", args, &answer);
        answer
    }

    fn get_user_message(&mut self, seq: u64) -> wasmtime::Result<Option<wit::Message>> {
        let answer = self.user_message(seq);
        self.trace_import("session.get-user-message", || json!({ "seq": seq }), &answer);
        answer
    }
}

impl super::CallContext {
    fn user_message_page(
        &mut self,
        filters: &[SourceFilter],
        before: Option<u64>,
        limit: u32,
    ) -> wasmtime::Result<MessageRefPage> {
        if filters.len() > MAX_FILTERS {
            wasmtime::bail!(
                "the plugin passed {} source filters to `session.list-user-messages`; at most {MAX_FILTERS} are allowed",
                filters.len()
            );
        }
        let Some(session) = &self.session else {
            return Ok(MessageRefPage { refs: Vec::new(), next: None });
        };
        let session = session.lock();
        let limit = limit.clamp(1, MAX_PAGE) as usize;
        // Newest first across every filter's kind; a kind named twice is read once.
        let mut kinds: Vec<&str> = filters.iter().map(|filter| filter.kind.as_str()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        let mut streams: Vec<_> = kinds
            .iter()
            .map(|kind| {
                session
                    .user_messages_of_kind(kind)
                    .rev()
                    .skip_while(|event| before.is_some_and(|before| event.seq >= before))
                    .peekable()
            })
            .collect();
        let mut refs = Vec::new();
        let mut next = None;
        loop {
            let newest = streams
                .iter_mut()
                .enumerate()
                .filter_map(|(index, stream)| stream.peek().map(|event| (event.seq, index)))
                .max();
            let Some((_, index)) = newest else { break };
            let event = streams[index].next().expect("peeked");
            if !filters.iter().any(|filter| matches(filter, &event)) {
                continue;
            }
            if refs.len() == limit {
                // There is more: the next page starts below the last one returned.
                next = refs.last().map(|reference: &MessageRef| reference.seq);
                break;
            }
            refs.push(MessageRef { seq: event.seq, visible: session.is_visible(event.seq) });
        }
        Ok(MessageRefPage { refs, next })
    }

    fn user_message(&mut self, seq: u64) -> wasmtime::Result<Option<wit::Message>> {
        let Some(session) = &self.session else {
            return Ok(None);
        };
        let session = session.lock();
        // A file rewritten under the host fails the call: the plugin must not
        // decide on a history that is no longer the one it was shown.
        Ok(session
            .user_message(seq)?
            .map(|event| wit::Message { source: event.source.to_string(), content: content_to_wit(&event.content) }))
    }
}

fn matches(filter: &SourceFilter, message: &UserMessageInfo) -> bool {
    message.kind == filter.kind && filter.plugin.as_deref().is_none_or(|plugin| message.plugin == Some(plugin))
}

/// Stored content blocks as WIT blocks: `{"type":"text","text":…}` is text,
/// anything else travels as its JSON.
pub(crate) fn content_to_wit(blocks: &[Value]) -> Vec<wit::ContentBlock> {
    blocks
        .iter()
        .map(|block| match (block.get("type").and_then(Value::as_str), block.get("text").and_then(Value::as_str)) {
            (Some("text"), Some(text)) => wit::ContentBlock::Text(text.to_owned()),
            _ => wit::ContentBlock::Other(block.to_string()),
        })
        .collect()
}

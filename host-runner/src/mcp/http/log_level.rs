//! SEP-2575's rule for log messages: a request of the 2026-07-28 revision
//! gets `notifications/message` on its response stream only at or above the
//! level its `_meta` names (`io.modelcontextprotocol/logLevel`), and none
//! when it names none.
//!
//! rmcp 3.11 does not keep it: what a handler logs through its peer
//! (`Peer::notify_logging_message`) while answering a request is written on
//! that request's SSE response whatever the request asked. `skill-host mcp`
//! logs nothing to its clients today; the front door keeps the rule anyway,
//! on the response body, so that no handler can break it (the conformance
//! fixture's `test_logging_tool` logs on every call and relies on this).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use http_body_util::BodyExt;
use http_body_util::combinators::BoxBody;
use hyper::body::{Body, Bytes, Frame};
use hyper::header::CONTENT_TYPE;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::HttpResponse;

/// The levels of `notifications/message`, least severe first (syslog's,
/// RFC 5424, as MCP names them).
pub const LEVELS: [&str; 8] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/// The `_meta` key that marks a request of the 2026-07-28 revision.
const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The `_meta` key naming the least severe level a request wants.
const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// Which log messages the response to one request may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogLevelFilter {
    /// The least severe level delivered, as an index into [`LEVELS`]; `None`:
    /// none at all.
    least: Option<usize>,
}

impl LogLevelFilter {
    /// The filter for a request whose body is `message` (one JSON-RPC
    /// message), or `None` where the rule does not apply: a message without
    /// the 2026-07-28 `_meta` (a request of a 2025 session, whose level is
    /// the session's, or not a request at all).
    pub fn for_request(message: &[u8]) -> Option<Self> {
        #[derive(Deserialize)]
        struct Message {
            params: Option<Params>,
        }
        #[derive(Deserialize)]
        struct Params {
            #[serde(rename = "_meta")]
            meta: Option<Map<String, Value>>,
        }
        let meta = serde_json::from_slice::<Message>(message).ok()?.params?.meta?;
        meta.contains_key(PROTOCOL_VERSION).then(|| Self {
            // A level that is not one of MCP's asks for nothing known: none.
            least: meta.get(LOG_LEVEL).and_then(Value::as_str).and_then(rank),
        })
    }

    /// Whether `message`, one JSON-RPC message of the response, may go out.
    pub fn allows(&self, message: &Value) -> bool {
        if message.get("method").and_then(Value::as_str) != Some("notifications/message") {
            return true;
        }
        let level = message.pointer("/params/level").and_then(Value::as_str).and_then(rank);
        matches!((self.least, level), (Some(least), Some(level)) if level >= least)
    }

    /// `response` with the log messages this request did not ask for left
    /// out of its event stream (a JSON response is one message, the answer:
    /// it passes as it is).
    pub fn apply(self, response: HttpResponse) -> HttpResponse {
        let streamed = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| value.starts_with("text/event-stream"));
        if !streamed {
            return response;
        }
        response.map(|body| FilteredEvents { body, filter: self, pending: Vec::new(), ended: false }.boxed())
    }

    /// Whether the SSE `event` (its lines and the blank line ending it) may
    /// go out: one whose data is not a JSON-RPC message (a comment, a
    /// priming event) always may.
    fn keeps(&self, event: &[u8]) -> bool {
        let Ok(event) = std::str::from_utf8(event) else { return true };
        let data: Vec<&str> = event
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| data.strip_prefix(' ').unwrap_or(data))
            .collect();
        match serde_json::from_str::<Value>(&data.join("\n")) {
            Ok(message) => self.allows(&message),
            Err(_) => true,
        }
    }
}

/// `level`'s place in [`LEVELS`].
fn rank(level: &str) -> Option<usize> {
    LEVELS.iter().position(|known| *known == level)
}

/// An event stream with the events [`LogLevelFilter::keeps`] refuses left
/// out. Each event is passed on as soon as its blank line arrives.
struct FilteredEvents {
    body: BoxBody<Bytes, Infallible>,
    filter: LogLevelFilter,
    /// Received, not yet a whole event.
    pending: Vec<u8>,
    ended: bool,
}

impl Body for FilteredEvents {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        loop {
            if let Some(end) = event_end(&this.pending) {
                let event: Vec<u8> = this.pending.drain(..end).collect();
                if this.filter.keeps(&event) {
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(event)))));
                }
                continue;
            }
            if this.ended {
                // Not a whole event: passed on as it came.
                return Poll::Ready((!this.pending.is_empty()).then(|| {
                    let rest = std::mem::take(&mut this.pending);
                    Ok(Frame::data(Bytes::from(rest)))
                }));
            }
            match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => this.ended = true,
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => this.pending.extend_from_slice(&data),
                    // Trailers: not part of an event.
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
            }
        }
    }
}

/// Where the first event in `received` ends: after the blank line that ends
/// it (lines end with CRLF, LF or CR). `None` until that line has arrived
/// (a CR at the end may be the first half of a CRLF).
fn event_end(received: &[u8]) -> Option<usize> {
    let (mut at, mut line_start) = (0, 0);
    while at < received.len() {
        let ending = match received[at] {
            b'\n' => 1,
            b'\r' => match received.get(at + 1) {
                Some(b'\n') => 2,
                Some(_) => 1,
                None => return None,
            },
            _ => {
                at += 1;
                continue;
            }
        };
        if at == line_start {
            return Some(at + ending);
        }
        at += ending;
        line_start = at;
    }
    None
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use http_body_util::Full;
    use hyper::Response;
    use hyper::header::HeaderValue;
    use serde_json::json;

    use super::*;

    fn request(meta: Value) -> Vec<u8> {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "_meta": meta}})
            .to_string()
            .into_bytes()
    }

    fn log(level: &str) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": level, "data": "x"}})
    }

    #[test]
    fn the_rule_applies_to_requests_of_the_2026_revision() {
        let version = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
        assert_eq!(LogLevelFilter::for_request(&request(version.clone())), Some(LogLevelFilter { least: None }));
        let mut warning = version.clone();
        warning["io.modelcontextprotocol/logLevel"] = json!("warning");
        assert_eq!(LogLevelFilter::for_request(&request(warning)), Some(LogLevelFilter { least: Some(3) }));
        let mut unknown = version;
        unknown["io.modelcontextprotocol/logLevel"] = json!("loud");
        assert_eq!(LogLevelFilter::for_request(&request(unknown)), Some(LogLevelFilter { least: None }));
        // A session's request, a request without params, not JSON-RPC at all.
        assert_eq!(LogLevelFilter::for_request(&request(json!({"progressToken": 1}))), None);
        assert_eq!(LogLevelFilter::for_request(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        assert_eq!(LogLevelFilter::for_request(br#"{"jsonrpc":"2.0","id":1,"params":[1]}"#), None);
        assert_eq!(LogLevelFilter::for_request(b"[]"), None);
    }

    #[test]
    fn log_messages_below_the_level_asked_for_are_refused() {
        let none = LogLevelFilter { least: None };
        let warning = LogLevelFilter { least: Some(3) };
        for level in LEVELS {
            assert!(!none.allows(&log(level)), "{level}");
            assert_eq!(warning.allows(&log(level)), rank(level).unwrap() >= 3, "{level}");
        }
        assert!(!warning.allows(&log("loud")));
        let result = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
        let other = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}});
        for message in [result, other] {
            assert!(none.allows(&message), "{message}");
        }
    }

    #[test]
    fn events_end_at_a_blank_line() {
        assert_eq!(event_end(b"data: 1\n\ndata: 2\n\n"), Some(9));
        assert_eq!(event_end(b"data: 1\r\n\r\nrest"), Some(11));
        assert_eq!(event_end(b"data: 1\r\rrest"), Some(9));
        assert_eq!(event_end(b": keep-alive\n\n"), Some(14));
        assert_eq!(event_end(b"\n"), Some(1));
        for unfinished in [&b"data: 1\n"[..], b"data: 1\r\n\r", b"data: 1", b""] {
            assert_eq!(event_end(unfinished), None, "{:?}", String::from_utf8_lossy(unfinished));
        }
    }

    /// A body sent in the given chunks.
    struct Chunks(VecDeque<Bytes>);

    impl Body for Chunks {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            Poll::Ready(self.get_mut().0.pop_front().map(|chunk| Ok(Frame::data(chunk))))
        }
    }

    fn filtered(filter: LogLevelFilter, content_type: &'static str, chunks: &[&str]) -> String {
        let chunks = Chunks(chunks.iter().map(|chunk| Bytes::copy_from_slice(chunk.as_bytes())).collect());
        let mut response = Response::new(chunks.boxed());
        response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        let body = filter.apply(response).into_body();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let bytes = runtime.block_on(body.collect()).unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[test]
    fn the_event_stream_loses_only_the_log_messages_not_asked_for() {
        let event = |message: Value| format!("data: {message}\n\n");
        let (info, error) = (event(log("info")), event(log("error")));
        let result = event(json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}));
        let stream = [info.as_str(), ": keep-alive\n\n", "data:\n\n", error.as_str(), result.as_str()].concat();
        // Cut anywhere, even inside a line ending.
        for cut in [1, 7, stream.len() / 3, info.len() - 1, info.len(), stream.len() - 2] {
            let chunks = [&stream[..cut], &stream[cut..]];
            let none = filtered(LogLevelFilter { least: None }, "text/event-stream", &chunks);
            assert_eq!(none, format!(": keep-alive\n\ndata:\n\n{result}"), "cut at {cut}");
            let warning = filtered(LogLevelFilter { least: Some(3) }, "text/event-stream", &chunks);
            assert_eq!(warning, format!(": keep-alive\n\ndata:\n\n{error}{result}"), "cut at {cut}");
        }
        // An unfinished last event is passed on as it came.
        assert_eq!(filtered(LogLevelFilter { least: None }, "text/event-stream", &["data: {"]), "data: {");
        // A JSON answer is not a stream: untouched.
        let json = log("info").to_string();
        assert_eq!(filtered(LogLevelFilter { least: None }, "application/json", &[json.as_str()]), json);
        let full = Response::new(Full::new(Bytes::from("x")).boxed());
        assert!(LogLevelFilter { least: None }.apply(full).headers().is_empty());
    }
}

//! The JSONL line shapes of a DeepSeek Harness session file.
//!
//! Lines are written through structs so the keys come out in DeepSeek
//! Harness's order (`type, seq, time, data, surfaceOp, sourceEventSeqs`)
//! without serde_json's `preserve_order`. Inside `data`, keys are sorted
//! (serde_json's map); key order in JSON objects carries no meaning to any
//! reader.

use serde::de::DeserializeOwned;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::SessionHeader;
use super::surface::SurfaceOp;

/// The only session format version this log reads and writes.
pub(super) const SESSION_FORMAT_VERSION: u64 = 0;

/// What the reader needs from any line: the envelope fields of an event plus
/// the header fields, so the header and events parse in one pass. `data` is
/// skipped here (serde ignores unknown fields without building them), which
/// keeps bulky assistant and tool events cheap to scan.
#[derive(Deserialize)]
pub(super) struct LineEnvelope {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub seq: Option<Value>,
    pub time: Option<Value>,
    #[serde(rename = "surfaceOp")]
    pub surface_op: Option<Value>,
    pub version: Option<Value>,
    pub id: Option<Value>,
    #[serde(rename = "createdAt")]
    pub created_at: Option<Value>,
    pub cwd: Option<Value>,
}

/// A `user/message` line as the plugin reads it: parsed in a second pass
/// while indexing (for the source, then dropped) and again from the file
/// when the plugin asks for the message. One shape for both, so a message is
/// indexed exactly when it reads back. (Skipping the content with
/// `IgnoredAny` instead would not check that its strings are UTF-8: the
/// session fuzzer's finding.)
#[derive(Deserialize)]
pub(super) struct UserMessageLine {
    #[serde(rename = "type")]
    pub kind: String,
    pub seq: u64,
    pub data: UserMessageData,
}

/// A `tool/result` line, read for its message's source (the content is
/// skipped without being built: most results are never indexed).
#[derive(Deserialize)]
pub(super) struct ToolResultLine {
    pub data: ToolResultData,
}

/// The part of a tool result's `data` the index reads.
#[derive(Deserialize)]
pub(super) struct ToolResultData {
    pub message: MessageSource,
}

/// A message's source alone.
#[derive(Deserialize)]
pub(super) struct MessageSource {
    #[serde(default)]
    pub source: Value,
}

/// A `tool/result` line read in full for the plugin: its message, as a user
/// message is read (one shape for indexing and reading back).
#[derive(Deserialize)]
pub(super) struct ToolResultMessageLine {
    #[serde(rename = "type")]
    pub kind: String,
    pub seq: u64,
    pub data: ToolResultMessage,
}

/// A tool result's `data`, its message in full.
#[derive(Deserialize)]
pub(super) struct ToolResultMessage {
    pub message: UserMessageData,
}

/// The fields of a user message's `data` the plugin reads.
#[derive(Deserialize)]
pub(super) struct UserMessageData {
    pub content: Vec<Value>,
    #[serde(default)]
    pub source: Value,
}

/// The header line as written.
#[derive(Serialize)]
pub(super) struct HeaderLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    version: u64,
    id: &'a str,
    #[serde(rename = "createdAt")]
    created_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cwd: Option<&'a str>,
}

impl<'a> HeaderLine<'a> {
    pub fn new(header: &'a SessionHeader) -> Self {
        HeaderLine {
            kind: "session",
            version: SESSION_FORMAT_VERSION,
            id: &header.id,
            created_at: header.created_at,
            cwd: header.cwd.as_deref(),
        }
    }
}

/// One event line as written.
#[derive(Serialize)]
pub(super) struct EventLine<'a> {
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub seq: u64,
    pub time: i64,
    pub data: &'a Value,
    #[serde(rename = "surfaceOp", skip_serializing_if = "Option::is_none")]
    pub surface_op: Option<SurfaceOp>,
    #[serde(rename = "sourceEventSeqs", skip_serializing_if = "Option::is_none")]
    pub source_event_seqs: Option<&'a [u64]>,
}

impl Serialize for SurfaceOp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            SurfaceOp::Append => serializer.serialize_str("append"),
            SurfaceOp::Replace { start, end } => {
                let mut op = serializer.serialize_struct("SurfaceOp", 3)?;
                op.serialize_field("op", "replace")?;
                op.serialize_field("start", &start)?;
                op.serialize_field("end", &end)?;
                op.end()
            }
        }
    }
}

/// Reads a `surfaceOp` marker; `None` when it is neither `"append"` nor a
/// replace object with integer `start` and `end`.
pub(super) fn parse_surface_op(value: &Value) -> Option<SurfaceOp> {
    if value.as_str() == Some("append") {
        return Some(SurfaceOp::Append);
    }
    let object = value.as_object()?;
    if object.get("op")?.as_str()? != "replace" {
        return None;
    }
    Some(SurfaceOp::Replace { start: object.get("start")?.as_u64()?, end: object.get("end")?.as_u64()? })
}

/// Validates the header fields of a `{"type":"session",…}` line the way
/// DeepSeek Harness does, except that a `null` cwd reads as absent.
pub(super) fn parse_header(line: &LineEnvelope) -> Result<SessionHeader, String> {
    match line.version.as_ref().map(Value::as_u64) {
        Some(Some(SESSION_FORMAT_VERSION)) => {}
        Some(_) => {
            return Err(format!(
                "version must be {SESSION_FORMAT_VERSION}, got {}; the log was written by another harness version",
                line.version.as_ref().map_or(Value::Null, Clone::clone)
            ));
        }
        None => return Err("version is missing".to_owned()),
    }
    let id = match &line.id {
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        Some(other) => return Err(format!("id must be a non-empty string, got {other}")),
        None => return Err("id is missing".to_owned()),
    };
    let created_at = match &line.created_at {
        Some(value) => value
            .as_i64()
            .filter(|ms| *ms >= 0)
            .ok_or_else(|| format!("createdAt must be a non-negative integer, got {value}"))?,
        None => return Err("createdAt is missing".to_owned()),
    };
    let cwd = match &line.cwd {
        None => None,
        Some(Value::String(cwd)) => Some(cwd.clone()),
        Some(other) => return Err(format!("cwd must be a string, got {other}")),
    };
    Ok(SessionHeader { id, created_at, cwd })
}

/// Parses one line as JSON.parse would read it, the way DeepSeek Harness
/// reads its own files. Two things it accepts and serde_json refuses are read
/// again, only when the first parse failed: a `\uXXXX` escape of a lone
/// UTF-16 surrogate (JavaScript cuts strings by code unit, so a truncated
/// description can end inside an emoji), read as U+FFFD as it reaches the
/// plugin from the Node host too; and a key given twice in an object, where
/// the last one counts (a `Value` keeps the last; a derived struct refuses
/// both). The first parse's error stands when the line is not JSON at all.
pub(super) fn from_line<T: DeserializeOwned>(text: &[u8]) -> Result<T, serde_json::Error> {
    serde_json::from_slice(text).or_else(|error| {
        let repaired = without_lone_surrogates(text);
        serde_json::from_slice::<Value>(repaired.as_deref().unwrap_or(text)).and_then(T::deserialize).map_err(|_| error)
    })
}

/// `text` with every escaped lone surrogate replaced by `\ufffd`, or `None`
/// when it has none. Only escapes matter: UTF-8 cannot hold a surrogate.
fn without_lone_surrogates(text: &[u8]) -> Option<Vec<u8>> {
    fn unit(text: &[u8], at: usize) -> Option<u16> {
        let digits = text.get(at..at + 4)?;
        u16::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    }
    let escaped_unit = |at: usize| {
        (text.get(at) == Some(&b'\\') && text.get(at + 1) == Some(&b'u')).then(|| unit(text, at + 2)).flatten()
    };
    let mut repaired: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut at = 0;
    while at < text.len() {
        if text[at] != b'\\' {
            at += 1;
            continue;
        }
        let lone = match escaped_unit(at) {
            // Any other escape is two bytes: `\\` must not start a `\u`.
            None => {
                at += 2;
                continue;
            }
            Some(0xD800..=0xDBFF) if matches!(escaped_unit(at + 6), Some(0xDC00..=0xDFFF)) => {
                at += 12;
                continue;
            }
            Some(unit) => (0xD800..=0xDFFF).contains(&unit),
        };
        if lone {
            let out = repaired.get_or_insert_with(|| Vec::with_capacity(text.len()));
            out.extend_from_slice(&text[copied..at]);
            out.extend_from_slice(b"\\ufffd");
            copied = at + 6;
        }
        at += 6;
    }
    let mut out = repaired?;
    out.extend_from_slice(&text[copied..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn surface_ops_round_trip_in_harness_key_order() {
        assert_eq!(serde_json::to_string(&SurfaceOp::Append).ok().as_deref(), Some(r#""append""#));
        let replace = SurfaceOp::Replace { start: 3, end: 2 };
        assert_eq!(serde_json::to_string(&replace).ok().as_deref(), Some(r#"{"op":"replace","start":3,"end":2}"#));
        assert_eq!(parse_surface_op(&json!({"op":"replace","start":3,"end":2})), Some(replace));
        assert_eq!(parse_surface_op(&json!("append")), Some(SurfaceOp::Append));
        assert_eq!(parse_surface_op(&json!({"op":"replace","start":-1,"end":2})), None);
        assert_eq!(parse_surface_op(&json!("prepend")), None);
    }

    #[test]
    fn event_line_keys_follow_the_harness_order() {
        let data = json!({"content": [], "source": {"kind": "user"}, "role": "user", "id": "m"});
        let line = EventLine {
            kind: "user/message",
            seq: 7,
            time: 12,
            data: &data,
            surface_op: Some(SurfaceOp::Replace { start: 1, end: 2 }),
            source_event_seqs: Some(&[1, 2]),
        };
        assert_eq!(
            serde_json::to_string(&line).ok().as_deref(),
            Some(
                r#"{"type":"user/message","seq":7,"time":12,"data":{"content":[],"id":"m","role":"user","source":{"kind":"user"}},"surfaceOp":{"op":"replace","start":1,"end":2},"sourceEventSeqs":[1,2]}"#
            )
        );
    }

    #[test]
    fn header_line_omits_an_absent_cwd() {
        let header = SessionHeader { id: "s".to_owned(), created_at: 5, cwd: None };
        assert_eq!(
            serde_json::to_string(&HeaderLine::new(&header)).ok().as_deref(),
            Some(r#"{"type":"session","version":0,"id":"s","createdAt":5}"#)
        );
    }

    fn header_of(line: &str) -> Result<SessionHeader, String> {
        let envelope: LineEnvelope = serde_json::from_str(line).map_err(|e| e.to_string())?;
        parse_header(&envelope)
    }

    #[test]
    fn header_fields_are_validated() {
        let ok = header_of(r#"{"type":"session","version":0,"id":"a","createdAt":1,"cwd":"/w"}"#);
        assert_eq!(ok, Ok(SessionHeader { id: "a".to_owned(), created_at: 1, cwd: Some("/w".to_owned()) }));
        assert_eq!(
            header_of(r#"{"type":"session","version":1,"id":"a","createdAt":1}"#),
            Err("version must be 0, got 1; the log was written by another harness version".to_owned())
        );
        assert_eq!(
            header_of(r#"{"type":"session","version":0,"id":7,"createdAt":1}"#),
            Err("id must be a non-empty string, got 7".to_owned())
        );
        assert_eq!(header_of(r#"{"type":"session","version":0,"id":"a"}"#), Err("createdAt is missing".to_owned()));
        assert_eq!(
            header_of(r#"{"type":"session","version":0,"id":"a","createdAt":1,"cwd":3}"#),
            Err("cwd must be a string, got 3".to_owned())
        );
    }

    fn repaired(text: &str) -> Option<String> {
        without_lone_surrogates(text.as_bytes()).map(|bytes| String::from_utf8(bytes).unwrap())
    }

    #[test]
    fn the_last_of_duplicate_keys_counts_as_in_json_parse() {
        let line = br#"{"type":"user/message","seq":1,"seq":2,"surfaceOp":"append","surfaceOp":"append"}"#;
        let envelope: LineEnvelope = from_line(line).unwrap();
        assert_eq!((envelope.kind.as_deref(), envelope.seq), (Some("user/message"), Some(json!(2))));
        // Still refused: what JSON.parse refuses too.
        assert!(from_line::<LineEnvelope>(br#"{"type":"user/message","seq":}"#).is_err());
        assert!(from_line::<LineEnvelope>(br#"{"type":1}"#).is_err());
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        assert_eq!(repaired(r#""ab\ud83d""#).as_deref(), Some(r#""ab\ufffd""#));
        assert_eq!(repaired(r#""\ude00x\uD83D\u0041""#).as_deref(), Some(r#""\ufffdx\ufffd\u0041""#));
        let value: Value = from_line(br#"{"d":"ab\ud83d"}"#).unwrap();
        assert_eq!(value["d"], "ab\u{fffd}");
    }

    #[test]
    fn pairs_other_escapes_and_escaped_backslashes_stay() {
        assert_eq!(repaired(r#""\ud83d\ude00 \n \u00e9 \" \\ud83d""#), None);
        assert_eq!(repaired(r#""\\\ud83d""#).as_deref(), Some(r#""\\\ufffd""#));
        // Cut short: nothing to repair, and no panic.
        assert_eq!(repaired(r#""\ud8"#), None);
        assert_eq!(repaired("\\"), None);
    }
}

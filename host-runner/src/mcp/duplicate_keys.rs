//! Finds a key that appears twice in one JSON object of a message.
//!
//! JSON allows it (RFC 8259 says names SHOULD be unique), but parsers then
//! disagree on what the message means: `serde_json::Value` keeps the last
//! value, while rmcp's typed parse fails (on stdio it answered a bare
//! "Invalid request" without the id, over HTTP a plain-text 415). The front
//! doors ([`super::framing`]) refuse such a message instead, naming the key,
//! so that every layer reads one meaning.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// The first key seen twice in one object, in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateKey {
    /// The key, as decoded.
    pub key: String,
    /// The JSON Pointer (RFC 6901) of the object holding it; empty for the
    /// message itself.
    pub pointer: String,
}

impl fmt::Display for DuplicateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "duplicate key {:?} in the message", self.key)
        } else {
            write!(f, "duplicate key {:?} in {}", self.key, self.pointer)
        }
    }
}

/// The first duplicated key in `json`, at any depth; `None` when every
/// object's keys are distinct or `json` is not valid JSON (the caller reports
/// that with the parser's own message).
pub fn find(json: &[u8]) -> Option<DuplicateKey> {
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    Scan { pointer: String::new() }.deserialize(&mut deserializer).ok().flatten()
}

/// Walks one value; `pointer` is where it is.
struct Scan {
    pointer: String,
}

impl<'de> DeserializeSeed<'de> for Scan {
    type Value = Option<DuplicateKey>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// RFC 6901's escaping of one reference token.
fn token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl<'de> Visitor<'de> for Scan {
    type Value = Option<DuplicateKey>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut keys = HashSet::new();
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            if found.is_some() {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            // The key comes before anything inside its value.
            if keys.contains(&key) {
                map.next_value::<IgnoredAny>()?;
                found = Some(DuplicateKey { key, pointer: self.pointer.clone() });
                continue;
            }
            let pointer = format!("{}/{}", self.pointer, token(&key));
            found = map.next_value_seed(Scan { pointer })?;
            keys.insert(key);
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        let mut index = 0usize;
        loop {
            let next = if found.is_some() {
                seq.next_element::<IgnoredAny>()?.map(|_| None)
            } else {
                seq.next_element_seed(Scan { pointer: format!("{}/{index}", self.pointer) })?
            };
            match next {
                None => return Ok(found),
                Some(inner) => found = found.or(inner),
            }
            index += 1;
        }
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(json: &str) -> Option<String> {
        find(json.as_bytes()).map(|duplicate| duplicate.to_string())
    }

    #[test]
    fn the_first_duplicate_is_named_with_where_it_is() {
        assert_eq!(found(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        assert_eq!(
            found(r#"{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}"#).as_deref(),
            Some(r#"duplicate key "method" in the message"#)
        );
        assert_eq!(
            found(r#"{"id":1,"params":{"arguments":{"name":"a","name":"b"}},"id":2}"#).as_deref(),
            Some(r#"duplicate key "name" in /params/arguments"#)
        );
        assert_eq!(found(r#"{"a":[{"x":1},{"x":1,"x":2}]}"#).as_deref(), Some(r#"duplicate key "x" in /a/1"#));
        assert_eq!(found(r#"{"a/b~":{"k":1,"k":1}}"#).as_deref(), Some(r#"duplicate key "k" in /a~1b~0"#));
        // Keys compare decoded: an escape is the same key.
        assert_eq!(found(r#"{"id":1,"\u0069d":2}"#).as_deref(), Some(r#"duplicate key "id" in the message"#));
        // The same key in two objects is fine; so are values that repeat.
        assert_eq!(found(r#"{"a":{"k":1},"b":{"k":1},"c":[1,1,"k","k"]}"#), None);
        // Not JSON: the caller's parser says why.
        assert_eq!(found(r#"{"a":1,"a":"#), None);
    }
}

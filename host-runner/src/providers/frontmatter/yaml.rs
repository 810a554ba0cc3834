//! The frontmatter YAML read into a small tree of our own, event by event,
//! refusing aliases, duplicate keys, more than one document and deep nesting.

use std::collections::HashSet;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

use super::MAX_FRONTMATTER_DEPTH;
use super::scalar::resolve_scalar;

/// A YAML node and the file line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    pub(crate) value: Value,
    pub(crate) line: usize,
}

/// A YAML value, resolved by the 1.2 core schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Value {
    /// The value's kind, for reasons.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) | Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a sequence",
            Value::Map(_) => "a mapping",
        }
    }

    /// The value itself when it is a scalar, else its kind, for reasons.
    pub(super) fn describe(&self) -> String {
        match self {
            Value::Null => "null".to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => js_number_string(*f),
            Value::Str(s) => format!("{s:?}"),
            Value::Seq(_) | Value::Map(_) => self.kind().to_string(),
        }
    }

    /// The property name a JavaScript object built from this mapping key
    /// would use.
    pub(super) fn key_string(&self) -> String {
        match self {
            Value::Null => String::new(),
            Value::Bool(b) => b.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => js_number_string(*f),
            Value::Str(s) => s.clone(),
            // Collection keys are rare enough that compact JSON is a fine
            // stand-in for the reference's YAML flow rendering.
            Value::Seq(_) | Value::Map(_) => self.to_json().to_string(),
        }
    }

    /// The JSON form; non-finite floats become `null`, as `JSON.stringify`
    /// makes them.
    pub(super) fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Float(f) => {
                serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, serde_json::Value::Number)
            }
            Value::Str(s) => serde_json::Value::String(s.clone()),
            Value::Seq(items) => items.iter().map(|n| n.value.to_json()).collect(),
            Value::Map(entries) => serde_json::Value::Object(
                entries.iter().map(|(k, v)| (k.value.key_string(), v.value.to_json())).collect(),
            ),
        }
    }
}

/// JavaScript's `Number#toString` for the common cases (integral values print
/// without a fraction).
fn js_number_string(f: f64) -> String {
    if f.is_nan() {
        "NaN".to_string()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
    } else if f.fract() == 0.0 && f.abs() < 1e15 {
        // The range check makes the cast exact.
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// Parses the frontmatter YAML into a tree. `Ok(None)` for a stream with no
/// document (empty, or only comments).
///
/// The parser is pulled one event at a time rather than run with
/// `Parser::load`: `load` recurses once per nesting level and cannot be
/// stopped by the receiver, so a hostile `[[[[…` would exhaust the stack
/// before the depth cap could refuse it.
pub(super) fn parse_yaml(yaml: &str, first_line: usize) -> Result<Option<Node>, String> {
    let mut parser = Parser::new_from_str(yaml);
    let mut tree = TreeBuilder::new(first_line);
    loop {
        let (event, mark) = parser.next_token().map_err(|e| scan_error_reason(&e, first_line))?;
        let end = event == Event::StreamEnd;
        tree.on_event(event, mark);
        if let Some(reason) = tree.error.take() {
            return Err(reason);
        }
        if end {
            return Ok(tree.root);
        }
    }
}

fn scan_error_reason(error: &ScanError, first_line: usize) -> String {
    let mark = error.marker();
    format!(
        "invalid YAML frontmatter: line {} column {}: {}",
        mark.line() + first_line - 1,
        mark.col() + 1,
        error.info()
    )
}

/// An open collection while the tree is being built.
enum Frame {
    Seq {
        items: Vec<Node>,
        line: usize,
    },
    /// `seen` holds the scalar keys so far, so a duplicate is found in
    /// constant time (a file of thousands of keys stays linear).
    Map {
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
        seen: HashSet<ScalarKey>,
        line: usize,
    },
}

/// A scalar key as `Value`'s equality compares it: numbers of different kinds
/// differ, `-0.0` equals `0.0`, and NaN equals nothing (so it has no key).
#[derive(PartialEq, Eq, Hash)]
enum ScalarKey {
    Null,
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(String),
}

impl ScalarKey {
    fn of(value: &Value) -> Option<Self> {
        Some(match value {
            Value::Null => ScalarKey::Null,
            Value::Bool(b) => ScalarKey::Bool(*b),
            Value::Int(i) => ScalarKey::Int(*i),
            Value::Float(f) if f.is_nan() => return None,
            // `+ 0.0` turns -0.0 into 0.0 and leaves every other value alone.
            Value::Float(f) => ScalarKey::Float((f + 0.0).to_bits()),
            Value::Str(s) => ScalarKey::Str(s.clone()),
            Value::Seq(_) | Value::Map(_) => return None,
        })
    }
}

/// Builds the tree from parser events, refusing what the frontmatter must
/// not contain. After the first refusal it ignores further events; the driver
/// stops at once.
struct TreeBuilder {
    first_line: usize,
    stack: Vec<Frame>,
    root: Option<Node>,
    documents: usize,
    error: Option<String>,
}

impl TreeBuilder {
    fn new(first_line: usize) -> Self {
        Self { first_line, stack: Vec::new(), root: None, documents: 0, error: None }
    }

    /// The file line of a parser mark (the parser counts from the
    /// frontmatter's first line).
    fn line(&self, mark: Marker) -> usize {
        mark.line() + self.first_line - 1
    }

    fn refuse(&mut self, reason: String) {
        if self.error.is_none() {
            self.error = Some(reason);
        }
    }

    fn open(&mut self, frame: Frame, line: usize) {
        if self.stack.len() >= MAX_FRONTMATTER_DEPTH {
            self.refuse(format!("line {line}: frontmatter nests deeper than {MAX_FRONTMATTER_DEPTH} levels"));
            return;
        }
        self.stack.push(frame);
    }

    fn close(&mut self) {
        let node = match self.stack.pop() {
            Some(Frame::Seq { items, line }) => Node { value: Value::Seq(items), line },
            Some(Frame::Map { entries, line, .. }) => Node { value: Value::Map(entries), line },
            // The parser balances starts and ends; nothing to close.
            None => return,
        };
        self.add(node);
    }

    /// Adds a finished node to the open collection, or makes it the root.
    fn add(&mut self, node: Node) {
        let duplicate = match self.stack.last_mut() {
            None => {
                self.root = Some(node);
                None
            }
            Some(Frame::Seq { items, .. }) => {
                items.push(node);
                None
            }
            Some(Frame::Map { entries, key, seen, .. }) => match key.take() {
                None => {
                    *key = Some(node);
                    None
                }
                // The reference's `yaml` package refuses duplicate keys
                // (`uniqueKeys`), comparing resolved scalar values.
                Some(k) if ScalarKey::of(&k.value).is_some_and(|scalar| !seen.insert(scalar)) => Some(k),
                Some(k) => {
                    entries.push((k, node));
                    None
                }
            },
        };
        if let Some(k) = duplicate {
            self.refuse(format!("line {}: duplicate frontmatter key {}", k.line, k.value.describe()));
        }
    }
}

impl MarkedEventReceiver for TreeBuilder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        if self.error.is_some() {
            return;
        }
        let line = self.line(mark);
        match event {
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
            Event::DocumentStart => {
                self.documents += 1;
                if self.documents > 1 {
                    self.refuse(format!("line {line}: frontmatter holds more than one YAML document"));
                }
            }
            Event::Alias(_) => self.refuse(format!("line {line}: YAML aliases are not supported in frontmatter")),
            Event::Scalar(text, style, _anchor, tag) => {
                // An empty value (`name:`) is reported where the next token
                // starts, often the following line; its key's line is the
                // one a reader is looking for.
                let line = match self.stack.last() {
                    Some(Frame::Map { key: Some(k), .. }) if text.is_empty() && style == TScalarStyle::Plain => k.line,
                    _ => line,
                };
                let value = resolve_scalar(text, style, tag.as_ref());
                self.add(Node { value, line });
            }
            Event::SequenceStart(_anchor, _tag) => self.open(Frame::Seq { items: Vec::new(), line }, line),
            Event::MappingStart(_anchor, _tag) => {
                self.open(Frame::Map { entries: Vec::new(), key: None, seen: HashSet::new(), line }, line)
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(),
        }
    }
}

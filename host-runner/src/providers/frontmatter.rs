//! Parsing a `SKILL.md` text: the `---` frontmatter block, its YAML, and the
//! skill fields it must carry (SPEC §4.2).
//!
//! The YAML is read through `yaml-rust2`'s event parser into a small tree of
//! our own, because the skill files are untrusted input: aliases are refused
//! rather than expanded (no "billion laughs"), nesting and size are capped,
//! and plain scalars resolve by the YAML 1.2 core schema (`yes` stays a
//! string, as in DeepSeek Harness's `yaml` package).

use std::collections::HashSet;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

use crate::registry::{InvocationPolicy, is_skill_name};

/// Largest frontmatter block accepted, in bytes (the text between the two
/// `---` lines). Real frontmatter is a few hundred bytes; the cap bounds the
/// work an untrusted file can make the parser do.
pub const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// Deepest collection nesting accepted in the frontmatter (the top-level
/// mapping counts as 1).
pub const MAX_FRONTMATTER_DEPTH: usize = 64;

/// The frontmatter delimiter line.
const DELIMITER: &str = "---";

/// Keys DeepSeek Harness refuses, each with the spelling to use instead.
/// A skill that carries one is dropped (fail closed) rather than having its
/// policy silently ignored.
pub(crate) const LEGACY_INVOCATION_KEYS: [(&str, &str); 3] = [
    ("disableModelInvocation", "disable-model-invocation"),
    ("modelInvocable", "disable-model-invocation"),
    ("userInvocable", "user-invocable"),
];

/// The fields of a valid skill file.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedSkill {
    /// The `name` field; matches the skill-name grammar.
    pub name: String,
    /// The `description` field; non-empty, as written.
    pub description: String,
    /// The `whenToUse` field, kept only when it is a non-empty string.
    pub when_to_use: Option<String>,
    /// From `disable-model-invocation` and `user-invocable` (both default to
    /// invocable).
    pub invocation: InvocationPolicy,
    /// The `metadata` field, kept only when it is a mapping.
    pub metadata: Option<serde_json::Value>,
    /// The text after the closing `---` line, trimmed of ECMAScript
    /// whitespace at both ends.
    pub body: String,
}

/// Parses a `SKILL.md` text.
///
/// `Err` carries a human reason without the file path (the caller adds it),
/// for example "frontmatter requires \`name\`" or "line 3: \`name\` must be a
/// non-empty string, found a number". Line numbers count from the file's
/// first line.
pub fn parse_skill_file(text: &str) -> Result<ParsedSkill, String> {
    let (fields, body) = read_frontmatter(text)?;

    // Checked in the reference's order, so the reason names the same fault.
    let (name, name_line) = fields.required_string("name")?;
    let (description, _) = fields.required_string("description")?;
    if !is_skill_name(&name) {
        return Err(format!(
            "line {name_line}: `name` {name:?} does not match the skill-name grammar ^[a-z0-9]+(?:-[a-z0-9]+)*$"
        ));
    }
    let invocation = invocation_policy(&fields)?;
    let when_to_use = fields.get("whenToUse").and_then(|node| match &node.value {
        Value::Str(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    });
    let metadata =
        fields.get("metadata").filter(|node| matches!(node.value, Value::Map(_))).map(|node| node.value.to_json());
    Ok(ParsedSkill { name, description, when_to_use, invocation, metadata, body: trim_ecmascript(body).to_string() })
}

/// The top-level frontmatter entries of a skill file, each key (as a
/// string) with the file line it is on, for diagnostics such as the linter's.
/// Fails as [`parse_skill_file`] does when there is no frontmatter mapping;
/// the skill fields themselves are not checked.
pub(crate) fn frontmatter_entries(text: &str) -> Result<Vec<(String, usize, Node)>, String> {
    read_frontmatter(text).map(|(fields, _)| fields.entries)
}

/// Splits off the frontmatter and reads it as a YAML mapping: the fields and
/// the body that follows.
fn read_frontmatter(text: &str) -> Result<(Fields, &str), String> {
    let block = split_frontmatter(text)?;
    if block.yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(format!(
            "frontmatter is {} bytes, larger than the {} KiB limit",
            block.yaml.len(),
            MAX_FRONTMATTER_BYTES / 1024
        ));
    }
    let root = parse_yaml(block.yaml, block.first_line)?;
    let Some(root) = root else {
        return Err("frontmatter is empty; it must be a YAML mapping".to_string());
    };
    let Value::Map(entries) = root.value else {
        return Err(format!("line {}: frontmatter must be a YAML mapping, found {}", root.line, root.value.kind()));
    };
    Ok((Fields::new(entries), block.body))
}

/// A file split at its frontmatter delimiters.
struct FrontmatterBlock<'a> {
    /// The YAML between the delimiter lines.
    yaml: &'a str,
    /// The file line on which `yaml` starts (1-based).
    first_line: usize,
    /// Everything after the closing delimiter line.
    body: &'a str,
}

/// Finds the frontmatter: the first line must be exactly `---` and the next
/// line that is exactly `---` closes it. Lines end at `\n`; one trailing `\r`
/// is ignored so CRLF files work. `---` with anything else on the line (a
/// trailing space, `----`, `--- x`) is not a delimiter.
fn split_frontmatter(text: &str) -> Result<FrontmatterBlock<'_>, String> {
    let Some(first_end) = text.find('\n') else {
        return Err(missing_frontmatter(text));
    };
    if strip_cr(&text[..first_end]) != DELIMITER {
        return Err(missing_frontmatter(text));
    }
    let start = first_end + 1;
    let mut line_start = start;
    loop {
        let next_newline = text[line_start..].find('\n').map(|i| line_start + i);
        let line_end = next_newline.unwrap_or(text.len());
        if strip_cr(&text[line_start..line_end]) == DELIMITER {
            return Ok(FrontmatterBlock {
                yaml: &text[start..line_start],
                // The opening `---` is line 1.
                first_line: 2,
                body: next_newline.map_or("", |i| &text[i + 1..]),
            });
        }
        match next_newline {
            Some(i) => line_start = i + 1,
            None => return Err("frontmatter is not closed by a `---` line".to_string()),
        }
    }
}

/// The reason for a file without an opening delimiter, pointing at the one
/// cause that is invisible in an editor.
fn missing_frontmatter(text: &str) -> String {
    if text.starts_with('\u{feff}') {
        // DeepSeek Harness reads the file verbatim, so a byte-order mark
        // keeps the first line from being exactly `---`.
        "missing frontmatter (the file starts with a byte-order mark before `---`)".to_string()
    } else {
        "missing frontmatter (the first line must be exactly `---`)".to_string()
    }
}

fn strip_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

/// ECMAScript `String.prototype.trim`: the body is trimmed exactly as the
/// reference does. Rust's `str::trim` differs (it trims U+0085 and keeps
/// U+FEFF).
fn trim_ecmascript(text: &str) -> &str {
    text.trim_matches(is_ecmascript_whitespace)
}

/// ECMAScript WhiteSpace and LineTerminator (the `\s` class, SPEC §3.5).
pub(crate) fn is_ecmascript_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0b}' | '\u{0c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

// ---------------------------------------------------------------------------
// Fields

/// The top-level frontmatter mapping, looked up by key string.
struct Fields {
    /// Key string, the key's line, the value.
    entries: Vec<(String, usize, Node)>,
}

impl Fields {
    fn new(entries: Vec<(Node, Node)>) -> Self {
        Self { entries: entries.into_iter().map(|(key, value)| (key.value.key_string(), key.line, value)).collect() }
    }

    /// The value under `key`. Keys that collide only after conversion to
    /// strings (`1` and `"1"`) resolve to the last, as a JavaScript object
    /// built from the mapping would.
    fn get(&self, key: &str) -> Option<&Node> {
        self.entries.iter().rev().find(|(k, _, _)| k == key).map(|(_, _, v)| v)
    }

    /// A required non-empty string, with the line it is on.
    fn required_string(&self, key: &str) -> Result<(String, usize), String> {
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
fn invocation_policy(fields: &Fields) -> Result<InvocationPolicy, String> {
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

// ---------------------------------------------------------------------------
// YAML tree

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
    fn describe(&self) -> String {
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
    fn key_string(&self) -> String {
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
    fn to_json(&self) -> serde_json::Value {
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
fn parse_yaml(yaml: &str, first_line: usize) -> Result<Option<Node>, String> {
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

// ---------------------------------------------------------------------------
// Scalars

/// Resolves a scalar. Quoted and block scalars are strings; plain scalars go
/// through the core schema. The only tag honoured is `!!str`, which keeps a
/// plain scalar a string; other tags are ignored.
fn resolve_scalar(text: String, style: TScalarStyle, tag: Option<&Tag>) -> Value {
    let is_str_tag = tag.is_some_and(|t| t.handle == "tag:yaml.org,2002:" && t.suffix == "str");
    if style != TScalarStyle::Plain || is_str_tag {
        return Value::Str(text);
    }
    resolve_plain(&text).unwrap_or(Value::Str(text))
}

/// The YAML 1.2 core schema for a plain scalar; `None` means a string.
fn resolve_plain(text: &str) -> Option<Value> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        ".nan" | ".NaN" | ".NAN" => return Some(Value::Float(f64::NAN)),
        _ => {}
    }
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return Some(Value::Float(if negative { f64::NEG_INFINITY } else { f64::INFINITY }));
    }
    // Hexadecimal and octal take no sign in the core schema.
    if let Some(digits) = text.strip_prefix("0x") {
        return integer(digits, 16, false);
    }
    if let Some(digits) = text.strip_prefix("0o") {
        return integer(digits, 8, false);
    }
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return integer(unsigned, 10, negative);
    }
    if is_core_float(unsigned) {
        return text.parse::<f64>().ok().map(Value::Float);
    }
    None
}

/// An integer in `radix`; values beyond `i64` become floats, as they do in
/// JavaScript.
fn integer(digits: &str, radix: u32, negative: bool) -> Option<Value> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = digits
        .chars()
        .filter_map(|c| c.to_digit(radix))
        .try_fold(0i128, |acc, d| acc.checked_mul(i128::from(radix))?.checked_add(i128::from(d)));
    let exact = magnitude.map(|m| if negative { -m } else { m }).and_then(|m| i64::try_from(m).ok());
    Some(match exact {
        Some(i) => Value::Int(i),
        None => {
            // Rounded once to the nearest double, as JavaScript does.
            let f = match magnitude {
                Some(m) => m as f64,
                None if radix == 10 => digits.parse::<f64>().unwrap_or(f64::INFINITY),
                None => digits
                    .chars()
                    .filter_map(|c| c.to_digit(radix))
                    .fold(0f64, |acc, d| acc * f64::from(radix) + f64::from(d)),
            };
            Value::Float(if negative { -f } else { f })
        }
    })
}

/// The unsigned part of the core schema's float:
/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
fn is_core_float(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut i = digits(0);
    let integral = i;
    if bytes.get(i) == Some(&b'.') {
        let fraction = digits(i + 1);
        if integral == 0 && fraction == 0 {
            return false;
        }
        i += 1 + fraction;
    } else if integral == 0 {
        return false;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exponent = digits(i);
        if exponent == 0 {
            return false;
        }
        i += exponent;
    }
    i == bytes.len()
}

#[cfg(test)]
mod tests;

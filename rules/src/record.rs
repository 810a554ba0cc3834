//! The records the plugin writes: the source of every message a pre-step may
//! add to a session (docs/spec.md §3.1, §3.10, §3.12, §3.13), as one type.
//!
//! The guest writes each source with [`Record::to_json`]; the hosts read what
//! a plugin added with [`Record::parse`] (or [`Record::from_value`] on the
//! value they keep), so what may be written and what is accepted are one
//! grammar. `rules/records.json` is that grammar as data: accepted and
//! refused sources that the Rust and the Node host's tests both read.
//!
//! These are the *exact* shapes: a host refuses anything else, extra fields
//! included. Reading a session written by others is more lenient (a catalog
//! is recognised by its `kind` and `plugin`, docs/spec.md §3.7); that is the
//! guest's recognition, not this grammar.

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use serde_json::{Map, Value};

use crate::{CATALOG_SOURCE, CATALOG_UPDATE_FORM, INVOCATION_NOTE_SOURCE, MAX_RELOAD_NAMES, PLUGIN_NAME};
use crate::{SKILL_CATALOG_KIND, is_body_digest, is_skill_name};

/// The source `kind` of a user-invoked skill and of the note naming those
/// not loaded (docs/spec.md §3.10).
pub const INVOCATION_KIND: &str = "skill-invocation";

/// The source `kind` of a notice about a skill the model loaded
/// (docs/spec.md §3.12).
pub const NOTICE_KIND: &str = "skill-notice";

/// The source of a message the plugin may add to a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A complete catalog in the seed's form (`catalogSource: "plugin"`,
    /// §3.1): `{"kind":"plugin","plugin":"dsh-tool-skill"}`.
    Catalog,
    /// A complete catalog in DeepSeek Harness 0.1.0-rc.8's form
    /// (`catalogSource: "skill-catalog"`, §3.1), carrying its entries.
    SkillCatalog(SkillCatalog),
    /// An update of the catalog before it (`catalogUpdates: "delta"`, §3.13):
    /// `{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":[…]}`.
    CatalogUpdate {
        /// The names that left the catalog, distinct.
        removed: Vec<String>,
    },
    /// A user-invoked skill's instructions (§3.10):
    /// `{"kind":"skill-invocation","name":…,"form":"instructions"}`.
    Invocation {
        /// The skill's name; it follows the grammar (a host also requires a
        /// user's `/name` for it).
        name: String,
    },
    /// The note naming the user-invoked skills not loaded (§3.10):
    /// [`INVOCATION_NOTE_SOURCE`].
    InvocationNote,
    /// A notice about skills the model loaded (§3.12).
    Notice(SkillNotice),
}

/// A catalog in the `skill-catalog` form: `{"kind":"skill-catalog",
/// "form":"catalog","update"?:true,"entries":[…],"coverage"?:…}`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillCatalog {
    /// A replacement (`"update": true`) rather than the session's first catalog.
    pub update: bool,
    /// One entry per catalog line, in catalog order.
    pub entries: Vec<CatalogEntry>,
    /// Under a budget, the coverage line (§3.13), unescaped.
    pub coverage: Option<String>,
}

/// One entry of a [`SkillCatalog`]: written `{"name":…,"description":…}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogEntry {
    /// The skill's name; it follows the grammar.
    pub name: String,
    /// Its description, normalised and capped but not escaped.
    pub description: String,
}

/// A notice about skills the model loaded (docs/spec.md §3.12), kind
/// [`NOTICE_KIND`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillNotice {
    /// The skill's instructions changed after the model loaded them.
    Changed {
        /// The skill.
        name: String,
        /// Its winner's provider now, non-empty.
        provider: String,
        /// Its winner's body digest now, when known (see [`is_body_digest`]).
        body_digest: Option<String>,
    },
    /// The skill is gone, or no longer the model's to invoke.
    Gone {
        /// The skill.
        name: String,
    },
    /// Skills whose loaded instructions compaction hid: 1 to
    /// [`MAX_RELOAD_NAMES`] distinct names.
    Reload {
        /// The skills, in name order.
        names: Vec<String>,
    },
}

/// Why a source is not a [`Record`]. Hosts word each as docs/spec.md §8.5 says.
#[derive(Debug)]
pub enum Refusal {
    /// The text is not JSON.
    NotJson(serde_json::Error),
    /// Its `kind` is [`NOTICE_KIND`], but it is not a changed, gone or reload
    /// notice in its exact shape.
    NotANotice,
    /// Anything else: no record the plugin writes.
    Foreign,
}

impl Refusal {
    /// Its name in `rules/records.json`: `not-json`, `not-a-notice` or `foreign`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::NotJson(_) => "not-json",
            Self::NotANotice => "not-a-notice",
            Self::Foreign => "foreign",
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotJson(error) => write!(f, "not JSON: {error}"),
            Self::NotANotice => f.write_str("a skill notice that is not a changed, gone or reload notice"),
            Self::Foreign => f.write_str("no record the plugin writes"),
        }
    }
}

impl Record {
    /// Its name in `rules/records.json`: `catalog`, `skill-catalog`,
    /// `catalog-update`, `invocation`, `invocation-note`, `changed-notice`,
    /// `gone-notice` or `reload-notice`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Catalog => "catalog",
            Self::SkillCatalog(_) => "skill-catalog",
            Self::CatalogUpdate { .. } => "catalog-update",
            Self::Invocation { .. } => "invocation",
            Self::InvocationNote => "invocation-note",
            Self::Notice(SkillNotice::Changed { .. }) => "changed-notice",
            Self::Notice(SkillNotice::Gone { .. }) => "gone-notice",
            Self::Notice(SkillNotice::Reload { .. }) => "reload-notice",
        }
    }

    /// Whether it is the step's one catalog: a complete catalog in either
    /// form or an update (a pre-step adds at most one, docs/spec.md §8.5).
    pub fn is_catalog(&self) -> bool {
        matches!(self, Self::Catalog | Self::SkillCatalog(_) | Self::CatalogUpdate { .. })
    }

    /// The source as the plugin writes it: compact JSON, keys in the order
    /// the plugin has always written them (the reference's for catalogs and
    /// invocations, sorted for notices, as `serde_json` writes a map).
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    /// The length in bytes of [`to_json`](Self::to_json)'s text, found
    /// without writing it (a host checks it against its caps first).
    pub fn json_len(&self) -> usize {
        let mut length = Length(0);
        self.write(&mut length);
        length.0
    }

    fn write(&self, out: &mut impl Sink) {
        match self {
            Self::Catalog => out.text(CATALOG_SOURCE),
            Self::SkillCatalog(catalog) => {
                out.text(r#"{"kind":"#);
                push_string(out, SKILL_CATALOG_KIND);
                out.text(r#","form":"catalog","#);
                if catalog.update {
                    out.text(r#""update":true,"#);
                }
                out.text(r#""entries":["#);
                for (index, entry) in catalog.entries.iter().enumerate() {
                    if index > 0 {
                        out.text(",");
                    }
                    out.text(r#"{"name":"#);
                    push_string(out, &entry.name);
                    out.text(r#","description":"#);
                    push_string(out, &entry.description);
                    out.text("}");
                }
                out.text("]");
                if let Some(line) = &catalog.coverage {
                    out.text(r#","coverage":"#);
                    push_string(out, line);
                }
                out.text("}");
            }
            Self::CatalogUpdate { removed } => {
                out.text(CATALOG_SOURCE.strip_suffix('}').expect("the catalog source is a JSON object"));
                out.text(r#","form":"#);
                push_string(out, CATALOG_UPDATE_FORM);
                out.text(r#","removed":"#);
                push_strings(out, removed);
                out.text("}");
            }
            Self::Invocation { name } => {
                out.text(r#"{"kind":"#);
                push_string(out, INVOCATION_KIND);
                out.text(r#","name":"#);
                push_string(out, name);
                out.text(r#","form":"instructions"}"#);
            }
            Self::InvocationNote => out.text(INVOCATION_NOTE_SOURCE),
            Self::Notice(notice) => {
                out.text("{");
                if let SkillNotice::Changed { body_digest: Some(digest), .. } = notice {
                    out.text(r#""bodyDigest":"#);
                    push_string(out, digest);
                    out.text(",");
                }
                let form = match notice {
                    SkillNotice::Changed { .. } => "changed",
                    SkillNotice::Gone { .. } => "gone",
                    SkillNotice::Reload { .. } => "reload",
                };
                out.text(r#""form":"#);
                push_string(out, form);
                out.text(r#","kind":"#);
                push_string(out, NOTICE_KIND);
                match notice {
                    SkillNotice::Changed { name, provider, .. } => {
                        out.text(r#","name":"#);
                        push_string(out, name);
                        out.text(r#","provider":"#);
                        push_string(out, provider);
                    }
                    SkillNotice::Gone { name } => {
                        out.text(r#","name":"#);
                        push_string(out, name);
                    }
                    SkillNotice::Reload { names } => {
                        out.text(r#","names":"#);
                        push_strings(out, names);
                    }
                }
                out.text("}");
            }
        }
    }

    /// Reads a source given as JSON text (docs/spec.md §8.5): the record it
    /// is, in its exact shape (keys in any order; a key given twice counts
    /// with its last value, as in a `serde_json::Value`), or why it is none.
    pub fn parse(source: &str) -> Result<Self, Refusal> {
        let value: Value = serde_json::from_str(source).map_err(Refusal::NotJson)?;
        Self::from_value(&value)
    }

    /// [`Record::parse`] on a source already parsed.
    pub fn from_value(source: &Value) -> Result<Self, Refusal> {
        let Value::Object(fields) = source else { return Err(Refusal::Foreign) };
        let text = |key: &str| fields.get(key).and_then(Value::as_str);
        let record = match text("kind") {
            Some("plugin") if text("plugin") == Some(PLUGIN_NAME) => match fields.len() {
                2 => Some(Self::Catalog),
                4 if text("form") == Some(CATALOG_UPDATE_FORM) => {
                    names(fields.get("removed"), usize::MAX).map(|removed| Self::CatalogUpdate { removed })
                }
                _ => None,
            },
            Some(SKILL_CATALOG_KIND) => skill_catalog(fields).map(Self::SkillCatalog),
            Some(INVOCATION_KIND) => match (text("form"), text("name"), fields.len()) {
                (Some("not-loaded"), _, 2) => Some(Self::InvocationNote),
                (Some("instructions"), Some(name), 3) if is_skill_name(name) => {
                    Some(Self::Invocation { name: name.into() })
                }
                _ => None,
            },
            Some(NOTICE_KIND) => return notice(fields).map(Self::Notice).ok_or(Refusal::NotANotice),
            _ => None,
        };
        record.ok_or(Refusal::Foreign)
    }
}

/// A `skill-catalog` source: exactly `kind`, `form` `catalog`, `entries`,
/// an optional `"update": true` and an optional string `coverage`, each
/// entry exactly a skill `name` and a string `description`.
fn skill_catalog(fields: &Map<String, Value>) -> Option<SkillCatalog> {
    let update = match fields.get("update") {
        None => false,
        Some(Value::Bool(true)) => true,
        Some(_) => return None,
    };
    let coverage = match fields.get("coverage") {
        None => None,
        Some(Value::String(line)) => Some(line.clone()),
        Some(_) => return None,
    };
    let expected = 3 + usize::from(update) + usize::from(coverage.is_some());
    if fields.len() != expected || fields.get("form").and_then(Value::as_str) != Some("catalog") {
        return None;
    }
    let entries = fields
        .get("entries")?
        .as_array()?
        .iter()
        .map(|entry| {
            let entry = entry.as_object().filter(|entry| entry.len() == 2)?;
            let name = entry.get("name")?.as_str().filter(|name| is_skill_name(name))?;
            let description = entry.get("description")?.as_str()?;
            Some(CatalogEntry { name: name.into(), description: description.into() })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(SkillCatalog { update, entries, coverage })
}

/// A skill notice: exactly the fields of its form.
fn notice(fields: &Map<String, Value>) -> Option<SkillNotice> {
    let text = |key: &str| fields.get(key).and_then(Value::as_str);
    let name = || text("name").filter(|name| is_skill_name(name)).map(String::from);
    match text("form")? {
        "changed" => {
            let body_digest = match fields.get("bodyDigest") {
                None => None,
                Some(Value::String(digest)) if is_body_digest(digest) => Some(digest.clone()),
                Some(_) => return None,
            };
            let provider = text("provider").filter(|provider| !provider.is_empty())?;
            if fields.len() != 4 + usize::from(body_digest.is_some()) {
                return None;
            }
            Some(SkillNotice::Changed { name: name()?, provider: provider.into(), body_digest })
        }
        "gone" => (fields.len() == 3).then(name).flatten().map(|name| SkillNotice::Gone { name }),
        "reload" => {
            let names = names(fields.get("names"), MAX_RELOAD_NAMES).filter(|names| !names.is_empty())?;
            (fields.len() == 3).then_some(SkillNotice::Reload { names })
        }
        _ => None,
    }
}

/// An array of at most `max` distinct skill names.
fn names(value: Option<&Value>, max: usize) -> Option<Vec<String>> {
    let values = value?.as_array().filter(|values| values.len() <= max)?;
    let mut seen = BTreeSet::new();
    values
        .iter()
        .map(|name| name.as_str().filter(|name| is_skill_name(name) && seen.insert(*name)).map(String::from))
        .collect()
}

/// `text` as a JSON string literal, as `serde_json` writes it.
fn push_string(out: &mut impl Sink, text: &str) {
    out.text("\"");
    let mut clean = 0;
    for (at, byte) in text.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.text(&text[clean..at]);
        clean = at + 1;
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let code = [b'\\', b'u', b'0', b'0', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]];
            out.text(core::str::from_utf8(&code).expect("ASCII"));
        } else {
            out.text(escape);
        }
    }
    out.text(&text[clean..]);
    out.text("\"");
}

/// `names` as a JSON array of strings.
fn push_strings(out: &mut impl Sink, names: &[String]) {
    out.text("[");
    for (index, name) in names.iter().enumerate() {
        if index > 0 {
            out.text(",");
        }
        push_string(out, name);
    }
    out.text("]");
}

/// Where [`Record::write`] writes: a text, or a count of its bytes.
trait Sink {
    fn text(&mut self, text: &str);
}

impl Sink for String {
    fn text(&mut self, text: &str) {
        self.push_str(text);
    }
}

/// Counts the bytes written.
struct Length(usize);

impl Sink for Length {
    fn text(&mut self, text: &str) {
        self.0 += text.len();
    }
}

#[cfg(test)]
mod tests;

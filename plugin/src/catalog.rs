//! The catalog: entry lines, digest, the two message templates (docs/spec.md §3.5,
//! §3.6) and recognition of published catalogs of both generations (§3.7).

use std::cell::OnceCell;
use std::rc::Rc;

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::budget::{self, Candidate, Shown};
use crate::catalog_update::ShownCatalog;
use crate::config::Config;
use crate::description::{ELLIPSIS, catalog_description, catalog_description_utf16, with_when_to_use};
use crate::escape;
use crate::types::{ContentBlock, Message, SkillSummary};

/// The source of every catalog message this plugin writes.
pub use skill_rules::CATALOG_SOURCE;
/// The plugin's name inside [`CATALOG_SOURCE`].
pub use skill_rules::PLUGIN_NAME;
/// The source kind later DeepSeek Harness versions use for catalogs.
pub use skill_rules::SKILL_CATALOG_KIND;

use skill_rules::{CATALOG_CLOSE_MARKER as CLOSE_MARKER, CATALOG_OPEN_MARKER as OPEN_MARKER};
use skill_rules::{CatalogEntry, Record, SkillCatalog};

const INITIAL_HEAD: &str = "<system-reminder>\nA skill is a reusable set of task-specific instructions. The following skills are available in this session:\n\n<available_skills>\n";
const INITIAL_TAIL: &str = "</available_skills>\n\nIf the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. Load all applicable skills, then follow their full instructions. This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded.";
const REPLACEMENT_HEAD: &str = "<system-reminder>\nThe available skill catalog changed. This complete catalog replaces every earlier available-skills list in this session:\n\n<available_skills>\n";
const REPLACEMENT_TAIL_LISTED: &str = "</available_skills>\n\nUse only names in this replacement catalog. If the user names a listed skill, or the task clearly matches its description, call the `skill` tool with the exact name before acting.";
const REPLACEMENT_TAIL_EMPTY: &str = "</available_skills>\n\nNo skills are currently available through the `skill` tool. Do not use names from earlier skill catalogs.";
const CLOSE: &str = "\n</system-reminder>";
/// With user invocation on: the line before `</system-reminder>` of an initial
/// or non-empty replacement catalog.
const USER_INVOCATION_LISTED: &str = "\nA user may also invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool again for that skill.";
/// With user invocation on: the same line in an empty replacement.
const USER_INVOCATION_EMPTY: &str = "\nA user may still invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool for it.";

/// A catalog digest: lowercase hex SHA-256 of the entry lines joined by `\n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CatalogDigest([u8; 32]);

impl CatalogDigest {
    /// The digest of a text.
    pub fn of(text: &str) -> Self {
        Self(Sha256::digest(text.as_bytes()).into())
    }

    /// A digest computed elsewhere.
    pub(crate) fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// Lowercase hex.
    pub fn to_hex(self) -> String {
        self.0.iter().map(|byte| format!("{byte:02x}")).collect()
    }
}

/// How a catalog message records what it published (docs/spec.md §3.1,
/// `catalogSource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CatalogForm {
    /// The seed's: source [`CATALOG_SOURCE`], descriptions capped in
    /// characters.
    #[default]
    Plugin,
    /// DeepSeek Harness 0.1.0-rc.8's: source `{"kind":"skill-catalog",
    /// "form":"catalog","update"?:true,"entries":[…]}` carrying the published
    /// entries, descriptions capped in UTF-16 units.
    SkillCatalog,
}

/// The catalog for one snapshot: its lines and their digest.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// One `` - `name`: description `` line per listed skill, each followed
    /// by `\n`, then the coverage line and `\n` under a budget (the exact
    /// text between the markers).
    pub body: String,
    /// Number of entries.
    pub len: usize,
    /// Digest of the lines joined with `\n`.
    pub digest: CatalogDigest,
    /// With [`CatalogForm::SkillCatalog`], the entries its source records
    /// (descriptions unescaped); `None` for the seed's form.
    entries: Option<Vec<CatalogEntry>>,
    /// Under a budget, the coverage line (docs/spec.md §3.13).
    coverage: Option<String>,
    /// Under a budget, the names it left out, in name order.
    pub left_out: Vec<String>,
    /// Its lines read back by name, once asked for (delta updates).
    shown: OnceCell<(Rc<ShownCatalog>, CatalogDigest)>,
}

impl PartialEq for Catalog {
    fn eq(&self, other: &Self) -> bool {
        (&self.body, self.len, self.digest, &self.entries, &self.coverage, &self.left_out)
            == (&other.body, other.len, other.digest, &other.entries, &other.coverage, &other.left_out)
    }
}

impl Eq for Catalog {}

impl Catalog {
    /// Builds the catalog from the registry's winners (already sorted by
    /// name), keeping only model-invocable skills, in the seed's form.
    pub fn from_skills<'a>(skills: impl IntoIterator<Item = &'a SkillSummary>, max_chars: usize) -> Self {
        Self::build(skills, max_chars, CatalogForm::Plugin)
    }

    /// Builds the catalog in `form`: the same lines and digest for the same
    /// entries, whichever form records them.
    pub fn build<'a>(skills: impl IntoIterator<Item = &'a SkillSummary>, max_length: usize, form: CatalogForm) -> Self {
        Self::whole(skills.into_iter().filter(|skill| skill.invocation.model_invocable), max_length, form)
    }

    /// Every skill of `listed` with its whole (capped) description, no coverage line.
    fn whole<'a>(listed: impl Iterator<Item = &'a SkillSummary>, max_length: usize, form: CatalogForm) -> Self {
        let mut writer = CatalogWriter::new(form);
        for skill in listed {
            writer.push(&skill.name, &capped(&skill.description, max_length, form));
        }
        writer.finish(None)
    }

    /// Skills the catalog could list: [`Catalog::len`] plus those a budget
    /// left out. Zero makes a replacement say that no skill is available.
    pub fn total(&self) -> usize {
        self.len + self.left_out.len()
    }

    /// Builds the catalog `config` asks for: [`Catalog::build`] without the
    /// options of docs/spec.md §3.13; with them, excluded skills left out,
    /// name-only ones listed as `` - `name`: ... ``, descriptions followed by
    /// the skill's `whenToUse` (`catalogWhenToUse`) and, under a budget, the
    /// entries chosen and cut to fit, followed by the coverage line.
    pub fn for_config<'a>(skills: impl IntoIterator<Item = &'a SkillSummary>, config: &Config) -> Self {
        let max_length = config.catalog_description_max_length;
        let form = config.catalog_form;
        let eligible =
            skills.into_iter().filter(|skill| skill.invocation.model_invocable && !config.excludes(&skill.name));
        // A name-only skill's description is `...` whatever it says: the
        // budget's shortest line, which no step below lengthens.
        let described = eligible.map(|skill| {
            let description = if config.names_only(&skill.name) {
                ELLIPSIS.to_owned()
            } else if config.catalog_when_to_use {
                capped(&with_when_to_use(&skill.description, skill.when_to_use.as_deref()), max_length, form)
            } else {
                capped(&skill.description, max_length, form)
            };
            (skill.name.as_str(), description)
        });
        let Some(budget) = config.catalog_budget else {
            let mut writer = CatalogWriter::new(form);
            for (name, description) in described {
                writer.push(name, &description);
            }
            return writer.finish(None);
        };
        let mut writer = CatalogWriter::new(form);
        let described: Vec<(&str, String)> = described.collect();
        let candidates: Vec<Candidate<'_>> = described
            .iter()
            .map(|(name, description)| Candidate { name, description, pinned: config.pins(name) })
            .collect();
        let (shown, coverage) = budget::allocate(&candidates, budget, config.catalog_summaries);
        for ((name, description), shown) in described.iter().zip(shown) {
            match shown {
                Shown::Whole => writer.push(name, description),
                Shown::FirstSentence => writer.push(name, skill_rules::first_sentence(description)),
                Shown::Cut(width) => writer.push(name, &budget::cut(description, width)),
                Shown::LeftOut => writer.skip(name),
            }
        }
        writer.finish(Some(coverage.line(config.skill_search)))
    }

    /// What the catalog shows, by name, and its [`ShownCatalog::digest`] (read once).
    pub fn shown(&self) -> (Rc<ShownCatalog>, CatalogDigest) {
        let (shown, digest) = self.shown.get_or_init(|| {
            let shown = ShownCatalog::of(self);
            let digest = shown.digest();
            (Rc::new(shown), digest)
        });
        (Rc::clone(shown), *digest)
    }

    /// Renders the initial catalog message (first publication in a session).
    /// `user_invocation` adds the line about `/name` (off by default).
    pub fn initial_message(&self, user_invocation: bool) -> Message {
        let note = if user_invocation { USER_INVOCATION_LISTED } else { "" };
        self.message([INITIAL_HEAD, &self.body, INITIAL_TAIL, note, CLOSE].concat(), false)
    }

    /// Renders a replacement catalog message (every later publication).
    pub fn replacement_message(&self, user_invocation: bool) -> Message {
        let (tail, note) = if self.total() == 0 {
            (REPLACEMENT_TAIL_EMPTY, USER_INVOCATION_EMPTY)
        } else {
            (REPLACEMENT_TAIL_LISTED, USER_INVOCATION_LISTED)
        };
        let note = if user_invocation { note } else { "" };
        self.message([REPLACEMENT_HEAD, &self.body, tail, note, CLOSE].concat(), true)
    }

    fn message(&self, text: String, update: bool) -> Message {
        let record = match &self.entries {
            None => Record::Catalog,
            Some(entries) => {
                Record::SkillCatalog(SkillCatalog { update, entries: entries.clone(), coverage: self.coverage.clone() })
            }
        };
        Message { source: record.to_json(), content: vec![ContentBlock::Text(text)] }
    }
}

/// A description normalised and capped as `form` counts.
pub(crate) fn capped(raw: &str, max_length: usize, form: CatalogForm) -> String {
    match form {
        CatalogForm::Plugin => catalog_description(raw, max_length),
        CatalogForm::SkillCatalog => catalog_description_utf16(raw, max_length),
    }
}

/// Writes a catalog's lines and, in the skill-catalog form, its entries.
struct CatalogWriter {
    lines: CatalogLines,
    entries: Option<Vec<CatalogEntry>>,
    left_out: Vec<String>,
}

impl CatalogWriter {
    fn new(form: CatalogForm) -> Self {
        Self {
            lines: CatalogLines::default(),
            entries: (form == CatalogForm::SkillCatalog).then(Vec::new),
            left_out: Vec::new(),
        }
    }

    /// Adds an entry; `description` is normalised and capped, not escaped.
    fn push(&mut self, name: &str, description: &str) {
        self.lines.push(name, &escape::text(description));
        if let Some(entries) = &mut self.entries {
            entries.push(CatalogEntry { name: name.to_owned(), description: description.to_owned() });
        }
    }

    /// Notes a skill the budget left out.
    fn skip(&mut self, name: &str) {
        self.left_out.push(name.to_owned());
    }

    fn finish(self, coverage: Option<String>) -> Catalog {
        let Self { mut lines, entries, left_out } = self;
        let len = lines.len;
        if let Some(line) = &coverage {
            lines.push_line(line);
        }
        let mut catalog = lines.finish();
        catalog.len = len;
        catalog.left_out = left_out;
        catalog.entries = entries;
        catalog.coverage = coverage;
        catalog
    }
}

/// Accumulates entry lines; the digest covers the lines without the final `\n`.
#[derive(Default)]
struct CatalogLines {
    body: String,
    len: usize,
}

impl CatalogLines {
    /// `escaped_description` is already normalised, capped and escaped.
    fn push(&mut self, name: &str, escaped_description: &str) {
        self.body.push_str("- `");
        self.body.push_str(name);
        self.body.push_str("`: ");
        self.body.push_str(escaped_description);
        self.body.push('\n');
        self.len += 1;
    }

    /// A line that is not an entry (the coverage line), already escaped.
    fn push_line(&mut self, line: &str) {
        self.body.push_str(line);
        self.body.push('\n');
    }

    fn finish(self) -> Catalog {
        let joined = self.body.strip_suffix('\n').unwrap_or(&self.body);
        Catalog {
            digest: CatalogDigest::of(joined),
            len: self.len,
            body: self.body,
            entries: None,
            coverage: None,
            left_out: Vec::new(),
            shown: OnceCell::new(),
        }
    }
}

/// The source fields that matter for recognition.
#[derive(Debug, PartialEq)]
pub enum SourceKind {
    /// `{"kind":"plugin","plugin":"dsh-tool-skill"}`: the first generation.
    OwnPlugin,
    /// `{"kind":"skill-catalog",…}`: the later generation, carrying entries.
    SkillCatalog(Value),
    /// `{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update",…}`:
    /// an update of the catalog before it (docs/spec.md §3.13).
    OwnUpdate,
    /// Anything else.
    Other,
}

/// Classifies a source object given as JSON text. Unparseable → `Other`.
pub fn source_kind(source_json: &str) -> SourceKind {
    // Cheap pre-check: most proposed messages are plain user messages.
    if !source_json.contains(PLUGIN_NAME) && !source_json.contains(SKILL_CATALOG_KIND) {
        return SourceKind::Other;
    }
    let Ok(Value::Object(source)) = serde_json::from_str::<Value>(source_json) else {
        return SourceKind::Other;
    };
    match source.get("kind").and_then(Value::as_str) {
        Some("plugin") if source.get("plugin").and_then(Value::as_str) == Some(PLUGIN_NAME) => {
            match source.get("form").and_then(Value::as_str) {
                Some(crate::catalog_update::CATALOG_UPDATE_FORM) => SourceKind::OwnUpdate,
                _ => SourceKind::OwnPlugin,
            }
        }
        Some(SKILL_CATALOG_KIND) => SourceKind::SkillCatalog(Value::Object(source)),
        _ => SourceKind::Other,
    }
}

/// What a message of the session is to the history scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Published {
    /// A complete catalog with this digest.
    Catalog(CatalogDigest),
    /// An update of the catalog before it (docs/spec.md §3.13).
    Update,
}

/// What `message` is to the history scan; `None` when it is neither a
/// published catalog nor a well-formed update.
pub fn published(message: &Message) -> Option<Published> {
    match source_kind(&message.source) {
        SourceKind::OwnUpdate => crate::catalog_update::Update::of_published(message).map(|_| Published::Update),
        kind => recognise(message, kind, true).flatten().map(Published::Catalog),
    }
}

/// Whether `message` is a published catalog (docs/spec.md §3.7), cheaply: no digest.
pub fn is_catalog(message: &Message) -> bool {
    recognise(message, source_kind(&message.source), false).is_some()
}

/// Whether `message` is a published catalog or a well-formed update of one.
pub fn is_catalog_or_update(message: &Message) -> bool {
    match source_kind(&message.source) {
        SourceKind::OwnUpdate => crate::catalog_update::Update::of_published(message).is_some(),
        kind => recognise(message, kind, false).is_some(),
    }
}

/// The digest of a published catalog, or `None` when `message` is not one.
pub fn published_digest(message: &Message) -> Option<CatalogDigest> {
    recognise(message, source_kind(&message.source), true).flatten()
}

/// For a message whose source is of `kind`: `Some(None)`, a catalog, digest
/// not asked for; `Some(Some(d))`, a catalog with digest `d`.
fn recognise(message: &Message, kind: SourceKind, want_digest: bool) -> Option<Option<CatalogDigest>> {
    match kind {
        SourceKind::OwnPlugin => {
            let text = message.single_text()?;
            let between = text_between_markers(text)?;
            Some(want_digest.then(|| CatalogDigest::of(between.strip_suffix('\n').unwrap_or(between))))
        }
        SourceKind::SkillCatalog(source) => {
            let mut lines = entry_lines(&source)?;
            // Only a string is a coverage line (docs/spec.md §3.13); another
            // value is ignored, as any other field is.
            if let Some(Value::String(line)) = source.get("coverage") {
                lines.push_line(&escape::text(line));
            }
            Some(want_digest.then(|| lines.finish().digest))
        }
        SourceKind::OwnUpdate | SourceKind::Other => None,
    }
}

/// The text between `<available_skills>\n` and the next `</available_skills>`.
pub(crate) fn text_between_markers(text: &str) -> Option<&str> {
    let start = text.find(OPEN_MARKER)? + OPEN_MARKER.len();
    let length = text[start..].find(CLOSE_MARKER)?;
    Some(&text[start..start + length])
}

/// A later-generation catalog's entries rendered as catalog lines. Its
/// descriptions were normalised and capped when written, so they are only
/// escaped here. Malformed entries (the reference's rule: an object with a
/// non-empty string `name` and a string `description`) → not a catalog.
fn entry_lines(source: &Value) -> Option<CatalogLines> {
    let entries = source.get("entries")?.as_array()?;
    let mut lines = CatalogLines::default();
    for entry in entries {
        let name = entry.get("name")?.as_str().filter(|name| !name.is_empty())?;
        let description = entry.get("description")?.as_str()?;
        lines.push(name, &escape::text(description));
    }
    Some(lines)
}

#[cfg(test)]
mod tests;

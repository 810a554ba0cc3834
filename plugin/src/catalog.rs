//! The catalog: entry lines, digest, the two message templates (docs/spec.md §3.5,
//! §3.6) and recognition of published catalogs of both generations (§3.7).

use std::cell::OnceCell;
use std::rc::Rc;

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::budget::{self, Candidate, Shown};
use crate::catalog_update::ShownCatalog;
use crate::config::Config;
use crate::description::{catalog_description, catalog_description_utf16};
use crate::escape;
use crate::types::{ContentBlock, Message, SkillSummary};

/// The source of every catalog message this plugin writes.
pub use skill_rules::CATALOG_SOURCE;
/// The plugin's name inside [`CATALOG_SOURCE`].
pub use skill_rules::PLUGIN_NAME;
/// The source kind later DeepSeek Harness versions use for catalogs.
pub use skill_rules::SKILL_CATALOG_KIND;

use skill_rules::{CATALOG_CLOSE_MARKER as CLOSE_MARKER, CATALOG_OPEN_MARKER as OPEN_MARKER};

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
    /// With [`CatalogForm::SkillCatalog`], the entries as the source's JSON
    /// array (`[{"name":…,"description":…},…]`, descriptions unescaped);
    /// `None` for the seed's form.
    entries_json: Option<String>,
    /// Under a budget, the coverage line (docs/spec.md §3.13).
    coverage: Option<String>,
    /// Under a budget, the names it left out, in name order.
    pub left_out: Vec<String>,
    /// Its lines read back by name, once asked for (delta updates).
    shown: OnceCell<(Rc<ShownCatalog>, CatalogDigest)>,
}

impl PartialEq for Catalog {
    fn eq(&self, other: &Self) -> bool {
        (&self.body, self.len, self.digest, &self.entries_json, &self.coverage, &self.left_out)
            == (&other.body, other.len, other.digest, &other.entries_json, &other.coverage, &other.left_out)
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
    /// options of docs/spec.md §3.13; with them, excluded skills left out
    /// and, under a budget, the entries chosen and cut to fit, followed by
    /// the coverage line.
    pub fn for_config<'a>(skills: impl IntoIterator<Item = &'a SkillSummary>, config: &Config) -> Self {
        let max_length = config.catalog_description_max_length;
        let form = config.catalog_form;
        let eligible =
            skills.into_iter().filter(|skill| skill.invocation.model_invocable && !config.excludes(&skill.name));
        let Some(budget) = config.catalog_budget else {
            return Self::whole(eligible, max_length, form);
        };
        let mut writer = CatalogWriter::new(form);
        let described: Vec<(&str, String)> =
            eligible.map(|skill| (skill.name.as_str(), capped(&skill.description, max_length, form))).collect();
        let candidates: Vec<Candidate<'_>> = described
            .iter()
            .map(|(name, description)| Candidate { name, description, pinned: config.pins(name) })
            .collect();
        let (shown, coverage) = budget::allocate(&candidates, budget);
        for ((name, description), shown) in described.iter().zip(shown) {
            match shown {
                Shown::Whole => writer.push(name, description),
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
        let source = match &self.entries_json {
            None => CATALOG_SOURCE.to_owned(),
            Some(entries) => {
                let update = if update { r#""update":true,"# } else { "" };
                let coverage = match &self.coverage {
                    Some(line) => format!(r#","coverage":{}"#, json_string(line)),
                    None => String::new(),
                };
                format!(r#"{{"kind":"{SKILL_CATALOG_KIND}","form":"catalog",{update}"entries":{entries}{coverage}}}"#)
            }
        };
        Message { source, content: vec![ContentBlock::Text(text)] }
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
    entries: Option<String>,
    left_out: Vec<String>,
}

impl CatalogWriter {
    fn new(form: CatalogForm) -> Self {
        Self {
            lines: CatalogLines::default(),
            entries: (form == CatalogForm::SkillCatalog).then(|| String::from("[")),
            left_out: Vec::new(),
        }
    }

    /// Adds an entry; `description` is normalised and capped, not escaped.
    fn push(&mut self, name: &str, description: &str) {
        self.lines.push(name, &escape::text(description));
        if let Some(entries) = &mut self.entries {
            if entries.len() > 1 {
                entries.push(',');
            }
            // In the reference's key order: `name`, then `description`.
            entries.push_str(r#"{"name":"#);
            entries.push_str(&json_string(name));
            entries.push_str(r#","description":"#);
            entries.push_str(&json_string(description));
            entries.push('}');
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
        catalog.entries_json = entries.map(|mut entries| {
            entries.push(']');
            entries
        });
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
            entries_json: None,
            coverage: None,
            left_out: Vec::new(),
            shown: OnceCell::new(),
        }
    }
}

/// `text` as a JSON string literal.
fn json_string(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
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
mod tests {
    use super::*;

    fn skill(name: &str, description: &str, model_invocable: bool) -> SkillSummary {
        SkillSummary::for_test(name, description, model_invocable)
    }

    fn text_of(message: &Message) -> &str {
        message.single_text().unwrap()
    }

    #[test]
    fn entry_lines_list_only_model_invocable_skills_with_escaped_capped_descriptions() {
        let catalog = Catalog::from_skills(
            &[
                skill("a-skill", "  Use <b> &\n tags  ", true),
                skill("hidden", "Not for the model.", false),
                skill("z-skill", "abcdefghij", true),
            ],
            8,
        );
        // Truncation counts the unescaped characters; escaping comes after.
        assert_eq!(catalog.body, "- `a-skill`: Use &lt;...\n- `z-skill`: abcde...\n");
        assert_eq!(catalog.len, 2);
    }

    #[test]
    fn digest_is_sha256_of_lines_joined_without_trailing_newline() {
        let catalog = Catalog::from_skills(&[skill("a", "One.", true), skill("b", "Two.", true)], 500);
        assert_eq!(catalog.digest, CatalogDigest::of("- `a`: One.\n- `b`: Two."));
        assert_eq!(
            Catalog::from_skills(&[], 500).digest.to_hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn initial_message_is_exact() {
        let message =
            Catalog::from_skills(&[skill("triage-bug", "Triage a bug report.", true)], 500).initial_message(false);
        assert_eq!(message.source, r#"{"kind":"plugin","plugin":"dsh-tool-skill"}"#);
        assert_eq!(
            text_of(&message),
            "<system-reminder>\nA skill is a reusable set of task-specific instructions. The following skills are available in this session:\n\n<available_skills>\n- `triage-bug`: Triage a bug report.\n</available_skills>\n\nIf the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. Load all applicable skills, then follow their full instructions. This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded.\n</system-reminder>"
        );
    }

    #[test]
    fn replacement_message_with_entries_is_exact() {
        let message =
            Catalog::from_skills(&[skill("tag-release", "Create and push an annotated release tag.", true)], 500)
                .replacement_message(false);
        assert_eq!(
            text_of(&message),
            "<system-reminder>\nThe available skill catalog changed. This complete catalog replaces every earlier available-skills list in this session:\n\n<available_skills>\n- `tag-release`: Create and push an annotated release tag.\n</available_skills>\n\nUse only names in this replacement catalog. If the user names a listed skill, or the task clearly matches its description, call the `skill` tool with the exact name before acting.\n</system-reminder>"
        );
    }

    #[test]
    fn empty_replacement_message_is_exact() {
        let message = Catalog::from_skills(&[], 500).replacement_message(false);
        assert_eq!(
            text_of(&message),
            "<system-reminder>\nThe available skill catalog changed. This complete catalog replaces every earlier available-skills list in this session:\n\n<available_skills>\n</available_skills>\n\nNo skills are currently available through the `skill` tool. Do not use names from earlier skill catalogs.\n</system-reminder>"
        );
    }

    #[test]
    fn user_invocation_adds_one_line_before_the_closing_tag() {
        let listed = Catalog::from_skills(&[skill("a", "One.", true)], 500);
        assert_eq!(
            text_of(&listed.initial_message(true)),
            "<system-reminder>\nA skill is a reusable set of task-specific instructions. The following skills are available in this session:\n\n<available_skills>\n- `a`: One.\n</available_skills>\n\nIf the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. Load all applicable skills, then follow their full instructions. This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded.\nA user may also invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool again for that skill.\n</system-reminder>"
        );
        assert_eq!(
            text_of(&listed.replacement_message(true)),
            "<system-reminder>\nThe available skill catalog changed. This complete catalog replaces every earlier available-skills list in this session:\n\n<available_skills>\n- `a`: One.\n</available_skills>\n\nUse only names in this replacement catalog. If the user names a listed skill, or the task clearly matches its description, call the `skill` tool with the exact name before acting.\nA user may also invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool again for that skill.\n</system-reminder>"
        );
        assert_eq!(
            text_of(&Catalog::from_skills(&[], 500).replacement_message(true)),
            "<system-reminder>\nThe available skill catalog changed. This complete catalog replaces every earlier available-skills list in this session:\n\n<available_skills>\n</available_skills>\n\nNo skills are currently available through the `skill` tool. Do not use names from earlier skill catalogs.\nA user may still invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool for it.\n</system-reminder>"
        );
        // The extra line is outside the markers: the digest does not change.
        assert_eq!(published_digest(&listed.initial_message(true)), Some(listed.digest));
    }

    /// DeepSeek Harness 0.1.0-rc.8's catalogs, byte for byte (its
    /// `renderCatalogMessage` and `renderCatalogUpdate`).
    #[test]
    fn the_skill_catalog_form_writes_what_the_published_plugin_writes() {
        let skills = [skill("a-skill", "  Use <b> &\n \"tags\"  ", true), skill("hidden", "No.", false)];
        let catalog = Catalog::build(&skills, 500, CatalogForm::SkillCatalog);
        let initial = catalog.initial_message(true);
        assert_eq!(
            initial.source,
            r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a-skill","description":"Use <b> & \"tags\""}]}"#
        );
        assert_eq!(
            text_of(&initial),
            "<system-reminder>\nA skill is a reusable set of task-specific instructions. The following skills are available in this session:\n\n<available_skills>\n- `a-skill`: Use &lt;b&gt; &amp; \"tags\"\n</available_skills>\n\nIf the user names a skill, or the task clearly matches a skill's description, call the `skill` tool with the exact skill name before taking task actions. Load all applicable skills, then follow their full instructions. This catalog contains summaries only; do not infer or follow a skill's instructions until it has been loaded.\nA user may also invoke a skill directly; its <skill_content> block then appears in this conversation. Follow it, and do not call the `skill` tool again for that skill.\n</system-reminder>"
        );
        let update = catalog.replacement_message(true);
        assert_eq!(
            update.source,
            r#"{"kind":"skill-catalog","form":"catalog","update":true,"entries":[{"name":"a-skill","description":"Use <b> & \"tags\""}]}"#
        );
        assert_eq!(text_of(&update), text_of(&Catalog::from_skills(&skills, 500).replacement_message(true)));
        let empty = Catalog::build(&[], 500, CatalogForm::SkillCatalog).replacement_message(true);
        assert_eq!(empty.source, r#"{"kind":"skill-catalog","form":"catalog","update":true,"entries":[]}"#);
        assert_eq!(text_of(&empty), text_of(&Catalog::from_skills(&[], 500).replacement_message(true)));
        // Both forms of one catalog have one digest, and each is recognised with it.
        assert_eq!(catalog.digest, Catalog::from_skills(&skills, 500).digest);
        for message in [&initial, &update] {
            assert_eq!(published_digest(message), Some(catalog.digest));
        }
    }

    #[test]
    fn rendered_catalogs_are_recognised_with_their_own_digest() {
        for skills in [vec![skill("a", "One.", true), skill("b", "Two.", true)], vec![]] {
            let catalog = Catalog::from_skills(&skills, 500);
            assert_eq!(published_digest(&catalog.initial_message(false)), Some(catalog.digest));
            assert_eq!(published_digest(&catalog.replacement_message(false)), Some(catalog.digest));
        }
    }

    #[test]
    fn own_generation_needs_source_single_text_block_and_both_markers() {
        let text = "x<available_skills>\n- `a`: One.\n</available_skills>y".to_owned();
        let with = |source: &str, content: Vec<ContentBlock>| Message { source: source.to_owned(), content };
        let good = with(CATALOG_SOURCE, vec![ContentBlock::Text(text.clone())]);
        assert_eq!(published_digest(&good), Some(CatalogDigest::of("- `a`: One.")));
        assert!(is_catalog(&good));
        for not_catalog in [
            with(r#"{"kind":"plugin","plugin":"other"}"#, vec![ContentBlock::Text(text.clone())]),
            with(r#"{"kind":"user"}"#, vec![ContentBlock::Text(text.clone())]),
            with("not json", vec![ContentBlock::Text(text.clone())]),
            with(CATALOG_SOURCE, vec![ContentBlock::Text(text.clone()), ContentBlock::Text(String::new())]),
            with(CATALOG_SOURCE, vec![ContentBlock::Other("{}".to_owned())]),
            with(CATALOG_SOURCE, vec![]),
            with(CATALOG_SOURCE, vec![ContentBlock::Text("<available_skills>- `a`: x</available_skills>".to_owned())]),
            with(CATALOG_SOURCE, vec![ContentBlock::Text("<available_skills>\n- `a`: x".to_owned())]),
            with(CATALOG_SOURCE, vec![ContentBlock::Text("</available_skills><available_skills>\n".to_owned())]),
        ] {
            assert_eq!(published_digest(&not_catalog), None, "{not_catalog:?}");
            assert!(!is_catalog(&not_catalog));
        }
    }

    #[test]
    fn later_generation_is_recognised_from_its_entries() {
        let message = Message {
            source: r#"{"kind":"skill-catalog","form":"catalog","update":true,"entries":[{"name":"a","description":"x < y"},{"name":"b","description":"Two."}]}"#.to_owned(),
            content: vec![ContentBlock::Text("whatever the text says".to_owned())],
        };
        assert_eq!(published_digest(&message), Some(CatalogDigest::of("- `a`: x &lt; y\n- `b`: Two.")));
        // The same catalog published by this plugin has the same digest, so a
        // session moved between hosts never duplicates it.
        let ours = Catalog::from_skills(&[skill("a", "x < y", true), skill("b", "Two.", true)], 500);
        assert_eq!(published_digest(&message), Some(ours.digest));
        let empty =
            Message { source: r#"{"kind":"skill-catalog","form":"catalog","entries":[]}"#.to_owned(), content: vec![] };
        assert_eq!(published_digest(&empty), Some(CatalogDigest::of("")));
    }

    #[test]
    fn malformed_later_generation_entries_are_not_a_catalog() {
        for source in [
            r#"{"kind":"skill-catalog","form":"catalog"}"#,
            r#"{"kind":"skill-catalog","entries":{}}"#,
            r#"{"kind":"skill-catalog","entries":[{"name":"","description":"x"}]}"#,
            r#"{"kind":"skill-catalog","entries":[{"name":"a"}]}"#,
            r#"{"kind":"skill-catalog","entries":[{"name":"a","description":3}]}"#,
            r#"{"kind":"skill-catalog","entries":["a"]}"#,
        ] {
            let message = Message { source: source.to_owned(), content: vec![] };
            assert_eq!(published_digest(&message), None, "{source}");
        }
    }

    fn budgeted(json: &str) -> Config {
        Config::parse(json).unwrap()
    }

    #[test]
    fn a_budgeted_catalog_cuts_lists_and_says_how_complete_it_is() {
        let skills = [
            skill("alpha", "Short.", true),
            skill("beta", "A much longer description that will not fit whole <here>.", true),
            skill("gamma", "Another long description that has to be shortened too.", true),
            skill("hidden", "Never listed.", false),
        ];
        // Frames 12 + 11 + 12 = 35; "Short." 6; 20 left: 10 each for beta and gamma.
        let catalog = Catalog::for_config(&skills, &budgeted(r#"{"catalogBudget":61}"#));
        assert_eq!(
            catalog.body,
            "- `alpha`: Short.\n- `beta`: A much...\n- `gamma`: Another...\nCatalog coverage: 3 of 3 skills listed, 2 with shortened descriptions.\n"
        );
        assert_eq!((catalog.len, catalog.total()), (3, 3));
        let text = catalog.initial_message(false);
        assert!(text.single_text().unwrap().contains("<available_skills>\n- `alpha`: Short.\n"));
        assert!(text.single_text().unwrap().contains("shortened descriptions.\n</available_skills>\n\nIf the user"));
        // The digest covers the coverage line: what is shown.
        assert_eq!(published_digest(&text), Some(catalog.digest));
        assert_ne!(catalog.digest, Catalog::for_config(&skills, &budgeted(r#"{"catalogBudget":63}"#)).digest);

        // Below the names: the last in name order go first, pinned ones last.
        // gamma whole is 66 characters; alpha's shortest line (15) fits in
        // the 18 left, beta's (14) not in the 3 after it, which alpha's
        // description takes.
        let config = budgeted(r#"{"catalogBudget":84,"catalogPinned":["gamma"],"skillSearch":true}"#);
        let catalog = Catalog::for_config(&skills, &config);
        assert_eq!(
            catalog.body,
            "- `alpha`: Short.\n- `gamma`: Another long description that has to be shortened too.\nCatalog coverage: 2 of 3 skills listed; 1 left out, still loaded by exact name or found with the `skill` tool's `query`.\n"
        );
        assert_eq!((catalog.len, catalog.total()), (2, 3));
        // Not even one name: nothing listed, and the message still lists the tail for skills.
        let catalog = Catalog::for_config(&skills, &budgeted(r#"{"catalogBudget":5}"#));
        assert_eq!(catalog.body, "Catalog coverage: 0 of 3 skills listed; 3 left out, still loaded by exact name.\n");
        assert_eq!((catalog.len, catalog.total()), (0, 3));
        assert!(
            catalog.replacement_message(false).single_text().unwrap().contains("Use only names in this replacement")
        );
    }

    #[test]
    fn excluded_skills_are_left_out_before_the_budget_and_not_counted() {
        let skills = [skill("deploy-prod", "Ship.", true), skill("draft-a", "Draft.", true), skill("z", "Z.", true)];
        let catalog = Catalog::for_config(&skills, &budgeted(r#"{"catalogExclude":["draft-*","z"]}"#));
        assert_eq!(catalog.body, "- `deploy-prod`: Ship.\n");
        let catalog = Catalog::for_config(&skills, &budgeted(r#"{"catalogExclude":["draft-*"],"catalogBudget":1000}"#));
        assert_eq!(catalog.body, "- `deploy-prod`: Ship.\n- `z`: Z.\nCatalog coverage: 2 of 2 skills listed.\n");
    }

    #[test]
    fn without_the_new_keys_the_catalog_is_the_references() {
        let skills = [skill("a", "One <b>.", true), skill("b", "Two.", false)];
        assert_eq!(Catalog::for_config(&skills, &Config::default()), Catalog::from_skills(&skills, 500));
    }

    #[test]
    fn the_skill_catalog_form_records_the_coverage_line_in_its_source() {
        let skills = [skill("a", "One.", true), skill("b", "Two.", true)];
        let config = budgeted(r#"{"catalogBudget":100,"catalogSource":"skill-catalog"}"#);
        let catalog = Catalog::for_config(&skills, &config);
        let message = catalog.initial_message(false);
        assert_eq!(
            message.source,
            r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":"One."},{"name":"b","description":"Two."}],"coverage":"Catalog coverage: 2 of 2 skills listed."}"#
        );
        assert_eq!(published_digest(&message), Some(catalog.digest));
    }

    mod budget_properties {
        use proptest::prelude::*;

        use super::*;

        fn skills() -> impl Strategy<Value = Vec<SkillSummary>> {
            let description = prop::string::string_regex("[a-z <>&😀é\t]{0,80}").unwrap();
            prop::collection::btree_map("[a-z]{1,12}(-[a-z0-9]{1,6})?", (description, prop::bool::weighted(0.9)), 0..40)
                .prop_map(|skills| {
                    skills
                        .into_iter()
                        .map(|(name, (description, invocable))| skill(&name, &description, invocable))
                        .collect()
                })
        }

        proptest! {
            #[test]
            fn a_budgeted_catalog_fits_its_budget_and_lists_pinned_skills_first_and_whole_when_they_fit(
                skills in skills(),
                budget in 1usize..3000,
                max_length in 3usize..120,
                pin_mask in any::<u64>(),
            ) {
                let pinned: Vec<String> = skills.iter().enumerate()
                    .filter(|(index, skill)| skill.invocation.model_invocable && pin_mask >> (index % 64) & 1 == 1 && index % 3 == 0)
                    .map(|(_, skill)| skill.name.clone())
                    .collect();
                let config = Config {
                    catalog_budget: Some(budget),
                    catalog_description_max_length: max_length,
                    catalog_pinned: pinned.clone(),
                    ..Config::default()
                };
                let catalog = Catalog::for_config(&skills, &config);
                let lines: Vec<&str> = catalog.body.lines().collect();
                let (coverage, entries) = lines.split_last().expect("a coverage line");
                prop_assert!(coverage.starts_with("Catalog coverage: "));
                let used: usize = entries.iter().map(|line| line.chars().count() + 1).sum();
                prop_assert!(used <= budget, "{used} > {budget}");
                prop_assert_eq!(entries.len(), catalog.len);
                let whole_line = |name: &str| {
                    let skill = skills.iter().find(|skill| skill.name == name).unwrap();
                    format!("- `{name}`: {}", escape::text(&catalog_description(&skill.description, max_length)))
                };
                let pinned_cost: usize = pinned.iter().map(|name| whole_line(name).chars().count() + 1).sum();
                if pinned_cost <= budget {
                    for name in &pinned {
                        prop_assert!(entries.contains(&whole_line(name).as_str()), "{name} missing whole");
                    }
                }
                // A pinned skill is never left out while an unpinned one is listed.
                let listed: Vec<&str> = entries.iter().map(|entry| &entry[3..entry.find("`: ").unwrap()]).collect();
                let pinned_out = pinned.iter().find(|name| !listed.contains(&name.as_str()));
                let unpinned_in = listed.iter().find(|name| !pinned.iter().any(|pin| pin == *name));
                prop_assert!(pinned_out.is_none() || unpinned_in.is_none(), "{pinned_out:?} out, {unpinned_in:?} in");
                // Every entry is its skill's whole line or a cut of it.
                for entry in entries {
                    let name = &entry[3..entry.find("`: ").unwrap()];
                    let whole = whole_line(name);
                    prop_assert!(*entry == whole || entry.ends_with("..."), "{entry}");
                }
                // The same winners give the same bytes.
                prop_assert_eq!(Catalog::for_config(&skills, &config), catalog);
            }
        }
    }
}

//! The catalog: entry lines, digest, the two message templates (docs/spec.md §3.5,
//! §3.6) and recognition of published catalogs of both generations (§3.7).

use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::description::{catalog_description, catalog_description_utf16};
use crate::escape;
use crate::types::{ContentBlock, Message, SkillSummary};

/// The source of every catalog message this plugin writes.
pub use skill_rules::CATALOG_SOURCE;
/// The plugin's name inside [`CATALOG_SOURCE`].
pub use skill_rules::PLUGIN_NAME;
/// The source kind later DeepSeek Harness versions use for catalogs.
pub const SKILL_CATALOG_KIND: &str = "skill-catalog";

const OPEN_MARKER: &str = "<available_skills>\n";
const CLOSE_MARKER: &str = "</available_skills>";

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    /// One `` - `name`: description `` line per model-invocable skill, each
    /// followed by `\n` (the exact text between the markers).
    pub body: String,
    /// Number of entries.
    pub len: usize,
    /// Digest of the lines joined with `\n`.
    pub digest: CatalogDigest,
    /// With [`CatalogForm::SkillCatalog`], the entries as the source's JSON
    /// array (`[{"name":…,"description":…},…]`, descriptions unescaped);
    /// `None` for the seed's form.
    entries_json: Option<String>,
}

impl Catalog {
    /// Builds the catalog from the registry's winners (already sorted by
    /// name), keeping only model-invocable skills, in the seed's form.
    pub fn from_skills<'a>(skills: impl IntoIterator<Item = &'a SkillSummary>, max_chars: usize) -> Self {
        Self::build(skills, max_chars, CatalogForm::Plugin)
    }

    /// Builds the catalog in `form`: the same lines and digest for the same
    /// entries, whichever form records them.
    pub fn build<'a>(skills: impl IntoIterator<Item = &'a SkillSummary>, max_length: usize, form: CatalogForm) -> Self {
        let mut lines = CatalogLines::default();
        let mut entries = (form == CatalogForm::SkillCatalog).then(|| String::from("["));
        for skill in skills.into_iter().filter(|skill| skill.invocation.model_invocable) {
            let description = match form {
                CatalogForm::Plugin => catalog_description(&skill.description, max_length),
                CatalogForm::SkillCatalog => catalog_description_utf16(&skill.description, max_length),
            };
            lines.push(&skill.name, &escape::text(&description));
            if let Some(entries) = &mut entries {
                if entries.len() > 1 {
                    entries.push(',');
                }
                // In the reference's key order: `name`, then `description`.
                entries.push_str(r#"{"name":"#);
                entries.push_str(&json_string(&skill.name));
                entries.push_str(r#","description":"#);
                entries.push_str(&json_string(&description));
                entries.push('}');
            }
        }
        let mut catalog = lines.finish();
        catalog.entries_json = entries.map(|mut entries| {
            entries.push(']');
            entries
        });
        catalog
    }

    /// Renders the initial catalog message (first publication in a session).
    /// `user_invocation` adds the line about `/name` (off by default).
    pub fn initial_message(&self, user_invocation: bool) -> Message {
        let note = if user_invocation { USER_INVOCATION_LISTED } else { "" };
        self.message([INITIAL_HEAD, &self.body, INITIAL_TAIL, note, CLOSE].concat(), false)
    }

    /// Renders a replacement catalog message (every later publication).
    pub fn replacement_message(&self, user_invocation: bool) -> Message {
        let (tail, note) = if self.len == 0 {
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
                format!(r#"{{"kind":"{SKILL_CATALOG_KIND}","form":"catalog",{update}"entries":{entries}}}"#)
            }
        };
        Message { source, content: vec![ContentBlock::Text(text)] }
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

    fn finish(self) -> Catalog {
        let joined = self.body.strip_suffix('\n').unwrap_or(&self.body);
        Catalog { digest: CatalogDigest::of(joined), len: self.len, body: self.body, entries_json: None }
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
        Some("plugin") if source.get("plugin").and_then(Value::as_str) == Some(PLUGIN_NAME) => SourceKind::OwnPlugin,
        Some(SKILL_CATALOG_KIND) => SourceKind::SkillCatalog(Value::Object(source)),
        _ => SourceKind::Other,
    }
}

/// Whether `message` is a published catalog (docs/spec.md §3.7), cheaply: no digest.
pub fn is_catalog(message: &Message) -> bool {
    recognise(message, false).is_some()
}

/// The digest of a published catalog, or `None` when `message` is not one.
pub fn published_digest(message: &Message) -> Option<CatalogDigest> {
    recognise(message, true).flatten()
}

/// `Some(None)`: a catalog, digest not asked for. `Some(Some(d))`: a catalog with digest `d`.
fn recognise(message: &Message, want_digest: bool) -> Option<Option<CatalogDigest>> {
    match source_kind(&message.source) {
        SourceKind::OwnPlugin => {
            let text = message.single_text()?;
            let between = text_between_markers(text)?;
            Some(want_digest.then(|| CatalogDigest::of(between.strip_suffix('\n').unwrap_or(between))))
        }
        SourceKind::SkillCatalog(source) => {
            let lines = entry_lines(&source)?;
            Some(want_digest.then(|| lines.finish().digest))
        }
        SourceKind::Other => None,
    }
}

/// The text between `<available_skills>\n` and the next `</available_skills>`.
fn text_between_markers(text: &str) -> Option<&str> {
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
    use crate::types::InvocationPolicy;

    fn skill(name: &str, description: &str, model_invocable: bool) -> SkillSummary {
        SkillSummary {
            body_digest: None,
            name: name.to_owned(),
            description: description.to_owned(),
            invocation: InvocationPolicy { model_invocable, user_invocable: true },
            provider: "runtime".to_owned(),
            source: "runtime".to_owned(),
            path: None,
        }
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
}

//! Catalog updates (`catalogUpdates: "delta"`, docs/spec.md §3.13): after a
//! complete catalog, a change publishes only the entries that changed and
//! the names that left. What the model sees is then the newest complete
//! catalog with the updates after it folded in: the effective catalog.

use std::collections::BTreeMap;

use serde_json::Value;

use sha2::{Digest as _, Sha256};

use skill_rules::Record;

use crate::catalog::{self, Catalog, CatalogDigest, SourceKind};
use crate::types::{ContentBlock, Message};

pub use skill_rules::CATALOG_UPDATE_FORM;

const OPEN_MARKER: &str = "<available_skills_update>\n";
const CLOSE_MARKER: &str = "</available_skills_update>";
const HEAD: &str = "<system-reminder>\nThe available skill catalog changed. This update applies to the latest skill catalog above: its entries add or replace the skills of the same names, and every other entry there still holds.\n\n<available_skills_update>\n";
const TAIL: &str = "</available_skills_update>";
const REMOVED_HEAD: &str = "\n\nRemoved from the catalog, do not use: ";
const CLOSE: &str = "\n</system-reminder>";

/// A catalog as the model reads it: each entry's escaped description by
/// name, and the coverage line if there is one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShownCatalog {
    /// Escaped descriptions by name.
    pub entries: BTreeMap<String, String>,
    /// The line that is not an entry (under a budget, the coverage line).
    pub coverage: Option<String>,
}

impl ShownCatalog {
    /// A digest of what it shows, whatever the order of its lines: equal
    /// digests mean equal entries and coverage line.
    pub fn digest(&self) -> CatalogDigest {
        let mut hasher = Sha256::new();
        for (name, description) in &self.entries {
            // Length-prefixed, so no two catalogs hash alike by concatenation.
            for part in [name, description] {
                hasher.update((part.len() as u64).to_le_bytes());
                hasher.update(part.as_bytes());
            }
        }
        if let Some(line) = &self.coverage {
            hasher.update(u64::MAX.to_le_bytes());
            hasher.update(line.as_bytes());
        }
        CatalogDigest::from_bytes(hasher.finalize().into())
    }

    /// Reads catalog lines (`` - `name`: description `` and at most one
    /// other line). `None` when they are not this plugin's lines: a
    /// duplicate name, or more than one other line.
    fn from_lines(text: &str) -> Option<Self> {
        Self::read(text, true)
    }

    /// What a catalog this plugin built shows (a name listed twice, which a
    /// registry never does, keeps its last line).
    pub fn of(catalog: &Catalog) -> Self {
        Self::read(&catalog.body, false).unwrap_or_default()
    }

    /// The lines of `text`; `strict`, `None` for a name listed twice or a
    /// second line that is not an entry, else the last of them counts.
    fn read(text: &str, strict: bool) -> Option<Self> {
        let mut shown = Self::default();
        for line in text.split_terminator('\n') {
            let repeated = match entry(line) {
                Some((name, description)) => shown.entries.insert(name.to_owned(), description.to_owned()).is_some(),
                None => shown.coverage.replace(line.to_owned()).is_some(),
            };
            if repeated && strict {
                return None;
            }
        }
        Some(shown)
    }

    /// What a published complete catalog shows, in either form; `None` when
    /// `message` is not one.
    pub fn of_published(message: &Message) -> Option<Self> {
        match catalog::source_kind(&message.source) {
            SourceKind::OwnPlugin => Self::from_lines(catalog::text_between_markers(message.single_text()?)?),
            SourceKind::SkillCatalog(source) => {
                let mut shown = Self::default();
                for entry in source.get("entries")?.as_array()? {
                    let name = entry.get("name")?.as_str().filter(|name| !name.is_empty())?;
                    let description = entry.get("description")?.as_str()?;
                    shown.entries.insert(name.to_owned(), crate::escape::text(description));
                }
                shown.coverage = match source.get("coverage") {
                    Some(Value::String(line)) => Some(crate::escape::text(line)),
                    _ => None,
                };
                Some(shown)
            }
            SourceKind::OwnUpdate | SourceKind::Other => None,
        }
    }

    /// Folds an update in.
    pub fn apply(&mut self, update: &Update) {
        for name in &update.removed {
            self.entries.remove(name);
        }
        for (name, description) in &update.changed {
            self.entries.insert(name.clone(), description.clone());
        }
        if let Some(line) = &update.coverage {
            self.coverage = Some(line.clone());
        }
    }
}

/// The `` - `name`: description `` line's parts.
fn entry(line: &str) -> Option<(&str, &str)> {
    let rest = line.strip_prefix("- `")?;
    let end = rest.find("`: ")?;
    Some((&rest[..end], &rest[end + "`: ".len()..]))
}

/// One published update: what it changed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Update {
    /// Added or changed entries: name and escaped description, in name order.
    pub changed: Vec<(String, String)>,
    /// Names that left, in name order.
    pub removed: Vec<String>,
    /// The new coverage line, when it changed.
    pub coverage: Option<String>,
}

impl Update {
    /// What takes `from` to `to`; `None` when an update cannot say it: `to`
    /// drops the coverage line `from` has, or a name either shows is not a
    /// skill name (read from a foreign catalog; no host accepts it).
    pub fn between(from: &ShownCatalog, to: &ShownCatalog) -> Option<Self> {
        if from.coverage.is_some() && to.coverage.is_none() {
            return None;
        }
        if !from.entries.keys().chain(to.entries.keys()).all(|name| skill_rules::is_skill_name(name)) {
            return None;
        }
        let changed = to
            .entries
            .iter()
            .filter(|(name, description)| from.entries.get(*name) != Some(description))
            .map(|(name, description)| (name.clone(), description.clone()))
            .collect();
        let removed = from.entries.keys().filter(|name| !to.entries.contains_key(*name)).cloned().collect();
        let coverage = to.coverage.clone().filter(|line| from.coverage.as_ref() != Some(line));
        Some(Self { changed, removed, coverage })
    }

    /// Whether it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.removed.is_empty() && self.coverage.is_none()
    }

    /// Reads a published update; `None` when `message` is not one.
    pub fn of_published(message: &Message) -> Option<Self> {
        if catalog::source_kind(&message.source) != SourceKind::OwnUpdate {
            return None;
        }
        let Ok(Value::Object(source)) = serde_json::from_str::<Value>(&message.source) else {
            return None;
        };
        let mut removed: Vec<String> = Vec::new();
        for name in source.get("removed")?.as_array()? {
            removed.push(name.as_str().filter(|name| skill_rules::is_skill_name(name))?.to_owned());
        }
        let text = message.single_text()?;
        let start = text.find(OPEN_MARKER)? + OPEN_MARKER.len();
        let length = text[start..].find(CLOSE_MARKER)?;
        let lines = ShownCatalog::from_lines(&text[start..start + length])?;
        if !lines.entries.keys().all(|name| skill_rules::is_skill_name(name)) {
            return None;
        }
        Some(Self { changed: lines.entries.into_iter().collect(), removed, coverage: lines.coverage })
    }

    /// The update message (docs/spec.md §3.13).
    pub fn message(&self) -> Message {
        let mut text = String::from(HEAD);
        for (name, description) in &self.changed {
            text.push_str("- `");
            text.push_str(name);
            text.push_str("`: ");
            text.push_str(description);
            text.push('\n');
        }
        if let Some(line) = &self.coverage {
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(TAIL);
        if !self.removed.is_empty() {
            text.push_str(REMOVED_HEAD);
            let names: Vec<String> = self.removed.iter().map(|name| format!("`{name}`")).collect();
            text.push_str(&names.join(", "));
            text.push('.');
        }
        text.push_str(CLOSE);
        let source = Record::CatalogUpdate { removed: self.removed.clone() }.to_json();
        Message { source, content: vec![ContentBlock::Text(text)] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::SkillSummary;

    fn skill(name: &str, description: &str) -> SkillSummary {
        SkillSummary::for_test(name, description, true)
    }

    #[test]
    fn an_update_names_what_changed_and_reads_back() {
        let before = Catalog::from_skills(&[skill("a", "One."), skill("b", "Two."), skill("c", "Three.")], 500);
        let after = Catalog::from_skills(&[skill("a", "One."), skill("b", "Two <new>."), skill("d", "Four.")], 500);
        let update = Update::between(&ShownCatalog::of(&before), &ShownCatalog::of(&after)).unwrap();
        let message = update.message();
        assert_eq!(
            message.source,
            r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":["c"]}"#
        );
        assert_eq!(
            message.single_text().unwrap(),
            "<system-reminder>\nThe available skill catalog changed. This update applies to the latest skill catalog above: its entries add or replace the skills of the same names, and every other entry there still holds.\n\n<available_skills_update>\n- `b`: Two &lt;new&gt;.\n- `d`: Four.\n</available_skills_update>\n\nRemoved from the catalog, do not use: `c`.\n</system-reminder>"
        );
        assert_eq!(Update::of_published(&message), Some(update.clone()));
        let mut folded = ShownCatalog::of(&before);
        folded.apply(&update);
        assert_eq!(folded, ShownCatalog::of(&after));
        assert_eq!(folded.digest(), ShownCatalog::of(&after).digest());
        assert_ne!(folded.digest(), ShownCatalog::of(&before).digest());
        // An update is not a complete catalog.
        assert_eq!(catalog::published_digest(&message), None);
        assert!(ShownCatalog::of_published(&message).is_none());
    }

    #[test]
    fn an_update_with_nothing_removed_has_no_removed_line() {
        let before = Catalog::from_skills(&[skill("a", "One.")], 500);
        let after = Catalog::from_skills(&[skill("a", "One!")], 500);
        let message = Update::between(&ShownCatalog::of(&before), &ShownCatalog::of(&after)).unwrap().message();
        assert!(
            message.single_text().unwrap().ends_with("- `a`: One!\n</available_skills_update>\n</system-reminder>")
        );
        assert!(message.source.ends_with(r#""removed":[]}"#));
    }

    #[test]
    fn a_published_catalog_reads_back_as_it_was_built() {
        let built = Catalog::from_skills(&[skill("a", "x < y"), skill("b", "Two.")], 500);
        assert_eq!(ShownCatalog::of_published(&built.initial_message(false)), Some(ShownCatalog::of(&built)));
        let foreign = Message {
            source: r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":"x < y"},{"name":"b","description":"Two."}]}"#.to_owned(),
            content: vec![],
        };
        assert_eq!(ShownCatalog::of_published(&foreign), Some(ShownCatalog::of(&built)));
    }

    #[test]
    fn malformed_updates_are_not_updates() {
        let good = Update { changed: vec![("a".into(), "One.".into())], ..Update::default() }.message();
        let with = |source: &str, text: &str| Message {
            source: source.to_owned(),
            content: vec![ContentBlock::Text(text.to_owned())],
        };
        let text = good.single_text().unwrap();
        for bad in [
            with(r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update"}"#, text),
            with(r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":["A"]}"#, text),
            with(&good.source, "no markers"),
            with(&good.source, &text.replace("- `a`: One.\n", "- `a`: One.\n- `a`: Two.\n")),
        ] {
            assert_eq!(Update::of_published(&bad), None, "{bad:?}");
        }
    }

    #[test]
    fn dropping_the_coverage_line_needs_a_complete_catalog() {
        let from =
            ShownCatalog { coverage: Some("Catalog coverage: 1 of 1 skill listed.".into()), ..Default::default() };
        assert_eq!(Update::between(&from, &ShownCatalog::default()), None);
    }
}

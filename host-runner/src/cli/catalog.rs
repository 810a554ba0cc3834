//! `catalog`: what the catalog costs under the plugin configuration, and why
//! each skill is listed whole, shortened, or missing from it (docs/spec.md
//! §3.13).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Value, json};
use skill_host::message::single_text;
use skill_host::{Plugin, RegistrySnapshot, SkillRegistry, preview_step};

use super::common::{GlobalOptions, cwd_or_current, print_line, print_out, warn, warn_all};

use skill_rules::{CATALOG_CLOSE_MARKER as CLOSE_MARKER, CATALOG_OPEN_MARKER as OPEN_MARKER, COVERAGE_PREFIX, Record};

/// Show what the catalog costs and which skills it lists, shortens or leaves out, and why.
#[derive(Args)]
pub struct CatalogArgs {
    /// The working directory (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
    /// For a skill author's CI: exit 1, naming each on stderr, when any
    /// model-invocable skill would be shortened or left out (or the listing is
    /// incomplete); 0 when every one is listed whole.
    #[arg(long)]
    check: bool,
}

impl CatalogArgs {
    pub fn run(self, global: &GlobalOptions) -> Result<u8> {
        let cwd = cwd_or_current(self.cwd.as_deref())?;
        // The plugin refuses a bad configuration first, in its own words.
        let plugin = global.load_plugin()?;
        let options = CatalogOptions::parse(global.config()?.as_deref())?;
        let registry = global.registry();
        // Listed before the step, so the step reads the same (cached) view.
        let snapshot = registry.snapshot(Some(Path::new(&cwd)));
        warn_all(&snapshot.warnings);
        let unmatched = options.unmatched_pins(&snapshot);
        for name in &unmatched {
            warn(&unmatched_pin(name));
        }
        let published = PublishedCatalog::read(&plugin, &registry, &cwd)?;
        // What `catalogDescriptionMaxLength` alone shows: the same
        // configuration without its budget, so a cut is told apart.
        let capped = match &options.without_budget {
            Some(config) => Some(PublishedCatalog::read(&global.load_plugin_with(config)?, &registry, &cwd)?),
            None => None,
        };
        let failed = failed_providers(&snapshot);
        let sources = Sources {
            options: &options,
            published: &published,
            capped: capped.as_ref().unwrap_or(&published),
            failed: &failed,
        };
        let rows = rows(&snapshot, &sources);
        let report = Report { sources, rows, unmatched, complete: snapshot.complete };
        if self.json {
            print_line(&report.json().to_string(), None)?;
        } else {
            print_out(&report.text(), None)?;
        }
        if !self.check {
            return Ok(0);
        }
        let failures = report.check_failures();
        for line in &failures {
            warn_check(line);
        }
        Ok(if failures.is_empty() { 0 } else { 1 })
    }
}

/// Writes a `--check` finding on stderr.
fn warn_check(line: &str) {
    use std::io::Write as _;
    // A failing stderr loses only the line; the exit code still says it.
    let _ = writeln!(std::io::stderr().lock(), "check: {}", super::common::for_stderr(line));
}

/// The configuration's keys that decide what the catalog leaves out.
#[derive(Debug, Default)]
struct CatalogOptions {
    /// `catalogBudget`: the most characters of entry lines.
    budget: Option<u64>,
    /// `catalogExclude`: names and patterns of skills left out, compiled
    /// once as the plugin compiles them.
    exclude: skill_rules::SkillPatterns,
    /// `catalogPinned`: names listed first.
    pinned: Vec<String>,
    /// `catalogSummaries`: a description may be shown as its first sentence.
    summaries: bool,
    /// `catalogWhenToUse`: a description is followed by the skill's `whenToUse`.
    when_to_use: bool,
    /// `catalogNameOnly`: names and patterns of skills listed by name alone.
    name_only: skill_rules::SkillPatterns,
    /// `userOnly`: names and patterns of skills kept from the model.
    user_only: skill_rules::SkillPatterns,
    /// With a budget, the configuration's text without it.
    without_budget: Option<String>,
}

impl CatalogOptions {
    /// Reads the options from the configuration the plugin already accepted
    /// (so its values are valid; an empty text is the defaults, as for the
    /// plugin).
    fn parse(config: Option<&str>) -> Result<Self> {
        let Some(config) = config.filter(|text| !text.trim().is_empty()) else {
            return Ok(Self::default());
        };
        let mut value: Value =
            serde_json::from_str(config).context("cannot read the configuration's catalog options")?;
        let budget = value.get("catalogBudget").and_then(integer);
        let patterns = |key: &str| skill_rules::SkillPatterns::from_config(&value, key);
        let (exclude, pinned) = (patterns("catalogExclude"), skill_rules::config_names(&value, "catalogPinned"));
        let (name_only, user_only) = (patterns("catalogNameOnly"), patterns("userOnly"));
        let summaries = value.get("catalogSummaries").and_then(Value::as_bool).unwrap_or(false);
        let when_to_use = value.get("catalogWhenToUse").and_then(Value::as_bool).unwrap_or(false);
        let without_budget = match (budget, value.as_object_mut()) {
            (Some(_), Some(object)) => {
                object.remove("catalogBudget");
                Some(value.to_string())
            }
            _ => None,
        };
        Ok(Self { budget, exclude, pinned, summaries, when_to_use, name_only, user_only, without_budget })
    }

    /// The `catalogPinned` names no winning skill has, in the configuration's order.
    fn unmatched_pins(&self, snapshot: &RegistrySnapshot) -> Vec<String> {
        let mut unmatched: Vec<String> = Vec::new();
        for name in &self.pinned {
            let known = snapshot.skills.iter().any(|winner| winner.candidate.name == *name);
            if !known && !unmatched.contains(name) {
                unmatched.push(name.clone());
            }
        }
        unmatched
    }

    /// The first `catalogExclude` pattern that matches `name`.
    fn excluded_by(&self, name: &str) -> Option<&str> {
        self.exclude.first_match(name)
    }

    /// The first `catalogNameOnly` pattern that matches `name`.
    fn name_only_by(&self, name: &str) -> Option<&str> {
        self.name_only.first_match(name)
    }

    /// The first `userOnly` pattern that matches `name`.
    fn user_only_by(&self, name: &str) -> Option<&str> {
        self.user_only.first_match(name)
    }
}

/// An integer as the plugin reads one (`200`, `200.0`, `2e2`; larger than
/// `u64` saturates).
fn integer(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        let float = value.as_f64()?;
        // `as` saturates for floats beyond u64::MAX.
        (float.is_finite() && float.fract() == 0.0 && float >= 0.0).then_some(float as u64)
    })
}

/// The warning (and report line) for a `catalogPinned` name no skill has.
fn unmatched_pin(name: &str) -> String {
    format!("catalogPinned names \"{name}\", which matches no skill")
}

/// The providers whose listing failed or was incomplete, named as the
/// registry's warnings name them (`skill provider "{name}" …`), each once.
fn failed_providers(snapshot: &RegistrySnapshot) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for warning in &snapshot.warnings {
        if let Some(rest) = warning.strip_prefix("skill provider \"")
            && let Some((name, _)) = rest.split_once('"')
            && !names.iter().any(|known| known == name)
        {
            names.push(name.to_owned());
        }
    }
    names
}

/// Runs one pre-step on a fresh in-memory session with nothing proposed and
/// the tool visible, and returns the text of the catalog message it
/// publishes; `None` when it publishes none (no skill to list, or a listing
/// that is not complete).
fn published_catalog(plugin: &Plugin, registry: &Arc<SkillRegistry>, cwd: &str) -> Result<Option<String>> {
    let messages = preview_step(plugin, registry, Some(cwd), Vec::new())?;
    let Some(catalog) = messages.iter().find(|data| is_catalog_source(&data["source"])) else {
        return Ok(None);
    };
    let text = single_text(catalog).context("the plugin's catalog message is not a single text block")?;
    Ok(Some(text.to_owned()))
}

/// Whether a message's source is a complete catalog's: the plugin's own
/// (not its `catalog-update` form) or DeepSeek Harness's `skill-catalog`.
fn is_catalog_source(source: &Value) -> bool {
    matches!(Record::from_value(source), Ok(Record::Catalog | Record::SkillCatalog(_)))
}

/// What the published catalog message shows.
#[derive(Debug, Default)]
struct PublishedCatalog {
    /// Characters of the whole message text.
    message_chars: usize,
    /// Characters of the entry lines, each with its line break (what
    /// `catalogBudget` bounds).
    entry_chars: usize,
    /// The coverage line of a budgeted catalog.
    coverage: Option<String>,
    /// Each listed skill's description as shown, unescaped.
    entries: BTreeMap<String, String>,
    /// Whether a catalog message was published at all.
    published: bool,
}

impl PublishedCatalog {
    /// The catalog `plugin` publishes on a fresh session (empty when none).
    fn read(plugin: &Plugin, registry: &Arc<SkillRegistry>, cwd: &str) -> Result<Self> {
        match published_catalog(plugin, registry, cwd)? {
            Some(text) => Self::parse(&text),
            None => Ok(Self { published: false, ..Self::default() }),
        }
    }

    /// Reads the entry lines and the coverage line between the markers.
    fn parse(text: &str) -> Result<Self> {
        let start = text.find(OPEN_MARKER).context("the plugin's catalog message has no <available_skills> block")?
            + OPEN_MARKER.len();
        let length = text[start..]
            .find(CLOSE_MARKER)
            .context("the plugin's catalog message does not close its <available_skills>")?;
        let mut catalog = Self { message_chars: text.chars().count(), published: true, ..Self::default() };
        // Split on line breaks only: each line is counted with its `\n`.
        for line in text[start..start + length].split_terminator('\n') {
            if let Some(rest) = line.strip_prefix("- `")
                && let Some((name, description)) = rest.split_once("`: ")
            {
                catalog.entry_chars += line.chars().count() + 1;
                catalog.entries.insert(name.to_owned(), unescape(description));
            } else if line.starts_with(COVERAGE_PREFIX) && catalog.coverage.is_none() {
                catalog.coverage = Some(line.to_owned());
            } else {
                bail!("the plugin's catalog message has a line that is neither an entry nor the coverage line: {line}");
            }
        }
        Ok(catalog)
    }
}

/// Undoes the catalog's escaping of `&`, `<` and `>` (docs/spec.md §3.4).
fn unescape(escaped: &str) -> String {
    let mut text = String::with_capacity(escaped.len());
    let mut rest = escaped;
    while let Some(index) = rest.find('&') {
        text.push_str(&rest[..index]);
        rest = &rest[index..];
        let (c, entity) = [('&', "&amp;"), ('<', "&lt;"), ('>', "&gt;")]
            .into_iter()
            .find(|(_, entity)| rest.starts_with(entity))
            .unwrap_or(('&', "&"));
        text.push(c);
        rest = &rest[entity.len()..];
    }
    text.push_str(rest);
    text
}

/// What cut a listed description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// The budget's equal share (`catalogBudget`).
    Budget,
    /// The cap on every description (`catalogDescriptionMaxLength`).
    DescriptionMaxLength,
}

impl Cut {
    /// The configuration key that did it, as the report names it.
    fn key(self) -> &'static str {
        match self {
            Self::Budget => "catalogBudget",
            Self::DescriptionMaxLength => "catalogDescriptionMaxLength",
        }
    }
}

/// Why a skill is, or is not, in the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status<'a> {
    /// Listed with its whole description.
    Listed,
    /// Listed with its description cut.
    Shortened(Cut),
    /// Listed with the first sentence of its description alone
    /// (`catalogSummaries` under `catalogBudget`).
    Summarised,
    /// Listed by its name alone: a `catalogNameOnly` pattern matches it.
    NameOnly(&'a str),
    /// Could be listed, but the budget left it out.
    LeftOut,
    /// A `catalogExclude` pattern leaves it out.
    Excluded(&'a str),
    /// Its invocation policy keeps it from the model.
    NotModelInvocable,
    /// A `userOnly` pattern keeps it from the model.
    UserOnly(&'a str),
    /// No catalog was published: the plugin publishes one only from a
    /// complete listing, and these providers failed (or listed incompletely).
    ProviderFailed(&'a [String]),
}

impl Status<'_> {
    /// The name `--json` gives it.
    fn name(self) -> &'static str {
        match self {
            Self::Listed => "listed",
            Self::Shortened(_) => "shortened",
            Self::Summarised => "summarised",
            Self::NameOnly(_) => "name-only",
            Self::UserOnly(_) => "user-only",
            Self::LeftOut => "left-out",
            Self::Excluded(_) => "excluded",
            Self::NotModelInvocable => "not-model-invocable",
            Self::ProviderFailed(_) => "provider-failed",
        }
    }

    /// What `--json` names as its cause: the key that cut it or left it out.
    fn by(self) -> Option<&'static str> {
        match self {
            Self::Shortened(cut) => Some(cut.key()),
            Self::Summarised | Self::LeftOut => Some(Cut::Budget.key()),
            _ => None,
        }
    }

    /// The table's words for it.
    fn text(self) -> String {
        match self {
            Self::Listed => "listed".to_owned(),
            Self::Shortened(cut) => format!("shortened by {}", cut.key()),
            Self::Summarised => format!("summarised by {}", Cut::Budget.key()),
            Self::NameOnly(pattern) => format!("name only by \"{pattern}\""),
            Self::UserOnly(pattern) => format!("user-only by \"{pattern}\""),
            Self::LeftOut => format!("left out by {}", Cut::Budget.key()),
            Self::Excluded(pattern) => format!("excluded by \"{pattern}\""),
            Self::NotModelInvocable => "not model-invocable".to_owned(),
            Self::ProviderFailed([]) => "not listed: the listing is incomplete".to_owned(),
            Self::ProviderFailed(names) => {
                let quoted: Vec<String> = names.iter().map(|name| format!("\"{name}\"")).collect();
                let noun = if names.len() == 1 { "provider" } else { "providers" };
                format!("not listed: {noun} {} failed", quoted.join(", "))
            }
        }
    }
}

/// What the rows are read from.
struct Sources<'a> {
    options: &'a CatalogOptions,
    /// The catalog under the whole configuration.
    published: &'a PublishedCatalog,
    /// The catalog without the budget (the published one when there is none).
    capped: &'a PublishedCatalog,
    /// The providers that failed, as [`failed_providers`] names them.
    failed: &'a [String],
}

/// One winning skill and how the catalog shows it.
#[derive(Debug)]
struct Row<'a> {
    name: &'a str,
    status: Status<'a>,
    /// Named in `catalogPinned`.
    pinned: bool,
    /// Characters of its description as listed, and as a whole (listed skills only).
    shown: Option<(usize, usize)>,
}

/// A row per winning skill, in name order. What is listed is read from the
/// published catalog; why anything else is missing, from its policy, the
/// configuration and the listing's completeness.
fn rows<'a>(snapshot: &'a RegistrySnapshot, sources: &Sources<'a>) -> Vec<Row<'a>> {
    let Sources { options, published, capped, failed } = *sources;
    for name in published.entries.keys() {
        if !snapshot.skills.iter().any(|winner| winner.candidate.name == *name) {
            warn(&format!("the catalog lists \"{name}\", which the registry's listing does not hold"));
        }
    }
    snapshot
        .skills
        .iter()
        .map(|winner| {
            let skill = &winner.candidate;
            let name = skill.name.as_str();
            let pinned = options.pinned.iter().any(|pin| pin == name);
            if let Some(shown) = published.entries.get(name) {
                let whole = skill_rules::normalise_description(&if options.when_to_use {
                    skill_rules::with_when_to_use(&skill.description, skill.when_to_use.as_deref())
                } else {
                    skill.description.as_str().into()
                });
                // The description the budget started from: capped, not cut.
                let capped_entry = capped.entries.get(name);
                let summarised = options.summaries
                    && options.budget.is_some()
                    && capped_entry
                        .is_some_and(|capped| capped != shown && skill_rules::first_sentence(capped) == shown);
                let status = if let Some(pattern) = options.name_only_by(name) {
                    Status::NameOnly(pattern)
                } else if *shown == whole {
                    Status::Listed
                } else if summarised {
                    Status::Summarised
                } else if options.budget.is_some() && capped_entry != Some(shown) {
                    Status::Shortened(Cut::Budget)
                } else {
                    Status::Shortened(Cut::DescriptionMaxLength)
                };
                return Row { name, status, pinned, shown: Some((shown.chars().count(), whole.chars().count())) };
            }
            let status = if !skill.invocation.model_invocable {
                Status::NotModelInvocable
            } else if let Some(pattern) = options.user_only_by(name) {
                Status::UserOnly(pattern)
            } else if let Some(pattern) = options.excluded_by(name) {
                Status::Excluded(pattern)
            } else if !published.published && !snapshot.complete {
                Status::ProviderFailed(failed)
            } else {
                Status::LeftOut
            };
            Row { name, status, pinned, shown: None }
        })
        .collect()
}

/// Everything the report says.
struct Report<'a> {
    sources: Sources<'a>,
    rows: Vec<Row<'a>>,
    /// `catalogPinned` names no skill has.
    unmatched: Vec<String>,
    complete: bool,
}

impl Report<'_> {
    /// The report as text: the counts, the coverage line, then a table and
    /// what else needs saying.
    fn text(&self) -> String {
        let Sources { options, published, .. } = self.sources;
        let budget = options.budget.map(|budget| format!(" (budget {budget})")).unwrap_or_default();
        let mut out = format!("entry lines: {} characters{budget}\n", published.entry_chars);
        out.push_str(&format!("message: {} characters\n", published.message_chars));
        if let Some(coverage) = &published.coverage {
            out.push_str(coverage);
            out.push('\n');
        }
        out.push('\n');
        let mut table = vec![["NAME", "STATUS", "SHOWN"].map(str::to_owned)];
        for row in &self.rows {
            let shown = row.shown.map_or_else(|| "-".to_owned(), |(shown, full)| format!("{shown}/{full}"));
            let pinned = if row.pinned { ", pinned" } else { "" };
            table.push([row.name.to_owned(), format!("{}{pinned}", row.status.text()), shown]);
        }
        let mut widths = [0; 3];
        for row in &table {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        for row in &table {
            let cells: Vec<String> = row.iter().zip(widths).map(|(cell, width)| format!("{cell:<width$}")).collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        for name in &self.unmatched {
            out.push_str(&unmatched_pin(name));
            out.push('\n');
        }
        if !self.complete {
            out.push_str("incomplete: some skill state could not be read (see warnings)\n");
        }
        out
    }

    /// What `--check` reports, one line each: every model-invocable skill
    /// that is not listed whole (excluded, name-only and user-only ones are
    /// the configuration's choice), then the count; empty when all are whole.
    fn check_failures(&self) -> Vec<String> {
        let mut lines: Vec<String> = Vec::new();
        let mut considered = 0;
        for row in &self.rows {
            match row.status {
                Status::Listed => considered += 1,
                // The configuration's choices, as exclusion is.
                Status::Excluded(_) | Status::NotModelInvocable | Status::UserOnly(_) | Status::NameOnly(_) => {}
                Status::Shortened(_) | Status::Summarised | Status::LeftOut | Status::ProviderFailed(_) => {
                    considered += 1;
                    let shown =
                        row.shown.map(|(shown, full)| format!(" ({shown} of {full} characters)")).unwrap_or_default();
                    lines.push(format!("\"{}\" {}{shown}", row.name, row.status.text()));
                }
            }
        }
        if !lines.is_empty() {
            let noun = if considered == 1 { "skill" } else { "skills" };
            lines.push(format!("{} of {considered} model-invocable {noun} would not be shown whole", lines.len()));
        }
        lines
    }

    /// The report as `--json` prints it.
    fn json(&self) -> Value {
        let Sources { options, published, failed, .. } = self.sources;
        json!({
            "entryCharacters": published.entry_chars,
            "budget": options.budget,
            "messageCharacters": published.message_chars,
            "coverage": published.coverage,
            "skills": self.rows.iter().map(|row| json!({
                "name": row.name,
                "status": row.status.name(),
                "by": row.status.by(),
                "pinned": row.pinned,
                "shown": row.shown.map(|(shown, _)| shown),
                "full": row.shown.map(|(_, full)| full),
                "pattern": match row.status {
                    Status::Excluded(pattern) | Status::NameOnly(pattern) | Status::UserOnly(pattern) => Some(pattern),
                    _ => None,
                },
            })).collect::<Vec<_>>(),
            "failedProviders": failed,
            "unmatchedPins": self.unmatched,
            "complete": self.complete,
        })
    }
}

#[cfg(test)]
mod tests;

//! Skill search (`skillSearch`, docs/spec.md §3.14): the `skill` tool's
//! `query` finds model-invocable skills by the words of their names and
//! descriptions, including the ones a catalog budget left out, so a model
//! facing a shortened catalog can still reach every skill.

use crate::config::Config;
use crate::escape;
use crate::tool::ToolError;
use crate::types::{Registry, SkillSummary};

mod text;

use text::Unit;

pub use skill_rules::MAX_SEARCH_MATCHES;

/// The most query words that count; the rest are ignored.
const MAX_QUERY_WORDS: usize = 16;

const FOUND_HEAD: &str = "Skills matching the query:";
const FOUND_TAIL: &str = "Load one by calling the `skill` tool with its exact `name`.";
const NOTHING_FOUND: &str =
    "No skill matches the query. Try other words, or load a skill by the exact name the user gave.";

/// One skill a query found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillMatch {
    /// Its name.
    pub name: String,
    /// Its description, normalised and capped as in the catalog, not escaped.
    pub description: String,
}

/// What a query found, best first, and how many matched in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matches {
    /// At most [`MAX_SEARCH_MATCHES`], best first.
    pub best: Vec<SkillMatch>,
    /// How many skills matched.
    pub matched: usize,
}

/// Searches the registry's winners for `query`: a skill matches when a
/// query word is one of its name's parts, inside its name, or a word of its
/// description (or the start of one, for words of three letters or more).
/// Ranked by how many query words match, then by the score (3 for a name
/// part, 2 inside the name, 1 in the description), then by name. Words are
/// the units of the folded texts (`text`): for ASCII, lower-cased runs of
/// letters and digits.
pub fn search(config: &Config, registry: &impl Registry, query: &str) -> Result<Matches, ToolError> {
    let words = query_words(query);
    if words.is_empty() {
        return Err(ToolError::InvalidArguments("\"query\" has no words to search for".to_owned()));
    }
    let skills = registry.list(None)?;
    let mut ranked: Vec<((usize, usize), &SkillSummary)> = skills
        .iter()
        .filter(|skill| skill.invocation.model_invocable && !config.excludes(&skill.name))
        .filter_map(|skill| {
            let rank = rank(&words, skill);
            (rank.0 > 0).then_some((rank, skill))
        })
        .collect();
    // Names are unique in a listing: the order is total.
    ranked.sort_by(|(a, first), (b, second)| b.cmp(a).then_with(|| first.name.cmp(&second.name)));
    let matched = ranked.len();
    let best = ranked
        .into_iter()
        .take(MAX_SEARCH_MATCHES)
        .map(|(_, skill)| SkillMatch {
            name: skill.name.clone(),
            description: crate::catalog::capped(
                &skill.description,
                config.catalog_description_max_length,
                config.catalog_form,
            ),
        })
        .collect();
    Ok(Matches { best, matched })
}

/// (query words matched, score) for one skill.
fn rank(words: &[Unit], skill: &SkillSummary) -> (usize, usize) {
    let description = text::units(&text::fold(&skill.description));
    let mut matched = 0;
    let mut score = 0;
    for word in words {
        let points = if skill.name.split('-').any(|part| part == word.text) {
            3
        } else if skill.name.contains(word.text.as_str()) {
            2
        } else if description.iter().any(|known| in_description(word, &known.text)) {
            1
        } else {
            0
        };
        if points > 0 {
            matched += 1;
            score += points;
        }
    }
    (matched, score)
}

/// Whether the query word `word` matches the description unit `known`: it
/// is that unit, or the start of it for words of three characters or more;
/// a lone character of a spaceless script matches a unit holding it.
fn in_description(word: &Unit, known: &str) -> bool {
    known == word.text
        || (word.text.chars().count() >= 3 && known.starts_with(word.text.as_str()))
        || (word.lone_spaceless && known.contains(word.text.as_str()))
}

/// The first [`MAX_QUERY_WORDS`] distinct units of the folded `query`.
fn query_words(query: &str) -> Vec<Unit> {
    let mut words: Vec<Unit> = Vec::new();
    for word in text::units(&text::fold(query)) {
        if !words.iter().any(|known| known.text == word.text) {
            words.push(word);
            if words.len() == MAX_QUERY_WORDS {
                break;
            }
        }
    }
    words
}

impl Matches {
    /// The text the model sees (docs/spec.md §3.14).
    pub fn render(&self) -> String {
        if self.best.is_empty() {
            return NOTHING_FOUND.to_owned();
        }
        let mut text = if self.matched > self.best.len() {
            format!("The best {} of {} skills matching the query:", self.best.len(), self.matched)
        } else {
            FOUND_HEAD.to_owned()
        };
        for skill in &self.best {
            text.push_str("\n- `");
            text.push_str(&skill.name);
            text.push_str("`: ");
            text.push_str(&escape::text(&skill.description));
        }
        text.push_str("\n\n");
        text.push_str(FOUND_TAIL);
        text
    }
}

#[cfg(test)]
mod tests;

//! Skill search (`skillSearch`, docs/spec.md §3.14): the `skill` tool's
//! `query` finds model-invocable skills by the words of their names and
//! descriptions, including the ones a catalog budget left out, so a model
//! facing a shortened catalog can still reach every skill.

use crate::config::Config;
use crate::escape;
use crate::tool::ToolError;
use crate::types::{Registry, SkillSummary};

mod index;
mod terms;
mod text;

use index::Index;
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

/// Searches the registry's winners for `query`: each model-invocable skill
/// not excluded is scored by BM25F over its name and description
/// (docs/spec.md §3.14, `search/index.rs`); those that score are ranked
/// by score, then by name.
pub fn search(config: &Config, registry: &impl Registry, query: &str) -> Result<Matches, ToolError> {
    let words = query_words(query);
    if words.is_empty() {
        return Err(ToolError::InvalidArguments("\"query\" has no words to search for".to_owned()));
    }
    let skills = registry.list(None)?;
    let searchable: Vec<&SkillSummary> =
        skills.iter().filter(|skill| skill.invocation.model_invocable && !config.excludes(&skill.name)).collect();
    let texts: Vec<[&str; index::FIELD_COUNT]> =
        searchable.iter().map(|skill| [skill.name.as_str(), skill.description.as_str()]).collect();
    let scores = Index::for_skills(&texts).scores(&searched_words(words));
    let mut ranked: Vec<(f64, &SkillSummary)> =
        scores.into_iter().zip(searchable).filter(|(score, _)| *score > 0.0).collect();
    // Names are unique in a listing: the order is total.
    ranked.sort_by(|(a, first), (b, second)| b.total_cmp(a).then_with(|| first.name.cmp(&second.name)));
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

/// The query words searched for: those that are not stop words, or all of
/// them when every one is.
fn searched_words(words: Vec<Unit>) -> Vec<Unit> {
    if words.iter().all(terms::is_stop_word) {
        return words;
    }
    words.into_iter().filter(|word| !terms::is_stop_word(word)).collect()
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

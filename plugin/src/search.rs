//! Skill search (`skillSearch`, docs/spec.md §3.14): the `skill` tool's
//! `query` finds model-invocable skills by the words of their names and
//! descriptions, including the ones a catalog budget left out, so a model
//! facing a shortened catalog can still reach every skill.

use crate::config::Config;
use crate::escape;
use crate::tool::ToolError;
use crate::types::{Registry, SkillSummary};

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
/// part, 2 inside the name, 1 in the description), then by name.
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
fn rank(words: &[String], skill: &SkillSummary) -> (usize, usize) {
    let description = skill.description.to_lowercase();
    let description: Vec<&str> = description.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let mut matched = 0;
    let mut score = 0;
    for word in words {
        let points = if skill.name.split('-').any(|part| part == word) {
            3
        } else if skill.name.contains(word.as_str()) {
            2
        } else if description
            .iter()
            .any(|known| *known == word.as_str() || (word.chars().count() >= 3 && known.starts_with(word.as_str())))
        {
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

/// The first [`MAX_QUERY_WORDS`] distinct lower-case words of `query`:
/// runs of letters and digits.
fn query_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in query.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()) {
        let word = word.to_lowercase();
        if !words.contains(&word) {
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
mod tests {
    use super::*;
    use crate::types::{RegistryError, SkillDefinition, SnapshotAnswer};

    struct Listing(Vec<SkillSummary>);

    impl Registry for Listing {
        fn snapshot(&self, _known: Option<u64>) -> Result<SnapshotAnswer, RegistryError> {
            unreachable!()
        }
        fn list(&self, name: Option<&str>) -> Result<Vec<SkillSummary>, RegistryError> {
            assert_eq!(name, None, "a search lists every skill");
            Ok(self.0.clone())
        }
        fn get(&self, _name: &str) -> Result<Option<SkillDefinition>, RegistryError> {
            unreachable!()
        }
    }

    fn skill(name: &str, description: &str, model_invocable: bool) -> SkillSummary {
        SkillSummary::for_test(name, description, model_invocable)
    }

    fn listing() -> Listing {
        Listing(vec![
            skill("deploy-production", "Ship the current release to production.", true),
            skill("release-notes", "Write release notes from merged pull requests.", true),
            skill("tag-release", "Create and push an annotated release tag.", true),
            skill("secret-deploy", "Deploy by hand.", false),
            skill("triage-bug", "Triage a <bug> report & label it.", true),
            skill("notes-fr", "Rédiger des notes.", true),
        ])
    }

    fn names(matches: &Matches) -> Vec<&str> {
        matches.best.iter().map(|skill| skill.name.as_str()).collect()
    }

    #[test]
    fn ranks_by_words_matched_then_score_then_name() {
        let config = Config::default();
        let found = search(&config, &listing(), "Release tag").unwrap();
        assert_eq!(names(&found), ["tag-release", "release-notes", "deploy-production"]);
        assert_eq!(found.matched, 3);
        // Only model-invocable skills, and never an excluded one.
        let found = search(&config, &listing(), "deploy").unwrap();
        assert_eq!(names(&found), ["deploy-production"]);
        let excluding = Config::parse(r#"{"catalogExclude":["deploy-*"]}"#).unwrap();
        assert!(search(&excluding, &listing(), "deploy").unwrap().best.is_empty());
        // A description word's start counts from three letters.
        assert_eq!(names(&search(&config, &listing(), "annot").unwrap()), ["tag-release"]);
        assert!(search(&config, &listing(), "pu").unwrap().best.is_empty());
        // Three characters, not bytes.
        assert!(search(&config, &listing(), "ré").unwrap().best.is_empty());
        assert_eq!(names(&search(&config, &listing(), "RÉD").unwrap()), ["notes-fr"]);
    }

    #[test]
    fn renders_exactly() {
        let config = Config::default();
        assert_eq!(
            search(&config, &listing(), "bug").unwrap().render(),
            "Skills matching the query:\n- `triage-bug`: Triage a &lt;bug&gt; report &amp; label it.\n\nLoad one by calling the `skill` tool with its exact `name`."
        );
        assert_eq!(
            search(&config, &listing(), "kubernetes").unwrap().render(),
            "No skill matches the query. Try other words, or load a skill by the exact name the user gave."
        );
        let many = Listing((0..8).map(|i| skill(&format!("s{i}-pdf"), "Pdf.", true)).collect());
        let found = search(&config, &many, "pdf").unwrap();
        assert_eq!((found.best.len(), found.matched), (MAX_SEARCH_MATCHES, 8));
        assert!(found.render().starts_with("The best 5 of 8 skills matching the query:\n- `s0-pdf`: Pdf.\n"));
    }

    #[test]
    fn only_the_first_sixteen_distinct_words_count() {
        let mut query: Vec<String> = (0..16).map(|i| format!("w{i}")).collect();
        query.push("bug".to_owned());
        assert!(search(&Config::default(), &listing(), &query.join(" ")).unwrap().best.is_empty());
        query.insert(3, "bug".to_owned());
        assert_eq!(names(&search(&Config::default(), &listing(), &query.join(" ")).unwrap()), ["triage-bug"]);
        // A long query costs its first words only.
        let long: String = (0..100_000).map(|i| format!("x{i} ")).collect();
        assert!(search(&Config::default(), &listing(), &long).unwrap().best.is_empty());
    }

    #[test]
    fn a_query_without_words_is_refused() {
        assert_eq!(
            search(&Config::default(), &listing(), " -- ").unwrap_err().model_text(),
            "Error: invalid arguments: \"query\" has no words to search for"
        );
    }
}

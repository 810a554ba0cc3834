//! Search (docs/spec.md §3.14): ranking and rendering, then search across
//! scripts and forms (the folding and the units of `text.rs`).

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
fn ranks_by_score_then_name() {
    let config = Config::default();
    // "tag" and "release" are both parts of tag-release's name; the others
    // hold "release" once.
    let found = search(&config, &listing(), "Release tag").unwrap();
    assert_eq!(names(&found), ["tag-release", "release-notes", "deploy-production"]);
    assert_eq!(found.matched, 3);
    // Equal scores: by name.
    let twins = Listing(vec![skill("b-lint", "Lint code.", true), skill("a-lint", "Lint code.", true)]);
    assert_eq!(names(&search(&config, &twins, "lint").unwrap()), ["a-lint", "b-lint"]);
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
fn word_forms_meet_at_their_stem_and_stop_words_do_not_count() {
    let config = Config::default();
    // "creating" and "Create" share the stem "creat"; "releases" and
    // "release" the stem "releas".
    assert_eq!(names(&search(&config, &listing(), "creating releases").unwrap())[0], "tag-release");
    // A stem starts a longer word: "annotating" (stem "annot") finds "annotated".
    assert_eq!(names(&search(&config, &listing(), "annotating").unwrap()), ["tag-release"]);
    // "the", "a" and "for" are stop words: the query is "bug".
    assert_eq!(search(&config, &listing(), "the bug for a").unwrap(), search(&config, &listing(), "bug").unwrap());
    // A query of stop words only searches for them all.
    assert_eq!(names(&search(&config, &listing(), "a").unwrap()), ["triage-bug"]);
}

#[test]
fn a_name_weighs_more_than_a_description_and_a_rare_word_more_than_a_common_one() {
    let config = Config::default();
    let skills = Listing(vec![
        skill("chart-maker", "Draw diagrams from data.", true),
        skill("diagram-drawer", "Draw a chart from data.", true),
        skill("sql-helper", "Write queries from data.", true),
    ]);
    assert_eq!(names(&search(&config, &skills, "chart").unwrap()), ["chart-maker", "diagram-drawer"]);
    // "data" is in every description, "queries" in one.
    assert_eq!(names(&search(&config, &skills, "data queries").unwrap())[0], "sql-helper");
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

// Across scripts and forms.

fn unicode_listing() -> Listing {
    Listing(vec![
        SkillSummary::for_test("translate-ja", "日本語のドキュメントを翻訳する。", true),
        SkillSummary::for_test("street-names", "Normalise Straße and other street names.", true),
        SkillSummary::for_test("resume-review", "Review a re\u{301}sume\u{301} (written in NFD).", true),
        SkillSummary::for_test("pdf-convert", "PDFを変換する", true),
        SkillSummary::for_test("korean-docs", "한국어 문서를 요약한다", true),
        SkillSummary::for_test("cat-photos", "猫", true),
    ])
}

fn found(query: &str) -> Vec<String> {
    search(&Config::default(), &unicode_listing(), query).unwrap().best.into_iter().map(|skill| skill.name).collect()
}

#[test]
fn words_inside_cjk_descriptions_are_found() {
    assert_eq!(found("日本語"), ["translate-ja"]);
    assert_eq!(found("翻訳"), ["translate-ja"]);
    assert_eq!(found("ドキュメント"), ["translate-ja"]);
    assert_eq!(found("문서"), ["korean-docs"]);
    // A query of one such character finds a unit holding it.
    assert_eq!(found("訳"), ["translate-ja"]);
    assert_eq!(found("猫"), ["cat-photos"]);
    // Bigrams the text does not hold do not match.
    assert!(found("中国語").is_empty());
}

#[test]
fn nfc_and_nfd_forms_find_each_other() {
    assert_eq!(found("résumé"), ["resume-review"]);
    assert_eq!(found("Re\u{301}sume\u{301}"), ["resume-review"]);
}

#[test]
fn full_case_folding_finds_strasse() {
    assert_eq!(found("STRASSE"), ["street-names"]);
    assert_eq!(found("straße"), ["street-names"]);
    assert_eq!(found("STRAẞE"), ["street-names"]);
}

#[test]
fn full_width_ascii_is_ascii() {
    assert_eq!(found("ＰＤＦ"), ["pdf-convert"]);
    // Full-width letters reach the name too: "ｃｏｎｖｅｒｔ" is a name part.
    let matches = search(&Config::default(), &unicode_listing(), "ｃｏｎｖｅｒｔ").unwrap();
    assert_eq!(matches.best[0].name, "pdf-convert");
}

#[test]
fn a_mixed_script_query_counts_each_unit() {
    // "pdf" is a name part and "変換" a description bigram: two units.
    assert_eq!(found("PDF変換"), ["pdf-convert"]);
    let words = query_words("PDF変換 review 日本語");
    assert_eq!(
        words.iter().map(|unit| unit.text.as_str()).collect::<Vec<_>>(),
        ["pdf", "変換", "review", "日本", "本語"]
    );
    // The skill matching more units ranks first.
    assert_eq!(found("日本語 変換"), ["translate-ja", "pdf-convert"]);
}

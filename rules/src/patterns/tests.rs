use alloc::borrow::ToOwned;
use alloc::vec::Vec;

use super::*;
use crate::matches_skill_pattern;

fn compiled(patterns: &[&str]) -> SkillPatterns {
    SkillPatterns::new(patterns.iter().map(|&pattern| pattern.to_owned()).collect())
}

#[test]
fn matches_what_the_rule_matches() {
    let patterns = compiled(&["deploy-*", "*-draft", "a?c", "*a*b*", "review-pr", "x**y"]);
    for name in ["deploy-production", "deploy-", "release-notes-draft", "abc", "xxaxxbxx", "review-pr", "xy", "xqqy"] {
        assert!(patterns.matches(name), "{name}");
    }
    for name in ["deploy", "ac", "review-prs", "draft", "b-a", "x"] {
        assert!(!patterns.matches(name), "{name}");
    }
    assert!(!SkillPatterns::EMPTY.matches("a") && SkillPatterns::EMPTY.first_match("a").is_none());
    assert!(compiled(&["*"]).matches("anything"));
    assert_eq!(compiled(&["a-*", "*"]), compiled(&["a-*", "*"]));
}

#[test]
fn the_first_match_is_the_first_pattern_in_order() {
    let patterns = compiled(&["z*", "*-notes", "release-*", "release-notes"]);
    assert_eq!(patterns.first_match("release-notes"), Some("*-notes"));
    assert_eq!(patterns.first_match("release-x"), Some("release-*"));
    assert_eq!(patterns.first_match("notes"), None);
    // Equal patterns after collapsing stars: the first one is named.
    assert_eq!(compiled(&["a**", "a*"]).first_match("ab"), Some("a**"));
}

/// A fixed pseudo-random sequence (no dependency, same on every run).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, bound: usize) -> usize {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % bound as u64) as usize
    }

    fn word(&mut self, alphabet: &[u8], longest: usize) -> String {
        let length = 1 + self.below(longest);
        (0..length).map(|_| char::from(alphabet[self.below(alphabet.len())])).collect()
    }
}

#[test]
fn agrees_with_the_rule_on_random_lists_and_names() {
    let mut random = Lcg(25);
    for _ in 0..300 {
        let count = 1 + random.below(12);
        let patterns: Vec<String> = (0..count).map(|_| random.word(b"ab-*?", 8)).collect();
        let compiled = SkillPatterns::new(patterns.clone());
        for _ in 0..40 {
            let name = random.word(b"ab-", 10);
            let expected = patterns.iter().find(|pattern| matches_skill_pattern(pattern, &name));
            assert_eq!(compiled.first_match(&name), expected.map(String::as_str), "{patterns:?} {name}");
            assert_eq!(compiled.matches(&name), expected.is_some(), "{patterns:?} {name}");
        }
    }
}

#[test]
fn many_star_patterns_stay_cheap() {
    // 1,024 patterns that each make the one-by-one rule backtrack.
    let patterns: Vec<String> = (0..1024).map(|i| alloc::format!("*-service-*-{i}x-*-handler*")).collect();
    let compiled = SkillPatterns::new(patterns);
    let names = ["team-1-service-component-2-handler-module", "team-1-service-a-7x-b-handler"];
    assert!(!compiled.matches(names[0]));
    assert_eq!(compiled.first_match(names[1]), Some("*-service-*-7x-*-handler*"));
}

//! Word forms for search (docs/spec.md §3.14): a unit's stem, so that
//! `creating`, `creates` and `create` are one term, and the stop words a
//! query drops, so that `make a GIF for our Slack channel` searches for
//! `make`, `gif`, `slack` and `channel`.
//!
//! The stemmer is Snowball's English (Porter2) algorithm from
//! `rust-stemmers`; the stop words are NLTK's English list from
//! `stop-words`, copied out by `build.rs`. Both only ever see folded units (`text`), which are lower
//! case and hold no apostrophes (`don't` is the units `don` and `t`, both
//! on the list).

use std::cell::OnceCell;

use rust_stemmers::{Algorithm, Stemmer};

use super::text::{Unit, is_spaceless};

thread_local! {
    static ENGLISH: OnceCell<Stemmer> = const { OnceCell::new() };
}

/// The term `unit` counts as: a unit of a spaceless script as it is (its
/// characters are not English words), any other its Snowball English stem.
pub fn stem(unit: &Unit) -> String {
    if unit.text.chars().next().is_none_or(is_spaceless) {
        return unit.text.clone();
    }
    ENGLISH.with(|english| english.get_or_init(|| Stemmer::create(Algorithm::English)).stem(&unit.text).into_owned())
}

/// Whether `unit` is an English stop word (NLTK's list).
pub fn is_stop_word(unit: &Unit) -> bool {
    STOP_WORDS.binary_search(&unit.text.as_str()).is_ok()
}

include!(concat!(env!("OUT_DIR"), "/stop_words.rs"));

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(text: &str) -> Unit {
        Unit { text: text.to_owned(), lone_spaceless: false }
    }

    #[test]
    fn stems_english_word_forms_alike() {
        for (forms, stemmed) in [
            (&["create", "creates", "creating", "created"][..], "creat"),
            (&["test", "tests", "testing", "tested"], "test"),
            (&["gif", "gifs"], "gif"),
            (&["animated", "animation", "animations"], "anim"),
            (&["simplify", "simplifies", "simplified"], "simplifi"),
        ] {
            for form in forms {
                assert_eq!(stem(&unit(form)), stemmed, "{form}");
            }
        }
        // Other scripts pass through Snowball English unchanged or alike on
        // both sides; spaceless units are never touched.
        assert_eq!(stem(&unit("résumé")), "résumé");
        assert_eq!(stem(&Unit { text: "翻訳".to_owned(), lone_spaceless: false }), "翻訳");
    }

    #[test]
    fn knows_nltk_english_stop_words() {
        for word in ["a", "the", "for", "our", "this", "my", "is", "don", "t", "should", "which"] {
            assert!(is_stop_word(&unit(word)), "{word}");
        }
        for word in ["make", "gif", "slack", "channel", "fill", "form", "pdf", "new", "use"] {
            assert!(!is_stop_word(&unit(word)), "{word}");
        }
    }
}

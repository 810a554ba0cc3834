//! The searchable form of a query and of a description (docs/spec.md §3.14):
//! one folding for both, so that compatibility forms (full-width letters,
//! ligatures), canonical forms (NFC against NFD) and case (`ß` against `SS`)
//! never decide whether a word matches; and units for scripts written
//! without spaces (Han, Hiragana, Katakana, Hangul), whose runs of letters
//! are sentences rather than words: their character bigrams are the units.

use unicode_normalization::UnicodeNormalization;

/// `text` folded for matching: NFKC, then full case folding (Unicode
/// `CaseFolding.txt`, statuses C and F), then NFKC again, since folding can
/// leave a text that is not normalised. ASCII text is only lower-cased,
/// which is the same result, cheaper.
pub fn fold(text: &str) -> String {
    if text.is_ascii() {
        return text.to_ascii_lowercase();
    }
    let compatible: String = text.nfkc().collect();
    caseless::default_case_fold_str(&compatible).nfkc().collect()
}

/// Whether `c` belongs to a script written without spaces between words:
/// Han (with the ideographic iteration and number marks), Hiragana,
/// Katakana or Hangul.
pub fn is_spaceless(c: char) -> bool {
    matches!(
        c,
        // Han: radicals, 々 〆 〇, Hangzhou numerals, ideographs and their
        // extensions and compatibility forms.
        '\u{2E80}'..='\u{2FDF}'
            | '\u{3005}'..='\u{3007}'
            | '\u{3021}'..='\u{3029}'
            | '\u{3038}'..='\u{303B}'
            | '\u{3400}'..='\u{4DBF}'
            | '\u{4E00}'..='\u{9FFF}'
            | '\u{F900}'..='\u{FAFF}'
            | '\u{20000}'..='\u{323AF}'
            // Hiragana, Katakana (with its phonetic extensions and the
            // half-width forms, which NFKC has already widened).
            | '\u{3041}'..='\u{30FF}'
            | '\u{31F0}'..='\u{31FF}'
            | '\u{FF66}'..='\u{FF9F}'
            // Hangul: Jamo, compatibility Jamo, extended Jamo, syllables.
            | '\u{1100}'..='\u{11FF}'
            | '\u{3131}'..='\u{318E}'
            | '\u{A960}'..='\u{A97F}'
            | '\u{AC00}'..='\u{D7FF}'
    )
}

/// One unit of a folded text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Its characters.
    pub text: String,
    /// A single character of a spaceless script (see [`is_spaceless`]).
    pub lone_spaceless: bool,
}

/// The units of a folded text, in order: each maximal run of letters and
/// digits (`char::is_alphanumeric`) is cut where it enters or leaves a
/// spaceless script; a part outside those scripts is one unit, a part inside
/// them of two characters or more gives each pair of adjacent characters as
/// a unit (`日本語` → `日本`, `本語`), and a part of one character is that
/// character.
pub fn units(folded: &str) -> Vec<Unit> {
    let mut units = Vec::new();
    for run in folded.split(|c: char| !c.is_alphanumeric()).filter(|run| !run.is_empty()) {
        let mut rest = run;
        while let Some(first) = rest.chars().next() {
            let spaceless = is_spaceless(first);
            let end = rest.find(|c: char| is_spaceless(c) != spaceless).unwrap_or(rest.len());
            let (part, after) = rest.split_at(end);
            rest = after;
            if !spaceless {
                units.push(Unit { text: part.to_owned(), lone_spaceless: false });
                continue;
            }
            let characters: Vec<char> = part.chars().collect();
            if let [lone] = characters[..] {
                units.push(Unit { text: lone.to_string(), lone_spaceless: true });
            }
            for pair in characters.windows(2) {
                units.push(Unit { text: pair.iter().collect(), lone_spaceless: false });
            }
        }
    }
    units
}

#[cfg(test)]
mod tests;

//! Catalog description normalisation (docs/spec.md §3.5): whitespace runs collapsed,
//! trimmed, and capped in characters.

/// The reference normalises with `/\s+/g`: ECMAScript's whitespace class.
pub use skill_rules::is_ecmascript_whitespace;

pub use skill_rules::with_when_to_use;

/// The suffix marking a truncated description.
pub const ELLIPSIS: &str = "...";

/// Collapses every whitespace run to one space, trims, and, when longer than
/// `max_chars`, keeps the first `max_chars - 3` characters and appends `...`.
/// Counts characters (Unicode scalar values), so a character is never split.
/// The result is not escaped yet.
pub fn catalog_description(raw: &str, max_chars: usize) -> String {
    let mut normalized = normalise(raw);
    // Fast path: a string with at most `max_chars` bytes has at most that many characters.
    if normalized.len() <= max_chars || normalized.chars().count() <= max_chars {
        return normalized;
    }
    let keep = max_chars.saturating_sub(ELLIPSIS.len());
    let cut = normalized.char_indices().nth(keep).map_or(normalized.len(), |(index, _)| index);
    normalized.truncate(cut);
    normalized.push_str(ELLIPSIS);
    normalized
}

/// As [`catalog_description`], but counting UTF-16 code units, as
/// DeepSeek Harness 0.1.0-rc.8 does (`catalogSource: "skill-catalog"`,
/// docs/spec.md §3.5). Where the reference keeps the first half of a
/// surrogate pair alone, this keeps U+FFFD in its place (a Rust string
/// cannot hold a lone surrogate; hosts read the reference's as U+FFFD too,
/// so both records of one catalog have one digest).
pub fn catalog_description_utf16(raw: &str, max_units: usize) -> String {
    let mut normalized = normalise(raw);
    // A string of at most `max_units` bytes has at most that many UTF-16 units.
    if normalized.len() <= max_units || normalized.encode_utf16().count() <= max_units {
        return normalized;
    }
    let keep = max_units.saturating_sub(ELLIPSIS.len());
    let mut units = 0;
    let mut cut = normalized.len();
    let mut split_pair = false;
    for (index, c) in normalized.char_indices() {
        if units + c.len_utf16() > keep {
            cut = index;
            split_pair = units < keep;
            break;
        }
        units += c.len_utf16();
    }
    normalized.truncate(cut);
    if split_pair {
        normalized.push(char::REPLACEMENT_CHARACTER);
    }
    normalized.push_str(ELLIPSIS);
    normalized
}

/// Collapses every whitespace run to one space and trims.
fn normalise(raw: &str) -> String {
    skill_rules::normalise_description(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn when_to_use_follows_the_description_as_one_text_normalised_and_capped_with_it() {
        let text = |description, when| catalog_description(&with_when_to_use(description, when), 40);
        assert_eq!(text("Ship it.", Some("Asked\tto deploy.")), "Ship it. When to use: Asked to deploy.");
        assert_eq!(text("Ship it. ", Some(" x ")), "Ship it. When to use: x");
        assert_eq!(text("", Some("Asked.")), "When to use: Asked.");
        assert_eq!(text("Ship it.", Some(" \n ")), "Ship it.");
        assert_eq!(text("Ship it.", None), "Ship it.");
        assert_eq!(
            text("Ship the release.", Some("The user asks to deploy.")),
            "Ship the release. When to use: The us..."
        );
    }

    #[test]
    fn collapses_every_ecmascript_whitespace_run_and_trims() {
        let raw = "\u{FEFF} a\t\tb\n\u{0B}\u{0C}\r c\u{A0}\u{1680}d\u{2000}\u{200A}e\u{2028}\u{2029}f\u{202F}\u{205F}\u{3000}g  ";
        assert_eq!(catalog_description(raw, 500), "a b c d e f g");
    }

    #[test]
    fn next_line_is_not_ecmascript_whitespace() {
        assert_eq!(catalog_description("a\u{85}b", 500), "a\u{85}b");
    }

    #[test]
    fn keeps_a_description_exactly_at_the_cap() {
        assert_eq!(catalog_description("abcde", 5), "abcde");
    }

    #[test]
    fn truncates_to_cap_minus_three_and_appends_ellipsis() {
        assert_eq!(catalog_description("abcdef", 5), "ab...");
        assert_eq!(catalog_description("abcd", 3), "...");
    }

    #[test]
    fn counts_characters_and_never_splits_one() {
        // Each emoji is one character (two UTF-16 units, four bytes).
        let raw = "😀😀😀😀😀😀";
        assert_eq!(catalog_description(raw, 5), "😀😀...");
        assert_eq!(catalog_description("ééééé", 5), "ééééé");
        assert_eq!(catalog_description("éééééé", 5), "éé...");
    }

    #[test]
    fn the_skill_catalog_form_counts_utf16_units() {
        // Each emoji is two UTF-16 units: the reference's `slice(0, 2)` keeps one.
        assert_eq!(catalog_description_utf16("😀😀😀😀😀😀", 5), "😀...");
        assert_eq!(catalog_description_utf16("😀😀", 4), "😀😀");
        assert_eq!(catalog_description_utf16("😀😀😀", 5), "😀...");
        assert_eq!(catalog_description_utf16("a😀😀😀", 6), "a😀...");
        // `slice(0, 3)` keeps a lone high surrogate: U+FFFD stands for it.
        assert_eq!(catalog_description_utf16("ab😀😀c", 6), "ab\u{FFFD}...");
        assert_eq!(catalog_description_utf16("éééééé", 5), "éé...");
        assert_eq!(catalog_description_utf16("  a   b  ", 3), "a b");
        assert_eq!(catalog_description_utf16("abcd", 3), "...");
    }

    #[test]
    fn normalises_before_measuring() {
        assert_eq!(catalog_description("  a   b  ", 3), "a b");
    }
}

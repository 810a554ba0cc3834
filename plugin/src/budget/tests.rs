use super::*;

fn candidate<'a>(name: &'a str, description: &'a str) -> Candidate<'a> {
    Candidate { name, description, pinned: false }
}

#[test]
fn everything_fits_whole_when_the_budget_allows() {
    let candidates = [candidate("a", "One."), candidate("b", "Two.")];
    // `- `a`: One.\n` is 12 characters.
    let (shown, coverage) = allocate(&candidates, 24, false);
    assert_eq!(shown, [Shown::Whole, Shown::Whole]);
    assert_eq!(coverage, Coverage { total: 2, listed: 2, shortened: 0, ..Coverage::default() });
}

#[test]
fn short_descriptions_keep_their_text_and_long_ones_share_equally() {
    let long = "x".repeat(100);
    let candidates = [candidate("a", "Hi."), candidate("b", &long), candidate("c", &long)];
    // Frames: 8 each (24); "Hi." 3; then 33 left for two: 16 each.
    let (shown, coverage) = allocate(&candidates, 24 + 3 + 33, false);
    assert_eq!(shown, [Shown::Whole, Shown::Cut(16), Shown::Cut(16)]);
    assert_eq!(coverage, Coverage { total: 3, listed: 3, shortened: 2, ..Coverage::default() });
}

#[test]
fn when_names_do_not_fit_pinned_come_first_then_name_order() {
    let candidates = [
        candidate("a", "One more."),
        candidate("b", "Two."),
        Candidate { name: "c", description: "Three.", pinned: true },
    ];
    // c whole: 8 + 6 = 14; then a with `...`: 11; b (11) does not fit
    // in the 2 left, which a's description takes.
    let (shown, coverage) = allocate(&candidates, 14 + 11 + 2, false);
    assert_eq!(shown, [Shown::Cut(5), Shown::LeftOut, Shown::Whole]);
    assert_eq!(coverage, Coverage { total: 3, listed: 2, shortened: 1, ..Coverage::default() });
    assert_eq!(coverage.left_out(), 1);
}

#[test]
fn a_pinned_skill_longer_than_the_budget_is_cut_like_the_others_not_dropped() {
    let long = "x".repeat(100);
    let candidates = [candidate("a", "One."), Candidate { name: "p", description: &long, pinned: true }];
    // p whole is 108 characters: cut, it takes 11 (`- `p`: ...\n`), a
    // 11 too; the 18 left give a its 1 more and p the other 17.
    let (shown, coverage) = allocate(&candidates, 40, false);
    assert_eq!(shown, [Shown::Whole, Shown::Cut(20)]);
    assert_eq!(coverage, Coverage { total: 2, listed: 2, shortened: 1, ..Coverage::default() });
    assert_eq!(cut(&long, 20).len() + "- `p`: \n".len() + "- `a`: One.\n".len(), 40);
}

#[test]
fn no_unpinned_skill_is_listed_while_a_pinned_one_is_left_out() {
    let candidates =
        [candidate("a", "One."), Candidate { name: "long-pinned-name", description: "Pinned.", pinned: true }];
    // The pinned name alone takes 26; `a` would fit in 15, but not after it.
    let (shown, coverage) = allocate(&candidates, 15, false);
    assert_eq!(shown, [Shown::LeftOut, Shown::LeftOut]);
    assert_eq!(coverage, Coverage { total: 2, listed: 0, shortened: 0, ..Coverage::default() });
}

#[test]
fn a_cut_counts_escaped_characters_and_keeps_whole_characters() {
    assert_eq!(cut("abcdefgh", 6), "abc...");
    assert_eq!(cut("ab cdefgh", 6), "ab...");
    assert_eq!(cut("a<bc", 7), "a...");
    assert_eq!(cut("a<bc", 8), "a<...");
    assert_eq!(cut("😀😀😀😀", 5), "😀😀...");
    assert_eq!(escaped_width("a&<>"), 1 + 5 + 4 + 4);
}

#[test]
fn the_coverage_line_is_exact() {
    let all = Coverage { total: 12, listed: 12, shortened: 0, ..Coverage::default() };
    assert_eq!(all.line(false), "Catalog coverage: 12 of 12 skills listed.");
    let one = Coverage { total: 1, listed: 1, shortened: 1, ..Coverage::default() };
    assert_eq!(one.line(true), "Catalog coverage: 1 of 1 skill listed, 1 with a shortened description.");
    let some = Coverage { total: 340, listed: 120, shortened: 80, ..Coverage::default() };
    assert_eq!(
        some.line(false),
        "Catalog coverage: 120 of 340 skills listed, 80 with shortened descriptions; 220 left out, still loaded by exact name."
    );
    assert_eq!(
        some.line(true),
        "Catalog coverage: 120 of 340 skills listed, 80 with shortened descriptions; 220 left out, still loaded by exact name or found with the `skill` tool's `query`."
    );
}

#[test]
fn the_equal_share_is_the_largest_that_fits() {
    assert_eq!(equal_share(vec![10, 10], 20), usize::MAX);
    assert_eq!(equal_share(vec![10, 10], 19), 9);
    assert_eq!(equal_share(vec![2, 10, 10], 12), 5);
    assert_eq!(equal_share(vec![], 0), usize::MAX);
    assert_eq!(equal_share(vec![usize::MAX, usize::MAX], 7), 3);
}

#[test]
fn the_summary_tier_shows_first_sentences_cheapest_first_then_shares_what_remains() {
    // Widths 35, 19 and 30; first sentences 11, 3 and 30 (c has no stop
    // before a space: its first sentence is all of it).
    let candidates = [
        candidate("a", "Fill forms. Use when asked to fill."),
        candidate("b", "Go. More text here."),
        candidate("c", "No stop here at all just words"),
    ];
    // Frames 8 each and `...` each: 33. Raises: b 0, a 8, c 27.
    let floor = 33;
    let (shown, coverage) = allocate(&candidates, floor + 8 + 5, true);
    assert_eq!(shown, [Shown::FirstSentence, Shown::FirstSentence, Shown::Cut(8)]);
    assert_eq!(coverage, Coverage { total: 3, listed: 3, shortened: 1, summarised: 2 });
    // Every first sentence fits: none is raised further until all have one.
    let (shown, coverage) = allocate(&candidates, floor + 8 + 27, true);
    assert_eq!(shown, [Shown::FirstSentence, Shown::FirstSentence, Shown::Whole]);
    assert_eq!(coverage, Coverage { total: 3, listed: 3, shortened: 0, summarised: 2 });
    // Then to whole, cheapest raise first: b's 16 before a's 24.
    let (shown, _) = allocate(&candidates, floor + 8 + 27 + 23, true);
    assert_eq!(shown, [Shown::FirstSentence, Shown::Whole, Shown::Whole]);
    let (shown, coverage) = allocate(&candidates, floor + 8 + 27 + 16 + 24, true);
    assert_eq!(shown, [Shown::Whole; 3]);
    assert_eq!(coverage, Coverage { total: 3, listed: 3, ..Coverage::default() });
    // Below the names, as without the tier: the last in name order go
    // first; b's first sentence costs nothing, and a gets the 2 left.
    let (shown, coverage) = allocate(&candidates, 24, true);
    assert_eq!(shown, [Shown::Cut(5), Shown::FirstSentence, Shown::LeftOut]);
    assert_eq!(coverage, Coverage { total: 3, listed: 2, shortened: 1, summarised: 1 });
}

#[test]
fn the_summary_tier_counts_a_first_sentence_shorter_than_the_ellipsis_at_its_width() {
    // `- `a`: A.\n` is 10 characters, 2 less than `- `a`: ...\n`.
    let candidates = [candidate("a", "A. Bcd efg")];
    assert_eq!(allocate(&candidates, 12, true).0, [Shown::FirstSentence]);
    assert_eq!(allocate(&candidates, 10, true).0, [Shown::LeftOut]);
    assert_eq!(allocate(&candidates, 20, true).0, [Shown::Whole]);
}

#[test]
fn a_pinned_skill_tries_its_first_sentence_before_its_shortest_line() {
    let long = format!("Pinned first. X{}", "x".repeat(100));
    let candidates = [candidate("a", "One. Two."), Candidate { name: "p", description: &long, pinned: true }];
    // p's first-sentence line is 8 + 13 = 21; a's shortest line 11, and
    // then its first sentence, 1 more.
    let (shown, coverage) = allocate(&candidates, 21 + 11 + 1, true);
    assert_eq!(shown, [Shown::FirstSentence, Shown::FirstSentence]);
    assert_eq!(coverage, Coverage { total: 2, listed: 2, shortened: 0, summarised: 2 });
    // Without the tier, p is cut like the others.
    let (shown, _) = allocate(&candidates, 21 + 11 + 1, false);
    assert!(matches!(shown[..], [Shown::Cut(_), Shown::Cut(_)]), "{shown:?}");
}

#[test]
fn the_coverage_line_counts_first_sentences() {
    let both = Coverage { total: 4, listed: 3, shortened: 1, summarised: 2 };
    assert_eq!(
        both.line(false),
        "Catalog coverage: 3 of 4 skills listed, 2 with only their first sentence, 1 with a shortened description; 1 left out, still loaded by exact name."
    );
    let one = Coverage { total: 1, listed: 1, shortened: 0, summarised: 1 };
    assert_eq!(one.line(false), "Catalog coverage: 1 of 1 skill listed, 1 with only its first sentence.");
}

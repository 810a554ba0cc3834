//! The catalog budget (`catalogBudget`, docs/spec.md §3.13): which skills a
//! catalog of at most N characters lists, how far each description is cut,
//! and the coverage line that tells the model what it is not seeing.
//!
//! The rule, in three sentences: pinned skills are taken first, in name
//! order, each with its whole line if that still fits what the ones before
//! it left, else with its description cut to at most `...`; then, only when
//! no pinned skill was left out, the others in name order, each listed if
//! its name with at most `...` for a description still fits. What remains
//! is shared equally by the listed descriptions not kept whole: one shorter
//! than its share keeps its whole text, and each of the others is cut to
//! the largest equal share. So a pinned skill is never left out while an
//! unpinned one is listed.

use skill_rules::COVERAGE_PREFIX;

use crate::description::ELLIPSIS;

/// The characters of an entry line besides its name and description:
/// `` - ` ``, `` `: `` and the line break.
const LINE_FRAME: usize = "- `".len() + "`: ".len() + "\n".len();

/// One skill competing for the budget.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its description, normalised and capped, not yet escaped.
    pub description: &'a str,
    /// Listed first, and whole whenever its whole line fits.
    pub pinned: bool,
}

/// How one candidate is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// With its whole description.
    Whole,
    /// With its description cut to at most this many escaped characters
    /// (at least 3, the `...`).
    Cut(usize),
    /// Not listed.
    LeftOut,
}

/// What a budgeted catalog shows, as counts for its coverage line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Coverage {
    /// Skills the catalog could list (model-invocable, not excluded).
    pub total: usize,
    /// Skills it lists.
    pub listed: usize,
    /// Listed skills whose description is cut.
    pub shortened: usize,
}

impl Coverage {
    /// Skills left out.
    pub fn left_out(&self) -> usize {
        self.total - self.listed
    }

    /// The coverage line (docs/spec.md §3.13), without a line break. With
    /// `search`, it names the tool's `query` as the way to find left-out
    /// skills.
    pub fn line(&self, search: bool) -> String {
        let Self { total, listed, shortened } = *self;
        let mut line = format!("{COVERAGE_PREFIX}{listed} of {total} {} listed", plural(total, "skill", "skills"));
        if shortened > 0 {
            line.push_str(&format!(
                ", {shortened} with {}",
                plural(shortened, "a shortened description", "shortened descriptions")
            ));
        }
        let left_out = self.left_out();
        if left_out > 0 {
            line.push_str(&format!("; {left_out} left out, still loaded by exact name"));
            if search {
                line.push_str(" or found with the `skill` tool's `query`");
            }
        }
        line.push('.');
        line
    }
}

fn plural(count: usize, one: &'static str, many: &'static str) -> &'static str {
    if count == 1 { one } else { many }
}

/// The characters `text` takes once escaped (`&` → `&amp;`, `<` → `&lt;`,
/// `>` → `&gt;`, docs/spec.md §3.4).
pub fn escaped_width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

fn char_width(c: char) -> usize {
    match c {
        '&' => "&amp;".len(),
        '<' | '>' => "&lt;".len(),
        _ => 1,
    }
}

/// Decides how each candidate is shown within `budget` characters of entry
/// lines (the rule is in the module's documentation). `candidates` are in
/// name order; the answer is in the same order.
pub fn allocate(candidates: &[Candidate<'_>], budget: usize) -> (Vec<Shown>, Coverage) {
    let widths: Vec<usize> = candidates.iter().map(|candidate| escaped_width(candidate.description)).collect();
    let line = |index: usize, description: usize| candidates[index].name.chars().count() + LINE_FRAME + description;
    let shortest = |index: usize| line(index, widths[index].min(ELLIPSIS.len()));
    let mut left = budget;
    let mut listed = vec![false; candidates.len()];
    // Pinned skills whose whole line fitted: they take no share below.
    let mut whole = vec![false; candidates.len()];
    let mut take = |index: usize, cost: usize, left: &mut usize| {
        let fits = cost <= *left;
        if fits {
            *left -= cost;
            listed[index] = true;
        }
        fits
    };
    let mut pinned_left_out = false;
    for index in (0..candidates.len()).filter(|&index| candidates[index].pinned) {
        if take(index, line(index, widths[index]), &mut left) {
            whole[index] = true;
        } else if !take(index, shortest(index), &mut left) {
            pinned_left_out = true;
        }
    }
    // No unpinned skill is listed while a pinned one is left out.
    if !pinned_left_out {
        for index in (0..candidates.len()).filter(|&index| !candidates[index].pinned) {
            take(index, shortest(index), &mut left);
        }
    }
    // What the listed descriptions not kept whole still want beyond their `...`.
    let wants: Vec<usize> = (0..candidates.len())
        .filter(|&index| listed[index] && !whole[index])
        .map(|index| widths[index].saturating_sub(ELLIPSIS.len()))
        .collect();
    let extra = equal_share(wants, left);
    let mut coverage = Coverage { total: candidates.len(), ..Coverage::default() };
    let shown = (0..candidates.len())
        .map(|index| {
            if !listed[index] {
                return Shown::LeftOut;
            }
            coverage.listed += 1;
            let share = ELLIPSIS.len().saturating_add(extra);
            if whole[index] || widths[index] <= share {
                Shown::Whole
            } else {
                coverage.shortened += 1;
                Shown::Cut(share)
            }
        })
        .collect();
    (shown, coverage)
}

/// The largest `share` with `Σ min(want, share) ≤ pool` (`usize::MAX` when
/// every want fits).
fn equal_share(mut wants: Vec<usize>, pool: usize) -> usize {
    wants.sort_unstable();
    let mut spent = 0usize;
    for (index, &want) in wants.iter().enumerate() {
        let sharing = wants.len() - index;
        // Every remaining want gets `want` more: does the pool cover it?
        match want.checked_mul(sharing).and_then(|all| all.checked_add(spent)) {
            Some(needed) if needed <= pool => spent += want,
            _ => return (pool - spent) / sharing,
        }
    }
    usize::MAX
}

/// `description` cut to at most `width` escaped characters (`width` ≥ 3),
/// on a character boundary, with `...` at its end (spaces before it
/// dropped). Not escaped yet.
pub fn cut(description: &str, width: usize) -> String {
    let room = width.saturating_sub(ELLIPSIS.len());
    let mut used = 0;
    let end = description
        .char_indices()
        .find(|&(_, c)| {
            used += char_width(c);
            used > room
        })
        .map_or(description.len(), |(index, _)| index);
    // A cut between words drops the space before the `...`.
    let kept = description[..end].trim_end_matches(' ');
    let mut cut = String::with_capacity(kept.len() + ELLIPSIS.len());
    cut.push_str(kept);
    cut.push_str(ELLIPSIS);
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate<'a>(name: &'a str, description: &'a str) -> Candidate<'a> {
        Candidate { name, description, pinned: false }
    }

    #[test]
    fn everything_fits_whole_when_the_budget_allows() {
        let candidates = [candidate("a", "One."), candidate("b", "Two.")];
        // `- `a`: One.\n` is 12 characters.
        let (shown, coverage) = allocate(&candidates, 24);
        assert_eq!(shown, [Shown::Whole, Shown::Whole]);
        assert_eq!(coverage, Coverage { total: 2, listed: 2, shortened: 0 });
    }

    #[test]
    fn short_descriptions_keep_their_text_and_long_ones_share_equally() {
        let long = "x".repeat(100);
        let candidates = [candidate("a", "Hi."), candidate("b", &long), candidate("c", &long)];
        // Frames: 8 each (24); "Hi." 3; then 33 left for two: 16 each.
        let (shown, coverage) = allocate(&candidates, 24 + 3 + 33);
        assert_eq!(shown, [Shown::Whole, Shown::Cut(16), Shown::Cut(16)]);
        assert_eq!(coverage, Coverage { total: 3, listed: 3, shortened: 2 });
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
        let (shown, coverage) = allocate(&candidates, 14 + 11 + 2);
        assert_eq!(shown, [Shown::Cut(5), Shown::LeftOut, Shown::Whole]);
        assert_eq!(coverage, Coverage { total: 3, listed: 2, shortened: 1 });
        assert_eq!(coverage.left_out(), 1);
    }

    #[test]
    fn a_pinned_skill_longer_than_the_budget_is_cut_like_the_others_not_dropped() {
        let long = "x".repeat(100);
        let candidates = [candidate("a", "One."), Candidate { name: "p", description: &long, pinned: true }];
        // p whole is 108 characters: cut, it takes 11 (`- `p`: ...\n`), a
        // 11 too; the 18 left give a its 1 more and p the other 17.
        let (shown, coverage) = allocate(&candidates, 40);
        assert_eq!(shown, [Shown::Whole, Shown::Cut(20)]);
        assert_eq!(coverage, Coverage { total: 2, listed: 2, shortened: 1 });
        assert_eq!(cut(&long, 20).len() + "- `p`: \n".len() + "- `a`: One.\n".len(), 40);
    }

    #[test]
    fn no_unpinned_skill_is_listed_while_a_pinned_one_is_left_out() {
        let candidates =
            [candidate("a", "One."), Candidate { name: "long-pinned-name", description: "Pinned.", pinned: true }];
        // The pinned name alone takes 26; `a` would fit in 15, but not after it.
        let (shown, coverage) = allocate(&candidates, 15);
        assert_eq!(shown, [Shown::LeftOut, Shown::LeftOut]);
        assert_eq!(coverage, Coverage { total: 2, listed: 0, shortened: 0 });
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
        let all = Coverage { total: 12, listed: 12, shortened: 0 };
        assert_eq!(all.line(false), "Catalog coverage: 12 of 12 skills listed.");
        let one = Coverage { total: 1, listed: 1, shortened: 1 };
        assert_eq!(one.line(true), "Catalog coverage: 1 of 1 skill listed, 1 with a shortened description.");
        let some = Coverage { total: 340, listed: 120, shortened: 80 };
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
}

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
//!
//! The summary tier (`catalogSummaries`) adds two raises before the share:
//! a pinned skill whose whole line does not fit tries its first sentence
//! before its shortest line; then the descriptions at their shortest are
//! raised to their first sentence, cheapest first, while the next fits
//! (which shows the most first sentences the budget allows); and only when
//! every listed description shows at least its first sentence are those
//! shown as one raised to whole, cheapest first. What still remains is
//! shared equally, as above, by the descriptions left at their shortest.

use skill_rules::{COVERAGE_PREFIX, first_sentence};

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
    /// With the first sentence of its description alone
    /// ([`skill_rules::first_sentence`], `catalogSummaries`).
    FirstSentence,
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
    /// Listed skills whose description the budget cut.
    pub shortened: usize,
    /// Listed skills shown with the first sentence of their description.
    pub summarised: usize,
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
        let Self { total, listed, shortened, summarised } = *self;
        let mut line = format!("{COVERAGE_PREFIX}{listed} of {total} {} listed", plural(total, "skill", "skills"));
        if summarised > 0 {
            line.push_str(&format!(", {summarised} with only {} first sentence", plural(summarised, "its", "their")));
        }
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
/// name order; the answer is in the same order. With `summaries`
/// (`catalogSummaries`), a description that does not fit whole is shown as
/// its first sentence when that fits, before any is cut.
pub fn allocate(candidates: &[Candidate<'_>], budget: usize, summaries: bool) -> (Vec<Shown>, Coverage) {
    let widths: Vec<usize> = candidates.iter().map(|candidate| escaped_width(candidate.description)).collect();
    // Only the summary tier reads the first sentences.
    let firsts: Vec<usize> = if summaries {
        candidates.iter().map(|candidate| escaped_width(first_sentence(candidate.description))).collect()
    } else {
        Vec::new()
    };
    let line = |index: usize, description: usize| candidates[index].name.chars().count() + LINE_FRAME + description;
    let shortest = |index: usize| widths[index].min(ELLIPSIS.len());
    let mut left = budget;
    let mut tiers = vec![Tier::Out; candidates.len()];
    let mut take = |index: usize, tier: Tier, width: usize, left: &mut usize| {
        let cost = line(index, width);
        let fits = cost <= *left;
        if fits {
            *left -= cost;
            tiers[index] = tier;
        }
        fits
    };
    let mut pinned_left_out = false;
    for index in (0..candidates.len()).filter(|&index| candidates[index].pinned) {
        let summary = summaries && firsts[index] < widths[index];
        let listed = take(index, Tier::Whole, widths[index], &mut left)
            || (summary && take(index, Tier::First, firsts[index], &mut left))
            || take(index, Tier::Shortest, shortest(index), &mut left);
        pinned_left_out |= !listed;
    }
    // No unpinned skill is listed while a pinned one is left out.
    if !pinned_left_out {
        for index in (0..candidates.len()).filter(|&index| !candidates[index].pinned) {
            take(index, Tier::Shortest, shortest(index), &mut left);
        }
    }
    // A description of 3 characters or less is whole at its shortest.
    for (tier, &width) in tiers.iter_mut().zip(&widths) {
        if *tier == Tier::Shortest && width <= ELLIPSIS.len() {
            *tier = Tier::Whole;
        }
    }
    if summaries {
        raise_to_first_sentences(&mut tiers, &widths, &firsts, &mut left);
        if !tiers.contains(&Tier::Shortest) {
            raise_to_whole(&mut tiers, &widths, &firsts, &mut left);
        }
    }
    // What the descriptions still at their shortest want beyond their `...`.
    let wants: Vec<usize> = (0..candidates.len())
        .filter(|&index| tiers[index] == Tier::Shortest)
        .map(|index| widths[index] - ELLIPSIS.len())
        .collect();
    let share = ELLIPSIS.len().saturating_add(equal_share(wants, left));
    let mut coverage = Coverage { total: candidates.len(), ..Coverage::default() };
    let shown = tiers
        .iter()
        .zip(&widths)
        .map(|(tier, &width)| {
            if *tier != Tier::Out {
                coverage.listed += 1;
            }
            match tier {
                Tier::Out => Shown::LeftOut,
                Tier::Whole => Shown::Whole,
                Tier::First => {
                    coverage.summarised += 1;
                    Shown::FirstSentence
                }
                Tier::Shortest if width <= share => Shown::Whole,
                Tier::Shortest => {
                    coverage.shortened += 1;
                    Shown::Cut(share)
                }
            }
        })
        .collect();
    (shown, coverage)
}

/// Where a candidate stands while the budget is shared out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tier {
    /// Not listed (yet).
    Out,
    /// Listed with at most `...` for a description, to be cut to the equal share.
    Shortest,
    /// Listed with its first sentence, shorter than its description.
    First,
    /// Listed with its whole description.
    Whole,
}

/// The summary tier's first raise: each description still at its shortest
/// is raised to its first sentence (its whole, when that is all of it),
/// cheapest raise first, ties in name order, while the next raise fits.
/// Sorting by cost makes the number raised the most the budget allows.
fn raise_to_first_sentences(tiers: &mut [Tier], widths: &[usize], firsts: &[usize], left: &mut usize) {
    let mut order: Vec<usize> = (0..tiers.len()).filter(|&index| tiers[index] == Tier::Shortest).collect();
    // A first sentence shorter than `...` costs less than the line listed.
    order.sort_by_key(|&index| firsts[index].saturating_sub(ELLIPSIS.len()));
    for index in order {
        let raise = firsts[index].saturating_sub(ELLIPSIS.len());
        if raise > *left {
            break;
        }
        *left = *left - raise + ELLIPSIS.len().saturating_sub(firsts[index]);
        tiers[index] = if firsts[index] < widths[index] { Tier::First } else { Tier::Whole };
    }
}

/// The summary tier's second raise, once every listed description shows at
/// least its first sentence: each shown as its first sentence is raised to
/// its whole, cheapest raise first, ties in name order, while the next fits.
fn raise_to_whole(tiers: &mut [Tier], widths: &[usize], firsts: &[usize], left: &mut usize) {
    let mut order: Vec<usize> = (0..tiers.len()).filter(|&index| tiers[index] == Tier::First).collect();
    order.sort_by_key(|&index| widths[index] - firsts[index]);
    for index in order {
        let raise = widths[index] - firsts[index];
        if raise > *left {
            break;
        }
        *left -= raise;
        tiers[index] = Tier::Whole;
    }
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
mod tests;

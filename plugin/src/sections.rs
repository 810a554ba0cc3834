//! A skill's instructions by section (`skillReads`, docs/spec.md §3.15):
//! the headings of a Markdown body, one section by its heading, and the
//! outline of what a cut body left out.
//!
//! A heading is an ATX heading outside fenced code: up to three spaces, one
//! to six `#`, then a space, a tab or the line's end; its text is the rest,
//! trimmed, without a closing run of `#` that follows a space. A section is
//! its heading's line up to the next heading of the same or a higher level
//! (fewer `#`), or the body's end.

/// The most headings an outline or an error lists; the rest are counted.
pub const MAX_LISTED_HEADINGS: usize = 32;

/// One heading of a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading<'a> {
    /// 1 to 6: the number of `#`.
    pub level: usize,
    /// The heading's text.
    pub text: &'a str,
    /// Where its line starts, in bytes.
    pub start: usize,
    /// Where its section ends, in bytes.
    pub end: usize,
    /// The heading whose section holds this one (the nearest before it of
    /// a higher level), by its index.
    pub parent: Option<usize>,
}

impl Heading<'_> {
    /// The section's text: the heading's line to the section's end, without
    /// the line breaks that end it.
    pub fn section<'b>(&self, body: &'b str) -> &'b str {
        body[self.start..self.end].trim_end_matches(['\n', '\r'])
    }
}

/// Every heading of `body`, in order, with its section's end.
pub fn headings(body: &str) -> Vec<Heading<'_>> {
    let mut found: Vec<Heading<'_>> = Vec::new();
    // The headings whose sections are still open, lowest level last: a new
    // heading closes those of its level or deeper, so each closes once.
    let mut open: Vec<usize> = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    let mut start = 0;
    for line in body.split_inclusive('\n') {
        let text = line.trim_end_matches(['\n', '\r']);
        let indented = text.len() - text.trim_start_matches(' ').len();
        let trimmed = &text[indented..];
        if indented <= 3 {
            if let Some(run) = fence_run(trimmed) {
                match fence {
                    None => fence = Some(run),
                    // A fence closes with a bare run of its character, as long or longer.
                    Some((mark, length)) if run.0 == mark && run.1 >= length && trimmed[run.1..].trim().is_empty() => {
                        fence = None;
                    }
                    Some(_) => {}
                }
            } else if fence.is_none()
                && let Some((level, heading)) = atx(trimmed)
            {
                while let Some(&last) = open.last() {
                    if found[last].level < level {
                        break;
                    }
                    found[last].end = start;
                    open.pop();
                }
                let parent = open.last().copied();
                open.push(found.len());
                found.push(Heading { level, text: heading, start, end: usize::MAX, parent });
            }
        }
        start += line.len();
    }
    for index in open {
        found[index].end = body.len();
    }
    found
}

/// A fence's opening run: three or more of one of `` ` `` and `~`.
fn fence_run(line: &str) -> Option<(u8, usize)> {
    let mark = *line.as_bytes().first()?;
    if mark != b'`' && mark != b'~' {
        return None;
    }
    let length = line.bytes().take_while(|&byte| byte == mark).count();
    (length >= 3).then_some((mark, length))
}

/// An ATX heading's level and text.
fn atx(line: &str) -> Option<(usize, &str)> {
    let level = line.bytes().take_while(|&byte| byte == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &line[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let mut text = rest.trim_matches([' ', '\t']);
    // A closing run of `#`, after a space (or alone).
    let without = text.trim_end_matches('#');
    if without.is_empty() || without.ends_with([' ', '\t']) {
        text = without.trim_end_matches([' ', '\t']);
    }
    Some((level, text))
}

/// Between the headings of a path: `Deploy > Example`.
pub const PATH_SEPARATOR: &str = " > ";

/// The heading at `index` with the headings that hold it, outermost first,
/// joined by [`PATH_SEPARATOR`].
pub fn path(headings: &[Heading<'_>], index: usize) -> String {
    let mut texts = vec![headings[index].text];
    let mut at = headings[index].parent;
    while let Some(parent) = at {
        texts.push(headings[parent].text);
        at = headings[parent].parent;
    }
    texts.reverse();
    texts.join(PATH_SEPARATOR)
}

/// How each heading is named to the model: its text, or its path when
/// another heading has the same text (so each can be asked for).
pub fn names(headings: &[Heading<'_>]) -> Vec<String> {
    let mut count: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for heading in headings {
        *count.entry(heading.text).or_default() += 1;
    }
    (0..headings.len())
        .map(|index| match count[headings[index].text] {
            1 => headings[index].text.to_owned(),
            _ => path(headings, index),
        })
        .collect()
}

/// The heading `wanted` names: the first whose text or path equals it,
/// else the first equal to it less a leading run of `#` and spaces (so the
/// heading's own line finds it), then the same two ignoring case.
pub fn find<'a, 'b>(headings: &'b [Heading<'a>], wanted: &str) -> Option<&'b Heading<'a>> {
    let bare = wanted.trim_start_matches(['#', ' ']);
    // Paths are built only when no heading's text matched.
    let paths = std::cell::OnceCell::new();
    let matching = |same: &dyn Fn(&str) -> bool| {
        let by_text = headings.iter().position(|heading| same(heading.text));
        by_text
            .or_else(|| {
                let paths =
                    paths.get_or_init(|| (0..headings.len()).map(|index| path(headings, index)).collect::<Vec<_>>());
                paths.iter().position(|path| same(path))
            })
            .map(|index| &headings[index])
    };
    let exact = |text: &str| matching(&|candidate: &str| candidate == text);
    exact(wanted).or_else(|| exact(bare)).or_else(|| {
        let lowered = |text: &str| {
            let lower = text.to_lowercase();
            matching(&|candidate: &str| candidate.to_lowercase() == lower)
        };
        lowered(wanted).or_else(|| lowered(bare))
    })
}

/// The headings of a body, for an error: `"A", "B"` as [`names`] names
/// them (JSON-quoted, at most [`MAX_LISTED_HEADINGS`], then `and {k} more`).
pub fn listed(headings: &[Heading<'_>]) -> String {
    let mut names: Vec<String> = names(headings)
        .iter()
        .take(MAX_LISTED_HEADINGS)
        .map(|name| serde_json::to_string(name).expect("a string serialises"))
        .collect();
    if headings.len() > MAX_LISTED_HEADINGS {
        names.push(format!("and {} more", headings.len() - MAX_LISTED_HEADINGS));
    }
    names.join(", ")
}

/// What follows a cut body's last line: the sections that start after the
/// cut (at byte `cut`), each heading with its section's size, and how to
/// load one; `None` when none starts there.
pub fn outline(body: &str, cut: usize) -> Option<String> {
    let headings = headings(body);
    let names = names(&headings);
    let left: Vec<usize> = (0..headings.len()).filter(|&index| headings[index].start >= cut).collect();
    if left.is_empty() {
        return None;
    }
    let mut lines = vec![OUTLINE_HEAD.to_owned()];
    for &index in left.iter().take(MAX_LISTED_HEADINGS) {
        let heading = &headings[index];
        let size = heading.section(body).chars().count();
        // As written: the body is never escaped, and `section` takes the name as it is.
        lines.push(format!("- {} {} ({size} characters)", "#".repeat(heading.level), names[index]));
    }
    if left.len() > MAX_LISTED_HEADINGS {
        lines.push(format!("- and {} more", left.len() - MAX_LISTED_HEADINGS));
    }
    Some(lines.join("\n"))
}

/// The outline's first line (docs/spec.md §3.15).
pub const OUTLINE_HEAD: &str =
    "Sections left out, each loaded by calling the `skill` tool with this `name` and the heading as `section`:";

#[cfg(test)]
mod tests;

//! Relative Markdown links in a skill's body that point at nothing.

use std::fs;
use std::path::{Component, Path, PathBuf};

use super::report::TextFinding;
use super::rules::closing_line;

/// Relative Markdown links in the body (`[text](target)`) that point inside
/// `base` (the skill's resource base) at nothing. Links that leave the base
/// depend on where the skill is installed, so they are not judged; fenced
/// code blocks are skipped.
pub(super) fn missing_links(text: &str, base: &Path) -> Vec<TextFinding> {
    let mut found = Vec::new();
    let mut fence: Option<&str> = None;
    for (index, line) in text.split('\n').enumerate().skip(closing_line(text)) {
        let trimmed = line.trim_start();
        if let Some(marker) = ["```", "~~~"].into_iter().find(|marker| trimmed.starts_with(marker)) {
            fence = match fence {
                None => Some(marker),
                Some(open) if open == marker => None,
                open => open,
            };
            continue;
        }
        if fence.is_some() {
            continue;
        }
        for target in link_targets(line) {
            if let Some(relative) = local_target(target)
                && let Some(resolved) = inside(base, relative)
                && fs::symlink_metadata(&resolved).is_err()
            {
                found.push(TextFinding::warning(index + 1, format!("link target `{target}` does not exist")));
            }
        }
    }
    found
}

/// The targets of inline links on one line: `](target)`, `](<target>)`,
/// `](target "title")`, outside `code spans` (which show Markdown rather
/// than link).
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    for mut rest in outside_code_spans(line) {
        while let Some(start) = rest.find("](") {
            rest = &rest[start + 2..];
            let target = if let Some(inner) = rest.strip_prefix('<') {
                inner.find('>').map(|end| &inner[..end])
            } else {
                rest.find([')', ' ', '\t']).map(|end| &rest[..end])
            };
            if let Some(target) = target {
                targets.push(target);
            }
        }
    }
    targets
}

/// The parts of `line` outside code spans. As in CommonMark, a run of N
/// backticks opens a span that the next run of exactly N closes; a run
/// nothing closes is literal.
pub(super) fn outside_code_spans(line: &str) -> Vec<&str> {
    let bytes = line.as_bytes();
    let run_end = |from: usize| from + bytes[from..].iter().take_while(|&&b| b == b'`').count();
    let mut parts = Vec::new();
    let (mut outside_from, mut i) = (0, 0);
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let (open, after_open) = (i, run_end(i));
        i = after_open;
        let mut j = after_open;
        while j < bytes.len() {
            if bytes[j] != b'`' {
                j += 1;
                continue;
            }
            let after_close = run_end(j);
            if after_close - j == after_open - open {
                parts.push(&line[outside_from..open]);
                outside_from = after_close;
                i = after_close;
                break;
            }
            j = after_close;
        }
    }
    parts.push(&line[outside_from..]);
    parts
}

/// A link target that names a local file: not empty, not an anchor, not a
/// URL or an absolute path, with any `#fragment` or `?query` removed.
/// Percent-encoded targets are left alone rather than decoded wrongly.
fn local_target(target: &str) -> Option<&str> {
    let path = target.split(['#', '?']).next().unwrap_or("");
    let has_scheme = path.split_once(':').is_some_and(|(scheme, _)| !scheme.contains('/'));
    if path.is_empty() || has_scheme || path.starts_with('/') || path.contains('%') {
        return None;
    }
    Some(path)
}

/// `base/relative` with `.` and `..` removed, when it stays inside `base`.
fn inside(base: &Path, relative: &str) -> Option<PathBuf> {
    let mut parts: Vec<Component<'_>> = Vec::new();
    for component in Path::new(relative).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Normal(_) => parts.push(component),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.iter().fold(base.to_path_buf(), |path, part| path.join(part)))
}

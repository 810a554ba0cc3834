//! The document split: the `---` lines that delimit the frontmatter, and
//! the body after it, trimmed as the reference trims it.

use skill_rules::is_ecmascript_whitespace;

/// The frontmatter delimiter line.
const DELIMITER: &str = "---";

/// A file split at its frontmatter delimiters.
pub(super) struct FrontmatterBlock<'a> {
    /// The YAML between the delimiter lines.
    pub(super) yaml: &'a str,
    /// The file line on which `yaml` starts (1-based).
    pub(super) first_line: usize,
    /// Everything after the closing delimiter line.
    pub(super) body: &'a str,
}

/// Finds the frontmatter: the first line must be exactly `---` and the next
/// line that is exactly `---` closes it. Lines end at `\n`; one trailing `\r`
/// is ignored so CRLF files work. `---` with anything else on the line (a
/// trailing space, `----`, `--- x`) is not a delimiter.
pub(super) fn split_frontmatter(text: &str) -> Result<FrontmatterBlock<'_>, String> {
    let Some(first_end) = text.find('\n') else {
        return Err(missing_frontmatter(text));
    };
    if strip_cr(&text[..first_end]) != DELIMITER {
        return Err(missing_frontmatter(text));
    }
    let start = first_end + 1;
    let mut line_start = start;
    loop {
        let next_newline = text[line_start..].find('\n').map(|i| line_start + i);
        let line_end = next_newline.unwrap_or(text.len());
        if strip_cr(&text[line_start..line_end]) == DELIMITER {
            return Ok(FrontmatterBlock {
                yaml: &text[start..line_start],
                // The opening `---` is line 1.
                first_line: 2,
                body: next_newline.map_or("", |i| &text[i + 1..]),
            });
        }
        match next_newline {
            Some(i) => line_start = i + 1,
            None => return Err("frontmatter is not closed by a `---` line".to_string()),
        }
    }
}

/// The reason for a file without an opening delimiter, pointing at the one
/// cause that is invisible in an editor.
fn missing_frontmatter(text: &str) -> String {
    if text.starts_with('\u{feff}') {
        // DeepSeek Harness reads the file verbatim, so a byte-order mark
        // keeps the first line from being exactly `---`.
        "missing frontmatter (the file starts with a byte-order mark before `---`)".to_string()
    } else {
        "missing frontmatter (the first line must be exactly `---`)".to_string()
    }
}

fn strip_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

/// ECMAScript `String.prototype.trim`: the body is trimmed exactly as the
/// reference does. Rust's `str::trim` differs (it trims U+0085 and keeps
/// U+FEFF).
pub(super) fn trim_ecmascript(text: &str) -> &str {
    text.trim_matches(is_ecmascript_whitespace)
}

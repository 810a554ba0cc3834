//! Checks skill files against the Agent Skills specification and this
//! project's rules, for `skill-host lint`.
//!
//! The specification's rules: `name` is 1–64 characters of the skill-name
//! grammar and equals its folder's name (a bundle `<dir>/SKILL.md`) or its
//! file's stem (a flat `<name>.md`); `description` is 1–1024 characters;
//! `compatibility` at most 500; only the specification's keys (plus the three
//! this project reads) appear. This project's rules are everything the local
//! provider refuses (the same reasons, from [`providers::frontmatter`]), and
//! warnings for what it accepts but a reader would not expect: a description
//! the catalog truncates, a field it ignores, a skill nobody can invoke, a
//! link to a resource that is not there.
//!
//! ```no_run
//! let report = skill_host::lint::lint_path("skills".as_ref())?;
//! for finding in &report.findings {
//!     println!("{finding}"); // skills/x/SKILL.md:3: error: …
//! }
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! [`providers::frontmatter`]: crate::providers::frontmatter

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::providers::frontmatter::{
    LEGACY_INVOCATION_KEYS, Node, Value, frontmatter_entries, is_ecmascript_whitespace, parse_skill_file,
};
use crate::registry::{InvocationPolicy, is_skill_name};

/// Longest `name` the Agent Skills specification allows, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Longest `description` the Agent Skills specification allows, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Longest `compatibility` the Agent Skills specification allows, in characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

/// The catalog's default description cap (the plugin's
/// `catalogDescriptionMaxLength`, SPEC §3.5): longer descriptions are cut.
pub const CATALOG_DESCRIPTION_CHARS: usize = 500;

/// The frontmatter keys of the Agent Skills specification.
const SPEC_KEYS: [&str; 6] = ["name", "description", "license", "compatibility", "metadata", "allowed-tools"];

/// The keys this project reads besides the specification's (SPEC §4.2).
const PROJECT_KEYS: [&str; 3] = ["whenToUse", "disable-model-invocation", "user-invocable"];

/// The file that makes a folder a skill.
const SKILL_FILE: &str = "SKILL.md";

/// The user DeepSeek Harness root's folder of system skills, never listed.
const SYSTEM_DIR: &str = ".system";

/// How bad a finding is: an error fails the lint (and, for this project's
/// rules, keeps the skill out of the catalog); a warning does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The file breaks the specification or is refused by the local provider.
    Error,
    /// The file works, but probably not as its author meant.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One problem in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file (or folder, or link) it is about, as it was reached.
    pub path: PathBuf,
    /// The 1-based line, when the problem is in the file's text.
    pub line: Option<usize>,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong, for a human.
    pub message: String,
}

impl fmt::Display for Finding {
    /// `path:line: error: message`, or `path: error: message` without a line,
    /// as compilers print them (editors jump to the place).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}: {}", self.path.display(), self.severity, self.message),
            None => write!(f, "{}: {}: {}", self.path.display(), self.severity, self.message),
        }
    }
}

/// A finding inside one text, before it is tied to a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFinding {
    /// The 1-based line, when there is one.
    pub line: Option<usize>,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong.
    pub message: String,
}

impl TextFinding {
    fn error(line: usize, message: impl Into<String>) -> Self {
        Self { line: Some(line), severity: Severity::Error, message: message.into() }
    }

    fn warning(line: usize, message: impl Into<String>) -> Self {
        Self { line: Some(line), severity: Severity::Warning, message: message.into() }
    }
}

/// What a lint run found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LintReport {
    /// How many skill files were checked.
    pub files: usize,
    /// Every finding, file by file in the order the files were reached, by
    /// line within a file.
    pub findings: Vec<Finding>,
}

impl LintReport {
    /// How many findings have `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings.iter().filter(|finding| finding.severity == severity).count()
    }

    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.count(Severity::Error) > 0
    }

    /// Appends another report's files and findings.
    pub fn extend(&mut self, other: LintReport) {
        self.files += other.files;
        self.findings.extend(other.findings);
    }
}

/// Lints whatever `path` is: a skill file, a bundle folder (one holding
/// `SKILL.md`), or a skill root (a folder of bundles and flat files). `Err`
/// when `path` cannot be read at all.
pub fn lint_path(path: &Path) -> io::Result<LintReport> {
    let meta = fs::metadata(path)?;
    if meta.is_dir() {
        let skill_file = path.join(SKILL_FILE);
        if fs::symlink_metadata(&skill_file).is_ok() {
            return Ok(lint_file(&skill_file));
        }
        return lint_root(path, false);
    }
    Ok(lint_file(path))
}

/// Lints a skill root as the local provider reads it: `<root>/<dir>/SKILL.md`
/// and `<root>/<file>.md`, one level deep, in byte order of their names
/// (`skip_system` skips a `.system` child, as under the user's DeepSeek
/// Harness root). Also warns about entries the provider silently ignores but
/// that look meant as skills, and about a name defined twice in the root.
pub fn lint_root(root: &Path, skip_system: bool) -> io::Result<LintReport> {
    let mut names: Vec<_> =
        fs::read_dir(root)?.map(|entry| entry.map(|entry| entry.file_name())).collect::<Result<_, _>>()?;
    names.sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    let mut report = LintReport::default();
    // The first file defining each name: the one the provider lets win.
    let mut defined: HashMap<String, PathBuf> = HashMap::new();
    for name in names {
        if skip_system && name == SYSTEM_DIR {
            continue;
        }
        let path = root.join(&name);
        let skill_file = match fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => {
                let file = path.join(SKILL_FILE);
                if fs::symlink_metadata(&file).is_err() {
                    report.findings.extend(misnamed_skill_file(&path));
                    continue;
                }
                file
            }
            Ok(meta) if meta.is_file() => {
                let bytes = name.as_encoded_bytes();
                if bytes.ends_with(b".md") {
                    path
                } else {
                    if bytes.len() > 3 && bytes[bytes.len() - 3..].eq_ignore_ascii_case(b".md") {
                        report.findings.push(Finding {
                            path,
                            line: None,
                            severity: Severity::Warning,
                            message: "ignored: a flat skill file's suffix must be `.md` in lower case".to_string(),
                        });
                    }
                    continue;
                }
            }
            Ok(_) => continue,
            Err(error) => {
                let broken = fs::symlink_metadata(&path).is_ok_and(|meta| meta.file_type().is_symlink());
                let message =
                    if broken { format!("broken symbolic link: {error}") } else { format!("cannot inspect: {error}") };
                report.findings.push(Finding { path, line: None, severity: Severity::Error, message });
                continue;
            }
        };
        let (file_report, skill_name) = lint_skill_file(&skill_file);
        report.extend(file_report);
        if let Some(skill_name) = skill_name {
            match defined.get(&skill_name) {
                Some(first) => report.findings.push(Finding {
                    path: skill_file,
                    line: None,
                    severity: Severity::Warning,
                    message: format!("skill \"{skill_name}\" is also defined by {}, which wins", first.display()),
                }),
                None => {
                    defined.insert(skill_name, skill_file);
                }
            }
        }
    }
    Ok(report)
}

/// Lints one skill file. Its `name` must equal the folder's name for a
/// `SKILL.md`, else the file's stem.
pub fn lint_file(path: &Path) -> LintReport {
    lint_skill_file(path).0
}

/// [`lint_file`], with the skill's name when the file parses.
fn lint_skill_file(path: &Path) -> (LintReport, Option<String>) {
    let mut report = LintReport { files: 1, findings: Vec::new() };
    let mut push = |found: Vec<TextFinding>| {
        report.findings.extend(found.into_iter().map(|found| Finding {
            path: path.to_path_buf(),
            line: found.line,
            severity: found.severity,
            message: found.message,
        }));
    };
    let text = match read_text(path) {
        Ok(text) => text,
        Err(found) => {
            push(vec![found]);
            return (report, None);
        }
    };
    let expected = expected_name(path);
    let mut found = lint_text(&text, expected.as_ref().map(|(name, place)| (name.as_str(), *place)));
    let parsed = parse_skill_file(&text).ok();
    if parsed.is_some()
        && let Some(base) = path.parent()
    {
        found.extend(missing_links(&text, base));
    }
    found.sort_by_key(|found| found.line);
    push(found);
    (report, parsed.map(|parsed| parsed.name))
}

/// Where a skill file's expected name comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NamePlace {
    /// A bundle's `SKILL.md`: the folder's name.
    Folder,
    /// A flat `<name>.md`: the file's stem.
    File,
}

/// The name a skill file at `path` must carry, and where it comes from.
fn expected_name(path: &Path) -> Option<(String, NamePlace)> {
    let file_name = path.file_name()?.to_string_lossy().into_owned();
    if file_name == SKILL_FILE {
        // A bare `SKILL.md` lies in the current directory, whose name counts.
        let absolute = std::path::absolute(path).ok()?;
        let folder = absolute.parent()?.file_name()?.to_string_lossy().into_owned();
        return Some((folder, NamePlace::Folder));
    }
    let stem = file_name.strip_suffix(".md").unwrap_or(&file_name).to_string();
    Some((stem, NamePlace::File))
}

/// Reads a skill file as the local provider does, refusing what it refuses
/// with the line of the offending byte.
fn read_text(path: &Path) -> Result<String, TextFinding> {
    let unreadable = |message: String| TextFinding { line: None, severity: Severity::Error, message };
    // The kind and size are judged on the file opened (`read_skill_bytes`).
    match fs::metadata(path) {
        Ok(_) => {}
        Err(error) if fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink()) => {
            return Err(unreadable(format!("broken symbolic link: {error}")));
        }
        Err(error) => return Err(unreadable(format!("cannot read: {error}"))),
    }
    // As the local provider reads it: without blocking, within its size limit.
    let bytes = crate::providers::local::read_skill_bytes(path)
        .map_err(|error| unreadable(format!("cannot read: {error}")))?
        .map_err(unreadable)?;
    let line_of = |offset: usize| 1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count();
    if let Some(nul) = bytes.iter().position(|&b| b == 0) {
        return Err(TextFinding::error(line_of(nul), "binary file (contains NUL bytes), not a text skill file"));
    }
    match std::str::from_utf8(&bytes) {
        Ok(text) => Ok(text.to_string()),
        Err(error) => {
            let offset = error.valid_up_to();
            Err(TextFinding::error(line_of(offset), format!("not UTF-8 text (invalid byte at offset {offset})")))
        }
    }
}

/// Lints a skill file's text. `expected` is the name the file's place
/// requires, if any. Findings come in rule order, not sorted.
pub fn lint_text(text: &str, expected: Option<(&str, NamePlace)>) -> Vec<TextFinding> {
    let mut found = Vec::new();
    let parsed = parse_skill_file(text);
    if let Err(reason) = &parsed {
        let (line, message) = split_reason(reason);
        found.push(TextFinding::error(line.unwrap_or(1), message));
    }
    // The provider stops at its first refusal; the specification's checks
    // still run on whatever mapping there is, so one pass shows every fault.
    let Ok(entries) = frontmatter_entries(text) else {
        return found;
    };
    for (key, line, node) in &entries {
        match key.as_str() {
            "name" => check_name(*line, node, expected, &mut found),
            "description" => check_description(*line, node, &mut found),
            "compatibility" => check_compatibility(*line, node, &mut found),
            "license" => {
                if !matches!(node.value, Value::Str(_)) {
                    found.push(TextFinding::error(
                        *line,
                        format!("`license` must be a string, found {}", node.value.kind()),
                    ));
                }
            }
            "metadata" => check_metadata(*line, node, &mut found),
            "allowed-tools" => check_allowed_tools(*line, node, &mut found),
            "whenToUse" => match &node.value {
                Value::Str(s) if !s.is_empty() => {}
                other => {
                    let kind = if matches!(other, Value::Str(_)) { "an empty string" } else { other.kind() };
                    found.push(TextFinding::warning(
                        *line,
                        format!("`whenToUse` is ignored: it must be a non-empty string, found {kind}"),
                    ));
                }
            },
            key if SPEC_KEYS.contains(&key) || PROJECT_KEYS.contains(&key) => {}
            // Reported by the provider's own reason.
            key if LEGACY_INVOCATION_KEYS.iter().any(|(legacy, _)| *legacy == key) => {}
            key => found.push(TextFinding::error(
                *line,
                format!(
                    "unknown frontmatter key `{key}` (known: {}, {})",
                    SPEC_KEYS.join(", "),
                    PROJECT_KEYS.join(", ")
                ),
            )),
        }
    }
    if let Ok(parsed) = &parsed {
        if parsed.invocation == (InvocationPolicy { model_invocable: false, user_invocable: false }) {
            let line = entries.iter().find(|(key, _, _)| key == "disable-model-invocation").map_or(1, |e| e.1);
            found.push(TextFinding::warning(
                line,
                "neither the model nor a user can invoke this skill (`disable-model-invocation` is true and `user-invocable` is false)",
            ));
        }
        if parsed.body.is_empty() {
            found.push(TextFinding::warning(closing_line(text), "no instructions after the frontmatter"));
        }
    }
    found
}

/// Splits a provider reason into the file line it names and the rest:
/// `line N: …` and `invalid YAML frontmatter: line N column C: …` (the forms
/// [`parse_skill_file`] documents).
fn split_reason(reason: &str) -> (Option<usize>, String) {
    let number = |text: &str| -> Option<(usize, usize)> {
        let digits = text.bytes().take_while(u8::is_ascii_digit).count();
        text[..digits].parse().ok().map(|n| (n, digits))
    };
    if let Some(rest) = reason.strip_prefix("line ")
        && let Some((line, digits)) = number(rest)
        && let Some(message) = rest[digits..].strip_prefix(": ")
    {
        return (Some(line), message.to_string());
    }
    const YAML: &str = "invalid YAML frontmatter: line ";
    if let Some(rest) = reason.strip_prefix(YAML)
        && let Some((line, digits)) = number(rest)
    {
        return (Some(line), format!("invalid YAML frontmatter:{}", &rest[digits..]));
    }
    (None, reason.to_string())
}

fn check_name(line: usize, node: &Node, expected: Option<(&str, NamePlace)>, found: &mut Vec<TextFinding>) {
    // A missing, mistyped or ungrammatical name is the provider's reason.
    let Value::Str(name) = &node.value else {
        return;
    };
    let chars = name.chars().count();
    if chars > MAX_NAME_CHARS {
        found.push(TextFinding::error(
            line,
            format!("`name` is {chars} characters; the Agent Skills specification allows at most {MAX_NAME_CHARS}"),
        ));
    }
    if let Some((expected, place)) = expected
        && is_skill_name(name)
        && name != expected
    {
        let message = match place {
            NamePlace::Folder => format!("`name` \"{name}\" does not match its folder name \"{expected}\""),
            NamePlace::File => format!("`name` \"{name}\" does not match its file name \"{expected}.md\""),
        };
        found.push(TextFinding::error(line, message));
    }
}

fn check_description(line: usize, node: &Node, found: &mut Vec<TextFinding>) {
    let Value::Str(description) = &node.value else {
        return;
    };
    let chars = description.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        found.push(TextFinding::error(
            line,
            format!(
                "`description` is {chars} characters; the Agent Skills specification allows at most {MAX_DESCRIPTION_CHARS}"
            ),
        ));
    }
    // What the catalog measures: whitespace runs collapsed, trimmed.
    let shown = description.split(is_ecmascript_whitespace).filter(|word| !word.is_empty()).collect::<Vec<_>>();
    if shown.is_empty() && !description.is_empty() {
        found.push(TextFinding::error(line, "`description` is only whitespace"));
    }
    let shown_chars = shown.iter().map(|word| word.chars().count()).sum::<usize>() + shown.len().saturating_sub(1);
    if shown_chars > CATALOG_DESCRIPTION_CHARS {
        found.push(TextFinding::warning(
            line,
            format!(
                "`description` is {shown_chars} characters with whitespace collapsed; the catalog cuts it to {CATALOG_DESCRIPTION_CHARS} by default"
            ),
        ));
    }
}

fn check_compatibility(line: usize, node: &Node, found: &mut Vec<TextFinding>) {
    let message = match &node.value {
        Value::Str(s) if s.is_empty() => "`compatibility` is empty; leave it out instead".to_string(),
        Value::Str(s) if s.chars().count() > MAX_COMPATIBILITY_CHARS => format!(
            "`compatibility` is {} characters; the Agent Skills specification allows at most {MAX_COMPATIBILITY_CHARS}",
            s.chars().count()
        ),
        Value::Str(_) => return,
        other => format!("`compatibility` must be a string, found {}", other.kind()),
    };
    found.push(TextFinding::error(line, message));
}

fn check_metadata(line: usize, node: &Node, found: &mut Vec<TextFinding>) {
    let Value::Map(entries) = &node.value else {
        found.push(TextFinding::error(
            line,
            format!("`metadata` must be a mapping, found {}; it is ignored", node.value.kind()),
        ));
        return;
    };
    for (key, value) in entries {
        if !matches!(value.value, Value::Str(_)) {
            let line = key.line;
            let key = match &key.value {
                Value::Str(s) => s.clone(),
                other => other.kind().to_string(),
            };
            found.push(TextFinding::warning(
                line,
                format!(
                    "`metadata.{key}` is {}; the Agent Skills specification expects string values",
                    value.value.kind()
                ),
            ));
        }
    }
}

fn check_allowed_tools(line: usize, node: &Node, found: &mut Vec<TextFinding>) {
    match &node.value {
        Value::Str(_) => {}
        Value::Seq(items) if items.iter().all(|item| matches!(item.value, Value::Str(_))) => {
            found.push(TextFinding::warning(
                line,
                "`allowed-tools` is a sequence; the Agent Skills specification defines a space-separated string",
            ));
        }
        other => found.push(TextFinding::error(
            line,
            format!("`allowed-tools` must be a space-separated string, found {}", other.kind()),
        )),
    }
}

/// The line of the closing `---` (the file parsed, so there is one).
fn closing_line(text: &str) -> usize {
    text.split('\n')
        .enumerate()
        .skip(1)
        .find(|(_, line)| line.strip_suffix('\r').unwrap_or(line) == "---")
        .map_or(1, |(index, _)| index + 1)
}

/// Relative Markdown links in the body (`[text](target)`) that point inside
/// `base` (the skill's resource base) at nothing. Links that leave the base
/// depend on where the skill is installed, so they are not judged; fenced
/// code blocks are skipped.
fn missing_links(text: &str, base: &Path) -> Vec<TextFinding> {
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
fn outside_code_spans(line: &str) -> Vec<&str> {
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

/// A folder without `SKILL.md` is just a folder to the provider; one holding
/// the file under another case almost certainly meant to be a skill.
fn misnamed_skill_file(dir: &Path) -> Option<Finding> {
    let entries = fs::read_dir(dir).ok()?;
    let misnamed = entries
        .filter_map(Result::ok)
        .map(|entry| entry.file_name())
        .filter(|name| name.as_encoded_bytes().eq_ignore_ascii_case(SKILL_FILE.as_bytes()))
        .min()?;
    Some(Finding {
        path: dir.join(&misnamed),
        line: None,
        severity: Severity::Warning,
        message: format!("ignored: a bundle's skill file must be named exactly `{SKILL_FILE}`"),
    })
}

#[cfg(test)]
mod tests;

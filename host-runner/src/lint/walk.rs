//! Walking what is linted: a skill root, a bundle folder or one file, read
//! as the local provider reads them.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::providers::frontmatter::parse_skill_file;

use super::links::missing_links;
use super::report::{Finding, LintReport, Severity, TextFinding};
use super::rules::{NamePlace, lint_text};

/// The file that makes a folder a skill.
use skill_rules::SKILL_FILE;

/// The user DeepSeek Harness root's folder of system skills, never listed.
const SYSTEM_DIR: &str = ".system";

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
    let unreadable =
        |message: String| TextFinding { line: None, severity: Severity::Error, message, client_rule: false };
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

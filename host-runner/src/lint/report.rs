//! What a lint run reports: findings with their severity and place, and
//! how they print.

use std::fmt;
use std::path::PathBuf;

/// How bad a finding is: an error fails the lint (and, for this project's
/// rules, keeps the skill out of the catalog); a warning does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
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
    /// Whether it breaks a rule the Agent Skills specification states as
    /// MUST, which a verifying client (the MCP SDKs' Skills clients) refuses
    /// a skill for: such a skill is not served over the MCP Skills extension
    /// (docs/spec.md §6.9).
    pub client_rule: bool,
}

impl TextFinding {
    pub(super) fn error(line: usize, message: impl Into<String>) -> Self {
        Self { line: Some(line), severity: Severity::Error, message: message.into(), client_rule: false }
    }

    /// An error that breaks a rule every verifying client applies.
    pub(super) fn client_rule(line: usize, message: impl Into<String>) -> Self {
        Self { client_rule: true, ..Self::error(line, message) }
    }

    pub(super) fn warning(line: usize, message: impl Into<String>) -> Self {
        Self { line: Some(line), severity: Severity::Warning, message: message.into(), client_rule: false }
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

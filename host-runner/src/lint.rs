//! Checks skill files against the Agent Skills specification and this
//! project's rules, for `skill-host lint`.
//!
//! The specification's rules: `name` is 1–64 characters of the skill-name
//! grammar and equals its folder's name (a bundle `<dir>/SKILL.md`) or its
//! file's stem (a flat `<name>.md`); `description` is 1–1024 characters;
//! `compatibility` at most 500; only the specification's keys (plus the three
//! this project reads) appear. This project's rules are everything the local
//! provider refuses (the same reasons, from [`parse_skill_file`]), and
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
//! [`parse_skill_file`]: crate::providers::parse_skill_file

mod links;
mod report;
mod rules;
mod walk;

pub use self::report::{Finding, LintReport, Severity, TextFinding};
pub use self::rules::{NamePlace, lint_text};
pub use self::walk::{lint_file, lint_path, lint_root};

/// Longest `name` the Agent Skills specification allows, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// Longest `description` the Agent Skills specification allows, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Longest `compatibility` the Agent Skills specification allows, in characters.
pub const MAX_COMPATIBILITY_CHARS: usize = 500;

/// The catalog's default description cap (the plugin's
/// `catalogDescriptionMaxLength`, docs/spec.md §3.5): longer descriptions are cut.
pub const CATALOG_DESCRIPTION_CHARS: usize = skill_rules::DEFAULT_DESCRIPTION_MAX_LENGTH;

#[cfg(test)]
mod tests;

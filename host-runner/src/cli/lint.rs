//! `lint`: check skill files against the Agent Skills specification and this
//! project's rules.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use skill_host::lint::{Finding, LintReport, Severity, lint_path, lint_root};
use skill_host::providers::local::LocalProvider;

use super::common::{GlobalOptions, cwd_or_current, print_out};

/// Exit code when a finding is an error.
const EXIT_LINT_ERRORS: u8 = 1;

/// Check skill files: one line per finding (`path:line: error: …`); exit 1
/// when any finding is an error.
#[derive(Args)]
pub struct LintArgs {
    /// Skill roots, bundle folders or skill files (default: every root the
    /// local provider reads for --cwd).
    #[arg(value_name = "DIR")]
    paths: Vec<PathBuf>,
    /// The working directory whose roots are linted when no DIR is given
    /// (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

impl LintArgs {
    pub fn run(self, global: &GlobalOptions) -> Result<u8> {
        let mut report = LintReport::default();
        if self.paths.is_empty() {
            let cwd = cwd_or_current(self.cwd.as_deref())?;
            let provider = LocalProvider::new(global.local_roots());
            for root in provider.roots_for(Some(Path::new(&cwd))) {
                match std::fs::metadata(&root.path) {
                    Ok(meta) if meta.is_dir() => {}
                    // A root that does not exist holds no skills.
                    Err(_) => continue,
                    Ok(_) => {
                        report.findings.push(Finding {
                            path: root.path,
                            line: None,
                            severity: Severity::Error,
                            message: format!("the {} skill root is not a directory", root.source),
                        });
                        continue;
                    }
                }
                let found = lint_root(&root.path, root.skip_system)
                    .with_context(|| format!("cannot read skill root {}", root.path.display()))?;
                report.extend(found);
            }
        } else {
            for path in &self.paths {
                report.extend(lint_path(path).with_context(|| format!("cannot lint {}", path.display()))?);
            }
        }
        let findings: String = report.findings.iter().map(|finding| format!("{finding}\n")).collect();
        print_out(&findings, None)?;
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        let _ = writeln!(
            std::io::stderr().lock(),
            "{}: {}, {}",
            plural(report.files, "skill file"),
            plural(report.count(Severity::Error), "error"),
            plural(report.count(Severity::Warning), "warning")
        );
        Ok(if report.has_errors() { EXIT_LINT_ERRORS } else { 0 })
    }
}

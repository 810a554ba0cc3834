//! `skills`: every skill found, what shadows what, and what was skipped.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use serde_json::{Value, json};
use skill_host::RegistrySnapshot;

use super::common::{GlobalOptions, cwd_or_current, print_line, print_out, warn_all};

/// List every discovered skill, shadowed duplicate and skipped file.
#[derive(Args)]
pub struct SkillsArgs {
    /// The working directory (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print as JSON.
    #[arg(long)]
    json: bool,
}

impl SkillsArgs {
    pub fn run(self, global: &GlobalOptions) -> Result<u8> {
        let cwd = cwd_or_current(self.cwd.as_deref())?;
        let registry = global.registry();
        let snapshot = registry.snapshot(Some(Path::new(&cwd)));
        warn_all(&snapshot.warnings);
        if self.json {
            print_line(&skills_json(&snapshot).to_string(), None)?;
        } else {
            print_out(&skills_table(&snapshot), None)?;
        }
        Ok(0)
    }
}

fn skills_json(snapshot: &RegistrySnapshot) -> Value {
    let path = |path: &Option<PathBuf>| path.as_ref().map(|path| path.display().to_string());
    json!({
        "skills": snapshot.skills.iter().map(|winner| {
            let skill = &winner.candidate;
            json!({
                "name": skill.name,
                "description": skill.description,
                "source": skill.source,
                "rank": skill.rank,
                "provider": skill.provider,
                "path": path(&skill.path),
                "invocation": skill.invocation,
            })
        }).collect::<Vec<_>>(),
        "shadowed": snapshot.shadowed.iter().map(|shadowed| json!({
            "name": shadowed.candidate.name,
            "source": shadowed.candidate.source,
            "path": path(&shadowed.candidate.path),
            "by": {"source": shadowed.by_source, "path": path(&shadowed.by_path)},
        })).collect::<Vec<_>>(),
        "skipped": snapshot.skipped.iter().map(|skipped| json!({
            "path": skipped.path.display().to_string(),
            "reason": skipped.reason,
        })).collect::<Vec<_>>(),
        "complete": snapshot.complete,
    })
}

fn skills_table(snapshot: &RegistrySnapshot) -> String {
    let mut rows = vec![["NAME", "SOURCE", "RANK", "PROVIDER", "POLICY", "PATH"].map(str::to_owned)];
    for winner in &snapshot.skills {
        let skill = &winner.candidate;
        let policy = match (skill.invocation.model_invocable, skill.invocation.user_invocable) {
            (true, true) => "model+user",
            (true, false) => "model-only",
            (false, true) => "user-only",
            (false, false) => "none",
        };
        rows.push([
            skill.name.clone(),
            skill.source.clone(),
            skill.rank.to_string(),
            skill.provider.clone(),
            policy.to_owned(),
            skill.path.as_ref().map_or_else(|| "-".to_owned(), |path| path.display().to_string()),
        ]);
    }
    let mut widths = [0; 6];
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row.iter().zip(widths).map(|(cell, width)| format!("{cell:<width$}")).collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    for shadowed in &snapshot.shadowed {
        let path =
            |path: &Option<PathBuf>| path.as_ref().map_or_else(|| "-".to_owned(), |path| path.display().to_string());
        out.push_str(&format!(
            "shadowed: {} ({}, {}) by {} ({})\n",
            shadowed.candidate.name,
            shadowed.candidate.source,
            path(&shadowed.candidate.path),
            shadowed.by_source,
            path(&shadowed.by_path)
        ));
    }
    for skipped in &snapshot.skipped {
        out.push_str(&format!("skipped: {}: {}\n", skipped.path.display(), skipped.reason));
    }
    if !snapshot.complete {
        out.push_str("incomplete: some skill state could not be read (see warnings)\n");
    }
    out
}

//! How long the local provider takes to list N skill bundles, cold (the
//! registry lists afresh: every `SKILL.md` read and parsed) and cached (the
//! registry's snapshot cache answers).
//!
//! ```sh
//! cargo run --release -p skill-host --example discovery_bench -- --bundles 1000 --bundles 10000
//! ```
//!
//! Prints one JSON line per size.

use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use serde_json::json;
use skill_host::SkillRegistry;
use skill_host::providers::local::{LocalProvider, LocalRoots};

#[derive(Parser)]
struct Args {
    /// Bundle counts to measure (repeatable).
    #[arg(long, default_values_t = [1000, 10000])]
    bundles: Vec<usize>,
    /// Repetitions of each measurement (the median is printed).
    #[arg(long, default_value_t = 5)]
    repeats: usize,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    for &count in &args.bundles {
        let dir = tempfile::tempdir()?;
        let project = dir.path().join("project");
        let root = project.join(".agents/skills");
        for i in 0..count {
            let bundle = root.join(format!("skill-{i:05}"));
            std::fs::create_dir_all(bundle.join("references"))?;
            std::fs::write(
                bundle.join("SKILL.md"),
                format!(
                    "---\nname: skill-{i:05}\ndescription: Skill number {i}, with a description of about the usual length for a catalog entry.\n---\n\n# Skill {i}\n\nSteps.\n"
                ),
            )?;
            std::fs::write(bundle.join("references/guide.md"), "A resource file the listing never reads.\n")?;
        }
        // User-level roots inside the temporary directory: nothing else is listed.
        let roots = LocalRoots {
            dsh_home: Some(dir.path().join("home/dsh")),
            agents_home: Some(dir.path().join("home/agents")),
            ..LocalRoots::default()
        };
        let registry = Arc::new(SkillRegistry::new());
        registry.register_provider(Arc::new(LocalProvider::new(roots)));
        let cwd = Some(project.as_path());
        let mut cold = Vec::new();
        let mut cached = Vec::new();
        for _ in 0..args.repeats {
            registry.invalidate();
            let start = Instant::now();
            let snapshot = registry.snapshot(cwd);
            cold.push(start.elapsed().as_secs_f64() * 1e3);
            anyhow::ensure!(
                snapshot.skills.len() == count && snapshot.complete,
                "listed {} of {count}",
                snapshot.skills.len()
            );
            let start = Instant::now();
            let again = registry.snapshot(cwd);
            cached.push(start.elapsed().as_secs_f64() * 1e6);
            anyhow::ensure!(Arc::ptr_eq(&snapshot, &again), "the second snapshot did not come from the cache");
        }
        println!(
            "{}",
            json!({
                "bundles": count,
                "cold_ms": median(&mut cold),
                "cached_us": median(&mut cached),
                                "repeats": args.repeats,
            })
        );
    }
    Ok(())
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    (values[values.len() / 2] * 100.0).round() / 100.0
}

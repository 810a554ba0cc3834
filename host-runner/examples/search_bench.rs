//! How long one `skill` tool search takes through the component
//! (docs/spec.md §3.14) at N skills: the search quality corpus
//! (`tests/search/`: the public collections, the hand-written distractors,
//! generated skills up to N) and its labelled queries, each asked
//! `--repeats` times after a warm-up round.
//!
//! ```sh
//! cargo run --release -p skill-host --example search_bench -- --skills 1000
//! ```
//!
//! Prints one JSON line per size: the median and the 95th percentile of
//! the per-query times, in microseconds, the median of a query that matches
//! nothing (the listing and the kept index's check: the floor), and the
//! top-1 and top-3 hit rates.

// The bench reads every part of the corpus but the queries' kinds.
#[allow(dead_code)]
#[path = "../../tests/search/corpus.rs"]
mod corpus;

use std::path::Path;
use std::time::Instant;

use clap::Parser;
use serde_json::json;
use skill_host::{Plugin, SandboxLimits, ToolOutcome};

#[derive(Parser)]
struct Args {
    /// Corpus sizes to measure (repeatable).
    #[arg(long, default_values_t = [1000])]
    skills: Vec<usize>,
    /// Timed rounds over the labelled queries.
    #[arg(long, default_value_t = 5)]
    repeats: usize,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("host-runner/ lives in the repository");
    let queries = corpus::queries(root);
    let plugin = Plugin::embedded(r#"{"skillSearch":true}"#, SandboxLimits::default())?;
    for &total in &args.skills {
        let registry = corpus::registry(root, total);
        let listed = registry.snapshot(None).skills.len();
        anyhow::ensure!(listed == total.max(corpus::base_skill_count(root)), "listed {listed} skills");
        let mut times = Vec::new();
        let (mut top1, mut top3) = (0, 0);
        for round in 0..=args.repeats {
            for labelled in &queries {
                let arguments = json!({ "query": labelled.query }).to_string();
                let start = Instant::now();
                let outcome = plugin.invoke(&registry, None, &arguments)?;
                let elapsed = start.elapsed().as_secs_f64() * 1e6;
                let ToolOutcome::Success { value, .. } = outcome else {
                    anyhow::bail!("{}: {}", labelled.query, outcome.text());
                };
                if round == 0 {
                    let position = value["matches"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .position(|found| found["name"] == labelled.expected.as_str());
                    top1 += usize::from(position == Some(0));
                    top3 += usize::from(matches!(position, Some(0..=2)));
                } else {
                    times.push(elapsed);
                }
            }
        }
        // A query matching nothing: the listing across the boundary and the
        // check that the kept index still holds, with no scoring to speak of.
        let mut nothing: Vec<f64> = (0..queries.len())
            .map(|_| {
                let start = Instant::now();
                plugin.invoke(&registry, None, r#"{"query":"qqqzzz"}"#).map(|_| start.elapsed().as_secs_f64() * 1e6)
            })
            .collect::<Result<_, _>>()?;
        nothing.sort_by(f64::total_cmp);
        times.sort_by(f64::total_cmp);
        let percentile = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
        let count = queries.len() as f64;
        println!(
            "{}",
            json!({
                "skills": listed,
                "queries": queries.len(),
                "median_us": percentile(0.5).round(),
                "p95_us": percentile(0.95).round(),
                "nothing_matched_median_us": nothing[nothing.len() / 2].round(),
                "top1": top1 as f64 / count,
                "top3": top3 as f64 / count,
                "repeats": args.repeats,
            })
        );
    }
    Ok(())
}

//! Measures what the real plugin produces and needs for large catalogs and
//! bodies, to choose the sandbox's default limits (docs/security.md).
//! Prints one JSON object per line:
//!
//! ```sh
//! cargo run --release -p skill-host --example sandbox_sizes
//! ```
//!
//! For each catalog: how many skills, the description profile, the bytes of
//! the catalog message the pre-step adds, how long the first pre-step took
//! (fresh instance, so it includes instantiation), and the smallest memory cap
//! (in MiB) under which it still succeeds. For each body: its size, the tool
//! result's bytes and the smallest memory cap for one `skill` call.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use skill_host::message::single_text;
use skill_host::session::{SessionHeader, SessionLog, SharedSession};
use skill_host::{
    Decision, EMBEDDED_PLUGIN, HostError, OutputLimits, Plugin, RuntimeSkill, SandboxLimits, SkillRegistry, StepInput,
    StepOutcome, ToolOutcome, run_step,
};

/// Description profiles: a typical one (the median of the public corpora is
/// about 200 characters), one at the catalog's 500-character cap, and the
/// worst case for escaping (every character becomes `&amp;`).
fn description(profile: &str, index: usize) -> String {
    match profile {
        "typical" => format!("Skill {index}: {}", "Review, test and document the change set. ".repeat(5)),
        "at-cap" => format!("{index} {}", "word ".repeat(100)),
        "all-ampersands" => "&".repeat(600),
        _ => unreachable!(),
    }
}

/// Limits generous enough that only the memory cap can refuse.
fn limits(memory_mb: usize) -> SandboxLimits {
    SandboxLimits {
        timeout: Duration::from_secs(60),
        memory_bytes: memory_mb << 20,
        output: OutputLimits { max_added_messages: 64, max_text_bytes: usize::MAX, max_output_bytes: usize::MAX },
        ..SandboxLimits::default()
    }
}

/// The real plugin under `memory_mb`, compiled once and then loaded from a
/// cache (the search below makes many).
fn plugin(memory_mb: usize) -> Result<Plugin, HostError> {
    let cache = std::env::temp_dir().join("skill-host-sandbox-sizes");
    Plugin::new_cached(EMBEDDED_PLUGIN, "{}", limits(memory_mb), &cache)
}

fn catalog_step(registry: &Arc<SkillRegistry>, memory_mb: usize) -> Result<(usize, Duration), HostError> {
    let plugin = plugin(memory_mb)?;
    let session = SharedSession::new(SessionLog::in_memory(SessionHeader::new(Some("/w".to_owned()))));
    let input = StepInput { cwd: Some("/w".into()), ..StepInput::default() };
    let started = Instant::now();
    let outcome = run_step(&plugin, registry, &session, &input, Decision::Enter(vec![]))?;
    let elapsed = started.elapsed();
    let StepOutcome::Decided(Decision::Enter(messages)) = outcome else { unreachable!("{outcome:?}") };
    Ok((messages.first().and_then(single_text).map_or(0, str::len), elapsed))
}

/// The smallest cap in MiB (a power-of-two search, then linear) for which `run` succeeds.
fn smallest_memory(run: impl Fn(usize) -> Result<(), HostError>) -> usize {
    let mut high = 1;
    while run(high).is_err() {
        high *= 2;
        assert!(high <= 4096, "needs more than 4 GiB");
    }
    let mut low = high / 2;
    // Invariant: `low` fails (or is 0), `high` succeeds.
    while high - low > 1 {
        let middle = (low + high) / 2;
        if run(middle).is_ok() { high = middle } else { low = middle }
    }
    high
}

fn main() -> Result<(), HostError> {
    for profile in ["typical", "at-cap", "all-ampersands"] {
        for count in [100, 1_000, 10_000] {
            let registry = Arc::new(SkillRegistry::new());
            for index in 0..count {
                let skill = RuntimeSkill::new(format!("skill-{index:05}"), description(profile, index), "Body.");
                registry.register_runtime(skill).expect("a valid skill");
            }
            let (bytes, elapsed) = catalog_step(&registry, 1024)?;
            let memory_mb = smallest_memory(|mb| catalog_step(&registry, mb).map(drop));
            println!(
                "{}",
                json!({"catalog": {"skills": count, "profile": profile, "bytes": bytes,
                       "first_step_ms": elapsed.as_secs_f64() * 1e3, "min_memory_mib": memory_mb}})
            );
        }
    }
    for body_mib in [1, 4, 16] {
        let registry = Arc::new(SkillRegistry::new());
        let body = "x".repeat(body_mib << 20);
        registry.register_runtime(RuntimeSkill::new("big", "A big body.", body)).expect("a valid skill");
        let call = |mb: usize| -> Result<usize, HostError> {
            let plugin = plugin(mb)?;
            match plugin.invoke(&registry, Some("/w"), r#"{"name":"big"}"#)? {
                ToolOutcome::Success { text, .. } => Ok(text.len()),
                ToolOutcome::Error { text } => panic!("{text}"),
            }
        };
        let text_bytes = call(1024)?;
        let memory_mb = smallest_memory(|mb| call(mb).map(drop));
        println!("{}", json!({"body": {"mib": body_mib, "text_bytes": text_bytes, "min_memory_mib": memory_mb}}));
    }
    Ok(())
}

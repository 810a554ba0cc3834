//! The steady-state pre-step (or `skill` load) benchmark, with the workload of
//! the reference bench (`bench/reference/bench.mjs`): N runtime
//! skills with ~120-character descriptions, a session of M mixed events whose
//! catalog was published near the start and is still visible, K warm calls.
//!
//! ```sh
//! cargo run --release -p skill-host --example pre_step_bench -- --skills 1000 --events 100000 --iterations 200 [--native] [--load [--section '{name}' | --files --path references/api.md]]
//! ```
//!
//! Prints one JSON line. `--native` runs the same plugin logic compiled for
//! this machine, with no WebAssembly boundary: the physical limit.
//! `--component FILE` times the steady steps through another component
//! instead (the session is still published by the real plugin first): with
//! `scripts/idle-plugin`, a plugin that does nothing, that is the sandbox's
//! own cost, the floor under any plugin.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use serde_json::{Value, json};
use skill_host::message::{self, user_source};
use skill_host::session::{SessionHeader, SessionLog, SharedSession, SurfaceOp};
use skill_host::{Decision, Plugin, RuntimeSkill, SandboxLimits, SkillRegistry, StepInput, StepOutcome, run_step};

#[derive(Parser)]
struct Args {
    /// Runtime skills to register.
    #[arg(long, default_value_t = 100)]
    skills: usize,
    /// Events in the session (at least 3).
    #[arg(long, default_value_t = 1000)]
    events: usize,
    /// Timed calls.
    #[arg(long, default_value_t = 200)]
    iterations: usize,
    /// Warm-up calls (default: min(50, iterations)).
    #[arg(long)]
    warmup: Option<usize>,
    /// Run the plugin logic natively instead of through the component.
    #[arg(long)]
    native: bool,
    /// Time the `skill` tool for one skill instead of the pre-step.
    #[arg(long)]
    load: bool,
    /// With `--load`, read this section of the skill (its first heading is
    /// its name); give `--config '{"skillReads":true}'`.
    #[arg(long, value_name = "HEADING", requires = "load")]
    section: Option<String>,
    /// With `--load`, read this file of the skill instead (needs `--files`
    /// and `--config '{"skillReads":true}'`).
    #[arg(long, value_name = "PATH", requires = "files", conflicts_with = "section")]
    path: Option<String>,
    /// Serve the skills from a provider that keeps them in memory and gives
    /// each one a file, `references/api.md` (about 2 KB), instead of as
    /// runtime skills (which have no files).
    #[arg(long)]
    files: bool,
    /// Before each call (untimed), append a user message to the session, so
    /// every step must look at the history again (a real conversation).
    #[arg(long)]
    growing: bool,
    /// Time the pre-steps through this component (configured with `{}`)
    /// instead of the real plugin.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["native", "load"])]
    component: Option<std::path::PathBuf>,
    /// Plugin configuration (JSON text), e.g. '{"loadedSkills":true}'.
    #[arg(long, value_name = "JSON", default_value = "{}", conflicts_with = "native")]
    config: String,
    /// After the catalog, load one skill with the `skill` tool and record
    /// the result in the session (what `loadedSkills` reads on every step).
    #[arg(long)]
    record_load: bool,
}

const CWD: &str = "/workspace";

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    anyhow::ensure!(
        args.skills >= 1 && args.events >= 3 && args.iterations >= 1,
        "need --skills ≥ 1, --events ≥ 3, --iterations ≥ 1"
    );
    let skills = workload::skills(args.skills);
    let registry = Arc::new(SkillRegistry::new());
    if args.files {
        registry.register_provider(Arc::new(files::with_files(&skills)));
    } else {
        for (name, description, content) in &skills {
            registry.register_runtime(RuntimeSkill::new(name, description, content)).map_err(anyhow::Error::msg)?;
        }
    }
    let plugin = Plugin::embedded(&args.config, SandboxLimits::default())?;
    let session = SharedSession::new(SessionLog::in_memory(SessionHeader::new(Some(CWD.to_owned()))));
    let input = StepInput { cwd: Some(CWD.into()), ..StepInput::default() };

    // The session: the end-of-seed marker, a user prompt, the catalog as a
    // real pre-step publishes it, then synthetic history up to M events.
    {
        let mut log = session.lock();
        log.append_event("session/end-seed", json!({}), None)?;
        log.append_user_messages(vec![(
            message::user_message(user_source(), "Help me get this repository ready for the release."),
            SurfaceOp::Append,
        )])?;
    }
    let first = run_step(&plugin, &registry, &session, &input, Decision::Enter(vec![]))?;
    anyhow::ensure!(
        matches!(&first, StepOutcome::Decided(Decision::Enter(m)) if m.len() == 1),
        "the catalog was not published once: {first:?}"
    );
    if args.record_load {
        let arguments = json!({ "name": skills[0].0 }).to_string();
        let outcome = plugin.invoke(&registry, Some(CWD), &arguments)?;
        skill_host::record_tool_result(&mut session.lock(), &outcome)?;
    }
    {
        let mut log = session.lock();
        let missing = args.events.saturating_sub(log.next_seq() as usize);
        workload::append_history(&mut log, missing)?;
        anyhow::ensure!(log.next_seq() as usize >= args.events, "the session has {} events", log.next_seq());
        anyhow::ensure!(log.is_visible(2), "the catalog is not visible");
    }

    let other;
    let timed = match &args.component {
        Some(path) => {
            let bytes =
                std::fs::read(path).map_err(|error| anyhow::anyhow!("cannot read {}: {error}", path.display()))?;
            other = Plugin::new(&bytes, "{}", SandboxLimits::default())?;
            &other
        }
        None => &plugin,
    };
    let target = skills[args.skills / 2].0.clone();
    let mut native_memory = skill_plugin::pre_step::Memory::default();
    let mut op: Box<dyn FnMut() -> anyhow::Result<()>> = match (args.load, args.native) {
        (false, false) => Box::new(|| {
            let outcome = run_step(timed, &registry, &session, &input, Decision::Enter(vec![]))?;
            anyhow::ensure!(
                outcome == StepOutcome::Decided(Decision::Enter(vec![])),
                "a steady-state step injected {outcome:?}"
            );
            Ok(())
        }),
        (false, true) => Box::new(|| native::pre_step(&registry, &session, &mut native_memory)),
        (true, false) => {
            let arguments = match (&args.section, &args.path) {
                (Some(section), _) => json!({ "name": target, "section": section.replace("{name}", &target) }),
                (None, Some(path)) => json!({ "name": target, "path": path }),
                (None, None) => json!({ "name": target }),
            }
            .to_string();
            Box::new(move || {
                let outcome = plugin.invoke(&registry, Some(CWD), &arguments)?;
                anyhow::ensure!(matches!(outcome, skill_host::ToolOutcome::Success { .. }), "load failed: {outcome:?}");
                Ok(())
            })
        }
        (true, true) => {
            let arguments = json!({ "name": target }).to_string();
            Box::new(move || native::load(&registry, &arguments))
        }
    };

    let grow = || -> anyhow::Result<()> {
        if args.growing {
            let data = message::user_message(user_source(), "And one more thing.");
            session.lock().append_user_messages(vec![(data, SurfaceOp::Append)])?;
        }
        Ok(())
    };
    grow()?;
    let cold = Instant::now();
    op()?;
    let first_us = cold.elapsed().as_secs_f64() * 1e6;
    for _ in 1..args.warmup.unwrap_or(args.iterations.min(50)) {
        grow()?;
        op()?;
    }
    let mut samples = Vec::with_capacity(args.iterations);
    for _ in 0..args.iterations {
        grow()?;
        let start = Instant::now();
        op()?;
        samples.push(start.elapsed().as_secs_f64() * 1e6);
    }
    samples.sort_by(f64::total_cmp);
    // Two decimals: a steady-state step takes well under a microsecond.
    let round = |value: f64| (value * 100.0).round() / 100.0;
    println!(
        "{}",
        json!({
            "impl": "skill-host",
            "mode": if args.native { "native" } else { "wasm" },
            "component": args.component.as_ref().map(|path| path.display().to_string()),
                        "op": if args.load { "load" } else { "pre-step" },
            "growing": args.growing,
            "config": args.config,
            "record_load": args.record_load,
            "skills": args.skills,
            "events": args.events,
            "iterations": args.iterations,
            "median_us": round(percentile(&samples, 50.0)),
            "p90_us": round(percentile(&samples, 90.0)),
            "min_us": round(samples[0]),
            "first_us": round(first_us),
        })
    );
    Ok(())
}

/// Nearest-rank percentile, as the reference bench computes it.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The reference bench's generators, ported: same names, descriptions and
/// event mix (the same mulberry32 generator and seeds).
#[path = "pre_step_bench/files.rs"]
mod files;

mod workload {
    use super::*;

    fn rng(seed: u32) -> impl FnMut() -> f64 {
        let mut a = seed;
        move || {
            a = a.wrapping_add(0x6D2B_79F5);
            let mut t = a;
            t = (t ^ (t >> 15)).wrapping_mul(t | 1);
            t ^= t.wrapping_add((t ^ (t >> 7)).wrapping_mul(t | 61));
            f64::from(t ^ (t >> 14)) / 4_294_967_296.0
        }
    }

    const VERBS: [&str; 16] = [
        "review",
        "write",
        "debug",
        "migrate",
        "profile",
        "audit",
        "draft",
        "refactor",
        "document",
        "triage",
        "deploy",
        "test",
        "summarize",
        "format",
        "translate",
        "benchmark",
    ];
    const OBJECTS: [&str; 18] = [
        "pdf-forms",
        "release-notes",
        "sql-queries",
        "rust-crates",
        "react-components",
        "api-schemas",
        "docker-images",
        "terraform-plans",
        "git-history",
        "csv-reports",
        "k8s-manifests",
        "python-tests",
        "changelogs",
        "slide-decks",
        "spreadsheets",
        "security-findings",
        "incident-reports",
        "wasm-modules",
    ];
    const PURPOSES: [&str; 4] = [
        "Use when the user asks to {v} {o} in a repository, following the team conventions and checking every result before reporting",
        "Guides how to {v} {o} safely: collect context first, apply the smallest change, and verify with the project tooling",
        "Step-by-step workflow to {v} {o}, including edge cases, naming rules, and a final checklist the agent must complete",
        "Helps {v} {o} for production use; covers validation, rollback notes, and how to explain the outcome to reviewers",
    ];

    /// `(name, description, content)` for N skills.
    pub fn skills(n: usize) -> Vec<(String, String, String)> {
        let mut rand = rng(42);
        (0..n)
            .map(|i| {
                let v = VERBS[i % VERBS.len()];
                let o = OBJECTS[(i / VERBS.len()) % OBJECTS.len()];
                let round = i / (VERBS.len() * OBJECTS.len());
                let name = if round == 0 { format!("{v}-{o}") } else { format!("{v}-{o}-{}", round + 1) };
                let spaced = o.replacen('-', " ", 1);
                let purpose = PURPOSES[(rand() * PURPOSES.len() as f64) as usize];
                let mut description = purpose.replacen("{v}", v, 1).replacen("{o}", &spaced, 1);
                if description.chars().count() > 125 {
                    description = description.chars().take(122).collect::<String>().trim_end().to_owned() + ".";
                } else {
                    description.push('.');
                }
                let mut body = vec![format!("# {name}"), String::new(), format!("Follow these steps to {v} {spaced}."), String::new()];
                body.extend((1..=12).map(|k| format!("{k}. Step {k}: inspect the relevant files, apply the change for item {k}, and record what you verified.")));
                body.push(String::new());
                body.push("Report the outcome with file paths and the commands you ran.".to_owned());
                (name, description, body.join("\n"))
            })
            .collect()
    }

    const USER_TEXTS: [&str; 4] = [
        "Can you look at the failing test in the parser module and tell me why it broke after the last refactor?",
        "Please update the README with the new configuration flags and an example for the CLI.",
        "Run the benchmarks again and compare against yesterday; summarize anything that regressed by more than five percent.",
        "Now add error handling for the empty-input case and make sure the tests cover it.",
    ];
    const ASSISTANT_TEXTS: [&str; 3] = [
        "I will start by reading the relevant source files and the recent commits to understand the change.",
        "The failure comes from an off-by-one in the tokenizer: the last byte of the buffer is skipped when the input ends without a newline. I will fix the bound and add a regression test.",
        "Done. The change is limited to two files; all tests pass locally and the benchmark numbers are unchanged within noise.",
    ];

    fn assistant(step: u32, content: Value) -> Value {
        json!({"turn": 1, "step": step, "message": {"role": "assistant", "content": content, "source": {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"}, "id": message::new_message_id()}})
    }

    /// Appends `count` events: user prompts, assistant messages with tool
    /// calls, tool results of about 1 KB, assistant wrap-ups.
    pub fn append_history(log: &mut SessionLog, count: usize) -> anyhow::Result<()> {
        let mut rand = rng(7);
        let mut call = 0;
        for phase in 0..count {
            match phase % 4 {
                0 => {
                    let text = USER_TEXTS[(rand() * USER_TEXTS.len() as f64) as usize];
                    log.append_user_messages(vec![(message::user_message(user_source(), text), SurfaceOp::Append)])?;
                }
                1 => {
                    call += 1;
                    let content = json!([
                        {"type": "text", "text": ASSISTANT_TEXTS[0]},
                        {"type": "tool-call", "id": format!("call-{call}"), "name": "read", "arguments": json!({"path": format!("src/module_{}.rs", call % 97)}).to_string()},
                    ]);
                    log.append_event("assistant/message", assistant(1, content), Some(SurfaceOp::Append))?;
                }
                2 => {
                    let lines: Vec<String> = (0..12)
                        .map(|k| {
                            format!(
                                "{:>4}| let value_{k} = compute(input, {}); // line {k}",
                                k + 1,
                                (rand() * 1000.0) as u32
                            )
                        })
                        .collect();
                    let data = json!({"turn": 1, "step": 1, "message": {"id": message::new_message_id(), "role": "user", "source": {"kind": "tool", "callId": format!("call-{call}")}, "content": [{"type": "tool-result", "toolCallId": format!("call-{call}"), "isError": false, "content": [{"type": "text", "text": lines.join("\n")}]}]}});
                    log.append_event("tool/result", data, Some(SurfaceOp::Append))?;
                }
                _ => {
                    let text = ASSISTANT_TEXTS[1 + (rand() * 2.0) as usize];
                    log.append_event(
                        "assistant/message",
                        assistant(2, json!([{"type": "text", "text": text}])),
                        Some(SurfaceOp::Append),
                    )?;
                }
            }
        }
        Ok(())
    }
}

/// The plugin's logic called directly, over the same registry and session.
mod native {
    use serde_json::Value;
    use skill_plugin::types as core;

    use super::*;

    /// The registry as the plugin sees it: every question about the call's cwd.
    struct Registry<'a>(&'a SkillRegistry);

    fn summary(skill: &skill_host::SkillCandidate) -> core::SkillSummary {
        core::SkillSummary {
            body_digest: None,
            name: skill.name.clone(),
            description: skill.description.clone(),
            when_to_use: skill.when_to_use.clone(),
            invocation: core::InvocationPolicy {
                model_invocable: skill.invocation.model_invocable,
                user_invocable: skill.invocation.user_invocable,
            },
            provider: skill.provider.clone(),
            source: skill.source.clone(),
            path: skill.path.as_ref().map(|path| path.display().to_string()),
        }
    }

    impl core::Registry for Registry<'_> {
        fn snapshot(&self, known: Option<u64>) -> Result<core::SnapshotAnswer, core::RegistryError> {
            let snapshot = self.0.snapshot(Some(Path::new(CWD)));
            if snapshot.complete && known == Some(snapshot.revision) {
                return Ok(core::SnapshotAnswer::Unchanged);
            }
            Ok(core::SnapshotAnswer::Changed(core::Snapshot {
                complete: snapshot.complete,
                revision: snapshot.revision,
                skills: snapshot.skills.iter().map(|winner| summary(&winner.candidate)).collect(),
            }))
        }

        fn list(&self, name: Option<&str>) -> Result<Vec<core::SkillSummary>, core::RegistryError> {
            let snapshot =
                self.0.list(Some(Path::new(CWD))).map_err(|error| core::RegistryError::Failed(error.to_string()))?;
            Ok(skill_host::winners_named(&snapshot, name).map(|winner| summary(&winner.candidate)).collect())
        }

        fn get(&self, name: &str) -> Result<Option<core::SkillDefinition>, core::RegistryError> {
            let definition = self
                .0
                .get(Some(Path::new(CWD)), name)
                .map_err(|error| core::RegistryError::Failed(error.to_string()))?;
            Ok(definition.map(|definition| {
                let skill = summary(&definition.summary);
                core::SkillDefinition {
                    body_digest: None,
                    name: skill.name,
                    description: skill.description,
                    invocation: skill.invocation,
                    provider: skill.provider,
                    resource_base: None,
                    path: skill.path,
                    content: definition.content,
                }
            }))
        }
    }

    struct Session<'a>(&'a SessionLog);

    impl core::SessionHistory for Session<'_> {
        fn list_user_messages(
            &self,
            filters: &[core::SourceFilter],
            before: Option<u64>,
            limit: u32,
        ) -> core::MessageRefPage {
            let mut refs: Vec<core::MessageRef> = Vec::new();
            let mut kinds: Vec<&str> = filters.iter().map(|filter| filter.kind.as_str()).collect();
            kinds.dedup();
            for kind in kinds {
                for event in self.0.user_messages_of_kind(kind).rev() {
                    if before.is_some_and(|before| event.seq >= before) {
                        continue;
                    }
                    if filters.iter().any(|filter| {
                        filter.kind == kind && filter.plugin.as_deref().is_none_or(|p| Some(p) == event.plugin)
                    }) {
                        refs.push(core::MessageRef { seq: event.seq, visible: self.0.is_visible(event.seq) });
                    }
                }
            }
            refs.sort_by_key(|reference| std::cmp::Reverse(reference.seq));
            let next = (refs.len() > limit as usize).then(|| refs[limit as usize - 1].seq);
            refs.truncate(limit as usize);
            core::MessageRefPage { refs, next }
        }

        fn get_user_message(&self, seq: u64) -> Option<core::Message> {
            self.0.user_message(seq).expect("the bench's session lives in memory").map(|event| core::Message {
                source: event.source.to_string(),
                content: event
                    .content
                    .iter()
                    .map(|block| match block.get("text").and_then(Value::as_str) {
                        Some(text) if block.get("type").and_then(Value::as_str) == Some("text") => {
                            core::ContentBlock::Text(text.to_owned())
                        }
                        _ => core::ContentBlock::Other(block.to_string()),
                    })
                    .collect(),
            })
        }
    }

    pub fn pre_step(
        registry: &SkillRegistry,
        session: &SharedSession,
        memory: &mut skill_plugin::pre_step::Memory,
    ) -> anyhow::Result<()> {
        let log = session.lock();
        let context = core::StepContext {
            session: log.key(),
            registry_revision: registry.cached_revision(Some(Path::new(CWD))),
            history_version: log.history_version(),
            tool_view: core::ToolView::Visible,
            aborted: false,
        };
        let config = skill_plugin::config::Config::default();
        // What the component's glue calls for an entering proposal.
        let decided = skill_plugin::pre_step::pre_step(
            &config,
            memory,
            &context,
            core::Decision::Enter(Vec::new()),
            &Registry(registry),
            &Session(&log),
        );
        anyhow::ensure!(decided == Ok(None), "a steady-state step decided {decided:?}");
        Ok(())
    }

    pub fn load(registry: &SkillRegistry, arguments: &str) -> anyhow::Result<()> {
        let result = skill_plugin::tool::invoke(&Registry(registry), arguments)
            .map_err(|error| anyhow::anyhow!(error.model_text()))?;
        std::hint::black_box(skill_plugin::tool::render(&result));
        Ok(())
    }
}

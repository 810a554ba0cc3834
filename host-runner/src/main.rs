//! `skill-host`: see what the model sees. Runs the skill plugin in its
//! sandbox against a DeepSeek Harness session file and the skills on disk
//! (SPEC §6).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};
use skill_host::message::{self, single_text};
use skill_host::providers::local::{LocalProvider, LocalRoots};
use skill_host::registry::RegistrySnapshot;
use skill_host::scenario::Scenario;
use skill_host::session::{SessionLog, SurfaceOp};
use skill_host::{
    Decision, EMBEDDED_PLUGIN, Plugin, SandboxLimits, SkillRegistry, StepInput, StepOutcome, ToolOutcome, ToolView,
    run_step,
};

/// Exit code of a `load` whose tool call failed.
const EXIT_TOOL_ERROR: u8 = 1;
/// Exit code of a failure of the host itself.
const EXIT_HOST_FAILURE: u8 = 3;

/// Run the DeepSeek Harness skill plugin in a sandbox and see exactly what the model sees.
#[derive(Parser)]
#[command(name = "skill-host", version)]
struct Cli {
    #[command(flatten)]
    global: GlobalOptions,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct GlobalOptions {
    /// A plugin component to run instead of the one built into this binary.
    #[arg(long, global = true, value_name = "FILE")]
    plugin: Option<PathBuf>,
    /// Plugin configuration (a JSON object), e.g. {"catalogDescriptionMaxLength": 200}.
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Deadline of one plugin call, in milliseconds.
    #[arg(long, global = true, value_name = "N", default_value_t = 1000)]
    timeout_ms: u64,
    /// Memory cap of one plugin call, in MiB.
    #[arg(long, global = true, value_name = "N", default_value_t = 64)]
    memory_mb: usize,
}

#[derive(Subcommand)]
enum Command {
    /// Run one pre-step for a session and append what it decides.
    Step {
        /// The session file (created with a header if missing).
        #[arg(long, value_name = "FILE")]
        session: PathBuf,
        /// The working directory (sets the header's cwd when creating; overrides it otherwise).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// A user message proposed for this step (repeatable).
        #[arg(long = "message", value_name = "TEXT")]
        messages: Vec<String>,
        /// How the agent's tool view resolves `skill`.
        #[arg(long, value_enum, default_value_t = ViewArg::Visible)]
        tool_view: ViewArg,
        /// Print the decision as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Call the `skill` tool as the model would.
    Load {
        /// The skill name.
        name: String,
        /// Record the call's result in this session file.
        #[arg(long, value_name = "FILE")]
        session: Option<PathBuf>,
        /// The working directory (default: the session's, else the current one).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Hide the whole visible conversation behind a summary message.
    Compact {
        /// The session file.
        #[arg(long, value_name = "FILE")]
        session: PathBuf,
    },
    /// List every discovered skill, shadowed duplicate and skipped file.
    Skills {
        /// The working directory (default: the current one).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a scenario file against in-memory providers.
    Replay {
        /// The scenario (SPEC §7).
        scenario: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum ViewArg {
    Visible,
    Hidden,
    Shadowed,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            // One line, naming what failed.
            let text = format!("{error:#}").replace('\n', " ");
            eprintln!("error: {text}");
            ExitCode::from(EXIT_HOST_FAILURE)
        }
    }
}

fn run(cli: Cli) -> Result<u8> {
    let global = &cli.global;
    match cli.command {
        Command::Step {
            session,
            cwd,
            messages,
            tool_view,
            json,
        } => {
            let cwd = cwd.map(|cwd| absolute(&cwd)).transpose()?;
            let log = SessionLog::open_or_create(&session, cwd.as_deref())?;
            warn_all(log.warnings());
            let cwd = cwd.or_else(|| log.header().cwd.clone());
            let plugin = load_plugin(global)?;
            let registry = local_registry();
            let session = Arc::new(Mutex::new(log));
            let input = StepInput {
                cwd,
                tool_view: match tool_view {
                    ViewArg::Visible => ToolView::Visible,
                    ViewArg::Hidden => ToolView::Hidden,
                    ViewArg::Shadowed => ToolView::Shadowed,
                },
                abort: None,
            };
            let proposed = messages
                .iter()
                .map(|text| message::user_message(message::user_source(), text))
                .collect();
            let outcome = run_step(&plugin, &registry, &session, &input, Decision::Enter(proposed))?;
            let StepOutcome::Decided(Decision::Enter(messages)) = outcome else {
                anyhow::bail!("the pre-step did not enter the step: {outcome:?}");
            };
            if json {
                println!("{}", json!({"kind": "enter", "messages": messages}));
            } else if !messages.is_empty() {
                let texts: Vec<String> = messages.iter().map(message_text).collect();
                println!("{}", texts.join("\n\n"));
            }
            Ok(0)
        }
        Command::Load {
            name,
            session,
            cwd,
            json,
        } => {
            let log = session
                .as_deref()
                .map(|path| SessionLog::open_or_create(path, None))
                .transpose()?;
            if let Some(log) = &log {
                warn_all(log.warnings());
            }
            let cwd = match cwd {
                Some(cwd) => Some(absolute(&cwd)?),
                None => log
                    .as_ref()
                    .and_then(|log| log.header().cwd.clone())
                    .or(Some(absolute(Path::new("."))?)),
            };
            let plugin = load_plugin(global)?;
            let registry = local_registry();
            let arguments = json!({ "name": name }).to_string();
            let outcome = plugin.invoke(&registry, cwd.as_deref(), &arguments)?;
            if let Some(mut log) = log {
                log.append_event("tool/result", tool_result(&outcome), Some(SurfaceOp::Append))?;
            }
            if json {
                match &outcome {
                    ToolOutcome::Success { value, text } => println!("{}", json!({"ok": value, "text": text})),
                    ToolOutcome::Error { text } => println!("{}", json!({ "error": text })),
                }
            } else {
                println!("{}", outcome.text());
            }
            Ok(match outcome {
                ToolOutcome::Success { .. } => 0,
                ToolOutcome::Error { .. } => EXIT_TOOL_ERROR,
            })
        }
        Command::Compact { session } => {
            let mut log = SessionLog::open(&session)?;
            warn_all(log.warnings());
            log.compact(skill_host::scenario::COMPACTION_SUMMARY)?;
            Ok(0)
        }
        Command::Skills { cwd, json } => {
            let cwd = absolute(cwd.as_deref().unwrap_or(Path::new(".")))?;
            let registry = local_registry();
            let snapshot = registry.snapshot(Some(Path::new(&cwd)));
            warn_all(&snapshot.warnings);
            if json {
                println!("{}", skills_json(&snapshot));
            } else {
                print!("{}", skills_table(&snapshot));
            }
            Ok(0)
        }
        Command::Replay { scenario } => {
            let text = std::fs::read_to_string(&scenario)
                .with_context(|| format!("cannot read scenario {}", scenario.display()))?;
            let mut parsed = Scenario::parse(&text).with_context(|| format!("scenario {}", scenario.display()))?;
            // The scenario's own configuration wins over --config.
            if parsed.config.is_none() {
                parsed.config = global.config.as_deref().map(read_config).transpose()?;
            }
            let component = component_bytes(global)?;
            let output = parsed.replay(&component, limits(global))?;
            println!("{}", pretty(&output));
            Ok(0)
        }
    }
}

fn limits(global: &GlobalOptions) -> SandboxLimits {
    SandboxLimits {
        timeout: Duration::from_millis(global.timeout_ms),
        memory_bytes: global.memory_mb.saturating_mul(1024 * 1024),
    }
}

fn component_bytes(global: &GlobalOptions) -> Result<Vec<u8>> {
    match &global.plugin {
        Some(path) => std::fs::read(path).with_context(|| format!("cannot read plugin {}", path.display())),
        None => Ok(EMBEDDED_PLUGIN.to_vec()),
    }
}

fn read_config(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read configuration {}", path.display()))
}

fn load_plugin(global: &GlobalOptions) -> Result<Plugin> {
    let config = global
        .config
        .as_deref()
        .map(read_config)
        .transpose()?
        .unwrap_or_else(|| "{}".to_owned());
    Ok(Plugin::new(&component_bytes(global)?, &config, limits(global))?)
}

fn local_registry() -> Arc<SkillRegistry> {
    let registry = Arc::new(SkillRegistry::new());
    registry.register_provider(Arc::new(LocalProvider::new(LocalRoots::from_env())));
    registry
}

fn absolute(path: &Path) -> Result<String> {
    let absolute = std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    absolute
        .to_str()
        .map(str::to_owned)
        .with_context(|| format!("{} is not valid UTF-8", absolute.display()))
}

fn warn_all(warnings: &[String]) {
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
}

fn message_text(data: &Value) -> String {
    single_text(data).map_or_else(|| data["content"].to_string(), str::to_owned)
}

/// The `data` of a `tool/result` event recording a `skill` call, in DeepSeek Harness's shape.
fn tool_result(outcome: &ToolOutcome) -> Value {
    let call_id = format!("call-{}", message::new_message_id());
    let is_error = matches!(outcome, ToolOutcome::Error { .. });
    json!({
        "message": {
            "id": message::new_message_id(),
            "role": "user",
            "source": {"kind": "tool", "callId": call_id},
            "content": [{
                "type": "tool-result",
                "toolCallId": call_id,
                "isError": is_error,
                "content": [{"type": "text", "text": outcome.text()}],
            }],
        },
    })
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
            skill
                .path
                .as_ref()
                .map_or_else(|| "-".to_owned(), |path| path.display().to_string()),
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
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    for shadowed in &snapshot.shadowed {
        let path = |path: &Option<PathBuf>| {
            path.as_ref()
                .map_or_else(|| "-".to_owned(), |path| path.display().to_string())
        };
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

/// Pretty JSON with one-space indentation, as the scenario examples are written.
fn pretty(value: &Value) -> String {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(value, &mut serializer).expect("serialising a JSON value to memory cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

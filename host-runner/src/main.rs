//! `skill-host`: see what the model sees. Runs the skill plugin in its
//! sandbox against a DeepSeek Harness session file and the skills on disk
//! (docs/spec.md §6). Each command lives in its own file under `cli/`.

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use std::io::Write;

use cli::common::{GlobalOptions, OutputError, UsageError};

/// Exit code of a command line that names something unusable (clap's own
/// usage errors exit 2 too).
const EXIT_USAGE: u8 = 2;

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

#[derive(Subcommand)]
enum Command {
    Step(cli::step::StepArgs),
    Load(cli::load::LoadArgs),
    Compact(cli::compact::CompactArgs),
    Skills(cli::skills::SkillsArgs),
    Catalog(cli::catalog::CatalogArgs),
    Lint(cli::lint::LintArgs),
    Replay(cli::replay::ReplayArgs),
    Component(cli::component::ComponentArgs),
    SystemPrompt(cli::system_prompt::SystemPromptArgs),
    Expand(cli::expand::ExpandArgs),
    Mcp(cli::mcp::McpArgs),
}

fn main() -> ExitCode {
    let Cli { global, command } = Cli::parse();
    global.warn_missing_dirs();
    let result = match global.check_trace() {
        Err(error) => Err(error),
        Ok(()) => match command {
            Command::Step(args) => args.run(&global),
            Command::Load(args) => args.run(&global),
            Command::Compact(args) => args.run(&global),
            Command::Skills(args) => args.run(&global),
            Command::Catalog(args) => args.run(&global),
            Command::Lint(args) => args.run(&global),
            Command::Replay(args) => args.run(&global),
            Command::Component(args) => args.run(&global),
            Command::SystemPrompt(args) => args.run(&global),
            Command::Expand(args) => args.run(&global),
            Command::Mcp(args) => args.run(&global),
        },
    };
    // The trace of what ran, even when it failed (docs/spec.md §7.2).
    let result = match global.write_trace() {
        Ok(()) => result,
        Err(error) => result.and(Err(error)),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        // Whoever reads stdout stopped (`| head`): nothing to report.
        Err(error) if error.downcast_ref::<OutputError>().is_some_and(OutputError::is_closed_pipe) => ExitCode::SUCCESS,
        Err(error) => {
            // One line, naming what failed; a failing stderr loses only the line.
            let text = cli::common::one_line(&error).replace('\n', " ");
            let _ = writeln!(std::io::stderr().lock(), "error: {}", cli::common::for_stderr(&text));
            let usage = error.downcast_ref::<UsageError>().is_some();
            ExitCode::from(if usage { EXIT_USAGE } else { EXIT_HOST_FAILURE })
        }
    }
}

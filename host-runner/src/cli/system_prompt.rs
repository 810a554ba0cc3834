//! `system-prompt`: Pi's way of disclosing skills, for a host that lets the
//! model read skill files itself.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use super::common::{GlobalOptions, absolute, for_stdout};

/// Print the Pi-style system-prompt block: each model-invocable skill with its file's location.
#[derive(Args)]
pub struct SystemPromptArgs {
    /// The working directory (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

impl SystemPromptArgs {
    pub fn run(self, global: &GlobalOptions) -> Result<u8> {
        let cwd = absolute(self.cwd.as_deref().unwrap_or(Path::new(".")))?;
        let plugin = global.load_plugin()?;
        let text = plugin.system_prompt(&global.registry(), Some(&cwd))?;
        // Exactly the block, which starts with two newlines; nothing when empty.
        print!("{}", for_stdout(&text));
        Ok(0)
    }
}

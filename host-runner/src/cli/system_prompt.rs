//! `system-prompt`: Pi's way of disclosing skills, for a host that lets the
//! model read skill files itself.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::common::{GlobalOptions, cwd_or_current, print_out, warn_all};

/// Print the Pi-style system-prompt block: each model-invocable skill with its file's location.
#[derive(Args)]
pub struct SystemPromptArgs {
    /// The working directory (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

impl SystemPromptArgs {
    pub fn run(self, global: &GlobalOptions) -> Result<u8> {
        let cwd = cwd_or_current(self.cwd.as_deref())?;
        let plugin = global.load_plugin()?;
        let registry = global.registry();
        let text = plugin.system_prompt(&registry, Some(&cwd));
        warn_all(&registry.last_incomplete_warnings());
        // Exactly the block, which starts with two newlines; nothing when empty.
        print_out(&text?, None)?;
        Ok(0)
    }
}

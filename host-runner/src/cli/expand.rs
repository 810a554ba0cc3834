//! `expand`: Pi's explicit `/skill:NAME args` command.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::common::{GlobalOptions, cwd_or_current, print_out, warn_all};

/// Expand a `/skill:NAME [ARGS]` text into the skill's instructions (other text is printed unchanged).
#[derive(Args)]
pub struct ExpandArgs {
    /// The working directory (default: the current one).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The user's text.
    text: String,
}

impl ExpandArgs {
    pub fn run(self, global: &GlobalOptions) -> Result<u8> {
        let cwd = cwd_or_current(self.cwd.as_deref())?;
        let plugin = global.load_plugin()?;
        let registry = global.registry();
        let expanded = plugin.expand(&registry, Some(&cwd), &self.text);
        warn_all(&registry.last_incomplete_warnings());
        print_out(&expanded?, None)?;
        Ok(0)
    }
}

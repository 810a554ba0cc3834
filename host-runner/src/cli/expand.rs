//! `expand`: Pi's explicit `/skill:NAME args` command.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;

use super::common::{GlobalOptions, absolute, for_stdout};

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
        let cwd = absolute(self.cwd.as_deref().unwrap_or(Path::new(".")))?;
        let plugin = global.load_plugin()?;
        print!("{}", for_stdout(&plugin.expand(&global.registry(), Some(&cwd), &self.text)?));
        Ok(0)
    }
}

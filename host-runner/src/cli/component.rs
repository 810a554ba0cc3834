//! `component`: write out the plugin component this host runs, so another
//! host (`hosts/node/`, or one in any language) runs the very same `.wasm`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::common::GlobalOptions;

/// Write the plugin component (the one built into this binary, or `--plugin`) to a file.
#[derive(Args)]
pub struct ComponentArgs {
    /// Where to write the component (`.wasm`).
    #[arg(long, value_name = "FILE")]
    output: PathBuf,
}

impl ComponentArgs {
    pub fn run(self, global: &GlobalOptions) -> Result<u8> {
        let component = global.component()?;
        std::fs::write(&self.output, component)
            .with_context(|| format!("cannot write the component to {}", self.output.display()))?;
        Ok(0)
    }
}

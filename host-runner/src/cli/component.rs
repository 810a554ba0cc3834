//! `component`: write out the plugin component this host runs, so another
//! host (`hosts/node/`, or one in any language) runs the very same `.wasm`;
//! or print the contract (WIT) of a version this host runs components of.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use skill_host::ContractVersion;

use super::common::{GlobalOptions, UsageError};

/// Write the plugin component (the one built into this binary, or `--plugin`)
/// to a file, or print the contract a component is built against.
///
/// This host runs components built for dsh:skill@0.3.0 (its own), for
/// dsh:skill@0.2.0 (whose added messages are JSON source texts) and for
/// dsh:skill@0.1.0 (which has no search: its `skill` tool loads by name).
#[derive(Args)]
pub struct ComponentArgs {
    /// Where to write the component (`.wasm`).
    #[arg(long, value_name = "FILE", required_unless_present = "wit")]
    output: Option<PathBuf>,
    /// Print the WIT of contract VERSION (default: this host's own, 0.3.0)
    /// instead, e.g. to build a plugin against it.
    #[arg(long, value_name = "VERSION", num_args = 0..=1, default_missing_value = "", conflicts_with = "output")]
    wit: Option<String>,
}

impl ComponentArgs {
    pub fn run(self, global: &GlobalOptions) -> Result<u8> {
        if let Some(number) = self.wit {
            let version = match number.as_str() {
                "" => ContractVersion::CURRENT,
                number => match ContractVersion::from_number(number.strip_prefix("dsh:skill@").unwrap_or(number)) {
                    Some(version) => version,
                    None => {
                        let message = format!("this host runs no contract version {number:?}; it runs {}", accepted());
                        return Err(UsageError(message).into());
                    }
                },
            };
            print!("{}", version.wit());
            return Ok(0);
        }
        let output = self.output.expect("clap requires --output without --wit");
        let component = global.component()?;
        std::fs::write(&output, component)
            .with_context(|| format!("cannot write the component to {}", output.display()))?;
        Ok(0)
    }
}

/// The accepted versions, for a message: `0.3.0, 0.2.0, 0.1.0`.
fn accepted() -> String {
    ContractVersion::ACCEPTED.iter().map(|version| version.number()).collect::<Vec<_>>().join(", ")
}

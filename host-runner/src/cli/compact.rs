//! `compact`: hide the visible conversation behind a summary.

use std::path::PathBuf;

use super::scenario::COMPACTION_SUMMARY;
use anyhow::Result;
use clap::Args;
use skill_host::session::SessionLog;

use super::common::{GlobalOptions, warn_all};

/// Hide the whole visible conversation behind a summary message.
#[derive(Args)]
pub struct CompactArgs {
    /// The session file.
    #[arg(long, value_name = "FILE")]
    session: PathBuf,
}

impl CompactArgs {
    pub fn run(self, global: &GlobalOptions) -> Result<u8> {
        let mut log = SessionLog::open_waiting(&self.session, global.lock_wait())?;
        warn_all(log.warnings());
        log.compact(COMPACTION_SUMMARY)?;
        Ok(0)
    }
}

//! The `skill-host` commands, one file each (SPEC §6).

pub mod common;
pub mod compact;
pub mod expand;
pub mod load;
pub mod replay;
pub mod skills;
pub mod step;
pub mod system_prompt;

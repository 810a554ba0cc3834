//! The `skill-host` commands, one file each (SPEC §6).

pub mod common;
pub mod compact;
pub mod load;
pub mod replay;
pub mod skills;
pub mod step;

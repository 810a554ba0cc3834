//! The `skill-host` commands, one file each (docs/spec.md §6).

pub mod catalog;
pub mod common;
pub mod compact;
pub mod component;
pub mod expand;
pub mod lint;
pub mod load;
pub mod mcp;
pub mod replay;
pub mod scenario;
pub mod skills;
pub mod step;
pub mod system_prompt;
pub mod tool_record;

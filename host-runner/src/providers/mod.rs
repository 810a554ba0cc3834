//! Skill providers: where skills come from.
//!
//! - [`local`]: skill folders and Markdown files on this machine (SPEC §4.2).
//! - [`memory`]: skills held in memory, as scenario files describe them (SPEC §7).

pub mod frontmatter;
pub mod local;
pub mod memory;

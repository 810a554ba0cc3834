//! Skill providers: where skills come from.
//!
//! - [`local`]: skill folders and Markdown files on this machine (docs/spec.md §4.2).
//! - [`memory`]: skills held in memory, as scenario files describe them (docs/spec.md §7).
//! - `remote` (feature `remote`): skills listed by an index served over HTTP.
//! - `watch` (feature `watch`): live refresh, the local roots watched for
//!   catalog-relevant changes.

pub(crate) mod frontmatter;
pub mod local;
pub mod memory;
#[cfg(feature = "remote")]
pub mod remote;
#[cfg(feature = "watch")]
pub mod watch;

pub use frontmatter::{MAX_FRONTMATTER_BYTES, MAX_FRONTMATTER_DEPTH, ParsedSkill, parse_skill_file};

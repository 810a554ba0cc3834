//! The DeepSeek Harness `skill` plugin: the model-facing skill catalog and the
//! `skill` tool, built for `wasm32-wasip2` as a WebAssembly component that
//! implements the `dsh:skill/skill-plugin` world in `../wit/world.wit`.
//!
//! Everything the model sees is produced here, byte for byte as docs/spec.md §3 says.
//! The logic is plain Rust that runs and is tested natively; `glue` (wasm
//! only) converts the WIT types and calls it.
//!
//! ```
//! use skill_plugin::tool::{render, SkillResult};
//! let text = render(&SkillResult {
//!     name: "a-skill".into(),
//!     provider: "runtime".into(),
//!     resource_base: None,
//!     content: "Do the thing.".into(),
//! });
//! assert!(text.starts_with("<skill_content name=\"a-skill\">\n<skill_resources>\n"));
//! ```

pub mod budget;
pub mod catalog;
pub mod catalog_update;
pub mod config;
pub mod description;
pub mod escape;
pub mod files;
pub mod gesture;
pub mod loaded;
pub mod memory;
pub mod pi;
pub mod pre_step;
pub mod reads;
pub mod search;
pub mod sections;
pub mod tool;
pub mod types;
pub mod user_only;

#[cfg(target_family = "wasm")]
mod glue;

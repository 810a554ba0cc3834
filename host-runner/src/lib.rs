//! The host for the DeepSeek Harness `skill` plugin: a wasmtime sandbox that
//! runs the plugin component, the skill registry and its providers, and the
//! DeepSeek Harness session log. The `skill-host` command line (feature
//! `cli`) is built on this API alone.
//!
//! ```no_run
//! use std::sync::Arc;
//! use skill_host::{Decision, Plugin, SandboxLimits, SkillRegistry, RuntimeSkill, SessionLog, SessionHeader, SharedSession, StepInput, run_step};
//!
//! let plugin = Plugin::embedded("{}", SandboxLimits::default())?;
//! let registry = Arc::new(SkillRegistry::new());
//! registry.register_runtime(RuntimeSkill::new("triage-bug", "Triage a bug report.", "Steps…")).unwrap();
//! let session = SharedSession::new(SessionLog::in_memory(SessionHeader::new(Some("/workspace".into()))));
//! let outcome = run_step(&plugin, &registry, &session, &StepInput::default(), Decision::Enter(Vec::new()))?;
//! println!("{outcome:?}"); // the initial catalog, now appended to the session
//! # Ok::<(), skill_host::HostError>(())
//! ```
//!
//! What is where:
//! - [`Plugin`] runs the component in its sandbox under [`SandboxLimits`];
//!   [`run_step`] is a step boundary (the pre-step and its decision appended
//!   to the session); [`Plugin::invoke`] is the `skill` tool, and
//!   [`record_tool_result`] records its result as DeepSeek Harness does.
//! - [`SkillRegistry`] merges [`SkillProvider`]s and [`RuntimeSkill`]s;
//!   [`providers`] holds the local-file, in-memory, remote (feature
//!   `remote`) providers and the watcher (feature `watch`).
//! - [`SessionLog`] is the session file, and [`SharedSession`] one log shared
//!   by steps, the plugin's calls and the embedder; [`message`] builds its
//!   messages.
//! - [`lint`] checks skill files.
//!
//! The contract every behaviour follows is `docs/spec.md` in the repository.

#![deny(missing_docs)]

mod bindings;
mod error;
mod imports;
pub mod lint;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod message;
mod plugin;
pub mod providers;
mod registry;
mod sandbox;
pub mod session;
mod step;
/// Fixtures shared by the unit and end-to-end tests (feature `test-support`).
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
mod trace;

pub use bindings::ContractVersion;
pub use error::HostError;
pub use plugin::{Decision, LoadedSkill, Plugin, StepInput, StepOutcome, ToolDefinition, ToolOutcome, ToolView};
pub use registry::{
    BackgroundListing, DEFAULT_CACHE_CAPACITY, FIRST_LISTING_PENDING, FileListing, FileRead, InvocationPolicy, Listing,
    ListingReport, MAX_OVERDUE, ProviderDeadline, ProviderError, RUNTIME_PROVIDER, RUNTIME_RANK, RefreshPolicy,
    RegistryError, RegistrySnapshot, ResourceBase, ResourceBaseJson, RuntimeSkill, Shadowed, SkillCandidate,
    SkillDefinition, SkillProvider, SkillRegistry, SkippedFile, Winner, file_digest, is_skill_name, winners_named,
};
pub use sandbox::{DeadlineClock, EMBEDDED_PLUGIN, ManualClock, OutputLimits, SandboxLimits, component_cache};
pub use session::{SessionError, SessionHeader, SessionLog, SharedSession, SurfaceOp};
pub use step::{preview_step, record_tool_result, run_step};
pub use trace::{TRACE_FORMAT, TraceRecorder};

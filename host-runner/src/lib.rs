//! The host for the DeepSeek Harness `skill` plugin: a wasmtime sandbox that
//! runs the plugin component, the skill registry and its providers, the
//! session log, and the `skill-host` command line built on them.
//!
//! ```no_run
//! use std::sync::{Arc, Mutex};
//! use skill_host::{Decision, Plugin, SandboxLimits, SkillRegistry, RuntimeSkill, SessionLog, SessionHeader, StepInput, run_step};
//!
//! let plugin = Plugin::embedded("{}", SandboxLimits::default())?;
//! let registry = Arc::new(SkillRegistry::new());
//! registry.register_runtime(RuntimeSkill::new("triage-bug", "Triage a bug report.", "Steps…")).unwrap();
//! let session = Arc::new(Mutex::new(SessionLog::in_memory(SessionHeader::new(Some("/workspace".into())))));
//! let outcome = run_step(&plugin, &registry, &session, &StepInput::default(), Decision::Enter(Vec::new()))?;
//! println!("{outcome:?}"); // the initial catalog, now appended to the session
//! # Ok::<(), skill_host::HostError>(())
//! ```

mod bindings;
pub mod component_cache;
pub mod error;
mod host;
pub mod lint;
pub mod message;
pub mod plugin;
pub mod providers;
pub mod registry;
pub mod runtime;
pub mod scenario;
pub mod session;
pub mod step;

pub use error::HostError;
pub use plugin::{Decision, Plugin, StepInput, StepOutcome, ToolDefinition, ToolOutcome, ToolView};
pub use registry::{RuntimeSkill, SkillProvider, SkillRegistry};
pub use runtime::{DeadlineClock, EMBEDDED_PLUGIN, ManualClock, OutputLimits, SandboxLimits};
pub use session::{SessionHeader, SessionLog};
pub use step::run_step;

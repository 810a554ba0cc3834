//! A plugin that does nothing: every pre-step lets the proposal stand
//! without asking the host anything. Timing its steady step
//! (`pre_step_bench --component`) measures what the sandbox costs by itself
//! (the host's step, the component call, entering and leaving wasm), so the
//! real plugin's time splits into that floor and its own code.
//!
//! ```sh
//! cargo build --release --target wasm32-wasip2 --manifest-path scripts/idle-plugin/Cargo.toml --target-dir target/idle-plugin
//! ```

#![cfg(target_family = "wasm")]

wit_bindgen::generate!({
    path: "../../wit",
    world: "skill-plugin",
});

use exports::dsh::skill::plugin::{Guest, StepContext, StepError, ToolDefinition, ToolSuccess};

struct Idle;

impl Guest for Idle {
    fn configure(_config: String) -> Result<(), String> {
        Ok(())
    }

    fn definition() -> ToolDefinition {
        ToolDefinition { name: "skill".into(), description: "Does nothing.".into(), parameters: "{}".into() }
    }

    fn pre_step(_context: StepContext) -> Result<(), StepError> {
        Ok(())
    }

    fn invoke(_arguments: String) -> Result<ToolSuccess, String> {
        Err("This plugin has no skills.".into())
    }

    fn system_prompt() -> Result<String, StepError> {
        Ok(String::new())
    }

    fn expand(text: String) -> Result<String, StepError> {
        Ok(text)
    }
}

export!(Idle);

//! `dsh:skill@0.1.0`, the first released contract: its bindings, and the
//! conversions that let a component built for it run under this host with
//! its 0.1.0 behaviour.
//!
//! 0.1.0 differs from 0.2.0 in one place: `tool-success.value` is a
//! `skill-result`, not the `tool-value` variant (a 0.1.0 plugin has no
//! search). Every other record is the same shape, so the imports answer by
//! calling this host's 0.2.0 implementation (`super::v0_2_0`, which converts
//! to the current one) and converting the records each interface defines for
//! itself; the shared `types` interface is mapped onto 0.2.0's Rust types
//! outright (the component model matches records by structure, not by
//! package version).

use super::{current, v0_2_0};

wasmtime::component::bindgen!({
    path: "../wit/released/0.1.0",
    world: "skill-plugin",
    imports: { default: trappable },
    with: { "dsh:skill/types@0.1.0": super::v0_2_0::types },
});

use v0_2_0::types as then;

use dsh::skill::{registry, session, step};
use exports::dsh::skill::plugin as api;

use crate::imports::CallContext;

impl registry::Host for CallContext {
    super::snapshot_through!(v0_2_0);

    fn list_skills(
        &mut self,
        name: Option<String>,
    ) -> wasmtime::Result<Result<Vec<then::SkillSummary>, then::RegistryError>> {
        v0_2_0::registry::Host::list_skills(self, name)
    }

    fn get_skill(
        &mut self,
        name: String,
    ) -> wasmtime::Result<Result<Option<then::SkillDefinition>, then::RegistryError>> {
        v0_2_0::registry::Host::get_skill(self, name)
    }
}

impl session::Host for CallContext {
    super::list_user_messages_through!(v0_2_0);

    fn get_user_message(&mut self, seq: u64) -> wasmtime::Result<Option<then::Message>> {
        v0_2_0::session::Host::get_user_message(self, seq)
    }
}

impl step::Host for CallContext {
    fn proposed_messages(&mut self) -> wasmtime::Result<Vec<then::Message>> {
        v0_2_0::step::Host::proposed_messages(self)
    }

    fn decide(&mut self, messages: Vec<step::DecidedMessage>) -> wasmtime::Result<()> {
        let messages = messages
            .into_iter()
            .map(|decided| match decided {
                step::DecidedMessage::Proposed(index) => v0_2_0::step::DecidedMessage::Proposed(index),
                step::DecidedMessage::Added(message) => v0_2_0::step::DecidedMessage::Added(message),
            })
            .collect();
        v0_2_0::step::Host::decide(self, messages)
    }
}

// `step_context`, `step_error` and `tool_definition`, alike since 0.1.0.
super::unchanged_plugin_records!();

/// A 0.1.0 tool result: its value is always a skill.
pub(super) fn tool_success(success: api::ToolSuccess) -> current::plugin::ToolSuccess {
    let result = success.value;
    current::plugin::ToolSuccess {
        value: current::plugin::ToolValue::Skill(current::plugin::SkillResult {
            name: result.name,
            provider: result.provider,
            resource_base: result.resource_base.map(v0_2_0::resource_base_in),
            content: result.content,
        }),
        text: success.text,
        loaded: success.loaded.map(|loaded| current::plugin::LoadedSkill {
            name: loaded.name,
            provider: loaded.provider,
            body_digest: loaded.body_digest,
        }),
    }
}

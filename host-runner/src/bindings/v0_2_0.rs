//! `dsh:skill@0.2.0`: its bindings, and the conversions that let a component
//! built for it run under this host with its 0.2.0 behaviour.
//!
//! 0.2.0 differs from 0.3.0 in two places: a skill summary has no
//! `when-to-use`, and a message the plugin adds is a `message` whose source
//! is JSON text the plugin wrote, not a typed record (and, as 0.3.0, it has
//! no file reads, 0.4.0's). The imports answer by calling this host's
//! current implementation and converting; an added message
//! keeps its source text, which the host checks as it always has (docs/spec.md
//! §8.5), so a 0.2.0 plugin's sources are accepted and refused exactly as
//! before. `dsh:skill@0.1.0` is converted through this module.

use super::current;
use super::current::types as now;

wasmtime::component::bindgen!({
    path: "../wit/released/0.2.0",
    world: "skill-plugin",
    imports: { default: trappable },
});

pub use dsh::skill::{registry, session, step, types};
use exports::dsh::skill::plugin as api;

use crate::imports::{Addition, CallContext, Decided};

impl types::Host for CallContext {}

impl registry::Host for CallContext {
    fn snapshot(
        &mut self,
        known: Option<u64>,
    ) -> wasmtime::Result<Result<registry::SnapshotAnswer, types::RegistryError>> {
        let answer = current::registry::Host::snapshot(self, known)?;
        Ok(answer.map_err(registry_error).map(|answer| match answer {
            current::registry::SnapshotAnswer::Unchanged => registry::SnapshotAnswer::Unchanged,
            current::registry::SnapshotAnswer::Changed(snapshot) => {
                registry::SnapshotAnswer::Changed(registry::SkillSnapshot {
                    complete: snapshot.complete,
                    revision: snapshot.revision,
                    skills: snapshot.skills.into_iter().map(summary).collect(),
                })
            }
        }))
    }

    fn list_skills(
        &mut self,
        name: Option<String>,
    ) -> wasmtime::Result<Result<Vec<types::SkillSummary>, types::RegistryError>> {
        let listed = current::registry::Host::list_skills(self, name)?;
        Ok(listed.map(|skills| skills.into_iter().map(summary).collect()).map_err(registry_error))
    }

    fn get_skill(
        &mut self,
        name: String,
    ) -> wasmtime::Result<Result<Option<types::SkillDefinition>, types::RegistryError>> {
        let loaded = current::registry::Host::get_skill(self, name)?;
        Ok(loaded.map(|found| found.map(definition)).map_err(registry_error))
    }
}

impl session::Host for CallContext {
    super::list_user_messages_through!(current);

    fn get_user_message(&mut self, seq: u64) -> wasmtime::Result<Option<types::Message>> {
        Ok(current::session::Host::get_user_message(self, seq)?.map(message))
    }
}

impl step::Host for CallContext {
    fn proposed_messages(&mut self) -> wasmtime::Result<Vec<types::Message>> {
        Ok(current::step::Host::proposed_messages(self)?.into_iter().map(message).collect())
    }

    fn decide(&mut self, messages: Vec<step::DecidedMessage>) -> wasmtime::Result<()> {
        self.decide_with(messages, |decided| match decided {
            step::DecidedMessage::Proposed(index) => Decided::Proposed(index),
            step::DecidedMessage::Added(added) => Decided::Added(Addition::Written(message_in(added))),
        })
    }
}

/// A summary as 0.2.0 has it: without `when-to-use`.
pub(super) fn summary(skill: now::SkillSummary) -> types::SkillSummary {
    types::SkillSummary {
        name: skill.name,
        description: skill.description,
        invocation: policy(skill.invocation),
        provider: skill.provider,
        source: skill.source,
        path: skill.path,
        body_digest: skill.body_digest,
    }
}

fn definition(skill: now::SkillDefinition) -> types::SkillDefinition {
    types::SkillDefinition {
        name: skill.name,
        description: skill.description,
        invocation: policy(skill.invocation),
        provider: skill.provider,
        resource_base: skill.resource_base.map(|base| match base {
            now::ResourceBase::Directory(path) => types::ResourceBase::Directory(path),
            now::ResourceBase::Url(url) => types::ResourceBase::Url(url),
            now::ResourceBase::Opaque(text) => types::ResourceBase::Opaque(text),
        }),
        path: skill.path,
        content: skill.content,
        body_digest: skill.body_digest,
    }
}

fn policy(policy: now::InvocationPolicy) -> types::InvocationPolicy {
    types::InvocationPolicy { model_invocable: policy.model_invocable, user_invocable: policy.user_invocable }
}

fn registry_error(error: now::RegistryError) -> types::RegistryError {
    match error {
        now::RegistryError::Aborted => types::RegistryError::Aborted,
        now::RegistryError::Failed(text) => types::RegistryError::Failed(text),
    }
}

fn message(message: now::Message) -> types::Message {
    types::Message {
        source: message.source,
        content: message
            .content
            .into_iter()
            .map(|block| match block {
                now::ContentBlock::Text(text) => types::ContentBlock::Text(text),
                now::ContentBlock::Other(json) => types::ContentBlock::Other(json),
            })
            .collect(),
    }
}

/// A message a 0.2.0 plugin added, its source text and blocks as written.
fn message_in(message: types::Message) -> now::Message {
    now::Message {
        source: message.source,
        content: message
            .content
            .into_iter()
            .map(|block| match block {
                types::ContentBlock::Text(text) => now::ContentBlock::Text(text),
                types::ContentBlock::Other(json) => now::ContentBlock::Other(json),
            })
            .collect(),
    }
}

pub(super) fn resource_base_in(base: types::ResourceBase) -> now::ResourceBase {
    match base {
        types::ResourceBase::Directory(path) => now::ResourceBase::Directory(path),
        types::ResourceBase::Url(url) => now::ResourceBase::Url(url),
        types::ResourceBase::Opaque(text) => now::ResourceBase::Opaque(text),
    }
}

// `step_context`, `step_error` and `tool_definition`, which no later version changed.
super::unchanged_plugin_records!();

pub(super) fn tool_success(success: api::ToolSuccess) -> current::plugin::ToolSuccess {
    current::plugin::ToolSuccess {
        value: match success.value {
            api::ToolValue::Skill(result) => current::plugin::ToolValue::Skill(skill_result(result)),
            api::ToolValue::Matches(matches) => current::plugin::ToolValue::Matches(
                matches
                    .into_iter()
                    .map(|found| current::plugin::SkillMatch { name: found.name, description: found.description })
                    .collect(),
            ),
        },
        text: success.text,
        loaded: success.loaded.map(|loaded| current::plugin::LoadedSkill {
            name: loaded.name,
            provider: loaded.provider,
            body_digest: loaded.body_digest,
        }),
    }
}

fn skill_result(result: api::SkillResult) -> current::plugin::SkillResult {
    current::plugin::SkillResult {
        name: result.name,
        provider: result.provider,
        resource_base: result.resource_base.map(resource_base_in),
        content: result.content,
    }
}

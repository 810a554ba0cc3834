//! `dsh:skill@0.3.0`: its bindings, and the conversions that let a component
//! built for it run under this host with its 0.3.0 behaviour.
//!
//! 0.3.0 differs from 0.4.0 in two places: the registry has no
//! `list-skill-files` or `read-skill-file` (a 0.3.0 plugin reads no files),
//! and a tool value is never a `file`. Every record and variant it shares
//! with 0.4.0 has the same shape, so each import answers by calling this
//! host's 0.4.0 implementation and converting field by field.

use super::current;
use super::current::types as now;

wasmtime::component::bindgen!({
    path: "../wit/released/0.3.0",
    world: "skill-plugin",
    imports: { default: trappable },
});

pub use dsh::skill::{registry, session, step, types};
use exports::dsh::skill::plugin as api;

use crate::imports::{Addition, CallContext, Decided};

// `types`, `registry` and `session`, converted from the current ones.
super::imports_through_current!();

impl step::Host for CallContext {
    fn proposed_messages(&mut self) -> wasmtime::Result<Vec<types::Message>> {
        Ok(current::step::Host::proposed_messages(self)?.into_iter().map(message).collect())
    }

    fn decide(&mut self, messages: Vec<step::DecidedMessage>) -> wasmtime::Result<()> {
        self.decide_with(messages, |decided| match decided {
            step::DecidedMessage::Proposed(index) => Decided::Proposed(index),
            step::DecidedMessage::Added(added) => Decided::Added(Addition::Typed(added_message(added))),
        })
    }
}

fn summary(skill: now::SkillSummary) -> types::SkillSummary {
    types::SkillSummary {
        name: skill.name,
        description: skill.description,
        when_to_use: skill.when_to_use,
        invocation: policy(skill.invocation),
        provider: skill.provider,
        source: skill.source,
        path: skill.path,
        body_digest: skill.body_digest,
    }
}

/// A typed message a 0.3.0 plugin added, as the same 0.4.0 record.
fn added_message(added: step::AddedMessage) -> current::step::AddedMessage {
    use current::step as to;
    use step::AddedSource as From;
    let source = match added.source {
        From::Catalog => to::AddedSource::Catalog,
        From::SkillCatalog(catalog) => to::AddedSource::SkillCatalog(to::SkillCatalog {
            update: catalog.update,
            entries: catalog
                .entries
                .into_iter()
                .map(|entry| to::CatalogEntry { name: entry.name, description: entry.description })
                .collect(),
            coverage: catalog.coverage,
        }),
        From::CatalogUpdate(removed) => to::AddedSource::CatalogUpdate(removed),
        From::Invocation(name) => to::AddedSource::Invocation(name),
        From::InvocationNote => to::AddedSource::InvocationNote,
        From::Changed(notice) => to::AddedSource::Changed(to::ChangedNotice {
            name: notice.name,
            provider: notice.provider,
            body_digest: notice.body_digest,
        }),
        From::Gone(name) => to::AddedSource::Gone(name),
        From::Reload(names) => to::AddedSource::Reload(names),
    };
    to::AddedMessage { source, text: added.text }
}

// `step_context`, `step_error` and `tool_definition`, which 0.4.0 did not change.
super::unchanged_plugin_records!();

pub(super) fn tool_success(success: api::ToolSuccess) -> current::plugin::ToolSuccess {
    current::plugin::ToolSuccess {
        value: match success.value {
            api::ToolValue::Skill(result) => current::plugin::ToolValue::Skill(current::plugin::SkillResult {
                name: result.name,
                provider: result.provider,
                resource_base: result.resource_base.map(|base| match base {
                    types::ResourceBase::Directory(path) => now::ResourceBase::Directory(path),
                    types::ResourceBase::Url(url) => now::ResourceBase::Url(url),
                    types::ResourceBase::Opaque(text) => now::ResourceBase::Opaque(text),
                }),
                content: result.content,
            }),
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

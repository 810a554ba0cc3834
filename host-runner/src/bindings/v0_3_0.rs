//! `dsh:skill@0.3.0`: its bindings, and the conversions that let a component
//! built for it run under this host with its 0.3.0 behaviour.
//!
//! 0.3.0 differs from 0.4.0 in two places: the registry has no
//! `list-skill-files` or `read-skill-file` (a 0.3.0 plugin reads no files),
//! and a tool value is never a `file`. Every other record has 0.4.0's shape,
//! so the shared `types` interface is mapped onto the current Rust types
//! outright (the component model matches records by structure, not by
//! package version, as 0.1.0's is onto 0.2.0's), and the imports answer by
//! calling this host's current implementation, converting only the records
//! each interface defines for itself.

use super::current;

wasmtime::component::bindgen!({
    path: "../wit/released/0.3.0",
    world: "skill-plugin",
    imports: { default: trappable },
    with: { "dsh:skill/types@0.3.0": super::current::types },
});

use super::current::types as now;

use dsh::skill::{registry, session, step};
use exports::dsh::skill::plugin as api;

use crate::imports::{Addition, CallContext, Decided};

impl registry::Host for CallContext {
    super::snapshot_through!(current);

    fn list_skills(
        &mut self,
        name: Option<String>,
    ) -> wasmtime::Result<Result<Vec<now::SkillSummary>, now::RegistryError>> {
        current::registry::Host::list_skills(self, name)
    }

    fn get_skill(
        &mut self,
        name: String,
    ) -> wasmtime::Result<Result<Option<now::SkillDefinition>, now::RegistryError>> {
        current::registry::Host::get_skill(self, name)
    }
}

impl session::Host for CallContext {
    super::list_user_messages_through!(current);

    fn get_user_message(&mut self, seq: u64) -> wasmtime::Result<Option<now::Message>> {
        current::session::Host::get_user_message(self, seq)
    }
}

impl step::Host for CallContext {
    fn proposed_messages(&mut self) -> wasmtime::Result<Vec<now::Message>> {
        current::step::Host::proposed_messages(self)
    }

    fn decide(&mut self, messages: Vec<step::DecidedMessage>) -> wasmtime::Result<()> {
        self.decide_with(messages, |decided| match decided {
            step::DecidedMessage::Proposed(index) => Decided::Proposed(index),
            step::DecidedMessage::Added(added) => Decided::Added(Addition::Typed(added_message(added))),
        })
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

/// A 0.3.0 tool result: a skill or search matches, never a file.
pub(super) fn tool_success(success: api::ToolSuccess) -> current::plugin::ToolSuccess {
    current::plugin::ToolSuccess {
        value: match success.value {
            api::ToolValue::Skill(result) => current::plugin::ToolValue::Skill(current::plugin::SkillResult {
                name: result.name,
                provider: result.provider,
                resource_base: result.resource_base,
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

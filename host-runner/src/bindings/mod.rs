//! The contract's bindings, one module per released version of the
//! `skill-plugin` world, and [`Guest`]: a plugin instance of any of them,
//! called with the current types.
//!
//! A component is linked through the bindings of the version it exports:
//! `current` (`../wit`) for this one, a `v…` module (its WIT kept under
//! `../wit/released/`) for each earlier release, which converts to and from
//! the current types. Adding a version is a new module, a [`ContractVersion`]
//! and one arm in each of [`Guest`]'s methods.

/// The conversions of the plugin records no version since 0.1.0 changed
/// (the step context, its error, the tool definition), written once for a
/// version module that has `api` (its plugin interface) and `current` in scope.
macro_rules! unchanged_plugin_records {
    () => {
        /// The step context, as this version spells it.
        pub(super) fn step_context(context: current::plugin::StepContext) -> api::StepContext {
            api::StepContext {
                session: context.session,
                registry_revision: context.registry_revision,
                history_version: context.history_version,
                tool_view: match context.tool_view {
                    current::plugin::ToolView::Visible => api::ToolView::Visible,
                    current::plugin::ToolView::Hidden => api::ToolView::Hidden,
                    current::plugin::ToolView::Shadowed => api::ToolView::Shadowed,
                },
                aborted: context.aborted,
                proposal: match context.proposal {
                    current::plugin::Proposal::Enter(count) => api::Proposal::Enter(count),
                    current::plugin::Proposal::Reject => api::Proposal::Reject,
                },
            }
        }

        pub(super) fn step_error(error: api::StepError) -> current::plugin::StepError {
            match error {
                api::StepError::Aborted => current::plugin::StepError::Aborted,
            }
        }

        pub(super) fn tool_definition(definition: api::ToolDefinition) -> current::plugin::ToolDefinition {
            current::plugin::ToolDefinition {
                name: definition.name,
                description: definition.description,
                parameters: definition.parameters,
            }
        }
    };
}
use unchanged_plugin_records;

/// `session.list-user-messages` of an earlier version, answered through
/// the `$from` version module's (or `current`'s) and its page converted:
/// the filters and the page are records the session interface defines
/// itself, alike in every version. Written once for the version modules'
/// `impl session::Host`.
macro_rules! list_user_messages_through {
    ($from:ident) => {
        fn list_user_messages(
            &mut self,
            filters: Vec<session::SourceFilter>,
            before: Option<u64>,
            limit: u32,
        ) -> wasmtime::Result<session::MessageRefPage> {
            let filters = filters
                .into_iter()
                .map(|filter| $from::session::SourceFilter { kind: filter.kind, plugin: filter.plugin })
                .collect();
            let page = $from::session::Host::list_user_messages(self, filters, before, limit)?;
            Ok(session::MessageRefPage {
                refs: page
                    .refs
                    .into_iter()
                    .map(|found| session::MessageRef { seq: found.seq, visible: found.visible })
                    .collect(),
                next: page.next,
            })
        }
    };
}
use list_user_messages_through;

/// `registry.snapshot` of an earlier version whose `types` are mapped onto
/// those of `$from` (0.1.0's onto 0.2.0's, 0.3.0's onto the current ones):
/// only the answer, a record the registry interface defines, is converted.
macro_rules! snapshot_through {
    ($from:ident) => {
        fn snapshot(
            &mut self,
            known: Option<u64>,
        ) -> wasmtime::Result<Result<registry::SnapshotAnswer, $from::types::RegistryError>> {
            let answer = $from::registry::Host::snapshot(self, known)?;
            Ok(answer.map(|answer| match answer {
                $from::registry::SnapshotAnswer::Unchanged => registry::SnapshotAnswer::Unchanged,
                $from::registry::SnapshotAnswer::Changed(snapshot) => {
                    registry::SnapshotAnswer::Changed(registry::SkillSnapshot {
                        complete: snapshot.complete,
                        revision: snapshot.revision,
                        skills: snapshot.skills,
                    })
                }
            }))
        }
    };
}
use snapshot_through;

mod v0_1_0;
mod v0_2_0;
mod v0_3_0;

use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Engine, Store};

use crate::imports::CallContext;

pub(crate) mod current {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "skill-plugin",
        // Import functions return `wasmtime::Result`, so the host can end a
        // call (an abort) without the guest seeing a value.
        imports: { default: trappable },
        // Traces write the values as serde does (docs/spec.md §7.2).
        additional_derives: [serde::Serialize],
    });

    pub use dsh::skill::{registry, session, step, types};
    pub use exports::dsh::skill::plugin;
}

pub use current::{plugin, registry, session, step, types};

/// A released version of the `dsh:skill` contract that this host runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContractVersion {
    /// `dsh:skill@0.1.0`: the `skill` tool loads by name only.
    V0_1_0,
    /// `dsh:skill@0.2.0`: `tool-success.value` is a variant (a skill, or a
    /// query's matches).
    V0_2_0,
    /// `dsh:skill@0.3.0`: added messages are typed records, and a skill
    /// summary carries its `whenToUse`.
    V0_3_0,
    /// `dsh:skill@0.4.0`, this host's own: the registry reads a skill's
    /// files, and a tool value may be a file.
    V0_4_0,
}

impl ContractVersion {
    /// Every version this host accepts, newest first.
    pub const ACCEPTED: [Self; 4] = [Self::V0_4_0, Self::V0_3_0, Self::V0_2_0, Self::V0_1_0];
    /// The version this host's own component (and `../wit`) is.
    pub const CURRENT: Self = Self::V0_4_0;

    /// The version number, as the WIT package spells it (`0.3.0`).
    pub fn number(self) -> &'static str {
        match self {
            Self::V0_1_0 => "0.1.0",
            Self::V0_2_0 => "0.2.0",
            Self::V0_3_0 => "0.3.0",
            Self::V0_4_0 => "0.4.0",
        }
    }

    /// The version's WIT, as released.
    pub fn wit(self) -> &'static str {
        match self {
            Self::V0_1_0 => include_str!("../../../wit/released/0.1.0/world.wit"),
            Self::V0_2_0 => include_str!("../../../wit/released/0.2.0/world.wit"),
            Self::V0_3_0 => include_str!("../../../wit/released/0.3.0/world.wit"),
            Self::V0_4_0 => include_str!("../../../wit/world.wit"),
        }
    }

    /// The version `number` names (`0.1.0`), if this host accepts it.
    pub fn from_number(number: &str) -> Option<Self> {
        Self::ACCEPTED.into_iter().find(|version| version.number() == number)
    }

    /// The name of the plugin interface a component of this version exports.
    fn export(self) -> String {
        format!("dsh:skill/plugin@{}", self.number())
    }

    /// The version `component` is built for: the one whose plugin interface
    /// it exports (the newest, should it export several).
    pub(crate) fn of(engine: &Engine, component: &Component) -> Result<Self, String> {
        let exported: Vec<String> =
            component.component_type().exports(engine).map(|(name, _)| name.to_owned()).collect();
        Self::ACCEPTED.into_iter().find(|version| exported.contains(&version.export())).ok_or_else(|| {
            let accepted: Vec<String> = Self::ACCEPTED.iter().map(|version| version.export()).collect();
            let found = if exported.is_empty() { "nothing".to_owned() } else { exported.join(", ") };
            format!("the component exports {found}, but this host runs one that exports {}", accepted.join(" or "))
        })
    }
}

/// What a [`Guest`] is instantiated from: the component, linked for its version.
pub(crate) enum GuestPre<T: 'static> {
    V0_1_0(v0_1_0::SkillPluginPre<T>),
    V0_2_0(v0_2_0::SkillPluginPre<T>),
    V0_3_0(v0_3_0::SkillPluginPre<T>),
    V0_4_0(current::SkillPluginPre<T>),
}

impl<T: 'static> GuestPre<T> {
    /// Links the plugin's imports for `version` into `linker` (reaching the
    /// call's [`CallContext`] through `call`), then pre-instantiates `component`.
    pub(crate) fn new(
        version: ContractVersion,
        mut linker: Linker<T>,
        component: &Component,
        call: fn(&mut T) -> &mut CallContext,
    ) -> wasmtime::Result<Self> {
        Ok(match version {
            ContractVersion::V0_1_0 => {
                v0_1_0::SkillPlugin::add_to_linker::<_, HasSelf<CallContext>>(&mut linker, call)?;
                Self::V0_1_0(v0_1_0::SkillPluginPre::new(linker.instantiate_pre(component)?)?)
            }
            ContractVersion::V0_2_0 => {
                v0_2_0::SkillPlugin::add_to_linker::<_, HasSelf<CallContext>>(&mut linker, call)?;
                Self::V0_2_0(v0_2_0::SkillPluginPre::new(linker.instantiate_pre(component)?)?)
            }
            ContractVersion::V0_3_0 => {
                v0_3_0::SkillPlugin::add_to_linker::<_, HasSelf<CallContext>>(&mut linker, call)?;
                Self::V0_3_0(v0_3_0::SkillPluginPre::new(linker.instantiate_pre(component)?)?)
            }
            ContractVersion::V0_4_0 => {
                current::SkillPlugin::add_to_linker::<_, HasSelf<CallContext>>(&mut linker, call)?;
                Self::V0_4_0(current::SkillPluginPre::new(linker.instantiate_pre(component)?)?)
            }
        })
    }

    pub(crate) fn instantiate(&self, store: &mut Store<T>) -> wasmtime::Result<Guest> {
        Ok(match self {
            Self::V0_1_0(pre) => Guest::V0_1_0(pre.instantiate(store)?),
            Self::V0_2_0(pre) => Guest::V0_2_0(pre.instantiate(store)?),
            Self::V0_3_0(pre) => Guest::V0_3_0(pre.instantiate(store)?),
            Self::V0_4_0(pre) => Guest::V0_4_0(pre.instantiate(store)?),
        })
    }
}

/// A plugin instance, of whichever version, called with the current types.
pub(crate) enum Guest {
    V0_1_0(v0_1_0::SkillPlugin),
    V0_2_0(v0_2_0::SkillPlugin),
    V0_3_0(v0_3_0::SkillPlugin),
    V0_4_0(current::SkillPlugin),
}

impl Guest {
    pub(crate) fn call_configure<T>(&self, store: &mut Store<T>, config: &str) -> wasmtime::Result<Result<(), String>> {
        match self {
            Self::V0_1_0(guest) => guest.dsh_skill_plugin().call_configure(store, config),
            Self::V0_2_0(guest) => guest.dsh_skill_plugin().call_configure(store, config),
            Self::V0_3_0(guest) => guest.dsh_skill_plugin().call_configure(store, config),
            Self::V0_4_0(guest) => guest.dsh_skill_plugin().call_configure(store, config),
        }
    }

    pub(crate) fn call_definition<T>(&self, store: &mut Store<T>) -> wasmtime::Result<plugin::ToolDefinition> {
        match self {
            Self::V0_1_0(guest) => guest.dsh_skill_plugin().call_definition(store).map(v0_1_0::tool_definition),
            Self::V0_2_0(guest) => guest.dsh_skill_plugin().call_definition(store).map(v0_2_0::tool_definition),
            Self::V0_3_0(guest) => guest.dsh_skill_plugin().call_definition(store).map(v0_3_0::tool_definition),
            Self::V0_4_0(guest) => guest.dsh_skill_plugin().call_definition(store),
        }
    }

    pub(crate) fn call_pre_step<T>(
        &self,
        store: &mut Store<T>,
        context: plugin::StepContext,
    ) -> wasmtime::Result<Result<(), plugin::StepError>> {
        match self {
            Self::V0_1_0(guest) => Ok(guest
                .dsh_skill_plugin()
                .call_pre_step(store, v0_1_0::step_context(context))?
                .map_err(v0_1_0::step_error)),
            Self::V0_2_0(guest) => Ok(guest
                .dsh_skill_plugin()
                .call_pre_step(store, v0_2_0::step_context(context))?
                .map_err(v0_2_0::step_error)),
            Self::V0_3_0(guest) => Ok(guest
                .dsh_skill_plugin()
                .call_pre_step(store, v0_3_0::step_context(context))?
                .map_err(v0_3_0::step_error)),
            Self::V0_4_0(guest) => guest.dsh_skill_plugin().call_pre_step(store, context),
        }
    }

    pub(crate) fn call_invoke<T>(
        &self,
        store: &mut Store<T>,
        arguments: &str,
    ) -> wasmtime::Result<Result<plugin::ToolSuccess, String>> {
        match self {
            Self::V0_1_0(guest) => {
                Ok(guest.dsh_skill_plugin().call_invoke(store, arguments)?.map(v0_1_0::tool_success))
            }
            Self::V0_2_0(guest) => {
                Ok(guest.dsh_skill_plugin().call_invoke(store, arguments)?.map(v0_2_0::tool_success))
            }
            Self::V0_3_0(guest) => {
                Ok(guest.dsh_skill_plugin().call_invoke(store, arguments)?.map(v0_3_0::tool_success))
            }
            Self::V0_4_0(guest) => guest.dsh_skill_plugin().call_invoke(store, arguments),
        }
    }

    pub(crate) fn call_system_prompt<T>(
        &self,
        store: &mut Store<T>,
    ) -> wasmtime::Result<Result<String, plugin::StepError>> {
        match self {
            Self::V0_1_0(guest) => Ok(guest.dsh_skill_plugin().call_system_prompt(store)?.map_err(v0_1_0::step_error)),
            Self::V0_2_0(guest) => Ok(guest.dsh_skill_plugin().call_system_prompt(store)?.map_err(v0_2_0::step_error)),
            Self::V0_3_0(guest) => Ok(guest.dsh_skill_plugin().call_system_prompt(store)?.map_err(v0_3_0::step_error)),
            Self::V0_4_0(guest) => guest.dsh_skill_plugin().call_system_prompt(store),
        }
    }

    pub(crate) fn call_expand<T>(
        &self,
        store: &mut Store<T>,
        text: &str,
    ) -> wasmtime::Result<Result<String, plugin::StepError>> {
        match self {
            Self::V0_1_0(guest) => Ok(guest.dsh_skill_plugin().call_expand(store, text)?.map_err(v0_1_0::step_error)),
            Self::V0_2_0(guest) => Ok(guest.dsh_skill_plugin().call_expand(store, text)?.map_err(v0_2_0::step_error)),
            Self::V0_3_0(guest) => Ok(guest.dsh_skill_plugin().call_expand(store, text)?.map_err(v0_3_0::step_error)),
            Self::V0_4_0(guest) => guest.dsh_skill_plugin().call_expand(store, text),
        }
    }
}

//! The wit-bindgen glue: converts between the generated WIT types and
//! [`crate::types`], and holds the instance's configuration. No behaviour lives here.

use std::cell::RefCell;

use crate::config::Config;
use crate::pre_step::Memory;
use crate::types as core;
use skill_rules::{Record, SkillNotice};

wit_bindgen::generate!({
    path: "../wit",
    world: "skill-plugin",
});

use dsh::skill::{registry, session, step, types as wit};
use exports::dsh::skill::plugin::{self as api, Guest};

/// The instance's state: its configuration (set by `configure`) and what it
/// remembers between calls. A component instance is single-threaded.
struct State {
    config: Config,
    memory: Memory,
}

thread_local! {
    static STATE: RefCell<State> = const { RefCell::new(State { config: Config::DEFAULT, memory: Memory::new() }) };
}

/// The component's exports (wit-bindgen's `Guest`): each converts and calls the core.
struct Exports;

impl Guest for Exports {
    fn configure(config: String) -> Result<(), String> {
        let parsed = Config::parse(&config)?;
        // What was remembered under another configuration is not valid under this one.
        STATE.with(|state| *state.borrow_mut() = State { config: parsed, memory: Memory::default() });
        Ok(())
    }

    fn definition() -> api::ToolDefinition {
        let (description, parameters) = STATE.with(|state| crate::tool::definition(&state.borrow().config));
        api::ToolDefinition {
            name: crate::tool::TOOL_NAME.to_owned(),
            description: description.to_owned(),
            parameters: parameters.to_owned(),
        }
    }

    fn pre_step(context: api::StepContext) -> Result<(), api::StepError> {
        let decision = match context.proposal {
            // Nothing proposed: nothing to fetch.
            api::Proposal::Enter(0) => core::Decision::Enter(Vec::new()),
            api::Proposal::Enter(_) => {
                core::Decision::Enter(step::proposed_messages().into_iter().map(message_in).collect())
            }
            api::Proposal::Reject => core::Decision::Reject,
        };
        let context = core::StepContext {
            session: context.session,
            registry_revision: context.registry_revision,
            history_version: context.history_version,
            tool_view: context.tool_view.into(),
            aborted: context.aborted,
        };
        let decided = STATE.with(|state| {
            let State { config, memory } = &mut *state.borrow_mut();
            crate::pre_step::pre_step(config, memory, &context, decision, &HostRegistry, &HostSession)
        });
        if let Some(messages) = decided.map_err(step_error)? {
            step::decide(&messages.into_iter().map(decided_out).collect::<Vec<_>>());
        }
        Ok(())
    }

    fn invoke(arguments: String) -> Result<api::ToolSuccess, String> {
        // The registry imports never reach the state: borrowing it across them is safe.
        let returned = STATE.with(|state| crate::tool::invoke_with(&state.borrow().config, &HostRegistry, &arguments));
        Ok(match returned.map_err(|error| error.model_text())? {
            crate::tool::ToolReturn::Skill(result, loaded) => {
                let text = crate::tool::render(&result);
                api::ToolSuccess {
                    value: api::ToolValue::Skill(api::SkillResult {
                        name: result.name,
                        provider: result.provider,
                        resource_base: result.resource_base.map(Into::into),
                        content: result.content,
                    }),
                    text,
                    loaded: loaded.map(|loaded| api::LoadedSkill {
                        name: loaded.name,
                        provider: loaded.provider,
                        body_digest: loaded.body_digest,
                    }),
                }
            }
            crate::tool::ToolReturn::File(file, loaded) => {
                let text = crate::files::render(&file);
                api::ToolSuccess {
                    value: api::ToolValue::File(api::FileResult {
                        name: file.name,
                        provider: file.provider,
                        path: file.path,
                        content: file.content,
                    }),
                    text,
                    loaded: loaded.map(|loaded| api::LoadedSkill {
                        name: loaded.name,
                        provider: loaded.provider,
                        body_digest: loaded.body_digest,
                    }),
                }
            }
            crate::tool::ToolReturn::Matches(matches) => {
                let text = matches.render();
                api::ToolSuccess {
                    value: api::ToolValue::Matches(
                        matches
                            .best
                            .into_iter()
                            .map(|found| api::SkillMatch { name: found.name, description: found.description })
                            .collect(),
                    ),
                    text,
                    loaded: None,
                }
            }
        })
    }

    fn system_prompt() -> Result<String, api::StepError> {
        STATE.with(|state| crate::pi::system_prompt_for(&state.borrow().config, &HostRegistry)).map_err(step_error)
    }

    fn expand(text: String) -> Result<String, api::StepError> {
        crate::pi::expand_for(&HostRegistry, &text).map_err(step_error)
    }
}

export!(Exports);

fn step_error(error: core::StepError) -> api::StepError {
    match error {
        core::StepError::Aborted => api::StepError::Aborted,
    }
}

/// The host's registry import.
struct HostRegistry;

impl core::Registry for HostRegistry {
    fn snapshot(&self, known: Option<u64>) -> Result<core::SnapshotAnswer, core::RegistryError> {
        Ok(match registry::snapshot(known).map_err(registry_error)? {
            registry::SnapshotAnswer::Unchanged => core::SnapshotAnswer::Unchanged,
            registry::SnapshotAnswer::Changed(snapshot) => core::SnapshotAnswer::Changed(core::Snapshot {
                complete: snapshot.complete,
                revision: snapshot.revision,
                skills: snapshot.skills.into_iter().map(summary_in).collect(),
            }),
        })
    }

    fn list(&self, name: Option<&str>) -> Result<Vec<core::SkillSummary>, core::RegistryError> {
        Ok(registry::list_skills(name).map_err(registry_error)?.into_iter().map(summary_in).collect())
    }

    fn get(&self, name: &str) -> Result<Option<core::SkillDefinition>, core::RegistryError> {
        Ok(registry::get_skill(name).map_err(registry_error)?.map(|skill| core::SkillDefinition {
            name: skill.name,
            description: skill.description,
            invocation: policy_in(skill.invocation),
            provider: skill.provider,
            resource_base: skill.resource_base.map(Into::into),
            path: skill.path,
            content: skill.content,
            body_digest: skill.body_digest,
        }))
    }

    fn list_files(&self, name: &str, limit: u32) -> Result<Option<core::SkillFiles>, core::RegistryError> {
        Ok(registry::list_skill_files(name, limit).map_err(registry_error)?.map(|listed| core::SkillFiles {
            files: listed.files.into_iter().map(|file| core::SkillFile { path: file.path, size: file.size }).collect(),
            total: listed.total,
        }))
    }

    fn read_file(&self, name: &str, path: &str) -> Result<core::FileAnswer, core::RegistryError> {
        Ok(match registry::read_skill_file(name, path).map_err(registry_error)? {
            registry::FileAnswer::Text(text) => core::FileAnswer::Text(text),
            registry::FileAnswer::Binary(size) => core::FileAnswer::Binary(size),
            registry::FileAnswer::TooLarge(size) => core::FileAnswer::TooLarge(size),
            registry::FileAnswer::Missing => core::FileAnswer::Missing,
            registry::FileAnswer::Unavailable => core::FileAnswer::Unavailable,
        })
    }
}

/// The host's session import.
struct HostSession;

impl core::SessionHistory for HostSession {
    fn list_user_messages(
        &self,
        filters: &[core::SourceFilter],
        before: Option<u64>,
        limit: u32,
    ) -> core::MessageRefPage {
        let filters: Vec<_> = filters
            .iter()
            .map(|filter| session::SourceFilter { kind: filter.kind.clone(), plugin: filter.plugin.clone() })
            .collect();
        let page = session::list_user_messages(&filters, before, limit);
        core::MessageRefPage {
            refs: page
                .refs
                .into_iter()
                .map(|reference| core::MessageRef { seq: reference.seq, visible: reference.visible })
                .collect(),
            next: page.next,
        }
    }

    fn get_user_message(&self, seq: u64) -> Option<core::Message> {
        session::get_user_message(seq).map(message_in)
    }
}

fn registry_error(error: wit::RegistryError) -> core::RegistryError {
    match error {
        wit::RegistryError::Aborted => core::RegistryError::Aborted,
        wit::RegistryError::Failed(text) => core::RegistryError::Failed(text),
    }
}

fn policy_in(policy: wit::InvocationPolicy) -> core::InvocationPolicy {
    core::InvocationPolicy { model_invocable: policy.model_invocable, user_invocable: policy.user_invocable }
}

fn summary_in(skill: wit::SkillSummary) -> core::SkillSummary {
    core::SkillSummary {
        name: skill.name,
        description: skill.description,
        when_to_use: skill.when_to_use,
        invocation: policy_in(skill.invocation),
        provider: skill.provider,
        source: skill.source,
        path: skill.path,
        body_digest: skill.body_digest,
    }
}

impl From<api::ToolView> for core::ToolView {
    fn from(view: api::ToolView) -> Self {
        match view {
            api::ToolView::Visible => Self::Visible,
            api::ToolView::Hidden => Self::Hidden,
            api::ToolView::Shadowed => Self::Shadowed,
        }
    }
}

impl From<wit::ResourceBase> for core::ResourceBase {
    fn from(base: wit::ResourceBase) -> Self {
        match base {
            wit::ResourceBase::Directory(path) => Self::Directory { path },
            wit::ResourceBase::Url(url) => Self::Url { url },
            wit::ResourceBase::Opaque(description) => Self::Opaque { description },
        }
    }
}

impl From<core::ResourceBase> for wit::ResourceBase {
    fn from(base: core::ResourceBase) -> Self {
        match base {
            core::ResourceBase::Directory { path } => Self::Directory(path),
            core::ResourceBase::Url { url } => Self::Url(url),
            core::ResourceBase::Opaque { description } => Self::Opaque(description),
        }
    }
}

fn message_in(message: wit::Message) -> core::Message {
    core::Message {
        source: message.source,
        content: message
            .content
            .into_iter()
            .map(|block| match block {
                wit::ContentBlock::Text(text) => core::ContentBlock::Text(text),
                wit::ContentBlock::Other(json) => core::ContentBlock::Other(json),
            })
            .collect(),
    }
}

fn decided_out(message: core::DecidedMessage) -> step::DecidedMessage {
    match message {
        core::DecidedMessage::Proposed(index) => step::DecidedMessage::Proposed(index),
        core::DecidedMessage::Added(message) => step::DecidedMessage::Added(added_out(message)),
    }
}

/// An added message as the contract types it (docs/spec.md §8.5): the
/// record its source is, and its one text block. Every source the plugin
/// adds was written by [`Record::to_json`], so reading it back cannot fail.
fn added_out(message: core::Message) -> step::AddedMessage {
    let record = Record::parse(&message.source).expect("the plugin writes every source through skill_rules::Record");
    let text = message
        .content
        .into_iter()
        .map(|block| match block {
            core::ContentBlock::Text(text) => text,
            core::ContentBlock::Other(json) => json,
        })
        .collect();
    step::AddedMessage { source: source_out(record), text }
}

fn source_out(record: Record) -> step::AddedSource {
    match record {
        Record::Catalog => step::AddedSource::Catalog,
        Record::SkillCatalog(catalog) => step::AddedSource::SkillCatalog(step::SkillCatalog {
            update: catalog.update,
            entries: catalog
                .entries
                .into_iter()
                .map(|entry| step::CatalogEntry { name: entry.name, description: entry.description })
                .collect(),
            coverage: catalog.coverage,
        }),
        Record::CatalogUpdate { removed } => step::AddedSource::CatalogUpdate(removed),
        Record::Invocation { name } => step::AddedSource::Invocation(name),
        Record::InvocationNote => step::AddedSource::InvocationNote,
        Record::Notice(SkillNotice::Changed { name, provider, body_digest }) => {
            step::AddedSource::Changed(step::ChangedNotice { name, provider, body_digest })
        }
        Record::Notice(SkillNotice::Gone { name }) => step::AddedSource::Gone(name),
        Record::Notice(SkillNotice::Reload { names }) => step::AddedSource::Reload(names),
    }
}

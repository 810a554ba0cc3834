//! `dsh:skill/registry`: the registry's answers for the call's working
//! directory, converted to WIT types.

use crate::bindings::registry::{Host, SkillSnapshot, SnapshotAnswer};
use crate::bindings::types as wit;
use crate::registry::{RegistryError, ResourceBase, SkillCandidate, winners_named};

impl Host for super::CallContext {
    fn snapshot(&mut self, known: Option<u64>) -> wasmtime::Result<Result<SnapshotAnswer, wit::RegistryError>> {
        let host = &*self;
        if host.aborted() {
            return Ok(Err(wit::RegistryError::Aborted));
        }
        let Some(registry) = &host.registry else {
            return Ok(Ok(SnapshotAnswer::Changed(SkillSnapshot { complete: true, revision: 0, skills: Vec::new() })));
        };
        let snapshot = registry.snapshot_within(host.cwd(), &host.provider_deadline());
        if host.aborted() {
            return Ok(Err(wit::RegistryError::Aborted));
        }
        // Revisions are unique in the process, so the plugin's copy of this
        // revision is exactly this list: nothing needs to cross again.
        if snapshot.complete && known == Some(snapshot.revision) {
            return Ok(Ok(SnapshotAnswer::Unchanged));
        }
        Ok(Ok(SnapshotAnswer::Changed(SkillSnapshot {
            complete: snapshot.complete,
            revision: snapshot.revision,
            skills: snapshot.skills.iter().map(|winner| summary(&winner.candidate)).collect(),
        })))
    }

    fn list_skills(
        &mut self,
        name: Option<String>,
    ) -> wasmtime::Result<Result<Vec<wit::SkillSummary>, wit::RegistryError>> {
        let host = &*self;
        if host.aborted() {
            return Ok(Err(wit::RegistryError::Aborted));
        }
        let Some(registry) = &host.registry else {
            return Ok(Ok(Vec::new()));
        };
        let listed = registry.list_within(host.cwd(), &host.provider_deadline());
        // A provider abandoned on abort failed the listing; report the abort.
        if host.aborted() {
            return Ok(Err(wit::RegistryError::Aborted));
        }
        Ok(match listed {
            Ok(snapshot) => {
                Ok(winners_named(&snapshot, name.as_deref()).map(|winner| summary(&winner.candidate)).collect())
            }
            Err(RegistryError::Failed(text)) => Err(wit::RegistryError::Failed(text)),
        })
    }

    fn get_skill(
        &mut self,
        name: String,
    ) -> wasmtime::Result<Result<Option<wit::SkillDefinition>, wit::RegistryError>> {
        let host = &*self;
        if host.aborted() {
            return Ok(Err(wit::RegistryError::Aborted));
        }
        let Some(registry) = &host.registry else {
            return Ok(Ok(None));
        };
        let loaded = registry.get_within(host.cwd(), &name, &host.provider_deadline());
        if host.aborted() {
            return Ok(Err(wit::RegistryError::Aborted));
        }
        Ok(match loaded {
            Ok(definition) => Ok(definition.map(|definition| {
                let skill = definition.summary;
                wit::SkillDefinition {
                    invocation: policy(&skill),
                    resource_base: skill.resource_base.map(Into::into),
                    path: skill.path.map(|path| path.display().to_string()),
                    name: skill.name,
                    description: skill.description,
                    provider: skill.provider,
                    content: definition.content,
                }
            })),
            Err(RegistryError::Failed(text)) => Err(wit::RegistryError::Failed(text)),
        })
    }
}

fn policy(skill: &SkillCandidate) -> wit::InvocationPolicy {
    wit::InvocationPolicy {
        model_invocable: skill.invocation.model_invocable,
        user_invocable: skill.invocation.user_invocable,
    }
}

fn summary(skill: &SkillCandidate) -> wit::SkillSummary {
    wit::SkillSummary {
        name: skill.name.clone(),
        description: skill.description.clone(),
        invocation: policy(skill),
        provider: skill.provider.clone(),
        source: skill.source.clone(),
        path: skill.path.as_ref().map(|path| path.display().to_string()),
    }
}

impl From<ResourceBase> for wit::ResourceBase {
    fn from(base: ResourceBase) -> Self {
        match base {
            ResourceBase::Directory { path } => Self::Directory(path),
            ResourceBase::Url { url } => Self::Url(url),
            ResourceBase::Opaque { description } => Self::Opaque(description),
        }
    }
}

impl From<wit::ResourceBase> for ResourceBase {
    fn from(base: wit::ResourceBase) -> Self {
        match base {
            wit::ResourceBase::Directory(path) => Self::Directory { path },
            wit::ResourceBase::Url(url) => Self::Url { url },
            wit::ResourceBase::Opaque(description) => Self::Opaque { description },
        }
    }
}

//! `dsh:skill/registry`: the registry's answers for the call's working
//! directory, converted to WIT types.

use serde_json::json;

use crate::bindings::registry::{Host, SkillSnapshot, SnapshotAnswer};
use crate::bindings::types as wit;
use crate::registry::{RegistryError, ResourceBase, SkillCandidate, is_skill_name};

impl Host for super::CallContext {
    fn snapshot(&mut self, known: Option<u64>) -> wasmtime::Result<Result<SnapshotAnswer, wit::RegistryError>> {
        let answer = self.snapshot_answer(known);
        self.trace_import("registry.snapshot", || json!({ "known": known }), &answer);
        answer
    }

    fn list_skills(
        &mut self,
        name: Option<String>,
    ) -> wasmtime::Result<Result<Vec<wit::SkillSummary>, wit::RegistryError>> {
        let args = self.trace.is_some().then(|| json!({ "name": name }));
        let answer = self.list_skills_answer(name);
        self.trace_import("registry.list-skills", || args.unwrap_or_default(), &answer);
        answer
    }

    fn get_skill(
        &mut self,
        name: String,
    ) -> wasmtime::Result<Result<Option<wit::SkillDefinition>, wit::RegistryError>> {
        let args = self.trace.is_some().then(|| json!({ "name": name }));
        let answer = self.get_skill_answer(name);
        self.trace_import("registry.get-skill", || args.unwrap_or_default(), &answer);
        answer
    }
}

impl super::CallContext {
    fn snapshot_answer(&mut self, known: Option<u64>) -> wasmtime::Result<Result<SnapshotAnswer, wit::RegistryError>> {
        if self.aborted() {
            return Ok(Err(wit::RegistryError::Aborted));
        }
        let Some(registry) = self.registry.clone() else {
            return Ok(Ok(SnapshotAnswer::Changed(SkillSnapshot { complete: true, revision: 0, skills: Vec::new() })));
        };
        let snapshot = self.listing(&registry, false);
        if self.aborted() {
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

    fn list_skills_answer(
        &mut self,
        name: Option<String>,
    ) -> wasmtime::Result<Result<Vec<wit::SkillSummary>, wit::RegistryError>> {
        if self.aborted() {
            return Ok(Err(wit::RegistryError::Aborted));
        }
        let Some(registry) = self.registry.clone() else {
            return Ok(Ok(Vec::new()));
        };
        let snapshot = self.listing(&registry, true);
        // A provider abandoned on abort failed the listing; report the abort.
        if self.aborted() {
            return Ok(Err(wit::RegistryError::Aborted));
        }
        if let Some(invalid) = &snapshot.invalid_candidate {
            return Ok(Err(wit::RegistryError::Failed(invalid.clone())));
        }
        Ok(match name {
            None => Ok(snapshot.skills.iter().map(|winner| summary(&winner.candidate)).collect()),
            Some(name) => match snapshot.lookup(&name) {
                Ok(winner) => Ok(winner.into_iter().map(|winner| summary(&winner.candidate)).collect()),
                Err(RegistryError::Failed(text)) => Err(wit::RegistryError::Failed(text)),
            },
        })
    }

    fn get_skill_answer(
        &mut self,
        name: String,
    ) -> wasmtime::Result<Result<Option<wit::SkillDefinition>, wit::RegistryError>> {
        if self.aborted() {
            return Ok(Err(wit::RegistryError::Aborted));
        }
        let Some(registry) = self.registry.clone() else {
            return Ok(Ok(None));
        };
        // A name outside the grammar is nothing, and no provider is asked.
        if !is_skill_name(&name) {
            return Ok(Ok(None));
        }
        let snapshot = self.listing(&registry, true);
        let loaded = registry.get_listed(&snapshot, self.cwd(), &name, &self.provider_deadline());
        if self.aborted() {
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
                    body_digest: skill.body_digest,
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
        when_to_use: skill.when_to_use.clone(),
        invocation: policy(skill),
        provider: skill.provider.clone(),
        source: skill.source.clone(),
        path: skill.path.as_ref().map(|path| path.display().to_string()),
        body_digest: skill.body_digest.clone(),
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

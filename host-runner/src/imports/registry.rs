//! `dsh:skill/registry`: the registry's answers for the call's working
//! directory, converted to WIT types.

use std::path::Path;

use serde_json::json;

use crate::bindings::registry::{FileAnswer, Host, SkillFile, SkillFiles, SkillSnapshot, SnapshotAnswer};
use crate::bindings::types as wit;
use crate::registry::{
    FileRead, ProviderDeadline, RegistryError, RegistrySnapshot, ResourceBase, SkillCandidate, SkillRegistry,
    is_skill_name,
};

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

    fn list_skill_files(
        &mut self,
        name: String,
        limit: u32,
    ) -> wasmtime::Result<Result<Option<SkillFiles>, wit::RegistryError>> {
        let args = self.trace.is_some().then(|| json!({ "name": name, "limit": limit }));
        let answer = self.list_skill_files_answer(name, limit);
        self.trace_import("registry.list-skill-files", || args.unwrap_or_default(), &answer);
        answer
    }

    fn read_skill_file(
        &mut self,
        name: String,
        path: String,
    ) -> wasmtime::Result<Result<FileAnswer, wit::RegistryError>> {
        let args = self.trace.is_some().then(|| json!({ "name": name, "path": path }));
        let answer = self.read_skill_file_answer(&name, &path);
        self.trace_import("registry.read-skill-file", || args.unwrap_or_default(), &answer);
        if let Ok(Ok(FileAnswer::Text(_))) = &answer {
            self.files_read.push((name, path));
        }
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
        // A name outside the grammar is nothing, and no provider is asked.
        if !is_skill_name(&name) && !self.aborted() {
            return Ok(Ok(None));
        }
        let loaded = self.ask_registry(None, |registry, snapshot, cwd, deadline| {
            registry.get_listed(snapshot, cwd, &name, deadline)
        })?;
        Ok(loaded.map(|definition| {
            definition.map(|definition| {
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
            })
        }))
    }

    fn list_skill_files_answer(
        &mut self,
        name: String,
        limit: u32,
    ) -> wasmtime::Result<Result<Option<SkillFiles>, wit::RegistryError>> {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        let listed = self.ask_registry(None, |registry, snapshot, cwd, deadline| {
            registry.list_files_listed(snapshot, cwd, &name, limit, deadline)
        })?;
        Ok(listed.map(|listing| {
            listing.map(|listing| SkillFiles {
                files: listing.files.into_iter().map(|(path, size)| SkillFile { path, size }).collect(),
                total: listing.total,
            })
        }))
    }

    fn read_skill_file_answer(
        &mut self,
        name: &str,
        path: &str,
    ) -> wasmtime::Result<Result<FileAnswer, wit::RegistryError>> {
        let read = self.ask_registry(FileRead::Unavailable, |registry, snapshot, cwd, deadline| {
            registry.read_file_listed(snapshot, cwd, name, path, deadline)
        })?;
        Ok(read.map(|read| match read {
            FileRead::Text(text) => FileAnswer::Text(text),
            FileRead::Binary(size) => FileAnswer::Binary(size),
            FileRead::TooLarge(size) => FileAnswer::TooLarge(size),
            FileRead::Missing => FileAnswer::Missing,
            FileRead::Unavailable => FileAnswer::Unavailable,
        }))
    }

    /// What `ask` answers from the call's listing (for a load) under the
    /// call's provider deadline: `aborted` when the step's abort rose before
    /// or while it ran (a provider abandoned on abort failed), `nothing`
    /// when the call reaches no registry.
    fn ask_registry<T>(
        &mut self,
        nothing: T,
        ask: impl FnOnce(&SkillRegistry, &RegistrySnapshot, Option<&Path>, &ProviderDeadline) -> Result<T, RegistryError>,
    ) -> wasmtime::Result<Result<T, wit::RegistryError>> {
        if self.aborted() {
            return Ok(Err(wit::RegistryError::Aborted));
        }
        let Some(registry) = self.registry.clone() else {
            return Ok(Ok(nothing));
        };
        let snapshot = self.listing(&registry, true);
        let answer = ask(&registry, &snapshot, self.cwd(), &self.provider_deadline());
        if self.aborted() {
            return Ok(Err(wit::RegistryError::Aborted));
        }
        Ok(answer.map_err(|RegistryError::Failed(text)| wit::RegistryError::Failed(text)))
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

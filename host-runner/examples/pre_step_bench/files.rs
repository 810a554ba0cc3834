//! `--files`: the workload's skills kept in memory by a provider that gives
//! each one a file, so a `path` read is timed beside a whole load and a
//! section read of the same skills.

use std::path::Path;

/// The skills served by a provider that keeps them in memory, as
/// runtime skills are kept, each with one file, `references/api.md`, of
/// about 2 KB: a file read costs what the tool and the boundary cost.
pub fn with_files(skills: &[(String, String, String)]) -> Files {
    let reference: String =
        (1..=20).map(|k| format!("- `call_{k}(input)`: what call {k} takes, returns and fails with.\n")).collect();
    let mut candidates: Vec<_> = skills
        .iter()
        .map(|(name, description, content)| {
            let candidate = skill_host::SkillCandidate {
                name: name.clone(),
                description: description.clone(),
                when_to_use: None,
                invocation: skill_host::InvocationPolicy::default(),
                source: "memory".to_owned(),
                provider: "memory".to_owned(),
                resource_base: None,
                rank: 100,
                path: None,
                metadata: None,
                body_digest: Some(skill_host::file_digest(content.as_bytes())),
                listed: None,
            };
            (candidate, content.clone())
        })
        .collect();
    candidates.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    Files { skills: candidates, reference }
}

/// See [`with_files`].
pub struct Files {
    /// Each skill's candidate and body, sorted by name.
    skills: Vec<(skill_host::SkillCandidate, String)>,
    reference: String,
}

impl Files {
    fn find(&self, name: &str) -> Option<&(skill_host::SkillCandidate, String)> {
        self.skills.binary_search_by(|(candidate, _)| candidate.name.as_str().cmp(name)).ok().map(|at| &self.skills[at])
    }
}

impl skill_host::SkillProvider for Files {
    fn name(&self) -> &str {
        "memory"
    }

    fn list(&self, _cwd: Option<&Path>) -> Result<skill_host::Listing, skill_host::ProviderError> {
        let candidates = self.skills.iter().map(|(candidate, _)| candidate.clone()).collect();
        Ok(skill_host::Listing { candidates, complete: true, ..Default::default() })
    }

    fn load(
        &self,
        _cwd: Option<&Path>,
        candidate: &skill_host::SkillCandidate,
    ) -> Result<Option<skill_host::SkillDefinition>, skill_host::ProviderError> {
        Ok(self.find(&candidate.name).map(|(summary, content)| skill_host::SkillDefinition {
            summary: summary.clone(),
            content: content.clone(),
        }))
    }

    fn list_files(
        &self,
        _cwd: Option<&Path>,
        _candidate: &skill_host::SkillCandidate,
        limit: usize,
    ) -> Result<Option<skill_host::FileListing>, skill_host::ProviderError> {
        let files = [("references/api.md".to_owned(), Some(self.reference.len() as u64))];
        Ok(Some(skill_host::FileListing::first(files, limit)))
    }

    fn read_file(
        &self,
        _cwd: Option<&Path>,
        _candidate: &skill_host::SkillCandidate,
        path: &str,
    ) -> Result<skill_host::FileRead, skill_host::ProviderError> {
        Ok(match path {
            "references/api.md" => skill_host::FileRead::Text(self.reference.clone()),
            _ => skill_host::FileRead::Missing,
        })
    }
}

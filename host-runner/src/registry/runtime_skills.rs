//! Runtime (embedded) skills: registered by the host itself, served from memory.

use super::types::{InvocationPolicy, ResourceBase, SkillCandidate, SkillDefinition, body_digest, is_skill_name};

/// The provider name of runtime skills.
pub const RUNTIME_PROVIDER: &str = "runtime";
/// The rank of runtime skills: after project roots, before user roots.
pub const RUNTIME_RANK: i64 = 250;

/// A skill registered at runtime, body included.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeSkill {
    /// Kebab-case name.
    pub name: String,
    /// Non-empty description.
    pub description: String,
    /// Optional routing hint.
    pub when_to_use: Option<String>,
    /// Who may invoke it.
    pub invocation: InvocationPolicy,
    /// Origin label (defaults to `runtime`).
    pub source: String,
    /// Provider label shown to the model (defaults to `runtime`).
    pub provider: String,
    /// Where its resources live, if anywhere.
    pub resource_base: Option<ResourceBase>,
    /// The instructions.
    pub content: String,
}

impl RuntimeSkill {
    /// A model- and user-invocable runtime skill with default labels.
    pub fn new(name: impl Into<String>, description: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            when_to_use: None,
            invocation: InvocationPolicy::default(),
            source: RUNTIME_PROVIDER.to_owned(),
            provider: RUNTIME_PROVIDER.to_owned(),
            resource_base: None,
            content: content.into(),
        }
    }

    pub(super) fn validate(&self) -> Result<(), String> {
        if !is_skill_name(&self.name) {
            return Err(format!("invalid skill name \"{}\"", self.name));
        }
        if self.description.is_empty() {
            return Err(format!("skill \"{}\" requires a description", self.name));
        }
        Ok(())
    }

    pub(super) fn candidate(&self) -> SkillCandidate {
        SkillCandidate {
            listed: None,
            name: self.name.clone(),
            description: self.description.clone(),
            when_to_use: self.when_to_use.clone(),
            invocation: self.invocation,
            source: self.source.clone(),
            provider: self.provider.clone(),
            resource_base: self.resource_base.clone(),
            rank: RUNTIME_RANK,
            path: None,
            metadata: None,
            body_digest: Some(body_digest(&self.content)),
        }
    }

    pub(super) fn definition(&self) -> SkillDefinition {
        SkillDefinition { summary: self.candidate(), content: self.content.clone() }
    }
}

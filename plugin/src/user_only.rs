//! `userOnly` (docs/spec.md §3.13): skills the configuration keeps from the
//! model without editing them. The registry is read through [`UserOnly`],
//! which answers as if each such skill said `disable-model-invocation:
//! true`, so every feature that asks whether the model may invoke a skill
//! (the catalog, the tool's refusal, search, loaded-skill notices, Pi's
//! block) gets one answer, and a user may still invoke it.

use skill_rules::SkillPatterns;

use crate::types::{FileAnswer, Registry, RegistryError, SkillDefinition, SkillFiles, SkillSummary, SnapshotAnswer};

/// A registry whose skills matched by `userOnly` are not model-invocable.
pub struct UserOnly<'a, R> {
    registry: &'a R,
    patterns: &'a SkillPatterns,
}

impl<'a, R: Registry> UserOnly<'a, R> {
    /// `registry` as `patterns` (the configuration's `userOnly`) shows it.
    pub fn new(registry: &'a R, patterns: &'a SkillPatterns) -> Self {
        Self { registry, patterns }
    }

    fn applies_to(&self, name: &str) -> bool {
        !self.patterns.is_empty() && self.patterns.matches(name)
    }

    fn summary(&self, mut skill: SkillSummary) -> SkillSummary {
        if self.applies_to(&skill.name) {
            skill.invocation.model_invocable = false;
        }
        skill
    }
}

impl<R: Registry> Registry for UserOnly<'_, R> {
    fn snapshot(&self, known: Option<u64>) -> Result<SnapshotAnswer, RegistryError> {
        let mut answer = self.registry.snapshot(known)?;
        if let SnapshotAnswer::Changed(snapshot) = &mut answer
            && !self.patterns.is_empty()
        {
            let skills = std::mem::take(&mut snapshot.skills);
            snapshot.skills = skills.into_iter().map(|skill| self.summary(skill)).collect();
        }
        Ok(answer)
    }

    fn list(&self, name: Option<&str>) -> Result<Vec<SkillSummary>, RegistryError> {
        let listed = self.registry.list(name)?;
        if self.patterns.is_empty() {
            return Ok(listed);
        }
        Ok(listed.into_iter().map(|skill| self.summary(skill)).collect())
    }

    fn get(&self, name: &str) -> Result<Option<SkillDefinition>, RegistryError> {
        let mut loaded = self.registry.get(name)?;
        // The loaded name may differ from the one asked for: the policy
        // follows the skill that was loaded.
        if let Some(definition) = &mut loaded
            && self.applies_to(&definition.name)
        {
            definition.invocation.model_invocable = false;
        }
        Ok(loaded)
    }

    fn list_files(&self, name: &str, limit: u32) -> Result<Option<SkillFiles>, RegistryError> {
        self.registry.list_files(name, limit)
    }

    fn read_file(&self, name: &str, path: &str) -> Result<FileAnswer, RegistryError> {
        self.registry.read_file(name, path)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::types::{InvocationPolicy, Snapshot};

    struct Fixed {
        skills: Vec<SkillSummary>,
        snapshots: Cell<usize>,
    }

    impl Registry for Fixed {
        fn snapshot(&self, known: Option<u64>) -> Result<SnapshotAnswer, RegistryError> {
            self.snapshots.set(self.snapshots.get() + 1);
            Ok(match known {
                Some(1) => SnapshotAnswer::Unchanged,
                _ => SnapshotAnswer::Changed(Snapshot { complete: true, revision: 1, skills: self.skills.clone() }),
            })
        }

        fn list(&self, name: Option<&str>) -> Result<Vec<SkillSummary>, RegistryError> {
            Ok(self.skills.iter().filter(|skill| name.is_none_or(|name| skill.name == name)).cloned().collect())
        }

        fn get(&self, name: &str) -> Result<Option<SkillDefinition>, RegistryError> {
            Ok(self.skills.iter().find(|skill| skill.name == name).map(|skill| SkillDefinition {
                name: skill.name.clone(),
                description: skill.description.clone(),
                invocation: skill.invocation,
                provider: skill.provider.clone(),
                resource_base: None,
                path: None,
                content: "Body.".to_owned(),
                body_digest: None,
            }))
        }
    }

    fn policies(skills: &[SkillSummary]) -> Vec<(String, InvocationPolicy)> {
        skills.iter().map(|skill| (skill.name.clone(), skill.invocation)).collect()
    }

    #[test]
    fn matched_skills_answer_as_not_model_invocable_and_stay_user_invocable() {
        let registry = Fixed {
            skills: vec![
                SkillSummary::for_test("deploy-prod", "Ship.", true),
                SkillSummary::for_test("review", "Review.", true),
            ],
            snapshots: Cell::new(0),
        };
        let patterns = SkillPatterns::new(vec!["deploy-*".to_owned()]);
        let view = UserOnly::new(&registry, &patterns);
        let user_only = InvocationPolicy { model_invocable: false, user_invocable: true };
        let both = InvocationPolicy { model_invocable: true, user_invocable: true };
        let expected = vec![("deploy-prod".to_owned(), user_only), ("review".to_owned(), both)];
        let Ok(SnapshotAnswer::Changed(snapshot)) = view.snapshot(None) else { panic!() };
        assert_eq!(policies(&snapshot.skills), expected);
        assert_eq!(view.snapshot(Some(1)), Ok(SnapshotAnswer::Unchanged));
        assert_eq!(policies(&view.list(None).unwrap()), expected);
        assert_eq!(view.get("deploy-prod").unwrap().unwrap().invocation, user_only);
        assert_eq!(view.get("review").unwrap().unwrap().invocation, both);
        assert_eq!(view.get("missing"), Ok(None));
        // No patterns: the registry's answers, untouched.
        let none = SkillPatterns::EMPTY;
        assert_eq!(UserOnly::new(&registry, &none).list(None).unwrap(), registry.skills);
    }

    #[test]
    fn the_tool_refuses_search_skips_and_pi_leaves_out_a_user_only_skill() {
        use crate::config::Config;
        use crate::tool::{ToolReturn, invoke_with};
        let mut deploy = SkillSummary::for_test("deploy-prod", "Deploy production.", true);
        deploy.path = Some("/s/deploy-prod/SKILL.md".to_owned());
        let mut review = SkillSummary::for_test("review", "Review production code.", true);
        review.path = Some("/s/review/SKILL.md".to_owned());
        let registry = Fixed { skills: vec![deploy, review], snapshots: Cell::new(0) };
        let config = Config::parse(r#"{"userOnly":["deploy-prod"],"skillSearch":true}"#).unwrap();
        let refused = invoke_with(&config, &registry, r#"{"name":"deploy-prod"}"#).unwrap_err();
        assert_eq!(refused.model_text(), "Error: skill \"deploy-prod\" is not available for model invocation");
        let Ok(ToolReturn::Matches(found)) = invoke_with(&config, &registry, r#"{"query":"production"}"#) else {
            panic!()
        };
        assert_eq!(found.best.iter().map(|found| found.name.as_str()).collect::<Vec<_>>(), ["review"]);
        assert!(matches!(invoke_with(&config, &registry, r#"{"name":"review"}"#), Ok(ToolReturn::Skill(..))));
        let block = crate::pi::system_prompt_for(&config, &registry).unwrap();
        assert!(block.contains("<name>review</name>") && !block.contains("deploy-prod"));
        assert!(crate::pi::system_prompt_for(&Config::default(), &registry).unwrap().contains("deploy-prod"));
    }
}

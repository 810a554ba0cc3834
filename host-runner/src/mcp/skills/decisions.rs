//! What a read of a skill's file may skip: the walk of its folder and the
//! check of its `SKILL.md`, decided once and kept while it holds
//! ([`Decision`], opened.rs).

use rmcp::model::Skill;
use skill_rules::SKILL_FILE;

use super::{Decision, OpenedSkill, SETTLED, SkillFiles, SkillsError, manifest_of, skill_uri};

/// The skills found servable, by a listing ([`Decisions::manifest`]) or a
/// read, each kept while nothing its decision rests on has changed
/// ([`Decision`]), so that a read opens the skill's folder and the file
/// asked for, and neither walks the folder nor checks its `SKILL.md` again.
#[derive(Debug)]
pub struct Decisions {
    kept: std::sync::Mutex<std::collections::HashMap<String, (SkillFiles, Decision)>>,
    /// How long what a decision rests on must have been unchanged for it to
    /// be kept ([`SETTLED`]).
    settled: std::time::Duration,
    /// Reads served from a kept decision (for tests).
    #[cfg(test)]
    pub(super) reused: std::sync::atomic::AtomicUsize,
}

/// The most decisions kept; past it, all are dropped and kept afresh.
const MAX_DECISIONS: usize = 4096;

impl Default for Decisions {
    fn default() -> Self {
        Self::settled_after(SETTLED)
    }
}

impl Decisions {
    /// Decisions kept once what they rest on has been unchanged for `settled`.
    pub fn settled_after(settled: std::time::Duration) -> Self {
        Self {
            kept: std::sync::Mutex::default(),
            settled,
            #[cfg(test)]
            reused: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The skill `name` opened as served, its `SKILL.md` meeting the client
    /// rules: from the decision kept for the very files listed when it
    /// still holds, otherwise afresh (with the `SKILL.md` bytes it checked),
    /// and kept when it may be.
    pub(super) fn open(&self, name: &str, files: &SkillFiles) -> Result<(OpenedSkill, Option<Vec<u8>>), SkillsError> {
        let lock = || self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let kept = lock().get(name).filter(|(listed, _)| listed == files).map(|(_, decision)| decision.clone());
        if let Some(decision) = kept
            && let Some(skill) = files.reopen(name, &decision)?
        {
            #[cfg(test)]
            self.reused.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return Ok((skill, None));
        }
        let skill = files.open(name)?;
        let skill_file = skill.read(&skill_uri(name), SKILL_FILE)?;
        files.check_client_rules(name, &String::from_utf8_lossy(&skill_file))?;
        self.keep(name, files, &skill);
        Ok((skill, Some(skill_file)))
    }

    /// [`manifest`](super::manifest): a listing's or `skills/get`'s entry
    /// for the skill, its decision kept for the reads that follow (a client
    /// lists, then reads).
    pub fn manifest(&self, name: &str, files: &SkillFiles) -> Result<Skill, SkillsError> {
        let skill = files.open(name)?;
        let manifest = manifest_of(name, files, &skill)?;
        self.keep(name, files, &skill);
        Ok(manifest)
    }

    /// Keeps what opening `skill` decided, when it may be kept; forgets
    /// the decision kept before otherwise.
    fn keep(&self, name: &str, files: &SkillFiles, skill: &OpenedSkill) {
        let mut kept = self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        match skill.decision(self.settled) {
            Some(decision) => {
                if kept.len() >= MAX_DECISIONS && !kept.contains_key(name) {
                    kept.clear();
                }
                kept.insert(name.to_owned(), (files.clone(), decision));
            }
            None => {
                kept.remove(name);
            }
        }
    }
}

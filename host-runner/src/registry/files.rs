//! A skill's files through the registry (docs/spec.md §3.15, §4.1): asked
//! of the provider that won the skill's name in the call's listing, as a
//! load is, and checked on the way out whatever the provider answered.

use std::path::Path;

use super::{
    FileListing, FileRead, ProviderDeadline, ProviderError, RegistryError, RegistrySnapshot, SkillCandidate,
    SkillProvider, SkillRegistry, winner_of,
};

impl SkillRegistry {
    /// The files of the skill `name` wins in `snapshot` (made for `cwd`),
    /// other than its skill file: the first `limit` and how many there are
    /// (docs/spec.md §3.15); `None` when no provider has it or its provider
    /// serves no files for it. Fails as [`SkillRegistry::get_listed`] does.
    pub fn list_files_listed(
        &self,
        snapshot: &RegistrySnapshot,
        cwd: Option<&Path>,
        name: &str,
        limit: usize,
        deadline: &ProviderDeadline,
    ) -> Result<Option<FileListing>, RegistryError> {
        let listing = self.ask_winner(snapshot, cwd, name, deadline, move |provider, cwd, candidate| {
            provider.list_files(cwd, candidate, limit)
        })?;
        // A provider lists only paths inside the skill, sorted and within the limit.
        Ok(listing.flatten().map(|mut listing| {
            listing.files.retain(|(path, _)| skill_rules::is_skill_file_path(path));
            listing.files.sort();
            listing.files.dedup_by(|a, b| a.0 == b.0);
            listing.files.truncate(limit);
            listing.total = listing.total.max(listing.files.len() as u64);
            listing
        }))
    }

    /// Reads the file `path` of the skill `name` wins in `snapshot` (made
    /// for `cwd`), confined to it (docs/spec.md §3.15): a path outside
    /// [`skill_rules::is_skill_file_path`] is missing, and no provider is
    /// asked. Fails as [`SkillRegistry::get_listed`] does.
    pub fn read_file_listed(
        &self,
        snapshot: &RegistrySnapshot,
        cwd: Option<&Path>,
        name: &str,
        path: &str,
        deadline: &ProviderDeadline,
    ) -> Result<FileRead, RegistryError> {
        if !skill_rules::is_skill_file_path(path) {
            return Ok(FileRead::Missing);
        }
        let path = path.to_owned();
        let read = self.ask_winner(snapshot, cwd, name, deadline, move |provider, cwd, candidate| {
            provider.read_file(cwd, candidate, &path)
        })?;
        Ok(match read {
            None => FileRead::Unavailable,
            // Whatever a provider read, one read returns at most the cap.
            Some(FileRead::Text(text)) if text.len() as u64 > skill_rules::MAX_SKILL_FILE_READ_BYTES => {
                FileRead::TooLarge(text.len() as u64)
            }
            Some(read) => read,
        })
    }

    /// `ask` of the provider whose candidate wins `name` in `snapshot`,
    /// under `deadline`; `None` for no winner or a runtime skill (which has
    /// no files).
    fn ask_winner<T: Send + 'static>(
        &self,
        snapshot: &RegistrySnapshot,
        cwd: Option<&Path>,
        name: &str,
        deadline: &ProviderDeadline,
        ask: impl FnOnce(&dyn SkillProvider, Option<&Path>, &SkillCandidate) -> Result<T, ProviderError> + Send + 'static,
    ) -> Result<Option<T>, RegistryError> {
        match winner_of(snapshot, name)? {
            Some(winner) => self.ask_provider(winner, cwd, deadline, ask),
            None => Ok(None),
        }
    }
}

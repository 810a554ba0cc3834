//! A remote skill's files (docs/spec.md §3.15 and §4.4): those its index
//! entry lists (`files`), and no others, each read from beneath the skill's
//! folder URL (no redirect leaves it) and checked against the digest the
//! index gives it; its `SKILL.md` is the skill file itself, checked as a
//! load checks it. An entry that lists no files has no others.

use std::path::Path;

use serde_json::Value;
use skill_rules::{MAX_SKILL_FILE_READ_BYTES, SKILL_FILE, is_skill_file_path};
use url::Url;

use super::{RemoteProvider, file_digest, folder_of, is_sha256_digest, scrub};
use crate::registry::{FileListing, FileRead, ProviderError, SkillCandidate};

/// One file an index entry lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ListedFile {
    /// Its path inside the skill.
    pub path: String,
    /// The `sha256:` digest of its bytes, when the index gives one.
    pub digest: Option<String>,
    /// Its size in bytes, when the index gives it.
    pub size: Option<u64>,
}

/// The `files` of an index entry for the skill `name`, sorted by path;
/// `None` when the entry has none. `Err` says why the entry is skipped.
pub(super) fn listed_files(name: &str, entry: &Value) -> Result<Option<Vec<ListedFile>>, String> {
    let malformed =
        || format!("skill \"{name}\": `files` must be an array of {{\"path\", \"digest\"?, \"size\"?}} objects");
    let files = match entry.get("files") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(files)) => files,
        Some(_) => return Err(malformed()),
    };
    let mut listed = Vec::with_capacity(files.len());
    for file in files {
        let Some(Value::String(path)) = file.get("path") else {
            return Err(malformed());
        };
        if !is_skill_file_path(path) {
            return Err(format!(
                "skill \"{name}\": file path {} is not a path inside a skill",
                Value::from(path.as_str())
            ));
        }
        let digest = match file.get("digest") {
            None | Some(Value::Null) => None,
            Some(Value::String(digest)) if is_sha256_digest(digest) => Some(digest.clone()),
            Some(_) => {
                return Err(format!(
                    "skill \"{name}\": the digest of file {} must be \"sha256:\" and 64 lowercase hex digits",
                    Value::from(path.as_str())
                ));
            }
        };
        let size = match file.get("size") {
            None | Some(Value::Null) => None,
            Some(size) => Some(size.as_u64().ok_or_else(malformed)?),
        };
        listed.push(ListedFile { path: path.clone(), digest, size });
    }
    listed.sort_by(|a, b| a.path.cmp(&b.path));
    listed.dedup_by(|a, b| a.path == b.path);
    Ok(Some(listed))
}

impl RemoteProvider {
    /// The skill file URL of `candidate` (its path, as listed).
    fn skill_url(candidate: &SkillCandidate) -> Option<Url> {
        candidate.path.as_deref().and_then(Path::to_str).and_then(|path| Url::parse(path).ok())
    }

    /// What the last listing's index entry said of `candidate`'s files:
    /// `None` when it is not known, `Some(None)` when it lists none.
    fn published(&self, candidate: &SkillCandidate, url: &Url) -> Option<Option<Vec<ListedFile>>> {
        let key = (candidate.name.clone(), url.as_str().to_owned());
        self.files.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&key).cloned()
    }

    /// The files the index entry lists for `candidate` but its `SKILL.md`
    /// (none when it lists none).
    pub(super) fn list_skill_files(&self, candidate: &SkillCandidate, limit: usize) -> Option<FileListing> {
        let url = Self::skill_url(candidate)?;
        let files = self.published(candidate, &url)?.unwrap_or_default();
        let others = files.into_iter().filter(|file| file.path != SKILL_FILE);
        Some(FileListing::first(others.map(|file| (file.path, file.size)), limit))
    }

    /// Fetches the file `path` of `candidate`: one its index entry lists,
    /// from beneath its folder URL, with the digest the entry gives it; its
    /// `SKILL.md` from the skill's own URL, with the entry's digest (and the
    /// list's, when it gives one). No redirect leaves the folder.
    pub(super) fn read_skill_file(&self, candidate: &SkillCandidate, path: &str) -> Result<FileRead, ProviderError> {
        let Some(skill) = Self::skill_url(candidate) else {
            return Ok(FileRead::Unavailable);
        };
        let Some(published) = self.published(candidate, &skill) else {
            return Ok(FileRead::Unavailable);
        };
        let published = published.unwrap_or_default();
        let listed = published.iter().find(|file| file.path == path);
        let (url, expected) = if path == SKILL_FILE {
            let entry =
                self.digests.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(skill.as_str()).cloned();
            let expected: Vec<String> = entry.into_iter().chain(listed.and_then(|file| file.digest.clone())).collect();
            (skill.clone(), expected)
        } else {
            let Some(listed) = listed else {
                return Ok(FileRead::Missing);
            };
            if let Some(size) = listed.size
                && size > MAX_SKILL_FILE_READ_BYTES
            {
                return Ok(FileRead::TooLarge(size));
            }
            let Some(url) = file_url(&skill, path) else {
                return Ok(FileRead::Missing);
            };
            (url, listed.digest.clone().into_iter().collect())
        };
        let fetched = self.with_credentials(&url);
        let folder = folder_of(&skill);
        let bytes = match self.get_beneath(&fetched, MAX_SKILL_FILE_READ_BYTES, None, Some(&folder)) {
            Ok(super::Answer::Body { bytes, .. }) => bytes,
            Ok(super::Answer::Gone) => return Ok(FileRead::Missing),
            Ok(super::Answer::NotModified(_)) => {
                return Err(ProviderError(format!(
                    "cannot fetch skill file {url}: HTTP status 304 to a request that was not conditional"
                )));
            }
            Err(reason) => {
                return Err(ProviderError(format!("cannot fetch skill file {url}: {}", scrub(reason, &fetched))));
            }
        };
        let actual = file_digest(&bytes);
        if let Some(expected) = expected.iter().find(|expected| **expected != actual) {
            return Err(ProviderError(format!(
                "skill \"{}\": the file at {url} has digest {actual}, but the index says {expected}; it is not read",
                candidate.name
            )));
        }
        Ok(FileRead::of_bytes(bytes))
    }
}

/// The URL of the file `path` (inside a skill) beside the skill file at
/// `skill`: each segment percent-encoded onto the skill's folder, so the
/// URL stays beneath it.
fn file_url(skill: &Url, path: &str) -> Option<Url> {
    let mut url = Url::parse(&folder_of(skill)).ok()?;
    {
        let mut segments = url.path_segments_mut().ok()?;
        segments.pop_if_empty();
        for segment in path.split('/') {
            segments.push(segment);
        }
    }
    Some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_url_stays_beneath_the_skills_folder() {
        let skill = Url::parse("https://x.test/skills/deploy/SKILL.md?v=1").unwrap();
        assert_eq!(
            file_url(&skill, "references/api.md").unwrap().as_str(),
            "https://x.test/skills/deploy/references/api.md"
        );
        assert_eq!(
            file_url(&skill, "a b/%2e%2e?#.md").unwrap().as_str(),
            "https://x.test/skills/deploy/a%20b/%252e%252e%3F%23.md"
        );
    }

    #[test]
    fn an_entrys_files_are_checked_and_sorted() {
        let entry = serde_json::json!({"files": [{"path": "b.md", "size": 3}, {"path": "a.md", "digest": null}]});
        let files = listed_files("s", &entry).unwrap().unwrap();
        assert_eq!(files.iter().map(|file| file.path.as_str()).collect::<Vec<_>>(), ["a.md", "b.md"]);
        assert_eq!(listed_files("s", &serde_json::json!({})).unwrap(), None);
        for (files, reason) in [
            (
                serde_json::json!({}),
                "skill \"s\": `files` must be an array of {\"path\", \"digest\"?, \"size\"?} objects",
            ),
            (serde_json::json!([{"path": "../x"}]), "skill \"s\": file path \"../x\" is not a path inside a skill"),
            (
                serde_json::json!([{"path": "x", "digest": "md5:1"}]),
                "skill \"s\": the digest of file \"x\" must be \"sha256:\" and 64 lowercase hex digits",
            ),
            (
                serde_json::json!([{"path": "x", "size": -1}]),
                "skill \"s\": `files` must be an array of {\"path\", \"digest\"?, \"size\"?} objects",
            ),
        ] {
            assert_eq!(listed_files("s", &serde_json::json!({ "files": files })).unwrap_err(), reason);
        }
    }
}

//! An in-memory provider, as scenario files describe providers (docs/spec.md §7):
//! skills given as JSON objects, an optional failure, an optional explicit
//! incomplete listing, and per-skill overrides of what a load finds.

use std::path::Path;

use serde_json::{Map, Value};

use crate::registry::ResourceBaseJson;
use crate::registry::{
    FileListing, FileRead, InvocationPolicy, Listing, ProviderError, ResourceBase, SkillCandidate, SkillDefinition,
    SkillProvider, body_digest,
};

/// The rank of a scenario skill that names none.
pub const DEFAULT_RANK: i64 = 100;

/// What a load of one skill finds.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadOutcome {
    /// The listed skill.
    AsListed,
    /// Nothing: the skill vanished between listing and loading.
    Missing,
    /// The listed fields with these replaced (another policy, another name…).
    Changed(Map<String, Value>),
}

/// One skill: its listed fields as JSON, and what a load finds.
#[derive(Debug, Clone, PartialEq)]
pub struct MemorySkill {
    /// The listed fields (`name`, `description`, `content`, `rank`, …).
    pub fields: Map<String, Value>,
    /// What a load finds.
    pub loaded: LoadOutcome,
}

/// A provider serving [`MemorySkill`]s.
#[derive(Debug, Clone)]
pub struct MemoryProvider {
    name: String,
    complete: bool,
    fail: Option<String>,
    skills: Vec<MemorySkill>,
}

impl MemoryProvider {
    /// A provider named `name`. `complete: false` lists explicitly
    /// incompletely; `fail` makes every listing fail with that text. Skills
    /// are checked here, so a malformed one is refused before any step runs.
    pub fn new(name: String, complete: bool, fail: Option<String>, skills: Vec<MemorySkill>) -> Result<Self, String> {
        let provider = Self { name, complete, fail, skills };
        for skill in &provider.skills {
            provider.candidate(&skill.fields)?;
            provider.files(&skill.fields)?;
        }
        Ok(provider)
    }

    fn candidate(&self, fields: &Map<String, Value>) -> Result<SkillCandidate, String> {
        let subject = || format!("skill {} of provider \"{}\"", Value::from(fields.get("name").cloned()), self.name);
        let string = |key: &str, default: Option<&str>| -> Result<String, String> {
            match fields.get(key) {
                Some(Value::String(value)) => Ok(value.clone()),
                None | Some(Value::Null) => {
                    default.map(str::to_owned).ok_or_else(|| format!("{}: `{key}` is required", subject()))
                }
                Some(_) => Err(format!("{}: `{key}` must be a string", subject())),
            }
        };
        let invocation = match fields.get("invocation") {
            None | Some(Value::Null) => InvocationPolicy::default(),
            Some(value) => serde_json::from_value(value.clone())
                .map_err(|error| format!("{}: `invocation`: {error}", subject()))?,
        };
        let rank = match fields.get("rank") {
            None | Some(Value::Null) => DEFAULT_RANK,
            Some(value) => value.as_i64().ok_or_else(|| format!("{}: `rank` must be an integer", subject()))?,
        };
        let when_to_use = match fields.get("whenToUse") {
            None | Some(Value::Null) => None,
            Some(Value::String(value)) => Some(value.clone()),
            Some(_) => return Err(format!("{}: `whenToUse` must be a string", subject())),
        };
        string("content", None)?;
        Ok(SkillCandidate {
            listed: None,
            name: string("name", None)?,
            description: string("description", None)?,
            when_to_use,
            invocation,
            source: string("source", Some(&self.name))?,
            provider: string("provider", Some(&self.name))?,
            // Checked when a load returns it: an invalid kind is the tool's
            // invalid output, never a rendering (docs/spec.md §3.3).
            resource_base: None,
            rank,
            path: None,
            metadata: None,
            body_digest: match fields.get("content") {
                Some(Value::String(content)) => Some(body_digest(content)),
                _ => None,
            },
        })
    }
}

/// One file of a scenario skill (`files`, docs/spec.md §7).
#[derive(Debug, Clone, PartialEq, Eq)]
enum MemoryFile {
    Text(String),
    Binary(u64),
    TooLarge(u64),
}

impl MemoryFile {
    fn size(&self) -> u64 {
        match self {
            Self::Text(text) => text.len() as u64,
            Self::Binary(size) | Self::TooLarge(size) => *size,
        }
    }
}

impl MemoryProvider {
    /// The skill's `files`, sorted by path; `None` when it has none (its
    /// provider serves no files for it).
    fn files(&self, fields: &Map<String, Value>) -> Result<Option<Vec<(String, MemoryFile)>>, String> {
        let subject = || format!("skill {} of provider \"{}\"", Value::from(fields.get("name").cloned()), self.name);
        let files = match fields.get("files") {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Object(files)) => files,
            Some(_) => return Err(format!("{}: `files` must be an object", subject())),
        };
        let mut found = Vec::with_capacity(files.len());
        for (path, file) in files {
            let quoted = Value::from(path.as_str());
            if !skill_rules::is_skill_file_path(path) {
                return Err(format!("{}: file path {quoted} is not a path inside a skill", subject()));
            }
            let size = |key: &str| file.get(key).and_then(Value::as_u64);
            let file = match file {
                Value::String(text) => MemoryFile::Text(text.clone()),
                Value::Object(object) if object.len() == 1 && size("binary").is_some() => {
                    MemoryFile::Binary(size("binary").unwrap_or_default())
                }
                Value::Object(object) if object.len() == 1 && size("tooLarge").is_some() => {
                    MemoryFile::TooLarge(size("tooLarge").unwrap_or_default())
                }
                _ => {
                    return Err(format!(
                        "{}: file {quoted} must be a string, {{\"binary\": size}} or {{\"tooLarge\": size}}",
                        subject()
                    ));
                }
            };
            found.push((path.clone(), file));
        }
        found.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Some(found))
    }

    /// The files of the skill `candidate` names, as listed.
    fn files_of(&self, candidate: &SkillCandidate) -> Result<Option<Vec<(String, MemoryFile)>>, ProviderError> {
        if let Some(message) = &self.fail {
            return Err(ProviderError(message.clone()));
        }
        let skill =
            self.skills.iter().find(|skill| skill.fields.get("name").and_then(Value::as_str) == Some(&candidate.name));
        match skill {
            None => Ok(None),
            Some(skill) => self.files(&skill.fields).map_err(ProviderError),
        }
    }
}

/// Reads a `resourceBase` value; `Err` names what is wrong with it.
pub fn resource_base(value: Option<&Value>) -> Result<Option<ResourceBase>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(value) => ResourceBaseJson::deserialize(value.clone()).map(Some).map_err(|_| {
            let kind = value.get("kind").map_or_else(|| "missing".to_owned(), Value::to_string);
            format!(
                "tool \"skill\" returned invalid output: resourceBase must be {{\"kind\":\"directory\",\"path\"}}, {{\"kind\":\"url\",\"url\"}} or {{\"kind\":\"opaque\",\"description\"}} (kind: {kind})"
            )
        }),
    }
}

impl SkillProvider for MemoryProvider {
    fn name(&self) -> &str {
        &self.name
    }

    fn list(&self, _cwd: Option<&Path>) -> Result<Listing, ProviderError> {
        if let Some(message) = &self.fail {
            return Err(ProviderError(message.clone()));
        }
        let candidates = self
            .skills
            .iter()
            .map(|skill| self.candidate(&skill.fields))
            .collect::<Result<_, _>>()
            .map_err(ProviderError)?;
        Ok(Listing { candidates, complete: self.complete, ..Listing::default() })
    }

    fn load(&self, _cwd: Option<&Path>, candidate: &SkillCandidate) -> Result<Option<SkillDefinition>, ProviderError> {
        let Some(skill) =
            self.skills.iter().find(|skill| skill.fields.get("name").and_then(Value::as_str) == Some(&candidate.name))
        else {
            return Ok(None);
        };
        let mut fields = skill.fields.clone();
        match &skill.loaded {
            LoadOutcome::AsListed => {}
            LoadOutcome::Missing => return Ok(None),
            LoadOutcome::Changed(changes) => fields.extend(changes.clone()),
        }
        let mut summary = self.candidate(&fields).map_err(ProviderError)?;
        summary.resource_base = resource_base(fields.get("resourceBase")).map_err(ProviderError)?;
        let content = fields.get("content").and_then(Value::as_str).unwrap_or_default().to_owned();
        Ok(Some(SkillDefinition { summary, content }))
    }

    fn list_files(
        &self,
        _cwd: Option<&Path>,
        candidate: &SkillCandidate,
        limit: usize,
    ) -> Result<Option<FileListing>, ProviderError> {
        Ok(self
            .files_of(candidate)?
            .map(|files| FileListing::first(files.into_iter().map(|(path, file)| (path, Some(file.size()))), limit)))
    }

    fn read_file(
        &self,
        _cwd: Option<&Path>,
        candidate: &SkillCandidate,
        path: &str,
    ) -> Result<FileRead, ProviderError> {
        let Some(files) = self.files_of(candidate)? else {
            return Ok(FileRead::Unavailable);
        };
        Ok(match files.into_iter().find(|(listed, _)| listed == path).map(|(_, file)| file) {
            None => FileRead::Missing,
            Some(MemoryFile::Text(text)) => FileRead::of_bytes(text.into_bytes()),
            Some(MemoryFile::Binary(size)) => FileRead::Binary(size),
            Some(MemoryFile::TooLarge(size)) => FileRead::TooLarge(size),
        })
    }
}

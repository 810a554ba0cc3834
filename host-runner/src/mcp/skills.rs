//! The Skills extension's view of the registry (SEP-2640, docs/spec.md
//! §6.9): each winning skill that lives in a folder on this machine, at
//! `skill://{name}/SKILL.md`, with its frontmatter verbatim and its files
//! with `sha256:` digests and sizes; and the reads of those files, confined
//! to the skill's own folder.
//!
//! A bundle (`<root>/<name>/SKILL.md`) serves every regular file below its
//! folder except hidden ones (a name starting with `.`); a symbolic link is
//! served only when it resolves beneath the folder (relative, never rising
//! above it: the kernel resolves it beneath the folder's handle) to a file
//! the walk serves as itself. A flat skill
//! file (`<root>/<name>.md`) has no folder of its own: it serves only
//! `SKILL.md`, its own text. Skills without a file here (remote, runtime)
//! are served by the tool and the prompts, not by the extension.
//!
//! The extension serves a skill only when every verifying client accepts
//! it: its `SKILL.md` meets the Agent Skills specification's MUST rules
//! ([`crate::lint`]'s client rules), and the model may invoke it (a host
//! reads skills over the extension to give them to its model; a skill with
//! `disable-model-invocation: true` is served as a prompt only).

use rmcp::model::{DIRECTORY_MIME_TYPE, Resource, Skill, SkillFrontmatter, SkillResource, SkillResources};
use serde_json::Value;
use skill_rules::{SKILL_FILE, SkillPatterns};

use crate::providers::frontmatter::frontmatter_json;
use crate::registry::{RegistrySnapshot, Winner, is_skill_name};

mod decisions;
pub use crate::providers::local::files::{
    Decision, MAX_SKILL_BYTES, MAX_SKILL_FILES, OpenedSkill, SETTLED, SkillFiles, SkillsError,
};
pub use decisions::Decisions;

/// Skills per `skills/list` page.
pub const SKILLS_PAGE_SIZE: usize = 100;

/// The URI scheme of skill files.
pub const SCHEME: &str = "skill://";

/// The URI of a skill's `SKILL.md`.
pub fn skill_uri(name: &str) -> String {
    format!("{SCHEME}{name}/{SKILL_FILE}")
}

/// A cursor of `skills/list`: the name of the first skill of the page.
pub fn page<'a>(
    snapshot: &'a RegistrySnapshot,
    cursor: Option<&str>,
    user_only: &SkillPatterns,
) -> Result<Page<'a>, String> {
    if let Some(cursor) = cursor
        && !is_skill_name(cursor)
    {
        return Err(format!("invalid cursor {cursor:?}: not one this server gave"));
    }
    let served: Vec<(&Winner, SkillFiles)> = snapshot
        .skills
        .iter()
        .filter_map(|winner| SkillFiles::served_by_extension(winner, user_only).map(|files| (winner, files)))
        .collect();
    let start =
        cursor.map_or(0, |cursor| served.partition_point(|(winner, _)| winner.candidate.name.as_str() < cursor));
    let end = (start + SKILLS_PAGE_SIZE).min(served.len());
    let next = served.get(end).map(|(winner, _)| winner.candidate.name.clone());
    Ok(Page { skills: served[start..end].to_vec(), next })
}

/// One page of served skills.
pub struct Page<'a> {
    /// The skills on it, with their files.
    pub skills: Vec<(&'a Winner, SkillFiles)>,
    /// The cursor of the next page.
    pub next: Option<String>,
}

/// The served skill named `name`.
pub fn served<'a>(
    snapshot: &'a RegistrySnapshot,
    name: &str,
    user_only: &SkillPatterns,
) -> Result<(&'a Winner, SkillFiles), SkillsError> {
    let winner = snapshot
        .skills
        .binary_search_by(|winner| winner.candidate.name.as_str().cmp(name))
        .ok()
        .map(|at| &snapshot.skills[at])
        .ok_or_else(|| SkillsError::Unknown(name.to_owned()))?;
    let files =
        SkillFiles::served_by_extension(winner, user_only).ok_or_else(|| SkillsError::Unknown(name.to_owned()))?;
    Ok((winner, files))
}

/// The extension's entry for a skill: its frontmatter, read from its file,
/// and every file it serves, digested, decided afresh (the server keeps each
/// decision: [`Decisions::manifest`]).
#[cfg(test)]
pub fn manifest(name: &str, files: &SkillFiles) -> Result<Skill, SkillsError> {
    manifest_of(name, files, &files.open(name)?)
}

/// [`manifest`] of `skill`, opened from `files`.
fn manifest_of(name: &str, files: &SkillFiles, skill: &OpenedSkill) -> Result<Skill, SkillsError> {
    let unreadable = |why: String| SkillsError::Unreadable { name: name.to_owned(), why };
    let mut resources = Vec::with_capacity(skill.files().len());
    let mut frontmatter = None;
    for (relative, _) in skill.files() {
        let uri = resource_uri(name, relative);
        let bytes = skill.read(&uri, relative)?;
        if relative == SKILL_FILE {
            let text =
                std::str::from_utf8(&bytes).map_err(|_| unreadable(format!("{SKILL_FILE} is not UTF-8 text")))?;
            files.check_client_rules(name, text)?;
            frontmatter = Some(frontmatter_of(text).map_err(&unreadable)?);
        }
        resources.push(SkillResource::new(uri, digest(&bytes), bytes.len() as u64));
    }
    let frontmatter = frontmatter.ok_or_else(|| unreadable(format!("no {SKILL_FILE}")))?;
    Ok(Skill::new(skill_uri(name), frontmatter, SkillResources::Files(resources)))
}

fn frontmatter_of(text: &str) -> Result<SkillFrontmatter, String> {
    let mut fields = frontmatter_json(text)?;
    let string = |value: Option<Value>| match value {
        Some(Value::String(text)) => Some(text),
        _ => None,
    };
    let name = string(fields.remove("name")).ok_or("frontmatter has no `name` string")?;
    let description = string(fields.remove("description")).ok_or("frontmatter has no `description` string")?;
    let mut frontmatter = SkillFrontmatter::new(name, description);
    frontmatter.extra = fields;
    Ok(frontmatter)
}

pub use crate::registry::file_digest as digest;

/// The URI of a skill's file: each path segment percent-encoded.
pub fn resource_uri(name: &str, relative: &str) -> String {
    let encoded: Vec<String> = relative.split('/').map(encode_segment).collect();
    format!("{SCHEME}{name}/{}", encoded.join("/"))
}

fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// A `skill://` URI split into the skill's name and the file's relative
/// path (decoded, `/`-separated), refusing what could leave the folder.
pub fn parse_uri(uri: &str) -> Result<(String, String), SkillsError> {
    let bad = |why: &str| SkillsError::BadUri { uri: uri.to_owned(), why: why.to_owned() };
    let rest = uri.strip_prefix(SCHEME).ok_or_else(|| bad("it must start with skill://"))?;
    if rest.contains(['?', '#']) {
        return Err(bad("a query or fragment is not allowed"));
    }
    let (name, path) = rest.split_once('/').ok_or_else(|| bad("it names no file"))?;
    if !is_skill_name(name) {
        return Err(bad("the skill name does not match ^[a-z0-9]+(?:-[a-z0-9]+)*$"));
    }
    let mut segments = Vec::new();
    for raw in path.split('/') {
        let segment = decode_segment(raw).ok_or_else(|| bad("a path segment is not valid percent-encoded UTF-8"))?;
        match segment.as_str() {
            "" => return Err(bad("an empty path segment is not allowed")),
            "." | ".." => return Err(bad("`.` and `..` segments are not allowed")),
            _ if segment.contains(['/', '\\', '\0']) => {
                return Err(bad("a path segment may not hold `/`, `\\` or NUL"));
            }
            _ if segment.starts_with('.') => return Err(bad("hidden files are not served")),
            _ => segments.push(segment),
        }
    }
    Ok((name.to_owned(), segments.join("/")))
}

fn decode_segment(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = raw.get(at + 1..at + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A file read for `resources/read`: its bytes and MIME type.
#[derive(Debug)]
pub struct ReadFile {
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// `text/markdown` for `.md`, else `text/plain` for UTF-8 text, else
    /// `application/octet-stream`.
    pub mime_type: &'static str,
    /// Whether the bytes are UTF-8 text without NUL (served as text).
    pub text: bool,
}

/// Reads the file `relative` of a skill: one it serves ([`SkillFiles::open`],
/// the decision every method applies), opened beneath its folder.
pub fn read(
    uri: &str,
    name: &str,
    relative: &str,
    files: &SkillFiles,
    decisions: &Decisions,
) -> Result<ReadFile, SkillsError> {
    let (skill, skill_file) = decisions.open(name, files)?;
    let bytes = match skill_file {
        Some(bytes) if relative == SKILL_FILE => bytes,
        _ => skill.read(uri, relative)?,
    };
    let text = !bytes.contains(&0) && std::str::from_utf8(&bytes).is_ok();
    let mime_type = match (text, relative.ends_with(".md")) {
        (true, true) => "text/markdown",
        (true, false) => "text/plain",
        (false, _) => "application/octet-stream",
    };
    Ok(ReadFile { bytes, mime_type, text })
}

/// A directory URI of the extension (`resources/directory/read`): the
/// skill's name and the folder's relative path (`""` for the skill's own
/// folder, `skill://{name}`; a trailing `/` is allowed).
pub fn parse_directory_uri(uri: &str) -> Result<(String, String), SkillsError> {
    let trimmed = uri.strip_suffix('/').unwrap_or(uri);
    match trimmed.strip_prefix(SCHEME) {
        Some(name) if !name.contains('/') => {
            if is_skill_name(name) {
                Ok((name.to_owned(), String::new()))
            } else {
                Err(SkillsError::BadUri {
                    uri: uri.to_owned(),
                    why: "the skill name does not match ^[a-z0-9]+(?:-[a-z0-9]+)*$".to_owned(),
                })
            }
        }
        _ => parse_uri(trimmed),
    }
}

/// The direct children of the folder `relative` (`""`: the skill's own) of
/// a served skill, for `resources/directory/read`: each sub-folder that
/// holds a served file, as `inode/directory`, and each served file with its
/// size. A folder that holds no served file is not a directory here.
pub fn directory(uri: &str, name: &str, relative: &str, files: &SkillFiles) -> Result<Vec<Resource>, SkillsError> {
    let skill = files.open(name)?;
    let skill_file = skill.read(&skill_uri(name), SKILL_FILE)?;
    files.check_client_rules(name, &String::from_utf8_lossy(&skill_file))?;
    let prefix = if relative.is_empty() { String::new() } else { format!("{relative}/") };
    let mut children: Vec<Resource> = Vec::new();
    for (path, size) in skill.files() {
        let Some(rest) = path.strip_prefix(&prefix) else { continue };
        match rest.split_once('/') {
            Some((folder, _)) => {
                let child = resource_uri(name, &format!("{prefix}{folder}"));
                if children.last().is_none_or(|last| last.uri != child) {
                    children.push(Resource::new(child, folder.to_owned()).with_mime_type(DIRECTORY_MIME_TYPE));
                }
            }
            None => children.push(Resource::new(resource_uri(name, path), rest.to_owned()).with_size(*size)),
        }
    }
    if children.is_empty() {
        return Err(SkillsError::NotADirectory { uri: uri.to_owned() });
    }
    Ok(children)
}

#[cfg(test)]
mod swaps;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_that_could_leave_the_folder_are_refused() {
        assert_eq!(parse_uri("skill://a/SKILL.md").unwrap(), ("a".into(), "SKILL.md".into()));
        assert_eq!(parse_uri("skill://a/docs/my%20file.md").unwrap(), ("a".into(), "docs/my file.md".into()));
        for (uri, why) in [
            ("skill://a/../b/SKILL.md", "`.` and `..` segments are not allowed"),
            ("skill://a/%2e%2e/x", "`.` and `..` segments are not allowed"),
            ("skill://a/x%2fy", "a path segment may not hold `/`, `\\` or NUL"),
            ("skill://a//x", "an empty path segment is not allowed"),
            ("skill://a/.env", "hidden files are not served"),
            ("skill://A/SKILL.md", "the skill name does not match ^[a-z0-9]+(?:-[a-z0-9]+)*$"),
            ("file:///etc/passwd", "it must start with skill://"),
            ("skill://a/x?y", "a query or fragment is not allowed"),
            ("skill://a/%zz", "a path segment is not valid percent-encoded UTF-8"),
        ] {
            assert_eq!(parse_uri(uri), Err(SkillsError::BadUri { uri: uri.into(), why: why.into() }), "{uri}");
        }
    }

    #[test]
    fn segments_are_percent_encoded_and_decode_back() {
        let uri = resource_uri("a", "docs/my file#1.md");
        assert_eq!(uri, "skill://a/docs/my%20file%231.md");
        assert_eq!(parse_uri(&uri).unwrap().1, "docs/my file#1.md");
    }

    #[test]
    fn limit_texts_say_which_limit() {
        assert_eq!(
            SkillsError::TooManyFiles { name: "big".into() }.to_string(),
            "skill \"big\" has more than 512 files; the Skills extension allows at most 512 per skill"
        );
        assert_eq!(
            SkillsError::TooLarge { name: "big".into(), bytes: 16_777_217 }.to_string(),
            "skill \"big\" has 16777217 bytes of files; the Skills extension allows at most 16 MiB (16777216 bytes) per skill"
        );
    }
}

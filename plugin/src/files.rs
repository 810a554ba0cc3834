//! A skill's files (`skillReads` and `skillResourceManifest`, docs/spec.md
//! §3.15): the tool's `path` argument, the result of a file read, and the
//! manifest a whole load ends with. The registry reads the files, confined
//! to the skill; the plugin never names a directory.

use serde_json::{Map, Value};
use skill_rules::{MAX_SKILL_FILE_READ_BYTES, is_skill_file_path};

use crate::escape;
use crate::tool::ToolError;
use crate::types::{FileAnswer, Registry, RegistryError, SkillFiles, SkillSummary};

/// The most files a missing file's error lists; the rest are counted.
pub const MAX_LISTED_FILES: usize = 32;

/// The manifest's first line with `skillReads`, after the count.
pub const MANIFEST_READS_HEAD: &str =
    "each read by calling the `skill` tool with this `name` and the file's path as `path`:";

/// The manifest's first line without `skillReads`, after the count.
pub const MANIFEST_HEAD: &str = "by their paths inside it:";

/// A file the `path` argument read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileResult {
    /// The skill's name.
    pub name: String,
    /// The provider that served it.
    pub provider: String,
    /// The file's path inside the skill.
    pub path: String,
    /// Its text, cut as a body is.
    pub content: String,
}

/// The `path` argument among the call's fields, when given: a string that
/// names a file inside a skill.
pub fn path_argument(fields: &mut Map<String, Value>) -> Result<Option<String>, ToolError> {
    let invalid = |violation: String| Err(ToolError::InvalidArguments(violation));
    match fields.remove("path") {
        None => Ok(None),
        Some(Value::String(path)) if is_skill_file_path(&path) => Ok(Some(path)),
        Some(Value::String(path)) => invalid(format!(
            "\"path\" {} is not a path inside a skill: it must be relative and /-separated, with no empty, \".\", \"..\" or hidden segment",
            quoted(&path)
        )),
        Some(_) => invalid("\"path\" must be a string".to_owned()),
    }
}

/// Reads the file `path` of the skill `summary` lists (the model may invoke
/// it), cut to `max` characters when set.
pub fn read(
    registry: &impl Registry,
    summary: &SkillSummary,
    path: String,
    max: Option<usize>,
) -> Result<FileResult, ToolError> {
    let name = &summary.name;
    let text = match registry.read_file(name, &path)? {
        FileAnswer::Text(text) => text,
        FileAnswer::Binary(size) => {
            return Err(ToolError::File(format!(
                "file {} of skill \"{name}\" is not text ({}, {size} bytes), so it is not read",
                quoted(&path),
                media_type(&path)
            )));
        }
        FileAnswer::TooLarge(size) => {
            return Err(ToolError::File(format!(
                "file {} of skill \"{name}\" is {size} bytes, over the {MAX_SKILL_FILE_READ_BYTES} bytes one read returns",
                quoted(&path)
            )));
        }
        FileAnswer::Missing => {
            let known = match registry.list_files(name, MAX_LISTED_FILES as u32)? {
                Some(files) if files.total == 0 => "; it has no files besides its instructions".to_owned(),
                Some(files) => format!("; its files are {}", listed(&files)),
                None => String::new(),
            };
            return Err(ToolError::File(format!("skill \"{name}\" has no file {}{known}", quoted(&path))));
        }
        FileAnswer::Unavailable => {
            return Err(ToolError::File(format!(
                "skill \"{name}\" has no files to read: provider \"{}\" serves only its instructions",
                escape::text(&summary.provider)
            )));
        }
    };
    let content = match max.and_then(|max| cut(&text, max)) {
        Some(cut) => cut,
        None => text,
    };
    Ok(FileResult { name: summary.name.clone(), provider: summary.provider.clone(), path, content })
}

/// A file's text over `max` characters, cut as a body is
/// ([`crate::tool::cut_with_line`]) and followed by a line saying how much
/// was left out; `None` when it fits.
fn cut(text: &str, max: usize) -> Option<String> {
    let line = |omitted| format!("[{omitted} more characters of this file were left out.]");
    crate::tool::cut_with_line(text, max, line).map(|(cut, _)| cut)
}

/// The manifest a whole load of a skill with files ends with: how many
/// files it has, the first `limit` with their sizes, and how to read one;
/// `None` when its provider lists none, or its listing fails (the load
/// stands without it: a skill too large to list is still loaded).
pub fn manifest(registry: &impl Registry, name: &str, limit: u32, reads: bool) -> Result<Option<String>, ToolError> {
    let listed = match registry.list_files(name, limit) {
        Ok(listed) => listed,
        Err(RegistryError::Aborted) => return Err(ToolError::Aborted),
        Err(RegistryError::Failed(_)) => None,
    };
    let Some(SkillFiles { files, total }) = listed else {
        return Ok(None);
    };
    // A host lists only paths inside the skill; one that lists another is not shown it.
    let shown: Vec<_> = files.iter().take(limit as usize).filter(|file| is_skill_file_path(&file.path)).collect();
    if total == 0 || shown.is_empty() {
        return Ok(None);
    }
    let head = if reads { MANIFEST_READS_HEAD } else { MANIFEST_HEAD };
    let mut lines = vec![format!("Files of this skill ({total}), {head}")];
    for file in &shown {
        lines.push(match file.size {
            Some(size) => format!("- {} ({size} bytes)", file.path),
            None => format!("- {}", file.path),
        });
    }
    let more = total.saturating_sub(shown.len() as u64);
    if more > 0 {
        lines.push(format!("- and {more} more"));
    }
    Ok(Some(lines.join("\n")))
}

/// `content` followed by the manifest, one blank line between.
pub fn with_manifest(content: String, manifest: &str) -> String {
    let separator = if content.ends_with('\n') { "\n" } else { "\n\n" };
    [content.as_str(), separator, manifest].concat()
}

/// The files listed, JSON-quoted, then how many more there are.
fn listed(files: &SkillFiles) -> String {
    let mut names: Vec<String> = files.files.iter().take(MAX_LISTED_FILES).map(|file| quoted(&file.path)).collect();
    let more = files.total.saturating_sub(names.len() as u64);
    if more > 0 {
        names.push(format!("and {more} more"));
    }
    names.join(", ")
}

fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

/// The media type a file that is not text is named by, from its extension
/// (in any case); `application/octet-stream` for any other.
pub fn media_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, extension)| extension.to_ascii_lowercase());
    match extension.as_deref() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("ico") => "image/vnd.microsoft.icon",
        Some("pdf") => "application/pdf",
        Some("zip") => "application/zip",
        Some("gz") => "application/gzip",
        Some("tar") => "application/x-tar",
        Some("wasm") => "application/wasm",
        Some("docx") => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        Some("xlsx") => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        Some("pptx") => "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        Some("woff") => "font/woff",
        Some("woff2") => "font/woff2",
        Some("ttf") => "font/ttf",
        Some("otf") => "font/otf",
        Some("mp3") => "audio/mpeg",
        Some("wav") => "audio/wav",
        Some("mp4") => "video/mp4",
        _ => "application/octet-stream",
    }
}

/// Renders a file read as the text the model sees (docs/spec.md §3.15): the
/// content verbatim, never escaped, inside a `skill_file` element.
pub fn render(result: &FileResult) -> String {
    format!(
        "<skill_file name=\"{}\" path=\"{}\">\n{}\n</skill_file>",
        escape::attr(&result.name),
        escape::attr(&result.path),
        result.content
    )
}

#[cfg(test)]
mod tests;

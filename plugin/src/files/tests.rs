use std::cell::RefCell;

use crate::config::Config;
use crate::tool::{ToolReturn, invoke_with};
use crate::types::{
    FileAnswer, InvocationPolicy, LoadedSkill, Registry, RegistryError, SkillDefinition, SkillFile, SkillFiles,
    SkillSummary, SnapshotAnswer,
};

/// One skill, `deploy`, with files; every registry call is logged.
struct Files {
    files: Option<Vec<(&'static str, FileAnswer)>>,
    calls: RefCell<Vec<String>>,
}

impl Files {
    fn new(files: Option<Vec<(&'static str, FileAnswer)>>) -> Self {
        Self { files, calls: RefCell::new(Vec::new()) }
    }
}

fn summary() -> SkillSummary {
    SkillSummary {
        name: "deploy".to_owned(),
        description: "Deploys.".to_owned(),
        when_to_use: None,
        invocation: InvocationPolicy { model_invocable: true, user_invocable: true },
        provider: "local".to_owned(),
        source: "project".to_owned(),
        path: Some("/p/deploy/SKILL.md".to_owned()),
        body_digest: Some("sha256:ab".to_owned()),
    }
}

impl Registry for Files {
    fn snapshot(&self, _known: Option<u64>) -> Result<SnapshotAnswer, RegistryError> {
        unreachable!("the tool never takes snapshots")
    }
    fn list(&self, name: Option<&str>) -> Result<Vec<SkillSummary>, RegistryError> {
        self.calls.borrow_mut().push(format!("list {name:?}"));
        Ok(vec![summary()].into_iter().filter(|skill| name.is_none_or(|name| name == skill.name)).collect())
    }
    fn get(&self, name: &str) -> Result<Option<SkillDefinition>, RegistryError> {
        self.calls.borrow_mut().push(format!("get {name}"));
        Ok((name == "deploy").then(|| SkillDefinition {
            name: "deploy".to_owned(),
            description: "Deploys.".to_owned(),
            invocation: InvocationPolicy { model_invocable: true, user_invocable: true },
            provider: "local".to_owned(),
            resource_base: None,
            path: None,
            content: "Body.".to_owned(),
            body_digest: Some("sha256:ab".to_owned()),
        }))
    }
    fn list_files(&self, name: &str, limit: u32) -> Result<Option<SkillFiles>, RegistryError> {
        self.calls.borrow_mut().push(format!("list-files {name} {limit}"));
        Ok(self.files.as_ref().map(|files| SkillFiles {
            files: files
                .iter()
                .take(limit as usize)
                .map(|(path, answer)| SkillFile {
                    path: (*path).to_owned(),
                    size: match answer {
                        FileAnswer::Text(text) => Some(text.len() as u64),
                        FileAnswer::Binary(size) | FileAnswer::TooLarge(size) => Some(*size),
                        _ => None,
                    },
                })
                .collect(),
            total: files.len() as u64,
        }))
    }
    fn read_file(&self, name: &str, path: &str) -> Result<FileAnswer, RegistryError> {
        self.calls.borrow_mut().push(format!("read-file {name} {path}"));
        Ok(match &self.files {
            None => FileAnswer::Unavailable,
            Some(files) => {
                files.iter().find(|(listed, _)| *listed == path).map_or(FileAnswer::Missing, |f| f.1.clone())
            }
        })
    }
}

fn reads() -> Config {
    Config { skill_reads: true, ..Config::default() }
}

fn files() -> Files {
    Files::new(Some(vec![
        ("logo.png", FileAnswer::Binary(2048)),
        ("references/api.md", FileAnswer::Text("# API\nCall it.\n".to_owned())),
        ("data/big.csv", FileAnswer::TooLarge(2_000_000)),
    ]))
}

fn error(config: &Config, registry: &impl Registry, arguments: &str) -> String {
    invoke_with(config, registry, arguments).unwrap_err().model_text()
}

#[test]
fn a_path_reads_that_file_only_and_records_the_skill_as_loaded() {
    let registry = files();
    let config = Config { loaded_skills: true, ..reads() };
    let ToolReturn::File(file, loaded) =
        invoke_with(&config, &registry, r#"{"name":"deploy","path":"references/api.md"}"#).unwrap()
    else {
        panic!("a file")
    };
    assert_eq!(
        super::render(&file),
        "<skill_file name=\"deploy\" path=\"references/api.md\">\n# API\nCall it.\n\n</skill_file>"
    );
    assert_eq!(
        loaded,
        Some(LoadedSkill {
            name: "deploy".to_owned(),
            provider: "local".to_owned(),
            body_digest: Some("sha256:ab".to_owned())
        })
    );
    // Listed, then read: the body is never loaded.
    assert_eq!(*registry.calls.borrow(), ["list Some(\"deploy\")", "read-file deploy references/api.md"]);
}

#[test]
fn a_file_over_the_body_cap_is_cut_at_a_line_with_a_note() {
    let text = format!("{}\n{}", "a".repeat(900), "b".repeat(300));
    let registry = Files::new(Some(vec![("notes.txt", FileAnswer::Text(text))]));
    let config = Config { skill_body_max_length: Some(1000), ..reads() };
    let ToolReturn::File(file, _) = invoke_with(&config, &registry, r#"{"name":"deploy","path":"notes.txt"}"#).unwrap()
    else {
        panic!("a file")
    };
    assert_eq!(file.content, format!("{}\n[300 more characters of this file were left out.]", "a".repeat(900)));
}

#[test]
fn what_a_read_cannot_return_is_said_with_the_files_there_are() {
    let registry = files();
    assert_eq!(
        error(&reads(), &registry, r#"{"name":"deploy","path":"logo.png"}"#),
        "Error: file \"logo.png\" of skill \"deploy\" is not text (image/png, 2048 bytes), so it is not read"
    );
    assert_eq!(
        error(&reads(), &registry, r#"{"name":"deploy","path":"data/big.csv"}"#),
        "Error: file \"data/big.csv\" of skill \"deploy\" is 2000000 bytes, over the 1048576 bytes one read returns"
    );
    assert_eq!(
        error(&reads(), &registry, r#"{"name":"deploy","path":"references/API.md"}"#),
        "Error: skill \"deploy\" has no file \"references/API.md\"; its files are \"logo.png\", \"references/api.md\", \"data/big.csv\""
    );
    assert_eq!(
        error(&reads(), &Files::new(Some(Vec::new())), r#"{"name":"deploy","path":"a.md"}"#),
        "Error: skill \"deploy\" has no file \"a.md\"; it has no files besides its instructions"
    );
    assert_eq!(
        error(&reads(), &Files::new(None), r#"{"name":"deploy","path":"a.md"}"#),
        "Error: skill \"deploy\" has no files to read: provider \"local\" serves only its instructions"
    );
}

#[test]
fn a_path_is_checked_before_the_registry_is_asked() {
    let registry = files();
    for (path, expected) in [
        (
            "\"../x\"",
            "\"path\" \"../x\" is not a path inside a skill: it must be relative and /-separated, with no empty, \".\", \"..\" or hidden segment",
        ),
        (
            "\"/etc/passwd\"",
            "\"path\" \"/etc/passwd\" is not a path inside a skill: it must be relative and /-separated, with no empty, \".\", \"..\" or hidden segment",
        ),
        ("3", "\"path\" must be a string"),
    ] {
        assert_eq!(
            error(&reads(), &registry, &format!(r#"{{"name":"deploy","path":{path}}}"#)),
            format!("Error: invalid arguments: {expected}")
        );
    }
    assert_eq!(
        error(&reads(), &registry, r#"{"name":"deploy","path":"a.md","section":"A"}"#),
        "Error: invalid arguments: give \"section\" or \"path\", not both"
    );
    let search = Config { skill_search: true, ..reads() };
    assert_eq!(
        error(&search, &registry, r#"{"query":"deploy","path":"a.md"}"#),
        "Error: invalid arguments: \"path\" goes with \"name\", not \"query\""
    );
    assert!(registry.calls.borrow().is_empty());
    // Without `skillReads` the argument is not read at all.
    assert!(matches!(
        invoke_with(&Config::default(), &registry, r#"{"name":"deploy","path":"../x"}"#),
        Ok(ToolReturn::Skill(..))
    ));
}

#[test]
fn a_whole_load_ends_with_the_manifest_when_configured() {
    let registry = files();
    let load = |config: &Config| match invoke_with(config, &registry, r#"{"name":"deploy"}"#).unwrap() {
        ToolReturn::Skill(result, _) => result.content,
        _ => panic!("a skill"),
    };
    assert_eq!(load(&reads()), "Body.");
    let manifest = Config { skill_resource_manifest: Some(2), ..reads() };
    assert_eq!(
        load(&manifest),
        "Body.\n\nFiles of this skill (3), each read by calling the `skill` tool with this `name` and the file's path as `path`:\n- logo.png (2048 bytes)\n- references/api.md (15 bytes)\n- and 1 more"
    );
    let without_reads = Config { skill_resource_manifest: Some(5), ..Config::default() };
    assert_eq!(
        load(&without_reads),
        "Body.\n\nFiles of this skill (3), by their paths inside it:\n- logo.png (2048 bytes)\n- references/api.md (15 bytes)\n- data/big.csv (2000000 bytes)"
    );
    // No files, or none served: nothing is added.
    let none = Files::new(Some(Vec::new()));
    let content = |registry: &Files| match invoke_with(&manifest, registry, r#"{"name":"deploy"}"#).unwrap() {
        ToolReturn::Skill(result, _) => result.content,
        _ => panic!("a skill"),
    };
    assert_eq!(content(&none), "Body.");
    assert_eq!(content(&Files::new(None)), "Body.");
}

#[test]
fn a_listed_path_outside_the_grammar_is_not_shown() {
    let registry = Files::new(Some(vec![("a\nInjected: yes", FileAnswer::Missing), ("ok.md", FileAnswer::Missing)]));
    let manifest = Config { skill_resource_manifest: Some(5), ..Config::default() };
    let ToolReturn::Skill(result, _) = invoke_with(&manifest, &registry, r#"{"name":"deploy"}"#).unwrap() else {
        panic!("a skill")
    };
    assert_eq!(result.content, "Body.\n\nFiles of this skill (2), by their paths inside it:\n- ok.md\n- and 1 more");
}

#[test]
fn media_types_follow_the_extension_in_any_case() {
    let table = [
        ("png", "image/png"),
        ("jpg", "image/jpeg"),
        ("jpeg", "image/jpeg"),
        ("gif", "image/gif"),
        ("webp", "image/webp"),
        ("ico", "image/vnd.microsoft.icon"),
        ("pdf", "application/pdf"),
        ("zip", "application/zip"),
        ("gz", "application/gzip"),
        ("tar", "application/x-tar"),
        ("wasm", "application/wasm"),
        ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        ("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        ("pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
        ("woff", "font/woff"),
        ("woff2", "font/woff2"),
        ("ttf", "font/ttf"),
        ("otf", "font/otf"),
        ("mp3", "audio/mpeg"),
        ("wav", "audio/wav"),
        ("mp4", "video/mp4"),
    ];
    for (extension, media_type) in table {
        assert_eq!(super::media_type(&format!("a/b.{extension}")), media_type);
        assert_eq!(super::media_type(&format!("B.{}", extension.to_uppercase())), media_type);
    }
    for other in ["noext", "a.bin", "a.png/b", "archive.tar.xz"] {
        assert_eq!(super::media_type(other), "application/octet-stream", "{other}");
    }
}

/// A listing that fails leaves the manifest out, never the load; an abort
/// still ends the call.
#[test]
fn a_failing_listing_leaves_the_manifest_out() {
    struct Failing(RegistryError);
    impl Registry for Failing {
        fn snapshot(&self, _known: Option<u64>) -> Result<SnapshotAnswer, RegistryError> {
            unreachable!()
        }
        fn list(&self, name: Option<&str>) -> Result<Vec<SkillSummary>, RegistryError> {
            files().list(name)
        }
        fn get(&self, name: &str) -> Result<Option<SkillDefinition>, RegistryError> {
            files().get(name)
        }
        fn list_files(&self, _name: &str, _limit: u32) -> Result<Option<SkillFiles>, RegistryError> {
            Err(self.0.clone())
        }
    }
    let manifest = Config { skill_resource_manifest: Some(5), ..reads() };
    let failing = Failing(RegistryError::Failed("skill \"deploy\" has more than 512 files".to_owned()));
    match invoke_with(&manifest, &failing, r#"{"name":"deploy"}"#).unwrap() {
        ToolReturn::Skill(result, _) => assert_eq!(result.content, "Body."),
        _ => panic!("a skill"),
    }
    let aborted = Failing(RegistryError::Aborted);
    assert_eq!(error(&manifest, &aborted, r#"{"name":"deploy"}"#), "Error: the operation was aborted");
}

#[test]
fn the_manifest_size_is_an_integer_from_1_to_1000() {
    for good in ["1", "1000", "20.0"] {
        let config = Config::parse(&format!(r#"{{"skillResourceManifest":{good}}}"#)).unwrap();
        assert!(config.skill_resource_manifest.is_some(), "{good}");
    }
    assert_eq!(Config::parse(r#"{"skillResourceManifest":null}"#).unwrap().skill_resource_manifest, None);
    for bad in ["0", "1001", "-1", "2.5", "\"10\"", "true"] {
        assert_eq!(
            Config::parse(&format!(r#"{{"skillResourceManifest":{bad}}}"#)).unwrap_err(),
            crate::config::MANIFEST_ERROR,
            "{bad}"
        );
    }
    assert_eq!(crate::config::MANIFEST_ERROR, "tool-skill: skillResourceManifest must be an integer from 1 to 1000");
}

//! A skill's files through the `skill` tool (`skillReads`' `path`,
//! `skillResourceManifest`, docs/spec.md §3.15): read from local folders,
//! confined as the Skills extension's reads are; from remote indexes,
//! digest-checked; and through the MCP `skill` tool, as the official client
//! sees it.

use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::{Value, json};
use skill_host::test_support::http::{Reply, Server, body};

use crate::common::{Sandbox, path, skill_host_bin, stderr, stdout};

/// The `unlisted` skill's file on the test server.
const UNLISTED: &str = "---\nname: unlisted\ndescription: Lists none.\n---\nBody.\n";

/// The `listed` skill's file on the test server.
const LISTED: &str = "---\nname: listed\ndescription: Lists its files.\n---\nBody.\n";

const READS: &str = r#"{"skillReads": true, "skillResourceManifest": 10}"#;

/// `skill-host load NAME --path P --json` under [`READS`]: the record and the exit code.
fn read(sandbox: &Sandbox, workspace: &Path, extra: &[&str], name: &str, file: &str) -> (Value, Option<i32>) {
    let config = sandbox.path().join("reads.json");
    std::fs::write(&config, READS).unwrap();
    let mut args = vec!["--config", path(&config)];
    args.extend_from_slice(extra);
    args.extend(["load", name, "--path", file, "--json", "--cwd", path(workspace)]);
    let output = sandbox.run(&args);
    let record = serde_json::from_str(&stdout(&output)).unwrap_or_else(|_| panic!("{}", stderr(&output)));
    (record, output.status.code())
}

#[test]
fn a_local_skills_files_are_read_only_beneath_its_folder() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let skill = workspace.join(".agents/skills/release-notes");
    std::fs::write(sandbox.path().join("secret.txt"), "not for the model").unwrap();
    symlink(sandbox.path().join("secret.txt"), skill.join("leak.md")).unwrap();
    symlink("../review-pr/SKILL.md", skill.join("sibling.md")).unwrap();
    std::fs::create_dir_all(skill.join(".hidden")).unwrap();
    std::fs::write(skill.join(".hidden/key.md"), "hidden").unwrap();
    std::fs::write(skill.join("logo.png"), [0x89, b'P', b'N', b'G', 0, 1]).unwrap();
    std::fs::write(skill.join("big.txt"), "x".repeat(1024 * 1024 + 1)).unwrap();
    let style = std::fs::read_to_string(skill.join("references/style.md")).unwrap();

    let (record, code) = read(&sandbox, &workspace, &[], "release-notes", "references/style.md");
    assert_eq!(code, Some(0));
    assert_eq!(
        record["ok"],
        json!({"name": "release-notes", "provider": "local", "path": "references/style.md", "content": style})
    );
    assert_eq!(
        record["text"],
        format!("<skill_file name=\"release-notes\" path=\"references/style.md\">\n{style}\n</skill_file>")
    );
    let files = "\"big.txt\", \"logo.png\", \"references/style.md\"";
    for (file, error) in [
        ("leak.md", format!("Error: skill \"release-notes\" has no file \"leak.md\"; its files are {files}")),
        ("sibling.md", format!("Error: skill \"release-notes\" has no file \"sibling.md\"; its files are {files}")),
        (
            ".hidden/key.md",
            "Error: invalid arguments: \"path\" \".hidden/key.md\" is not a path inside a skill: it must be relative and /-separated, with no empty, \".\", \"..\" or hidden segment".to_owned(),
        ),
        (
            "logo.png",
            "Error: file \"logo.png\" of skill \"release-notes\" is not text (image/png, 6 bytes), so it is not read".to_owned(),
        ),
        (
            "big.txt",
            "Error: file \"big.txt\" of skill \"release-notes\" is 1048577 bytes, over the 1048576 bytes one read returns".to_owned(),
        ),
    ] {
        let (record, code) = read(&sandbox, &workspace, &[], "release-notes", file);
        assert_eq!((record, code), (json!({"error": error}), Some(1)), "{file}");
    }
    // A flat skill file has no folder: it has no other files.
    let (record, _) = read(&sandbox, &workspace, &[], "commit-message", "notes.md");
    assert_eq!(
        record,
        json!({"error": "Error: skill \"commit-message\" has no file \"notes.md\"; it has no files besides its instructions"})
    );
    // The whole load ends with the manifest: the files a read may reach.
    let config = sandbox.path().join("reads.json");
    let output =
        sandbox.run(&["--config", path(&config), "load", "release-notes", "--json", "--cwd", path(&workspace)]);
    let record: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let manifest = format!(
        "\n\nFiles of this skill (3), each read by calling the `skill` tool with this `name` and the file's path as `path`:\n- big.txt (1048577 bytes)\n- logo.png (6 bytes)\n- references/style.md ({} bytes)",
        style.len()
    );
    assert!(record["ok"]["content"].as_str().unwrap().ends_with(&manifest), "{record}");
}

#[test]
fn a_remote_skills_files_are_fetched_beside_it_and_checked_against_the_index() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.path().join("empty");
    std::fs::create_dir_all(&workspace).unwrap();
    let api = "# API\nCall it.\n";
    let digest = skill_host::file_digest(api.as_bytes());
    let index = json!({"skills": [
        {"name": "listed", "description": "Lists its files.", "url": "skills/listed/SKILL.md",
         "files": [{"path": "references/api.md", "digest": digest, "size": api.len()},
                   {"path": "references/tampered.md", "digest": digest},
                   {"path": "image.bin"}, {"path": "notes v1.md"}, {"path": "moved.md"}]},
        {"name": "unlisted", "description": "Lists none.", "url": "skills/unlisted/SKILL.md"},
        {"name": "unlisted-twin", "description": "Same file, with a list.", "url": "skills/unlisted/SKILL.md",
         "files": [{"path": "leak.md"}]},
        {"name": "signed", "description": "Signed.", "url": "skills/signed/SKILL.md",
         "digest": skill_host::file_digest(b"the original"), "files": [{"path": "a.md"}]},
    ]});
    let server = Server::start(&[
        ("/index.json", body(&index.to_string())),
        ("/skills/listed/SKILL.md", body(LISTED)),
        ("/skills/signed/SKILL.md", body("---\nname: signed\ndescription: Tampered.\n---\nTampered.\n")),
        ("/skills/listed/references/api.md", body(api)),
        ("/skills/listed/references/tampered.md", body("# API\nCall something else.\n")),
        ("/skills/listed/references/extra.md", body("not in the index")),
        ("/skills/unlisted/SKILL.md", body(UNLISTED)),
        ("/skills/unlisted/leak.md", body("another entry's file")),
        ("/skills/listed/moved.md", Reply::Redirect("/secret.txt".to_owned())),
        ("/secret.txt", body("not beneath the folder")),
        ("/skills/unlisted/notes.md", body("Notes.\n")),
        ("/skills/listed/image.bin", Reply::Body(vec![0, 159, 146, 150])),
        ("/skills/listed/notes%20v1.md", body("Notes.\n")),
    ]);
    let remote = ["--remote", &server.url("/index.json")];
    let (record, _) = read(&sandbox, &workspace, &remote, "listed", "references/api.md");
    assert_eq!(record["ok"]["content"], api, "{record}");
    let tampered = format!(
        "Error: skill \"listed\": the file at {} has digest {}, but the index says {digest}; it is not read",
        server.url("/skills/listed/references/tampered.md"),
        skill_host::file_digest(b"# API\nCall something else.\n"),
    );
    assert_eq!(read(&sandbox, &workspace, &remote, "listed", "references/tampered.md").0, json!({"error": tampered}));
    // Listed files are all a read reaches of a skill whose entry lists them.
    assert_eq!(
        read(&sandbox, &workspace, &remote, "listed", "references/extra.md").0,
        json!({"error": "Error: skill \"listed\" has no file \"references/extra.md\"; its files are \"image.bin\", \"moved.md\", \"notes v1.md\", \"references/api.md\", \"references/tampered.md\""})
    );
    assert!(!server.requests().iter().any(|request| request.contains("extra.md")), "{:?}", server.requests());
    // Path segments are encoded onto the folder URL; a file that is not text is not read.
    assert_eq!(read(&sandbox, &workspace, &remote, "listed", "notes v1.md").0["ok"]["content"], "Notes.\n");
    assert_eq!(
        read(&sandbox, &workspace, &remote, "listed", "image.bin").0,
        json!({"error": "Error: file \"image.bin\" of skill \"listed\" is not text (application/octet-stream, 4 bytes), so it is not read"})
    );
    // Its SKILL.md is the skill file itself, checked against the entry's digest like a load.
    assert_eq!(read(&sandbox, &workspace, &remote, "listed", "SKILL.md").0["ok"]["content"], LISTED);
    let tampered = format!(
        "Error: skill \"signed\": the file at {} has digest {}, but the index says {}; it is not read",
        server.url("/skills/signed/SKILL.md"),
        skill_host::file_digest(b"---\nname: signed\ndescription: Tampered.\n---\nTampered.\n"),
        skill_host::file_digest(b"the original"),
    );
    assert_eq!(read(&sandbox, &workspace, &remote, "signed", "SKILL.md").0, json!({"error": tampered}));
    // An entry that lists no files has only its SKILL.md: nothing beside it
    // is fetched, nor another entry's list for the same URL.
    assert_eq!(read(&sandbox, &workspace, &remote, "unlisted", "SKILL.md").0["ok"]["content"], UNLISTED);
    for file in ["notes.md", "leak.md"] {
        assert_eq!(
            read(&sandbox, &workspace, &remote, "unlisted", file).0,
            json!({"error": format!("Error: skill \"unlisted\" has no file \"{file}\"; it has no files besides its instructions")})
        );
    }
    let (record, _) = read(&sandbox, &workspace, &remote, "unlisted", "../index.json");
    assert!(record["error"].as_str().unwrap().starts_with("Error: invalid arguments:"), "{record}");
    let beside = |request: &String| request.starts_with("/skills/unlisted/") && !request.ends_with("/SKILL.md");
    assert!(!server.requests().iter().any(beside), "{:?}", server.requests());
    // A redirect never takes a read off the skill's folder.
    let redirected = format!(
        "Error: cannot fetch skill file {}: redirected from {} to {}, which is not beneath the skill's folder {}",
        server.url("/skills/listed/moved.md"),
        server.url("/skills/listed/moved.md"),
        server.url("/secret.txt"),
        server.url("/skills/listed/"),
    );
    assert_eq!(read(&sandbox, &workspace, &remote, "listed", "moved.md").0, json!({"error": redirected}));
}

/// The MCP `skill` tool takes the plugin's schema and arguments as they
/// are: the official client reads a file and gets `load --path`'s text.
#[test]
fn the_official_mcp_client_reads_a_file_through_the_skill_tool() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let config = sandbox.path().join("reads.json");
    std::fs::write(&config, READS).unwrap();
    let plan = json!({
        "command": [path(&skill_host_bin()), "--config", path(&config), "mcp", "--cwd", path(&workspace)],
        "env": crate::mcp::env(&sandbox),
        "calls": [{"name": "release-notes", "path": "references/style.md"}, {"name": "release-notes", "path": "nope.md"}],
    });
    let transcript = crate::mcp::official_client(&sandbox, &plan);
    let schema = &transcript["tools"][0]["inputSchema"];
    assert_eq!(schema["properties"]["path"]["type"], "string", "{schema}");
    for call in transcript["calls"].as_array().unwrap() {
        let file = call["arguments"]["path"].as_str().unwrap();
        let (record, code) = read(&sandbox, &workspace, &[], "release-notes", file);
        let text = record.get("text").or(record.get("error")).unwrap();
        assert_eq!(call["text"], json!([text]), "{file}");
        assert_eq!(call["isError"], json!(code == Some(1)), "{file}");
    }
}

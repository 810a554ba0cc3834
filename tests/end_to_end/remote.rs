//! `--remote INDEX_URL`: skills served over HTTP by a server on loopback that
//! the test starts, listed and loaded through `skill-host`.

use serde_json::{Value, json};
use skill_host::test_support::http::{Reply, Server, body};

use crate::common::{Sandbox, stderr, stdout};

const INDEX: &str = r#"{"skills":[
    {"name":"remote-triage","description":"Triage from the server.","url":"skills/remote-triage/SKILL.md"},
    {"name":"moved","description":"Its file now names another skill.","url":"skills/moved/SKILL.md"}
]}"#;

fn server() -> Server {
    Server::start(&[
        ("/index.json", body(INDEX)),
        (
            "/skills/remote-triage/SKILL.md",
            body(
                "---\nname: remote-triage\ndescription: Triage from the server.\n---\n\nSee [the checklist](checklist.md).\n",
            ),
        ),
        ("/skills/moved/SKILL.md", body("---\nname: renamed\ndescription: Renamed.\n---\nBody.\n")),
        ("/broken.json", Reply::Status(500)),
    ])
}

#[test]
fn remote_skills_are_listed_beside_local_ones() {
    let sandbox = Sandbox::new();
    let server = server();
    let workspace = sandbox.example_workspace();
    // `--remote` after the command, as global options may be.
    let output = sandbox.run(&[
        "skills",
        "--json",
        "--cwd",
        workspace.to_str().unwrap(),
        "--remote",
        &server.url("/index.json"),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let remote: Vec<&Value> =
        listed["skills"].as_array().unwrap().iter().filter(|s| s["provider"] == "remote").collect();
    assert_eq!(
        remote,
        [
            &json!({"name": "moved", "description": "Its file now names another skill.", "source": "remote", "rank": 350,
                    "provider": "remote", "path": server.url("/skills/moved/SKILL.md"),
                    "invocation": {"modelInvocable": true, "userInvocable": true}}),
            &json!({"name": "remote-triage", "description": "Triage from the server.", "source": "remote", "rank": 350,
                    "provider": "remote", "path": server.url("/skills/remote-triage/SKILL.md"),
                    "invocation": {"modelInvocable": true, "userInvocable": true}}),
        ]
    );
    assert_eq!(listed["complete"], json!(true));
    // The example workspace's five local skills are still there.
    assert_eq!(listed["skills"].as_array().unwrap().len(), 7);
}

#[test]
fn loading_a_remote_skill_names_its_base_url() {
    let sandbox = Sandbox::new();
    let server = server();
    let cwd = sandbox.path().to_str().unwrap();
    let output = sandbox.run(&["--remote", &server.url("/index.json"), "load", "remote-triage", "--cwd", cwd]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stdout(&output),
        format!(
            "<skill_content name=\"remote-triage\">\n<skill_resources>\nBase URL for this skill: {}\nResolve relative URLs mentioned by this skill against the base URL before using them. Load referenced resources only as needed.\n</skill_resources>\n\n<skill_instructions>\nSee [the checklist](checklist.md).\n</skill_instructions>\n</skill_content>\n",
            server.url("/skills/remote-triage/")
        )
    );

    // A file that names another skill is a renamed skill: unknown.
    let output = sandbox.run(&["--remote", &server.url("/index.json"), "load", "moved", "--cwd", cwd]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout(&output), "Error: skill \"moved\" is unknown or no longer available\n");
}

#[test]
fn a_failing_index_is_a_warning_and_an_incomplete_listing() {
    let sandbox = Sandbox::new();
    let server = server();
    let cwd = sandbox.path().to_str().unwrap();
    let broken = server.url("/broken.json");
    let output = sandbox.run(&["skills", "--json", "--cwd", cwd, "--remote", &broken]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        stderr(&output),
        format!("warning: skill provider \"remote\" skipped: {broken}: cannot read skill index: HTTP status 500\n")
    );
    let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!((listed["skills"].clone(), listed["complete"].clone()), (json!([]), json!(false)));

    // Beside a good index: its skills, and the failure among the skipped.
    let output =
        sandbox.run(&["skills", "--json", "--cwd", cwd, "--remote", &broken, "--remote", &server.url("/index.json")]);
    let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(listed["skills"].as_array().unwrap().len(), 2);
    assert_eq!(listed["complete"], json!(false));
    assert_eq!(listed["skipped"], json!([{"path": broken, "reason": "cannot read skill index: HTTP status 500"}]));
}

#[test]
fn an_index_url_that_is_not_http_is_a_usage_error() {
    let sandbox = Sandbox::new();
    for (url, reason) in [
        (
            "https://example.invalid/index.json",
            "https is not supported by this build (its HTTP client has no TLS); use http",
        ),
        ("index.json", "relative URL without a base"),
    ] {
        let output = sandbox.run(&["--remote", url, "skills"]);
        assert_eq!(output.status.code(), Some(2), "{url}");
        assert!(stderr(&output).contains(reason), "{url}: {}", stderr(&output));
    }
}

//! `--remote INDEX_URL`: skills served over HTTP by a server on loopback that
//! the test starts, listed and loaded through `skill-host`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use serde_json::{Value, json};

use crate::common::{Sandbox, stderr, stdout};

/// A loopback HTTP/1.1 server answering each path with a canned status and
/// body (unknown paths: 404), stopped when dropped.
struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    fn start(routes: Vec<(&'static str, u16, String)>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    answer(stream, &routes);
                }
            }
        });
        Self { addr, stop, thread: Some(thread) }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn answer(mut stream: TcpStream, routes: &[(&'static str, u16, String)]) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1).unwrap_or("");
    let (status, body) =
        routes.iter().find(|(p, _, _)| *p == path).map_or((404, ""), |(_, status, body)| (*status, body.as_str()));
    let response =
        format!("HTTP/1.1 {status} Canned\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
    let _ = stream.write_all(response.as_bytes());
}

const INDEX: &str = r#"{"skills":[
    {"name":"remote-triage","description":"Triage from the server.","url":"skills/remote-triage/SKILL.md"},
    {"name":"moved","description":"Its file now names another skill.","url":"skills/moved/SKILL.md"}
]}"#;

fn server() -> Server {
    Server::start(vec![
        ("/index.json", 200, INDEX.to_owned()),
        (
            "/skills/remote-triage/SKILL.md",
            200,
            "---\nname: remote-triage\ndescription: Triage from the server.\n---\n\nSee [the checklist](checklist.md).\n"
                .to_owned(),
        ),
        ("/skills/moved/SKILL.md", 200, "---\nname: renamed\ndescription: Renamed.\n---\nBody.\n".to_owned()),
        ("/broken.json", 500, String::new()),
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

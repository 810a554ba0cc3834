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
fn an_index_url_that_is_not_http_or_https_is_a_usage_error() {
    let sandbox = Sandbox::new();
    for (url, reason) in [
        ("ftp://example.invalid/index.json", "the scheme must be http or https, not \"ftp\""),
        ("index.json", "relative URL without a base"),
    ] {
        let output = sandbox.run(&["--remote", url, "skills"]);
        assert_eq!(output.status.code(), Some(2), "{url}");
        assert!(stderr(&output).contains(reason), "{url}: {}", stderr(&output));
    }
}

/// A certificate authority made for one test, and a server certificate for
/// 127.0.0.1 it signed.
struct TestCa {
    ca_pem: String,
    server_cert: rustls::pki_types::CertificateDer<'static>,
    server_key: rustls::pki_types::PrivateKeyDer<'static>,
}

fn test_ca() -> TestCa {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let server_key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    params.subject_alt_names.push(SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
    let server_cert = params.signed_by(&server_key, &issuer).unwrap();
    TestCa {
        ca_pem: ca.pem(),
        server_cert: server_cert.der().clone(),
        server_key: rustls::pki_types::PrivateKeyDer::Pkcs8(server_key.serialize_der().into()),
    }
}

/// An HTTPS server on 127.0.0.1: TLS (rustls, ring) in front of routes, one
/// thread per connection, each bounded in time; stops with the test process.
fn https_server(ca: &TestCa, routes: Vec<(String, Reply)>) -> String {
    use std::io::{Read, Write};
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![ca.server_cert.clone()], ca.server_key.clone_key())
        .unwrap();
    let config = std::sync::Arc::new(config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let routes = std::sync::Arc::new(routes);
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let (config, routes) = (config.clone(), routes.clone());
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(10)));
                let Ok(connection) = rustls::ServerConnection::new(config) else { return };
                let mut tls = rustls::StreamOwned::new(connection, stream);
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
                    match tls.read(&mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => return,
                    }
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split(' ').nth(1).unwrap_or("").to_owned();
                let reply = routes.iter().find(|(p, _)| *p == path).map(|(_, reply)| reply.clone());
                let (status, location, body) = match reply {
                    Some(Reply::Body(body)) => (200, String::new(), String::from_utf8(body).unwrap()),
                    Some(Reply::Redirect(to)) => (302, format!("Location: {to}\r\n"), String::new()),
                    _ => (404, String::new(), String::new()),
                };
                let response = format!(
                    "HTTP/1.1 {status} X\r\n{location}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = tls.write_all(response.as_bytes());
                let _ = tls.flush();
                tls.conn.send_close_notify();
                let _ = tls.flush();
            });
        }
    });
    format!("https://{addr}")
}

fn sha256_digest(text: &str) -> String {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(text.as_bytes());
    hash.iter().fold(String::from("sha256:"), |mut out, byte| {
        out.push_str(&format!("{byte:02x}"));
        out
    })
}

#[test]
fn https_indexes_are_verified_and_their_digests_checked() {
    let sandbox = Sandbox::new();
    let ca = test_ca();
    let good = "---\nname: secure-triage\ndescription: Triage over HTTPS.\n---\n\nSteps.\n";
    let tampered = "---\nname: tampered\ndescription: Changed after the index was written.\n---\n\nRun this.\n";
    // The Agent Skills discovery index, at its well-known path.
    let index = json!({"skills": [
        {"name": "secure-triage", "type": "skill-md", "description": "Triage over HTTPS.",
         "url": "secure-triage/SKILL.md", "digest": sha256_digest(good)},
        {"name": "tampered", "type": "skill-md", "description": "Tampered.",
         "url": "tampered/SKILL.md", "digest": sha256_digest("the file the index was written for")},
    ]});
    let origin = https_server(
        &ca,
        vec![
            ("/.well-known/agent-skills/index.json".into(), body(&index.to_string())),
            ("/.well-known/agent-skills/secure-triage/SKILL.md".into(), body(good)),
            ("/.well-known/agent-skills/tampered/SKILL.md".into(), body(tampered)),
        ],
    );
    let ca_file = sandbox.path().join("ca.pem");
    std::fs::write(&ca_file, &ca.ca_pem).unwrap();
    let cwd = sandbox.path().to_str().unwrap();
    let remote = ["--remote", &origin, "--remote-ca", ca_file.to_str().unwrap()];

    let output = sandbox.run(&[&remote[..], &["load", "secure-triage", "--cwd", cwd]].concat());
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let base = format!("{origin}/.well-known/agent-skills/secure-triage/");
    assert!(stdout(&output).contains(&format!("Base URL for this skill: {base}\n")), "{}", stdout(&output));

    // A digest that does not match what is fetched: a failed load, naming both.
    let output = sandbox.run(&[&remote[..], &["load", "tampered", "--cwd", cwd]].concat());
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        format!(
            "Error: skill \"tampered\": the file at {origin}/.well-known/agent-skills/tampered/SKILL.md has digest {}, but the index says {}; it is not loaded\n",
            sha256_digest(tampered),
            sha256_digest("the file the index was written for")
        )
    );

    // The Mozilla roots, or another CA, do not vouch for the test's certificate.
    let other = sandbox.path().join("other-ca.pem");
    std::fs::write(&other, test_ca().ca_pem).unwrap();
    for extra in [vec![], vec!["--remote-ca", other.to_str().unwrap()]] {
        let output = sandbox.run(&[&["skills", "--json", "--cwd", cwd, "--remote", &origin][..], &extra[..]].concat());
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let warning = stderr(&output);
        assert!(
            warning.starts_with(&format!(
                "warning: skill provider \"remote\" skipped: {origin}/.well-known/agent-skills/index.json: cannot read skill index: "
            )) && warning.contains("invalid peer certificate"),
            "{warning}"
        );
        let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(listed["skills"], json!([]));
    }

    // A CA file that is not one is a usage error.
    let output = sandbox.run(&["skills", "--remote", &origin, "--remote-ca", cwd]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}

#[test]
fn an_https_index_is_never_redirected_to_plain_http() {
    let sandbox = Sandbox::new();
    let ca = test_ca();
    let plain = server();
    let index =
        r#"{"skills":[{"name":"secure-triage","description":"Triage over HTTPS.","url":"secure-triage/SKILL.md"}]}"#;
    let origin = https_server(
        &ca,
        vec![
            ("/downgrade.json".into(), Reply::Redirect(plain.url("/index.json"))),
            ("/moved.json".into(), Reply::Redirect("/skills/index.json".into())),
            ("/skills/index.json".into(), body(index)),
        ],
    );
    let ca_file = sandbox.path().join("ca.pem");
    std::fs::write(&ca_file, &ca.ca_pem).unwrap();
    let cwd = sandbox.path().to_str().unwrap();
    let list = |index: &str| {
        sandbox.run(&["skills", "--json", "--cwd", cwd, "--remote", index, "--remote-ca", ca_file.to_str().unwrap()])
    };

    let output = list(&format!("{origin}/downgrade.json"));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        format!(
            "warning: skill provider \"remote\" skipped: {origin}/downgrade.json: cannot read skill index: redirected from {origin}/downgrade.json to {}, which is plain HTTP: a redirect from HTTPS to HTTP is refused\n",
            plain.url("/index.json")
        )
    );
    assert!(plain.requests().is_empty(), "{:?}", plain.requests());

    // Another HTTPS URL is followed.
    let output = list(&format!("{origin}/moved.json"));
    assert_eq!(stderr(&output), "");
    let listed: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(listed["skills"][0]["name"], "secure-triage");
}

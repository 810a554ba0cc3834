//! The remote provider against a real HTTP server on loopback, started by
//! each test and serving canned responses.

use std::sync::Arc;

use super::*;
use crate::test_support::http::{Reply, Server, body};

fn skill_file(name: &str, extra: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n{extra}---\n\n# {name}\n\nSteps.\n")
}

fn provider(server: &Server, paths: &[&str]) -> RemoteProvider {
    RemoteProvider::with_timeout(paths.iter().map(|path| server.index(path)).collect(), Duration::from_millis(300))
}

fn names(listing: &Listing) -> Vec<&str> {
    listing.candidates.iter().map(|c| c.name.as_str()).collect()
}

#[test]
fn index_urls_must_be_absolute_http_or_https() {
    assert!("http://127.0.0.1:1/index.json".parse::<IndexUrl>().is_ok());
    assert!("https://example.invalid/i.json".parse::<IndexUrl>().is_ok());
    assert_eq!(
        "file:///etc/passwd".parse::<IndexUrl>().unwrap_err(),
        "invalid index URL \"file:///etc/passwd\": the scheme must be http or https, not \"file\""
    );
    assert!("skills/index.json".parse::<IndexUrl>().unwrap_err().contains("relative URL without a base"));
}

#[test]
fn a_refused_index_url_never_quotes_its_credentials() {
    // Unparsable: the text is quoted with the user information masked.
    let error = "http://user:s3cret@[::1".parse::<IndexUrl>().unwrap_err();
    assert_eq!(error, "invalid index URL \"http://***@[::1\": invalid IPv6 address");
    // Parsed, refused scheme: the URL is shown without them.
    let error = "ftp://user:s3cret@host/i.json".parse::<IndexUrl>().unwrap_err();
    assert_eq!(error, "invalid index URL \"ftp://host/i.json\": the scheme must be http or https, not \"ftp\"");
    // A password holding a `/` is masked too (where the authority ends is
    // unknown in a text that did not parse).
    assert_eq!(without_userinfo("https://u:ab/cd@host:x/i.json"), "https://***@host:x/i.json");
    assert!(!"https://u:ab/cd@host:x/i.json".parse::<IndexUrl>().unwrap_err().contains("cd"));
    assert_eq!(without_userinfo("not a url"), "not a url");
}

#[test]
fn resource_base_is_the_file_urls_folder() {
    let url = |text: &str| Url::parse(text).unwrap();
    assert_eq!(folder_of(&url("http://h/skills/a/SKILL.md")), "http://h/skills/a/");
    assert_eq!(folder_of(&url("http://h/skills/a/SKILL.md?v=2#top")), "http://h/skills/a/");
    assert_eq!(folder_of(&url("http://h/flat.md")), "http://h/");
    assert_eq!(folder_of(&url("http://h/skills/a/")), "http://h/skills/a/");
}

#[test]
fn lists_an_index_with_absolute_and_relative_urls() {
    let server = Server::start(&[]);
    let index = format!(
        r#"{{"skills":[
            {{"name":"relative","description":"A relative one.","url":"relative/SKILL.md"}},
            {{"name":"rooted","description":"Rooted.","url":"/elsewhere/rooted/SKILL.md","whenToUse":"Sometimes."}},
            {{"name":"absolute","description":"Absolute.","url":"{}","invocation":{{"modelInvocable":false,"userInvocable":true}}}}
        ]}}"#,
        server.url("/other/absolute.md")
    );
    server.set("/skills/index.json", body(&index));
    let listing = provider(&server, &["/skills/index.json"]).list(None).unwrap();
    assert!(listing.complete);
    assert_eq!(listing.skipped, vec![]);
    assert_eq!(
        listing.candidates[0],
        SkillCandidate {
            listed: None,
            name: "relative".into(),
            description: "A relative one.".into(),
            when_to_use: None,
            invocation: InvocationPolicy::default(),
            source: "remote".into(),
            provider: "remote".into(),
            resource_base: Some(ResourceBase::Url { url: server.url("/skills/relative/") }),
            rank: 350,
            path: Some(PathBuf::from(server.url("/skills/relative/SKILL.md"))),
            metadata: None,
            body_digest: None,
        }
    );
    assert_eq!(listing.candidates[1].path, Some(PathBuf::from(server.url("/elsewhere/rooted/SKILL.md"))));
    assert_eq!(listing.candidates[1].when_to_use.as_deref(), Some("Sometimes."));
    assert_eq!(listing.candidates[2].resource_base, Some(ResourceBase::Url { url: server.url("/other/") }));
    assert_eq!(listing.candidates[2].invocation, InvocationPolicy { model_invocable: false, user_invocable: true });
    // Listing fetches the index only, never the skill files.
    assert_eq!(server.requests(), ["/skills/index.json"]);
}

#[test]
fn load_fetches_the_file_every_time_and_returns_its_body() {
    let server = Server::start(&[
        ("/index.json", body(r#"{"skills":[{"name":"triage","description":"Triage.","url":"s/triage/SKILL.md"}]}"#)),
        ("/s/triage/SKILL.md", body(&skill_file("triage", "metadata:\n  team: core\n"))),
    ]);
    let provider = provider(&server, &["/index.json"]);
    let candidate = provider.list(None).unwrap().candidates.remove(0);
    let loaded = provider.load(None, &candidate).unwrap().unwrap();
    assert_eq!(loaded.content, "# triage\n\nSteps.");
    assert_eq!(loaded.summary.name, "triage");
    assert_eq!(loaded.summary.description, "The triage skill.");
    assert_eq!(loaded.summary.resource_base, Some(ResourceBase::Url { url: server.url("/s/triage/") }));
    assert_eq!(loaded.summary.metadata, Some(serde_json::json!({"team": "core"})));
    assert_eq!((loaded.summary.source.as_str(), loaded.summary.rank), ("remote", 350));

    server.set("/s/triage/SKILL.md", body(&skill_file("triage", "").replace("Steps.", "New steps.")));
    assert_eq!(provider.load(None, &candidate).unwrap().unwrap().content, "# triage\n\nNew steps.");
    assert_eq!(server.requests(), ["/index.json", "/s/triage/SKILL.md", "/s/triage/SKILL.md"]);
}

#[test]
fn a_file_that_names_another_skill_is_returned_renamed() {
    let server = Server::start(&[
        ("/index.json", body(r#"{"skills":[{"name":"old-name","description":"Old.","url":"old-name.md"}]}"#)),
        ("/old-name.md", body(&skill_file("new-name", ""))),
    ]);
    let provider = provider(&server, &["/index.json"]);
    let candidate = provider.list(None).unwrap().candidates.remove(0);
    assert_eq!(provider.load(None, &candidate).unwrap().unwrap().summary.name, "new-name");

    // Through the registry, the renamed skill is unknown.
    let registry = crate::SkillRegistry::new();
    registry.register_provider(Arc::new(provider));
    assert_eq!(registry.get(None, "old-name"), Ok(None));
}

#[test]
fn the_policy_is_the_stricter_of_the_index_and_the_file() {
    let server = Server::start(&[
        (
            "/index.json",
            body(
                r#"{"skills":[
                    {"name":"a","description":"A.","url":"a.md","invocation":{"modelInvocable":false,"userInvocable":true}},
                    {"name":"b","description":"B.","url":"b.md"}]}"#,
            ),
        ),
        ("/a.md", body(&skill_file("a", ""))),
        ("/b.md", body(&skill_file("b", "user-invocable: false\n"))),
    ]);
    let provider = provider(&server, &["/index.json"]);
    let listing = provider.list(None).unwrap();
    let policy = |index: usize| provider.load(None, &listing.candidates[index]).unwrap().unwrap().summary.invocation;
    assert_eq!(policy(0), InvocationPolicy { model_invocable: false, user_invocable: true });
    assert_eq!(policy(1), InvocationPolicy { model_invocable: true, user_invocable: false });
}

#[test]
fn load_failures_are_errors_and_a_missing_file_is_gone() {
    let server = Server::start(&[
        (
            "/index.json",
            body(
                r#"{"skills":[
                    {"name":"gone","description":"Gone.","url":"gone.md"},
                    {"name":"broken","description":"Broken.","url":"broken.md"},
                    {"name":"invalid","description":"Invalid.","url":"invalid.md"},
                    {"name":"slow","description":"Slow.","url":"slow.md"}]}"#,
            ),
        ),
        ("/broken.md", Reply::Status(500)),
        ("/invalid.md", body("no frontmatter")),
        ("/slow.md", Reply::Hang),
    ]);
    let provider = provider(&server, &["/index.json"]);
    let listing = provider.list(None).unwrap();
    let load = |index: usize| provider.load(None, &listing.candidates[index]);
    assert_eq!(load(0), Ok(None));
    assert_eq!(
        load(1),
        Err(ProviderError(format!("cannot fetch skill file {}: HTTP status 500", server.url("/broken.md"))))
    );
    assert_eq!(
        load(2),
        Err(ProviderError(format!(
            "skill file {} is not a valid skill file: missing frontmatter (the first line must be exactly `---`)",
            server.url("/invalid.md")
        )))
    );
    assert_eq!(
        load(3),
        Err(ProviderError(format!("cannot fetch skill file {}: timed out after 300 ms", server.url("/slow.md"))))
    );
}

#[test]
fn an_index_that_cannot_be_read_fails_the_listing() {
    let server = Server::start(&[
        ("/hang.json", Reply::Hang),
        ("/error.json", Reply::Status(500)),
        ("/malformed.json", body(r#"{"skills": [ {"name": "#)),
        ("/wrong-shape.json", body(r#"{"skill": []}"#)),
        ("/binary.json", Reply::Body(vec![b'"', 0xff, b'"'])),
        ("/huge.json", Reply::Body(vec![b' '; MAX_INDEX_BYTES as usize + 1])),
    ]);
    let fail = |path: &str| provider(&server, &[path]).list(None).unwrap_err().0;
    let url = |path: &str| server.url(path);
    assert_eq!(fail("/hang.json"), format!("{}: cannot read skill index: timed out after 300 ms", url("/hang.json")));
    assert_eq!(fail("/error.json"), format!("{}: cannot read skill index: HTTP status 500", url("/error.json")));
    assert_eq!(fail("/missing.json"), format!("{}: cannot read skill index: HTTP status 404", url("/missing.json")));
    assert!(
        fail("/malformed.json")
            .starts_with(&format!("{}: cannot read skill index: malformed index JSON: ", url("/malformed.json"))),
        "{}",
        fail("/malformed.json")
    );
    assert_eq!(
        fail("/wrong-shape.json"),
        format!(
            "{}: cannot read skill index: malformed index: expected an object with a `skills` array",
            url("/wrong-shape.json")
        )
    );
    assert_eq!(
        fail("/binary.json"),
        format!("{}: cannot read skill index: not UTF-8 text (invalid byte at offset 1)", url("/binary.json"))
    );
    assert_eq!(
        fail("/huge.json"),
        format!("{}: cannot read skill index: larger than the 1024 KiB limit", url("/huge.json"))
    );

    // Through the registry: a warning and an incomplete snapshot, no skills.
    let registry = crate::SkillRegistry::new();
    registry.register_provider(Arc::new(provider(&server, &["/error.json"])));
    let snapshot = registry.snapshot(None);
    assert!(!snapshot.complete);
    assert_eq!(snapshot.skills, vec![]);
    assert_eq!(
        snapshot.warnings,
        [format!(
            "skill provider \"remote\" skipped: {}: cannot read skill index: HTTP status 500",
            url("/error.json")
        )]
    );
}

#[test]
fn a_failing_index_beside_a_good_one_makes_the_listing_incomplete() {
    let server = Server::start(&[
        ("/good.json", body(r#"{"skills":[{"name":"good","description":"Good.","url":"good.md"}]}"#)),
        ("/bad.json", Reply::Status(503)),
    ]);
    let listing = provider(&server, &["/bad.json", "/good.json"]).list(None).unwrap();
    assert!(!listing.complete);
    assert_eq!(names(&listing), ["good"]);
    assert_eq!(
        listing.skipped,
        [SkippedFile {
            path: PathBuf::from(server.url("/bad.json")),
            reason: "cannot read skill index: HTTP status 503".into()
        }]
    );
}

#[test]
fn malformed_entries_are_skipped_with_a_reason() {
    let server = Server::start(&[(
        "/index.json",
        body(
            r#"{"skills":[
                {"name":"ok","description":"Fine.","url":"ok.md","whenToUse":3},
                "not an object",
                {"name":"no-url","description":"D."},
                {"name":"Bad_Name","description":"D.","url":"bad.md"},
                {"name":"no-description","url":"nd.md"},
                {"name":"bad-policy","description":"D.","url":"bp.md","invocation":{"modelInvocable":"yes","userInvocable":true}},
                {"name":"ftp","description":"D.","url":"ftp://example.invalid/s.md"},
                {"name":"archived","description":"D.","type":"archive","url":"a.tar.gz"},
                {"name":"bad-digest","description":"D.","type":"skill-md","url":"bd.md","digest":"sha256:ABC"},
                {"name":"ok","description":"Duplicate, resolved by the registry.","url":"ok2.md"}
            ]}"#,
        ),
    )]);
    let listing = provider(&server, &["/index.json"]).list(None).unwrap();
    assert!(listing.complete);
    assert_eq!(names(&listing), ["ok", "ok"]);
    assert_eq!(listing.candidates[0].when_to_use, None);
    let skipped: Vec<(String, String)> =
        listing.skipped.iter().map(|s| (s.path.display().to_string(), s.reason.clone())).collect();
    let index = server.url("/index.json");
    assert_eq!(
        skipped,
        [
            (format!("{index}#2"), "index entry without a `url` string".to_string()),
            (format!("{index}#3"), "index entry without a `url` string".to_string()),
            (
                server.url("/bad.md"),
                "`name` \"Bad_Name\" does not match the skill-name grammar ^[a-z0-9]+(?:-[a-z0-9]+)*$".to_string()
            ),
            (server.url("/nd.md"), "skill \"no-description\": `description` must be a non-empty string".to_string()),
            (
                server.url("/bp.md"),
                "skill \"bad-policy\": malformed `invocation`: invalid type: string \"yes\", expected a boolean"
                    .to_string()
            ),
            ("ftp://example.invalid/s.md".to_string(), "the scheme must be http or https, not \"ftp\"".to_string()),
            (
                server.url("/a.tar.gz"),
                "skill \"archived\": type \"archive\" is not supported (only \"skill-md\")".to_string()
            ),
            (
                server.url("/bd.md"),
                "skill \"bad-digest\": `digest` must be \"sha256:\" and 64 lowercase hex digits".to_string()
            ),
        ]
    );
}

#[test]
fn an_empty_provider_lists_nothing_completely() {
    let listing = RemoteProvider::new(Vec::new()).list(None).unwrap();
    assert_eq!(listing, Listing { complete: true, ..Listing::default() });
}

#[test]
fn credentials_in_an_index_url_reach_its_server_and_nobody_else() {
    let index = r#"{"skills":[
        {"name":"demo","description":"Demo.","url":"skills/demo/SKILL.md"},
        {"name":"gone","description":"Gone.","url":"skills/gone/SKILL.md"}
    ]}"#;
    let server = Server::start(&[
        ("/index.json", body(index)),
        ("/skills/demo/SKILL.md", body(&skill_file("demo", ""))),
        ("/skills/gone/SKILL.md", Reply::Status(500)),
    ]);
    let secret_url = format!("http://alice:s3cret@{}/index.json", server.addr());
    let index: IndexUrl = secret_url.parse().unwrap();
    assert_eq!(index.to_string(), server.url("/index.json"));
    assert!(!format!("{index:?}").contains("s3cret"));
    let provider = RemoteProvider::with_timeout(vec![index], Duration::from_millis(300));

    let listing = provider.list(None).unwrap();
    let demo = &listing.candidates[0];
    assert_eq!(demo.path, Some(PathBuf::from(server.url("/skills/demo/SKILL.md"))));
    assert_eq!(demo.resource_base, Some(ResourceBase::Url { url: server.url("/skills/demo/") }));
    let loaded = provider.load(None, demo).unwrap().unwrap();
    assert_eq!(loaded.summary.resource_base, Some(ResourceBase::Url { url: server.url("/skills/demo/") }));
    let error = provider.load(None, &listing.candidates[1]).unwrap_err();
    assert!(!error.0.contains("s3cret") && !error.0.contains("alice"), "{}", error.0);

    // "alice:s3cret" in base64: sent with every request, the files' too.
    let basic = "Basic YWxpY2U6czNjcmV0";
    assert_eq!(server.authorizations(), vec![basic; 3]);
}

#[test]
fn a_server_without_credentials_gets_none() {
    let server = Server::start(&[("/index.json", body(r#"{"skills":[]}"#))]);
    let other = Server::start(&[("/index.json", body(r#"{"skills":[]}"#))]);
    let secret: IndexUrl = format!("http://alice:s3cret@{}/index.json", other.addr()).parse().unwrap();
    let provider = RemoteProvider::with_timeout(vec![server.index("/index.json"), secret], Duration::from_millis(300));
    provider.list(None).unwrap();
    assert_eq!(server.authorizations(), vec![String::new()]);
    assert_eq!(provider.with_credentials(&Url::parse(&server.url("/x")).unwrap()).as_str(), server.url("/x"));
}

#[test]
fn a_password_without_a_user_is_scrubbed_and_nothing_else() {
    let url = Url::parse("http://:t0ken@example.invalid/skills/a/SKILL.md").unwrap();
    assert_eq!(
        scrub(
            "cannot reach http://:t0ken@example.invalid/skills/a/SKILL.md (mail me@example.invalid)".to_owned(),
            &url
        ),
        "cannot reach http://example.invalid/skills/a/SKILL.md (mail me@example.invalid)"
    );
}

#[test]
fn a_bare_origin_means_the_well_known_discovery_index() {
    let index: IndexUrl = "https://example.invalid/".parse().unwrap();
    assert_eq!(index.to_string(), "https://example.invalid/.well-known/agent-skills/index.json");
    let index: IndexUrl = "https://example.invalid".parse().unwrap();
    assert_eq!(index.to_string(), "https://example.invalid/.well-known/agent-skills/index.json");
    // Any other path is the index itself.
    let index: IndexUrl = "https://example.invalid/skills.json".parse().unwrap();
    assert_eq!(index.to_string(), "https://example.invalid/skills.json");
}

#[test]
fn the_discovery_index_digest_is_checked_at_load() {
    let good = skill_file("good", "");
    let tampered = skill_file("tampered", "");
    let index = format!(
        r#"{{"$schema":"https://schemas.example/discovery/0.2.0/schema.json","skills":[
            {{"name":"good","type":"skill-md","description":"The good skill.","url":"good/SKILL.md","digest":"{}"}},
            {{"name":"tampered","type":"skill-md","description":"The tampered skill.","url":"tampered/SKILL.md","digest":"{}"}}
        ]}}"#,
        file_digest(good.as_bytes()),
        file_digest(b"what the index was written for"),
    );
    let server = Server::start(&[
        ("/.well-known/agent-skills/index.json", body(&index)),
        ("/.well-known/agent-skills/good/SKILL.md", body(&good)),
        ("/.well-known/agent-skills/tampered/SKILL.md", body(&tampered)),
    ]);
    let provider = RemoteProvider::with_timeout(vec![server.index("/")], Duration::from_secs(5));
    let listing = provider.list(None).unwrap();
    assert_eq!(names(&listing), ["good", "tampered"]);
    assert!(listing.candidates.iter().all(|candidate| candidate.body_digest.is_none()));
    let loaded = provider.load(None, &listing.candidates[0]).unwrap().unwrap();
    assert_eq!(loaded.content, "# good\n\nSteps.");
    let error = provider.load(None, &listing.candidates[1]).unwrap_err();
    let url = server.url("/.well-known/agent-skills/tampered/SKILL.md");
    assert_eq!(
        error.0,
        format!(
            "skill \"tampered\": the file at {url} has digest {}, but the index says {}; it is not loaded",
            file_digest(tampered.as_bytes()),
            file_digest(b"what the index was written for")
        )
    );
}

#[test]
fn an_index_without_a_digest_does_not_switch_another_indexs_check_off() {
    let tampered = skill_file("tampered", "");
    let signed = format!(
        r#"{{"skills":[{{"name":"tampered","type":"skill-md","description":"The tampered skill.","url":"/files/tampered/SKILL.md","digest":"{}"}}]}}"#,
        file_digest(b"what the index was written for"),
    );
    let unsigned =
        r#"{"skills":[{"name":"tampered","description":"The tampered skill.","url":"/files/tampered/SKILL.md"}]}"#;
    let server = Server::start(&[
        ("/signed.json", body(&signed)),
        ("/unsigned.json", body(unsigned)),
        ("/files/tampered/SKILL.md", body(&tampered)),
    ]);
    let provider = RemoteProvider::with_timeout(
        vec![server.index("/signed.json"), server.index("/unsigned.json")],
        Duration::from_secs(5),
    );
    let listing = provider.list(None).unwrap();
    assert_eq!(listing.candidates.len(), 2);
    for candidate in &listing.candidates {
        let error = provider.load(None, candidate).unwrap_err();
        assert!(error.0.contains("but the index says"), "{error}");
    }
}

mod refresh;

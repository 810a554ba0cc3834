//! Redirects (followed, bounded, never down to plain HTTP) and conditional
//! re-reads of an index (`ETag`, `Cache-Control: max-age`).

use super::*;
use crate::providers::remote::http::check_redirect;

const INDEX: &str = r#"{"skills":[{"name":"moved","description":"Moved.","url":"moved.md"}]}"#;

#[test]
fn a_redirect_is_followed_and_skills_resolve_against_the_configured_index() {
    let server = Server::start(&[
        ("/old.json", Reply::Redirect("/hop.json".into())),
        ("/hop.json", Reply::Redirect("/new/index.json".into())),
        ("/new/index.json", body(INDEX)),
        ("/moved.md", body(&skill_file("moved", ""))),
    ]);
    let remote = provider(&server, &["/old.json"]);
    let listing = remote.list(None).unwrap();
    assert_eq!(names(&listing), ["moved"]);
    assert_eq!(server.requests(), ["/old.json", "/hop.json", "/new/index.json"]);
    assert!(remote.load(None, &listing.candidates[0]).unwrap().is_some());
}

#[test]
fn redirects_are_bounded() {
    let routes: Vec<(String, Reply)> = (0..=MAX_REDIRECTS)
        .map(|hop| (format!("/{hop}.json"), Reply::Redirect(format!("/{}.json", hop + 1))))
        .collect();
    let routes: Vec<(&str, Reply)> = routes.iter().map(|(path, reply)| (path.as_str(), reply.clone())).collect();
    let server = Server::start(&routes);
    assert_eq!(
        provider(&server, &["/0.json"]).list(None).unwrap_err().0,
        format!("{}: cannot read skill index: more than 5 redirects", server.url("/0.json"))
    );
    assert_eq!(server.requests().len(), MAX_REDIRECTS as usize + 1);
}

#[test]
fn a_redirect_from_https_to_http_is_refused_naming_both() {
    let from: Url = "https://u:secret@example.invalid/index.json".parse().unwrap();
    let to: Url = "http://example.invalid/index.json".parse().unwrap();
    assert_eq!(
        check_redirect(&from, &to).unwrap_err(),
        "redirected from https://example.invalid/index.json to http://example.invalid/index.json, which is plain HTTP: a redirect from HTTPS to HTTP is refused"
    );
    let elsewhere: Url = "https://mirror.invalid/index.json".parse().unwrap();
    assert_eq!(check_redirect(&from, &elsewhere), Ok(()));
    assert_eq!(check_redirect(&to, &elsewhere), Ok(()));
    assert_eq!(check_redirect(&to, &to), Ok(()));
    let file: Url = "file:///etc/passwd".parse().unwrap();
    assert_eq!(
        check_redirect(&from, &file).unwrap_err(),
        "redirected to file:///etc/passwd: the scheme must be http or https, not \"file\""
    );
}

#[test]
fn credentials_never_follow_a_redirect() {
    let server =
        Server::start(&[("/index.json", Reply::Redirect("/elsewhere.json".into())), ("/elsewhere.json", body(INDEX))]);
    let index: IndexUrl = format!("http://reader:secret@{}/index.json", server.addr()).parse().unwrap();
    RemoteProvider::new(vec![index]).list(None).unwrap();
    let authorizations = server.authorizations();
    assert!(authorizations[0].starts_with("Basic "), "{authorizations:?}");
    assert_eq!(authorizations[1], "");
}

#[test]
fn an_index_with_an_etag_is_re_read_conditionally_and_its_max_age_kept() {
    let tagged = |text: &str, etag: &str| Reply::Tagged {
        body: text.as_bytes().to_vec(),
        etag: etag.to_owned(),
        max_age: Some(120),
    };
    let server = Server::start(&[("/index.json", tagged(INDEX, "\"v1\""))]);
    let remote = provider(&server, &["/index.json"]);
    assert_eq!(remote.max_age(), None);
    let first = remote.list(None).unwrap();
    assert_eq!(remote.max_age(), Some(Duration::from_secs(120)));
    // Not modified: the kept copy is listed again.
    assert_eq!(remote.list(None).unwrap(), first);
    assert_eq!(server.conditions(), ["", "\"v1\""]);
    // Changed: the new text, and its own tag next time.
    let changed = r#"{"skills":[{"name":"other","description":"Other.","url":"other.md"}]}"#;
    server.set("/index.json", tagged(changed, "\"v2\""));
    assert_eq!(names(&remote.list(None).unwrap()), ["other"]);
    remote.list(None).unwrap();
    assert_eq!(server.conditions(), ["", "\"v1\"", "\"v1\"", "\"v2\""]);
    // A server that stops tagging: no condition, and no max-age.
    server.set("/index.json", body(INDEX));
    remote.list(None).unwrap();
    remote.list(None).unwrap();
    assert_eq!(server.conditions()[4..], ["\"v2\"", ""]);
    assert_eq!(remote.max_age(), None);
}

#[test]
fn cache_control_directives_are_read_as_a_max_age() {
    let headers = |values: &[&str]| {
        let mut map = ureq::http::HeaderMap::new();
        for value in values {
            map.append("cache-control", value.parse().unwrap());
        }
        map
    };
    assert_eq!(Validators::of(&headers(&["public, max-age=300"])).max_age, Some(Duration::from_secs(300)));
    assert_eq!(Validators::of(&headers(&["max-age=300", "no-cache"])).max_age, Some(Duration::ZERO));
    let no_store = Validators::of(&headers(&["No-Store"]));
    assert_eq!((no_store.max_age, no_store.no_store), (Some(Duration::ZERO), true));
    assert_eq!(Validators::of(&headers(&["max-age=soon"])).max_age, None);
}

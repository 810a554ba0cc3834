//! `skill-host mcp`'s limits against a client that misbehaves on purpose:
//! request bodies that never finish, a flood of `initialize` calls, sessions
//! left idle, ambiguous `Host` and `Origin` headers (over HTTP), and
//! messages with a key twice in one object (over stdio and HTTP).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skill_host::mcp::http::MAX_SESSIONS;

use crate::common::{Sandbox, path};
use crate::mcp_http::{HttpServer, TIMEOUT, exchange, post};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// A POST to `/mcp` within `session`.
fn post_in(server: &HttpServer, session: &str, body: &str, until: Option<&str>) -> (u16, String, String) {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
         Mcp-Protocol-Version: 2025-06-18\r\nContent-Length: {}\r\n",
        server.address,
        body.len()
    );
    exchange(&server.address, &head, body, until)
}

/// Opens a session (`initialize`, then `notifications/initialized`) and
/// returns its id.
fn open_session(server: &HttpServer) -> String {
    let (status, headers, body) = post(server, INITIALIZE, Some("\"serverInfo\""));
    assert_eq!(status, 200, "{headers}\n{body}");
    let session = headers
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id").then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id: {headers}"));
    let (status, headers, _) =
        post_in(server, &session, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, None);
    assert_eq!(status, 202, "{headers}");
    session
}

/// A ping within `session`: the status and the body.
fn ping(server: &HttpServer, session: &str) -> (u16, String) {
    let (status, _, body) = post_in(server, session, r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#, Some("\"result\""));
    (status, body)
}

fn assert_served(server: &HttpServer, session: &str, which: &str) {
    let (status, body) = ping(server, session);
    assert_eq!(status, 200, "{which}: {body}");
    assert!(body.contains(r#""id":7,"result":{}"#), "{which}: {body}");
}

fn assert_gone(server: &HttpServer, session: &str, which: &str) {
    assert_eq!(ping(server, session), (404, "Not Found: Session not found".to_owned()), "{which}");
}

/// One attempt at a whole exchange that tolerates a connection the server
/// closes at once (past its connection cap): the status, 0 when closed.
fn try_initialize(address: &str) -> u16 {
    let Ok(mut stream) = TcpStream::connect(address) else { return 0 };
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    if stream.write_all(request.as_bytes()).is_err() {
        return 0;
    }
    let mut received = Vec::new();
    let mut buffer = [0; 4096];
    while let Ok(read @ 1..) = stream.read(&mut buffer) {
        received.extend_from_slice(&buffer[..read]);
        if String::from_utf8_lossy(&received).contains("\"serverInfo\"") {
            break;
        }
    }
    let text = String::from_utf8_lossy(&received);
    text.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0)
}

#[test]
fn bodies_that_never_finish_do_not_lock_other_clients_out() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let server = HttpServer::start(&sandbox, &["--no-watch", "--read-timeout", "1", "--cwd", path(&workspace)]);
    // 64 clients (every place) that send their headers and the start of a
    // body, then nothing.
    let mut stalled: Vec<TcpStream> = (0..64)
        .map(|_| {
            let mut stream = TcpStream::connect(&server.address).unwrap();
            write!(
                stream,
                "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\"",
                server.address
            )
            .unwrap();
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    // A well-behaved client is served once the stalled bodies time out.
    let started = Instant::now();
    loop {
        if try_initialize(&server.address) == 200 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "no client served while bodies stall");
        std::thread::sleep(Duration::from_millis(100));
    }
    // A stalled client is told why.
    let stream = &mut stalled[0];
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408 "), "{answer}");
    assert!(answer.ends_with("\r\n\r\nRequest Timeout: the request body did not arrive within 1 s"), "{answer}");
}

#[test]
fn sessions_past_the_cap_close_the_least_recently_used() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let server = HttpServer::start(&sandbox, &["--no-watch", "--cwd", path(&workspace)]);
    let first = open_session(&server);
    let second = open_session(&server);
    let others: Vec<String> = (2..MAX_SESSIONS).map(|_| open_session(&server)).collect();
    // The first is used again: the second is now the least recently used.
    assert_served(&server, &first, "the first session");
    let newest = open_session(&server);
    assert_gone(&server, &second, "the least recently used session");
    assert_served(&server, &first, "the first session");
    assert_served(&server, &newest, "the newest session");
    assert_served(&server, &others[0], "the third session");
    // Another flood: the count stays at the cap, whatever the number of
    // calls; the sessions in use survive it.
    for _ in 0..MAX_SESSIONS {
        open_session(&server);
        assert_served(&server, &first, "a session in use");
    }
    assert_gone(&server, &newest, "a session left idle during the flood");
}

#[test]
fn sessions_left_idle_expire() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let server = HttpServer::start(&sandbox, &["--no-watch", "--session-idle", "1", "--cwd", path(&workspace)]);
    let session = open_session(&server);
    // In use, it lives past its idle lifetime.
    for _ in 0..4 {
        assert_served(&server, &session, "a session in use");
        std::thread::sleep(Duration::from_millis(400));
    }
    std::thread::sleep(Duration::from_millis(2500));
    assert_gone(&server, &session, "a session idle for 2.5 s");
    // The server goes on.
    let again = open_session(&server);
    assert_served(&server, &again, "a new session");
}

#[test]
fn ambiguous_host_and_origin_headers_are_refused() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let server = HttpServer::start(&sandbox, &["--no-watch", "--cwd", path(&workspace)]);
    let port = server.address.rsplit_once(':').unwrap().1.to_owned();
    let get = |headers: &str| exchange(&server.address, &format!("GET /mcp HTTP/1.1\r\n{headers}"), "", None);
    let own = &server.address;
    for (headers, refusal) in [
        (format!("Host: {own}\r\nHost: {own}\r\n"), "Bad Request: more than one Host header".to_owned()),
        (format!("Host: {own}\r\nHost: evil.example\r\n"), "Bad Request: more than one Host header".to_owned()),
        (
            format!("Host: user@{own}\r\n"),
            format!("Bad Request: Host \"user@{own}\" holds userinfo (`user@`), which a Host header may not"),
        ),
        (
            format!("Host: localhost:{port}\r\nOrigin: http://user:pw@localhost:{port}\r\n"),
            format!(
                "Bad Request: Origin \"http://user:pw@localhost:{port}\" holds userinfo (`user@`), \
                 which an Origin header may not"
            ),
        ),
        (
            format!("Host: {own}\r\nOrigin: http://localhost\r\nOrigin: http://evil.example\r\n"),
            "Bad Request: more than one Origin header".to_owned(),
        ),
    ] {
        let (status, _, body) = get(&headers);
        assert_eq!((status, body), (400, refusal), "{headers}");
    }
}

/// The message and id of a duplicate key's error, as a client gets it.
fn duplicate_error(id: Value, key: &str, place: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": format!("Invalid request: duplicate key \"{key}\" in {place}")}})
}

#[test]
fn a_key_twice_in_one_object_is_named_with_the_request_s_id_over_stdio() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let mut server = sandbox
        .command(&["mcp", "--no-watch", "--cwd", path(&workspace)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = server.stdin.take().unwrap();
    let (lines, received) = mpsc::channel();
    let reader = BufReader::new(server.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in reader.lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    let mut exchange = |line: &str| -> Value {
        writeln!(input, "{line}").unwrap();
        input.flush().unwrap();
        serde_json::from_str(&received.recv_timeout(TIMEOUT).expect("an answer in time")).unwrap()
    };
    let opening = format!("{INITIALIZE}\n{}", r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(exchange(&opening)["result"]["serverInfo"]["name"], "skill-host");
    assert_eq!(
        exchange(r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","method":"tools/list"}"#),
        duplicate_error(json!(8), "method", "the message")
    );
    assert_eq!(
        exchange(
            r#"{"jsonrpc":"2.0","id":"nine","method":"tools/call","params":{"name":"skill","arguments":{"name":"review-pr","name":"deploy-production"}}}"#
        ),
        duplicate_error(json!("nine"), "name", "/params/arguments")
    );
    // Which id is meant is the ambiguity itself.
    assert_eq!(
        exchange(r#"{"jsonrpc":"2.0","id":10,"id":11,"method":"ping"}"#),
        duplicate_error(Value::Null, "id", "the message")
    );
    assert_eq!(
        exchange(r#"{"jsonrpc":"2.0","id":12,"method":"ping"}"#),
        json!({"jsonrpc": "2.0", "id": 12, "result": {}})
    );
    drop(input);
    assert!(server.wait().unwrap().success());
}

#[test]
fn a_key_twice_in_one_object_is_named_with_the_request_s_id_over_http() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let server = HttpServer::start(&sandbox, &["--no-watch", "--cwd", path(&workspace)]);
    let twice = INITIALIZE.replace(r#""id":1,"#, r#""id":3,"method":"initialize","#);
    let (status, headers, body) = post(&server, &twice, None);
    assert_eq!(status, 400, "{headers}\n{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), duplicate_error(json!(3), "method", "the message"));
    let session = open_session(&server);
    let (status, _, body) = post_in(
        &server,
        &session,
        r#"{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"skill://review-pr/SKILL.md","uri":"skill://review-pr/../x"}}"#,
        None,
    );
    assert_eq!(status, 400, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), duplicate_error(json!(4), "uri", "/params"));
    assert_served(&server, &session, "the session after the refusals");
}

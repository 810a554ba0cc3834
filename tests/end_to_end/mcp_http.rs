//! `skill-host mcp --http`: the official client's whole session over
//! streamable HTTP (the same checks as on stdio, mcp.rs), and raw HTTP for
//! what a client should never get through: another Host or Origin, another
//! path, a body too large or not JSON, an address other machines can reach.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Sandbox, path};
use crate::mcp::{Transport, official_client_gets_what_skill_host_load_prints};

/// How long the server may take to start listening, to answer, to stop.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// A `skill-host mcp --http 127.0.0.1:0` the test started (or another
/// server that names its URL the same way); killed on drop.
pub struct HttpServer {
    child: Child,
    /// `http://127.0.0.1:{port}/mcp`, from the line it prints.
    pub url: String,
    /// `127.0.0.1:{port}`.
    pub address: String,
}

impl HttpServer {
    /// Starts the server with `args` after `mcp --http 127.0.0.1:0`, and
    /// waits for the line that names the address it listens on.
    pub fn start(sandbox: &Sandbox, args: &[&str]) -> Self {
        let command = sandbox.command(&[&["mcp", "--http", "127.0.0.1:0"], args].concat());
        Self::spawn(command, "skill-host mcp: listening on ")
    }

    /// Starts `command`, a server on `127.0.0.1:0`, and waits for the line
    /// on its stderr that is `listening` followed by its URL.
    pub fn spawn(mut command: Command, listening: &str) -> Self {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("{command:?} does not start: {error}"));
        let (lines, received) = mpsc::channel();
        let reader = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in reader.lines().map_while(Result::ok) {
                let _ = lines.send(line);
            }
        });
        let deadline = Instant::now() + TIMEOUT;
        let mut seen = Vec::new();
        let url = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = received.recv_timeout(left) else {
                let _ = child.kill();
                panic!("no `listening on` line within {TIMEOUT:?}; stderr: {seen:?}");
            };
            if let Some(url) = line.strip_prefix(listening) {
                break url.to_owned();
            }
            seen.push(line);
        };
        let address = url
            .strip_prefix("http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("unexpected URL {url}"))
            .to_owned();
        assert!(address.starts_with("127.0.0.1:") && !address.ends_with(":0"), "{address}");
        Self { child, url, address }
    }

    /// Sends SIGTERM and waits for the exit.
    pub fn stop(mut self) -> ExitStatus {
        let terminated =
            Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().expect("kill runs");
        assert!(terminated.success());
        wait_bounded(&mut self.child)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for `child`, at most [`TIMEOUT`]; kills it and fails after that.
fn wait_bounded(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("skill-host did not exit within {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One HTTP/1.1 exchange on a fresh connection (`Connection: close`): the
/// status, the header block, and the body as sent (chunked bodies keep
/// their chunk lines). Stops reading at `until`, when given, for a stream
/// that stays open.
pub fn exchange(address: &str, head: &str, body: &str, until: Option<&str>) -> (u16, String, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(TIMEOUT)).unwrap();
    stream.set_write_timeout(Some(TIMEOUT)).unwrap();
    write!(stream, "{head}Connection: close\r\n\r\n{body}").unwrap();
    stream.flush().unwrap();
    let mut received = Vec::new();
    let mut buffer = [0; 8192];
    loop {
        let read = stream.read(&mut buffer).expect("an answer in time");
        if read == 0 {
            break;
        }
        received.extend_from_slice(&buffer[..read]);
        if until.is_some_and(|marker| String::from_utf8_lossy(&received).contains(marker)) {
            break;
        }
    }
    let text = String::from_utf8(received).unwrap();
    let (headers, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = headers.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    (status, headers.to_owned(), body.to_owned())
}

/// A POST of `body` to `/mcp` with the headers a client sends.
pub fn post(server: &HttpServer, body: &str, until: Option<&str>) -> (u16, String, String) {
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        server.address,
        body.len()
    );
    exchange(&server.address, &head, body, until)
}

#[test]
fn an_official_mcp_client_over_http_gets_what_skill_host_load_prints() {
    official_client_gets_what_skill_host_load_prints(Transport::Http);
}

#[test]
fn only_this_loopback_server_s_own_requests_get_through() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let server = HttpServer::start(&sandbox, &["--no-watch", "--cwd", path(&workspace)]);
    let port = server.address.rsplit_once(':').unwrap().1.to_owned();

    // DNS rebinding: a page on another name reaches 127.0.0.1 by address.
    let get = |host: &str, extra: &str| {
        exchange(&server.address, &format!("GET /mcp HTTP/1.1\r\nHost: {host}\r\n{extra}"), "", None)
    };
    let rebound = format!("evil.example:{port}");
    let (status, headers, body) = get(&rebound, "");
    assert_eq!(status, 403, "{headers}");
    assert_eq!(
        body,
        format!("Forbidden: Host \"{rebound}\" is not this server's loopback address (DNS rebinding guard)")
    );
    let (status, _, body) = get(&format!("127.0.0.1:{}", port.parse::<u32>().unwrap() + 1), "");
    assert_eq!(status, 403, "{body}");
    let (status, _, body) = get(&server.address, "Origin: http://evil.example\r\n");
    assert_eq!(status, 403);
    assert_eq!(body, "Forbidden: Origin \"http://evil.example\" is not a loopback origin (DNS rebinding guard)");
    // Another path.
    let (status, _, body) =
        exchange(&server.address, &format!("GET /other HTTP/1.1\r\nHost: {}\r\n", server.address), "", None);
    assert_eq!((status, body.as_str()), (404, "Not Found: the MCP endpoint is /mcp"));

    // Bad bodies: a JSON-RPC error each, and the server keeps serving.
    let (status, headers, body) = post(&server, "this is not JSON", None);
    assert_eq!(status, 400);
    assert!(headers.to_ascii_lowercase().contains("content-type: application/json"), "{headers}");
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!((&error["id"], &error["error"]["code"]), (&Value::Null, &json!(-32700)));
    assert!(error["error"]["message"].as_str().unwrap().starts_with("Parse error: not valid JSON: "));
    let (status, _, body) = post(&server, r#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#, None);
    assert_eq!(status, 400);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"]["message"],
        "Invalid request: batches (JSON arrays) are not supported; send one message per request"
    );
    let (status, _, body) = post(&server, r#"{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{}}"#, None);
    assert_eq!(status, 400);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"],
        json!({"code": -32602, "message": "Invalid params for \"resources/read\": missing field `uri`"})
    );
    // A body over 4 MiB is refused on its Content-Length, before it is sent.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        server.address,
        5 << 20
    );
    let (status, _, body) = exchange(&server.address, &head, "", None);
    assert_eq!(status, 413);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"]["message"],
        "Invalid request: the message is larger than the 4 MiB limit (4194304 bytes); it was discarded"
    );

    // Still serving: an initialize, by the name `localhost` too.
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let (status, headers, body) = post(&server, initialize, Some("\"serverInfo\""));
    assert_eq!(status, 200, "{headers}\n{body}");
    assert!(headers.to_ascii_lowercase().contains("mcp-session-id: "), "{headers}");
    assert!(body.contains(r#""serverInfo":{"name":"skill-host""#), "{body}");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: http://localhost:3000\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        initialize.len()
    );
    let (status, _, body) = exchange(&server.address, &head, initialize, Some("\"serverInfo\""));
    assert_eq!(status, 200, "{body}");

    assert_eq!(server.stop().code(), Some(0));
}

#[test]
fn an_address_other_machines_reach_is_a_usage_error() {
    let sandbox = Sandbox::new();
    for (address, error) in [
        (
            "0.0.0.0:1",
            "error: invalid value '0.0.0.0:1' for '--http <ADDR>': 0.0.0.0:1 is not a loopback address: \
             --http binds loopback addresses only (127.0.0.0/8, ::1, localhost), as the server has no authentication",
        ),
        (
            "[::]:1",
            "error: invalid value '[::]:1' for '--http <ADDR>': [::]:1 is not a loopback address: \
             --http binds loopback addresses only (127.0.0.0/8, ::1, localhost), as the server has no authentication",
        ),
        (
            "example.com:80",
            "error: invalid value 'example.com:80' for '--http <ADDR>': \"example.com:80\" is not an address: \
             expected IP:PORT, for example 127.0.0.1:8765 or [::1]:8765",
        ),
        (
            "127.0.0.1",
            "error: invalid value '127.0.0.1' for '--http <ADDR>': \"127.0.0.1\" is not an address: \
             expected IP:PORT, for example 127.0.0.1:8765 or [::1]:8765",
        ),
    ] {
        let mut child = sandbox
            .command(&["mcp", "--http", address])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let status = wait_bounded(&mut child);
        let mut stderr = String::new();
        child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        assert_eq!(status.code(), Some(2), "{address}: {stderr}");
        assert_eq!(stderr.lines().next(), Some(error), "{address}");
    }
}

#[test]
fn connections_past_the_cap_are_closed_and_the_served_ones_keep_working() {
    let sandbox = Sandbox::new();
    let workspace = sandbox.example_workspace();
    let server = HttpServer::start(&sandbox, &["--no-watch", "--cwd", path(&workspace)]);
    // 64 clients that connect and send nothing hold every place
    // (host-runner/src/mcp/http/mod.rs `MAX_CONNECTIONS`).
    let idle: Vec<TcpStream> = (0..64).map(|_| TcpStream::connect(&server.address).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut refused = TcpStream::connect(&server.address).unwrap();
    refused.set_read_timeout(Some(TIMEOUT)).unwrap();
    let started = Instant::now();
    let mut buffer = [0; 64];
    let read = refused.read(&mut buffer);
    assert!(matches!(read, Ok(0)) || read.is_err(), "the 65th connection was served: {read:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "the 65th connection was held, not closed");
    drop(idle);
    std::thread::sleep(Duration::from_millis(200));
    let (status, headers, _) = post(&server, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, None);
    assert_ne!(status, 0, "no answer once the idle clients left: {headers}");
}

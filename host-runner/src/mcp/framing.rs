//! The stdio transport's front door (docs/spec.md §6.9): every line from
//! the client is checked before rmcp sees it, so that bad input gets a
//! JSON-RPC error naming what was wrong (rmcp's own transport drops
//! unparsable lines and oversized ones without a word), and the server keeps
//! serving. Lines that pass go to rmcp through an in-process pipe; its
//! answers and these errors share stdout, one whole line at a time.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use super::McpServer;
use super::duplicate_keys;
use super::notify::LiveRefresh;

/// The longest message accepted from the client, in bytes (4 MiB): a
/// longer line is discarded and answered with an error.
pub const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// JSON-RPC's codes for what this layer refuses.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Hand it to rmcp.
    Forward,
    /// Nothing (a blank line).
    Skip,
    /// Answer with this JSON-RPC error response (one line, no newline).
    Reply(String),
}

/// How the transport delimits messages, for the texts that name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// stdio: one message per line.
    Line,
    /// Streamable HTTP: one message per POST body.
    Request,
}

/// Checks one line (without its newline).
pub fn check(line: &[u8]) -> Verdict {
    check_message(line.strip_suffix(b"\r").unwrap_or(line), Unit::Line)
}

/// Checks one message framed as `unit` says. A blank line is skipped; a
/// blank request body is a parse error, as there is nothing to answer but
/// the request.
pub fn check_message(line: &[u8], unit: Unit) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return match unit {
            Unit::Line => Verdict::Skip,
            Unit::Request => reply(&Value::Null, PARSE_ERROR, "Parse error: the request body is empty".to_owned()),
        };
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(error) => return reply(&Value::Null, PARSE_ERROR, format!("Parse error: not valid JSON: {error}")),
    };
    let object = match &value {
        Value::Object(object) => object,
        Value::Array(_) => {
            let per = match unit {
                Unit::Line => "line",
                Unit::Request => "request",
            };
            return reply(
                &Value::Null,
                INVALID_REQUEST,
                format!("Invalid request: batches (JSON arrays) are not supported; send one message per {per}"),
            );
        }
        _ => {
            return reply(&Value::Null, INVALID_REQUEST, "Invalid request: a message must be a JSON object".to_owned());
        }
    };
    let id = match object.get("id") {
        None => None,
        Some(id @ Value::String(_)) => Some(id.clone()),
        Some(id @ Value::Number(number)) if number.is_i64() || number.is_u64() => Some(id.clone()),
        Some(_) => {
            return reply(
                &Value::Null,
                INVALID_REQUEST,
                "Invalid request: \"id\" must be a string or an integer".to_owned(),
            );
        }
    };
    let mut answer_to = id.clone().unwrap_or(Value::Null);
    // A key twice in one object: parsers disagree on what the message means
    // (rmcp's typed parse fails, and answers without the id), so it is
    // refused as a whole.
    if let Some(duplicate) = duplicate_keys::find(line) {
        if duplicate.pointer.is_empty() && duplicate.key == "id" {
            // Which id is meant is the ambiguity itself.
            answer_to = Value::Null;
        }
        return reply(&answer_to, INVALID_REQUEST, format!("Invalid request: {duplicate}"));
    }
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return reply(&answer_to, INVALID_REQUEST, "Invalid request: \"jsonrpc\" must be \"2.0\"".to_owned());
    }
    let method = match object.get("method") {
        None => None,
        Some(Value::String(method)) => Some(method.clone()),
        Some(_) => {
            return reply(&answer_to, INVALID_REQUEST, "Invalid request: \"method\" must be a string".to_owned());
        }
    };
    match (method, id) {
        (None, _) if !object.contains_key("result") && !object.contains_key("error") => reply(
            &answer_to,
            INVALID_REQUEST,
            "Invalid request: a message needs a \"method\", or a \"result\" or \"error\" answering a request"
                .to_owned(),
        ),
        // A request whose parameters do not fit its method: said here, with
        // its id, instead of rmcp's bare "Invalid request".
        (Some(method), Some(id)) => {
            // rmcp takes a known method with unfitting parameters for a
            // custom one ("method not found"): check those first.
            if let Some(error) = params_error(&method, object.get("params")) {
                return reply(&id, INVALID_PARAMS, format!("Invalid params for {method:?}: {error}"));
            }
            match serde_json::from_value::<ClientJsonRpcMessage>(value) {
                Ok(_) => Verdict::Forward,
                Err(error) => reply(&id, INVALID_PARAMS, format!("Invalid params for {method:?}: {error}")),
            }
        }
        _ => Verdict::Forward,
    }
}

/// Why `params` do not fit `method`, for the methods this server serves
/// that require parameters.
fn params_error(method: &str, params: Option<&Value>) -> Option<String> {
    use rmcp::model::{
        CallToolRequestParams, GetPromptRequestParams, GetSkillRequestParams, ReadResourceRequestParams,
    };
    fn fits<T: serde::de::DeserializeOwned>(params: Option<&Value>) -> Option<String> {
        let params = params.cloned().unwrap_or(Value::Null);
        serde_json::from_value::<T>(params).err().map(|error| error.to_string())
    }
    match method {
        "tools/call" => fits::<CallToolRequestParams>(params),
        "prompts/get" => fits::<GetPromptRequestParams>(params),
        "resources/read" => fits::<ReadResourceRequestParams>(params),
        "skills/get" => fits::<GetSkillRequestParams>(params),
        _ => None,
    }
}

fn reply(id: &Value, code: i64, message: String) -> Verdict {
    Verdict::Reply(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string())
}

/// The error for a line (or a request body) over [`MAX_REQUEST_BYTES`].
pub fn oversized() -> String {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": INVALID_REQUEST, "message": format!(
        "Invalid request: the message is larger than the {} MiB limit ({MAX_REQUEST_BYTES} bytes); it was discarded",
        MAX_REQUEST_BYTES / (1024 * 1024)
    )}})
    .to_string()
}

/// One line read from the client.
enum Line {
    /// A whole line is in the buffer.
    Whole,
    /// A line over the limit, discarded up to its newline.
    Oversized,
    /// The client closed its end.
    Eof,
}

/// Reads one line into `buf`, holding at most [`MAX_REQUEST_BYTES`] of it.
async fn read_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>, buf: &mut Vec<u8>) -> std::io::Result<Line> {
    buf.clear();
    let mut discarding = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if discarding {
                Line::Oversized
            } else if buf.is_empty() {
                Line::Eof
            } else {
                Line::Whole
            });
        }
        let (take, done) = match available.iter().position(|&byte| byte == b'\n') {
            Some(at) => (at, true),
            None => (available.len(), false),
        };
        if !discarding {
            if buf.len() + take > MAX_REQUEST_BYTES {
                discarding = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&available[..take]);
            }
        }
        reader.consume(if done { take + 1 } else { take });
        if done {
            return Ok(if discarding { Line::Oversized } else { Line::Whole });
        }
    }
}

/// Writes one line to the shared output.
async fn write_line<W: AsyncWrite + Unpin>(out: &Mutex<W>, line: &[u8]) -> std::io::Result<()> {
    let mut out = out.lock().await;
    out.write_all(line).await?;
    out.write_all(b"\n").await?;
    out.flush().await
}

/// Serves `server` on stdin and stdout (see the module's documentation).
pub async fn serve(server: McpServer, watch_roots: Vec<PathBuf>) -> std::io::Result<()> {
    #[cfg(unix)]
    if let Some((input, output)) = unix_stdio::polled() {
        let served = serve_on(server, watch_roots, input, output).await;
        unix_stdio::blocking_again();
        return served;
    }
    serve_on(server, watch_roots, tokio::io::stdin(), tokio::io::stdout()).await
}

/// stdin and stdout on the runtime's poller, when each is a pipe or a
/// socket (what a client that spawns the server gives it: Python's
/// `subprocess` makes pipes, Node's `child_process` Unix sockets). Each read
/// and write then waits on the poller; tokio's `stdin()` and `stdout()`
/// hand every one to a blocking thread and back instead. Anything else (a
/// terminal, a file) is served through those.
#[cfg(unix)]
mod unix_stdio {
    use std::os::fd::{AsFd, OwnedFd};
    use std::os::unix::fs::FileTypeExt;

    use tokio::io::{AsyncRead, AsyncWrite};
    use tokio::net::unix::pipe;

    type Input = Box<dyn AsyncRead + Unpin + Send>;
    type Output = Box<dyn AsyncWrite + Unpin + Send>;

    enum Kind {
        Pipe,
        Socket,
    }

    fn kind(fd: &OwnedFd) -> Option<Kind> {
        let kind = std::fs::File::from(fd.try_clone().ok()?).metadata().ok()?.file_type();
        if kind.is_fifo() {
            Some(Kind::Pipe)
        } else if kind.is_socket() {
            Some(Kind::Socket)
        } else {
            None
        }
    }

    fn socket(fd: OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
        let socket = std::os::unix::net::UnixStream::from(fd);
        socket.set_nonblocking(true)?;
        tokio::net::UnixStream::from_std(socket)
    }

    /// Both, or neither (each checked before either is made non-blocking).
    pub(super) fn polled() -> Option<(Input, Output)> {
        let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
        let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
        let (input_kind, output_kind) = (kind(&input)?, kind(&output)?);
        let input: Input = match input_kind {
            Kind::Pipe => Box::new(pipe::Receiver::from_owned_fd(input).ok()?),
            Kind::Socket => Box::new(socket(input).ok()?),
        };
        let output: Output = match output_kind {
            Kind::Pipe => pipe::Sender::from_owned_fd(output).map(|sender| Box::new(sender) as Output),
            Kind::Socket => socket(output).map(|stream| Box::new(stream) as Output),
        }
        .inspect_err(|_| blocking_again())
        .ok()?;
        Some((input, output))
    }

    /// stdin and stdout blocking again, as the process was given them: the
    /// flag belongs to the open file, which whoever else holds it shares.
    pub(super) fn blocking_again() {
        for fd in [std::io::stdin().as_fd(), std::io::stdout().as_fd()] {
            if let Ok(flags) = rustix::fs::fcntl_getfl(fd) {
                let _ = rustix::fs::fcntl_setfl(fd, flags - rustix::fs::OFlags::NONBLOCK);
            }
        }
    }
}

/// [`serve`] on any reader and writer.
pub async fn serve_on<R, W>(server: McpServer, watch_roots: Vec<PathBuf>, input: R, output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let output = Arc::new(Mutex::new(output));
    let (client_end, server_end) = tokio::io::duplex(1024 * 1024);
    let (from_server, mut to_server) = tokio::io::split(client_end);

    // rmcp's answers, line by line, to the shared output.
    let answers = {
        let output = Arc::clone(&output);
        tokio::spawn(async move {
            let mut lines = BufReader::new(from_server);
            let mut line = Vec::new();
            loop {
                line.clear();
                match lines.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let text = line.strip_suffix(b"\n").unwrap_or(&line);
                        if write_line(&output, text).await.is_err() {
                            break;
                        }
                    }
                }
            }
        })
    };

    // The client's lines, checked, to rmcp or answered here.
    let requests = {
        let output = Arc::clone(&output);
        tokio::spawn(async move {
            let mut reader = BufReader::new(input);
            let mut buf = Vec::new();
            loop {
                let verdict = match read_line(&mut reader, &mut buf).await {
                    Ok(Line::Eof) | Err(_) => break,
                    Ok(Line::Oversized) => Verdict::Reply(oversized()),
                    Ok(Line::Whole) => check(&buf),
                };
                let written = match verdict {
                    Verdict::Skip => Ok(()),
                    Verdict::Forward => {
                        async {
                            to_server.write_all(&buf).await?;
                            to_server.write_all(b"\n").await?;
                            to_server.flush().await
                        }
                        .await
                    }
                    Verdict::Reply(error) => write_line(&output, error.as_bytes()).await,
                };
                if written.is_err() {
                    break;
                }
            }
            // rmcp sees the end of its input and stops.
            let _ = to_server.shutdown().await;
        })
    };

    let live = LiveRefresh::start(&server, watch_roots);

    let result = match server.clone().serve(server_end).await {
        // The session's peer joins the notifier when the client says
        // `notifications/initialized` (the handler's `on_initialized`).
        Ok(running) => {
            let _ = running.waiting().await;
            Ok(())
        }
        Err(error) => Err(std::io::Error::other(format!("the MCP session did not start: {error}"))),
    };
    drop(live);
    requests.abort();
    let _ = answers.await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error_of(line: &str) -> Value {
        match check(line.as_bytes()) {
            Verdict::Reply(reply) => serde_json::from_str(&reply).unwrap(),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn bad_messages_get_an_error_naming_the_fault() {
        let parse = error_of("{\"jsonrpc\":");
        assert_eq!(parse["error"]["code"], -32700);
        assert_eq!(parse["id"], Value::Null);
        assert!(parse["error"]["message"].as_str().unwrap().starts_with("Parse error: not valid JSON: "));
        let cases = [
            (
                "[1]",
                Value::Null,
                -32600,
                "Invalid request: batches (JSON arrays) are not supported; send one message per line",
            ),
            ("42", Value::Null, -32600, "Invalid request: a message must be a JSON object"),
            (
                r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#,
                json!(3),
                -32600,
                "Invalid request: \"jsonrpc\" must be \"2.0\"",
            ),
            (
                r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
                Value::Null,
                -32600,
                "Invalid request: \"id\" must be a string or an integer",
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a","method":7}"#,
                json!("a"),
                -32600,
                "Invalid request: \"method\" must be a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":4}"#,
                json!(4),
                -32600,
                "Invalid request: a message needs a \"method\", or a \"result\" or \"error\" answering a request",
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"method":"ping","method":"tools/list"}"#,
                json!(6),
                -32600,
                "Invalid request: duplicate key \"method\" in the message",
            ),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"skill","name":"skill"}}"#,
                json!(7),
                -32600,
                "Invalid request: duplicate key \"name\" in /params",
            ),
            (
                r#"{"jsonrpc":"2.0","id":8,"method":"ping","id":9}"#,
                Value::Null,
                -32600,
                "Invalid request: duplicate key \"id\" in the message",
            ),
        ];
        for (line, id, code, message) in cases {
            let error = error_of(line);
            assert_eq!(
                (&error["id"], &error["error"]["code"], &error["error"]["message"]),
                (&id, &json!(code), &json!(message)),
                "{line}"
            );
        }
        let params = error_of(r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}"#);
        assert_eq!((&params["id"], &params["error"]["code"]), (&json!(5), &json!(-32602)));
        assert!(params["error"]["message"].as_str().unwrap().starts_with("Invalid params for \"tools/call\": "));
    }

    #[test]
    fn good_messages_and_blank_lines_pass() {
        assert_eq!(check(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), Verdict::Forward);
        assert_eq!(check(br#"{"jsonrpc":"2.0","id":1,"method":"no/such/method"}"#), Verdict::Forward);
        assert_eq!(check(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), Verdict::Forward);
        assert_eq!(check(b"  \r"), Verdict::Skip);
    }

    #[test]
    fn a_request_body_is_one_message() {
        let error = |body: &str| match check_message(body.as_bytes(), Unit::Request) {
            Verdict::Reply(reply) => serde_json::from_str::<Value>(&reply).unwrap(),
            other => panic!("{body}: {other:?}"),
        };
        assert_eq!(error(" \n")["error"], json!({"code": -32700, "message": "Parse error: the request body is empty"}));
        assert_eq!(
            error("[]")["error"]["message"],
            "Invalid request: batches (JSON arrays) are not supported; send one message per request"
        );
        // A body may span lines.
        assert_eq!(
            check_message(b"{\n\"jsonrpc\": \"2.0\",\n\"id\": 1,\n\"method\": \"ping\"}\n", Unit::Request),
            Verdict::Forward
        );
    }

    #[test]
    fn the_size_limit_is_named() {
        let error: Value = serde_json::from_str(&oversized()).unwrap();
        assert_eq!(
            error["error"]["message"],
            "Invalid request: the message is larger than the 4 MiB limit (4194304 bytes); it was discarded"
        );
    }
}

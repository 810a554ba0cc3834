//! `skill-host mcp --http ADDR` (docs/spec.md §6.9): the same server over
//! MCP's streamable HTTP transport, at [`ENDPOINT`] on a loopback address.
//!
//! rmcp's [`StreamableHttpService`] speaks the transport (sessions, SSE
//! streams, the standalone GET stream that carries change notifications);
//! hyper's HTTP/1 connection runs it on each accepted socket. In front of it,
//! a front door does what the stdio front door ([`super::framing`]) does for
//! lines, and what a loopback server owes a browser on the same machine:
//!
//! 1. the DNS rebinding guard: a `Host` that does not name this server, or an
//!    `Origin` that is not a loopback one, is refused with 403 ([`LoopbackGuard`]);
//! 2. only [`ENDPOINT`] is served (404 otherwise);
//! 3. a POST body over [`MAX_REQUEST_BYTES`] is refused with 413, and a body
//!    that is not one well-formed JSON-RPC message with 400, each with a
//!    JSON-RPC error naming the fault (rmcp would answer a plain-text 415).
//!
//! What passes goes to rmcp unchanged. rmcp is configured with the same
//! allowed hosts and origins, so its own guard agrees with this one.

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Body, Bytes, Incoming};
use hyper::header::{CONTENT_TYPE, HOST, HeaderMap, HeaderValue, ORIGIN};
use hyper::http::uri::{Authority, Uri};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use super::McpServer;
use super::framing::{self, MAX_REQUEST_BYTES, Unit, Verdict};
use super::notify::LiveRefresh;

/// The path the MCP endpoint is served at.
pub const ENDPOINT: &str = "/mcp";

/// The body of a 404: any path but [`ENDPOINT`].
pub const NOT_FOUND: &str = "Not Found: the MCP endpoint is /mcp";

/// How long a shutdown waits for plugin calls under way (each has its own
/// deadline too).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The most connections served at once; a further one is closed when accepted.
const MAX_CONNECTIONS: usize = 64;

/// How long a client may take to send a request's headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// An HTTP response as rmcp builds them.
pub type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// Why an `--http` address is refused (the texts are `skill-host mcp`'s
/// usage errors).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    /// Not `IP:PORT` (or `localhost:PORT`).
    #[error("{0:?} is not an address: expected IP:PORT, for example 127.0.0.1:8765 or [::1]:8765")]
    Unparsable(String),
    /// An address other machines could reach.
    #[error(
        "{0} is not a loopback address: --http binds loopback addresses only (127.0.0.0/8, ::1, localhost), \
         as the server has no authentication"
    )]
    NotLoopback(SocketAddr),
}

/// Parses `text` as a loopback socket address: `IP:PORT` with a loopback IP
/// (`127.0.0.0/8`, `[::1]`), or `localhost:PORT` (127.0.0.1). Port 0 lets
/// the system choose.
pub fn loopback_address(text: &str) -> Result<SocketAddr, AddressError> {
    let unparsable = || AddressError::Unparsable(text.to_owned());
    let address = match text.parse::<SocketAddr>() {
        Ok(address) => address,
        Err(_) => {
            let (host, port) = text.rsplit_once(':').ok_or_else(unparsable)?;
            if !host.eq_ignore_ascii_case("localhost") {
                return Err(unparsable());
            }
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port.parse().map_err(|_| unparsable())?)
        }
    };
    if address.ip().to_canonical().is_loopback() { Ok(address) } else { Err(AddressError::NotLoopback(address)) }
}

/// The URL a client connects to, for a bound address.
pub fn endpoint_url(bound: SocketAddr) -> String {
    format!("http://{bound}{ENDPOINT}")
}

/// The names this server answers to: `localhost`, the loopback IPs, and the
/// one it is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopbackGuard {
    /// Lowercase, IPv6 without brackets.
    names: Vec<String>,
    port: u16,
}

/// Why the guard refused a request: the 403's body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// No `Host` header (HTTP/1.1 requires one).
    #[error("Forbidden: no Host header (DNS rebinding guard)")]
    NoHost,
    /// A `Host` that does not name this server.
    #[error("Forbidden: Host {0:?} is not this server's loopback address (DNS rebinding guard)")]
    Host(String),
    /// An `Origin` that is not a loopback one.
    #[error("Forbidden: Origin {0:?} is not a loopback origin (DNS rebinding guard)")]
    Origin(String),
}

impl LoopbackGuard {
    /// The guard for a server bound to `bound`.
    pub fn new(bound: SocketAddr) -> Self {
        let mut names: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(str::to_owned).into();
        // As bound (`::ffff:127.0.0.2`, the URL printed) and as IPv4.
        for own in [bound.ip(), bound.ip().to_canonical()] {
            let own = own.to_string();
            if !names.contains(&own) {
                names.push(own);
            }
        }
        Self { names, port: bound.port() }
    }

    /// Whether `headers` may reach the server: `Host` names this server and
    /// its port (no port: only when it is 80), and an `Origin`, when there
    /// is one, is `http` or `https` on a loopback name, any port.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = headers.get(HOST).ok_or(Refusal::NoHost)?;
        let text = lossy(host);
        let authority = text.parse::<Authority>().map_err(|_| Refusal::Host(text.clone()))?;
        let port = authority.port_u16().unwrap_or(80);
        if port != self.port || !self.names_it(authority.host()) {
            return Err(Refusal::Host(text));
        }
        if let Some(origin) = headers.get(ORIGIN) {
            let text = lossy(origin);
            let loopback = text.parse::<Uri>().ok().is_some_and(|uri| {
                matches!(uri.scheme_str(), Some("http" | "https"))
                    && uri.path_and_query().is_none_or(|path| path.as_str() == "/")
                    && uri.authority().is_some_and(|authority| self.names_it(authority.host()))
            });
            if !loopback {
                return Err(Refusal::Origin(text));
            }
        }
        Ok(())
    }

    fn names_it(&self, host: &str) -> bool {
        let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        self.names.contains(&host)
    }

    /// The same rule in rmcp's terms, for its own check behind this one.
    fn configure(&self, config: StreamableHttpServerConfig) -> StreamableHttpServerConfig {
        let bracketed = |name: &String| if name.contains(':') { format!("[{name}]") } else { name.clone() };
        let mut hosts: Vec<String> =
            self.names.iter().map(|name| format!("{}:{}", bracketed(name), self.port)).collect();
        if self.port == 80 {
            hosts.extend(self.names.iter().map(bracketed));
        }
        let origins: Vec<String> = ["http", "https"]
            .iter()
            .flat_map(|scheme| self.names.iter().map(move |name| format!("{scheme}://{}:*", bracketed(name))))
            .collect();
        config.with_allowed_hosts(hosts).with_allowed_origins(origins)
    }
}

fn lossy(value: &HeaderValue) -> String {
    String::from_utf8_lossy(value.as_bytes()).into_owned()
}

fn respond(status: StatusCode, content_type: &'static str, body: String) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn plain(status: StatusCode, text: String) -> HttpResponse {
    respond(status, "text/plain; charset=utf-8", text)
}

/// A refusal the stdio front door would answer the same way.
fn json_rpc_error(status: StatusCode, error: String) -> HttpResponse {
    respond(status, "application/json", error)
}

/// Reads a POST body, at most [`MAX_REQUEST_BYTES`] of it whatever its
/// `Content-Length` says, and checks that it is one JSON-RPC message
/// ([`framing::check_message`]). The refusal is the response to send.
pub async fn read_message<B>(body: B) -> Result<Bytes, HttpResponse>
where
    B: Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    // A declared length over the limit is refused before reading any of it.
    if body.size_hint().lower() > MAX_REQUEST_BYTES as u64 {
        return Err(json_rpc_error(StatusCode::PAYLOAD_TOO_LARGE, framing::oversized()));
    }
    let bytes = match Limited::new(body, MAX_REQUEST_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => {
            return Err(json_rpc_error(StatusCode::PAYLOAD_TOO_LARGE, framing::oversized()));
        }
        Err(error) => {
            return Err(plain(
                StatusCode::BAD_REQUEST,
                format!("Bad Request: the request body could not be read: {error}"),
            ));
        }
    };
    match framing::check_message(&bytes, Unit::Request) {
        Verdict::Forward | Verdict::Skip => Ok(bytes),
        Verdict::Reply(error) => Err(json_rpc_error(StatusCode::BAD_REQUEST, error)),
    }
}

/// The checks in front of rmcp (see the module's documentation).
#[derive(Clone)]
struct FrontDoor {
    mcp: StreamableHttpService<McpServer, LocalSessionManager>,
    guard: Arc<LoopbackGuard>,
}

impl FrontDoor {
    /// Answers one request.
    async fn answer(self, request: Request<Incoming>) -> HttpResponse {
        if let Err(refusal) = self.guard.check(request.headers()) {
            return plain(StatusCode::FORBIDDEN, refusal.to_string());
        }
        if request.uri().path() != ENDPOINT {
            return plain(StatusCode::NOT_FOUND, NOT_FOUND.to_owned());
        }
        if request.method() != Method::POST {
            return self.mcp.handle(request).await;
        }
        let (parts, body) = request.into_parts();
        match read_message(body).await {
            Ok(bytes) => self.mcp.handle(Request::from_parts(parts, Full::new(bytes))).await,
            Err(refusal) => refusal,
        }
    }
}

/// Serves `server` over streamable HTTP on `address` until SIGINT or
/// SIGTERM. `listening` is told the bound address (port 0 picks one) once
/// the server accepts connections. With `watch_roots`, changes are
/// notified as on stdio, to every open session.
pub fn serve_http(
    server: McpServer,
    watch_roots: Vec<PathBuf>,
    address: SocketAddr,
    listening: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let result = runtime.block_on(async {
        let listener = TcpListener::bind(address)
            .await
            .map_err(|error| std::io::Error::new(error.kind(), format!("cannot listen on {address}: {error}")))?;
        listening(listener.local_addr()?);
        serve_on(server, watch_roots, listener, shutdown_signal()).await
    });
    // A plugin call under way ends by its deadline; do not wait past this.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    result
}

/// [`serve_http`] on a bound listener, until `shutdown` completes.
pub async fn serve_on(
    server: McpServer,
    watch_roots: Vec<PathBuf>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let guard = Arc::new(LoopbackGuard::new(listener.local_addr()?));
    let config = guard.configure(StreamableHttpServerConfig::default()).with_max_request_body_bytes(MAX_REQUEST_BYTES);
    // rmcp's own token (tokio-util's), cancelled to stop its sessions and
    // streams, and the connections here.
    let stopping = config.cancellation_token.clone();
    let factory = server.clone();
    let mcp = StreamableHttpService::new(move || Ok(factory.clone()), Arc::new(LocalSessionManager::default()), config);
    let front = FrontDoor { mcp, guard };
    let _live = LiveRefresh::start(&server, watch_roots);

    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // A connection that failed before it was accepted (reset,
                // out of descriptors for a moment): the server goes on,
                // without spinning while descriptors are short.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Past the cap, a new connection is closed at once: the ones being
        // served keep their answers.
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let front = front.clone();
        let stopping = stopping.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |request| {
                let front = front.clone();
                async move { Ok::<_, Infallible>(front.answer(request).await) }
            });
            // A client that never finishes its headers is cut off.
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stopping.cancelled() => {
                    // rmcp ends its streams on the same token; the answer
                    // being written is finished, then the connection closes.
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    stopping.cancel();
    Ok(())
}

/// Completes on SIGINT (Ctrl-C) or, on Unix, SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            // Not listening: the default action still ends the process.
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn addresses_are_loopback_only() {
        assert_eq!(loopback_address("127.0.0.1:8765"), Ok("127.0.0.1:8765".parse().unwrap()));
        assert_eq!(loopback_address("[::1]:0"), Ok("[::1]:0".parse().unwrap()));
        assert_eq!(loopback_address("127.3.4.5:1"), Ok("127.3.4.5:1".parse().unwrap()));
        assert_eq!(loopback_address("localhost:80"), Ok("127.0.0.1:80".parse().unwrap()));
        assert_eq!(loopback_address("LocalHost:80"), Ok("127.0.0.1:80".parse().unwrap()));
        assert_eq!(
            loopback_address("0.0.0.0:1").unwrap_err().to_string(),
            "0.0.0.0:1 is not a loopback address: --http binds loopback addresses only \
             (127.0.0.0/8, ::1, localhost), as the server has no authentication"
        );
        assert!(matches!(loopback_address("[::]:1"), Err(AddressError::NotLoopback(_))));
        assert!(matches!(loopback_address("192.168.1.2:1"), Err(AddressError::NotLoopback(_))));
        assert_eq!(
            loopback_address("nowhere").unwrap_err().to_string(),
            "\"nowhere\" is not an address: expected IP:PORT, for example 127.0.0.1:8765 or [::1]:8765"
        );
        for bad in ["127.0.0.1", "127.0.0.1:port", "localhost", "localhost:99999", "example.com:80", ":80", ""] {
            assert_eq!(loopback_address(bad), Err(AddressError::Unparsable(bad.to_owned())), "{bad}");
        }
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(hyper::header::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
        }
        map
    }

    #[test]
    fn the_guard_lets_only_this_server_s_names_through() {
        let guard = LoopbackGuard::new("127.0.0.1:8765".parse().unwrap());
        for host in ["127.0.0.1:8765", "localhost:8765", "LOCALHOST:8765", "[::1]:8765"] {
            assert_eq!(guard.check(&headers(&[("host", host)])), Ok(()), "{host}");
        }
        for origin in ["http://localhost:3000", "https://127.0.0.1", "http://[::1]:8765", "http://localhost:8765/"] {
            assert_eq!(guard.check(&headers(&[("host", "localhost:8765"), ("origin", origin)])), Ok(()), "{origin}");
        }
        assert_eq!(guard.check(&HeaderMap::new()), Err(Refusal::NoHost));
        for host in ["evil.example:8765", "127.0.0.1:8766", "127.0.0.1", "localhost.evil.example:8765", "a b"] {
            assert_eq!(guard.check(&headers(&[("host", host)])), Err(Refusal::Host(host.to_owned())), "{host}");
        }
        for origin in ["http://evil.example", "null", "file://localhost", "ftp://localhost", "http://localhost/x"] {
            assert_eq!(
                guard.check(&headers(&[("host", "localhost:8765"), ("origin", origin)])),
                Err(Refusal::Origin(origin.to_owned())),
                "{origin}"
            );
        }
        assert_eq!(
            Refusal::Host("evil.example:8765".to_owned()).to_string(),
            "Forbidden: Host \"evil.example:8765\" is not this server's loopback address (DNS rebinding guard)"
        );
        assert_eq!(
            Refusal::Origin("http://evil.example".to_owned()).to_string(),
            "Forbidden: Origin \"http://evil.example\" is not a loopback origin (DNS rebinding guard)"
        );
        // Its own address, and a port-less Host on port 80.
        let other = LoopbackGuard::new("127.0.0.9:80".parse().unwrap());
        assert_eq!(other.check(&headers(&[("host", "127.0.0.9")])), Ok(()));
        assert_eq!(other.check(&headers(&[("host", "127.0.0.9:80")])), Ok(()));
        assert!(guard.check(&headers(&[("host", "127.0.0.9:8765")])).is_err());
        let mapped = LoopbackGuard::new("[::ffff:127.0.0.2]:8765".parse().unwrap());
        assert_eq!(mapped.check(&headers(&[("host", "[::ffff:127.0.0.2]:8765")])), Ok(()));
        assert_eq!(mapped.check(&headers(&[("host", "127.0.0.2:8765")])), Ok(()));
    }

    #[test]
    fn rmcp_is_told_the_same_names() {
        let config = LoopbackGuard::new("[::1]:8765".parse().unwrap()).configure(StreamableHttpServerConfig::default());
        assert_eq!(config.allowed_hosts, ["localhost:8765", "127.0.0.1:8765", "[::1]:8765"]);
        assert_eq!(
            config.allowed_origins,
            [
                "http://localhost:*",
                "http://127.0.0.1:*",
                "http://[::1]:*",
                "https://localhost:*",
                "https://127.0.0.1:*",
                "https://[::1]:*"
            ]
        );
    }

    async fn refusal_of(body: Full<Bytes>) -> (StatusCode, Value) {
        let response = read_message(body).await.expect_err("refused");
        let status = response.status();
        assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[test]
    fn bodies_are_bounded_and_checked() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
            assert_eq!(read_message(Full::new(Bytes::from(ping))).await.unwrap(), ping);
            let (status, error) = refusal_of(Full::new(Bytes::from("not JSON"))).await;
            assert_eq!(
                (status, &error["id"], &error["error"]["code"]),
                (StatusCode::BAD_REQUEST, &Value::Null, &json!(-32700))
            );
            let (status, error) = refusal_of(Full::new(Bytes::new())).await;
            assert_eq!(status, StatusCode::BAD_REQUEST);
            assert_eq!(error["error"]["message"], "Parse error: the request body is empty");
            let oversized = format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"pad":"{}"}}}}"#,
                "x".repeat(MAX_REQUEST_BYTES)
            );
            let (status, error) = refusal_of(Full::new(Bytes::from(oversized))).await;
            assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
            assert_eq!(
                error["error"]["message"],
                "Invalid request: the message is larger than the 4 MiB limit (4194304 bytes); it was discarded"
            );
            // Exactly the limit is fine (as JSON, it is then a parse error).
            let (status, _) = refusal_of(Full::new(Bytes::from(vec![b'x'; MAX_REQUEST_BYTES]))).await;
            assert_eq!(status, StatusCode::BAD_REQUEST);
        });
    }

    /// A body sent in chunks, of a length it does not declare.
    struct Chunks(std::collections::VecDeque<Bytes>);

    impl Body for Chunks {
        type Data = Bytes;
        type Error = Infallible;

        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
            std::task::Poll::Ready(self.0.pop_front().map(|chunk| Ok(hyper::body::Frame::data(chunk))))
        }
    }

    #[test]
    fn an_undeclared_length_is_bounded_while_reading() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let chunk = Bytes::from(vec![b' '; 1 << 20]);
            let body = Chunks((0..5).map(|_| chunk.clone()).collect());
            assert_eq!(body.size_hint().upper(), None);
            let response = read_message(body).await.expect_err("refused");
            assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
            let body = Chunks([r#"{"jsonrpc":"2.0","#, r#""id":1,"method":"ping"}"#].map(Bytes::from).into());
            assert_eq!(read_message(body).await.unwrap(), r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        });
    }

    #[test]
    fn the_404_names_the_endpoint() {
        assert_eq!(NOT_FOUND, "Not Found: the MCP endpoint is /mcp");
        assert_eq!(endpoint_url("[::1]:8765".parse().unwrap()), "http://[::1]:8765/mcp");
    }
}

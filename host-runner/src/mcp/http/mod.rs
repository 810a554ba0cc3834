//! `skill-host mcp --http ADDR` (docs/spec.md §6.9): the same server over
//! MCP's streamable HTTP transport, at [`ENDPOINT`] on a loopback address.
//!
//! rmcp's [`StreamableHttpService`] speaks the transport (sessions, SSE
//! streams, the standalone GET stream that carries change notifications);
//! hyper's HTTP/1 connection runs it on each accepted socket. In front of it,
//! a front door does what the stdio front door (`mcp/framing.rs`) does for
//! lines, and what a loopback server owes a browser on the same machine:
//!
//! 1. the DNS rebinding guard: a `Host` that does not name this server, or an
//!    `Origin` that is not a loopback one, is refused with 403, and two of
//!    either, or userinfo in either, with 400 (`LoopbackGuard`, guard.rs);
//! 2. only [`ENDPOINT`] is served (404 otherwise);
//! 3. a POST body over [`MAX_REQUEST_BYTES`] is refused with 413, a body not
//!    received within the read timeout with 408, and a body that is not one
//!    well-formed JSON-RPC message with 400, each with a JSON-RPC error
//!    naming the fault (rmcp would answer a plain-text 415).
//!
//! What passes goes to rmcp unchanged. rmcp is configured with the same
//! allowed hosts and origins, so its own guard agrees with this one, and
//! runs its sessions in `BoundedSessions` (sessions.rs). On the way back, the event
//! stream answering a request of the 2026-07-28 revision loses the log
//! messages below the level the request's `_meta` asks for, all of them when
//! it asks for none (`LogLevelFilter`, log_level.rs, SEP-2575; rmcp would send whatever
//! a handler logs).
//!
//! Every wait on a client is bounded ([`HttpLimits`]): [`MAX_CONNECTIONS`]
//! at once, [`READ_TIMEOUT`] for a request's headers and again for its body,
//! [`MAX_SESSIONS`] sessions, each closed after [`SESSION_IDLE_LIFETIME`]
//! unused.

use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::{Body, Bytes, Incoming};
use hyper::header::{CONNECTION, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::ServerHandler;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use super::McpServer;
use super::framing::{self, MAX_REQUEST_BYTES, Unit, Verdict};
use super::notify::LiveRefresh;

mod guard;
mod log_level;
mod sessions;

pub(crate) use self::guard::LoopbackGuard;
pub(crate) use self::log_level::LogLevelFilter;
pub(crate) use self::sessions::BoundedSessions;
pub use self::sessions::{MAX_SESSIONS, SESSION_IDLE_LIFETIME};

/// The path the MCP endpoint is served at.
pub const ENDPOINT: &str = "/mcp";

/// The body of a 404: any path but [`ENDPOINT`].
pub const NOT_FOUND: &str = "Not Found: the MCP endpoint is /mcp";

/// How long a shutdown waits for plugin calls under way (each has its own
/// deadline too).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The most connections served at once; a further one is closed when accepted.
pub const MAX_CONNECTIONS: usize = 64;

/// How long a client may take to send a request's headers, and then again
/// to send its body (`--read-timeout`): a client that stalls gives its
/// connection back within this time.
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The limits on what clients may hold; [`HttpLimits::default`] is
/// `skill-host mcp --http` with no options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// How long a client may take to send a request's headers, and then its
    /// body ([`READ_TIMEOUT`]).
    pub read_timeout: Duration,
    /// How long a session may go unused before it is closed
    /// ([`SESSION_IDLE_LIFETIME`]).
    pub session_idle: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self { read_timeout: READ_TIMEOUT, session_idle: SESSION_IDLE_LIFETIME }
    }
}

/// The body of a 408: a request body not received within `limit`.
pub(crate) fn body_timeout(limit: Duration) -> String {
    let limit =
        if limit.subsec_millis() == 0 { format!("{} s", limit.as_secs()) } else { format!("{} ms", limit.as_millis()) };
    format!("Request Timeout: the request body did not arrive within {limit}")
}

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
/// (`framing::check_message`). The refusal is the response to send.
pub(crate) async fn read_message<B>(body: B) -> Result<Bytes, HttpResponse>
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

/// The checks in front of rmcp (see the module's documentation), for the
/// handler `H` ([`McpServer`], or a handler built around it).
#[derive(Clone)]
struct FrontDoor<H> {
    mcp: StreamableHttpService<H, BoundedSessions>,
    guard: Arc<LoopbackGuard>,
    read_timeout: Duration,
}

impl<H: ServerHandler> FrontDoor<H> {
    /// Answers one request.
    async fn answer(self, request: Request<Incoming>) -> HttpResponse {
        if let Err(refusal) = self.guard.check(request.headers()) {
            return plain(refusal.status(), refusal.to_string());
        }
        if request.uri().path() != ENDPOINT {
            return plain(StatusCode::NOT_FOUND, NOT_FOUND.to_owned());
        }
        if request.method() != Method::POST {
            return self.mcp.handle(request).await;
        }
        let (parts, body) = request.into_parts();
        match tokio::time::timeout(self.read_timeout, read_message(body)).await {
            Ok(Ok(bytes)) => {
                let logs = LogLevelFilter::for_request(&bytes);
                let response = self.mcp.handle(Request::from_parts(parts, Full::new(bytes))).await;
                match logs {
                    Some(logs) => logs.apply(response),
                    None => response,
                }
            }
            Ok(Err(refusal)) => refusal,
            Err(_) => {
                // The rest of the body is not read: the connection ends.
                let mut response = plain(StatusCode::REQUEST_TIMEOUT, body_timeout(self.read_timeout));
                response.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
                response
            }
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
    limits: HttpLimits,
    listening: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let result = runtime.block_on(async {
        let listener = TcpListener::bind(address)
            .await
            .map_err(|error| std::io::Error::new(error.kind(), format!("cannot listen on {address}: {error}")))?;
        listening(listener.local_addr()?);
        serve_on(server, watch_roots, listener, limits, shutdown_signal()).await
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
    limits: HttpLimits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    serve_handler_on(server.clone(), &server, watch_roots, listener, limits, shutdown).await
}

/// [`serve_on`] with `handler` answering the requests in place of `server`:
/// a handler built around `server` that forwards to it (the conformance
/// test's fixture, which adds the MCP SDKs' diagnostic tools). Everything
/// else is `serve_on`'s: the front door, the limits, and `server`'s watcher,
/// whose change notifications reach the subscriptions `handler` hands to
/// `server`'s `listen`.
pub async fn serve_handler_on<H>(
    handler: H,
    server: &McpServer,
    watch_roots: Vec<PathBuf>,
    listener: TcpListener,
    limits: HttpLimits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    H: ServerHandler + Clone,
{
    let guard = Arc::new(LoopbackGuard::new(listener.local_addr()?));
    let config = guard.configure(StreamableHttpServerConfig::default()).with_max_request_body_bytes(MAX_REQUEST_BYTES);
    // rmcp's own token (tokio-util's), cancelled to stop its sessions and
    // streams, and the connections here.
    let stopping = config.cancellation_token.clone();
    let sessions = Arc::new(BoundedSessions::new(MAX_SESSIONS, limits.session_idle));
    let mcp = StreamableHttpService::new(move || Ok(handler.clone()), sessions, config);
    let read_timeout = limits.read_timeout;
    let front = FrontDoor { mcp, guard, read_timeout };
    let _live = LiveRefresh::start(server, watch_roots);

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
            // A client that never finishes its headers is cut off (its
            // body: in `FrontDoor::answer`).
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(read_timeout)
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
mod tests;

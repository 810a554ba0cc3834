//! The front door's first check: whether a request's `Host` and `Origin`
//! name this loopback server (the DNS rebinding guard), and are each one
//! unambiguous header (RFC 9112 §3.2: a request with two `Host` fields, or
//! an invalid one, is answered 400; neither field may carry userinfo).

use std::net::SocketAddr;

use hyper::StatusCode;
use hyper::header::{HOST, HeaderMap, HeaderValue, ORIGIN};
use hyper::http::uri::{Authority, Uri};
use rmcp::transport::StreamableHttpServerConfig;

/// The names this server answers to: `localhost`, the loopback IPs, and the
/// one it is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopbackGuard {
    /// Lowercase, IPv6 without brackets.
    names: Vec<String>,
    port: u16,
}

/// Why the guard refused a request: the body of the answer, whose status is
/// [`Refusal::status`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Two `Host` headers: which server is meant is ambiguous.
    #[error("Bad Request: more than one Host header")]
    TwoHosts,
    /// Two `Origin` headers.
    #[error("Bad Request: more than one Origin header")]
    TwoOrigins,
    /// A `Host` with `user@` (not part of its grammar, and a way to make one
    /// text read as two names).
    #[error("Bad Request: Host {0:?} holds userinfo (`user@`), which a Host header may not")]
    HostUserinfo(String),
    /// An `Origin` with `user@` (an origin is scheme, host and port only).
    #[error("Bad Request: Origin {0:?} holds userinfo (`user@`), which an Origin header may not")]
    OriginUserinfo(String),
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

impl Refusal {
    /// 400 for a malformed header, 403 for one that names another server.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::TwoHosts | Self::TwoOrigins | Self::HostUserinfo(_) | Self::OriginUserinfo(_) => {
                StatusCode::BAD_REQUEST
            }
            Self::NoHost | Self::Host(_) | Self::Origin(_) => StatusCode::FORBIDDEN,
        }
    }
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
        if headers.get_all(HOST).iter().nth(1).is_some() {
            return Err(Refusal::TwoHosts);
        }
        if headers.get_all(ORIGIN).iter().nth(1).is_some() {
            return Err(Refusal::TwoOrigins);
        }
        let host = headers.get(HOST).ok_or(Refusal::NoHost)?;
        let text = lossy(host);
        if text.contains('@') {
            return Err(Refusal::HostUserinfo(text));
        }
        let authority = text.parse::<Authority>().map_err(|_| Refusal::Host(text.clone()))?;
        let port = authority.port_u16().unwrap_or(80);
        if port != self.port || !self.names_it(authority.host()) {
            return Err(Refusal::Host(text));
        }
        if let Some(origin) = headers.get(ORIGIN) {
            let text = lossy(origin);
            let uri = text.parse::<Uri>().ok();
            if uri.as_ref().and_then(Uri::authority).is_some_and(|authority| authority.as_str().contains('@')) {
                return Err(Refusal::OriginUserinfo(text));
            }
            let loopback = uri.is_some_and(|uri| {
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
    pub(super) fn configure(&self, config: StreamableHttpServerConfig) -> StreamableHttpServerConfig {
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

//! A loopback HTTP/1.1 server with canned replies, started by each test that
//! needs one: its routes can change while it runs, and it records every
//! request's path and `Authorization` header.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a connection may stay silent (a client that never finishes its
/// request, or never closes after a [`Reply::Hang`]) before the server drops
/// it; also the bound on writing a reply.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest request head the server reads; a longer one is dropped
/// unanswered.
const MAX_HEAD_BYTES: usize = 16 * 1024;

/// What the server answers for one path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// 200 with this body.
    Body(Vec<u8>),
    /// This status with an empty body.
    Status(u16),
    /// Nothing: the connection stays open until the client gives up (or for
    /// at most [`IDLE_TIMEOUT`]).
    Hang,
    /// 302 to this location.
    Redirect(String),
    /// 200 with this body, its `ETag` and, when given, `Cache-Control:
    /// max-age`; `304 Not Modified` with no body to a request whose
    /// `If-None-Match` is that `ETag`.
    Tagged {
        /// The body.
        body: Vec<u8>,
        /// The `ETag` value, quotes included.
        etag: String,
        /// `max-age` in seconds.
        max_age: Option<u64>,
    },
}

/// A 200 reply with `text` as its body.
pub fn body(text: &str) -> Reply {
    Reply::Body(text.as_bytes().to_vec())
}

/// Routes, shared by the server's threads.
type Routes = Arc<Mutex<Vec<(String, Reply)>>>;

/// A one-thread-per-connection HTTP/1.1 server bound to 127.0.0.1 on a port
/// of its own, answering each path with its [`Reply`] (unknown paths: 404),
/// stopped when dropped.
pub struct Server {
    addr: SocketAddr,
    routes: Routes,
    /// Every request's path, in order.
    requests: Arc<Mutex<Vec<String>>>,
    /// Every request's `Authorization` header (empty when it had none).
    authorizations: Arc<Mutex<Vec<String>>>,
    /// Every request's `If-None-Match` header (empty when it had none).
    conditions: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts a server answering `routes` (a path such as `/index.json`, and
    /// its reply).
    ///
    /// # Panics
    ///
    /// If no port on 127.0.0.1 can be bound.
    pub fn start(routes: &[(&str, Reply)]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port on 127.0.0.1");
        let addr = listener.local_addr().expect("the bound address");
        let routes: Routes = Arc::new(Mutex::new(routes.iter().map(|(p, r)| ((*p).to_owned(), r.clone())).collect()));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let authorizations = Arc::new(Mutex::new(Vec::new()));
        let conditions = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (routes, requests, stop) = (Arc::clone(&routes), Arc::clone(&requests), Arc::clone(&stop));
            let (authorizations, conditions) = (Arc::clone(&authorizations), Arc::clone(&conditions));
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (routes, requests) = (Arc::clone(&routes), Arc::clone(&requests));
                    let (authorizations, conditions) = (Arc::clone(&authorizations), Arc::clone(&conditions));
                    std::thread::spawn(move || answer(stream, &routes, &requests, &authorizations, &conditions));
                }
            })
        };
        Self { addr, routes, requests, authorizations, conditions, stop, thread: Some(thread) }
    }

    /// The address it listens on (127.0.0.1 and its port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The `http://` URL of `path` (which starts with `/`) on this server.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// [`url`](Self::url) as the remote provider's index URL.
    ///
    /// # Panics
    ///
    /// If the URL is not a valid index URL.
    #[cfg(feature = "remote")]
    pub fn index(&self, path: &str) -> crate::providers::remote::IndexUrl {
        self.url(path).parse().expect("a valid index URL")
    }

    /// Answers `path` with `reply` from now on, replacing its previous reply.
    pub fn set(&self, path: &str, reply: Reply) {
        let mut routes = self.routes.lock().unwrap();
        routes.retain(|(p, _)| p != path);
        routes.push((path.to_owned(), reply));
    }

    /// Every request's path so far, in the order they arrived.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }

    /// Every request's `Authorization` header so far, in the order they
    /// arrived (an empty string for a request without one).
    pub fn authorizations(&self) -> Vec<String> {
        self.authorizations.lock().unwrap().clone()
    }
}

impl Server {
    /// Every request's `If-None-Match` header so far, in the order they
    /// arrived (an empty string for a request without one).
    pub fn conditions(&self) -> Vec<String> {
        self.conditions.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(5));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn answer(
    mut stream: TcpStream,
    routes: &Mutex<Vec<(String, Reply)>>,
    requests: &Mutex<Vec<String>>,
    authorizations: &Mutex<Vec<String>>,
    conditions: &Mutex<Vec<String>>,
) {
    // A bound on how long a connection may linger if a client never closes.
    let _ = stream.set_read_timeout(Some(IDLE_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IDLE_TIMEOUT));
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < MAX_HEAD_BYTES {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1).unwrap_or("").to_owned();
    requests.lock().unwrap().push(path.clone());
    let authorization =
        head.lines().find_map(|line| line.strip_prefix("authorization: ").or(line.strip_prefix("Authorization: ")));
    authorizations.lock().unwrap().push(authorization.unwrap_or_default().to_owned());
    let condition = header(&head, "if-none-match").unwrap_or_default().to_owned();
    conditions.lock().unwrap().push(condition.clone());
    let reply = routes.lock().unwrap().iter().find(|(p, _)| *p == path).map(|(_, r)| r.clone());
    let mut extra = String::new();
    let (status, body) = match reply {
        Some(Reply::Body(body)) => (200, body),
        Some(Reply::Status(status)) => (status, Vec::new()),
        Some(Reply::Redirect(location)) => {
            extra = format!("Location: {location}\r\n");
            (302, Vec::new())
        }
        Some(Reply::Tagged { body, etag, max_age }) => {
            extra = format!("ETag: {etag}\r\n");
            if let Some(age) = max_age {
                extra.push_str(&format!("Cache-Control: max-age={age}\r\n"));
            }
            if condition == etag { (304, Vec::new()) } else { (200, body) }
        }
        Some(Reply::Hang) => {
            // Read until the client closes the connection after its timeout.
            let mut sink = [0u8; 64];
            while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
            return;
        }
        None => (404, Vec::new()),
    };
    let mut response =
        format!("HTTP/1.1 {status} Canned\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n", body.len())
            .into_bytes();
    response.extend_from_slice(&body);
    let _ = stream.write_all(&response);
    let _ = stream.shutdown(Shutdown::Write);
}

/// The value of the header `name` (lowercase) in a request head.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

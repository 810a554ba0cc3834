use super::guard::Refusal;
use super::*;
use hyper::header::HeaderMap;
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
fn ambiguous_host_and_origin_headers_are_bad_requests() {
    let guard = LoopbackGuard::new("127.0.0.1:8765".parse().unwrap());
    let own = ("host", "127.0.0.1:8765");
    for (pairs, refusal) in [
        (vec![own, own], Refusal::TwoHosts),
        (vec![own, ("host", "evil.example")], Refusal::TwoHosts),
        (vec![own, ("origin", "http://localhost"), ("origin", "http://localhost")], Refusal::TwoOrigins),
        (vec![("host", "u@127.0.0.1:8765")], Refusal::HostUserinfo("u@127.0.0.1:8765".to_owned())),
        (
            vec![("host", "evil.example@127.0.0.1:8765")],
            Refusal::HostUserinfo("evil.example@127.0.0.1:8765".to_owned()),
        ),
        (
            vec![own, ("origin", "http://u:p@localhost:3000")],
            Refusal::OriginUserinfo("http://u:p@localhost:3000".to_owned()),
        ),
    ] {
        let refused = guard.check(&headers(&pairs)).unwrap_err();
        assert_eq!((&refused, refused.status()), (&refusal, StatusCode::BAD_REQUEST), "{pairs:?}");
    }
    assert_eq!(Refusal::Host("x".to_owned()).status(), StatusCode::FORBIDDEN);
    assert_eq!(Refusal::NoHost.status(), StatusCode::FORBIDDEN);
    assert_eq!(Refusal::TwoHosts.to_string(), "Bad Request: more than one Host header");
    assert_eq!(Refusal::TwoOrigins.to_string(), "Bad Request: more than one Origin header");
    assert_eq!(
        Refusal::HostUserinfo("u@h:1".to_owned()).to_string(),
        "Bad Request: Host \"u@h:1\" holds userinfo (`user@`), which a Host header may not"
    );
    assert_eq!(
        Refusal::OriginUserinfo("http://u@h".to_owned()).to_string(),
        "Bad Request: Origin \"http://u@h\" holds userinfo (`user@`), which an Origin header may not"
    );
}

#[test]
fn the_limits_are_named_and_their_texts_pinned() {
    assert_eq!(MAX_CONNECTIONS, 64);
    assert_eq!(MAX_SESSIONS, 128);
    assert_eq!(
        HttpLimits::default(),
        HttpLimits { read_timeout: Duration::from_secs(10), session_idle: Duration::from_secs(300) }
    );
    assert_eq!(body_timeout(READ_TIMEOUT), "Request Timeout: the request body did not arrive within 10 s");
    assert_eq!(
        body_timeout(Duration::from_millis(1500)),
        "Request Timeout: the request body did not arrive within 1500 ms"
    );
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

//! The remote provider's HTTP: one agent per provider, GETs that follow
//! redirects themselves (bounded, never from HTTPS down to plain HTTP, never
//! with credentials), conditional re-reads and what a response says about
//! caching it, and a private CA's certificates.

use std::fmt;
use std::time::{Duration, Instant};

use url::Url;

use super::{MAX_REDIRECTS, RemoteProvider, check_scheme, shown};

/// Whether a request for `from` may follow a redirect to `to`: only to
/// `http` or `https`, and never from HTTPS down to plain HTTP (whoever can
/// redirect could otherwise hand the index to anyone on the network path).
pub(super) fn check_redirect(from: &Url, to: &Url) -> Result<(), String> {
    check_scheme(to).map_err(|reason| format!("redirected to {to}: {reason}"))?;
    if from.scheme() == "https" && to.scheme() == "http" {
        return Err(format!(
            "redirected from {} to {to}, which is plain HTTP: a redirect from HTTPS to HTTP is refused",
            shown(from)
        ));
    }
    Ok(())
}

/// What a GET answered, redirects followed.
pub(super) enum Answer {
    /// 2xx and the body's bytes ([`utf8`] reads them as text).
    Body { bytes: Vec<u8>, validators: Validators },
    /// 304 to a conditional request: the copy whose `ETag` was sent still holds.
    NotModified(Validators),
    /// 404 or 410: nothing there.
    Gone,
}

/// A body as UTF-8 text; `Err` says where it is not.
pub(super) fn utf8(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes)
        .map_err(|error| format!("not UTF-8 text (invalid byte at offset {})", error.utf8_error().valid_up_to()))
}

/// What a response says about caching it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Validators {
    /// The `ETag`, as sent (quotes and a weak `W/` included).
    pub(super) etag: Option<String>,
    /// `Cache-Control: max-age` (zero for `no-cache` or `no-store`).
    pub(super) max_age: Option<Duration>,
    /// `Cache-Control: no-store`: no copy may be kept.
    pub(super) no_store: bool,
}

impl Validators {
    pub(super) fn of(headers: &ureq::http::HeaderMap) -> Self {
        let etag = headers.get("etag").and_then(|value| value.to_str().ok()).map(str::to_owned);
        let mut validators = Self { etag, ..Self::default() };
        for value in headers.get_all("cache-control").iter().filter_map(|value| value.to_str().ok()) {
            for directive in value.split(',').map(|directive| directive.trim().to_ascii_lowercase()) {
                let age = match directive.as_str() {
                    "no-cache" => Some(Duration::ZERO),
                    "no-store" => {
                        validators.no_store = true;
                        Some(Duration::ZERO)
                    }
                    other => other
                        .strip_prefix("max-age=")
                        .and_then(|seconds| seconds.trim_matches('"').parse::<u64>().ok())
                        .map(Duration::from_secs),
                };
                if let Some(age) = age {
                    validators.max_age = Some(validators.max_age.map_or(age, |held| held.min(age)));
                }
            }
        }
        validators
    }
}

/// Certificates of a private CA, read from PEM, for
/// [`RemoteProvider::with_root_certificates`].
#[derive(Clone)]
pub struct RootCertificates(pub(super) Vec<ureq::tls::Certificate<'static>>);

impl fmt::Debug for RootCertificates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RootCertificates({} certificates)", self.0.len())
    }
}

impl RootCertificates {
    /// The certificates in a PEM text (other PEM items are ignored); `Err`
    /// when there is none or the PEM is malformed.
    pub fn from_pem(pem: &[u8]) -> Result<Self, String> {
        let mut certificates = Vec::new();
        for item in ureq::tls::parse_pem(pem) {
            match item {
                Ok(ureq::tls::PemItem::Certificate(certificate)) => certificates.push(certificate),
                Ok(_) => {}
                Err(error) => return Err(format!("malformed PEM: {error}")),
            }
        }
        if certificates.is_empty() {
            return Err("no PEM certificate (-----BEGIN CERTIFICATE-----) in it".to_owned());
        }
        Ok(Self(certificates))
    }
}

impl RemoteProvider {
    /// GETs `url`, following redirects itself (at most [`MAX_REDIRECTS`],
    /// never from HTTPS to plain HTTP, never with credentials) within one
    /// deadline for the whole chain; with `etag`, asks for the body only if
    /// it changed (`If-None-Match`).
    pub(super) fn get(&self, url: &Url, limit: u64, etag: Option<&str>) -> Result<Answer, String> {
        self.get_beneath(url, limit, etag, None)
    }

    /// [`RemoteProvider::get`], every redirect refused unless its target
    /// starts with `beneath` (a skill's folder URL, for its files).
    pub(super) fn get_beneath(
        &self,
        url: &Url,
        limit: u64,
        etag: Option<&str>,
        beneath: Option<&str>,
    ) -> Result<Answer, String> {
        let deadline = Instant::now() + self.timeout;
        let mut current = url.clone();
        for _ in 0..=MAX_REDIRECTS {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("timed out after {} ms", self.timeout.as_millis()));
            }
            let mut request = self.agent.get(current.as_str()).config().timeout_global(Some(left)).build();
            if let Some(etag) = etag {
                request = request.header("If-None-Match", etag);
            }
            let mut response = request.call().map_err(|error| self.describe(error, limit))?;
            let status = response.status();
            let validators = Validators::of(response.headers());
            if status == 304 && etag.is_some() {
                return Ok(Answer::NotModified(validators));
            }
            if status.is_redirection() && status != 304 {
                let location = response.headers().get("location").and_then(|value| value.to_str().ok());
                let Some(location) = location else {
                    return Err(format!("HTTP status {} without a Location", status.as_u16()));
                };
                let next = current
                    .join(location)
                    .map_err(|error| format!("redirected to an invalid URL {location:?}: {error}"))?;
                // The credentials were for the URL configured, not for
                // wherever it sends us (as ureq's own redirects behave).
                let next = shown(&next);
                check_redirect(&current, &next)?;
                if let Some(folder) = beneath
                    && !next.as_str().starts_with(folder)
                {
                    return Err(format!(
                        "redirected from {} to {next}, which is not beneath the skill's folder {folder}",
                        shown(&current)
                    ));
                }
                current = next;
                continue;
            }
            if status == 404 || status == 410 {
                return Ok(Answer::Gone);
            }
            if !status.is_success() {
                return Err(format!("HTTP status {}", status.as_u16()));
            }
            let bytes = response
                .body_mut()
                .with_config()
                .limit(limit)
                .read_to_vec()
                .map_err(|error| self.describe(error, limit))?;
            return Ok(Answer::Body { bytes, validators });
        }
        Err(format!("more than {MAX_REDIRECTS} redirects"))
    }

    fn describe(&self, error: ureq::Error, limit: u64) -> String {
        match error {
            ureq::Error::Timeout(_) => format!("timed out after {} ms", self.timeout.as_millis()),
            ureq::Error::BodyExceedsLimit(_) => format!("larger than the {} KiB limit", limit / 1024),
            ureq::Error::Tls(reason) => format!("TLS failed: {reason}"),
            ureq::Error::Rustls(error) => format!("TLS failed: {error}"),
            other => other.to_string(),
        }
    }
}

/// The agent every request goes through: one deadline for the whole
/// request, statuses as answers, `roots` for HTTPS.
pub(super) fn agent(timeout: Duration, roots: ureq::tls::RootCerts) -> ureq::Agent {
    let tls = ureq::tls::TlsConfig::builder().provider(ureq::tls::TlsProvider::Rustls).root_certs(roots).build();
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        // Statuses are answers to interpret here (404 is "gone"), not errors.
        .http_status_as_error(false)
        // Redirects are followed by `RemoteProvider::get`, which refuses a
        // downgrade from HTTPS to HTTP.
        .max_redirects(0)
        .tls_config(tls)
        .build();
    // Proxies come from the usual environment variables (`HTTP_PROXY`,
    // `NO_PROXY`, …), as ureq reads them by default.
    ureq::Agent::new_with_config(config)
}

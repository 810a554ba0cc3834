//! The remote skill provider: skills listed by an index served over HTTP or
//! HTTPS.
//!
//! `GET INDEX_URL` returns
//! `{"skills":[{"name","description","whenToUse"?,"invocation"?:{"modelInvocable","userInvocable"},"url","digest"?}]}`,
//! or the Agent Skills discovery index that sites publish at
//! `/.well-known/agent-skills/index.json`, whose entries carry
//! `"type":"skill-md"` and a `digest` (an index URL that is a bare origin,
//! `https://example.com/`, means that well-known path); each `url`
//! (absolute, or relative to the index URL) serves the skill's `SKILL.md`.
//! Loading fetches that file afresh, checks it against the index's `sha256:`
//! digest when there is one (a mismatch is a failed load, never served),
//! parses it as the local provider parses a file, and returns its body with
//! a `url` resource base: the file URL's folder, ending in `/`.
//!
//! HTTPS certificates are verified against the Mozilla roots (rustls with
//! the ring provider: no OpenSSL needed), or against a private CA given with
//! [`RemoteProvider::with_root_certificates`] instead.
//!
//! The network is untrusted and unreliable: every request has a deadline and
//! a size cap; an index that cannot be fetched or read makes the listing
//! incomplete (or, when no index could be read, fails it), so the model keeps
//! its last good catalog; a malformed entry is skipped with its reason.
//!
//! A user name and password in an index URL (`http://user:secret@host/…`)
//! are sent to that server (HTTP basic authentication), for the index and for
//! skill files on the same server, and never shown: skill paths, resource
//! bases, warnings and errors name every URL without them, since the model
//! reads some of these. Credentials an index entry writes into a skill's own
//! URL are dropped with the rest: only whoever configured the index hands
//! out credentials.
//!
//! Redirects are followed here, not by the HTTP client: at most
//! [`MAX_REDIRECTS`], never from HTTPS down to plain HTTP, never with the
//! index's credentials.
//!
//! A complete listing is cached by the registry like any other, until
//! something invalidates it. An index answered with an `ETag` is re-read
//! with `If-None-Match`, and [`RemoteProvider::max_age`] says how long the
//! last listing may be used: a long-running host wraps the provider in a
//! [`BackgroundListing`](crate::BackgroundListing), which re-reads it on that
//! interval and reports changes.
//!
//! ```no_run
//! use std::sync::Arc;
//! use skill_host::SkillRegistry;
//! use skill_host::providers::remote::RemoteProvider;
//!
//! let registry = SkillRegistry::new();
//! let index = "http://127.0.0.1:8080/skills.json".parse().map_err(std::io::Error::other)?;
//! registry.register_provider(Arc::new(RemoteProvider::new(vec![index])));
//! # Ok::<(), std::io::Error>(())
//! ```

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use url::Url;

use super::frontmatter::parse_skill_file;
use crate::registry::{
    FileListing, FileRead, InvocationPolicy, Listing, ProviderError, ResourceBase, SkillCandidate, SkillDefinition,
    SkillProvider, SkippedFile, body_digest, file_digest, is_skill_name,
};

/// The provider's registered name.
pub const REMOTE_PROVIDER: &str = "remote";

/// The source its skills carry.
pub const REMOTE_SOURCE: &str = "remote";

/// The rank its skills carry: after the custom roots (300), before the
/// user's own (400).
pub const REMOTE_RANK: i64 = 350;

/// How long one request may take, from connecting to the last body byte,
/// unless [`RemoteProvider::with_timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// Largest index accepted, in bytes.
pub const MAX_INDEX_BYTES: u64 = 1024 * 1024;

/// Largest skill file accepted, in bytes.
pub const MAX_SKILL_BYTES: u64 = 1024 * 1024;

/// Redirects followed per request (static hosts often redirect once or twice).
pub const MAX_REDIRECTS: u32 = 5;

/// Where a site publishes its Agent Skills discovery index; an index URL
/// that is a bare origin means this path on it.
pub const WELL_KNOWN_INDEX: &str = "/.well-known/agent-skills/index.json";

/// The only discovery-index entry type this provider loads (the other,
/// `archive`, is a packed folder).
const SKILL_MD_TYPE: &str = "skill-md";

/// An index URL: absolute, `http` or `https`.
#[derive(Clone, PartialEq, Eq)]
pub struct IndexUrl(Url);

impl fmt::Debug for IndexUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("IndexUrl").field(&shown(&self.0).as_str()).finish()
    }
}

impl FromStr for IndexUrl {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let mut url =
            Url::parse(text).map_err(|error| format!("invalid index URL {:?}: {error}", without_userinfo(text)))?;
        check_scheme(&url).map_err(|reason| format!("invalid index URL {:?}: {reason}", shown(&url).as_str()))?;
        if url.path() == "/" && url.query().is_none() && url.fragment().is_none() {
            url.set_path(WELL_KNOWN_INDEX);
        }
        Ok(Self(url))
    }
}

impl fmt::Display for IndexUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(shown(&self.0).as_str())
    }
}

impl IndexUrl {
    fn has_credentials(&self) -> bool {
        !self.0.username().is_empty() || self.0.password().is_some()
    }
}

/// `url` as it may be shown: without a user name and password.
fn shown(url: &Url) -> Url {
    let mut shown = url.clone();
    // Both fail only for URLs that cannot carry credentials at all.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown
}

/// `text`, a URL that did not parse, with everything between `://` and its
/// last `@` replaced by `***`: where the authority ends cannot be trusted in
/// a text that did not parse (a password may hold a `/`), and the errors
/// that quote what was typed must not quote a secret.
fn without_userinfo(text: &str) -> String {
    let Some(scheme_end) = text.find("://").map(|at| at + 3) else {
        return text.to_owned();
    };
    match text[scheme_end..].rfind('@') {
        Some(at) => format!("{}***{}", &text[..scheme_end], &text[scheme_end + at..]),
        None => text.to_owned(),
    }
}

fn check_scheme(url: &Url) -> Result<(), String> {
    match url.scheme() {
        "http" | "https" => Ok(()),
        other => Err(format!("the scheme must be http or https, not {other:?}")),
    }
}

/// Lists skills from HTTP(S) indexes, in the order given, and loads their files.
#[derive(Debug, Clone)]
pub struct RemoteProvider {
    indexes: Vec<IndexUrl>,
    agent: ureq::Agent,
    timeout: Duration,
    /// The `sha256:` digest each index gave a skill file, by the file's URL
    /// as shown: what a load checks the fetched file against.
    digests: Arc<Mutex<HashMap<String, String>>>,
    /// The files each index entry listed (`None`: it lists none), by the
    /// skill's name and its file's URL as shown: all a read may fetch of it
    /// (docs/spec.md §3.15). The first entry of a name and URL is kept, as
    /// the registry keeps the first candidate of a name.
    files: Arc<Mutex<Published>>,
    /// Each index's last text with its `ETag`, by the index URL: what a
    /// `304 Not Modified` to a conditional re-read stands for.
    copies: Arc<Mutex<HashMap<String, IndexCopy>>>,
    /// The smallest `Cache-Control` max-age the last listing's indexes gave.
    max_age: Arc<Mutex<Option<Duration>>>,
}

/// The files each index entry listed (`None`: it lists none), by the
/// skill's name and its file's URL as shown.
type Published = HashMap<(String, String), Option<Vec<ListedFile>>>;

/// An index as last fetched, kept for a conditional re-read.
#[derive(Debug, Clone)]
struct IndexCopy {
    etag: String,
    text: String,
}

impl RemoteProvider {
    /// A provider over `indexes`, each request bounded by [`DEFAULT_TIMEOUT`].
    pub fn new(indexes: Vec<IndexUrl>) -> Self {
        Self::with_timeout(indexes, DEFAULT_TIMEOUT)
    }

    /// A provider whose requests each take at most `timeout`, redirects and
    /// body included.
    pub fn with_timeout(indexes: Vec<IndexUrl>, timeout: Duration) -> Self {
        let agent = agent(timeout, ureq::tls::RootCerts::WebPki);
        Self {
            indexes,
            agent,
            timeout,
            digests: Arc::default(),
            files: Arc::default(),
            copies: Arc::default(),
            max_age: Arc::default(),
        }
    }

    /// The same provider trusting only `roots` (a private CA) for HTTPS,
    /// instead of the Mozilla roots.
    pub fn with_root_certificates(self, roots: &RootCertificates) -> Self {
        let agent = agent(self.timeout, ureq::tls::RootCerts::new_with_certs(&roots.0));
        Self { agent, ..self }
    }

    /// Fetches `url` as UTF-8 text of at most `limit` bytes; `Ok(None)` for
    /// 404 and 410 (nothing there).
    fn fetch(&self, url: &Url, limit: u64) -> Result<Option<String>, String> {
        match self.get(url, limit, None).map_err(|reason| scrub(reason, url))? {
            Answer::Body { bytes, .. } => utf8(bytes).map(Some),
            Answer::Gone => Ok(None),
            // Only a conditional request is answered 304.
            Answer::NotModified(_) => Err("HTTP status 304 to a request that was not conditional".to_owned()),
        }
    }

    /// `url` with the credentials of the first index on the same server
    /// that has some.
    fn with_credentials(&self, url: &Url) -> Url {
        let mut fetched = url.clone();
        let index = self.indexes.iter().find(|index| index.has_credentials() && index.0.origin() == url.origin());
        if let Some(IndexUrl(index)) = index {
            let _ = fetched.set_username(index.username());
            let _ = fetched.set_password(index.password());
        }
        fetched
    }

    /// How long the last listing may be used before its indexes are read
    /// again, as their `Cache-Control` said (the smallest `max-age`, zero
    /// for `no-cache`); `None` when none of them said. A long-running host
    /// re-reads on this interval, within its own bounds.
    pub fn max_age(&self) -> Option<Duration> {
        *self.max_age.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Reads one index into `listing`; `Err` when the index as a whole
    /// cannot be had. A copy kept with its `ETag` makes the request
    /// conditional, and a `304` reads that copy again.
    /// The digests the index gives go into `digests` (file URL → digest);
    /// a digest another index gave for the same file stays.
    /// `Ok` carries the index's `Cache-Control` max-age, if any.
    fn list_index(
        &self,
        index: &IndexUrl,
        listing: &mut Listing,
        digests: &mut HashMap<String, String>,
        files: &mut Published,
    ) -> Result<Option<Duration>, String> {
        let key = index.0.as_str().to_owned();
        let copy = self.copies.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&key).cloned();
        let answer = self
            .get(&index.0, MAX_INDEX_BYTES, copy.as_ref().map(|copy| copy.etag.as_str()))
            .map_err(|reason| scrub(reason, &index.0))?;
        let (text, validators) = match (answer, copy) {
            (Answer::Body { bytes, validators }, _) => (utf8(bytes)?, validators),
            (Answer::NotModified(validators), Some(copy)) => (copy.text, validators),
            (Answer::NotModified(_), None) => {
                return Err("HTTP status 304 to a request that was not conditional".to_owned());
            }
            (Answer::Gone, _) => return Err("HTTP status 404".to_string()),
        };
        {
            let mut copies = self.copies.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            match &validators.etag {
                Some(etag) if !validators.no_store => {
                    copies.insert(key, IndexCopy { etag: etag.clone(), text: text.clone() });
                }
                _ => {
                    copies.remove(&key);
                }
            }
        }
        let entries = index_entries(&text)?;
        for (position, entry) in entries.iter().enumerate() {
            match candidate(&index.0, entry) {
                Ok((candidate, digest, listed)) => {
                    let url = candidate.path.as_deref().map(|path| path.display().to_string()).unwrap_or_default();
                    files.entry((candidate.name.clone(), url.clone())).or_insert(listed);
                    if let Some(digest) = digest {
                        digests.entry(url).or_insert(digest);
                    }
                    listing.candidates.push(candidate);
                }
                Err((path, reason)) => listing.skipped.push(SkippedFile {
                    path: PathBuf::from(path.unwrap_or_else(|| format!("{index}#{}", position + 1))),
                    reason,
                }),
            }
        }
        Ok(validators.max_age)
    }
}

impl SkillProvider for RemoteProvider {
    fn name(&self) -> &str {
        REMOTE_PROVIDER
    }

    fn list(&self, _cwd: Option<&Path>) -> Result<Listing, ProviderError> {
        let mut listing = Listing { complete: true, ..Listing::default() };
        let mut failures = Vec::new();
        let mut digests = HashMap::new();
        let mut files = HashMap::new();
        let mut max_age: Option<Duration> = None;
        for index in &self.indexes {
            match self.list_index(index, &mut listing, &mut digests, &mut files) {
                Ok(Some(age)) => max_age = Some(max_age.map_or(age, |held| held.min(age))),
                Ok(None) => {}
                Err(reason) => failures.push((index, format!("cannot read skill index: {reason}"))),
            }
        }
        *self.max_age.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = max_age;
        // What this listing says replaces what the last one said: no stale
        // entry stays, and one index cannot switch another's check off.
        *self.digests.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = digests;
        *self.files.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = files;
        if !failures.is_empty() && failures.len() == self.indexes.len() {
            // Nothing could be read: a failed listing, which the registry
            // reports as a warning.
            let reasons: Vec<String> = failures.iter().map(|(index, reason)| format!("{index}: {reason}")).collect();
            return Err(ProviderError(reasons.join("; ")));
        }
        for (index, reason) in failures {
            listing.complete = false;
            listing.problems.push(format!("{index}: {reason}"));
            listing.skipped.push(SkippedFile { path: PathBuf::from(index.to_string()), reason });
        }
        Ok(listing)
    }

    fn list_files(
        &self,
        _cwd: Option<&Path>,
        candidate: &SkillCandidate,
        limit: usize,
    ) -> Result<Option<FileListing>, ProviderError> {
        Ok(self.list_skill_files(candidate, limit))
    }

    fn read_file(
        &self,
        _cwd: Option<&Path>,
        candidate: &SkillCandidate,
        path: &str,
    ) -> Result<FileRead, ProviderError> {
        self.read_skill_file(candidate, path)
    }

    fn load(&self, _cwd: Option<&Path>, candidate: &SkillCandidate) -> Result<Option<SkillDefinition>, ProviderError> {
        // The path is the URL as shown; the index's credentials go back on
        // for a file on the same server.
        let url = candidate.path.as_deref().and_then(Path::to_str).and_then(|path| Url::parse(path).ok());
        let Some(url) = url else {
            return Err(ProviderError(format!(
                "skill \"{}\" has no URL, so the {REMOTE_PROVIDER} provider cannot load it",
                candidate.name
            )));
        };
        let text = match self.fetch(&self.with_credentials(&url), MAX_SKILL_BYTES) {
            Ok(Some(text)) => text,
            // Removed from the server: the skill no longer exists.
            Ok(None) => return Ok(None),
            Err(reason) => return Err(ProviderError(format!("cannot fetch skill file {url}: {reason}"))),
        };
        let expected = self.digests.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(url.as_str()).cloned();
        if let Some(expected) = expected {
            let actual = file_digest(text.as_bytes());
            if actual != expected {
                return Err(ProviderError(format!(
                    "skill \"{}\": the file at {url} has digest {actual}, but the index says {expected}; it is not loaded",
                    candidate.name
                )));
            }
        }
        let parsed = parse_skill_file(&text)
            .map_err(|reason| ProviderError(format!("skill file {url} is not a valid skill file: {reason}")))?;
        // A different name is returned as found: the registry treats the
        // skill as unknown (renamed) and invalidates.
        Ok(Some(SkillDefinition {
            summary: SkillCandidate {
                listed: None,
                name: parsed.name,
                description: parsed.description,
                when_to_use: parsed.when_to_use,
                // The index and the file are two documents: a skill either
                // withholds from the model or a user stays withheld.
                invocation: InvocationPolicy {
                    model_invocable: candidate.invocation.model_invocable && parsed.invocation.model_invocable,
                    user_invocable: candidate.invocation.user_invocable && parsed.invocation.user_invocable,
                },
                source: candidate.source.clone(),
                provider: REMOTE_PROVIDER.to_string(),
                resource_base: Some(ResourceBase::Url { url: folder_of(&url) }),
                rank: candidate.rank,
                path: candidate.path.clone(),
                metadata: parsed.metadata,
                body_digest: Some(body_digest(&parsed.body)),
            },
            content: parsed.body,
        }))
    }
}

/// What a fetch error says, with `url`'s credentials taken out wherever it
/// quotes them.
fn scrub(reason: String, url: &Url) -> String {
    if url.username().is_empty() && url.password().is_none() {
        return reason;
    }
    let userinfo = format!("{}:{}@", url.username(), url.password().unwrap_or_default());
    let reason = reason.replace(url.as_str(), shown(url).as_str()).replace(&userinfo, "");
    match url.username() {
        // Only a password: there is no `user@` to take out.
        "" => reason,
        user => reason.replace(&format!("{user}@"), ""),
    }
}

/// The `skills` array of an index.
fn index_entries(text: &str) -> Result<Vec<Value>, String> {
    let index: Value = serde_json::from_str(text).map_err(|error| format!("malformed index JSON: {error}"))?;
    match index.get("skills") {
        Some(Value::Array(entries)) => Ok(entries.clone()),
        _ => Err("malformed index: expected an object with a `skills` array".to_string()),
    }
}

/// Whether `digest` is `sha256:` and 64 lowercase hex digits.
fn is_sha256_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
    })
}

/// One index entry as a candidate, with the file's digest when the index
/// gives one. `Err` carries the skill's URL when it is known, and why the
/// entry is skipped.
type Entry = (SkillCandidate, Option<String>, Option<Vec<ListedFile>>);

fn candidate(index: &Url, entry: &Value) -> Result<Entry, (Option<String>, String)> {
    let url = match entry.get("url") {
        Some(Value::String(url)) => match index.join(url) {
            Ok(url) => url,
            Err(error) => return Err((None, format!("invalid skill URL {url:?}: {error}"))),
        },
        _ => return Err((None, "index entry without a `url` string".to_string())),
    };
    // Relative to an index URL with credentials, the URL has them too.
    let url = shown(&url);
    let skip = |reason: String| (Some(url.to_string()), reason);
    check_scheme(&url).map_err(skip)?;
    let name = match entry.get("name") {
        Some(Value::String(name)) if is_skill_name(name) => name.clone(),
        Some(Value::String(name)) => {
            return Err(skip(format!(
                "`name` {name:?} does not match the skill-name grammar ^[a-z0-9]+(?:-[a-z0-9]+)*$"
            )));
        }
        _ => return Err(skip("index entry without a `name` string".to_string())),
    };
    let description = match entry.get("description") {
        Some(Value::String(description)) if !description.is_empty() => description.clone(),
        _ => return Err(skip(format!("skill \"{name}\": `description` must be a non-empty string"))),
    };
    // The discovery index's entries say what they point at; only a
    // SKILL.md file is loaded.
    match entry.get("type") {
        None => {}
        Some(Value::String(kind)) if kind == SKILL_MD_TYPE => {}
        Some(Value::String(kind)) => {
            return Err(skip(format!("skill \"{name}\": type {kind:?} is not supported (only \"{SKILL_MD_TYPE}\")")));
        }
        Some(_) => return Err(skip(format!("skill \"{name}\": `type` must be a string"))),
    }
    let digest = match entry.get("digest") {
        None | Some(Value::Null) => None,
        Some(Value::String(digest)) if is_sha256_digest(digest) => Some(digest.clone()),
        Some(_) => {
            return Err(skip(format!("skill \"{name}\": `digest` must be \"sha256:\" and 64 lowercase hex digits")));
        }
    };
    let listed = files::listed_files(&name, entry).map_err(skip)?;
    // Kept only when well typed, as the local provider keeps `whenToUse`.
    let when_to_use = match entry.get("whenToUse") {
        Some(Value::String(text)) if !text.is_empty() => Some(text.clone()),
        _ => None,
    };
    // A policy that cannot be read drops the skill (fail closed), as a
    // malformed invocation key does in a local file.
    let invocation = match entry.get("invocation") {
        None | Some(Value::Null) => InvocationPolicy::default(),
        Some(value) => serde_json::from_value(value.clone())
            .map_err(|error| skip(format!("skill \"{name}\": malformed `invocation`: {error}")))?,
    };
    let candidate = SkillCandidate {
        listed: None,
        name,
        description,
        when_to_use,
        invocation,
        source: REMOTE_SOURCE.to_string(),
        provider: REMOTE_PROVIDER.to_string(),
        resource_base: Some(ResourceBase::Url { url: folder_of(&url) }),
        rank: REMOTE_RANK,
        // The file's URL, shown where a local skill shows its path, and
        // where `load` fetches from.
        path: Some(PathBuf::from(url.to_string())),
        metadata: None,
        // Known only once the file is fetched: an index's digest is the
        // whole file's, not the body's.
        body_digest: None,
    };
    Ok((candidate, digest, listed))
}

/// The folder of a file URL, ending in `/`: where its relative resources are.
fn folder_of(url: &Url) -> String {
    let mut file = url.clone();
    file.set_query(None);
    file.set_fragment(None);
    file.join("./").map_or_else(|_| file.to_string(), |folder| folder.to_string())
}

mod files;
mod http;

use self::files::ListedFile;

pub use self::http::RootCertificates;
#[cfg(test)]
use self::http::Validators;
use self::http::{Answer, agent, utf8};

#[cfg(test)]
mod tests;

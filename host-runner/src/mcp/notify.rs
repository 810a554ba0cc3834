//! Live changes (docs/spec.md §6.9): after the watcher invalidates the
//! registry, every list a client may list and cache is computed again, by
//! the functions that answer the list methods, and compared with what was
//! listed before. Each list that changed is notified once: `tools/list`
//! (the tool's description carries the catalog) by
//! `notifications/tools/list_changed`, `prompts/list` by
//! `notifications/prompts/list_changed`, and `resources/list` and the Skills
//! extension's `skills/list` (its entries are resources; the extension
//! defines no notification of its own) by
//! `notifications/resources/list_changed`. A list that did not change sends
//! nothing.
//!
//! A client of the 2026-07-28 revision subscribes with
//! `subscriptions/listen`; the notifications then go to each subscription
//! that accepted them. A client of an earlier revision gets them on its
//! session, once it has sent `notifications/initialized`: on stdio the one
//! session, over HTTP each open one.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::service::{Peer, RoleServer, SubscriptionSink};
use serde_json::Value;
use tokio::task::JoinHandle;

use super::McpServer;
use crate::providers::watch::{DEFAULT_DEBOUNCE, SkillWatcher};

/// What the client can list: each list method's answer as the client
/// receives it (its JSON), so that any listed field that changes is a change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fingerprint {
    /// `tools/list`: the `skill` tool, whose description carries the catalog.
    pub tools: Value,
    /// `prompts/list`: each prompt's name, description and arguments.
    pub prompts: Value,
    /// `resources/list`: each resource's URI, name, description, MIME type…
    pub resources: Value,
    /// `skills/list`, every page: each entry's frontmatter and files with
    /// their digests and sizes.
    pub skills: Value,
}

/// Which notifications a change between two fingerprints sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Changes {
    /// `notifications/tools/list_changed`: the tool list changed.
    pub tools: bool,
    /// `notifications/prompts/list_changed`: the prompt list changed.
    pub prompts: bool,
    /// `notifications/resources/list_changed`: `resources/list` or
    /// `skills/list` changed.
    pub resources: bool,
}

impl Changes {
    /// The lists that differ from `before` to `after`.
    pub fn between(before: &Fingerprint, after: &Fingerprint) -> Self {
        Self {
            tools: before.tools != after.tools,
            prompts: before.prompts != after.prompts,
            resources: before.resources != after.resources || before.skills != after.skills,
        }
    }

    /// Whether anything changed.
    pub fn any(self) -> bool {
        self.tools || self.prompts || self.resources
    }
}

/// Where notifications go: the sessions' peers, and the subscriptions of
/// newer clients.
#[derive(Default)]
pub struct Notifier {
    peers: Mutex<Vec<Peer<RoleServer>>>,
    subscriptions: Mutex<Vec<(u64, SubscriptionSink)>>,
    next_subscription: Mutex<u64>,
}

impl Notifier {
    /// Adds the peer of a session that completed its handshake; the peers
    /// of sessions that ended are let go.
    pub fn add_peer(&self, peer: Peer<RoleServer>) {
        let mut peers = self.peers.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        peers.retain(|held| !held.is_transport_closed());
        peers.push(peer);
    }

    /// Adds a subscription; the number removes it.
    pub fn subscribe(&self, sink: SubscriptionSink) -> u64 {
        let mut next = self.next_subscription.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *next += 1;
        self.subscriptions.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((*next, sink));
        *next
    }

    /// Removes a subscription.
    pub fn unsubscribe(&self, id: u64) {
        self.subscriptions.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).retain(|(held, _)| *held != id);
    }

    /// Sends one notification per changed list to every subscription and
    /// every open session. (A 2026-07-28 client has no handshake, so no
    /// peer here: it is never notified twice.)
    pub async fn send(&self, changes: Changes) {
        let sinks: Vec<SubscriptionSink> = self
            .subscriptions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .map(|(_, sink)| sink.clone())
            .collect();
        for sink in sinks {
            // A subscription that did not accept a kind refuses it: fine.
            if changes.tools {
                let _ = sink.notify_tool_list_changed().await;
            }
            if changes.prompts {
                let _ = sink.notify_prompt_list_changed().await;
            }
            if changes.resources {
                let _ = sink.notify_resource_list_changed().await;
            }
        }
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = self.peers.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            peers.retain(|held| !held.is_transport_closed());
            peers.clone()
        };
        for peer in peers {
            // A closed session loses the notification, never the server.
            if changes.tools {
                let _ = peer.notify_tool_list_changed().await;
            }
            if changes.prompts {
                let _ = peer.notify_prompt_list_changed().await;
            }
            if changes.resources {
                let _ = peer.notify_resource_list_changed().await;
            }
        }
    }
}

/// The watcher over the skill roots and the task that turns what it sees
/// into notifications; both stop when this is dropped.
pub struct LiveRefresh {
    task: JoinHandle<()>,
}

impl Drop for LiveRefresh {
    fn drop(&mut self) {
        // The task owns the watcher: aborting it drops the watcher too.
        self.task.abort();
    }
}

impl LiveRefresh {
    /// Starts watching `roots` for `server` (none: no watcher, no
    /// notifications). Must be called inside the tokio runtime that serves.
    ///
    /// The watches are armed on the blocking pool, off the path of the
    /// first answers: one per skill folder, which takes a while with
    /// thousands of skills. What the clients list is first computed once
    /// they are in place, so a change made while they were being armed is
    /// in that first computation, and every later one is seen.
    pub fn start(server: &McpServer, roots: Vec<PathBuf>) -> Self {
        if roots.is_empty() {
            return Self { task: tokio::spawn(async {}) };
        }
        // Answers may be cached while the server watches (docs/spec.md §6.9).
        server.state.watching.store(true, std::sync::atomic::Ordering::Relaxed);
        // The watcher invalidates the registry and wakes the change task; a
        // followed provider's change takes the same path.
        let (changed, mut changes) = tokio::sync::mpsc::unbounded_channel::<()>();
        *server.state.provider_changed.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(changed.clone());
        let server = server.clone();
        let task = tokio::spawn(async move {
            let registry = Arc::downgrade(server.registry());
            let armed = tokio::task::spawn_blocking(move || {
                SkillWatcher::start_with_resources(roots, DEFAULT_DEBOUNCE, move |_| {
                    if let Some(registry) = registry.upgrade() {
                        registry.invalidate();
                    }
                    let _ = changed.send(());
                })
            })
            .await;
            let _watcher = match armed {
                Ok(Ok(watcher)) => watcher,
                Ok(Err(error)) => {
                    // A closed stderr loses the warning, never the server.
                    let _ =
                        writeln!(std::io::stderr(), "warning: {error}; the server will not see changes to skill files");
                    server.state.watching.store(false, std::sync::atomic::Ordering::Relaxed);
                    *server.state.provider_changed.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = None;
                    return;
                }
                Err(_) => return,
            };
            let fingerprint = |server: &McpServer| {
                let state = Arc::clone(&server.state);
                tokio::task::spawn_blocking(move || state.fingerprint())
            };
            let mut last = match fingerprint(&server).await {
                Ok(Ok(print)) => print,
                _ => return,
            };
            while changes.recv().await.is_some() {
                // One computation for however many changes are waiting.
                while changes.try_recv().is_ok() {}
                let Ok(Ok(now)) = fingerprint(&server).await else { continue };
                let changed = Changes::between(&last, &now);
                if changed.any() {
                    server.state.notifier.send(changed).await;
                }
                last = now;
            }
        });
        Self { task }
    }
}

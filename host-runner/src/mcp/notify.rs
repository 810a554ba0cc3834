//! Live changes (docs/spec.md §6.9): after the watcher invalidates the
//! registry, what the client lists is computed again, and each list that
//! changed is notified once: the tool's description
//! (`notifications/tools/list_changed`), the prompts
//! (`notifications/prompts/list_changed`) and the Skills extension's skills
//! and their files (`notifications/resources/list_changed`, as skills are
//! served as resources). A list that did not change sends nothing.
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
use tokio::task::JoinHandle;

use super::McpServer;
use crate::providers::watch::{DEFAULT_DEBOUNCE, SkillWatcher};

/// What the client can list, reduced to what a change notification is about.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fingerprint {
    /// The `skill` tool's description (it carries the catalog).
    pub tool_description: String,
    /// Each prompt's name and description.
    pub prompts: Vec<(String, String)>,
    /// Each served skill's name, file and body digest.
    pub skills: Vec<(String, String, Option<String>)>,
}

/// Which lists changed between two fingerprints.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Changes {
    /// The tool list.
    pub tools: bool,
    /// The prompt list.
    pub prompts: bool,
    /// The skills (and so the resources).
    pub skills: bool,
}

impl Changes {
    /// The lists that differ from `before` to `after`.
    pub fn between(before: &Fingerprint, after: &Fingerprint) -> Self {
        Self {
            tools: before.tool_description != after.tool_description,
            prompts: before.prompts != after.prompts,
            skills: before.skills != after.skills,
        }
    }

    /// Whether anything changed.
    pub fn any(self) -> bool {
        self.tools || self.prompts || self.skills
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
            if changes.skills {
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
            if changes.skills {
                let _ = peer.notify_resource_list_changed().await;
            }
        }
    }
}

/// The watcher over the skill roots and the task that turns what it sees
/// into notifications; both stop when this is dropped.
pub struct LiveRefresh {
    _watcher: Option<SkillWatcher>,
    task: JoinHandle<()>,
}

impl Drop for LiveRefresh {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl LiveRefresh {
    /// Starts watching `roots` for `server` (none: no watcher, no
    /// notifications). Must be called inside the tokio runtime that serves.
    pub fn start(server: &McpServer, roots: Vec<PathBuf>) -> Self {
        // The watcher invalidates the registry and wakes the change task.
        let (changed, mut changes) = tokio::sync::mpsc::unbounded_channel::<()>();
        let wake = changed.clone();
        let watcher = if roots.is_empty() {
            None
        } else {
            let registry = Arc::downgrade(server.registry());
            let started = SkillWatcher::start_with(roots, DEFAULT_DEBOUNCE, move |_| {
                if let Some(registry) = registry.upgrade() {
                    registry.invalidate();
                }
                let _ = changed.send(());
            });
            match started {
                Ok(watcher) => Some(watcher),
                Err(error) => {
                    // A closed stderr loses the warning, never the server.
                    let _ =
                        writeln!(std::io::stderr(), "warning: {error}; the server will not see changes to skill files");
                    None
                }
            }
        };
        let watching = watcher.is_some();
        if watching {
            // A followed provider's change takes the watcher's path.
            *server.state.provider_changed.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(wake);
        }
        let server = server.clone();
        let task = tokio::spawn(async move {
            if !watching {
                return;
            }
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
        Self { _watcher: watcher, task }
    }
}

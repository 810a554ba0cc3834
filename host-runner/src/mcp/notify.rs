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
//! that accepted them. A client of an earlier revision gets them on the
//! session.

use std::sync::Mutex;

use rmcp::service::{Peer, RoleServer, SubscriptionSink};

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

/// Where notifications go: the session's peer, and the subscriptions of a
/// newer client.
#[derive(Default)]
pub struct Notifier {
    peer: Mutex<Option<Peer<RoleServer>>>,
    subscriptions: Mutex<Vec<(u64, SubscriptionSink)>>,
    next_subscription: Mutex<u64>,
}

impl Notifier {
    /// The peer of the running session.
    pub fn set_peer(&self, peer: Peer<RoleServer>) {
        *self.peer.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(peer);
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

    /// Sends one notification per changed list.
    pub async fn send(&self, changes: Changes) {
        let sinks: Vec<SubscriptionSink> = self
            .subscriptions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .map(|(_, sink)| sink.clone())
            .collect();
        if !sinks.is_empty() {
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
            return;
        }
        let peer = self.peer.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        let Some(peer) = peer else { return };
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

//! MCP sessions over HTTP, bounded in number and in idle lifetime.
//!
//! rmcp's [`LocalSessionManager`] keeps every session until its client
//! deletes it or it has been idle for its `keep_alive` (26,000 `initialize`
//! calls in a few minutes held 1.3 GB). [`BoundedSessions`] wraps it: at
//! most [`MAX_SESSIONS`] are open; opening one more closes the least
//! recently used first. A client whose session was closed gets 404 (`Not
//! Found: Session not found`), which the MCP transport defines as "start a
//! new session"; refusing the new session instead would let one client that
//! opens sessions and never closes them lock every other client out until
//! they expire.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};

/// The most MCP sessions open at once over HTTP (each holds a task, its
/// channels and the handshake's parameters: tens of KB).
pub const MAX_SESSIONS: usize = 128;

/// How long a session may go without a message from its client or to it
/// before it is closed (`--session-idle`).
pub const SESSION_IDLE_LIFETIME: Duration = Duration::from_secs(300);

/// rmcp's session manager with a cap on open sessions (see the module's
/// documentation).
pub struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    /// When each open session was last used; the least recent is closed to
    /// make room.
    last_used: Mutex<HashMap<SessionId, Instant>>,
    /// Held while a session is made, so that two `initialize` calls at once
    /// cannot both take the last place.
    opening: tokio::sync::Mutex<()>,
}

impl BoundedSessions {
    /// At most `max` sessions, each closed after `idle` unused.
    pub fn new(max: usize, idle: Duration) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.keep_alive = Some(idle);
        Self { inner, max, last_used: Mutex::new(HashMap::new()), opening: tokio::sync::Mutex::new(()) }
    }

    fn last_used(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Instant>> {
        // A panic while holding it left a map that is still whole.
        self.last_used.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Marks a session as used now (an unknown one stays unknown).
    fn touch(&self, id: &SessionId) {
        if let Some(used) = self.last_used().get_mut(id) {
            *used = Instant::now();
        }
    }

    /// Closes the least recently used sessions until one more fits.
    async fn make_room(&self) {
        loop {
            let victim = {
                let mut last_used = self.last_used();
                if last_used.len() < self.max {
                    return;
                }
                let Some(victim) = last_used.iter().min_by_key(|(_, used)| **used).map(|(id, _)| id.clone()) else {
                    return;
                };
                last_used.remove(&victim);
                victim
            };
            // Already ended on its own: nothing more to free.
            let _ = self.inner.close_session(&victim).await;
        }
    }
}

impl SessionManager for BoundedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _opening = self.opening.lock().await;
        self.make_room().await;
        let (id, transport) = self.inner.create_session().await?;
        self.last_used().insert(id.clone(), Instant::now());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        // Asked for every request within a session: its use.
        let has = self.inner.has_session(id).await?;
        if has {
            self.touch(id);
        }
        Ok(has)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.last_used().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }
}

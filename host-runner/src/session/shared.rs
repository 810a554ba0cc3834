//! A session log shared between the host and the plugin calls that read it.

use std::sync::{Arc, Mutex, MutexGuard};

use super::{SessionError, SessionLog};

/// One [`SessionLog`] shared by everything that steps or records into it:
/// [`run_step`](crate::run_step), the plugin's `dsh:skill/session` imports
/// during a pre-step, and the embedder recording tool results. Cloning is
/// cheap and every clone is the same log.
///
/// ```
/// use skill_host::{SessionHeader, SessionLog, SharedSession};
///
/// let session = SharedSession::new(SessionLog::in_memory(SessionHeader::new(Some("/workspace".into()))));
/// assert_eq!(session.lock().next_seq(), 0);
/// ```
#[derive(Clone)]
pub struct SharedSession(Arc<Mutex<SessionLog>>);

impl SharedSession {
    /// Shares `log`.
    pub fn new(log: SessionLog) -> Self {
        Self(Arc::new(Mutex::new(log)))
    }

    /// Locks the log for reading or appending; other holders wait meanwhile.
    ///
    /// A lock poisoned by a panic in another holder is taken all the same,
    /// here and nowhere else: the log stays consistent whatever the panic
    /// interrupted, since an append changes the index only after its write
    /// succeeded, and the file is the source of truth.
    #[inline]
    pub fn lock(&self) -> MutexGuard<'_, SessionLog> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Holds the session file's exclusive lock ([`SessionLog::hold`]) until
    /// the returned turn is dropped, however the step ends, so two hosts
    /// stepping one session take turns. A lock the log already held stays
    /// held after the turn; a session in memory has nothing to lock.
    pub fn take_turn(&self) -> Result<Turn<'_>, SessionError> {
        let took = self.lock().hold()?;
        Ok(Turn(took.then_some(self)))
    }
}

impl From<SessionLog> for SharedSession {
    fn from(log: SessionLog) -> Self {
        Self::new(log)
    }
}

impl std::fmt::Debug for SharedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the log: printing must never wait for (or deadlock on) its lock.
        f.debug_struct("SharedSession").finish_non_exhaustive()
    }
}

/// The session file's lock held for one step ([`SharedSession::take_turn`]),
/// let go when dropped.
#[must_use = "the lock is let go as soon as the turn is dropped"]
pub struct Turn<'a>(Option<&'a SharedSession>);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if let Some(session) = self.0 {
            session.lock().release();
        }
    }
}

impl std::fmt::Debug for Turn<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turn").field("took_the_lock", &self.0.is_some()).finish()
    }
}

//! Caps on what one plugin call returns ([`OutputLimits`]): the number of
//! messages a pre-step adds, the bytes of each string, the bytes of all of
//! them. The host copies a call's result out of the guest before it can look
//! at it, and that copy is bounded by the memory cap; these caps bound what
//! goes further, into the session file and the model's context.

use crate::bindings::types as wit;
use crate::error::HostError;
use crate::sandbox::OutputLimits;

/// The running tally of one call's output.
pub(super) struct OutputCheck {
    call: &'static str,
    limits: OutputLimits,
    total: usize,
}

impl OutputCheck {
    pub fn new(call: &'static str, limits: OutputLimits) -> Self {
        Self { call, limits, total: 0 }
    }

    fn invalid(&self, reason: String) -> HostError {
        HostError::InvalidOutput { call: self.call, reason }
    }

    /// Counts one string; `what` names it in the error.
    pub fn text(&mut self, what: impl FnOnce() -> String, text: &str) -> Result<(), HostError> {
        let cap = self.limits.max_text_bytes;
        if text.len() > cap {
            return Err(self.invalid(format!(
                "{} is {} bytes, over the cap of {cap} bytes per text",
                what(),
                text.len()
            )));
        }
        self.total = self.total.saturating_add(text.len());
        let cap = self.limits.max_output_bytes;
        if self.total > cap {
            return Err(
                self.invalid(format!("its texts add up to more than the cap of {cap} bytes per call (at {})", what()))
            );
        }
        Ok(())
    }

    /// Refuses a string of `length` bytes over the cap per text, as
    /// [`text`](Self::text) would, without counting it: for a text not yet
    /// written.
    pub fn fits(&self, what: impl FnOnce() -> String, length: usize) -> Result<(), HostError> {
        let cap = self.limits.max_text_bytes;
        if length > cap {
            return Err(self.invalid(format!("{} is {length} bytes, over the cap of {cap} bytes per text", what())));
        }
        Ok(())
    }

    /// Counts a message the plugin added (its source and every block).
    pub fn added_message(&mut self, ordinal: usize, message: &wit::Message) -> Result<(), HostError> {
        self.text(|| format!("added message {ordinal}'s source"), &message.source)?;
        for (index, block) in message.content.iter().enumerate() {
            let (wit::ContentBlock::Text(text) | wit::ContentBlock::Other(text)) = block;
            self.text(|| format!("added message {ordinal}'s content block {}", index + 1), text)?;
        }
        Ok(())
    }

    /// Refuses a decision with more added messages than the cap, before any
    /// of them is looked at.
    pub fn added_count(&self, added: usize) -> Result<(), HostError> {
        let cap = self.limits.max_added_messages;
        if added > cap {
            return Err(self.invalid(format!("it added {added} messages; a pre-step may add at most {cap}")));
        }
        Ok(())
    }
}

//! `dsh:skill/step`: the proposal a pre-step reads and the decision it makes.
//! The host keeps both; what the plugin decided is checked after the call
//! (see `crate::plugin`).

use serde_json::json;
use skill_rules::{CatalogEntry, Record, SkillCatalog, SkillNotice};

use crate::bindings::step::{AddedMessage, AddedSource, DecidedMessage, Host};
use crate::bindings::types as wit;

/// One pre-step's proposal and what the plugin decided.
#[derive(Clone, Default)]
pub(crate) struct StepCall {
    /// The proposed messages of an entering decision (none for a reject).
    pub proposed: Vec<wit::Message>,
    /// The messages of the plugin's first `decide`, if it made one.
    pub decided: Option<Vec<Decided>>,
    /// How many times it called `decide` (a valid pre-step: at most once).
    pub decisions: u32,
}

impl Host for super::CallContext {
    fn proposed_messages(&mut self) -> wasmtime::Result<Vec<wit::Message>> {
        let answer = match &self.step {
            Some(step) => Ok(step.proposed.clone()),
            None => Err(outside_a_pre_step("proposed-messages")),
        };
        self.trace_import("step.proposed-messages", || json!({}), &answer);
        answer
    }

    fn decide(&mut self, messages: Vec<DecidedMessage>) -> wasmtime::Result<()> {
        self.decide_with(messages, |decided| match decided {
            DecidedMessage::Proposed(index) => Decided::Proposed(index),
            DecidedMessage::Added(added) => Decided::Added(Addition::Typed(added)),
        })
    }
}

/// One message of a decision, whichever contract version made it: a
/// proposed one kept by index, or an added one, which the host checks
/// (docs/spec.md §8.5).
#[derive(Clone, Debug)]
pub(crate) enum Decided {
    /// The proposed message at this index.
    Proposed(u32),
    /// A message the plugin added.
    Added(Addition),
}

/// A message the plugin added, as its contract version sends it.
#[derive(Clone, Debug)]
pub(crate) enum Addition {
    /// A typed record and its text (0.3.0 on): the host writes the source
    /// only once the decision's count is checked ([`Addition::written`]).
    Typed(AddedMessage),
    /// A source the plugin wrote itself, with its blocks (before 0.3.0).
    Written(wit::Message),
}

impl Addition {
    /// The message with its source as JSON text (a typed record written by
    /// [`Record::to_json`]).
    pub(crate) fn written(self) -> wit::Message {
        match self {
            Self::Typed(added) => written(added),
            Self::Written(message) => message,
        }
    }
}

impl Decided {
    /// As a trace writes it: `{"proposed": index}` or `{"added": {"source", "content"}}`.
    fn to_json(&self) -> serde_json::Value {
        match self {
            Self::Proposed(index) => json!({ "proposed": index }),
            Self::Added(addition) => json!({ "added": crate::trace::value(&addition.clone().written()) }),
        }
    }
}

impl super::CallContext {
    /// Keeps the first decision of a pre-step (converted by `convert`) and
    /// counts every one; `step.decide` of any contract version.
    pub(crate) fn decide_with<M>(
        &mut self,
        messages: Vec<M>,
        convert: impl FnMut(M) -> Decided,
    ) -> wasmtime::Result<()> {
        let tracing = self.trace.is_some();
        let (answer, traced) = match &mut self.step {
            Some(step) => {
                step.decisions = step.decisions.saturating_add(1);
                // Only the first decision is kept (a later one is only counted).
                let first = step.decided.is_none();
                let mut traced = None;
                if first || tracing {
                    let decided: Vec<Decided> = messages.into_iter().map(convert).collect();
                    // Traced as the host reads it: a typed record as its written source.
                    traced = tracing
                        .then(|| json!({ "messages": decided.iter().map(Decided::to_json).collect::<Vec<_>>() }));
                    if first {
                        step.decided = Some(decided);
                    }
                }
                (Ok(()), traced)
            }
            None => (Err(outside_a_pre_step("decide")), Some(json!({}))),
        };
        self.trace_import("step.decide", || traced.unwrap_or_default(), &answer);
        answer
    }
}

/// A typed added message as the session stores it: its record written by
/// [`Record::to_json`], the one writer of sources, and its text as the one
/// block. The host checks the result as it checks a source a plugin wrote
/// (names, digests and counts are not in the types).
pub(crate) fn written(added: AddedMessage) -> wit::Message {
    wit::Message { source: record(added.source).to_json(), content: vec![wit::ContentBlock::Text(added.text)] }
}

/// The record a typed source is.
pub(crate) fn record(source: AddedSource) -> Record {
    match source {
        AddedSource::Catalog => Record::Catalog,
        AddedSource::SkillCatalog(catalog) => Record::SkillCatalog(SkillCatalog {
            update: catalog.update,
            entries: catalog
                .entries
                .into_iter()
                .map(|entry| CatalogEntry { name: entry.name, description: entry.description })
                .collect(),
            coverage: catalog.coverage,
        }),
        AddedSource::CatalogUpdate(removed) => Record::CatalogUpdate { removed },
        AddedSource::Invocation(name) => Record::Invocation { name },
        AddedSource::InvocationNote => Record::InvocationNote,
        AddedSource::Changed(notice) => Record::Notice(SkillNotice::Changed {
            name: notice.name,
            provider: notice.provider,
            body_digest: notice.body_digest,
        }),
        AddedSource::Gone(name) => Record::Notice(SkillNotice::Gone { name }),
        AddedSource::Reload(names) => Record::Notice(SkillNotice::Reload { names }),
    }
}

/// Ends a call that used the step interface when there is no step.
fn outside_a_pre_step(function: &str) -> wasmtime::Error {
    wasmtime::format_err!("the plugin called `step.{function}` outside a pre-step")
}

impl From<skill_rules::ToolView> for crate::bindings::plugin::ToolView {
    fn from(view: skill_rules::ToolView) -> Self {
        match view {
            skill_rules::ToolView::Visible => Self::Visible,
            skill_rules::ToolView::Hidden => Self::Hidden,
            skill_rules::ToolView::Shadowed => Self::Shadowed,
        }
    }
}

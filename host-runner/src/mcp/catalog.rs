//! What the component decides for an MCP client: the `skill` tool's
//! description and results, and the prompts' messages. Every model-facing
//! text here is the component's; the host only joins the tool description
//! and the catalog with [`DESCRIPTION_SEPARATOR`] (docs/spec.md §6.9).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use skill_rules::Record;

use crate::message::{single_text, user_message, user_source};
use crate::registry::{Listing, ProviderError, RegistrySnapshot, SkillCandidate, SkillDefinition, SkillProvider};
use crate::{HostError, Plugin, SkillRegistry, preview_step};

/// Between the component's tool description (§3.2) and its catalog (§3.6)
/// in the MCP tool's description.
pub const DESCRIPTION_SEPARATOR: &str = "\n\n";

/// The catalog message the component publishes first in a new session for
/// `cwd`: a pre-step previewed on an empty in-memory session. `None` when it
/// publishes none (no model-invocable skill, or a provider that listed an
/// invalid skill).
///
/// When a provider failed, the preview is over the skills that did list,
/// taken as complete (docs/spec.md §6.9): a session's first step would
/// publish nothing, since its catalog message is a durable record, but a
/// tool description is replaced with `list_changed` once the provider
/// answers again, so it shows what is known now.
pub fn initial_catalog(
    plugin: &Plugin,
    registry: &Arc<SkillRegistry>,
    cwd: Option<&str>,
) -> Result<Option<String>, HostError> {
    let snapshot = registry.snapshot(cwd.map(Path::new));
    let listed = if snapshot.complete || snapshot.invalid_candidate.is_some() {
        Arc::clone(registry)
    } else {
        as_listed(&snapshot)
    };
    let messages = preview_step(plugin, &listed, cwd, Vec::new())?;
    Ok(messages.iter().find(|message| is_catalog(message)).and_then(single_text).map(str::to_owned))
}

/// The tool description a client without the Skills extension sees: the
/// component's own description, then its initial catalog when there is one.
pub fn tool_description(
    description: &str,
    plugin: &Plugin,
    registry: &Arc<SkillRegistry>,
    cwd: Option<&str>,
) -> Result<String, HostError> {
    Ok(match initial_catalog(plugin, registry, cwd)? {
        Some(catalog) => format!("{description}{DESCRIPTION_SEPARATOR}{catalog}"),
        None => description.to_owned(),
    })
}

/// The block the component injects when a user types `/name` (§3.10): what
/// the prompt `name` returns. `None` when the component injects nothing (an
/// unknown skill, one that is not user-invocable, a failing provider).
/// `prompt_plugin` must be configured with `"userInvocation": true`.
pub fn invocation_block(
    prompt_plugin: &Plugin,
    registry: &Arc<SkillRegistry>,
    cwd: Option<&str>,
    name: &str,
) -> Result<Option<String>, HostError> {
    let gesture = user_message(user_source(), &format!("/{name}"));
    let messages = preview_step(prompt_plugin, registry, cwd, vec![gesture])?;
    Ok(messages
        .iter()
        .find(|message| matches!(record(message), Some(Record::Invocation { name: injected }) if injected == name))
        .and_then(single_text)
        .map(str::to_owned))
}

/// A registry listing exactly the winners of `snapshot`, completely: one
/// provider per provider name (candidates must carry their provider's
/// name), ranks kept, so each winner wins again. It loads nothing: a
/// catalog preview on an empty session loads no skill.
fn as_listed(snapshot: &RegistrySnapshot) -> Arc<SkillRegistry> {
    let mut by_provider: BTreeMap<&str, Vec<SkillCandidate>> = BTreeMap::new();
    for winner in &snapshot.skills {
        by_provider.entry(&winner.candidate.provider).or_default().push(winner.candidate.clone());
    }
    let registry = SkillRegistry::new();
    for (name, candidates) in by_provider {
        registry.register_provider(Arc::new(Listed { name: name.to_owned(), candidates }));
    }
    Arc::new(registry)
}

/// What one provider listed, listed again (see [`as_listed`]).
struct Listed {
    name: String,
    candidates: Vec<SkillCandidate>,
}

impl SkillProvider for Listed {
    fn name(&self) -> &str {
        &self.name
    }

    fn list(&self, _cwd: Option<&Path>) -> Result<Listing, ProviderError> {
        Ok(Listing { candidates: self.candidates.clone(), complete: true, ..Listing::default() })
    }

    fn load(&self, _cwd: Option<&Path>, _candidate: &SkillCandidate) -> Result<Option<SkillDefinition>, ProviderError> {
        Ok(None)
    }
}

/// Whether `message` is an initial catalog in either form the component
/// records (§3.1 `catalogSource`): [`Record::Catalog`], or a
/// [`Record::SkillCatalog`] that is not a replacement.
fn is_catalog(message: &Value) -> bool {
    match record(message) {
        Some(Record::Catalog) => true,
        Some(Record::SkillCatalog(catalog)) => !catalog.update,
        _ => false,
    }
}

/// The record a message the component added is (its source was checked
/// when the step was applied), `None` for anything else.
fn record(message: &Value) -> Option<Record> {
    Record::from_value(message.get("source")?).ok()
}

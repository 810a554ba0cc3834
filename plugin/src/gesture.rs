//! User-explicit invocation (opt-in): a whitespace-bounded `/name` in a
//! user's own message loads that skill into the step.

use skill_rules::Record;

use crate::description::is_ecmascript_whitespace;
use crate::tool::is_skill_name;
use crate::types::{ContentBlock, Message};

/// The most user-invoked skills one pre-step injects (docs/spec.md §3.10).
/// Shared with the hosts, whose default cap on added messages (64,
/// `OutputLimits::max_added_messages` in host-runner/src/sandbox/mod.rs) must
/// leave room for a catalog, these injections and the note.
pub use skill_rules::MAX_INVOKED_SKILLS;

/// The source of an injected skill, as JSON text.
pub fn invocation_source(name: &str) -> String {
    Record::Invocation { name: name.to_owned() }.to_json()
}

/// The note that follows the injections when a user named more than
/// [`MAX_INVOKED_SKILLS`] skills that would be injected: `names` are the
/// ones left out, in first-seen order (never empty).
pub fn not_loaded_note(names: &[String]) -> Message {
    let mut text = String::from("Not loaded:");
    for (index, name) in names.iter().enumerate() {
        text.push_str(if index == 0 { " /" } else { ", /" });
        text.push_str(name);
    }
    text.push_str(". At most ");
    text.push_str(&MAX_INVOKED_SKILLS.to_string());
    text.push_str(" user-invoked skills are loaded at once; ask the user to invoke the others in a later message.");
    Message { source: Record::InvocationNote.to_json(), content: vec![ContentBlock::Text(text)] }
}

/// The distinct `/name` tokens of the user's messages, in first-seen order.
/// Only messages whose source kind is `user`, only their text blocks; a token
/// is `/` preceded by the start or whitespace, then a skill name, then
/// whitespace or the end: `(^|\s)/([a-z0-9]+(?:-[a-z0-9]+)*)(?=\s|$)`. So
/// `/usr/bin`, `5/8` and `foo/bar` never match.
pub fn invoked_skill_names(messages: &[Message]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for message in messages.iter().filter(|message| is_user_source(&message.source)) {
        for block in &message.content {
            let ContentBlock::Text(text) = block else { continue };
            for name in tokens(text) {
                if !names.iter().any(|seen| seen == name) {
                    names.push(name.to_owned());
                }
            }
        }
    }
    names
}

fn tokens(text: &str) -> impl Iterator<Item = &str> {
    let mut previous_is_boundary = true;
    text.char_indices().filter_map(move |(index, c)| {
        let at_boundary = previous_is_boundary;
        previous_is_boundary = is_ecmascript_whitespace(c);
        if c != '/' || !at_boundary {
            return None;
        }
        let rest = &text[index + 1..];
        let end = rest.find(is_ecmascript_whitespace).unwrap_or(rest.len());
        let token = &rest[..end];
        is_skill_name(token).then_some(token)
    })
}

fn is_user_source(source: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(source)
        .is_ok_and(|source| source.get("kind").and_then(serde_json::Value::as_str) == Some("user"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Message {
        Message { source: r#"{"kind":"user"}"#.to_owned(), content: vec![ContentBlock::Text(text.to_owned())] }
    }

    #[test]
    fn finds_whitespace_bounded_tokens_in_first_seen_order() {
        assert_eq!(invoked_skill_names(&[user("please use /pdf now")]), ["pdf"]);
        assert_eq!(invoked_skill_names(&[user("/b first,\tthen /a and /b\n/c-d")]), ["b", "a", "c-d"]);
        assert_eq!(invoked_skill_names(&[user("/x"), user("again /x /y")]), ["x", "y"]);
        assert_eq!(invoked_skill_names(&[user("no-break\u{3000}/wide")]), ["wide"]);
    }

    #[test]
    fn paths_fractions_and_malformed_names_never_match() {
        for text in
            ["/usr/bin", "5/8", "foo/bar", "/Pdf", "/pdf.", "/pdf-", "/-pdf", "/a--b", "//pdf", "x/pdf", "/", "(/pdf)"]
        {
            assert_eq!(invoked_skill_names(&[user(text)]), Vec::<String>::new(), "{text}");
        }
    }

    #[test]
    fn only_user_sources_and_text_blocks_count() {
        let plugin = Message {
            source: r#"{"kind":"plugin","plugin":"x"}"#.to_owned(),
            content: vec![ContentBlock::Text("/pdf".to_owned())],
        };
        let other_block = Message {
            source: r#"{"kind":"user"}"#.to_owned(),
            content: vec![ContentBlock::Other(r#"{"type":"image","alt":"/pdf"}"#.to_owned())],
        };
        assert_eq!(invoked_skill_names(&[plugin, other_block]), Vec::<String>::new());
    }

    #[test]
    fn the_not_loaded_note_is_exact() {
        let names = ["x".to_owned(), "y-z".to_owned()];
        assert_eq!(
            not_loaded_note(&names),
            Message {
                source: r#"{"kind":"skill-invocation","form":"not-loaded"}"#.to_owned(),
                content: vec![ContentBlock::Text(
                    "Not loaded: /x, /y-z. At most 16 user-invoked skills are loaded at once; ask the user to invoke the others in a later message."
                        .to_owned()
                )],
            }
        );
        assert_eq!(
            not_loaded_note(&names[..1]).single_text(),
            Some(
                "Not loaded: /x. At most 16 user-invoked skills are loaded at once; ask the user to invoke the others in a later message."
            )
        );
    }

    #[test]
    fn the_injected_source_is_exact() {
        assert_eq!(invocation_source("pdf"), r#"{"kind":"skill-invocation","name":"pdf","form":"instructions"}"#);
    }
}

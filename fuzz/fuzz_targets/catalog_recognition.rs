//! Catalog recognition (plugin `catalog::is_catalog` / `published_digest`,
//! docs/spec.md §3.7): on any message it never panics and the two agree; every
//! catalog the plugin renders, initial or replacement, is recognised with the
//! digest it was built with; and a later-generation `skill-catalog` message
//! listing the same entries has the same digest, so moving a session between
//! hosts never publishes a duplicate.

#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use skill_plugin::catalog::{Catalog, is_catalog, published_digest};
use skill_plugin::description::catalog_description;
use skill_plugin::types::{ContentBlock, InvocationPolicy, Message, SkillSummary};

/// Sources that reach the interesting branches more often than random text.
const SOURCES: [&str; 5] = [
    r#"{"kind":"plugin","plugin":"dsh-tool-skill"}"#,
    r#"{"kind":"skill-catalog","form":"catalog","entries":[]}"#,
    r#"{"kind":"skill-catalog"}"#,
    r#"{"kind":"user"}"#,
    r#"{"kind":"plugin","plugin":"compaction"}"#,
];

fn message(u: &mut Unstructured<'_>) -> arbitrary::Result<Message> {
    let source = if u.arbitrary()? { SOURCES[u.choose_index(SOURCES.len())?].to_owned() } else { u.arbitrary()? };
    let mut content = Vec::new();
    for _ in 0..u.int_in_range(0..=2)? {
        let text: String = u.arbitrary()?;
        // Text that carries the markers, so recognition's slicing is exercised.
        let text = match u.int_in_range(0..=2)? {
            0 => text,
            1 => format!("<available_skills>\n{text}"),
            _ => format!("{}<available_skills>\n{text}</available_skills>{}", u.arbitrary::<&str>()?, u.arbitrary::<&str>()?),
        };
        content.push(if u.arbitrary()? { ContentBlock::Text(text) } else { ContentBlock::Other(text) });
    }
    Ok(Message { source, content })
}

/// A name in the registry's grammar (the registry refuses any other).
fn skill_name(u: &mut Unstructured<'_>) -> arbitrary::Result<String> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut parts = Vec::new();
    for _ in 0..u.int_in_range(1..=3)? {
        let mut part = String::new();
        for _ in 0..u.int_in_range(1..=6)? {
            part.push(char::from(ALPHABET[u.choose_index(ALPHABET.len())?]));
        }
        parts.push(part);
    }
    Ok(parts.join("-"))
}

fn skills(u: &mut Unstructured<'_>) -> arbitrary::Result<Vec<SkillSummary>> {
    let mut skills = Vec::new();
    for _ in 0..u.int_in_range(0..=6)? {
        skills.push(SkillSummary {
            name: skill_name(u)?,
            description: u.arbitrary()?,
            when_to_use: None,
            invocation: InvocationPolicy { model_invocable: u.arbitrary()?, user_invocable: true },
            provider: "fuzz".to_owned(),
            source: "fuzz".to_owned(),
            path: None,
            body_digest: None,
        });
    }
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    skills.dedup_by(|a, b| a.name == b.name);
    Ok(skills)
}

struct Input {
    message: Message,
    skills: Vec<SkillSummary>,
    cap: usize,
    user_invocation: bool,
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Input {
            message: message(u)?,
            skills: skills(u)?,
            cap: u.int_in_range(3..=600)?,
            user_invocation: u.arbitrary()?,
        })
    }
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("message", &self.message)
            .field("skills", &self.skills)
            .field("cap", &self.cap)
            .field("user_invocation", &self.user_invocation)
            .finish()
    }
}

fuzz_target!(|input: Input| {
    let digest = published_digest(&input.message);
    assert_eq!(is_catalog(&input.message), digest.is_some(), "{:?}", input.message);

    let catalog = Catalog::from_skills(&input.skills, input.cap);
    for rendered in [catalog.initial_message(input.user_invocation), catalog.replacement_message(input.user_invocation)]
    {
        assert_eq!(published_digest(&rendered), Some(catalog.digest), "{rendered:?}");
    }

    let entries: Vec<_> = input
        .skills
        .iter()
        .filter(|skill| skill.invocation.model_invocable)
        .map(|skill| json!({"name": skill.name, "description": catalog_description(&skill.description, input.cap)}))
        .collect();
    let later = Message {
        source: json!({"kind": "skill-catalog", "form": "catalog", "entries": entries}).to_string(),
        content: vec![ContentBlock::Text("(text as a later harness wrote it)".to_owned())],
    };
    assert_eq!(published_digest(&later), Some(catalog.digest), "{later:?}");
});

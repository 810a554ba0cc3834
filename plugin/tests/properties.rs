//! Properties of the code that reads untrusted text, checked on generated
//! inputs (`proptest`, a few hundred cases each, so CI stays fast; the long
//! runs are the cargo-fuzz targets in `fuzz/`): description normalisation
//! (docs/spec.md §3.5) and catalog recognition (§3.7).

use proptest::prelude::*;
use serde_json::json;
use skill_plugin::catalog::{Catalog, is_catalog, published_digest};
use skill_plugin::description::{ELLIPSIS, catalog_description, is_ecmascript_whitespace};
use skill_plugin::types::{ContentBlock, InvocationPolicy, Message, SkillSummary};

/// Text rich in what normalisation cares about: every ECMAScript whitespace
/// character, characters outside the BMP, and markup.
fn text() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        any::<char>().prop_map(String::from),
        prop::sample::select(vec![
            " ",
            "\t",
            "\n",
            "\r\n",
            "\u{0B}",
            "\u{0C}",
            "\u{A0}",
            "\u{1680}",
            "\u{2000}",
            "\u{200A}",
            "\u{2028}",
            "\u{2029}",
            "\u{202F}",
            "\u{205F}",
            "\u{3000}",
            "\u{FEFF}",
            "\u{85}",
            "😀",
            "é",
            "&",
            "<",
            ">",
            "</available_skills>",
            "<available_skills>\n",
            "word",
        ])
        .prop_map(str::to_owned),
    ];
    prop::collection::vec(pieces, 0..40).prop_map(|pieces| pieces.concat())
}

fn skill(name: String, description: String, model_invocable: bool) -> SkillSummary {
    SkillSummary {
        body_digest: None,
        name,
        description,
        when_to_use: None,
        invocation: InvocationPolicy { model_invocable, user_invocable: true },
        provider: "p".to_owned(),
        source: "p".to_owned(),
        path: None,
    }
}

/// Skills as the registry hands them over: valid, distinct names, sorted.
fn skills() -> impl Strategy<Value = Vec<SkillSummary>> {
    prop::collection::btree_map("[a-z0-9]{1,6}(-[a-z0-9]{1,6}){0,2}", (text(), any::<bool>()), 0..8).prop_map(
        |skills| {
            skills.into_iter().map(|(name, (description, invocable))| skill(name, description, invocable)).collect()
        },
    )
}

fn message() -> impl Strategy<Value = Message> {
    let source = prop_oneof![
        Just(r#"{"kind":"plugin","plugin":"dsh-tool-skill"}"#.to_owned()),
        Just(r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":"b"}]}"#.to_owned()),
        Just(r#"{"kind":"skill-catalog","entries":[{"name":""}]}"#.to_owned()),
        any::<String>(),
    ];
    let block = prop_oneof![text().prop_map(ContentBlock::Text), text().prop_map(ContentBlock::Other)];
    (source, prop::collection::vec(block, 0..3)).prop_map(|(source, content)| Message { source, content })
}

proptest! {
    #[test]
    fn a_normalised_description_fits_its_cap_with_single_spaces_only(raw in text(), cap in 3_usize..80) {
        let out = catalog_description(&raw, cap);
        prop_assert!(out.chars().count() <= cap);
        prop_assert!(!out.chars().any(|c| is_ecmascript_whitespace(c) && c != ' '));
        prop_assert!(!out.contains("  "));
        prop_assert!(!out.starts_with(' ') && !out.ends_with(' '));
        let normalized = raw.split(is_ecmascript_whitespace).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
        if normalized.chars().count() <= cap {
            prop_assert_eq!(&out, &normalized);
        } else {
            let kept: String = normalized.chars().take(cap - ELLIPSIS.len()).collect();
            prop_assert_eq!(&out, &format!("{kept}{ELLIPSIS}"));
        }
        prop_assert_eq!(catalog_description(&out, cap), out);
    }

    #[test]
    fn recognition_never_panics_and_its_two_forms_agree(message in message()) {
        prop_assert_eq!(is_catalog(&message), published_digest(&message).is_some());
    }

    #[test]
    fn every_rendered_catalog_is_recognised_with_its_digest_in_both_generations(
        skills in skills(),
        cap in 3_usize..600,
        user_invocation in any::<bool>(),
    ) {
        let catalog = Catalog::from_skills(&skills, cap);
        prop_assert_eq!(published_digest(&catalog.initial_message(user_invocation)), Some(catalog.digest));
        prop_assert_eq!(published_digest(&catalog.replacement_message(user_invocation)), Some(catalog.digest));
        let entries: Vec<_> = skills
            .iter()
            .filter(|skill| skill.invocation.model_invocable)
            .map(|skill| json!({"name": skill.name, "description": catalog_description(&skill.description, cap)}))
            .collect();
        let later = Message {
            source: json!({"kind": "skill-catalog", "form": "catalog", "entries": entries}).to_string(),
            content: vec![ContentBlock::Text("as a later harness wrote it".to_owned())],
        };
        prop_assert_eq!(published_digest(&later), Some(catalog.digest));
    }
}

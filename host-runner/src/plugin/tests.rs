use super::*;
use crate::bindings::step::DecidedMessage;
use crate::message::{self, CATALOG_SOURCE};
use crate::sandbox::OutputLimits;

fn added(source: &str, texts: &[&str]) -> DecidedMessage {
    DecidedMessage::Added(wit::Message {
        source: source.to_owned(),
        content: texts.iter().map(|text| wit::ContentBlock::Text((*text).to_owned())).collect(),
    })
}

fn injection(name: &str) -> DecidedMessage {
    added(&format!(r#"{{"kind":"skill-invocation","name":"{name}","form":"instructions"}}"#), &["body"])
}

const NOTE: &str = r#"{"kind":"skill-invocation","form":"not-loaded"}"#;

fn notice_about(name: &str) -> DecidedMessage {
    added(&format!(r#"{{"kind":"skill-notice","form":"gone","name":"{name}"}}"#), &["gone"])
}

#[test]
fn skill_notices_are_accepted_only_in_their_exact_shapes_and_once() {
    let accepted = [
        r#"{"kind":"skill-notice","form":"changed","name":"a","provider":"local","bodyDigest":"sha256:00"}"#,
        r#"{"provider":"p","name":"b","form":"changed","kind":"skill-notice"}"#,
        r#"{"kind":"skill-notice","form":"gone","name":"c"}"#,
        r#"{"kind":"skill-notice","form":"reload","names":["d","e"]}"#,
    ];
    let decided = accepted.iter().map(|source| added(source, &["text"])).collect();
    let Ok(Decision::Enter(messages)) = apply(&[], decided) else { panic!() };
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[2]["source"], serde_json::json!({"kind": "skill-notice", "form": "gone", "name": "c"}));
    for bad in [
        r#"{"kind":"skill-notice","form":"gone","name":"Bad"}"#,
        r#"{"kind":"skill-notice","form":"gone","name":"c","extra":1}"#,
        r#"{"kind":"skill-notice","form":"changed","name":"a"}"#,
        r#"{"kind":"skill-notice","form":"changed","name":"a","provider":""}"#,
        r#"{"kind":"skill-notice","form":"changed","name":"a","provider":"p","bodyDigest":"has space"}"#,
        r#"{"kind":"skill-notice","form":"changed","name":"a","provider":"p","bodyDigest":7}"#,
        r#"{"kind":"skill-notice","form":"reload","names":[]}"#,
        r#"{"kind":"skill-notice","form":"reload","names":["d","d"]}"#,
        &format!(
            r#"{{"kind":"skill-notice","form":"reload","names":[{}]}}"#,
            (0..=skill_rules::MAX_RELOAD_NAMES).map(|at| format!("\"n{at}\"")).collect::<Vec<_>>().join(",")
        ),
        r#"{"kind":"skill-notice","form":"stale","name":"c"}"#,
    ] {
        let source: Value = serde_json::from_str(bad).unwrap();
        assert_eq!(
            refusal(apply(&[], vec![added(bad, &["text"])])),
            format!("an added skill notice has source {source}, which is not a changed, gone or reload notice"),
            "{bad}"
        );
    }
    assert_eq!(refusal(apply(&[], vec![notice_about("a"), notice_about("a")])), "skill \"a\" got more than one notice");
    let reload = r#"{"kind":"skill-notice","form":"reload","names":["d"]}"#;
    assert_eq!(
        refusal(apply(&[], vec![added(reload, &["r"]), added(reload, &["r"])])),
        "more than one reload notice was added"
    );
    assert_eq!(
        refusal(apply(&[], vec![added(accepted[2], &["a", "b"])])),
        "an added message must be exactly one text block"
    );
}

#[test]
fn a_catalog_in_the_skill_catalog_form_is_accepted_only_in_its_exact_shape_and_once() {
    let initial = r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":"One."}]}"#;
    let update = r#"{"entries":[],"update":true,"form":"catalog","kind":"skill-catalog"}"#;
    let budgeted = r#"{"kind":"skill-catalog","form":"catalog","entries":[],"coverage":"Catalog coverage: 0 of 0 skills listed."}"#;
    for source in [initial, update, budgeted] {
        let Ok(Decision::Enter(messages)) = apply(&[], vec![added(source, &["catalog"])]) else { panic!() };
        assert_eq!(messages[0]["source"], serde_json::from_str::<Value>(source).unwrap());
    }
    assert_eq!(
        refusal(apply(&[], vec![added(initial, &["c"]), added(&CATALOG_SOURCE.to_string(), &["c"])])),
        "more than one catalog was added"
    );
    for bad in [
        r#"{"kind":"skill-catalog","form":"catalog"}"#,
        r#"{"kind":"skill-catalog","form":"catalog","update":false,"entries":[]}"#,
        r#"{"kind":"skill-catalog","form":"list","entries":[]}"#,
        r#"{"kind":"skill-catalog","form":"catalog","entries":[],"extra":1}"#,
        r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"Bad","description":"x"}]}"#,
        r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":1}]}"#,
        r#"{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":"x","more":1}]}"#,
        r#"{"kind":"skill-catalog","form":"catalog","entries":{}}"#,
        r#"{"kind":"skill-catalog","form":"catalog","entries":[],"coverage":1}"#,
    ] {
        assert_refused_as_foreign(bad);
    }
}

/// A message added with source `bad` is refused as no source the plugin may write.
fn assert_refused_as_foreign(bad: &str) {
    let source: Value = serde_json::from_str(bad).unwrap();
    assert_eq!(
        refusal(apply(&[], vec![added(bad, &["text"])])),
        format!(
            "an added message has source {source}; the plugin may only write {} or a skill invocation",
            *CATALOG_SOURCE
        ),
        "{bad}"
    );
}

#[test]
fn a_catalog_update_is_accepted_only_in_its_exact_shape_and_as_the_one_catalog() {
    let update = r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":["a","b"]}"#;
    let Ok(Decision::Enter(messages)) = apply(&[], vec![added(update, &["update"])]) else { panic!() };
    assert_eq!(messages[0]["source"], serde_json::from_str::<Value>(update).unwrap());
    assert_eq!(
        refusal(apply(&[], vec![added(update, &["u"]), added(&CATALOG_SOURCE.to_string(), &["c"])])),
        "more than one catalog was added"
    );
    for bad in [
        r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update"}"#,
        r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":["a","a"]}"#,
        r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":["A"]}"#,
        r#"{"kind":"plugin","plugin":"other","form":"catalog-update","removed":[]}"#,
        r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog","removed":[]}"#,
        r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":[],"x":1}"#,
    ] {
        assert_refused_as_foreign(bad);
    }
}

#[test]
fn search_matches_answer_a_query_with_at_most_five_distinct_skills_and_record_no_load() {
    let found = |names: &[&str], loaded: bool| -> Result<api::ToolSuccess, String> {
        Ok(api::ToolSuccess {
            value: api::ToolValue::Matches(
                names
                    .iter()
                    .map(|name| api::SkillMatch { name: (*name).to_owned(), description: "d".to_owned() })
                    .collect(),
            ),
            text: "t".to_owned(),
            loaded: loaded.then(|| api::LoadedSkill {
                name: "a".to_owned(),
                provider: "p".to_owned(),
                body_digest: None,
            }),
        })
    };
    let check = || OutputCheck::new("invoke", OutputLimits::default());
    assert!(validate_tool_result(&found(&["a", "b"], false), r#"{"query":"x"}"#, check()).is_ok());
    for (returned, arguments, reason) in [
        (found(&["a"], false), r#"{"name":"a"}"#, "it returned search matches, but the arguments have no query"),
        (
            found(&["a"], false),
            r#"{"name":"a","query":"x"}"#,
            "it returned search matches, but the arguments have no query",
        ),
        (
            found(&["a", "b", "c", "d", "e", "f"], false),
            r#"{"query":"x"}"#,
            "it returned 6 search matches; at most 5 are allowed",
        ),
        (
            found(&["a", "a"], false),
            r#"{"query":"x"}"#,
            "search match 1 names skill \"a\", which is not a valid skill name or is listed twice",
        ),
        (found(&["a"], true), r#"{"query":"x"}"#, "it records a load for search matches"),
    ] {
        match validate_tool_result(&returned, arguments, check()) {
            Err(HostError::InvalidOutput { call: "invoke", reason: got }) => assert_eq!(got, reason),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
}

/// The decision `decided` made on one user message naming `names`.
fn apply(names: &[String], decided: Vec<DecidedMessage>) -> Result<Decision, HostError> {
    let text: Vec<String> = names.iter().map(|name| format!("/{name}")).collect();
    let proposed = message::user_message(message::user_source(), &text.join(" "));
    let step = StepCall { decided: Some(decided), decisions: 1, ..StepCall::default() };
    apply_decision(Decision::Enter(vec![proposed]), step, OutputLimits::default())
}

fn refusal(result: Result<Decision, HostError>) -> String {
    match result {
        Err(HostError::InvalidOutput { call: "pre-step", reason }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn the_default_cap_holds_everything_the_plugin_adds_to_a_step() {
    // A catalog, the notices and the reminder (docs/spec.md §3.12),
    // MAX_INVOKED_SKILLS injections and the note (§3.10).
    assert_eq!(
        skill_rules::MAX_PLUGIN_ADDED_MESSAGES,
        1 + skill_rules::MAX_SKILL_NOTICES + 1 + skill_rules::MAX_INVOKED_SKILLS + 1
    );
    assert!(OutputLimits::default().max_added_messages >= skill_rules::MAX_PLUGIN_ADDED_MESSAGES);
    // That worst case, with seventy skills named, is accepted as it is.
    let names: Vec<String> = (1..=70).map(|index| format!("s{index}")).collect();
    let mut decided = vec![DecidedMessage::Proposed(0), added(&CATALOG_SOURCE.to_string(), &["catalog"])];
    decided.extend((0..skill_rules::MAX_SKILL_NOTICES).map(|index| notice_about(&format!("n{index}"))));
    decided.push(added(r#"{"kind":"skill-notice","form":"reload","names":["r"]}"#, &["reload"]));
    decided.extend(names[..skill_rules::MAX_INVOKED_SKILLS].iter().map(|name| injection(name)));
    decided.push(added(skill_rules::INVOCATION_NOTE_SOURCE, &["Not loaded: /s17, …"]));
    assert_eq!(decided.len() - 1, skill_rules::MAX_PLUGIN_ADDED_MESSAGES);
    let Ok(Decision::Enter(messages)) = apply(&names, decided) else { panic!() };
    assert_eq!(messages.len(), 1 + skill_rules::MAX_PLUGIN_ADDED_MESSAGES);
    let note = messages.last().unwrap();
    assert_eq!(note["source"], serde_json::json!({"kind": "skill-invocation", "form": "not-loaded"}));
    assert_eq!(message::single_text(note), Some("Not loaded: /s17, …"));
    assert_eq!(note["role"], "user");
}

#[test]
fn the_note_is_accepted_once_in_any_key_order_and_as_one_text_block() {
    let names = ["a".to_owned()];
    assert_eq!(NOTE, skill_rules::INVOCATION_NOTE_SOURCE);
    for source in [
        NOTE,
        r#"{"form":"not-loaded","kind":"skill-invocation"}"#,
        "{ \"form\" : \"not-loaded\", \"kind\":\"skill-invocation\" }",
    ] {
        let Ok(Decision::Enter(messages)) = apply(&names, vec![injection("a"), added(source, &["n"])]) else {
            panic!("{source}")
        };
        assert_eq!(messages.len(), 2);
    }
    assert_eq!(
        refusal(apply(&names, vec![added(NOTE, &["n"]), added(NOTE, &["n"])])),
        "more than one invocation note was added"
    );
    for texts in [&[][..], &["n", "n"][..]] {
        assert_eq!(refusal(apply(&names, vec![added(NOTE, texts)])), "an added message must be exactly one text block");
    }
    let other = DecidedMessage::Added(wit::Message {
        source: NOTE.to_owned(),
        content: vec![wit::ContentBlock::Other(r#"{"type":"image"}"#.to_owned())],
    });
    assert_eq!(refusal(apply(&names, vec![other])), "an added message must be exactly one text block");
}

#[test]
fn anything_else_like_the_note_keeps_todays_refusal() {
    for source in [
        r#"{"kind":"skill-invocation","form":"not-loaded","name":"a"}"#,
        r#"{"kind":"skill-invocation","form":"not-loaded","extra":1}"#,
        r#"{"kind":"skill-invocation","form":"Not-loaded"}"#,
        r#"{"kind":"skill-invocation"}"#,
        r#"{"kind":"skill-invocation","form":["not-loaded"]}"#,
    ] {
        let parsed: Value = serde_json::from_str(source).unwrap();
        assert_eq!(
            refusal(apply(&["a".to_owned()], vec![added(source, &["n"])])),
            format!(
                "an added message has source {parsed}; the plugin may only write {{\"kind\":\"plugin\",\"plugin\":\"dsh-tool-skill\"}} or a skill invocation"
            ),
            "{source}"
        );
    }
}

use super::*;
use crate::imports::{Addition, Decided};
use crate::message::{self, CATALOG_SOURCE};
use crate::sandbox::OutputLimits;

mod records;

fn added(source: &str, texts: &[&str]) -> Decided {
    Decided::Added(Addition::Written(wit::Message {
        source: source.to_owned(),
        content: texts.iter().map(|text| wit::ContentBlock::Text((*text).to_owned())).collect(),
    }))
}

fn injection(name: &str) -> Decided {
    added(&format!(r#"{{"kind":"skill-invocation","name":"{name}","form":"instructions"}}"#), &["body"])
}

fn notice_about(name: &str) -> Decided {
    added(&format!(r#"{{"kind":"skill-notice","form":"gone","name":"{name}"}}"#), &["gone"])
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
    assert!(validate_tool_result(&found(&["a", "b"], false), r#"{"query":"x"}"#, &[], check()).is_ok());
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
        match validate_tool_result(&returned, arguments, &[], check()) {
            Err(HostError::InvalidOutput { call: "invoke", reason: got }) => assert_eq!(got, reason),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
}

#[test]
fn a_file_value_names_only_a_file_the_registry_read_for_the_call() {
    let file = |name: &str, path: &str| -> Result<api::ToolSuccess, String> {
        Ok(api::ToolSuccess {
            value: api::ToolValue::File(api::FileResult {
                name: name.to_owned(),
                provider: "local".to_owned(),
                path: path.to_owned(),
                content: "c".to_owned(),
            }),
            text: "t".to_owned(),
            loaded: None,
        })
    };
    let check = || OutputCheck::new("invoke", OutputLimits::default());
    let read = [("a".to_owned(), "refs/x.md".to_owned())];
    let arguments = r#"{"name":"a","path":"refs/x.md"}"#;
    assert!(validate_tool_result(&file("a", "refs/x.md"), arguments, &read, check()).is_ok());
    for (returned, files_read, reason) in [
        (
            file("a", "refs/x.md"),
            &[][..],
            "the value is file \"refs/x.md\" of skill \"a\", which the registry did not read for this call",
        ),
        (
            file("a", "../../etc/passwd"),
            &read[..],
            "the value is file \"../../etc/passwd\" of skill \"a\", which the registry did not read for this call",
        ),
        (file("b", "refs/x.md"), &read[..], "the value is skill \"b\", but the arguments asked for \"a\""),
    ] {
        match validate_tool_result(&returned, arguments, files_read, check()) {
            Err(HostError::InvalidOutput { call: "invoke", reason: got }) => assert_eq!(got, reason),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
}

/// The decision `decided` made on one user message naming `names`.
fn apply(names: &[String], decided: Vec<Decided>) -> Result<Decision, HostError> {
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
    let mut decided = vec![Decided::Proposed(0), added(&CATALOG_SOURCE.to_string(), &["catalog"])];
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
fn a_name_in_an_error_is_quoted_as_json_as_the_other_hosts_quote_it() {
    // JSON.stringify("a\u0001\u007f\u2028\t\"\\") in Node, json.dumps(…, ensure_ascii=False) in Python.
    assert_eq!(json_quoted("a\u{1}\u{7f}\u{2028}\t\"\\"), "\"a\\u0001\u{7f}\u{2028}\\t\\\"\\\\\"");
}

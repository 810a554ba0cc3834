//! The record table (`rules/records.json`, shared with the Node host's
//! `hosts/node/test/records.test.mjs`) through this host's own checks: each
//! source through [`added_message`](super::super::decision::added_message),
//! each step through [`apply_decision`].

use serde_json::Value;

use skill_rules::{Record, SkillNotice};

use super::*;
use crate::bindings::step::{self, AddedMessage, AddedSource};
use crate::imports::{record, written};
use crate::plugin::decision::added_message;

/// The table: what a pre-step may add, and what is refused.
const TABLE: &str = include_str!("../../../../rules/records.json");

fn table() -> Value {
    serde_json::from_str(TABLE).expect("the record table is JSON")
}

/// A row's source text: `text` as it is, or `source` written compactly.
fn source_text(row: &Value) -> String {
    match row.get("text") {
        Some(text) => text.as_str().expect("a row's text is a string").to_owned(),
        None => row["source"].to_string(),
    }
}

/// A row as an added message: its source and its `content` (a string is a
/// text block, `{"other": json}` another block; one text block when absent).
fn message_of(row: &Value) -> wit::Message {
    let content = match row.get("content") {
        None => vec![wit::ContentBlock::Text("text".to_owned())],
        Some(blocks) => blocks
            .as_array()
            .expect("content is an array")
            .iter()
            .map(|block| match block {
                Value::String(text) => wit::ContentBlock::Text(text.clone()),
                other => wit::ContentBlock::Other(other["other"].as_str().expect("another block").to_owned()),
            })
            .collect(),
    };
    wit::Message { source: source_text(row), content }
}

/// This host's reason for a refusal the row names (docs/spec.md §8.5).
fn reason(row: &Value, source: &str) -> String {
    let parsed = || serde_json::from_str::<Value>(source).expect("a refused source that is JSON");
    match row["refused"].as_str().expect("a row is accepted or refused") {
        "not-json" => {
            let error = serde_json::from_str::<Value>(source).expect_err("the table says it is not JSON");
            // The Node host's parser words it alike.
            if let Some(expected) = row.get("error") {
                assert_eq!(error.to_string(), *expected, "{row}");
            }
            format!("an added message's source is not JSON: {error}")
        }
        "not-one-text-block" => "an added message must be exactly one text block".to_owned(),
        "not-a-notice" => {
            format!("an added skill notice has source {}, which is not a changed, gone or reload notice", parsed())
        }
        "foreign" => format!(
            "an added message has source {}; the plugin may only write {} or a skill invocation",
            parsed(),
            *CATALOG_SOURCE
        ),
        other => panic!("the table names no refusal {other:?}"),
    }
}

/// Checks one added message against its row.
fn check_row(row: &Value) {
    let message = message_of(row);
    match (added_message(&message), row.get("accepted").and_then(Value::as_str)) {
        (Ok(added), Some(name)) => {
            assert_eq!(added.record.name(), name, "{row}");
            let [wit::ContentBlock::Text(text)] = message.content.as_slice() else { panic!("{row}") };
            // Entered in the log's shape, the source as parsed (keys sorted, a
            // key given twice at its last value).
            let parsed: Value = serde_json::from_str(&message.source).unwrap();
            assert_eq!(added.data["source"], parsed, "{row}");
            assert_eq!(message::single_text(&added.data), Some(text.as_str()), "{row}");
            assert_eq!(added.data["role"], "user", "{row}");
            assert!(added.data["id"].is_string(), "{row}");
        }
        (Err(got), None) => assert_eq!(got, reason(row, &message.source), "{row}"),
        (Ok(added), None) => panic!("accepted as {}: {row}", added.record.name()),
        (Err(got), Some(_)) => panic!("refused ({got}): {row}"),
    }
}

#[test]
fn every_source_of_the_table_is_accepted_or_refused_as_it_says() {
    let table = table();
    let rows = table["sources"].as_array().expect("sources");
    for row in rows {
        check_row(row);
    }
    // Each kind of record, and each refusal, has a row.
    let verdicts: std::collections::BTreeSet<&str> =
        rows.iter().filter_map(|row| row.get("accepted").or(row.get("refused"))?.as_str()).collect();
    assert_eq!(
        verdicts.into_iter().collect::<Vec<_>>(),
        [
            "catalog",
            "catalog-update",
            "changed-notice",
            "foreign",
            "gone-notice",
            "invocation",
            "invocation-note",
            "not-a-notice",
            "not-json",
            "reload-notice",
            "skill-catalog",
        ]
    );
}

#[test]
fn every_message_of_the_table_is_accepted_or_refused_as_it_says() {
    for row in table()["messages"].as_array().expect("messages") {
        check_row(row);
    }
}

#[test]
fn every_step_of_the_table_enters_or_is_refused_as_it_says() {
    for step in table()["steps"].as_array().expect("steps") {
        let names: Vec<String> =
            step["names"].as_array().unwrap().iter().map(|name| name.as_str().unwrap().to_owned()).collect();
        let decided = step["added"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| Decided::Added(Addition::Written(message_of(row))))
            .collect();
        let result = apply(&names, decided);
        match step.get("accepted").and_then(Value::as_u64) {
            Some(count) => {
                let Ok(Decision::Enter(messages)) = result else { panic!("{step}: {result:?}") };
                // Entered after nothing kept: only what it added, in its order.
                assert_eq!(messages.len() as u64, count, "{step}");
            }
            None => assert_eq!(refusal(result), step["refused"].as_str().unwrap(), "{step}"),
        }
    }
}

#[test]
fn a_digest_is_what_the_records_call_one() {
    assert_eq!(MAX_DIGEST_BYTES, skill_rules::MAX_BODY_DIGEST_BYTES);
}

/// A record as a 0.3.0 plugin sends it (the inverse of the host's reading).
fn typed(record: Record) -> AddedSource {
    match record {
        Record::Catalog => AddedSource::Catalog,
        Record::SkillCatalog(catalog) => AddedSource::SkillCatalog(step::SkillCatalog {
            update: catalog.update,
            entries: catalog
                .entries
                .into_iter()
                .map(|entry| step::CatalogEntry { name: entry.name, description: entry.description })
                .collect(),
            coverage: catalog.coverage,
        }),
        Record::CatalogUpdate { removed } => AddedSource::CatalogUpdate(removed),
        Record::Invocation { name } => AddedSource::Invocation(name),
        Record::InvocationNote => AddedSource::InvocationNote,
        Record::Notice(SkillNotice::Changed { name, provider, body_digest }) => {
            AddedSource::Changed(step::ChangedNotice { name, provider, body_digest })
        }
        Record::Notice(SkillNotice::Gone { name }) => AddedSource::Gone(name),
        Record::Notice(SkillNotice::Reload { names }) => AddedSource::Reload(names),
    }
}

/// 0.3.0's typed records: every source the table accepts, sent as its
/// record, is written in the record's own form and accepted as that record.
#[test]
fn every_accepted_source_sent_as_a_typed_record_is_written_as_the_plugin_writes_it() {
    for row in table()["sources"].as_array().unwrap().iter().filter(|row| row.get("accepted").is_some()) {
        let record = Record::parse(&source_text(row)).unwrap_or_else(|_| panic!("{row}"));
        let message = written(AddedMessage { source: typed(record.clone()), text: "text".to_owned() });
        assert_eq!(message.source, record.to_json(), "{row}");
        let added = added_message(&message).unwrap_or_else(|error| panic!("{error}: {row}"));
        assert_eq!(added.record, record, "{row}");
    }
}

/// What the types cannot say (names, digests, distinctness, counts) is
/// checked on the written source, with the texts a source text gets.
#[test]
fn a_typed_record_the_grammar_refuses_is_refused_with_the_text_of_its_source() {
    let changed = |provider: &str, digest: Option<&str>| {
        AddedSource::Changed(step::ChangedNotice {
            name: "a".to_owned(),
            provider: provider.to_owned(),
            body_digest: digest.map(str::to_owned),
        })
    };
    let cases = [
        (AddedSource::Invocation("Not A Name".to_owned()), "foreign"),
        (AddedSource::CatalogUpdate(vec!["a".to_owned(), "a".to_owned()]), "foreign"),
        (
            AddedSource::SkillCatalog(step::SkillCatalog {
                update: false,
                entries: vec![step::CatalogEntry { name: "../x".to_owned(), description: "d".to_owned() }],
                coverage: None,
            }),
            "foreign",
        ),
        (AddedSource::Gone("-bad".to_owned()), "not-a-notice"),
        (AddedSource::Reload(Vec::new()), "not-a-notice"),
        (AddedSource::Reload(vec!["b".to_owned(), "a".to_owned(), "a".to_owned()]), "not-a-notice"),
        (changed("", None), "not-a-notice"),
        (changed("p", Some(&"x".repeat(129))), "not-a-notice"),
    ];
    for (source, refusal) in cases {
        let message = written(AddedMessage { source, text: "text".to_owned() });
        let row = serde_json::json!({ "refused": refusal });
        assert_eq!(added_message(&message).err(), Some(reason(&row, &message.source)), "{}", message.source);
    }
}

/// A 0.3.0 decision through the whole check: typed records are written
/// after the count, one at a time, and one whose source would pass the cap
/// is refused by its written length, never written.
#[test]
fn typed_records_are_written_after_the_count_and_refused_by_their_written_length() {
    let typed = |source: AddedSource| Decided::Added(Addition::Typed(AddedMessage { source, text: "t".to_owned() }));
    let entered =
        apply(&["a-skill".to_owned()], vec![Decided::Proposed(0), typed(AddedSource::Invocation("a-skill".into()))]);
    let Ok(Decision::Enter(messages)) = entered else { panic!("{entered:?}") };
    assert_eq!(
        messages[1]["source"],
        serde_json::json!({"kind": "skill-invocation", "name": "a-skill", "form": "instructions"})
    );
    // 64 added is the cap: 65 are refused before any is written.
    let many: Vec<Decided> = (0..65).map(|_| typed(AddedSource::Catalog)).collect();
    assert_eq!(refusal(apply(&[], many)), "it added 65 messages; a pre-step may add at most 64");
    // Control characters take six bytes written: 3 MiB of them are 18 MiB.
    let coverage = "\u{1}".repeat(3 * 1024 * 1024);
    let catalog =
        AddedSource::SkillCatalog(step::SkillCatalog { update: false, entries: Vec::new(), coverage: Some(coverage) });
    let written_len = record(catalog.clone()).json_len();
    assert!(written_len > 16 * 1024 * 1024);
    assert_eq!(
        refusal(apply(&[], vec![typed(catalog)])),
        format!("added message 1's source is {written_len} bytes, over the cap of 16777216 bytes per text")
    );
}

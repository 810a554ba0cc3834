//! The parser and the writer against the record table (`rules/records.json`)
//! and the plugin's own bytes.

use alloc::borrow::ToOwned;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;

use serde_json::Value;

use super::*;

/// The record table, shared with both hosts' tests.
const TABLE: &str = include_str!("../../records.json");

/// A row's source text: `text` as it is, or `source` written compactly.
fn source_text(row: &Value) -> String {
    match row.get("text") {
        Some(text) => text.as_str().expect("a row's text is a string").to_owned(),
        None => row["source"].to_string(),
    }
}

#[test]
fn every_row_of_the_table_reads_as_it_says_and_every_record_writes_what_it_read() {
    let table: Value = serde_json::from_str(TABLE).expect("the record table is JSON");
    let rows = table["sources"].as_array().expect("sources");
    assert!(rows.len() > 100, "{}", rows.len());
    for row in rows {
        let text = source_text(row);
        match (Record::parse(&text), row.get("accepted").and_then(Value::as_str)) {
            (Ok(record), Some(name)) => {
                assert_eq!(record.name(), name, "{text}");
                // The writer writes what the parser read, and reads back the same.
                let written = record.to_json();
                let parsed: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(serde_json::from_str::<Value>(&written).unwrap(), parsed, "{text}");
                assert_eq!(Record::parse(&written).unwrap(), record, "{text}");
            }
            (Err(refusal), None) => assert_eq!(Some(refusal.name()), row["refused"].as_str(), "{text}: {refusal}"),
            (got, _) => panic!("{text}: {got:?}, the table says {row}"),
        }
    }
    // Every record the plugin writes has a row that accepts it.
    let named: BTreeSet<&str> = rows.iter().filter_map(|row| row.get("accepted")?.as_str()).collect();
    for record in examples() {
        assert!(named.contains(record.name()), "{}", record.name());
    }
}

/// One record of each form, as the plugin writes them.
fn examples() -> vec::Vec<Record> {
    let names = |names: &[&str]| names.iter().map(|name| (*name).to_owned()).collect();
    vec![
        Record::Catalog,
        Record::SkillCatalog(SkillCatalog {
            update: true,
            entries: vec![CatalogEntry { name: "a".into(), description: "x < \"y\"\n".into() }],
            coverage: Some("Catalog coverage: 1 of 2 skills listed.".into()),
        }),
        Record::SkillCatalog(SkillCatalog::default()),
        Record::CatalogUpdate { removed: names(&["c", "d"]) },
        Record::Invocation { name: "pdf".into() },
        Record::InvocationNote,
        Record::Notice(SkillNotice::Changed {
            name: "a".into(),
            provider: "runtime".into(),
            body_digest: Some("sha256:2".into()),
        }),
        Record::Notice(SkillNotice::Changed { name: "a".into(), provider: "p".into(), body_digest: None }),
        Record::Notice(SkillNotice::Gone { name: "a".into() }),
        Record::Notice(SkillNotice::Reload { names: names(&["a", "b"]) }),
    ]
}

#[test]
fn each_record_is_written_as_the_plugin_has_always_written_it() {
    let written: vec::Vec<String> = examples().iter().map(Record::to_json).collect();
    assert_eq!(
        written,
        [
            r#"{"kind":"plugin","plugin":"dsh-tool-skill"}"#,
            r#"{"kind":"skill-catalog","form":"catalog","update":true,"entries":[{"name":"a","description":"x < \"y\"\n"}],"coverage":"Catalog coverage: 1 of 2 skills listed."}"#,
            r#"{"kind":"skill-catalog","form":"catalog","entries":[]}"#,
            r#"{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":["c","d"]}"#,
            r#"{"kind":"skill-invocation","name":"pdf","form":"instructions"}"#,
            r#"{"kind":"skill-invocation","form":"not-loaded"}"#,
            r#"{"bodyDigest":"sha256:2","form":"changed","kind":"skill-notice","name":"a","provider":"runtime"}"#,
            r#"{"form":"changed","kind":"skill-notice","name":"a","provider":"p"}"#,
            r#"{"form":"gone","kind":"skill-notice","name":"a"}"#,
            r#"{"form":"reload","kind":"skill-notice","names":["a","b"]}"#,
        ]
    );
    for (record, text) in examples().into_iter().zip(&written) {
        assert_eq!(Record::parse(text).unwrap(), record, "{text}");
    }
    assert!(examples().iter().filter(|record| record.is_catalog()).count() == 4);
}

#[test]
fn a_refusal_says_why() {
    assert_eq!(Record::parse("{").unwrap_err().to_string(), "not JSON: EOF while parsing an object at line 1 column 1");
    assert_eq!(
        Record::parse(r#"{"kind":"skill-notice"}"#).unwrap_err().to_string(),
        "a skill notice that is not a changed, gone or reload notice"
    );
    assert_eq!(Record::parse("[]").unwrap_err().to_string(), "no record the plugin writes");
}

/// The writer escapes strings exactly as serde_json does (`"`, `\`, the
/// short escapes, other controls as `\u00XX` in lowercase hex, everything
/// else as it is), and `json_len` is its length, written or not.
#[test]
fn strings_are_written_as_serde_json_writes_them_and_measured_alike() {
    let mut every_ascii: String = (0u8..0x80).map(char::from).collect();
    every_ascii.push_str("\u{80}\u{7ff}\u{800}\u{2028}\u{2029}\u{fffd}\u{1f600}é");
    for text in [every_ascii.as_str(), "", "plain", "\"\\", "a\u{0}b\u{1f}c\u{7f}"] {
        let record = Record::Invocation { name: text.to_string() };
        let expected = format!(
            r#"{{"kind":"skill-invocation","name":{},"form":"instructions"}}"#,
            serde_json::to_string(text).unwrap()
        );
        assert_eq!(record.to_json(), expected, "{text:?}");
        assert_eq!(record.json_len(), expected.len(), "{text:?}");
        let names = Record::CatalogUpdate { removed: vec![text.to_string(), "b".into()] };
        assert!(names.to_json().ends_with(&format!(r#""removed":{}}}"#, serde_json::to_string(&[text, "b"]).unwrap())));
        assert_eq!(names.json_len(), names.to_json().len());
    }
}

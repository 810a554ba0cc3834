//! Properties of the host's readers of untrusted files, checked on generated
//! inputs (`proptest`, a few hundred cases each, so CI stays fast; the long
//! runs are the cargo-fuzz targets in `fuzz/`): `SKILL.md` frontmatter
//! (docs/spec.md §4.2) and the session log (§5).

use proptest::prelude::*;
use serde_json::{Value, json};
use skill_host::is_skill_name;
use skill_host::providers::parse_skill_file;
use skill_host::session::{SessionLog, SurfaceOp};
use skill_plugin::description::is_ecmascript_whitespace;

/// YAML-ish and Markdown-ish text: the characters a frontmatter parser
/// branches on, plus anything.
fn skill_file() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        any::<char>().prop_map(String::from),
        prop::sample::select(vec![
            "---\n",
            "---",
            "\n",
            "\r\n",
            "name: ",
            "description: ",
            "metadata:",
            "  ",
            "- ",
            "[",
            "]",
            "{",
            "}",
            "&a ",
            "*a",
            "!!str ",
            "'",
            "\"",
            ": ",
            "#",
            "|\n",
            ">\n",
            "my-skill",
            "\u{feff}",
            "yes",
            "true",
            "0x1F",
            "user-invocable: ",
            "disable-model-invocation: ",
        ])
        .prop_map(str::to_owned),
    ];
    prop::collection::vec(pieces, 0..60).prop_map(|pieces| pieces.concat())
}

/// Text for descriptions and bodies, whitespace of every kind included.
fn prose() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        any::<char>().prop_map(String::from),
        prop::sample::select(vec![" ", "\n", "\t", "\u{a0}", "\u{3000}", "---", "word", ": ", "#"])
            .prop_map(str::to_owned),
    ];
    prop::collection::vec(pieces, 0..30).prop_map(|pieces| pieces.concat())
}

/// A session file's lines: good events, damaged ones and garbage.
fn session_file() -> impl Strategy<Value = Vec<u8>> {
    let header = r#"{"type":"session","version":0,"id":"p","createdAt":1,"cwd":"/w"}"#.to_owned();
    let user = |seq: u64, op: Value| {
        json!({"type": "user/message", "seq": seq, "time": 1, "surfaceOp": op,
               "data": {"content": [{"type": "text", "text": format!("m{seq}")}], "source": {"kind": "user"}, "role": "user", "id": "i"}})
        .to_string()
    };
    let line = prop_oneof![
        Just(header),
        (0_u64..12).prop_map(move |seq| user(seq, json!("append"))),
        (0_u64..12, 0_u64..12, 0_u64..12)
            .prop_map(move |(seq, start, end)| user(seq, json!({"op": "replace", "start": start, "end": end}))),
        (0_u64..12).prop_map(|seq| format!(
            r#"{{"type":"tool/result","seq":{seq},"time":1,"data":{{}},"surfaceOp":"append"}}"#
        )),
        (0_u64..12).prop_map(|seq| format!(r#"{{"type":"future/thing","seq":{seq}}}"#)),
        // Seqs at the edge of what DeepSeek Harness (JavaScript) can write, and past it.
        prop::sample::select(vec![(1_u64 << 53) - 2, (1 << 53) - 1, 1 << 53, u64::MAX])
            .prop_map(move |seq| user(seq, json!("append"))),
        any::<String>(),
        Just(r#"{"type":"user/message","seq":3,"data":{"content":"#.to_owned()),
    ];
    (prop::collection::vec(line, 0..12), any::<bool>()).prop_map(|(lines, terminated)| {
        let mut text = lines.join("\n");
        if terminated {
            text.push('\n');
        }
        text.into_bytes()
    })
}

proptest! {
    #[test]
    fn a_skill_file_parses_to_a_valid_skill_or_is_refused_with_a_reason(text in skill_file()) {
        match parse_skill_file(&text) {
            Ok(skill) => {
                prop_assert!(is_skill_name(&skill.name));
                prop_assert!(!skill.description.is_empty());
                prop_assert_eq!(skill.body.trim_matches(is_ecmascript_whitespace), skill.body.as_str());
                prop_assert!(skill.metadata.as_ref().is_none_or(Value::is_object));
            }
            Err(reason) => prop_assert!(!reason.is_empty()),
        }
    }

    #[test]
    fn a_well_formed_skill_file_reads_back_what_was_written(
        name in "[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}",
        description in prose().prop_filter("a description is required", |d| !d.is_empty()),
        body in prose(),
    ) {
        // A JSON string is a YAML 1.2 double-quoted scalar.
        // Quoted: a plain `0` would be a YAML number, which the reference refuses too.
        let text = format!("---\nname: \"{name}\"\ndescription: {}\n---\n{body}", serde_json::to_string(&description).unwrap());
        let skill = parse_skill_file(&text).map_err(|reason| TestCaseError::fail(format!("{reason}: {text:?}")))?;
        prop_assert_eq!(skill.name, name);
        prop_assert_eq!(skill.description, description);
        prop_assert_eq!(skill.body, body.trim_matches(is_ecmascript_whitespace));
    }

    #[test]
    fn a_session_file_opens_without_change_and_an_append_reads_back_identically(bytes in session_file()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        std::fs::write(&path, &bytes).unwrap();
        let Ok(mut log) = SessionLog::open(&path) else {
            prop_assert_eq!(std::fs::read(&path).unwrap(), bytes);
            return Ok(());
        };
        prop_assert_eq!(&std::fs::read(&path).unwrap(), &bytes);
        // Every indexed message reads back from its line.
        let seqs: Vec<u64> = log.read_user_messages()?.iter().map(|event| event.seq).collect();
        prop_assert_eq!(seqs.len(), log.user_messages().len());
        prop_assert!(seqs.windows(2).all(|pair| pair[0] < pair[1]));
        prop_assert!(log.surface().iter().all(|&seq| seq < log.next_seq()));

        let message = json!({"content": [{"type": "text", "text": "new"}], "source": {"kind": "user"}, "role": "user", "id": "n"});
        if let Err(error) = log.append_user_messages(vec![(message, SurfaceOp::Append)]) {
            // Only a log whose seqs are used up refuses, and writes nothing.
            prop_assert!(error.to_string().contains("the largest DeepSeek Harness can read"), "{}", error);
            prop_assert_eq!(std::fs::read(&path).unwrap(), bytes);
            return Ok(());
        }
        let written = std::fs::read(&path).unwrap();
        prop_assert!(written.starts_with(&bytes));
        let reread = SessionLog::open(&path).unwrap();
        prop_assert_eq!(reread.header(), log.header());
        prop_assert_eq!(reread.next_seq(), log.next_seq());
        prop_assert_eq!(reread.surface(), log.surface());
        prop_assert_eq!(reread.read_user_messages()?, log.read_user_messages()?);
    }
}

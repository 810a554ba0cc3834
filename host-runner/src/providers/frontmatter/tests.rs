//! Tests of the frontmatter reader.

use super::scalar::resolve_plain;
use super::*;

fn skill(frontmatter: &str) -> Result<ParsedSkill, String> {
    parse_skill_file(&format!("---\n{frontmatter}---\nBody.\n"))
}

fn base() -> &'static str {
    "name: my-skill\ndescription: Does things.\n"
}

#[test]
fn minimal_skill_parses_with_defaults() {
    let parsed = skill(base()).expect("valid");
    assert_eq!(
        parsed,
        ParsedSkill {
            name: "my-skill".into(),
            description: "Does things.".into(),
            when_to_use: None,
            invocation: InvocationPolicy { model_invocable: true, user_invocable: true },
            metadata: None,
            body: "Body.".into(),
        }
    );
}

#[test]
fn crlf_file_parses() {
    let text = "---\r\nname: my-skill\r\ndescription: Does things.\r\n---\r\n\r\nLine one.\r\nLine two.\r\n";
    let parsed = parse_skill_file(text).expect("valid");
    assert_eq!(parsed.name, "my-skill");
    assert_eq!(parsed.description, "Does things.");
    assert_eq!(parsed.body, "Line one.\r\nLine two.");
}

#[test]
fn missing_opening_delimiter_is_refused() {
    for text in [
        "no frontmatter\n",
        "",
        "---",
        " ---\nname: a\n---\n",
        "--- \nname: a\ndescription: b\n---\n",
        "----\nname: a\ndescription: b\n---\n",
        "\n---\nname: a\ndescription: b\n---\n",
    ] {
        let err = parse_skill_file(text).expect_err(text);
        assert!(err.starts_with("missing frontmatter"), "{text:?}: {err}");
    }
}

#[test]
fn byte_order_mark_is_named_in_the_reason() {
    let err = parse_skill_file("\u{feff}---\nname: a\ndescription: b\n---\n").unwrap_err();
    assert!(err.contains("byte-order mark"), "{err}");
}

#[test]
fn delimiter_counts_only_as_a_whole_line() {
    // `--- x`, `----` and `--- ` inside the block do not close it; the
    // description is a block scalar holding a `---`-prefixed line.
    let text = "---\nname: my-skill\ndescription: |\n  a\n  --- not a delimiter\n---- \n---\nBody\n";
    let err = parse_skill_file(text).expect_err("`---- ` is invalid YAML, not a delimiter");
    assert!(err.contains("invalid YAML"), "{err}");

    let text = "---\nname: my-skill\ndescription: |\n  a\n  ---\n---\nBody\n";
    let parsed = parse_skill_file(text).expect("indented --- is not a delimiter");
    assert_eq!(parsed.description, "a\n---\n");
    assert_eq!(parsed.body, "Body");
}

#[test]
fn closing_delimiter_may_end_the_file() {
    let parsed = parse_skill_file("---\nname: my-skill\ndescription: d\n---").unwrap();
    assert_eq!(parsed.body, "");
    let parsed = parse_skill_file("---\nname: my-skill\ndescription: d\n---\r").unwrap();
    assert_eq!(parsed.body, "");
}

#[test]
fn unclosed_frontmatter_is_refused() {
    let err = parse_skill_file("---\nname: my-skill\ndescription: d\n").unwrap_err();
    assert_eq!(err, "frontmatter is not closed by a `---` line");
}

#[test]
fn body_is_trimmed_with_ecmascript_whitespace() {
    let parsed =
        parse_skill_file("---\nname: my-skill\ndescription: d\n---\n\n \u{feff}\u{a0}\t# Title\n\nText.  \n\n\u{3000}")
            .unwrap();
    assert_eq!(parsed.body, "# Title\n\nText.");
    // U+0085 is Unicode whitespace but not ECMAScript whitespace.
    let parsed = parse_skill_file("---\nname: my-skill\ndescription: d\n---\n\u{85}x\n").unwrap();
    assert_eq!(parsed.body, "\u{85}x");
}

#[test]
fn empty_or_non_mapping_frontmatter_is_refused() {
    assert_eq!(parse_skill_file("---\n---\nBody").unwrap_err(), "frontmatter is empty; it must be a YAML mapping");
    assert_eq!(
        parse_skill_file("---\n# only a comment\n---\nBody").unwrap_err(),
        "frontmatter is empty; it must be a YAML mapping"
    );
    assert_eq!(skill("- a\n- b\n").unwrap_err(), "line 2: frontmatter must be a YAML mapping, found a sequence");
    assert_eq!(skill("just text\n").unwrap_err(), "line 2: frontmatter must be a YAML mapping, found a string");
}

#[test]
fn name_and_description_are_required_non_empty_strings() {
    assert_eq!(skill("description: d\n").unwrap_err(), "frontmatter requires `name`");
    assert_eq!(skill("name: my-skill\n").unwrap_err(), "frontmatter requires `description`");
    assert_eq!(
        skill("name: my-skill\ndescription: \"\"\n").unwrap_err(),
        "line 3: `description` must be a non-empty string, found a string"
    );
    assert_eq!(
        skill("description: d\nname: 123\n").unwrap_err(),
        "line 3: `name` must be a non-empty string, found a number"
    );
    assert_eq!(skill("name:\ndescription: d\n").unwrap_err(), "line 2: `name` must be a non-empty string, found null");
    assert_eq!(
        skill("name: my-skill\ndescription: [a]\n").unwrap_err(),
        "line 3: `description` must be a non-empty string, found a sequence"
    );
    // A quoted number is a string and the grammar allows digits.
    assert_eq!(skill("name: \"123\"\ndescription: d\n").unwrap().name, "123");
}

#[test]
fn name_must_match_the_grammar() {
    for bad in ["My-Skill", "my_skill", "-a", "a-", "a--b", "\"a b\"", "a/b", "../etc", "\"..\"", "a.b"] {
        let err = skill(&format!("name: {bad}\ndescription: d\n")).expect_err(bad);
        assert!(err.contains("does not match the skill-name grammar"), "{bad}: {err}");
        assert!(err.starts_with("line 2: "), "{err}");
    }
}

#[test]
fn yes_is_a_string_under_yaml_1_2() {
    let parsed = skill("name: my-skill\ndescription: yes\n").unwrap();
    assert_eq!(parsed.description, "yes");
}

#[test]
fn invocation_defaults_to_both_invocable() {
    let parsed = skill(base()).unwrap();
    assert_eq!(parsed.invocation, InvocationPolicy::default());
}

#[test]
fn invocation_keys_accept_booleans_numbers_and_words() {
    let cases: &[(&str, bool)] = &[
        ("true", true),
        ("True", true),
        ("TRUE", true),
        ("false", false),
        ("1", true),
        ("0", false),
        ("1.0", true),
        ("0x1", true),
        ("-0", false),
        ("\"1\"", true),
        ("'0'", false),
        ("yes", true),
        ("Yes", true),
        ("ON", true),
        ("on", true),
        ("no", false),
        ("NO", false),
        ("off", false),
        ("\"TRUE\"", true),
        ("'False'", false),
        ("!!str true", true),
    ];
    for (text, flag) in cases {
        let parsed = skill(&format!("{}user-invocable: {text}\n", base())).expect(text);
        assert_eq!(parsed.invocation.user_invocable, *flag, "user-invocable: {text}");
        assert!(parsed.invocation.model_invocable);
        let parsed = skill(&format!("{}disable-model-invocation: {text}\n", base())).expect(text);
        assert_eq!(parsed.invocation.model_invocable, !*flag, "disable: {text}");
        assert!(parsed.invocation.user_invocable);
    }
}

#[test]
fn user_invocable_yes_is_accepted_as_true() {
    let parsed = skill(&format!("{}user-invocable: yes\ndisable-model-invocation: yes\n", base())).unwrap();
    assert_eq!(parsed.invocation, InvocationPolicy { model_invocable: false, user_invocable: true });
}

#[test]
fn invalid_invocation_values_drop_the_skill() {
    for text in ["maybe", "2", "\"\"", "", "~", "[true]", "{a: 1}", "0.5", "y", "n"] {
        for key in ["user-invocable", "disable-model-invocation"] {
            let err = skill(&format!("{}{key}: {text}\n", base())).expect_err(text);
            assert!(
                err.starts_with(&format!("line 4: frontmatter field `{key}` must be a boolean")),
                "{key}: {text}: {err}"
            );
        }
    }
    assert_eq!(
        skill(&format!("{}user-invocable: maybe\n", base())).unwrap_err(),
        "line 4: frontmatter field `user-invocable` must be a boolean (true/false, yes/no, on/off, 1/0), found \"maybe\""
    );
}

#[test]
fn camel_case_invocation_keys_drop_the_skill() {
    for (key, canonical) in LEGACY_INVOCATION_KEYS {
        for value in ["true", "false", ""] {
            let err = skill(&format!("{}{key}: {value}\n", base())).expect_err(key);
            assert_eq!(err, format!("line 4: frontmatter field `{key}` is unsupported; use `{canonical}`"));
        }
    }
}

#[test]
fn when_to_use_is_kept_only_as_a_non_empty_string() {
    let parsed = skill(&format!("{}whenToUse: When asked.\n", base())).unwrap();
    assert_eq!(parsed.when_to_use.as_deref(), Some("When asked."));
    for other in ["\"\"", "3", "[a]", "true", ""] {
        let parsed = skill(&format!("{}whenToUse: {other}\n", base())).unwrap();
        assert_eq!(parsed.when_to_use, None, "{other}");
    }
}

#[test]
fn metadata_is_kept_only_as_a_mapping() {
    let parsed = skill(&format!(
        "{}metadata:\n  version: 1.2\n  count: 3\n  tags: [a, 'b']\n  on: yes\n  nested: {{x: ~, 1: .inf}}\n",
        base()
    ))
    .unwrap();
    assert_eq!(
        parsed.metadata,
        Some(serde_json::json!({
            "version": 1.2,
            "count": 3,
            "tags": ["a", "b"],
            "on": "yes",
            "nested": {"x": null, "1": null},
        }))
    );
    for other in ["[a, b]", "text", "3", "~", ""] {
        let parsed = skill(&format!("{}metadata: {other}\n", base())).unwrap();
        assert_eq!(parsed.metadata, None, "{other}");
    }
}

#[test]
fn aliases_are_refused() {
    let err = skill(&format!("{}metadata:\n  a: &x [1, 2]\n  b: *x\n", base())).unwrap_err();
    assert_eq!(err, "line 6: YAML aliases are not supported in frontmatter");
}

#[test]
fn billion_laughs_is_refused_without_expansion() {
    let mut yaml = String::from(base());
    yaml.push_str("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let prev = i - 1;
        yaml.push_str(&format!(
            "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
        ));
    }
    let err = skill(&yaml).unwrap_err();
    assert!(err.contains("aliases are not supported"), "{err}");
}

#[test]
fn anchors_without_aliases_are_harmless() {
    let parsed = skill(&format!("{}metadata: &m {{a: 1}}\n", base())).unwrap();
    assert_eq!(parsed.metadata, Some(serde_json::json!({"a": 1})));
}

fn nested_flow(depth: usize) -> String {
    // The top-level mapping is level 1, so `depth - 1` brackets.
    format!("{}metadata: {}{}\n", base(), "[".repeat(depth - 1), "]".repeat(depth - 1))
}

#[test]
fn nesting_up_to_the_limit_is_accepted() {
    // The top-level mapping is level 1 and `metadata` is a sequence, so
    // the skill parses (metadata is dropped as a non-mapping).
    let parsed = skill(&nested_flow(MAX_FRONTMATTER_DEPTH)).unwrap();
    assert_eq!(parsed.metadata, None);
}

#[test]
fn nesting_deeper_than_the_limit_is_refused() {
    let err = skill(&nested_flow(MAX_FRONTMATTER_DEPTH + 1)).unwrap_err();
    assert_eq!(err, "line 4: frontmatter nests deeper than 64 levels");
}

#[test]
fn very_deep_flow_nesting_is_refused_without_exhausting_the_stack() {
    // Fits in the size limit; `Parser::load` would recurse ~30,000
    // times. The scanner's own flow-level counter (a u8) trips first,
    // because it scans ahead of the events.
    let err = skill(&format!("{}metadata: {}\n", base(), "[".repeat(30_000))).unwrap_err();
    assert!(err.contains("recursion limit exceeded"), "{err}");
}

#[test]
fn very_deep_block_nesting_is_refused_without_exhausting_the_stack() {
    let block: String = (0..10_000).map(|_| "- ").collect();
    let err = skill(&format!("{}metadata:\n  {block}x\n", base())).unwrap_err();
    assert!(err.contains("nests deeper than 64 levels"), "{err}");
}

#[test]
fn a_hundred_thousand_levels_of_nesting_are_refused_by_size_before_parsing() {
    for opener in ["[", "{a: ", "- "] {
        let err = skill(&format!("{}metadata: {}\n", base(), opener.repeat(100_000))).unwrap_err();
        assert!(err.starts_with("frontmatter is ") && err.ends_with(" bytes, larger than the 64 KiB limit"), "{err}");
    }
}

#[test]
fn frontmatter_size_is_capped() {
    let fixed = "name: my-skill\ndescription: \n".len();
    let fits = format!("name: my-skill\ndescription: {}\n", "x".repeat(MAX_FRONTMATTER_BYTES - fixed));
    assert_eq!(fits.len(), MAX_FRONTMATTER_BYTES);
    assert!(skill(&fits).is_ok());
    let over = format!("name: my-skill\ndescription: {}\n", "x".repeat(MAX_FRONTMATTER_BYTES - fixed + 1));
    assert_eq!(skill(&over).unwrap_err(), "frontmatter is 65537 bytes, larger than the 64 KiB limit");
}

#[test]
fn invalid_yaml_names_the_file_line() {
    let err = skill("name: my-skill\ndescription: [unclosed\n").unwrap_err();
    assert!(err.starts_with("invalid YAML frontmatter: line "), "{err}");
    // yaml-rust2 places this one at the end of the previous line.
    let err = skill("name: my-skill\ndescription: d\n\tbad: tab\n").unwrap_err();
    assert_eq!(err, "invalid YAML frontmatter: line 3 column 14: while scanning a plain scalar, found a tab");
}

#[test]
fn duplicate_keys_are_refused() {
    let err = skill("name: my-skill\ndescription: d\nname: other\n").unwrap_err();
    assert_eq!(err, "line 4: duplicate frontmatter key \"name\"");
}

#[test]
fn duplicate_keys_compare_as_resolved_scalars() {
    let with_metadata = |keys: &str| skill(&format!("name: my-skill\ndescription: d\nmetadata:\n{keys}"));
    assert_eq!(with_metadata("  ~: a\n  null: b\n").unwrap_err(), "line 6: duplicate frontmatter key null");
    assert_eq!(with_metadata("  0.0: a\n  -0.0: b\n").unwrap_err(), "line 6: duplicate frontmatter key 0");
    // An integer and a float differ; NaN equals nothing; each mapping has its own keys.
    with_metadata("  1: a\n  1.0: b\n  .nan: c\n  .NaN: d\n  x: {k: 1}\n  y: {k: 2}\n").unwrap();
    // As many keys as 64 KiB holds, checked in linear time (compared with
    // every earlier key, they took 0.17 s a file).
    let many: String = (0..5_000).map(|k| format!("  k{k}: 1\n")).collect();
    with_metadata(&many).unwrap();
}

#[test]
fn multiple_documents_are_refused() {
    let err = skill("name: my-skill\ndescription: d\n...\n--- \nname: x\n").unwrap_err();
    assert!(err.contains("more than one YAML document"), "{err}");
}

#[test]
fn block_and_quoted_descriptions_are_strings() {
    let parsed = skill("name: my-skill\ndescription: |-\n  Line one.\n  Line two.\n").unwrap();
    assert_eq!(parsed.description, "Line one.\nLine two.");
    let parsed = skill("name: my-skill\ndescription: 'true'\n").unwrap();
    assert_eq!(parsed.description, "true");
    // A plain `true` is a boolean, so it is not a description.
    assert!(skill("name: my-skill\ndescription: true\n").is_err());
}

#[test]
fn core_schema_resolves_plain_scalars() {
    let cases: &[(&str, Value)] = &[
        ("", Value::Null),
        ("~", Value::Null),
        ("NULL", Value::Null),
        ("True", Value::Bool(true)),
        ("FALSE", Value::Bool(false)),
        ("yes", Value::Str("yes".into())),
        ("No", Value::Str("No".into())),
        ("on", Value::Str("on".into())),
        ("42", Value::Int(42)),
        ("-42", Value::Int(-42)),
        ("+7", Value::Int(7)),
        ("007", Value::Int(7)),
        ("0x1F", Value::Int(31)),
        ("0o17", Value::Int(15)),
        ("0b1", Value::Str("0b1".into())),
        ("-0x1", Value::Str("-0x1".into())),
        ("1.5", Value::Float(1.5)),
        ("-.5", Value::Float(-0.5)),
        ("1.", Value::Float(1.0)),
        ("1e3", Value::Float(1000.0)),
        ("1.5E-2", Value::Float(0.015)),
        (".inf", Value::Float(f64::INFINITY)),
        ("-.Inf", Value::Float(f64::NEG_INFINITY)),
        ("1e", Value::Str("1e".into())),
        (".", Value::Str(".".into())),
        ("inf", Value::Str("inf".into())),
        ("nan", Value::Str("nan".into())),
        ("1_000", Value::Str("1_000".into())),
        ("99999999999999999999", Value::Float(1e20)),
    ];
    for (text, expected) in cases {
        assert_eq!(resolve_plain(text).unwrap_or(Value::Str((*text).into())), *expected, "{text:?}");
    }
    assert!(matches!(resolve_plain(".NaN"), Some(Value::Float(f)) if f.is_nan()));
}

#[test]
fn str_tag_keeps_a_plain_scalar_a_string() {
    let parsed = skill("name: my-skill\ndescription: !!str true\n").unwrap();
    assert_eq!(parsed.description, "true");
}

//! Skill search across scripts (docs/spec.md §3.14), through the binary:
//! `skill-host load --query` finds a skill by a word inside a CJK
//! description, by the other normalisation form, and by full case folding.

use crate::common::{Sandbox, path, stdout};

#[test]
fn load_query_finds_words_inside_cjk_descriptions_and_across_forms() {
    let sandbox = Sandbox::new();
    let project = sandbox.path().join("project");
    sandbox.write_skill(&project, "translate-ja", "description: 日本語のドキュメントを翻訳する。\n", "Translate.");
    sandbox.write_skill(&project, "street-names", "description: Normalise Straße names.\n", "Streets.");
    // Written decomposed (NFD): e + U+0301.
    sandbox.write_skill(&project, "resume-review", "description: Review a re\u{301}sume\u{301}.\n", "Review.");
    let config = sandbox.path().join("search.json");
    std::fs::write(&config, r#"{"skillSearch": true}"#).unwrap();
    let query = |text: &str| {
        let output = sandbox.run(&["--config", path(&config), "load", "--cwd", path(&project), "--query", text]);
        assert!(output.status.success(), "{text}: {output:?}");
        stdout(&output)
    };
    assert_eq!(
        query("日本語"),
        "Skills matching the query:\n- `translate-ja`: 日本語のドキュメントを翻訳する。\n\nLoad one by calling the `skill` tool with its exact `name`.\n"
    );
    // Words from the middle of the sentence, not only its start.
    for word in ["翻訳", "ドキュメント", "日本語の翻訳"] {
        assert!(query(word).starts_with("Skills matching the query:\n- `translate-ja`: "), "{word}");
    }
    assert!(query("STRASSE").starts_with("Skills matching the query:\n- `street-names`: "));
    assert!(query("résumé").starts_with("Skills matching the query:\n- `resume-review`: "));
}

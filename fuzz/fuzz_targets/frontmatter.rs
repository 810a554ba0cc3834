//! `SKILL.md` parsing (`skill_host::providers::parse_skill_file`): any text either
//! parses into a skill that satisfies the parser's own guarantees or is
//! refused with a reason; it never panics, and aliases and deep nesting never
//! make it expand or recurse without bound.

#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_host::providers::parse_skill_file;
use skill_host::is_skill_name;

fuzz_target!(|data: &[u8]| {
    // The local provider refuses non-UTF-8 files before parsing; lossy
    // decoding still lets byte-level mutations reach the parser.
    let text = String::from_utf8_lossy(data);
    match parse_skill_file(&text) {
        Ok(skill) => {
            assert!(is_skill_name(&skill.name), "accepted name {:?}", skill.name);
            assert!(!skill.description.is_empty(), "accepted an empty description");
            let trimmed = skill.body.trim_matches(skill_plugin::description::is_ecmascript_whitespace);
            assert_eq!(trimmed, skill.body, "the body is not trimmed");
            if let Some(when) = &skill.when_to_use {
                assert!(!when.is_empty());
            }
            if let Some(metadata) = &skill.metadata {
                assert!(metadata.is_object(), "metadata {metadata} is not a mapping");
            }
        }
        Err(reason) => assert!(!reason.is_empty(), "a refusal without a reason"),
    }
});

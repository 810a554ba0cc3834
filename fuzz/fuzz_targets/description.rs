//! Catalog description normalisation (plugin `description::catalog_description`,
//! docs/spec.md §3.5): for any text and any cap ≥ 3 the result fits the cap in
//! characters, holds no whitespace but single spaces between words, is
//! trimmed, and normalising it again changes nothing.

#![no_main]

use libfuzzer_sys::fuzz_target;
use skill_plugin::description::{ELLIPSIS, catalog_description, is_ecmascript_whitespace};

fuzz_target!(|input: (u16, &str)| {
    let (cap, raw) = input;
    // The configuration refuses caps below 3 (docs/spec.md §3.1).
    let cap = usize::from(cap % 1024).max(3);
    let out = catalog_description(raw, cap);
    let chars = out.chars().count();
    assert!(chars <= cap, "{chars} characters for cap {cap}: {out:?}");
    assert!(!out.chars().any(|c| is_ecmascript_whitespace(c) && c != ' '), "non-space whitespace in {out:?}");
    assert!(!out.contains("  "), "a whitespace run in {out:?}");
    assert!(!out.starts_with(' ') && !out.ends_with(' '), "untrimmed {out:?}");
    let words: Vec<&str> = raw.split(is_ecmascript_whitespace).filter(|word| !word.is_empty()).collect();
    let normalized = words.join(" ");
    if normalized.chars().count() <= cap {
        assert_eq!(out, normalized, "a description within the cap changed");
    } else {
        // The first cap - 3 characters, then the ellipsis; never a split character.
        let kept: String = normalized.chars().take(cap - ELLIPSIS.len()).collect();
        assert_eq!(out, format!("{kept}{ELLIPSIS}"));
        assert_eq!(chars, cap);
    }
    assert_eq!(catalog_description(&out, cap), out, "not idempotent");
});

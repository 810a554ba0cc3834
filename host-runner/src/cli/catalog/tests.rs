use super::*;

#[test]
fn unescaping_undoes_the_catalogs_escaping_only() {
    assert_eq!(unescape("a &amp; b &lt;c&gt; &amp;lt; & &x"), "a & b <c> &lt; & &x");
    assert_eq!(unescape("plain"), "plain");
}

#[test]
fn the_entry_lines_and_the_coverage_line_are_read_between_the_markers() {
    let text = "head\n<available_skills>\n- `a`: One &amp; two.\n- `b`: Tw...\nCatalog coverage: 2 of 3 skills listed.\n</available_skills>\ntail";
    let catalog = PublishedCatalog::parse(text).unwrap();
    assert_eq!(catalog.entry_chars, "- `a`: One &amp; two.\n- `b`: Tw...\n".chars().count());
    assert_eq!(catalog.message_chars, text.chars().count());
    assert_eq!(catalog.coverage.as_deref(), Some("Catalog coverage: 2 of 3 skills listed."));
    assert_eq!(catalog.entries["a"], "One & two.");
    assert!(PublishedCatalog::parse("<available_skills>\nstray\n</available_skills>").is_err());
    assert!(PublishedCatalog::parse("no markers").is_err());
}

#[test]
fn budgets_are_read_as_the_plugin_reads_them() {
    let budget = |json: &str| CatalogOptions::parse(Some(json)).unwrap().budget;
    assert_eq!(budget(r#"{"catalogBudget":200}"#), Some(200));
    assert_eq!(budget(r#"{"catalogBudget":2e2}"#), Some(200));
    assert_eq!(budget(r#"{"catalogBudget":null}"#), None);
    assert_eq!(budget("  "), None);
}

//! The two escaping functions of docs/spec.md §3.4, shared by the catalog and the tool result.

/// Escapes a value for a double-quoted pseudo-XML attribute: `&`, `"`, `<`
/// (in that order). `>` is kept, as in the reference.
pub fn attr(value: &str) -> String {
    value.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;")
}

/// Escapes prose embedded in pseudo-XML framing: `&`, `<`, `>` (in that
/// order), so provider text can neither open nor close a tag. `"` is kept.
pub fn text(value: &str) -> String {
    if !value.contains(['&', '<', '>']) {
        return value.to_owned();
    }
    value.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attr_escapes_ampersand_first_then_quote_and_less_than_but_keeps_greater_than() {
        assert_eq!(attr(r#"a&b"c<d>e"#), "a&amp;b&quot;c&lt;d>e");
        assert_eq!(attr("&lt;"), "&amp;lt;");
    }

    #[test]
    fn text_escapes_ampersand_less_than_greater_than_but_keeps_quotes() {
        assert_eq!(text(r#"a&b"c<d>e"#), "a&amp;b\"c&lt;d&gt;e");
        assert_eq!(text("</available_skills>"), "&lt;/available_skills&gt;");
        assert_eq!(text("&gt;"), "&amp;gt;");
        assert_eq!(text("plain"), "plain");
    }
}

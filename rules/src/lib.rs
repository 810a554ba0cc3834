//! The rules the skill plugin (the guest) and its hosts must agree on, in
//! one place: both sides validate with the same code, so they cannot drift.
//! `no_std` with `alloc`, its one dependency `serde_json` without `std`, so
//! the guest compiles it for `wasm32-wasip2` exactly as the host compiles it
//! natively.
//!
//! [`Record`] is every source the plugin may write: the guest writes through
//! it and the hosts read through it (`records.json` beside this crate holds
//! its accepted and refused sources, which both hosts' tests read).
//!
//! ```
//! use skill_rules::{is_skill_name, Record, SkillNotice, ToolView};
//!
//! assert!(is_skill_name("review-pr"));
//! assert!(!is_skill_name("../etc"));
//! assert_eq!(ToolView::from_name("hidden"), Some(ToolView::Hidden));
//!
//! let gone = Record::Notice(SkillNotice::Gone { name: "pdf".into() });
//! assert_eq!(gone.to_json(), r#"{"form":"gone","kind":"skill-notice","name":"pdf"}"#);
//! assert_eq!(Record::parse(r#"{"kind":"skill-notice","form":"gone","name":"pdf"}"#).unwrap(), gone);
//! assert_eq!(Record::parse(r#"{"kind":"user"}"#).unwrap_err().name(), "foreign");
//! ```

#![no_std]
#![deny(missing_docs)]

extern crate alloc;

use alloc::string::String;

mod patterns;
mod record;

pub use patterns::SkillPatterns;
pub use record::{CatalogEntry, INVOCATION_KIND, NOTICE_KIND, Record, Refusal, SkillCatalog, SkillNotice};

/// The plugin's name in DeepSeek Harness (docs/spec.md §3.1).
pub const PLUGIN_NAME: &str = "dsh-tool-skill";

/// The source of every catalog message the plugin publishes, as compact JSON
/// (docs/spec.md §3.1).
pub const CATALOG_SOURCE: &str = r#"{"kind":"plugin","plugin":"dsh-tool-skill"}"#;

/// With user invocation on (docs/spec.md §3.10): the most user-invoked skills
/// one pre-step injects. Further names that would be injected are listed in
/// one note (source [`INVOCATION_NOTE_SOURCE`]) instead.
pub const MAX_INVOKED_SKILLS: usize = 16;

/// With `loadedSkills` on (docs/spec.md §3.12): the most notices about
/// changed or removed skills one pre-step adds; the others follow on later
/// steps.
pub const MAX_SKILL_NOTICES: usize = 8;

/// The most names one reminder of loaded skills lists (docs/spec.md §3.12);
/// the others are recalled on later steps. Hosts refuse a longer list.
pub const MAX_RELOAD_NAMES: usize = 256;

/// The most messages one pre-step of the plugin adds: a catalog,
/// [`MAX_SKILL_NOTICES`] notices and one reminder of skills compaction hid,
/// [`MAX_INVOKED_SKILLS`] injections and the note naming the skills not
/// loaded. Hosts cap added messages (64 by default, docs/spec.md §8.5) well
/// above this.
pub const MAX_PLUGIN_ADDED_MESSAGES: usize = 1 + MAX_SKILL_NOTICES + 1 + MAX_INVOKED_SKILLS + 1;

/// The source of the note a pre-step adds after its injections when a user
/// named more than [`MAX_INVOKED_SKILLS`] skills it could inject, as compact
/// JSON (docs/spec.md §3.10).
pub const INVOCATION_NOTE_SOURCE: &str = r#"{"kind":"skill-invocation","form":"not-loaded"}"#;

/// The source `kind` DeepSeek Harness 0.1.0-rc.8 gives its catalogs
/// (`catalogSource: "skill-catalog"`, docs/spec.md §3.1).
pub const SKILL_CATALOG_KIND: &str = "skill-catalog";

/// The line that opens a catalog's entries (docs/spec.md §3.6).
pub const CATALOG_OPEN_MARKER: &str = "<available_skills>\n";

/// What closes a catalog's entries (docs/spec.md §3.6).
pub const CATALOG_CLOSE_MARKER: &str = "</available_skills>";

/// How the coverage line of a budgeted catalog starts (docs/spec.md §3.13).
pub const COVERAGE_PREFIX: &str = "Catalog coverage: ";

/// What joins a description and the skill's `whenToUse` in a catalog entry
/// under `catalogWhenToUse` (docs/spec.md §3.13).
pub const WHEN_TO_USE_JOINER: &str = " When to use: ";

/// The text a catalog entry describes a skill with under `catalogWhenToUse`
/// (docs/spec.md §3.13): its description, then [`WHEN_TO_USE_JOINER`] and its
/// `whenToUse`, as one raw text that is then normalised and capped as a
/// description is. A `whenToUse` that is only whitespace adds nothing.
pub fn with_when_to_use<'a>(description: &'a str, when_to_use: Option<&str>) -> alloc::borrow::Cow<'a, str> {
    match when_to_use.filter(|when| when.chars().any(|c| !is_ecmascript_whitespace(c))) {
        Some(when) => alloc::borrow::Cow::Owned([description, WHEN_TO_USE_JOINER, when].concat()),
        None => alloc::borrow::Cow::Borrowed(description),
    }
}

/// A description as the catalog measures it (docs/spec.md §3.5): every run
/// of ECMAScript whitespace collapsed to one space, trimmed, not capped.
pub fn normalise_description(raw: &str) -> String {
    let mut normalized = String::with_capacity(raw.len());
    let mut pending_space = false;
    for c in raw.chars() {
        if is_ecmascript_whitespace(c) {
            pending_space = !normalized.is_empty();
        } else {
            if pending_space {
                normalized.push(' ');
                pending_space = false;
            }
            normalized.push(c);
        }
    }
    normalized
}

/// The first sentence of a description that is already normalised (and
/// capped), as `catalogSummaries` shows it (docs/spec.md §3.13): its
/// shortest prefix ending with `.`, `!` or `?` that is the description's
/// last character or is followed by a space and then a character that is
/// not a lowercase letter (so `e.g. the` and `i.e. a` run on); the whole
/// description when there is no such prefix.
pub fn first_sentence(description: &str) -> &str {
    for (index, c) in description.char_indices() {
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        let end = index + c.len_utf8();
        let rest = &description[end..];
        let mut after = rest.chars();
        match (after.next(), after.next()) {
            (None, _) => return description,
            (Some(' '), Some(next)) if !next.is_lowercase() => return &description[..end],
            _ => {}
        }
    }
    description
}

/// The `form` of a catalog update's source (with `catalogUpdates: "delta"`,
/// docs/spec.md §3.13): `{"kind":"plugin","plugin":"dsh-tool-skill",
/// "form":"catalog-update","removed":[names]}`. An update changes the
/// catalog published before it: its entries add or replace entries of the
/// same names, and `removed` lists the names that left.
pub const CATALOG_UPDATE_FORM: &str = "catalog-update";

/// The longest body digest a plugin may hand back (`sha256:` and 64 hex
/// digits is 71), in a skill notice or a tool result's load (docs/spec.md §8.5).
pub const MAX_BODY_DIGEST_BYTES: usize = 128;

/// A body digest a plugin may hand back: up to [`MAX_BODY_DIGEST_BYTES`]
/// bytes of printable ASCII (`!` to `~`).
pub fn is_body_digest(digest: &str) -> bool {
    digest.len() <= MAX_BODY_DIGEST_BYTES && digest.bytes().all(|byte| byte.is_ascii_graphic())
}

/// With `skillSearch` on (docs/spec.md §3.14): the most skills one `query`
/// returns. Hosts refuse a longer list.
pub const MAX_SEARCH_MATCHES: usize = 5;

/// The longest `catalogExclude` pattern (docs/spec.md §3.13).
pub const MAX_PATTERN_LENGTH: usize = 128;

/// The strings of the list a configuration gives under `key` (the names and
/// patterns of `catalogPinned`, `catalogExclude`, `catalogNameOnly`,
/// `userOnly`), in order; empty when it has no such list. The host reads a
/// configuration the plugin already accepted, so anything else is absent.
pub fn config_names(config: &serde_json::Value, key: &str) -> alloc::vec::Vec<String> {
    match config.get(key) {
        Some(serde_json::Value::Array(items)) => {
            items.iter().filter_map(serde_json::Value::as_str).map(String::from).collect()
        }
        _ => alloc::vec::Vec::new(),
    }
}

/// A `catalogExclude` pattern (docs/spec.md §3.13): 1 to
/// [`MAX_PATTERN_LENGTH`] characters, each a lower-case ASCII letter, a
/// digit, `-`, `*` (any run of characters) or `?` (any one character).
pub fn is_skill_pattern(pattern: &str) -> bool {
    (1..=MAX_PATTERN_LENGTH).contains(&pattern.len())
        && pattern.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'*' | b'?'))
}

/// Whether `name` matches a `catalogExclude` pattern: `*` matches any run of
/// characters (the empty one too), `?` exactly one, anything else itself.
/// Linear in the lengths times the stars, never exponential. To test many
/// names against many patterns, compile them once into [`SkillPatterns`].
pub fn matches_skill_pattern(pattern: &str, name: &str) -> bool {
    let (pattern, name) = (pattern.as_bytes(), name.as_bytes());
    let (mut p, mut n) = (0, 0);
    // Where the last `*` was, and the name position it currently absorbs up to.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&c) if c == b'?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match star {
                // Let the last star absorb one more character and retry.
                Some((star_p, star_n)) => {
                    star = Some((star_p, star_n + 1));
                    p = star_p + 1;
                    n = star_n + 1;
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// The file that makes a folder a skill bundle (docs/spec.md §4.2).
pub const SKILL_FILE: &str = "SKILL.md";

/// The catalog's description cap when the configuration names none
/// (`catalogDescriptionMaxLength`, docs/spec.md §3.1).
pub const DEFAULT_DESCRIPTION_MAX_LENGTH: usize = 500;

/// The skill-name grammar `^[a-z0-9]+(?:-[a-z0-9]+)*$` (docs/spec.md §3.3):
/// no `/`, `.` or upper case, so a name is always one safe path component.
pub fn is_skill_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .split('-')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
}

/// The most bytes a skill file's path may have (docs/spec.md §3.15).
pub const MAX_SKILL_FILE_PATH_BYTES: usize = 1024;

/// The most bytes one read of a skill's file returns (docs/spec.md §3.15):
/// a larger file is answered `too-large` with its size, unread.
pub const MAX_SKILL_FILE_READ_BYTES: u64 = 1024 * 1024;

/// Whether `path` names a file inside a skill (docs/spec.md §3.15): at most
/// [`MAX_SKILL_FILE_PATH_BYTES`], `/`-separated segments, each non-empty,
/// neither `.` nor `..`, not hidden (a leading `.`), without `\` or a
/// control character (U+0000–U+001F, U+007F). Every host answers a path
/// outside it `missing` without looking, and lists none.
pub fn is_skill_file_path(path: &str) -> bool {
    !path.is_empty()
        && path.len() <= MAX_SKILL_FILE_PATH_BYTES
        && path.split('/').all(|segment| {
            !segment.is_empty()
                && !segment.starts_with('.')
                && !segment.chars().any(|c| c == '\\' || c.is_ascii_control())
        })
}

/// ECMAScript's `\s` (docs/spec.md §3.5): the reference normalises and trims
/// with it, and it is wider than ASCII whitespace and differs from
/// [`char::is_whitespace`] (which includes U+0085 and excludes U+FEFF).
pub fn is_ecmascript_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{2028}' | '\u{2029}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{FEFF}'
    )
}

/// How the agent's tool view resolves the name `skill` (docs/spec.md §3.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ToolView {
    /// `skill` is this plugin's tool.
    #[default]
    Visible,
    /// The agent's tool view excludes it.
    Hidden,
    /// Another tool named `skill` shadows it.
    Shadowed,
}

impl ToolView {
    /// Every view, in the order the command line and scenarios list them.
    pub const ALL: [Self; 3] = [Self::Visible, Self::Hidden, Self::Shadowed];

    /// Its name in scenarios, the command line and the WIT: `visible`,
    /// `hidden` or `shadowed`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Visible => "visible",
            Self::Hidden => "hidden",
            Self::Shadowed => "shadowed",
        }
    }

    /// The view with this [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|view| view.name() == name)
    }
}

/// Where a skill's resources live (docs/spec.md §3.4): what the tool result's
/// guidance lines name. Written as the reference's
/// `{"kind":"directory","path":…}`, `{"kind":"url","url":…}` or
/// `{"kind":"opaque","description":…}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ResourceBase {
    /// A directory on the host's machine.
    Directory {
        /// The directory's path.
        path: String,
    },
    /// A base URL.
    Url {
        /// The URL.
        url: String,
    },
    /// Free-text guidance.
    Opaque {
        /// The guidance text.
        description: String,
    },
}

#[cfg(test)]
mod tests {
    #[test]
    fn skill_file_paths_stay_inside_the_skill() {
        for good in ["references/api.md", "SKILL.md", "a b/c-d_e.txt", "ü/ñ.md"] {
            assert!(super::is_skill_file_path(good), "{good}");
        }
        let long = "a".repeat(super::MAX_SKILL_FILE_PATH_BYTES + 1);
        for bad in [
            "",
            "/etc/passwd",
            "a//b",
            "a/",
            "./a",
            "a/../b",
            "..",
            ".hidden",
            "a/.git/config",
            "a\\b",
            "a\nb",
            "a\u{7f}",
            long.as_str(),
        ] {
            assert!(!super::is_skill_file_path(bad), "{bad:?}");
        }
    }

    use super::*;

    #[test]
    fn skill_names_follow_the_grammar() {
        for name in ["a", "review-pr", "a1-b2-c3", "0"] {
            assert!(is_skill_name(name), "{name}");
        }
        for name in ["", "-a", "a-", "a--b", "A", "a_b", "a.b", "a/b", "..", "é"] {
            assert!(!is_skill_name(name), "{name}");
        }
    }

    #[test]
    fn ecmascript_whitespace_is_not_rusts() {
        assert!(is_ecmascript_whitespace('\u{FEFF}'));
        assert!(!'\u{FEFF}'.is_whitespace());
        assert!(!is_ecmascript_whitespace('\u{85}'));
        assert!('\u{85}'.is_whitespace());
        for c in ['\t', '\n', '\u{0B}', '\u{0C}', '\r', ' ', '\u{A0}', '\u{2000}', '\u{200A}', '\u{3000}'] {
            assert!(is_ecmascript_whitespace(c), "{c:?}");
        }
        assert!(!is_ecmascript_whitespace('\u{200B}'));
    }

    #[test]
    fn a_tool_view_is_found_by_its_name() {
        for view in ToolView::ALL {
            assert_eq!(ToolView::from_name(view.name()), Some(view));
        }
        assert_eq!(ToolView::ALL.map(ToolView::name), ["visible", "hidden", "shadowed"]);
        assert_eq!(ToolView::from_name("Visible"), None);
    }

    #[test]
    fn the_plugin_adds_at_most_a_catalog_the_injections_and_one_note() {
        assert_eq!(MAX_INVOKED_SKILLS, 16);
        assert_eq!(MAX_SKILL_NOTICES, 8);
        assert_eq!(MAX_PLUGIN_ADDED_MESSAGES, 27);
        assert_eq!(INVOCATION_NOTE_SOURCE, r#"{"kind":"skill-invocation","form":"not-loaded"}"#);
    }

    #[test]
    fn patterns_match_by_star_and_question_mark() {
        for (pattern, name) in [
            ("deploy-*", "deploy-production"),
            ("deploy-*", "deploy-"),
            ("*", "a"),
            ("*-draft", "release-notes-draft"),
            ("a?c", "abc"),
            ("*a*b*", "xxaxxbxx"),
            ("review-pr", "review-pr"),
        ] {
            assert!(matches_skill_pattern(pattern, name), "{pattern} {name}");
        }
        for (pattern, name) in [("deploy-*", "deploy"), ("a?c", "ac"), ("review-pr", "review-prs"), ("*-x", "a-xy")] {
            assert!(!matches_skill_pattern(pattern, name), "{pattern} {name}");
        }
        assert!(is_skill_pattern("deploy-*") && is_skill_pattern("?"));
        for pattern in ["", "Deploy", "a/b", "a b", "é"] {
            assert!(!is_skill_pattern(pattern), "{pattern}");
        }
        assert!(!is_skill_pattern(&"a".repeat(MAX_PATTERN_LENGTH + 1)));
    }

    #[test]
    fn a_first_sentence_ends_at_a_stop_before_a_space_and_no_lowercase_letter() {
        for (description, first) in [
            ("Fill PDF forms. Use when asked.", "Fill PDF forms."),
            ("Deploy! Then check.", "Deploy!"),
            ("Why? 2 reasons.", "Why?"),
            ("Use e.g. the CLI. Then more.", "Use e.g. the CLI."),
            ("Version 1.2 ships. Next.", "Version 1.2 ships."),
            ("No stop at all", "No stop at all"),
            ("One sentence.", "One sentence."),
            ("Wait... Then go.", "Wait..."),
            ("Cut by the cap...", "Cut by the cap..."),
            ("Résumé. Émigré.", "Résumé."),
            ("Spaced . Out", "Spaced ."),
            ("", ""),
        ] {
            assert_eq!(first_sentence(description), first, "{description}");
        }
    }

    #[test]
    fn the_catalog_source_names_the_plugin() {
        assert_eq!(CATALOG_SOURCE, alloc::format!(r#"{{"kind":"plugin","plugin":"{PLUGIN_NAME}"}}"#));
    }

    #[test]
    fn a_configurations_list_is_read_in_order_and_absent_otherwise() {
        let config: serde_json::Value =
            serde_json::from_str(r#"{"userOnly":["deploy-*","b"],"catalogPinned":"x"}"#).unwrap();
        assert_eq!(config_names(&config, "userOnly"), ["deploy-*", "b"]);
        assert!(config_names(&config, "catalogPinned").is_empty());
        assert!(config_names(&config, "catalogExclude").is_empty());
        assert!(SkillPatterns::from_config(&config, "userOnly").matches("deploy-prod"));
        assert!(!SkillPatterns::from_config(&config, "catalogExclude").matches("deploy-prod"));
    }
}

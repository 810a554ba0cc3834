//! Plugin configuration (docs/spec.md §3.1).

use serde_json::Value;
use skill_rules::SkillPatterns;

use crate::catalog::CatalogForm;

/// The default cap on a catalog description, in characters.
pub const DEFAULT_CATALOG_DESCRIPTION_MAX_LENGTH: usize = skill_rules::DEFAULT_DESCRIPTION_MAX_LENGTH;

/// The exact error for a bad `catalogDescriptionMaxLength` (docs/spec.md §3.1).
pub const MAX_LENGTH_ERROR: &str =
    "tool-skill: catalogDescriptionMaxLength must be an integer greater than or equal to 3";

/// The smallest `skillBodyMaxLength`: a cap below a few lines of
/// instructions would leave the model nothing to follow.
pub const MIN_SKILL_BODY_MAX_LENGTH: usize = 1000;

/// The exact error for a bad `skillBodyMaxLength` (docs/spec.md §3.1).
pub const BODY_MAX_LENGTH_ERROR: &str =
    "tool-skill: skillBodyMaxLength must be an integer greater than or equal to 1000";

/// The exact error for a bad `catalogSource` (docs/spec.md §3.1).
pub const CATALOG_SOURCE_ERROR: &str = r#"tool-skill: catalogSource must be "plugin" or "skill-catalog""#;

/// The exact error for a bad `catalogBudget` (docs/spec.md §3.13).
pub const BUDGET_ERROR: &str = "tool-skill: catalogBudget must be an integer greater than or equal to 1";

/// The most files `skillResourceManifest` may list.
pub const MAX_RESOURCE_MANIFEST: usize = 1000;

/// The exact error for a bad `skillResourceManifest` (docs/spec.md §3.15).
pub const MANIFEST_ERROR: &str = "tool-skill: skillResourceManifest must be an integer from 1 to 1000";

/// The most names `catalogPinned` or patterns `catalogExclude` may hold.
pub const MAX_LISTED_NAMES: usize = 1024;

/// The exact error for a bad `catalogPinned` (docs/spec.md §3.13).
pub const PINNED_ERROR: &str = "tool-skill: catalogPinned must be an array of at most 1024 skill names";

/// The exact error for a bad `catalogExclude` (docs/spec.md §3.13).
pub const EXCLUDE_ERROR: &str = r#"tool-skill: catalogExclude must be an array of at most 1024 skill names or patterns (a-z, 0-9, "-", "*" and "?")"#;

/// The exact error for a bad `catalogSummaries` (docs/spec.md §3.13).
pub const SUMMARIES_ERROR: &str = "tool-skill: catalogSummaries must be a boolean";

/// The exact error for a bad `catalogWhenToUse` (docs/spec.md §3.13).
pub const WHEN_TO_USE_ERROR: &str = "tool-skill: catalogWhenToUse must be a boolean";
/// The exact error for a bad `catalogNameOnly` (docs/spec.md §3.13).
pub const NAME_ONLY_ERROR: &str = r#"tool-skill: catalogNameOnly must be an array of at most 1024 skill names or patterns (a-z, 0-9, "-", "*" and "?")"#;

/// The exact error for a bad `userOnly` (docs/spec.md §3.13).
pub const USER_ONLY_ERROR: &str =
    r#"tool-skill: userOnly must be an array of at most 1024 skill names or patterns (a-z, 0-9, "-", "*" and "?")"#;

/// The exact error for a bad `catalogUpdates` (docs/spec.md §3.13).
pub const UPDATES_ERROR: &str = r#"tool-skill: catalogUpdates must be "full" or "delta""#;

/// The exact error for delta updates in DeepSeek Harness's catalog form.
pub const DELTA_FORM_ERROR: &str = r#"tool-skill: catalogUpdates "delta" needs catalogSource "plugin""#;

/// The configuration keys, as the unknown-key error lists them.
const KNOWN_KEYS: &str = "catalogDescriptionMaxLength, userInvocation, loadedSkills, skillBodyMaxLength, catalogSource, catalogBudget, catalogSummaries, catalogWhenToUse, catalogPinned, catalogExclude, catalogNameOnly, userOnly, catalogUpdates, skillSearch, skillReads, skillResourceManifest";

/// How a catalog change reaches the model (`catalogUpdates`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CatalogUpdates {
    /// Every change publishes the complete catalog (the reference's way).
    #[default]
    Full,
    /// After a complete catalog, a change publishes only what changed
    /// (docs/spec.md §3.13).
    Delta,
}

/// The plugin's validated configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Cap on a normalised catalog description, in characters (≥ 3).
    pub catalog_description_max_length: usize,
    /// Opt-in (off by default): a user's `/name` in a message loads that
    /// skill into the step, and catalogs say so.
    pub user_invocation: bool,
    /// Opt-in: the tool asks the host to record which body it returned, and
    /// each pre-step tells the model when a skill it loaded changed, went
    /// away, or left its view through compaction (docs/spec.md §3.12).
    pub loaded_skills: bool,
    /// Opt-in: the longest body the tool (and a user's `/name`) returns, in
    /// characters; a longer one is cut with a line saying where the rest is.
    pub skill_body_max_length: Option<usize>,
    /// How catalogs record what they published: the seed's source (the
    /// default) or DeepSeek Harness 0.1.0-rc.8's `skill-catalog` entries.
    pub catalog_form: CatalogForm,
    /// Opt-in: the most characters the catalog's entry lines take together.
    pub catalog_budget: Option<usize>,
    /// Opt-in, under a budget: a description that does not fit whole is
    /// shown as its first sentence when that fits, before any is cut.
    pub catalog_summaries: bool,
    /// Opt-in: a catalog entry's description is followed by the skill's
    /// `whenToUse`, as one text.
    pub catalog_when_to_use: bool,
    /// Skills listed first under a budget, never shortened (sorted, unique).
    pub catalog_pinned: Vec<String>,
    /// Names and patterns of skills the catalog leaves out, compiled once
    /// for the configuration's lifetime.
    pub catalog_exclude: SkillPatterns,
    /// Names and patterns of skills the catalog lists by name alone.
    pub catalog_name_only: SkillPatterns,
    /// Names and patterns of skills treated as `disable-model-invocation:
    /// true`: out of the catalog, refused by the tool, invocable by a user.
    pub user_only: SkillPatterns,
    /// How catalog changes are published.
    pub catalog_updates: CatalogUpdates,
    /// Opt-in: the tool also takes a `query` and returns matching skills.
    pub skill_search: bool,
    /// Opt-in: the tool also takes a `section` or a `path`, and a cut body
    /// ends with the outline of the sections it left out.
    pub skill_reads: bool,
    /// Opt-in: a whole load ends with the first this many of the skill's
    /// files, with their sizes, and how many there are.
    pub skill_resource_manifest: Option<u32>,
}

impl Default for Config {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl Config {
    /// The configuration of `{}`.
    pub const DEFAULT: Self = Self {
        catalog_description_max_length: DEFAULT_CATALOG_DESCRIPTION_MAX_LENGTH,
        user_invocation: false,
        loaded_skills: false,
        skill_body_max_length: None,
        catalog_form: CatalogForm::Plugin,
        catalog_budget: None,
        catalog_summaries: false,
        catalog_when_to_use: false,
        catalog_pinned: Vec::new(),
        catalog_exclude: SkillPatterns::EMPTY,
        catalog_name_only: SkillPatterns::EMPTY,
        user_only: SkillPatterns::EMPTY,
        catalog_updates: CatalogUpdates::Full,
        skill_search: false,
        skill_reads: false,
        skill_resource_manifest: None,
    };

    /// Whether `catalogExclude` leaves the skill `name` out of the catalog.
    pub fn excludes(&self, name: &str) -> bool {
        self.catalog_exclude.matches(name)
    }

    /// Whether `catalogNameOnly` lists the skill `name` by its name alone.
    pub fn names_only(&self, name: &str) -> bool {
        self.catalog_name_only.matches(name)
    }

    /// Whether `userOnly` keeps the skill `name` from the model.
    pub fn user_only(&self, name: &str) -> bool {
        self.user_only.matches(name)
    }

    /// Whether `catalogPinned` names the skill `name`.
    pub fn pins(&self, name: &str) -> bool {
        self.catalog_pinned.binary_search_by(|pinned| pinned.as_str().cmp(name)).is_ok()
    }

    /// Parses and validates configuration JSON. An empty text means defaults.
    pub fn parse(json: &str) -> Result<Self, String> {
        if json.trim().is_empty() {
            return Ok(Self::default());
        }
        let value: Value = serde_json::from_str(json)
            .map_err(|error| format!("tool-skill: configuration is not valid JSON: {error}"))?;
        let Value::Object(fields) = value else {
            return Err("tool-skill: configuration must be a JSON object".to_owned());
        };
        let mut config = Self::default();
        for (key, value) in &fields {
            match key.as_str() {
                "catalogDescriptionMaxLength" => {
                    // `null` means "not set", as `??` does in the reference.
                    if !value.is_null() {
                        config.catalog_description_max_length = integer_at_least_3(value)?;
                    }
                }
                "userInvocation" => match value {
                    Value::Null => {}
                    Value::Bool(enabled) => config.user_invocation = *enabled,
                    _ => return Err("tool-skill: userInvocation must be a boolean".to_owned()),
                },
                "loadedSkills" => match value {
                    Value::Null => {}
                    Value::Bool(enabled) => config.loaded_skills = *enabled,
                    _ => return Err("tool-skill: loadedSkills must be a boolean".to_owned()),
                },
                "skillBodyMaxLength" => {
                    if !value.is_null() {
                        let length = integer_at_least(value, MIN_SKILL_BODY_MAX_LENGTH)
                            .ok_or_else(|| BODY_MAX_LENGTH_ERROR.to_owned())?;
                        config.skill_body_max_length = Some(length);
                    }
                }
                "catalogSource" => match value {
                    Value::Null => {}
                    Value::String(form) if form == "plugin" => config.catalog_form = CatalogForm::Plugin,
                    Value::String(form) if form == "skill-catalog" => config.catalog_form = CatalogForm::SkillCatalog,
                    _ => return Err(CATALOG_SOURCE_ERROR.to_owned()),
                },
                "catalogBudget" => {
                    if !value.is_null() {
                        config.catalog_budget =
                            Some(integer_at_least(value, 1).ok_or_else(|| BUDGET_ERROR.to_owned())?);
                    }
                }
                "catalogSummaries" => match value {
                    Value::Null => {}
                    Value::Bool(enabled) => config.catalog_summaries = *enabled,
                    _ => return Err(SUMMARIES_ERROR.to_owned()),
                },
                "catalogWhenToUse" => match value {
                    Value::Null => {}
                    Value::Bool(enabled) => config.catalog_when_to_use = *enabled,
                    _ => return Err(WHEN_TO_USE_ERROR.to_owned()),
                },
                "catalogPinned" => {
                    let names = strings(value, skill_rules::is_skill_name).ok_or_else(|| PINNED_ERROR.to_owned())?;
                    config.catalog_pinned = names;
                    config.catalog_pinned.sort_unstable();
                    config.catalog_pinned.dedup();
                }
                "catalogExclude" => {
                    config.catalog_exclude = SkillPatterns::new(
                        strings(value, skill_rules::is_skill_pattern).ok_or_else(|| EXCLUDE_ERROR.to_owned())?,
                    );
                }
                "catalogNameOnly" => {
                    config.catalog_name_only = SkillPatterns::new(
                        strings(value, skill_rules::is_skill_pattern).ok_or_else(|| NAME_ONLY_ERROR.to_owned())?,
                    );
                }
                "userOnly" => {
                    config.user_only = SkillPatterns::new(
                        strings(value, skill_rules::is_skill_pattern).ok_or_else(|| USER_ONLY_ERROR.to_owned())?,
                    );
                }
                "catalogUpdates" => match value {
                    Value::Null => {}
                    Value::String(updates) if updates == "full" => config.catalog_updates = CatalogUpdates::Full,
                    Value::String(updates) if updates == "delta" => config.catalog_updates = CatalogUpdates::Delta,
                    _ => return Err(UPDATES_ERROR.to_owned()),
                },
                "skillSearch" => match value {
                    Value::Null => {}
                    Value::Bool(enabled) => config.skill_search = *enabled,
                    _ => return Err("tool-skill: skillSearch must be a boolean".to_owned()),
                },
                "skillReads" => match value {
                    Value::Null => {}
                    Value::Bool(enabled) => config.skill_reads = *enabled,
                    _ => return Err("tool-skill: skillReads must be a boolean".to_owned()),
                },
                "skillResourceManifest" => {
                    if !value.is_null() {
                        let limit = integer_at_least(value, 1)
                            .filter(|&limit| limit <= MAX_RESOURCE_MANIFEST)
                            .ok_or_else(|| MANIFEST_ERROR.to_owned())?;
                        config.skill_resource_manifest = Some(limit as u32);
                    }
                }
                other => {
                    return Err(format!(
                        "tool-skill: unknown configuration key \"{other}\" (known keys: {KNOWN_KEYS})"
                    ));
                }
            }
        }
        if config.catalog_updates == CatalogUpdates::Delta && config.catalog_form != CatalogForm::Plugin {
            return Err(DELTA_FORM_ERROR.to_owned());
        }
        Ok(config)
    }
}

/// `null` (none) or an array of at most [`MAX_LISTED_NAMES`] strings that
/// each pass `valid`.
fn strings(value: &Value, valid: fn(&str) -> bool) -> Option<Vec<String>> {
    match value {
        Value::Null => Some(Vec::new()),
        Value::Array(items) if items.len() <= MAX_LISTED_NAMES => {
            items.iter().map(|item| item.as_str().filter(|text| valid(text)).map(str::to_owned)).collect()
        }
        _ => None,
    }
}

/// Accepts what JavaScript's `Number.isInteger(v) && v >= 3` accepts: `3`,
/// `3.0`, `1e3`; integers too large for `usize` saturate (no catalog
/// description is that long).
fn integer_at_least_3(value: &Value) -> Result<usize, String> {
    integer_at_least(value, 3).ok_or_else(|| MAX_LENGTH_ERROR.to_owned())
}

/// An integer of at least `min`, as JavaScript's `Number.isInteger(v) && v
/// >= min` accepts it; `None` for anything else.
fn integer_at_least(value: &Value, min: usize) -> Option<usize> {
    let Value::Number(number) = value else {
        return None;
    };
    if let Some(unsigned) = number.as_u64() {
        let unsigned = usize::try_from(unsigned).unwrap_or(usize::MAX);
        return (unsigned >= min).then_some(unsigned);
    }
    match number.as_f64() {
        // `as` saturates for floats beyond usize::MAX.
        Some(float) if float.is_finite() && float.fract() == 0.0 && float >= min as f64 => Some(float as usize),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn max(json: &str) -> Result<usize, String> {
        Config::parse(json).map(|config| config.catalog_description_max_length)
    }

    #[test]
    fn defaults_to_500() {
        assert_eq!(max(""), Ok(500));
        assert_eq!(max("{}"), Ok(500));
        assert_eq!(max(r#"{"catalogDescriptionMaxLength":null}"#), Ok(500));
    }

    #[test]
    fn accepts_integers_from_3() {
        assert_eq!(max(r#"{"catalogDescriptionMaxLength":3}"#), Ok(3));
        assert_eq!(max(r#"{"catalogDescriptionMaxLength":80.0}"#), Ok(80));
        assert_eq!(max(r#"{"catalogDescriptionMaxLength":1e3}"#), Ok(1000));
        assert_eq!(max(r#"{"catalogDescriptionMaxLength":1e300}"#), Ok(usize::MAX));
    }

    #[test]
    fn refuses_anything_else_with_the_exact_error() {
        for bad in ["2", "0", "-5", "3.5", "\"10\"", "true", "[]", "{}"] {
            let json = format!(r#"{{"catalogDescriptionMaxLength":{bad}}}"#);
            assert_eq!(
                max(&json),
                Err("tool-skill: catalogDescriptionMaxLength must be an integer greater than or equal to 3".to_owned()),
                "{bad}"
            );
        }
    }

    #[test]
    fn refuses_unknown_keys_by_name() {
        assert_eq!(
            max(r#"{"catalogDescriptionMaxLenght":10}"#),
            Err("tool-skill: unknown configuration key \"catalogDescriptionMaxLenght\" (known keys: catalogDescriptionMaxLength, userInvocation, loadedSkills, skillBodyMaxLength, catalogSource, catalogBudget, catalogSummaries, catalogWhenToUse, catalogPinned, catalogExclude, catalogNameOnly, userOnly, catalogUpdates, skillSearch, skillReads, skillResourceManifest)".to_owned())
        );
    }

    #[test]
    fn loaded_skills_and_the_body_cap_are_off_by_default_and_checked() {
        assert_eq!(
            (Config::parse("{}").unwrap().loaded_skills, Config::parse("{}").unwrap().skill_body_max_length),
            (false, None)
        );
        let on = Config::parse(r#"{"loadedSkills":true,"skillBodyMaxLength":20000}"#).unwrap();
        assert_eq!((on.loaded_skills, on.skill_body_max_length), (true, Some(20_000)));
        assert_eq!(Config::parse(r#"{"skillBodyMaxLength":1e3}"#).unwrap().skill_body_max_length, Some(1000));
        assert_eq!(
            Config::parse(r#"{"loadedSkills":1}"#),
            Err("tool-skill: loadedSkills must be a boolean".to_owned())
        );
        for bad in ["999", "0", "-1", "1000.5", "\"20000\"", "true"] {
            assert_eq!(
                Config::parse(&format!(r#"{{"skillBodyMaxLength":{bad}}}"#)),
                Err("tool-skill: skillBodyMaxLength must be an integer greater than or equal to 1000".to_owned()),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_catalog_source_is_the_seeds_by_default_and_takes_one_of_two_names() {
        assert_eq!(Config::parse("{}").unwrap().catalog_form, CatalogForm::Plugin);
        assert_eq!(Config::parse(r#"{"catalogSource":"plugin"}"#).unwrap().catalog_form, CatalogForm::Plugin);
        assert_eq!(
            Config::parse(r#"{"catalogSource":"skill-catalog"}"#).unwrap().catalog_form,
            CatalogForm::SkillCatalog
        );
        for bad in [r#""skill_catalog""#, "true", "1", "[]"] {
            assert_eq!(
                Config::parse(&format!(r#"{{"catalogSource":{bad}}}"#)),
                Err(r#"tool-skill: catalogSource must be "plugin" or "skill-catalog""#.to_owned()),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_catalog_keys_are_off_by_default_and_checked_with_exact_errors() {
        let defaults = Config::parse("{}").unwrap();
        assert_eq!(
            (defaults.catalog_budget, defaults.catalog_updates, defaults.skill_search),
            (None, CatalogUpdates::Full, false)
        );
        assert!(defaults.catalog_pinned.is_empty() && defaults.catalog_exclude.is_empty());
        let on = Config::parse(
            r#"{"catalogBudget":4000,"catalogPinned":["b","a","b"],"catalogExclude":["draft-*","x?"],"catalogUpdates":"delta","skillSearch":true}"#,
        )
        .unwrap();
        assert_eq!(on.catalog_budget, Some(4000));
        assert_eq!(on.catalog_pinned, ["a", "b"]);
        assert!(on.pins("a") && !on.pins("c"));
        assert!(on.excludes("draft-notes") && on.excludes("xy") && !on.excludes("draft") && !on.excludes("xyz"));
        assert_eq!((on.catalog_updates, on.skill_search), (CatalogUpdates::Delta, true));
        let refused = |json: &str| Config::parse(json).unwrap_err();
        for bad in ["0", "-1", "1.5", "\"100\"", "true"] {
            assert_eq!(
                refused(&format!(r#"{{"catalogBudget":{bad}}}"#)),
                "tool-skill: catalogBudget must be an integer greater than or equal to 1"
            );
        }
        for bad in [r#""a""#, r#"["A"]"#, r#"["a*"]"#, "[1]", "{}"] {
            assert_eq!(
                refused(&format!(r#"{{"catalogPinned":{bad}}}"#)),
                "tool-skill: catalogPinned must be an array of at most 1024 skill names"
            );
        }
        let too_many = format!(r#"{{"catalogExclude":[{}]}}"#, vec![r#""a""#; 1025].join(","));
        for bad in [r#""a""#, r#"["a/b"]"#, r#"[""]"#, r#"["Draft-*"]"#, too_many.as_str()] {
            let json = if bad.starts_with('{') { bad.to_owned() } else { format!(r#"{{"catalogExclude":{bad}}}"#) };
            assert_eq!(
                refused(&json),
                r#"tool-skill: catalogExclude must be an array of at most 1024 skill names or patterns (a-z, 0-9, "-", "*" and "?")"#
            );
        }
        assert_eq!(
            refused(r#"{"catalogUpdates":"deltas"}"#),
            r#"tool-skill: catalogUpdates must be "full" or "delta""#
        );
        assert_eq!(refused(r#"{"skillSearch":"yes"}"#), "tool-skill: skillSearch must be a boolean");
        assert_eq!(
            refused(r#"{"catalogUpdates":"delta","catalogSource":"skill-catalog"}"#),
            r#"tool-skill: catalogUpdates "delta" needs catalogSource "plugin""#
        );
    }

    #[test]
    fn summaries_name_only_and_user_only_are_off_by_default_and_checked_with_exact_errors() {
        let defaults = Config::parse("{}").unwrap();
        assert!(!defaults.catalog_summaries && defaults.catalog_name_only.is_empty() && defaults.user_only.is_empty());
        let on = Config::parse(
            r#"{"catalogSummaries":true,"catalogNameOnly":["legacy-*"],"userOnly":["deploy-prod","release-?"]}"#,
        )
        .unwrap();
        assert!(on.catalog_summaries);
        assert!(on.names_only("legacy-tool") && !on.names_only("legacy"));
        assert!(on.user_only("deploy-prod") && on.user_only("release-x") && !on.user_only("release-xy"));
        let nulls = Config::parse(r#"{"catalogSummaries":null,"catalogNameOnly":null,"userOnly":null}"#).unwrap();
        assert_eq!(nulls, defaults);
        let refused = |json: &str| Config::parse(json).unwrap_err();
        for bad in ["1", "\"true\"", "[]"] {
            assert_eq!(
                refused(&format!(r#"{{"catalogSummaries":{bad}}}"#)),
                "tool-skill: catalogSummaries must be a boolean"
            );
        }
        for bad in [r#""a""#, r#"["a/b"]"#, r#"[""]"#, r#"["Draft-*"]"#, "[1]", "{}"] {
            assert_eq!(
                refused(&format!(r#"{{"catalogNameOnly":{bad}}}"#)),
                r#"tool-skill: catalogNameOnly must be an array of at most 1024 skill names or patterns (a-z, 0-9, "-", "*" and "?")"#
            );
            assert_eq!(
                refused(&format!(r#"{{"userOnly":{bad}}}"#)),
                r#"tool-skill: userOnly must be an array of at most 1024 skill names or patterns (a-z, 0-9, "-", "*" and "?")"#
            );
        }
        let too_many = format!(r#"{{"userOnly":[{}]}}"#, vec![r#""a""#; 1025].join(","));
        assert!(refused(&too_many).starts_with("tool-skill: userOnly must be"));
    }

    #[test]
    fn user_invocation_is_off_by_default_and_takes_a_boolean() {
        assert!(!Config::parse("{}").unwrap().user_invocation);
        assert!(Config::parse(r#"{"userInvocation":true}"#).unwrap().user_invocation);
        assert_eq!(
            Config::parse(r#"{"userInvocation":"yes"}"#),
            Err("tool-skill: userInvocation must be a boolean".to_owned())
        );
    }

    #[test]
    fn refuses_non_objects_and_bad_json() {
        assert_eq!(max("[1]"), Err("tool-skill: configuration must be a JSON object".to_owned()));
        assert!(max("{").unwrap_err().starts_with("tool-skill: configuration is not valid JSON: "));
    }
}

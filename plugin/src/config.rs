//! Plugin configuration (docs/spec.md §3.1).

use serde_json::Value;

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

/// The configuration keys, as the unknown-key error lists them.
const KNOWN_KEYS: &str = "catalogDescriptionMaxLength, userInvocation, loadedSkills, skillBodyMaxLength, catalogSource";

/// The plugin's validated configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    };

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
                other => {
                    return Err(format!(
                        "tool-skill: unknown configuration key \"{other}\" (known keys: {KNOWN_KEYS})"
                    ));
                }
            }
        }
        Ok(config)
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
            Err("tool-skill: unknown configuration key \"catalogDescriptionMaxLenght\" (known keys: catalogDescriptionMaxLength, userInvocation, loadedSkills, skillBodyMaxLength, catalogSource)".to_owned())
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

//! Plugin configuration (docs/spec.md §3.1).

use serde_json::Value;

/// The default cap on a catalog description, in characters.
pub const DEFAULT_CATALOG_DESCRIPTION_MAX_LENGTH: usize = skill_rules::DEFAULT_DESCRIPTION_MAX_LENGTH;

/// The exact error for a bad `catalogDescriptionMaxLength` (docs/spec.md §3.1).
pub const MAX_LENGTH_ERROR: &str =
    "tool-skill: catalogDescriptionMaxLength must be an integer greater than or equal to 3";

/// The configuration keys, as the unknown-key error lists them.
const KNOWN_KEYS: &str = "catalogDescriptionMaxLength, userInvocation";

/// The plugin's validated configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Cap on a normalised catalog description, in characters (≥ 3).
    pub catalog_description_max_length: usize,
    /// Opt-in (off by default): a user's `/name` in a message loads that
    /// skill into the step, and catalogs say so.
    pub user_invocation: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl Config {
    /// The configuration of `{}`.
    pub const DEFAULT: Self =
        Self { catalog_description_max_length: DEFAULT_CATALOG_DESCRIPTION_MAX_LENGTH, user_invocation: false };

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
    let Value::Number(number) = value else {
        return Err(MAX_LENGTH_ERROR.to_owned());
    };
    if let Some(unsigned) = number.as_u64() {
        return match unsigned {
            3.. => Ok(usize::try_from(unsigned).unwrap_or(usize::MAX)),
            _ => Err(MAX_LENGTH_ERROR.to_owned()),
        };
    }
    match number.as_f64() {
        Some(float) if float.is_finite() && float.fract() == 0.0 && float >= 3.0 => {
            // `as` saturates for floats beyond usize::MAX.
            Ok(float as usize)
        }
        _ => Err(MAX_LENGTH_ERROR.to_owned()),
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
            Err("tool-skill: unknown configuration key \"catalogDescriptionMaxLenght\" (known keys: catalogDescriptionMaxLength, userInvocation)".to_owned())
        );
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

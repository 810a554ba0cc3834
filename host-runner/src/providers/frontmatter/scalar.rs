//! Plain scalars resolved by the YAML 1.2 core schema, numbers as
//! JavaScript reads them.

use yaml_rust2::parser::Tag;
use yaml_rust2::scanner::TScalarStyle;

use super::Value;

/// Resolves a scalar. Quoted and block scalars are strings; plain scalars go
/// through the core schema. The only tag honoured is `!!str`, which keeps a
/// plain scalar a string; other tags are ignored.
pub(super) fn resolve_scalar(text: String, style: TScalarStyle, tag: Option<&Tag>) -> Value {
    let is_str_tag = tag.is_some_and(|t| t.handle == "tag:yaml.org,2002:" && t.suffix == "str");
    if style != TScalarStyle::Plain || is_str_tag {
        return Value::Str(text);
    }
    resolve_plain(&text).unwrap_or(Value::Str(text))
}

/// The YAML 1.2 core schema for a plain scalar; `None` means a string.
pub(super) fn resolve_plain(text: &str) -> Option<Value> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        ".nan" | ".NaN" | ".NAN" => return Some(Value::Float(f64::NAN)),
        _ => {}
    }
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return Some(Value::Float(if negative { f64::NEG_INFINITY } else { f64::INFINITY }));
    }
    // Hexadecimal and octal take no sign in the core schema.
    if let Some(digits) = text.strip_prefix("0x") {
        return integer(digits, 16, false);
    }
    if let Some(digits) = text.strip_prefix("0o") {
        return integer(digits, 8, false);
    }
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return integer(unsigned, 10, negative);
    }
    if is_core_float(unsigned) {
        return text.parse::<f64>().ok().map(Value::Float);
    }
    None
}

/// An integer in `radix`; values beyond `i64` become floats, as they do in
/// JavaScript.
fn integer(digits: &str, radix: u32, negative: bool) -> Option<Value> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = digits
        .chars()
        .filter_map(|c| c.to_digit(radix))
        .try_fold(0i128, |acc, d| acc.checked_mul(i128::from(radix))?.checked_add(i128::from(d)));
    let exact = magnitude.map(|m| if negative { -m } else { m }).and_then(|m| i64::try_from(m).ok());
    Some(match exact {
        Some(i) => Value::Int(i),
        None => {
            // Rounded once to the nearest double, as JavaScript does.
            let f = match magnitude {
                Some(m) => m as f64,
                None if radix == 10 => digits.parse::<f64>().unwrap_or(f64::INFINITY),
                None => digits
                    .chars()
                    .filter_map(|c| c.to_digit(radix))
                    .fold(0f64, |acc, d| acc * f64::from(radix) + f64::from(d)),
            };
            Value::Float(if negative { -f } else { f })
        }
    })
}

/// The unsigned part of the core schema's float:
/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
fn is_core_float(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |from: usize| bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut i = digits(0);
    let integral = i;
    if bytes.get(i) == Some(&b'.') {
        let fraction = digits(i + 1);
        if integral == 0 && fraction == 0 {
            return false;
        }
        i += 1 + fraction;
    } else if integral == 0 {
        return false;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exponent = digits(i);
        if exponent == 0 {
            return false;
        }
        i += exponent;
    }
    i == bytes.len()
}

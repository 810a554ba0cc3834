"""Plain scalars resolved by the YAML 1.2 core schema, and scalars shown
as skill-host shows them in reasons (numbers in JavaScript's form, strings
as Rust's ``{:?}`` quotes them)."""

from __future__ import annotations

import json
import math
import re
import unicodedata
from decimal import Decimal
from typing import Any

_NULLS = ("", "~", "null", "Null", "NULL")
_TRUE = ("true", "True", "TRUE")
_FALSE = ("false", "False", "FALSE")
_CORE_FLOAT = re.compile(r"(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_I64 = 1 << 63
_DIGITS = {8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}


def resolve_plain(text: str) -> tuple[str, Any] | None:
    """The core schema for a plain scalar: ``(kind, value)``, or None for a string."""
    if text in _NULLS:
        return ("null", None)
    if text in _TRUE or text in _FALSE:
        return ("bool", text in _TRUE)
    if text in (".nan", ".NaN", ".NAN"):
        return ("float", math.nan)
    negative = text[:1] == "-"
    unsigned = text[1:] if text[:1] in ("-", "+") else text
    if unsigned in (".inf", ".Inf", ".INF"):
        return ("float", -math.inf if negative else math.inf)
    # Hexadecimal and octal take no sign in the core schema.
    if text.startswith("0x"):
        return _integer(text[2:], 16, False)
    if text.startswith("0o"):
        return _integer(text[2:], 8, False)
    if unsigned and all(c in "0123456789" for c in unsigned):
        return _integer(unsigned, 10, negative)
    if _CORE_FLOAT.fullmatch(unsigned):
        return ("float", float(text))
    return None


def _integer(digits: str, radix: int, negative: bool) -> tuple[str, Any] | None:
    """An integer; beyond 64 bits a float, rounded once as JavaScript does."""
    if not digits or any(c not in _DIGITS[radix] for c in digits):
        return None
    value = -int(digits, radix) if negative else int(digits, radix)
    if -_I64 <= value < _I64:
        return ("int", value)
    return ("float", float(value))


def js_number(value: float) -> str:
    """skill-host's JavaScript-like rendering: integral values without a
    fraction, others as Rust's ``{}`` prints an f64 (never an exponent)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return format(Decimal(repr(value)), "f")


def rust_debug(text: str) -> str:
    """A string as Rust's ``{:?}`` quotes it."""
    out = ['"']
    for c in text:
        if c in _RUST_ESCAPES:
            out.append(_RUST_ESCAPES[c])
        elif _printable(c):
            out.append(c)
        else:
            out.append(f"\\u{{{ord(c):x}}}")
    out.append('"')
    return "".join(out)


_RUST_ESCAPES = {"\t": "\\t", "\r": "\\r", "\n": "\\n", "\\": "\\\\", '"': '\\"', "\0": "\\0"}


def _printable(c: str) -> bool:
    """Rust's ``is_printable``: not a control, format, private-use,
    surrogate, unassigned or separator character (a space is printable),
    nor a grapheme extender (approximated by the combining marks)."""
    if c == " ":
        return True
    return unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp", "Mn", "Me")


def scalar_text(kind: str, value: Any) -> str:
    """A scalar as a reason shows it (``{value}``, ``{key}``)."""
    if kind == "null":
        return "null"
    if kind == "bool":
        return "true" if value else "false"
    if kind == "int":
        return str(value)
    if kind == "float":
        return js_number(value)
    return rust_debug(value)


def key_text(kind: str, value: Any) -> str:
    """The property name a JavaScript object built from the mapping would use."""
    if kind == "null":
        return ""
    if kind == "str":
        return value
    if kind in ("seq", "map"):
        return json.dumps(to_json(kind, value), separators=(",", ":"), ensure_ascii=False)
    return scalar_text(kind, value)


def to_json(kind: str, value: Any) -> Any:
    """The JSON form; non-finite floats become null, as JSON.stringify makes them."""
    if kind == "float":
        return None if math.isnan(value) or math.isinf(value) else value
    if kind == "seq":
        return [to_json(item.kind, item.value) for item in value]
    if kind == "map":
        return {key_text(k.kind, k.value): to_json(v.kind, v.value) for k, v in value}
    return value

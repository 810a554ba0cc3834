"""JSON exactly as the Rust host reads and writes it (serde_json 1, default
features), so that the three hosts hand the plugin the same bytes and print
the same documents.

- Numbers keep their kind: an integer literal that fits u64 (i64 when
  negative) is an ``int``; anything else is an :class:`F64`, computed as
  serde_json computes it and printed as it prints one (``1.0``, ``1e+21``).
- Objects print with their keys sorted by code point (serde_json's map is a
  BTreeMap), compactly or pretty with a one-space indent; an
  :class:`Ordered` dict keeps its own order (the tool value, spec §7).
- The parser is strict where serde_json is (no lone surrogates, no control
  characters in strings, no numbers out of the f64 range, at most 127 nested
  arrays and objects), and its error texts are serde_json's: the host quotes
  them when the plugin returns a source that is not JSON (spec §8.5).
- A key given twice is its last value; :func:`duplicate_keys` names such keys,
  which the scenario reader refuses where the Rust host reads a struct.
"""

from __future__ import annotations

import json
import re
from typing import Any, NoReturn

__all__ = [
    "F64",
    "JsonSyntaxError",
    "Ordered",
    "as_i64",
    "as_u64",
    "duplicate_keys",
    "is_object",
    "parse",
    "pretty",
    "stringify",
]

U64_MAX = (1 << 64) - 1
I64_MIN = -(1 << 63)
I64_MAX = (1 << 63) - 1
I32_MAX = 2**31 - 1
MAX_DEPTH = 127
_POW10 = [float(f"1e{n}") for n in range(309)]


class F64:
    """A JSON number serde_json holds as an f64 (a fraction, an exponent, or too long for 64 bits)."""

    __slots__ = ("value",)

    def __init__(self, value: float) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, F64) and (self.value == other.value or (self.value != self.value and other.value != other.value))

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"F64({self.value!r})"


class JsonObject(dict):  # type: ignore[type-arg]
    """A parsed JSON object; ``duplicates`` names the keys given more than once."""

    __slots__ = ("duplicates",)

    def __init__(self) -> None:
        super().__init__()
        self.duplicates: set[str] = set()


class Ordered(dict):  # type: ignore[type-arg]
    """An object printed with its keys in insertion order, not sorted."""


class JsonSyntaxError(ValueError):
    """JSON text serde_json refuses, worded as serde_json words it."""


def duplicate_keys(value: Any) -> set[str]:
    """The keys :func:`parse` met more than once in ``value`` (empty when none)."""
    return value.duplicates if isinstance(value, JsonObject) else set()


def is_object(value: Any) -> bool:
    return isinstance(value, dict)


def as_u64(value: Any) -> int | None:
    """serde_json's ``as_u64``."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= U64_MAX:
        return value
    return None


def as_i64(value: Any) -> int | None:
    """serde_json's ``as_i64``."""
    if isinstance(value, int) and not isinstance(value, bool) and I64_MIN <= value <= I64_MAX:
        return value
    return None


def _utf8_length(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class _Parser:
    """serde_json's reader over the text's UTF-8 bytes, with errors placed as
    it places them: at the column, in bytes, just past the last byte it
    consumed (an error found on reading a byte) or just past the byte it
    peeked at (an error found on looking at one: one byte on, even when that
    byte starts a longer character). A literal's letters, a number's digits
    and a ``\\u`` escape's four bytes are consumed before the error is found."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def fail(self, message: str, position: int | None = None, extra: int = 0) -> NoReturn:
        # The error at character `position`, `extra` bytes on (a peeked byte,
        # or bytes consumed inside a character); at the end, the end.
        position = self.at if position is None else position
        before = self.text[: min(position, len(self.text))]
        line = before.count("\n") + 1
        last = before.rfind("\n")
        column = _utf8_length(before[last + 1 :])
        if position < len(self.text) and extra > 0:
            if self.text[position] == "\n":
                # A peeked line break starts the next line, as serde_json counts.
                line, column = line + 1, extra - 1
            else:
                column += extra
        raise JsonSyntaxError(f"{message} at line {line} column {column}")

    def peek_fail(self, message: str, position: int | None = None) -> NoReturn:
        """serde_json's ``peek_error``: at the byte it looked at, one byte on."""
        self.fail(message, self.at if position is None else position, 1)

    def space(self) -> None:
        text, at = self.text, self.at
        while at < len(text) and text[at] in " \n\r\t":
            at += 1
        self.at = at

    def digit(self, i: int) -> bool:
        return i < len(self.text) and "0" <= self.text[i] <= "9"

    def value(self, depth: int) -> Any:
        self.space()
        text = self.text
        if self.at >= len(text):
            self.fail("EOF while parsing a value")
        c = text[self.at]
        if c in "{[":
            if depth >= MAX_DEPTH:
                self.peek_fail("recursion limit exceeded")
            return self.object(depth + 1) if c == "{" else self.array(depth + 1)
        if c == '"':
            return self.string()
        if c == "t":
            return self.literal("true", True)
        if c == "f":
            return self.literal("false", False)
        if c == "n":
            return self.literal("null", None)
        if c == "-" or "0" <= c <= "9":
            return self.number()
        self.peek_fail("expected value")

    def literal(self, word: str, value: Any) -> Any:
        # serde_json eats the first letter, then reads the rest one byte at a time.
        text, at = self.text, self.at
        for k in range(1, len(word)):
            if at + k >= len(text):
                self.fail("EOF while parsing a value", len(text))
            if text[at + k] != word[k]:
                self.peek_fail("expected ident", at + k)
        self.at += len(word)
        return value

    def hex4(self) -> int:
        # serde_json takes the next four bytes, and only then looks at them: too
        # few is the end of the text, four that are not hex digits an error after them.
        text = self.text
        digits = text[self.at : self.at + 4]
        if re.fullmatch(r"[0-9a-fA-F]{4}", digits):
            self.at += 4
            return int(digits, 16)
        i, taken = self.at, 0
        while i < len(text) and taken + _utf8_length(text[i]) <= 4:
            taken += _utf8_length(text[i])
            i += 1
        if i >= len(text) and taken < 4:
            self.fail("EOF while parsing a string", len(text))
        self.fail("invalid escape", i, 4 - taken)

    def string(self) -> str:
        text = self.text
        self.at += 1
        out: list[str] = []
        start = self.at
        simple = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
        while True:
            if self.at >= len(text):
                self.fail("EOF while parsing a string")
            c = text[self.at]
            if c == '"':
                out.append(text[start : self.at])
                self.at += 1
                return "".join(out)
            code = ord(c)
            if code < 0x20:
                self.peek_fail("control character (\\u0000-\\u001F) found while parsing a string")
            if 0xD800 <= code <= 0xDFFF:
                self.peek_fail("invalid unicode code point")
            if c != "\\":
                self.at += 1
                continue
            out.append(text[start : self.at])
            self.at += 1  # the backslash
            if self.at >= len(text):
                self.fail("EOF while parsing a string")
            escape = text[self.at]
            if escape in simple:
                out.append(simple[escape])
                self.at += 1
            elif escape == "u":
                self.at += 1
                unit = self.hex4()
                if 0xDC00 <= unit <= 0xDFFF:
                    self.fail("lone leading surrogate in hex escape")
                if 0xD800 <= unit <= 0xDBFF:
                    # serde_json reads the byte that is not `\` (or not `u`) before it fails.
                    for expected in "\\u":
                        if self.at >= len(text):
                            self.fail("EOF while parsing a string")
                        if text[self.at] != expected:
                            self.peek_fail("unexpected end of hex escape")
                        self.at += 1
                    low = self.hex4()
                    if not 0xDC00 <= low <= 0xDFFF:
                        self.fail("lone leading surrogate in hex escape")
                    out.append(chr(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)))
                else:
                    out.append(chr(unit))
            else:
                # The escape's first byte is read, whatever character it starts.
                self.peek_fail("invalid escape")
            start = self.at

    def number(self) -> Any:
        # serde_json's parse_integer, parse_decimal and parse_exponent: where
        # each error is found; the value is then computed by `_serde_number`.
        text = self.text
        begin = self.at
        minus = "-" if text[self.at] == "-" else ""
        if minus:
            self.at += 1
        if self.at >= len(text):
            self.fail("EOF while parsing a value", len(text))
        if not self.digit(self.at):
            self.peek_fail("invalid number")  # the byte is read
        integer_start = self.at
        if text[self.at] == "0":
            self.at += 1
            if self.digit(self.at):
                self.peek_fail("invalid number")
        else:
            while self.digit(self.at):
                self.at += 1
        integer = text[integer_start : self.at]
        fraction = None
        if self.at < len(text) and text[self.at] == ".":
            self.at += 1
            fraction_start = self.at
            while self.digit(self.at):
                self.at += 1
            if self.at == fraction_start:
                self.peek_fail("invalid number" if self.at < len(text) else "EOF while parsing a value")
            fraction = text[fraction_start : self.at]
        exponent_sign = None
        exponent_digits = None
        if self.at < len(text) and text[self.at] in "eE":
            self.at += 1
            exponent_sign = text[self.at] if self.at < len(text) and text[self.at] in "+-" else ""
            if exponent_sign:
                self.at += 1
            if self.at >= len(text):
                self.fail("EOF while parsing a value", len(text))
            if not self.digit(self.at):
                self.peek_fail("invalid number")  # the byte is read
            exponent_start = self.at
            # Past i32, serde_json stops at the digit that overflows: out of
            # range there when the exponent would grow a significand that is not zero.
            value = 0
            while self.digit(self.at):
                digit = ord(text[self.at]) - 48
                if self.at > exponent_start and _overflows(value, digit, I32_MAX):
                    if exponent_sign != "-" and re.search("[1-9]", text[begin:exponent_start]):
                        self.fail("number out of range", self.at + 1)
                    while self.digit(self.at):
                        self.at += 1
                    break
                value = value * 10 + digit
                self.at += 1
            exponent_digits = text[exponent_start : self.at]
        parsed = _serde_number((minus, integer, fraction, exponent_sign, exponent_digits))
        if parsed is None:
            self.fail("number out of range")
        return parsed

    # serde_json's SeqAccess and MapAccess: each says which end of the text it met.
    def array(self, depth: int) -> list[Any]:
        text = self.text
        self.at += 1
        items: list[Any] = []
        self.space()
        if self.at >= len(text):
            self.fail("EOF while parsing a list")
        if text[self.at] == "]":
            self.at += 1
            return items
        while True:
            items.append(self.value(depth))
            self.space()
            c = text[self.at] if self.at < len(text) else None
            if c == ",":
                self.at += 1
                self.space()
                if self.at < len(text) and text[self.at] == "]":
                    self.peek_fail("trailing comma")
                continue
            if c == "]":
                self.at += 1
                return items
            self.peek_fail("EOF while parsing a list" if c is None else "expected `,` or `]`")

    def object(self, depth: int) -> JsonObject:
        text = self.text
        self.at += 1
        fields = JsonObject()
        self.space()
        if self.at < len(text) and text[self.at] == "}":
            self.at += 1
            return fields
        first = True
        while True:
            self.space()
            c = text[self.at] if self.at < len(text) else None
            if c is None:
                self.fail("EOF while parsing an object" if first else "EOF while parsing a value")
            if c != '"':
                self.peek_fail("key must be a string")
            first = False
            key = self.string()
            self.space()
            c = text[self.at] if self.at < len(text) else None
            if c != ":":
                self.peek_fail("EOF while parsing an object" if c is None else "expected `:`")
            self.at += 1
            if key in fields:
                fields.duplicates.add(key)
                del fields[key]  # the last value, in the last position
            fields[key] = self.value(depth)
            self.space()
            c = text[self.at] if self.at < len(text) else None
            if c == ",":
                self.at += 1
                self.space()
                if self.at < len(text) and text[self.at] == "}":
                    self.peek_fail("trailing comma")
                continue
            if c == "}":
                self.at += 1
                return fields
            self.peek_fail("EOF while parsing an object" if c is None else "expected `,` or `}`")


def _overflows(a: int, digit: int, maximum: int) -> bool:
    return a >= maximum // 10 and (a > maximum // 10 or digit > maximum % 10)


def _f64_from_parts(negative: bool, significand: int, exponent: int) -> F64 | None:
    f = float(significand)
    while True:
        if abs(exponent) < len(_POW10):
            pow10 = _POW10[abs(exponent)]
            if exponent >= 0:
                f *= pow10
                if f == float("inf"):
                    return None
            else:
                f /= pow10
            break
        if f == 0:
            break
        if exponent >= 0:
            return None
        f /= 1e308
        exponent += 308
    return F64(-f if negative else f)


def _serde_number(groups: tuple[str | None, ...]) -> Any:
    minus, integer, fraction, exponent_sign, exponent_digits = groups
    negative = minus == "-"
    significand = 0
    exponent = 0
    long = False
    assert integer is not None
    for char in integer:
        digit = ord(char) - 48
        if long or _overflows(significand, digit, U64_MAX):
            long = True
            exponent += 1
        else:
            significand = significand * 10 + digit
    if fraction is None and exponent_digits is None:
        if long:
            return _f64_from_parts(negative, significand, exponent)
        if not negative:
            return significand
        value = -significand
        if value == 0 or value < I64_MIN:
            return F64(-float(significand))
        return value
    if fraction is not None:
        for char in fraction:
            digit = ord(char) - 48
            if _overflows(significand, digit, U64_MAX):
                break
            significand = significand * 10 + digit
            exponent -= 1
    if exponent_digits is not None:
        value = 0
        for char in exponent_digits:
            digit = ord(char) - 48
            if _overflows(value, digit, I32_MAX):
                if significand != 0 and exponent_sign != "-":
                    return None
                return F64(-0.0 if negative else 0.0)
            value = value * 10 + digit
        combined = exponent - value if exponent_sign == "-" else exponent + value
        exponent = max(-(2**31), min(I32_MAX, combined))
    return _f64_from_parts(negative, significand, exponent)


def parse(text: str) -> Any:
    """Parses JSON text as serde_json does; raises :class:`JsonSyntaxError`."""
    parser = _Parser(text)
    result = parser.value(0)
    parser.space()
    if parser.at < len(text):
        parser.peek_fail("trailing characters")
    return result


def format_f64(x: float) -> str:
    """An f64 as serde_json writes it: shortest digits, ``.0`` on integral values, ``e+N``/``e-N`` outside 1e-5..1e16."""
    if x == 0:
        return "-0.0" if str(x).startswith("-") else "0.0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp_text = f"{abs(x)!r}".partition("e")
    exp = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0")
    point = len(whole) + exp  # the decimal point's place, counted in digits of whole+frac
    point -= len(whole + frac) - len((whole + frac).lstrip("0"))
    digits = digits.rstrip("0") or "0"
    length = len(digits)
    kk = point
    if length <= kk <= 16:
        body = digits + "0" * (kk - length) + ".0"
    elif 0 < kk <= 16:
        body = f"{digits[:kk]}.{digits[kk:]}"
    elif -5 < kk <= 0:
        body = f"0.{'0' * -kk}{digits}"
    else:
        e = kk - 1
        exponent = f"e{e}" if e < 0 else f"e+{e}"
        body = digits + exponent if length == 1 else f"{digits[0]}.{digits[1:]}{exponent}"
    return sign + body


def _string(text: str) -> str:
    # serde_json escapes only `"`, `\` and the C0 controls; JSON.stringify in
    # JavaScript escapes lone surrogates too, which a Python str from UTF-8 never holds.
    return json.dumps(text, ensure_ascii=False)


def _keys(value: dict[str, Any]) -> list[str]:
    keys = list(value.keys())
    return keys if isinstance(value, Ordered) else sorted(keys)


def stringify(value: Any) -> str:
    """serde_json's ``Value::to_string()``: compact, keys sorted (but see :class:`Ordered`)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, F64):
        return format_f64(value.value)
    if isinstance(value, float):
        return format_f64(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(stringify(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_string(key)}:{stringify(value[key])}" for key in _keys(value)) + "}"
    raise TypeError(f"not a JSON value: {value!r}")


def pretty(value: Any, indent: str = "") -> str:
    """serde_json's pretty printer with a one-space indent, as ``skill-host`` prints documents."""
    inner = indent + " "
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + pretty(item, inner) for item in value) + "\n" + indent + "]"
    if isinstance(value, dict):
        keys = _keys(value)
        if not keys:
            return "{}"
        lines = [f"{inner}{_string(key)}: {pretty(value[key], inner)}" for key in keys]
        return "{\n" + ",\n".join(lines) + "\n" + indent + "}"
    return stringify(value)

"""Comparing trace values (spec §7.2) and saying where they differ: as JSON
values compare in serde_json (``1`` is neither ``true`` nor ``1.0``; keys in
any order), the first differing place named by its path, a long text shown
around its first differing character."""

from __future__ import annotations

from typing import Any

from .jsonvalue import stringify

#: The most characters of a value a mismatch shows.
CLIP = 300


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values."""
    return stringify(_plain(a)) == stringify(_plain(b))


def _plain(value: Any) -> Any:
    """``value`` with every object a plain dict, so its keys print sorted."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def clip(text: str, limit: int = CLIP) -> str:
    """``text``, cut after ``limit`` characters."""
    return text if len(text) <= limit else text[:limit] + "…"


def difference(label: str, expected: Any, found: Any) -> str:
    """Where two values first differ, with both values there."""
    path, wanted, got = _first_difference(expected, found, label)
    if isinstance(wanted, str) and isinstance(got, str) and max(len(wanted), len(got)) > CLIP:
        at = next((i for i, (a, b) in enumerate(zip(wanted, got)) if a != b), min(len(wanted), len(got)))
        start = max(0, at - 40)

        def excerpt(text: str) -> str:
            return ("…" if start else "") + clip(stringify(text[start : at + 80]))

        return f"{path} differs at character {at}: {excerpt(got)}, where the trace has {excerpt(wanted)}"
    return f"{path} is {clip(stringify(got))}, where the trace has {clip(stringify(wanted))}"


def _first_difference(expected: Any, found: Any, path: str) -> tuple[str, Any, Any]:
    """The first place (a JSON path) where two values differ, and the values there."""
    if isinstance(expected, dict) and isinstance(found, dict):
        for key in sorted(set(expected) | set(found)):
            if key not in expected or key not in found or not same(expected[key], found[key]):
                if key in expected and key in found:
                    return _first_difference(expected[key], found[key], f"{path}.{key}")
                return f"{path}.{key}", expected.get(key, "<missing>"), found.get(key, "<missing>")
    if isinstance(expected, list) and isinstance(found, list) and len(expected) == len(found):
        for i, (a, b) in enumerate(zip(expected, found)):
            if not same(a, b):
                return _first_difference(a, b, f"{path}[{i}]")
    return path, expected, found


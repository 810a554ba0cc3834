"""The records the plugin writes: the source of every message a pre-step may
add, read as the Rust host reads it (``skill_rules::Record`` in
rules/src/record.rs, spec §8.5). rules/records.json holds the accepted and
refused sources, and tests/test_records.py holds this reader to it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .names import MAX_RELOAD_NAMES, is_digest, is_skill_name

#: The source of a catalog in the seed's form (spec §3.1).
CATALOG_SOURCE: dict[str, str] = {"kind": "plugin", "plugin": "dsh-tool-skill"}


@dataclass(frozen=True)
class Read:
    """What :func:`read_record` found: ``record`` (``Record::name``) with
    ``name`` for an invocation or a changed or gone notice; or ``refused``,
    ``not-a-notice`` or ``foreign``."""

    record: str | None = None
    name: str | None = None
    refused: str | None = None


_FOREIGN = Read(refused="foreign")


def _distinct_names(names: Any, limit: float) -> bool:
    return (
        isinstance(names, list)
        and len(names) <= limit
        and all(is_skill_name(name) for name in names)
        and len(set(names)) == len(names)
    )


def read_record(source: Any) -> Read:
    """Reads a parsed source: keys in any order, exactly the fields of its form."""
    if not isinstance(source, dict):
        return _FOREIGN
    count = len(source)

    def text(key: str) -> str | None:
        value = source.get(key)
        return value if isinstance(value, str) else None

    kind = text("kind")
    if kind == "plugin":
        if text("plugin") != CATALOG_SOURCE["plugin"]:
            return _FOREIGN
        if count == 2:
            return Read(record="catalog")
        if count == 4 and text("form") == "catalog-update" and _distinct_names(source.get("removed"), float("inf")):
            return Read(record="catalog-update")
        return _FOREIGN
    if kind == "skill-catalog":
        return Read(record="skill-catalog") if _is_skill_catalog(source, count) else _FOREIGN
    if kind == "skill-invocation":
        form = text("form")
        if form == "not-loaded" and count == 2:
            return Read(record="invocation-note")
        if form == "instructions" and count == 3 and is_skill_name(text("name")):
            return Read(record="invocation", name=source["name"])
        return _FOREIGN
    if kind == "skill-notice":
        return _skill_notice(source, count, text("form"), text("name")) or Read(refused="not-a-notice")
    return _FOREIGN


def _is_skill_catalog(source: dict[str, Any], count: int) -> bool:
    update = "update" in source
    if update and source["update"] is not True:
        return False
    coverage = "coverage" in source
    if coverage and not isinstance(source["coverage"], str):
        return False
    entries = source.get("entries")
    return (
        count == 3 + int(update) + int(coverage)
        and source.get("form") == "catalog"
        and isinstance(entries, list)
        and all(
            isinstance(entry, dict)
            and len(entry) == 2
            and is_skill_name(entry.get("name"))
            and isinstance(entry.get("description"), str)
            for entry in entries
        )
    )


def _skill_notice(source: dict[str, Any], count: int, form: str | None, name: str | None) -> Read | None:
    def named(record: str) -> Read | None:
        return Read(record=record, name=name) if is_skill_name(name) else None

    if form == "changed":
        has_digest = "bodyDigest" in source
        digest = not has_digest or is_digest(source["bodyDigest"])
        provider = source.get("provider")
        valid_provider = isinstance(provider, str) and provider != ""
        if digest and valid_provider and count == 4 + int(has_digest):
            return named("changed-notice")
        return None
    if form == "gone":
        return named("gone-notice") if count == 3 else None
    if form == "reload":
        names = source.get("names")
        valid = count == 3 and isinstance(names, list) and len(names) > 0 and _distinct_names(names, MAX_RELOAD_NAMES)
        return Read(record="reload-notice") if valid else None
    return None

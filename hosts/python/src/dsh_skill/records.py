"""The records the plugin writes: the source of every message a pre-step may
add, read as the Rust host reads it (``skill_rules::Record`` in
rules/src/record.rs, spec §8.5), and written as the Rust host writes the
typed records a 0.3.0 plugin adds (``Record::to_json``). rules/records.json
holds the accepted and refused sources; tests/test_records.py holds this
reader to it, tests/test_typed_records.py the writer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Union

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


# The writer -------------------------------------------------------------
#
# A 0.3.0 plugin hands its added messages over as typed records; the host
# writes each as its JSON source (``Record::to_json``, the one writer of
# sources) and then reads it back through :func:`read_record`, exactly as a
# source a 0.2.0 plugin wrote itself. The types below are ``skill_rules::Record``'s.


@dataclass(frozen=True)
class Catalog:
    """A complete catalog in the seed's form: :data:`CATALOG_SOURCE`."""


@dataclass(frozen=True)
class CatalogEntry:
    """One line of a :class:`SkillCatalog`: ``{"name":…,"description":…}``."""

    name: str
    description: str


@dataclass(frozen=True)
class SkillCatalog:
    """A catalog in the ``skill-catalog`` form, with its entries."""

    update: bool = False
    entries: tuple[CatalogEntry, ...] = ()
    coverage: str | None = None


@dataclass(frozen=True)
class CatalogUpdate:
    """An update of the catalog before it, with the names that left it."""

    removed: tuple[str, ...]


@dataclass(frozen=True)
class Invocation:
    """A user-invoked skill's instructions."""

    name: str


@dataclass(frozen=True)
class InvocationNote:
    """The note naming the user-invoked skills not loaded."""


@dataclass(frozen=True)
class ChangedNotice:
    """A skill the model loaded has changed."""

    name: str
    provider: str
    body_digest: str | None = None


@dataclass(frozen=True)
class GoneNotice:
    """A skill the model loaded is gone, or no longer the model's to invoke."""

    name: str


@dataclass(frozen=True)
class ReloadNotice:
    """Skills whose loaded instructions compaction hid."""

    names: tuple[str, ...]


Record = Union[
    Catalog, SkillCatalog, CatalogUpdate, Invocation, InvocationNote, ChangedNotice, GoneNotice, ReloadNotice
]

#: The source of the invocation note (``INVOCATION_NOTE_SOURCE``).
_INVOCATION_NOTE = '{"kind":"skill-invocation","form":"not-loaded"}'


def _string(text: str) -> str:
    # serde_json's escaping: `"`, `\`, \b \f \n \r \t, other C0 controls as
    # \u00XX in lower-case hex, everything else (U+007F included) as is.
    return json.dumps(text, ensure_ascii=False)


def _strings(names: tuple[str, ...]) -> str:
    return "[" + ",".join(_string(name) for name in names) + "]"


def to_json(record: Record) -> str:
    """The source as the plugin writes it (``Record::to_json``): compact, keys
    in the order the plugin has always written them (the reference's for
    catalogs and invocations, sorted for notices)."""
    if isinstance(record, Catalog):
        return '{"kind":"plugin","plugin":"dsh-tool-skill"}'
    if isinstance(record, SkillCatalog):
        entries = ",".join(
            '{"name":' + _string(entry.name) + ',"description":' + _string(entry.description) + "}"
            for entry in record.entries
        )
        update = '"update":true,' if record.update else ""
        coverage = "" if record.coverage is None else ',"coverage":' + _string(record.coverage)
        return '{"kind":"skill-catalog","form":"catalog",' + update + '"entries":[' + entries + "]" + coverage + "}"
    if isinstance(record, CatalogUpdate):
        return '{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":' + _strings(record.removed) + "}"
    if isinstance(record, Invocation):
        return '{"kind":"skill-invocation","name":' + _string(record.name) + ',"form":"instructions"}'
    if isinstance(record, InvocationNote):
        return _INVOCATION_NOTE
    if isinstance(record, ChangedNotice):
        digest = "" if record.body_digest is None else '"bodyDigest":' + _string(record.body_digest) + ","
        return (
            "{" + digest + '"form":"changed","kind":"skill-notice","name":' + _string(record.name)
            + ',"provider":' + _string(record.provider) + "}"
        )
    if isinstance(record, GoneNotice):
        return '{"form":"gone","kind":"skill-notice","name":' + _string(record.name) + "}"
    if isinstance(record, ReloadNotice):
        return '{"form":"reload","kind":"skill-notice","names":' + _strings(record.names) + "}"
    raise TypeError(f"not a record: {record!r}")

"""The in-memory provider (spec §4.3): skills given as JSON objects, an
optional failure, an optional explicit incomplete listing, per-skill
overrides of what a load finds, and a skill's files (its ``"files"``
object, contract 0.4.0). Its error texts are the Rust host's, so a tool
error reads the same in every host."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .jsonvalue import F64, as_i64, format_f64, stringify
from .names import is_skill_file_path
from .registry import (
    MISSING,
    UNAVAILABLE,
    Candidate,
    Definition,
    FileAnswer,
    Invocation,
    Listing,
    ProviderError,
    ResourceBase,
    SkillFile,
    body_digest,
    file_answer,
)

#: The rank of a skill that names none.
DEFAULT_RANK = 100
_POLICY_FIELDS = ("modelInvocable", "userInvocable")
_POLICY_TYPE = "struct InvocationPolicy"
_RESOURCE_BASE_FIELDS = {"directory": "path", "url": "url", "opaque": "description"}


def _unexpected(value: Any) -> str:
    """How serde names a JSON value it did not expect (its ``Unexpected``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean `{'true' if value else 'false'}`"
    if isinstance(value, int):
        return f"integer `{value}`"
    if isinstance(value, F64):
        return f"floating point `{format_f64(value.value)}`"
    if isinstance(value, str):
        return f"string {stringify(value)}"
    return "sequence" if isinstance(value, list) else "map"


def invocation_policy(value: Any) -> Invocation:
    """An invocation policy as serde reads ``InvocationPolicy`` from JSON (a
    map, or a sequence of two booleans); raises ValueError with serde's message."""

    def flag(item: Any) -> bool:
        if not isinstance(item, bool):
            raise ValueError(f"invalid type: {_unexpected(item)}, expected a boolean")
        return item

    if isinstance(value, list):
        flags = [flag(item) for item in value[:2]]
        if len(flags) < 2:
            raise ValueError(f"invalid length {len(flags)}, expected {_POLICY_TYPE} with 2 elements")
        if len(value) > 2:
            raise ValueError(f"invalid length {len(value)}, expected fewer elements in array")
        return Invocation(flags[0], flags[1])
    if not isinstance(value, dict):
        raise ValueError(f"invalid type: {_unexpected(value)}, expected {_POLICY_TYPE}")
    policy = {key: flag(value[key]) for key in _POLICY_FIELDS if key in value}
    for key in _POLICY_FIELDS:
        if key not in policy:
            raise ValueError(f"missing field `{key}`")
    return Invocation(policy["modelInvocable"], policy["userInvocable"])


def resource_base(value: Any) -> ResourceBase | None:
    """A ``resourceBase`` as serde reads the Rust host's internally tagged
    enum (``{"kind", <field>}`` or ``[kind, value]``); None for none; raises
    ValueError with the host's "invalid output" text."""
    if value is None:
        return None

    def field(kind: Any) -> str | None:
        return _RESOURCE_BASE_FIELDS.get(kind) if isinstance(kind, str) else None

    if isinstance(value, list) and len(value) == 2 and field(value[0]) is not None and isinstance(value[1], str):
        return ResourceBase(value[0], value[1])
    kind = value.get("kind") if isinstance(value, dict) else None
    named = field(kind)
    if (
        named is not None
        and isinstance(value.get(named), str)
        and all(key in ("kind", named) for key in value)
    ):
        return ResourceBase(kind, value[named])
    shown = "missing" if not isinstance(value, dict) or "kind" not in value else stringify(value["kind"])
    raise ValueError(
        'tool "skill" returned invalid output: resourceBase must be {"kind":"directory","path"}, '
        '{"kind":"url","url"} or {"kind":"opaque","description"} (kind: ' + shown + ")"
    )


@dataclass(frozen=True)
class MemoryFile:
    """One file of a skill in memory: its text, or only its size (a binary
    file, ``binary``; one over the cap of a read, ``too-large``)."""

    size: int
    text: str | None = None
    kind: str = "text"

    def answer(self) -> FileAnswer:
        if self.text is not None:
            return file_answer(self.text.encode("utf-8", "surrogatepass"))
        return FileAnswer(self.kind, size=self.size)


_FILE_FORMS = {"binary": "binary", "tooLarge": "too-large"}


def skill_files(fields: dict[str, Any], provider: str) -> dict[str, MemoryFile] | None:
    """A skill's ``"files"`` (None when it has none): each key a path inside
    the skill, each value a text, ``{"binary": n}`` or ``{"tooLarge": n}``
    (``n`` a whole number of bytes). Raises ValueError naming the first key
    or value refused, in skill-host's words."""
    files = fields.get("files")
    if files is None:
        return None
    subject = f'skill {stringify(fields.get("name"))} of provider "{provider}"'
    if not isinstance(files, dict):
        raise ValueError(f"{subject}: `files` must be an object")
    found: dict[str, MemoryFile] = {}
    for path, value in files.items():
        if not is_skill_file_path(path):
            raise ValueError(f"{subject}: file path {stringify(path)} is not a path inside a skill")
        if isinstance(value, str):
            found[path] = MemoryFile(len(value.encode("utf-8", "surrogatepass")), value)
            continue
        form = next(iter(value), None) if isinstance(value, dict) and len(value) == 1 else None
        size = value[form] if form in _FILE_FORMS else None
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size < 2**64:  # serde's as_u64
            raise ValueError(
                f'{subject}: file {stringify(path)} must be a string, {{"binary": size}} or {{"tooLarge": size}}'
            )
        found[path] = MemoryFile(size, None, _FILE_FORMS[form])
    return found


@dataclass
class MemorySkill:
    """A skill as given: its fields, and what a load finds (``...``: as
    listed; None: nothing; a dict: the listed fields with these replaced)."""

    fields: dict[str, Any]
    loaded: Any = ...


class MemoryProvider:
    """A provider serving skills held in memory (a scenario's providers)."""

    def __init__(self, name: str, skills: list[MemorySkill], complete: bool = True, fail: str | None = None) -> None:
        self.name = name
        self.complete = complete
        self.fail = fail
        self.skills = skills
        for skill in skills:
            self._candidate(skill.fields)
            skill_files(skill.fields, name)

    @classmethod
    def of(cls, name: str, skills: list[dict[str, Any]], complete: bool = True, fail: str | None = None) -> MemoryProvider:
        """A provider of plain skill dicts (``name``, ``description``, ``content``, …; spec §4.3)."""
        return cls(name, [MemorySkill(dict(s)) for s in skills], complete, fail)

    def _candidate(self, fields: dict[str, Any]) -> Candidate:
        def subject() -> str:
            return f'skill {stringify(fields.get("name"))} of provider "{self.name}"'

        def text(key: str, fallback: str | None = None) -> str:
            value = fields.get(key)
            if isinstance(value, str):
                return value
            if value is None:
                if fallback is not None:
                    return fallback
                raise ValueError(f"{subject()}: `{key}` is required")
            raise ValueError(f"{subject()}: `{key}` must be a string")

        invocation = Invocation()
        if fields.get("invocation") is not None:
            try:
                invocation = invocation_policy(fields["invocation"])
            except ValueError as error:
                raise ValueError(f"{subject()}: `invocation`: {error}") from None
        rank = DEFAULT_RANK
        if fields.get("rank") is not None:
            checked = as_i64(fields["rank"])
            if checked is None:
                raise ValueError(f"{subject()}: `rank` must be an integer")
            rank = checked
        when_to_use = None
        if fields.get("whenToUse") is not None:
            if not isinstance(fields["whenToUse"], str):
                raise ValueError(f"{subject()}: `whenToUse` must be a string")
            when_to_use = fields["whenToUse"]
        text("content")
        content = fields.get("content")
        return Candidate(
            name=text("name"),
            description=text("description"),
            provider=text("provider", self.name),
            source=text("source", self.name),
            invocation=invocation,
            when_to_use=when_to_use,
            rank=rank,
            body_digest=body_digest(content) if isinstance(content, str) else None,
        )

    def list(self, cwd: str | None) -> Listing:
        if self.fail is not None:
            raise ProviderError(self.fail)
        candidates = []
        for skill in self.skills:
            try:
                candidates.append(self._candidate(skill.fields))
            except ValueError as error:
                raise ProviderError(str(error)) from None
        return Listing(candidates, self.complete)

    def _files(self, candidate: Candidate) -> dict[str, MemoryFile] | None:
        if self.fail is not None:
            raise ProviderError(self.fail)
        skill = next((s for s in self.skills if s.fields.get("name") == candidate.name), None)
        try:
            return None if skill is None else skill_files(skill.fields, self.name)
        except ValueError as error:
            raise ProviderError(str(error)) from None

    def list_files(self, cwd: str | None, candidate: Candidate) -> list[SkillFile] | None:
        """The skill's ``"files"`` with their sizes; None when it has none."""
        files = self._files(candidate)
        return None if files is None else [SkillFile(path, file.size) for path, file in files.items()]

    def read_file(self, cwd: str | None, candidate: Candidate, path: str) -> FileAnswer:
        """The file ``path`` of the skill's ``"files"``: ``unavailable`` when it has none."""
        files = self._files(candidate)
        if files is None:
            return UNAVAILABLE
        file = files.get(path)
        return MISSING if file is None else file.answer()

    def load(self, cwd: str | None, candidate: Candidate) -> Definition | None:
        skill = next((s for s in self.skills if s.fields.get("name") == candidate.name), None)
        if skill is None or skill.loaded is None:
            return None
        fields = dict(skill.fields)
        if isinstance(skill.loaded, dict):
            fields.update(skill.loaded)
        try:
            summary = self._candidate(fields)
            summary.resource_base = resource_base(fields.get("resourceBase"))
        except ValueError as error:
            raise ProviderError(str(error)) from None
        content = fields.get("content")
        return Definition(summary, content if isinstance(content, str) else "")

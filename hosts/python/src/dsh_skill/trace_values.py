"""Values as a trace writes them (spec §7.2), and back.

A trace writes values as serde writes skill-host's bindings of the current
contract: records as objects with ``snake_case`` fields, variants and enums
as ``{"Case": payload}`` or ``"Case"`` (``UpperCamelCase``), options as
``null`` or the value, results as ``{"Ok": …}`` or ``{"Err": …}``. wasmtime-py
holds the same values in its dynamic shapes (see :mod:`~dsh_skill.imports`):
a record's attributes carry the WIT's ``kebab-case`` names, and a variant is
a ``Variant(tag, payload)`` only when its cases cannot be told apart by
Python type, else its payload alone.

What the plugin returned is read into the trace's form by its type
(:func:`to_trace`), so every export of every contract version is covered.
What the host passes in (a pre-step's context and proposed messages, the
answers to imports) is always of the current contract, whatever the
component's, and is built here by hand, as :mod:`~dsh_skill.imports` builds
it; the 0.2.0 conversions of :mod:`~dsh_skill.versions` then apply as they
do to the host's own answers.
"""

from __future__ import annotations

from typing import Any

from wasmtime.component import Record, Variant
from wasmtime.component import _types as t

from .imports import record
from .jsonvalue import parse, stringify


class TraceFormatError(ValueError):
    """A trace value that is not of the shape its place in the trace needs."""


# --- names --------------------------------------------------------------


def case_name(wit: str) -> str:
    """A WIT case name as serde writes the Rust variant: ``skill-catalog`` → ``SkillCatalog``."""
    return "".join(part[:1].upper() + part[1:] for part in wit.split("-"))


def field_name(wit: str) -> str:
    """A WIT field name as serde writes the Rust field: ``body-digest`` → ``body_digest``."""
    return wit.replace("-", "_")


# --- what the plugin returned, by its type -------------------------------


def _classes(ty: Any) -> tuple[type, ...]:
    found: set[type] = set()
    ty.add_classes(found)
    return tuple(found)


def _cases(ty: Any) -> list[tuple[str, Any]]:
    """A variant-like type's cases, as wasmtime-py lowers them."""
    if isinstance(ty, t.OptionType):
        return [("none", None), ("some", ty.payload)]
    if isinstance(ty, t.ResultType):
        return [("ok", ty.ok), ("err", ty.err)]
    return list(ty.cases)


def _tagged(cases: list[tuple[str, Any]]) -> bool:
    """Whether wasmtime-py holds these cases as ``Variant``s: when two cannot
    be told apart by Python type (a case without payload counts as any type)."""
    seen: set[type] = set()
    for _, ty in cases:
        classes = {object} if ty is None else set(_classes(ty))
        if classes & seen:
            return True
        seen |= classes
    return False


def _case_of(ty: Any, value: Any) -> tuple[str, Any, Any]:
    """(case name, case type, payload) of a variant-like value."""
    cases = _cases(ty)
    if _tagged(cases):
        for name, case_ty in cases:
            if name == value.tag:
                return name, case_ty, value.payload
    else:
        for name, case_ty in cases:
            if case_ty is None and value is None:
                return name, None, None
            if case_ty is not None and isinstance(value, _classes(case_ty)):
                return name, case_ty, value
    raise TraceFormatError(f"{value!r} is no case of the variant")


def to_trace(ty: Any, value: Any) -> Any:
    """A value of WIT type ``ty`` (a wasmtime-py type) in the trace's form."""
    if isinstance(ty, t.RecordType):
        return {field_name(name): to_trace(field_ty, getattr(value, name)) for name, field_ty in ty.fields}
    if isinstance(ty, t.ListType):
        return [to_trace(ty.element, item) for item in value]
    if isinstance(ty, t.EnumType):
        return case_name(value)
    if isinstance(ty, (t.OptionType, t.ResultType, t.VariantType)):
        name, case_ty, payload = _case_of(ty, value)
        inner = None if case_ty is None else to_trace(case_ty, payload)
        if isinstance(ty, t.OptionType):
            return inner
        if isinstance(ty, t.ResultType):
            return {case_name(name): inner}
        return case_name(name) if case_ty is None else {case_name(name): inner}
    if isinstance(ty, (t.TupleType, t.FlagsType)):
        raise TraceFormatError("the contract has no tuples or flags")
    return value


# --- what the host passes in, in the current contract's terms ------------


def _one_case(value: Any, where: str) -> tuple[str, Any]:
    """``{"Case": payload}`` or ``"Case"`` as (case, payload)."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, dict) and len(value) == 1:
        (case, payload), = value.items()
        return case, payload
    raise TraceFormatError(f"{where}: {stringify(value)} is not a variant")


def _fields(value: Any, where: str, names: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TraceFormatError(f"{where}: {stringify(value)} is not an object")
    missing = [name for name in names if name not in value]
    if missing:
        raise TraceFormatError(f"{where}: no `{missing[0]}` in {stringify(value)}")
    return value


def _record(value: Any, where: str, names: tuple[str, ...]) -> Record:
    """A record of plain fields (strings, numbers, options of them)."""
    fields = _fields(value, where, names)
    return record(**{name: fields[name] for name in names})


def content_block(block: Any) -> Variant:
    """A ``content-block``: ``{"Text": t}`` or ``{"Other": json}`` (tagged: two string cases)."""
    case, payload = _one_case(block, "a content block")
    if case not in ("Text", "Other") or not isinstance(payload, str):
        raise TraceFormatError(f"a content block: {stringify(block)} is neither Text nor Other")
    return Variant(case.lower(), payload)


def message(value: Any) -> Record:
    """A ``message``: ``{"source": JSON text, "content": [blocks]}``."""
    fields = _fields(value, "a message", ("source", "content"))
    return record(source=fields["source"], content=[content_block(block) for block in fields["content"]])


def message_to_trace(value: Record) -> dict[str, Any]:
    """A ``message`` record (the host's, whatever the version) in the trace's form."""
    blocks = [{case_name(block.tag): block.payload} for block in value.content]
    return {"source": value.source, "content": blocks}


def message_data(value: Any) -> dict[str, Any]:
    """A proposed ``message`` as the host's copy of it, in the log's shape
    without an id: the blocks a host stores (spec §9.1, ``get-user-message``)
    and the role of every message a host proposes, ``user``."""
    fields = _fields(value, "a proposed message", ("source", "content"))
    content = []
    for block in fields["content"]:
        case, payload = _one_case(block, "a content block")
        content.append({"type": "text", "text": payload} if case == "Text" else parse(payload))
    return {"content": content, "source": parse(fields["source"]), "role": "user"}


def step_context(value: Any) -> Record:
    """A pre-step's ``step-context``; the enum's case is its WIT name and the
    proposal an ``int`` (``enter(n)``) or None (``reject``), as wasmtime-py lowers them."""
    names = ("session", "registry_revision", "history_version", "tool_view", "aborted", "proposal")
    fields = _fields(value, "the step context", names)
    view, _ = _one_case(fields["tool_view"], "the tool view")
    case, count = _one_case(fields["proposal"], "the proposal")
    if case not in ("Enter", "Reject"):
        raise TraceFormatError(f"the proposal: {stringify(fields['proposal'])} is neither Enter nor Reject")
    return record(
        session=fields["session"],
        registry_revision=fields["registry_revision"],
        history_version=fields["history_version"],
        tool_view=view.lower(),
        aborted=fields["aborted"],
        proposal=count if case == "Enter" else None,
    )


_SUMMARY = ("name", "description", "when_to_use", "invocation", "provider", "source", "path", "body_digest")
_DEFINITION = ("name", "description", "invocation", "provider", "resource_base", "path", "content", "body_digest")


def _summary(value: Any) -> Record:
    fields = _fields(value, "a skill summary", _SUMMARY)
    summary = _record(fields, "a skill summary", _SUMMARY)
    summary.invocation = _record(fields["invocation"], "an invocation policy", ("model_invocable", "user_invocable"))
    return summary


def _definition(value: Any) -> Record:
    fields = _fields(value, "a skill definition", _DEFINITION)
    definition = _record(fields, "a skill definition", _DEFINITION)
    definition.invocation = _record(fields["invocation"], "an invocation policy", ("model_invocable", "user_invocable"))
    base = fields["resource_base"]
    if base is not None:
        case, path = _one_case(base, "a resource base")
        setattr(definition, "resource-base", Variant(case.lower(), path))
    return definition


def _registry_error(value: Any) -> str | None:
    """``registry-error``: None (``aborted``) or the text (``failed``)."""
    case, text = _one_case(value, "a registry error")
    if case == "Aborted":
        return None
    if case == "Failed" and isinstance(text, str):
        return text
    raise TraceFormatError(f"a registry error: {stringify(value)} is neither Aborted nor Failed")


def _result(value: Any, where: str) -> tuple[bool, Any]:
    """``{"Ok": v}`` or ``{"Err": e}`` as (ok, payload)."""
    case, payload = _one_case(value, where)
    if case not in ("Ok", "Err"):
        raise TraceFormatError(f"{where}: {stringify(value)} is neither Ok nor Err")
    return case == "Ok", payload


def snapshot_answer(value: Any) -> Variant:
    """``result<snapshot-answer, registry-error>`` (tagged; its cases are not)."""
    ok, payload = _result(value, "a snapshot answer")
    if not ok:
        return Variant("err", _registry_error(payload))
    case, changed = _one_case(payload, "a snapshot answer")
    if case == "Unchanged":
        return Variant("ok", None)
    fields = _fields(changed, "a changed snapshot", ("complete", "revision", "skills"))
    skills = [_summary(skill) for skill in fields["skills"]]
    return Variant("ok", record(complete=fields["complete"], revision=fields["revision"], skills=skills))


def list_skills_answer(value: Any) -> Any:
    """``result<list<skill-summary>, registry-error>``: untagged, a list, None or a str."""
    ok, payload = _result(value, "a listing")
    return [_summary(skill) for skill in payload] if ok else _registry_error(payload)


def get_skill_answer(value: Any) -> Variant:
    """``result<option<skill-definition>, registry-error>`` (tagged)."""
    ok, payload = _result(value, "a skill answer")
    if not ok:
        return Variant("err", _registry_error(payload))
    return Variant("ok", None if payload is None else _definition(payload))


def skill_files_answer(value: Any) -> Variant:
    """``result<option<skill-files>, registry-error>`` (tagged, as get-skill's)."""
    ok, payload = _result(value, "a file listing")
    if not ok:
        return Variant("err", _registry_error(payload))
    if payload is None:
        return Variant("ok", None)
    fields = _fields(payload, "a file listing", ("files", "total"))
    if not isinstance(fields["files"], list):
        raise TraceFormatError(f"a file listing: {stringify(fields['files'])} is not a list")
    files = [_record(file, "a skill file", ("path", "size")) for file in fields["files"]]
    return Variant("ok", record(files=files, total=fields["total"]))


_FILE_CASES = {"Text": "text", "Binary": "binary", "TooLarge": "too-large", "Missing": "missing", "Unavailable": "unavailable"}


def file_answer(value: Any) -> Variant | str | None:
    """``result<file-answer, registry-error>``: untagged, the ``file-answer``
    (a Variant: two ``u64`` cases), None (aborted) or the failure's text."""
    ok, payload = _result(value, "a file answer")
    if not ok:
        return _registry_error(payload)
    case, inner = _one_case(payload, "a file answer")
    tag = _FILE_CASES.get(case)
    if tag is None:
        raise TraceFormatError(f"a file answer: {stringify(payload)} is no case of file-answer")
    if tag in ("missing", "unavailable"):
        if not isinstance(payload, str):
            raise TraceFormatError(f"a file answer: {stringify(payload)} has a payload")
        return Variant(tag)
    wanted = str if tag == "text" else int
    if not isinstance(inner, wanted) or isinstance(inner, bool):
        raise TraceFormatError(f"a file answer: {stringify(payload)} is not {case} with its {'text' if tag == 'text' else 'size'}")
    return Variant(tag, inner)


def page_answer(value: Any) -> Record:
    """``message-ref-page``: ``{refs: [{seq, visible}], next}``."""
    fields = _fields(value, "a message page", ("refs", "next"))
    refs = [_record(ref, "a message ref", ("seq", "visible")) for ref in fields["refs"]]
    return record(refs=refs, next=fields["next"])


def user_message_answer(value: Any) -> Record | None:
    """``option<message>``."""
    return None if value is None else message(value)


def proposed_answer(value: Any) -> list[Record]:
    """``list<message>``."""
    if not isinstance(value, list):
        raise TraceFormatError(f"the proposed messages: {stringify(value)} is not a list")
    return [message(item) for item in value]


def filters_to_trace(filters: list[Record]) -> list[dict[str, Any]]:
    """``list<source-filter>`` in the trace's form."""
    return [{"kind": item.kind, "plugin": getattr(item, "plugin")} for item in filters]


def decided_to_trace(entry: Any) -> dict[str, Any]:
    """One message of a decision as the host reads it: ``{"proposed": index}``
    or ``{"added": message}``, a typed record already written as its source."""
    if isinstance(entry, int):
        return {"proposed": entry}
    return {"added": message_to_trace(entry)}

"""The contract versions this host runs (spec §9.4), newest first, as
skill-host's ``ContractVersion::ACCEPTED``: the one a component is built for
(the newest whose plugin interface it exports), the refusal of any other,
and the import functions each is linked with.

A 0.4.0 component is answered by :class:`~dsh_skill.imports.CallContext`
(or a subclass: the trace replayer answers from a trace) as it is. A 0.3.0
one is answered by the same functions but the two 0.4.0 added
(``list-skill-files``, ``read-skill-file``): its imports are 0.4.0's
without them, and its tool value has no ``file`` case (read as any other
value, :func:`~dsh_skill.plugin.checked_tool_outcome`). A 0.2.0 or 0.1.0
one (their imports are alike) is answered as a 0.3.0 one, converted as
skill-host's ``bindings/v0_2_0.rs`` converts them: a skill summary has no
``when-to-use``, and an added message is a ``message`` whose source is the
JSON text the plugin wrote, kept as written and checked as it always was
(spec §8.5)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from wasmtime.component import Record, Variant

from .errors import HostError
from .imports import CallContext

#: Every version this host runs, newest first.
VERSIONS = ("0.4.0", "0.3.0", "0.2.0", "0.1.0")
#: The version of the packaged component (and of ``wit/world.wit``).
CURRENT = VERSIONS[0]

#: An import function: the call's context, then the import's arguments.
ImportFunction = Callable[..., Any]


def plugin_export(version: str) -> str:
    """The name of the plugin interface a component of ``version`` exports."""
    return f"dsh:skill/plugin@{version}"


def version_of(exports: Iterable[str]) -> str:
    """The version a component exporting ``exports`` is built for; a load
    error with skill-host's text when it exports none this host runs."""
    exported = list(exports)
    for version in VERSIONS:
        if plugin_export(version) in exported:
            return version
    found = ", ".join(exported) or "nothing"
    accepted = " or ".join(plugin_export(version) for version in VERSIONS)
    raise HostError.load(f"the component exports {found}, but this host runs one that exports {accepted}")


def _without_when_to_use(summaries: list[Record]) -> list[Record]:
    # The summaries are built afresh for each call: dropping the field is the conversion.
    for summary in summaries:
        delattr(summary, "when-to-use")
    return summaries


def _snapshot_0_2(context: CallContext, known: int | None) -> Variant:
    answer = context.snapshot(known)
    if answer.tag == "ok" and answer.payload is not None:
        _without_when_to_use(answer.payload.skills)
    return answer


def _list_skills_0_2(context: CallContext, name: str | None) -> Any:
    listed = context.list_skills(name)
    return _without_when_to_use(listed) if isinstance(listed, list) else listed


def _decide_0_2(context: CallContext, messages: list[Any]) -> None:
    # decided-message: proposed(u32) | added(message): an added message keeps the source text it wrote.
    context.decide_with(messages, lambda entry: entry)


def _method(name: str) -> ImportFunction:
    """The context's own method ``name``, looked up on each call, so that a
    subclass answers in its place (the trace replayer's answers, :mod:`~dsh_skill.trace_answers`)."""

    def call(context: CallContext, *args: Any) -> Any:
        return getattr(context, name)(*args)

    return call


_CURRENT: dict[str, dict[str, ImportFunction]] = {
    "registry": {
        "snapshot": _method("snapshot"),
        "list-skills": _method("list_skills"),
        "get-skill": _method("get_skill"),
        "list-skill-files": _method("list_skill_files"),
        "read-skill-file": _method("read_skill_file"),
    },
    "session": {
        "list-user-messages": _method("list_user_messages"),
        "get-user-message": _method("get_user_message"),
    },
    "step": {"proposed-messages": _method("proposed_messages"), "decide": _method("decide")},
}

#: 0.4.0 added the registry's file functions; 0.3.0's imports are the rest.
_FILE_FUNCTIONS = ("list-skill-files", "read-skill-file")

_0_3: dict[str, dict[str, ImportFunction]] = {
    **_CURRENT,
    "registry": {name: f for name, f in _CURRENT["registry"].items() if name not in _FILE_FUNCTIONS},
}

_BEFORE_0_3: dict[str, dict[str, ImportFunction]] = {
    "registry": {**_0_3["registry"], "snapshot": _snapshot_0_2, "list-skills": _list_skills_0_2},
    "session": _CURRENT["session"],
    "step": {**_CURRENT["step"], "decide": _decide_0_2},
}


def imports(version: str) -> dict[str, dict[str, ImportFunction]]:
    """The functions of each imported interface (``registry``, ``session``,
    ``step``) that a component of ``version`` is linked with."""
    if version == CURRENT:
        return _CURRENT
    return _0_3 if version == "0.3.0" else _BEFORE_0_3

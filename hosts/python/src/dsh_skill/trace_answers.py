"""The plugin's imports answered from a trace (spec §7.2) instead of from a
registry and a session.

:class:`TracedContext` is the host's own :class:`~dsh_skill.imports.CallContext`
with each import answered by the next entry of the call's ``imports`` list,
so the sandbox, the linking per contract version and the 0.2.0 conversions
(:mod:`~dsh_skill.versions`) are the ones every other call goes through. Each
import's arguments are first written in the trace's form and compared with
the entry's; the pre-step's step state is kept as the host keeps it, so
the decision is checked afterwards by the host's own code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wasmtime.component import Record, Variant

from . import trace_values as values
from .imports import CallContext, HostImportError, StepState, check_filters
from .jsonvalue import stringify
from .trace_diff import clip, difference, same


class ImportMismatch(Exception):
    """The plugin made an import the trace does not list next; the call
    cannot go on (raised through the guest, out of the export's call)."""


def _shown(value: Any) -> str:
    return clip(stringify(value))


class ImportList:
    """One call's listed imports, answered in order. Past the end, an import
    equal to the last one listed is answered alike when ``repeat_last`` (a
    call that ran out its deadline: the trace keeps a repeated import once)."""

    def __init__(self, entries: list[Any], repeat_last: bool) -> None:
        self.entries = entries
        self.repeat_last = repeat_last
        self.used = 0

    def answer(self, name: str, args: dict[str, Any], own: Callable[[], Any] | None = None) -> Any:
        """The listed answer to import ``name`` with ``args`` (trace form);
        raises the listed trap as :class:`HostImportError`, or :class:`ImportMismatch`.
        ``own`` is this host's own check for a trap it decides without a
        registry or session: its trap and the trace's must agree."""
        if self.used < len(self.entries):
            entry = self.entries[self.used]
            self.used += 1
        elif self.repeat_last and self.entries and self._is(self.entries[-1], name, args):
            entry = self.entries[-1]
        else:
            raise ImportMismatch(
                f"import {self.used + 1}: the plugin called `{name}` {_shown(args)}, "
                f"past the {len(self.entries)} imports the trace lists"
            )
        if not isinstance(entry, dict):
            raise ImportMismatch(f"import {self.used}: the trace lists {_shown(entry)}, not an import")
        if entry.get("import") == name and not same(entry.get("args"), args):
            raise ImportMismatch(f"import {self.used}: `{name}`: {difference('args', entry.get('args'), args)}")
        if not self._is(entry, name, args):
            raise ImportMismatch(
                f"import {self.used}: the plugin called `{name}` {_shown(args)}, "
                f"where the trace lists `{entry.get('import')}` {_shown(entry.get('args'))}"
            )
        own_trap = _trap_of(own) if own is not None else None
        if "trap" in entry:
            if own is not None and own_trap != entry["trap"]:
                mine = "answers" if own_trap is None else f"traps with {_shown(own_trap)}"
                raise ImportMismatch(f"import {self.used} (`{name}`): this host {mine}, the trace traps with {_shown(entry['trap'])}")
            raise HostImportError(entry["trap"])
        if own_trap is not None:
            raise ImportMismatch(f"import {self.used} (`{name}`): this host traps with {_shown(own_trap)}, the trace answers")
        if "answer" not in entry:
            raise ImportMismatch(f"import {self.used}: the trace lists `{name}` with neither an answer nor a trap")
        return entry["answer"]

    @staticmethod
    def _is(entry: Any, name: str, args: dict[str, Any]) -> bool:
        return isinstance(entry, dict) and entry.get("import") == name and same(entry.get("args"), args)

    def unused(self) -> list[Any]:
        """The listed imports the plugin did not make."""
        return self.entries[self.used :]


class TracedContext(CallContext):
    """A call's imports answered from its :class:`ImportList`; ``step`` is a
    pre-step's state, kept as the host keeps it (None in other calls)."""

    def __init__(self, imports: ImportList, step: StepState | None = None) -> None:
        super().__init__(step=step)
        self.imports = imports

    def _answer(
        self, name: str, args: dict[str, Any], convert: Callable[[Any], Any], own: Callable[[], Any] | None = None
    ) -> Any:
        answer = self.imports.answer(name, args, own)
        try:
            return convert(answer)
        except values.TraceFormatError as error:
            raise ImportMismatch(f"import {self.imports.used}: the trace's answer to `{name}` is not its type: {error}") from None

    # dsh:skill/registry ---------------------------------------------------

    def snapshot(self, known: int | None) -> Variant:
        return self._answer("registry.snapshot", {"known": known}, values.snapshot_answer)

    def list_skills(self, name: str | None) -> Any:
        return self._answer("registry.list-skills", {"name": name}, values.list_skills_answer)

    def get_skill(self, name: str) -> Variant:
        return self._answer("registry.get-skill", {"name": name}, values.get_skill_answer)

    def list_skill_files(self, name: str, limit: int) -> Variant:
        return self._answer("registry.list-skill-files", {"name": name, "limit": limit}, values.skill_files_answer)

    def read_skill_file(self, name: str, path: str) -> Variant | str | None:
        """The trace's answer; a ``text`` one is noted as the host notes its own (spec §8.5)."""
        answer = self._answer("registry.read-skill-file", {"name": name, "path": path}, values.file_answer)
        return self.note_read(name, path, answer)

    # dsh:skill/session ----------------------------------------------------

    def list_user_messages(self, filters: list[Record], before: int | None, limit: int) -> Record:
        args = {"filters": values.filters_to_trace(filters), "before": before, "limit": limit}
        return self._answer("session.list-user-messages", args, values.page_answer, lambda: check_filters(filters))

    def get_user_message(self, seq: int) -> Record | None:
        return self._answer("session.get-user-message", {"seq": seq}, values.user_message_answer)

    # dsh:skill/step -------------------------------------------------------

    def proposed_messages(self) -> list[Record]:
        return self._answer("step.proposed-messages", {}, values.proposed_answer, lambda: self._step("proposed-messages"))

    def decide_with(self, messages: list[Any], convert: Callable[[Any], Any]) -> None:
        """The decision as the host reads it (a typed record written as its
        source) is the import's arguments; outside a pre-step the host reads
        none, and skill-host traces ``{}``. The host then keeps it as always."""
        args: dict[str, Any] = {}
        if self.step is not None:
            args = {"messages": [values.decided_to_trace(convert(entry)) for entry in messages]}
        self._answer("step.decide", args, lambda answer: answer, lambda: self._step("decide"))
        super().decide_with(messages, convert)


def _trap_of(check: Callable[[], Any]) -> str | None:
    """The text of the trap ``check`` ends the call with, or None."""
    try:
        check()
    except HostImportError as error:
        return str(error)
    return None

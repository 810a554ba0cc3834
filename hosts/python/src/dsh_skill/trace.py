"""Replaying a trace (spec §7.2): what one plugin was asked and answered
across the contract, recorded by ``skill-host replay --trace``, run again
against the same component in this host, which must reach the same results
and the same errors.

    from dsh_skill import trace
    mismatches = trace.replay(trace.read("tests/traces/scenarios/lifecycle.trace.json"))
    assert not mismatches, "\\n".join(map(str, mismatches))

Every call runs in this host's sandbox under the trace's limits, on the
instance the trace names (made and configured when first named), its
imports answered from the trace (:mod:`~dsh_skill.trace_answers`); what the
export returned is read into the trace's form and compared, and so is the
outcome, concluded by the very checks :class:`~dsh_skill.plugin.Plugin`
runs. The replay stops after the first call that differs: later calls build
on what that instance remembers. ``python -m dsh_skill trace FILE`` prints it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import HostError
from .imports import StepState
from .jsonvalue import JsonSyntaxError, parse, stringify
from .output import OutputCheck, OutputLimits
from .plugin import (
    Decision,
    Enter,
    Reject,
    StepOutcome,
    ToolOutcome,
    apply_decision,
    checked_definition,
    checked_text,
    checked_tool_outcome,
)
from .sandbox import Compiled, Instance, SandboxLimits
from .trace_answers import ImportList, ImportMismatch, TracedContext
from .trace_diff import clip, difference, same
from .trace_values import TraceFormatError, message_data, proposed_answer, step_context, to_trace

#: The trace format this replayer reads (the trace's ``trace`` field).
TRACE_FORMAT = 1
CALLS = ("configure", "definition", "pre-step", "invoke", "system-prompt", "expand")

_DEADLINE = re.compile(r"^plugin call `[a-z-]+` exceeded its deadline of [0-9]+ ms$")
_CALL_NAME = re.compile(r"^plugin call `([a-z-]+)` ")


class TraceError(ValueError):
    """A trace that is not JSON or not the shape of spec §7.2, or that asks
    for what a host never does (a call on an instance whose call failed)."""


@dataclass(frozen=True)
class Mismatch:
    """Where the replay differs from the trace: call ``index`` (from 0) and what."""

    index: int
    call: str
    instance: int
    what: str

    def __str__(self) -> str:
        return f"call {self.index} (`{self.call}` on instance {self.instance}): {self.what}"


def read(path: str | Path) -> dict[str, Any]:
    """A trace file, parsed as serde_json parses it; a :class:`TraceError` if it is not one."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise TraceError(f"cannot read trace {path}: {error.strerror}") from None
    except UnicodeDecodeError as error:
        raise TraceError(f"trace {path}: not valid UTF-8 at byte {error.start}") from None
    try:
        return parse(text)
    except JsonSyntaxError as error:
        raise TraceError(f"trace {path}: {error}") from None


def limits_of(trace: dict[str, Any]) -> SandboxLimits:
    """The sandbox limits a trace was recorded under (its ``limits``)."""
    limits = trace.get("limits")
    names = ("timeout_ms", "memory_bytes", "max_added_messages", "max_text_bytes", "max_output_bytes")
    if not isinstance(limits, dict) or any(not isinstance(limits.get(name), int) for name in names):
        raise TraceError(f"the trace's limits must give {', '.join(names)} as whole numbers")
    output = OutputLimits(limits["max_added_messages"], limits["max_text_bytes"], limits["max_output_bytes"])
    return SandboxLimits(timeout_ms=limits["timeout_ms"], memory_bytes=limits["memory_bytes"], output=output)


def replay(trace: dict[str, Any], component: bytes | None = None, cache_dir: Path | None = None) -> list[Mismatch]:
    """Replays ``trace`` against ``component`` (the packaged one when None):
    the mismatches of the first call that differs, or none. Raises
    :class:`TraceError` for a malformed trace, :class:`HostError` when the
    component cannot be loaded."""
    if not isinstance(trace, dict) or trace.get("trace") != TRACE_FORMAT:
        raise TraceError(f"not a trace of format {TRACE_FORMAT} (its `trace` field)")
    calls = trace.get("calls")
    if not isinstance(calls, list):
        raise TraceError("the trace has no `calls` list")
    if component is None:
        from . import packaged_component

        component = packaged_component()
    limits = limits_of(trace)
    compiled = Compiled(component, cache_dir, limits.memory_bytes)
    if trace.get("contract") != compiled.version:
        found = f"dsh:skill@{compiled.version}"
        return [Mismatch(0, "configure", 0, f"the trace is of a dsh:skill@{trace.get('contract')} component, this one {found}")]
    return _Replay(compiled, limits).run(calls)


class _Replay:
    """The instances of one replay, by the trace's numbers."""

    def __init__(self, compiled: Compiled, limits: SandboxLimits) -> None:
        self.compiled = compiled
        self.limits = limits
        self.instances: dict[int, Instance] = {}
        self.failed: dict[int, int] = {}  # instance → the call that failed on it

    def run(self, calls: list[Any]) -> list[Mismatch]:
        for index, call in enumerate(calls):
            if not isinstance(call, dict):
                raise TraceError(f"call {index} is not an object")
            name, number = call.get("call"), call.get("instance")
            if name not in CALLS or not isinstance(number, int) or isinstance(number, bool):
                raise TraceError(f"call {index}: `call` must be one of {', '.join(CALLS)} and `instance` a number")
            try:
                found = self._call(index, name, number, call)
            except TraceFormatError as error:
                raise TraceError(f"call {index} (`{name}`): {error}") from None
            if found:
                return [Mismatch(index, name, number, what) for what in found]
        return []

    def _call(self, index: int, name: str, number: int, call: dict[str, Any]) -> list[str]:
        """Runs one call; what differs from the trace."""
        outcome = call.get("outcome")
        expected_error = outcome.get("error") if isinstance(outcome, dict) else None
        deadline = isinstance(expected_error, str) and _DEADLINE.match(expected_error) is not None
        entries = call.get("imports")
        if not isinstance(entries, list):
            raise TraceError(f"call {index}: no `imports` list")
        imports = ImportList(entries, repeat_last=deadline)
        try:
            returned, concluded = self._run(index, name, number, call, imports)
        except ImportMismatch as error:
            return [str(error)]
        # A call that trapped drops its instance, as a refused configuration
        # leaves none; one whose output was refused after it returned does not.
        if returned is _FAILED or number not in self.instances:
            self.failed[number] = index
            self.instances.pop(number, None)
        found = []
        unused = imports.unused()
        if unused:
            first = unused[0].get("import") if isinstance(unused[0], dict) else None
            found.append(f"the plugin made {imports.used} of the {len(entries)} imports listed; the next is `{first}`")
        if returned is _FAILED and call.get("returned") is not None:
            found.append(f"it returned nothing (it failed), where the trace has {clip(stringify(call.get('returned')))}")
        elif returned is not _FAILED and not same(call.get("returned"), returned):
            found.append(difference("returned", call.get("returned"), returned))
        host_trap = bool(entries) and isinstance(entries[-1], dict) and "trap" in entries[-1]
        differs = _outcome_differs(outcome, concluded, host_trap)
        if differs:
            found.append(differs)
        return found

    def _run(self, index: int, name: str, number: int, call: dict[str, Any], imports: ImportList) -> tuple[Any, Any]:
        """(what the export returned in the trace's form, or ``_FAILED``; the outcome)."""
        args = call.get("args")
        if not isinstance(args, dict):
            raise TraceError(f"call {index}: no `args` object")
        if number in self.failed:
            raise TraceError(f"call {index} names instance {number}, whose call {self.failed[number]} failed")
        if name == "configure":
            return self._configure(index, number, args, call)
        instance = self.instances.get(number)
        if instance is None:
            raise TraceError(f"call {index} names instance {number}, which no configure call made")
        if name == "pre-step":
            return self._pre_step(instance, args, imports, call.get("outcome"))
        positional = {"definition": [], "system-prompt": [], "expand": ["text"], "invoke": ["arguments"]}[name]
        texts = [args.get(key) for key in positional]
        if not all(isinstance(text, str) for text in texts):
            raise TraceError(f"call {index}: `{name}` needs {', '.join(positional)} as text")
        context = TracedContext(imports)
        returned: Any = _FAILED
        try:
            raw = instance.call(name, name, texts, context)
            returned = self._returned(instance, name, raw)
            check = OutputCheck(name, self.limits.output)
            if name == "definition":
                value = checked_definition(raw, check)
                concluded = {"ok": {"name": value.name, "description": value.description, "parameters": value.parameters}}
            elif name == "invoke":
                concluded = {"ok": _tool_outcome(checked_tool_outcome(raw, texts[0], check, context.files_read))}
            else:
                concluded = {"ok": checked_text(raw, "the system prompt" if name == "system-prompt" else "the expansion", check)}
        except HostError as error:
            concluded = {"error": str(error)}
        return returned, concluded

    def _configure(self, index: int, number: int, args: dict[str, Any], call: dict[str, Any]) -> tuple[Any, Any]:
        """A new instance, configured; its failures name the call that made it (spec §8.4)."""
        if number in self.instances:
            raise TraceError(f"call {index} configures instance {number} again")
        config = args.get("config")
        if not isinstance(config, str):
            raise TraceError(f"call {index}: `configure` needs its config as text")
        outcome = call.get("outcome")
        error = outcome.get("error") if isinstance(outcome, dict) else None
        named = _CALL_NAME.match(error) if isinstance(error, str) else None
        caller = named.group(1) if named else "configure"
        try:
            instance = Instance(self.compiled, self.limits, caller)
            refused = instance.call(caller, "configure", [config], TracedContext(ImportList([], False)))
        except HostError as failure:
            return _FAILED, {"error": str(failure)}
        returned = self._returned(instance, "configure", refused)
        if refused is not None:  # result<_, string>: None is ok, a str the refusal
            return returned, {"error": str(HostError.config(refused))}
        self.instances[number] = instance
        return returned, {"ok": None}

    def _pre_step(self, instance: Instance, args: dict[str, Any], imports: ImportList, outcome: Any) -> tuple[Any, Any]:
        context = step_context(args.get("context"))
        proposed = args.get("proposed") or []
        step = StepState(proposed_answer(proposed))
        proposal: Decision
        if context.proposal is None:
            proposal = Reject(_reject_reason(outcome))
        else:
            proposal = Enter([message_data(item) for item in proposed])
        returned: Any = _FAILED
        try:
            raw = instance.call("pre-step", "pre-step", [context], TracedContext(imports, step))
            returned = self._returned(instance, "pre-step", raw)
            if raw.tag == "err":  # result<_, step-error>: tagged
                concluded: Any = {"ok": _step_outcome(StepOutcome(None, aborted=True))}
            else:
                decision = apply_decision(proposal, step, OutputCheck("pre-step", self.limits.output))
                concluded = {"ok": _step_outcome(StepOutcome(decision))}
        except HostError as error:
            concluded = {"error": str(error)}
        return returned, concluded

    def _returned(self, instance: Instance, name: str, raw: Any) -> Any:
        """What export ``name`` returned, in the trace's (current contract's) form."""
        value = to_trace(instance.functions[name][2], raw)
        # 0.1.0's tool value is a skill-result record; in 0.3.0 terms, `skill(…)` (spec §9.4).
        if self.compiled.version == "0.1.0" and name == "invoke" and isinstance(value.get("Ok"), dict):
            value["Ok"]["value"] = {"Skill": value["Ok"]["value"]}
        return value


def _reject_reason(outcome: Any) -> str | None:
    """The reason of a rejected proposal: the host's own, which the plugin
    can neither see nor change, so the trace has it only in the outcome."""
    concluded = outcome.get("ok") if isinstance(outcome, dict) else None
    return concluded.get("reject") if isinstance(concluded, dict) else None


class _Failed:
    """What a call that trapped returned: nothing (the trace's ``null``)."""


_FAILED = _Failed()


def _step_outcome(outcome: StepOutcome) -> Any:
    """A pre-step's outcome as the trace writes it: the messages without their ids."""
    if outcome.aborted:
        return "aborted"
    decision = outcome.decision
    if isinstance(decision, Reject):
        return {"reject": decision.reason}
    assert isinstance(decision, Enter)
    return {"enter": [{key: value for key, value in data.items() if key != "id"} for data in decision.messages]}


def _tool_outcome(outcome: ToolOutcome) -> Any:
    """A ``skill`` call's outcome as the trace writes it (its load with skill-host's field names)."""
    if not outcome.ok:
        return {"error": outcome.error}
    loaded = outcome.loaded
    if loaded is not None:
        loaded = {"name": loaded["name"], "provider": loaded["provider"], "body_digest": loaded.get("bodyDigest")}
    return {"value": outcome.value, "text": outcome.text, "loaded": loaded}


_TRAPPED = re.compile(r"^(plugin call `[a-z-]+` trapped: )")
_PANIC = "the guest panicked at "


def _outcome_differs(expected: Any, concluded: Any, host_trap: bool) -> str | None:
    """What differs between the trace's outcome and the replay's. An error
    must be the trace's text, but for a trap the engine describes (not a
    trap the host answered an import with, ``host_trap``, nor a guest's
    panic): the replay must only trap in the same call, and not panic."""
    if same(expected, concluded):
        return None
    wanted = expected.get("error") if isinstance(expected, dict) else None
    got = concluded.get("error") if isinstance(concluded, dict) else None
    if isinstance(wanted, str) and isinstance(got, str):
        prefix = _TRAPPED.match(wanted)
        if prefix and not host_trap and not wanted[prefix.end() :].startswith(_PANIC):
            if got.startswith(prefix.group(1)) and not got[prefix.end() :].startswith(_PANIC):
                return None
        return f"it failed with {stringify(got)}, where the trace has {stringify(wanted)}"
    return difference("outcome", expected, concluded)

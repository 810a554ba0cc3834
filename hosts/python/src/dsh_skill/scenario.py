"""Scenario files (spec §7): the plugin driven through in-memory providers and
an in-memory session, one step at a time, with a JSON record of each step —
the document ``skill-host replay`` prints.

:meth:`Scenario.parse` reads the whole file first and refuses a malformed one
with a :class:`ScenarioError` in words of its own (the Rust host's are
serde's); the shapes read are those of the Rust host's serde types:
structures are objects with no field given twice; unknown fields are ignored
but at the top level; ``null`` is a missing field but for ``reject``, an
invoke's ``arguments`` and ``name``, and an event's ``data``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import HostError, ScenarioError
from .jsonvalue import JsonSyntaxError, duplicate_keys, parse, stringify
from .memory_provider import MemoryProvider, MemorySkill, invocation_policy, resource_base
from .plugin import Enter, Plugin, Reject, record_tool_result, single_text, user_message
from .registry import RegistryFailure, RuntimeSkill, SkillRegistry
from .sandbox import SandboxLimits
from .session import SessionError, SessionLog, new_message_id

DEFAULT_CWD = "/workspace"
COMPACTION_SUMMARY = "Summary of the earlier conversation."

_TOP_FIELDS = ("config", "cwd", "providers", "runtime", "session", "steps")
_PROVIDER_FIELDS = ("name", "complete", "fail", "skills")
_RUNTIME_FIELDS = ("name", "description", "content", "invocation", "whenToUse", "source", "provider", "resourceBase")
_EVENT_FIELDS = ("type", "data", "surfaceOp")
_STEP_FIELDS = {
    "pre-step": ("reject", "messages", "toolView"),
    "propose": ("reject", "messages", "toolView"),
    "invoke": ("arguments", "name"),
    "compact": (),
    "set-providers": ("providers",),
    "set-runtime": ("runtime",),
}
_TOOL_VIEWS = ("visible", "hidden", "shadowed")
_MISSING = object()


def _refuse(where: str, reason: str) -> ScenarioError:
    return ScenarioError(f"{where}: {reason}")


def _struct(value: Any, where: str, fields: tuple[str, ...], strict: bool = False) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _refuse(where, "must be an object")
    for key in sorted(duplicate_keys(value)):
        if key in fields:
            raise _refuse(where, f"has `{key}` twice")
    if strict:
        for key in value:
            if key not in fields:
                raise _refuse(where, f"has an unknown field `{key}`")
    return value


def _list(value: Any, where: str, item: Any, required: bool = False) -> list[Any]:
    if not required and value is None:
        return []
    if not isinstance(value, list):
        raise _refuse(where, "must be an array")
    return [item(entry, f"{where}[{index}]") for index, entry in enumerate(value)]


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _refuse(where, "must be a string")
    return value


@dataclass
class ProviderEntry:
    name: str
    complete: bool
    fail: str | None
    skills: list[MemorySkill]


def _provider(value: Any, where: str) -> ProviderEntry:
    _struct(value, where, _PROVIDER_FIELDS)
    complete = True
    if value.get("complete") is not None:
        if not isinstance(value["complete"], bool):
            raise _refuse(f"{where}.complete", "must be a boolean")
        complete = value["complete"]
    fail = None if value.get("fail") is None else _string(value["fail"], f"{where}.fail")
    return ProviderEntry(_string(value.get("name"), f"{where}.name"), complete, fail, _list(value.get("skills"), f"{where}.skills", _skill))


def _skill(value: Any, where: str) -> MemorySkill:
    if not isinstance(value, dict):
        raise _refuse(where, "must be an object")
    fields = {key: item for key, item in value.items() if key != "loaded"}
    loaded = value.get("loaded", ...)
    if loaded is not ... and loaded is not None and not isinstance(loaded, dict):
        raise _refuse(f"{where}.loaded", "must be an object or null")
    return MemorySkill(fields, loaded)


@dataclass
class RuntimeEntry:
    name: str
    description: str
    content: str
    invocation: Any
    when_to_use: str | None
    source: str | None
    provider: str | None
    resource_base: Any


def _runtime(value: Any, where: str) -> RuntimeEntry:
    _struct(value, where, _RUNTIME_FIELDS)

    def text(key: str) -> str | None:
        return value[key] if isinstance(value.get(key), str) else None

    entry = RuntimeEntry(
        _string(value.get("name"), f"{where}.name"),
        _string(value.get("description"), f"{where}.description"),
        _string(value.get("content"), f"{where}.content"),
        None,
        text("whenToUse"),
        text("source"),
        text("provider"),
        None,
    )
    try:
        if value.get("invocation") is not None:
            entry.invocation = invocation_policy(value["invocation"])
    except ValueError as error:
        raise _refuse(f"{where}.invocation", str(error)) from None
    try:
        entry.resource_base = resource_base(value.get("resourceBase"))
    except ValueError as error:
        raise _refuse(f"{where}.resourceBase", str(error)) from None
    return entry


@dataclass
class SeedEvent:
    type: str
    data: Any
    surface_op: Any


def _surface_op(marker: Any, where: str) -> Any:
    """A seeded event's `surfaceOp`, read as the session log reads one."""
    if marker is None:
        return None
    op = SessionLog._marker(marker)
    if op is None:
        raise _refuse(where, 'must be "append" or {"op":"replace","start":SEQ,"end":SEQ}')
    return op


def _event(value: Any, where: str) -> SeedEvent:
    _struct(value, where, _EVENT_FIELDS)
    return SeedEvent(
        _string(value.get("type"), f"{where}.type"),
        value["data"] if "data" in value else {},
        _surface_op(value.get("surfaceOp"), f"{where}.surfaceOp"),
    )


@dataclass
class Step:
    op: str
    reject: Any = _MISSING
    messages: list[Any] = field(default_factory=list)
    tool_view: str = "visible"
    arguments: str = ""
    providers: list[ProviderEntry] = field(default_factory=list)
    runtime: list[RuntimeEntry] = field(default_factory=list)


def _proposed(value: Any, where: str) -> Any:
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        raise _refuse(where, "must be a string or an object")
    if not isinstance(value.get("source"), dict):
        raise _refuse(where, "needs a `source` object")
    if not isinstance(value.get("content"), list):
        raise _refuse(where, "needs a `content` array")
    return value


def _step(value: Any, where: str) -> Step:
    if not isinstance(value, dict):
        raise _refuse(where, "must be an object")
    if "op" not in value:
        raise _refuse(where, "has no `op`")
    op = value["op"]
    if not isinstance(op, str) or op not in _STEP_FIELDS:
        raise _refuse(where, f"has an unknown op {stringify(op)}")
    _struct(value, where, ("op", *_STEP_FIELDS[op]))
    if op in ("pre-step", "propose"):
        reject: Any = _MISSING
        if "reject" in value:
            reject = None if value["reject"] is None else _string(value["reject"], f"{where}.reject")
        tool_view = "visible"
        if value.get("toolView") is not None:
            if value["toolView"] not in _TOOL_VIEWS:
                raise _refuse(f"{where}.toolView", 'must be "visible", "hidden" or "shadowed"')
            tool_view = value["toolView"]
        return Step(op, reject, _list(value.get("messages"), f"{where}.messages", _proposed), tool_view)
    if op == "invoke":
        if "arguments" in value:
            arguments = value["arguments"]
        elif "name" in value:
            arguments = {"name": value["name"]}
        else:
            raise _refuse(where, "an invoke step needs `name` or `arguments`")
        return Step(op, arguments=stringify(arguments))
    if op == "set-providers":
        return Step(op, providers=_list(value.get("providers"), f"{where}.providers", _provider, True))
    if op == "set-runtime":
        return Step(op, runtime=_list(value.get("runtime"), f"{where}.runtime", _runtime, True))
    return Step(op)


class Scenario:
    """A parsed scenario file."""

    def __init__(self) -> None:
        self.config: str | None = None
        self.cwd = DEFAULT_CWD
        self.providers: list[ProviderEntry] = []
        self.runtime: list[RuntimeEntry] = []
        self.session: list[SeedEvent] = []
        self.steps: list[Step] = []

    @classmethod
    def parse(cls, text: str) -> Scenario:
        """Parses a scenario document; raises :class:`ScenarioError` naming the field at fault."""
        try:
            document = parse(text)
        except JsonSyntaxError as error:
            raise ScenarioError(f"not valid JSON: {error}") from None
        _struct(document, "the scenario", _TOP_FIELDS, strict=True)
        if "steps" not in document:
            raise _refuse("the scenario", "has no `steps`")
        scenario = cls()
        scenario.config = None if document.get("config") is None else stringify(document["config"])
        scenario.cwd = DEFAULT_CWD if document.get("cwd") is None else _string(document["cwd"], "cwd")
        scenario.providers = _list(document.get("providers"), "providers", _provider)
        scenario.runtime = _list(document.get("runtime"), "runtime", _runtime)
        scenario.session = _list(document.get("session"), "session", _event)
        scenario.steps = _list(document.get("steps"), "steps", _step)
        return scenario

    @classmethod
    def read(cls, path: str | Path) -> Scenario:
        data = Path(path).read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ScenarioError(f"not valid UTF-8 at byte {error.start}") from None
        return cls.parse(text)

    def replay(self, component: bytes | None, limits: SandboxLimits | None = None, cache_dir: Any = True) -> dict[str, Any]:
        """Runs every step and returns ``{"steps": […]}``."""
        plugin = Plugin.create(component, self.config or "{}", limits, cache_dir)
        return self.replay_with(plugin)

    def replay_with(self, plugin: Plugin) -> dict[str, Any]:
        registry = SkillRegistry()
        registry.set_providers(_providers(self.providers))
        _set_runtime(registry, self.runtime)
        session = SessionLog.in_memory(self.cwd)
        _seed(session, self.session)
        records = []
        for index, step in enumerate(self.steps):
            try:
                records.append(self._run(plugin, registry, session, step))
            except HostError as error:
                if error.kind == "input":
                    raise HostError.input(f"step {index}: {error}") from None
                raise
        return {"steps": records}

    def _run(self, plugin: Plugin, registry: SkillRegistry, session: SessionLog, step: Step) -> dict[str, Any]:
        if step.op in ("pre-step", "propose"):
            proposal = Enter([_proposed_data(m) for m in step.messages]) if step.reject is _MISSING else Reject(step.reject)
            outcome = plugin.pre_step(registry, session, proposal, self.cwd, step.tool_view)
            decision = outcome.decision
            if step.op == "pre-step" and isinstance(decision, Enter) and decision.messages:
                _guard(lambda: session.append_user_messages([(data, "append") for data in decision.messages]))
            if outcome.aborted:
                return {"kind": "aborted"}
            if isinstance(decision, Reject):
                return {"kind": "reject"}
            assert isinstance(decision, Enter)
            messages = []
            for data in decision.messages:
                text = single_text(data)
                source = data.get("source")
                messages.append({"source": source, "content": data.get("content")} if text is None else {"source": source, "text": text})
            return {"kind": "enter", "messages": messages}
        if step.op == "invoke":
            tool = plugin.invoke(registry, step.arguments, self.cwd)
            _guard(lambda: record_tool_result(session, tool))
            return {"error": tool.error} if not tool.ok else {"ok": tool.value, "text": tool.text}
        if step.op == "compact":
            _guard(lambda: session.compact(COMPACTION_SUMMARY))
            return {}
        if step.op == "set-providers":
            registry.set_providers(_providers(step.providers))
            return {}
        _set_runtime(registry, step.runtime)
        return {}


def _proposed_data(message: Any) -> dict[str, Any]:
    if isinstance(message, str):
        return user_message({"kind": "user"}, message)
    data = dict(message)
    data.setdefault("role", "user")
    data.setdefault("id", new_message_id())
    return data


def _guard(action: Any) -> Any:
    try:
        return action()
    except SessionError as error:
        raise HostError.session(str(error)) from None


def _providers(entries: list[ProviderEntry]) -> list[MemoryProvider]:
    providers = []
    for index, entry in enumerate(entries):
        try:
            providers.append(MemoryProvider(entry.name, entry.skills, entry.complete, entry.fail))
        except ValueError as error:
            raise HostError.input(f"provider {index}: {error}") from None
    return providers


def _set_runtime(registry: SkillRegistry, entries: list[RuntimeEntry]) -> None:
    registry.clear_runtime()
    for index, entry in enumerate(entries):
        skill = RuntimeSkill(entry.name, entry.description, entry.content)
        if entry.invocation is not None:
            skill.invocation = entry.invocation
        skill.when_to_use = entry.when_to_use
        skill.source = entry.source if entry.source is not None else skill.source
        skill.provider = entry.provider if entry.provider is not None else skill.provider
        skill.resource_base = entry.resource_base
        try:
            registry.register_runtime(skill)
        except RegistryFailure as error:
            raise HostError.input(f"runtime skill {index}: {error}") from None


def _seed(session: SessionLog, events: list[SeedEvent]) -> None:
    for event in events:
        if event.type == "user/message":
            _guard(lambda: session.append_user_messages([(event.data, event.surface_op or "append")]))
        else:
            _guard(lambda: session.append_event(event.type, event.data, event.surface_op))

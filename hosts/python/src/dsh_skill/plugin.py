"""The plugin as the host uses it: each export called in the sandbox, and
everything it returns checked before use (spec §8.5). Messages are
user-message ``data`` dicts as the session log stores them (``content``,
``source``, ``role``, ``id``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wasmtime.component import Record, Variant

from .errors import HostError
from .imports import CallContext, StepState, content_to_wit, record
from .jsonvalue import JsonSyntaxError, Ordered, parse, stringify
from .names import MAX_DIGEST_BYTES, MAX_SEARCH_MATCHES, is_digest, is_skill_name
from .output import OutputCheck
from .records import CATALOG_SOURCE, read_record
from .registry import SkillRegistry
from .sandbox import Sandbox, SandboxLimits
from .session import TOOL_RESULT, SessionLog, new_message_id

TOOL_VIEWS = ("visible", "hidden", "shadowed")


def user_message(source: Any, text: str) -> dict[str, Any]:
    """A user-message ``data`` dict with one text block and a fresh id."""
    return {"content": [{"type": "text", "text": text}], "source": source, "role": "user", "id": new_message_id()}


def single_text(data: Any) -> str | None:
    """The text of a message whose content is exactly one text block, else None."""
    content = data.get("content") if isinstance(data, dict) else None
    if not isinstance(content, list) or len(content) != 1:
        return None
    block = content[0]
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return block["text"]
    return None


@dataclass
class Enter:
    """Enter the step with these messages (``data`` dicts), in order."""

    messages: list[dict[str, Any]]


@dataclass
class Reject:
    """Do not run the step; the plugin cannot change it."""

    reason: str | None = None


Decision = Enter | Reject


@dataclass
class StepOutcome:
    """A pre-step's result: the validated ``decision``, or ``aborted``."""

    decision: Decision | None
    aborted: bool = False


@dataclass
class ToolOutcome:
    """A ``skill`` call's result: ``value`` (the skill, a file of it, or ``{"matches": […]}``)
    and ``text``, or ``error``; ``loaded`` is what the plugin asked to record."""

    value: dict[str, Any] | None = None
    text: str | None = None
    error: str | None = None
    loaded: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def model_text(self) -> str:
        """What the model sees: the text, or the error as is."""
        return self.text if self.error is None else self.error  # type: ignore[return-value]


@dataclass
class ToolDefinition:
    name: str
    description: str
    parameters: Any


class Plugin:
    """A sandboxed plugin: ``create`` it once, then call it for every step and tool call."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    @classmethod
    def create(
        cls,
        component: bytes | None = None,
        config: str | dict[str, Any] = "{}",
        limits: SandboxLimits | None = None,
        cache_dir: Path | None | bool = True,
    ) -> Plugin:
        """Loads ``component`` (the packaged plugin when None) and configures it
        with ``config`` (JSON text or a dict). ``cache_dir``: True for the
        default cache, a path, or None/False for none."""
        if component is None:
            from . import packaged_component

            component = packaged_component()
        if not isinstance(config, str):
            config = stringify(config)
        if cache_dir is True:
            from .sandbox import default_cache_dir

            cache_dir = default_cache_dir()
        return cls(Sandbox.create(component, config, limits, cache_dir or None))

    @property
    def limits(self) -> SandboxLimits:
        return self.sandbox.limits

    def _check(self, call: str) -> OutputCheck:
        return OutputCheck(call, self.sandbox.limits.output)

    def definition(self) -> ToolDefinition:
        """The ``skill`` tool's definition, as the plugin declares it."""
        value = self.sandbox.call("definition", "definition", [], CallContext())
        return checked_definition(value, self._check("definition"))

    def pre_step(
        self,
        registry: SkillRegistry,
        session: SessionLog,
        proposal: Decision,
        cwd: str | None = None,
        tool_view: str = "visible",
        aborted: Callable[[], bool] | None = None,
    ) -> StepOutcome:
        """Runs the pre-step for ``session`` on ``proposal`` (what the host's
        other listeners decided). Returns the validated decision, or
        ``aborted``; appending it is the caller's step boundary (see :func:`run_step`)."""
        is_aborted = aborted or (lambda: False)
        if tool_view not in TOOL_VIEWS:
            raise ValueError(f"tool_view must be one of {TOOL_VIEWS}, not {tool_view!r}")
        proposed = [] if isinstance(proposal, Reject) else [_message_to_wit(data) for data in proposal.messages]
        context = record(
            session=session.key,
            registry_revision=registry.cached_revision(cwd),
            history_version=session.history_version,
            tool_view=tool_view,
            aborted=is_aborted(),
            # proposal: enter(u32) | reject, told apart by type: an int or None.
            proposal=None if isinstance(proposal, Reject) else len(proposed),
        )
        step = StepState(proposed)
        host = CallContext(registry, session, cwd, step, is_aborted)
        returned = self.sandbox.call("pre-step", "pre-step", [context], host)
        if returned.tag == "err":  # result<_, step-error>: tagged
            return StepOutcome(None, aborted=True)
        return StepOutcome(apply_decision(proposal, step, self._check("pre-step")))

    def invoke(self, registry: SkillRegistry, arguments: str | dict[str, Any], cwd: str | None = None) -> ToolOutcome:
        """Calls the ``skill`` tool with the model's JSON arguments."""
        text = arguments if isinstance(arguments, str) else stringify(arguments)
        context = CallContext(registry, None, cwd)
        returned = self.sandbox.call("invoke", "invoke", [text], context)
        return checked_tool_outcome(returned, text, self._check("invoke"), context.files_read)

    def system_prompt(self, registry: SkillRegistry, cwd: str | None = None) -> str:
        """Pi-style disclosure: the system-prompt block (empty when no skill is visible)."""
        returned = self.sandbox.call("system-prompt", "system-prompt", [], CallContext(registry, None, cwd))
        return checked_text(returned, "the system prompt", self._check("system-prompt"))

    def expand(self, registry: SkillRegistry, text: str, cwd: str | None = None) -> str:
        """Pi's ``/skill:NAME args``: the expanded text, or ``text`` unchanged."""
        returned = self.sandbox.call("expand", "expand", [text], CallContext(registry, None, cwd))
        return checked_text(returned, "the expansion", self._check("expand"))


def checked_definition(value: Record, check: OutputCheck) -> ToolDefinition:
    """The ``skill`` tool's definition as ``definition`` returned it, checked
    (spec §8.5): its texts within the caps, its parameters JSON."""
    check.text(lambda: "the name", value.name)
    check.text(lambda: "the description", value.description)
    check.text(lambda: "the parameters", value.parameters)
    try:
        parameters = parse(value.parameters)
    except JsonSyntaxError as error:
        raise HostError.invalid_output("definition", f"parameters are not JSON: {error}") from None
    return ToolDefinition(value.name, value.description, parameters)


def checked_text(returned: str | None, what: str, check: OutputCheck) -> str:
    """The text ``system-prompt`` or ``expand`` returned, checked (spec §8.5):
    an abort is invalid outside a step; ``what`` names the text in a cap's error."""
    if returned is None:  # result<string, step-error>: a str or None
        raise HostError.invalid_output(check.call, "reported an abort outside a step")
    check.text(lambda: what, returned)
    return returned


def _message_to_wit(data: Any) -> Record:
    if not isinstance(data, dict) or not isinstance(data.get("source"), dict):
        raise HostError.input(f"a proposed message has no source object: {stringify(data)}")
    if not isinstance(data.get("content"), list):
        raise HostError.input(f"a proposed message has no content array: {stringify(data)}")
    return record(source=stringify(data["source"]), content=content_to_wit(data["content"]))


def apply_decision(proposal: Decision, step: StepState, check: OutputCheck) -> Decision:
    """Applies what the plugin decided to the proposal, checking it first (spec §8.5)."""

    def invalid(reason: str) -> HostError:
        return HostError.invalid_output("pre-step", reason)

    if step.decisions > 1:
        raise invalid(f"it decided {step.decisions} times; a pre-step decides at most once")
    if isinstance(proposal, Reject):
        if step.decided is None:
            return proposal
        raise invalid("the plugin may not change a reject")
    if step.decided is None:
        return proposal
    # An index kept (an int) or an added `message` Record: a 0.3.0 plugin's typed
    # record was written as its source by imports.written, a 0.2.0 one's is as it wrote it.
    check.added_count(sum(1 for entry in step.decided if not isinstance(entry, int)))
    invocable = _gesture_names(proposal.messages)
    kept_up_to = 0
    catalogs = notes = reloads = added_count = 0
    injected: set[str] = set()
    noticed: set[str] = set()
    messages: list[dict[str, Any]] = []
    count = len(proposal.messages)
    for entry in step.decided:
        if isinstance(entry, int):
            if entry < kept_up_to or entry >= count:
                raise invalid(f"it kept proposed message {entry} out of order or out of range ({count} proposed)")
            kept_up_to = entry + 1
            messages.append(proposal.messages[entry])
            continue
        added_count += 1
        ordinal = added_count
        check.text(lambda: f"added message {ordinal}'s source", entry.source)
        for j, block in enumerate(entry.content, start=1):
            check.text(lambda j=j: f"added message {ordinal}'s content block {j}", block.payload)
        kind, name, data = added_message(entry, invalid)
        if kind in ("catalog", "skill-catalog", "catalog-update"):
            catalogs += 1
            if catalogs > 1:
                raise invalid("more than one catalog was added")
        elif kind == "invocation-note":
            notes += 1
            if notes > 1:
                raise invalid("more than one invocation note was added")
        elif kind == "reload-notice":
            reloads += 1
            if reloads > 1:
                raise invalid("more than one reload notice was added")
        elif kind in ("changed-notice", "gone-notice"):
            assert name is not None
            if name in noticed:
                raise invalid(f'skill "{name}" got more than one notice')
            noticed.add(name)
        elif kind == "invocation":
            assert name is not None
            if name not in invocable or name in injected:
                raise invalid(f"skill \"{name}\" was injected without a user's /{name}")
            injected.add(name)
        messages.append(data)
    return Enter(messages)


def added_message(message: Record, invalid: Callable[[str], HostError]) -> tuple[str, str | None, dict[str, Any]]:
    """Checks one added message: JSON source, one text block, a record the
    plugin may write. Returns (record, name, data in the log's shape)."""
    try:
        source = parse(message.source)
    except JsonSyntaxError as error:
        raise invalid(f"an added message's source is not JSON: {error}") from None
    content = message.content
    if len(content) != 1 or content[0].tag != "text":
        raise invalid("an added message must be exactly one text block")
    read = read_record(source)
    if read.refused == "not-a-notice":
        raise invalid(f"an added skill notice has source {stringify(source)}, which is not a changed, gone or reload notice")
    if read.refused is not None:
        raise invalid(
            f"an added message has source {stringify(source)}; the plugin may only write {stringify(CATALOG_SOURCE)} or a skill invocation"
        )
    assert read.record is not None
    return read.record, read.name, user_message(source, content[0].payload)


# Rust's `char::is_whitespace` (Unicode White_Space) plus U+FEFF.
_TOKEN_BREAK = re.compile("[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]")


def _gesture_names(proposed: list[dict[str, Any]]) -> set[str]:
    """Every ``/name`` token in the proposed messages' text blocks."""
    names: set[str] = set()
    for data in proposed:
        blocks = data.get("content") if isinstance(data, dict) and isinstance(data.get("content"), list) else []
        for block in blocks:
            if not isinstance(block, dict) or not isinstance(block.get("text"), str):
                continue
            for token in _TOKEN_BREAK.split(block["text"]):
                if token.startswith("/"):
                    names.add(token[1:])
    return names


def _arguments(text: str) -> Any:
    try:
        return parse(text)
    except JsonSyntaxError:
        return None


def checked_tool_outcome(
    returned: Any, arguments: str, check: OutputCheck, files_read: Collection[tuple[str, str]] = frozenset()
) -> ToolOutcome:
    """A ``skill`` call's result as ``invoke`` returned it for ``arguments``,
    checked (spec §8.5); ``files_read`` holds the ``(name, path)`` the
    registry answered ``text`` for during the call (the only files a
    ``file`` value may be). 0.1.0's value is a skill-result record: read as
    ``skill(…)`` (spec §9.4), as a Record is."""

    def invalid(reason: str) -> HostError:
        return HostError.invalid_output("invoke", reason)

    # result<tool-success, string>: a Record or a str.
    if isinstance(returned, str):
        check.text(lambda: "the error text", returned)
        if not returned.startswith("Error: "):
            raise invalid("a tool error must read `Error: <message>`")
        return ToolOutcome(error=returned)
    text = returned.text
    check.text(lambda: "the text", text)
    value = returned.value
    loaded = returned.loaded
    # tool-value: 0.4.0's skill(record) | matches(list) | file(record) is a
    # Variant (two record cases); 0.3.0's and 0.2.0's skill | matches a Record
    # or a list; 0.1.0's the skill-result Record itself.
    if isinstance(value, Variant):
        case, value = value.tag, value.payload
    else:
        case = "matches" if isinstance(value, list) else "skill"
    if case == "matches":
        return _matches(value, loaded, arguments, text, check, invalid)
    check.text(lambda: "the value's name", value.name)
    check.text(lambda: "the value's provider", value.provider)
    if case == "file":
        check.text(lambda: "the value's path", value.path)
        check.text(lambda: "the value's content", value.content)
        base = None
    else:
        check.text(lambda: "the value's content", value.content)
        base = getattr(value, "resource-base")
        if base is not None:
            check.text(lambda: "the value's resource base", base.payload)
    if not is_skill_name(value.name):
        raise invalid(f"the value names skill {stringify(value.name)}, which is not a valid skill name")
    asked = _arguments(arguments)
    requested = asked.get("name") if isinstance(asked, dict) and isinstance(asked.get("name"), str) else None
    if requested != value.name:
        shown = "no valid name" if requested is None else f'"{requested}"'
        raise invalid(f'the value is skill "{value.name}", but the arguments asked for {shown}')
    if value.provider == "":
        raise invalid(f'the value of skill "{value.name}" names no provider')
    recorded = None
    if loaded is not None:
        digest = getattr(loaded, "body-digest")
        if loaded.name != value.name or loaded.provider != value.provider:
            raise invalid(f'the load it records is skill "{loaded.name}" of provider "{loaded.provider}", not the value\'s')
        if digest is not None and not is_digest(digest):
            raise invalid(f"the load it records has a body digest that is not up to {MAX_DIGEST_BYTES} printable ASCII characters")
        recorded = {"name": loaded.name, "provider": loaded.provider, "bodyDigest": digest}
    # A file only when the registry read it for this call, checked after the
    # value's name, provider and load record (skill-host's validate_named).
    if case == "file" and (value.name, value.path) not in files_read:
        raise invalid(
            f'the value is file {stringify(value.path)} of skill "{value.name}", which the registry did not read for this call'
        )
    ok = Ordered(name=value.name, provider=value.provider)
    if case == "file":
        ok["path"] = value.path
    if base is not None:
        key = {"directory": "path", "url": "url", "opaque": "description"}[base.tag]
        ok["resourceBase"] = Ordered(kind=base.tag, **{key: base.payload})
    ok["content"] = value.content
    return ToolOutcome(value=ok, text=text, loaded=recorded)


def _matches(
    matches: list[Record], loaded: Any, arguments: str, text: str, check: OutputCheck, invalid: Callable[[str], HostError]
) -> ToolOutcome:
    asked = _arguments(arguments)
    if not (isinstance(asked, dict) and isinstance(asked.get("query"), str) and "name" not in asked):
        raise invalid("it returned search matches, but the arguments have no query")
    if len(matches) > MAX_SEARCH_MATCHES:
        raise invalid(f"it returned {len(matches)} search matches; at most {MAX_SEARCH_MATCHES} are allowed")
    seen: set[str] = set()
    found = []
    for index, match in enumerate(matches):
        check.text(lambda: f"search match {index}'s name", match.name)
        check.text(lambda: f"search match {index}'s description", match.description)
        if not is_skill_name(match.name) or match.name in seen:
            raise invalid(
                f"search match {index} names skill {stringify(match.name)}, which is not a valid skill name or is listed twice"
            )
        seen.add(match.name)
        found.append(Ordered(name=match.name, description=match.description))
    if loaded is not None:
        raise invalid("it records a load for search matches")
    return ToolOutcome(value=Ordered(matches=found), text=text)


def tool_result_data(outcome: ToolOutcome) -> dict[str, Any]:
    """The ``data`` of the ``tool/result`` event that records a ``skill`` call
    (DeepSeek Harness's shape; ``record_tool_result`` in the Rust host)."""
    call_id = f"call-{new_message_id()}"
    source: dict[str, Any] = {"kind": "tool", "callId": call_id}
    if outcome.ok and outcome.loaded is not None:
        loaded = {"name": outcome.loaded["name"], "provider": outcome.loaded["provider"]}
        if outcome.loaded.get("bodyDigest") is not None:
            loaded["bodyDigest"] = outcome.loaded["bodyDigest"]
        source["plugin"] = CATALOG_SOURCE["plugin"]
        source["loaded"] = loaded
    return {
        "message": {
            "id": new_message_id(),
            "role": "user",
            "source": source,
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": call_id,
                    "isError": not outcome.ok,
                    "content": [{"type": "text", "text": outcome.model_text}],
                }
            ],
        }
    }


def record_tool_result(session: SessionLog, outcome: ToolOutcome) -> int:
    """Records a ``skill`` call's outcome in ``session`` as a visible ``tool/result``."""
    return session.append_event(TOOL_RESULT, tool_result_data(outcome), "append")


def run_step(
    plugin: Plugin,
    registry: SkillRegistry,
    session: SessionLog,
    proposal: Decision,
    cwd: str | None = None,
    tool_view: str = "visible",
    aborted: Callable[[], bool] | None = None,
) -> StepOutcome:
    """A pre-step and its step boundary: the entered messages are appended to
    ``session`` in one write (nothing is appended when the call fails). The
    session's exclusive lock is held from reading the history to appending
    (spec §5.3, step lock), so two hosts stepping one session take turns."""
    with session.hold():
        outcome = plugin.pre_step(registry, session, proposal, cwd, tool_view, aborted)
        if isinstance(outcome.decision, Enter) and outcome.decision.messages:
            session.append_user_messages([(data, "append") for data in outcome.decision.messages])
    return outcome

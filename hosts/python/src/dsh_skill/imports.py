"""The host side of the plugin's imports (``dsh:skill/registry``,
``dsh:skill/session``, ``dsh:skill/step``), answering for one call at a time:
the call's registry (for its working directory), session, step and abort flag.

Values are in wasmtime-py's dynamic shapes: a record is a
``wasmtime.component.Record`` whose attributes carry the WIT (kebab-case)
field names; an ``option`` is a value or None; a variant or ``result`` whose
cases wasmtime-py cannot tell apart by Python type is a ``Variant(tag,
payload)``, any other is its payload alone (see the notes on each function).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wasmtime.component import Record, Variant

from . import records
from .jsonvalue import stringify
from .registry import Candidate, FileAnswer, RegistryFailure, ResourceBase, SkillFiles, SkillRegistry
from .session import SessionLog

#: The most references one page carries, whatever the plugin asks for.
MAX_PAGE = 256
#: The most source filters one request may carry.
MAX_FILTERS = 16


def check_filters(filters: list[Any]) -> None:
    """Ends the call when the plugin passes more than :data:`MAX_FILTERS` source filters."""
    if len(filters) > MAX_FILTERS:
        raise HostImportError(
            f"the plugin passed {len(filters)} source filters to `session.list-user-messages`; at most {MAX_FILTERS} are allowed"
        )


class HostImportError(Exception):
    """The host refusing an import call: the call traps with this text."""


def record(**fields: Any) -> Record:
    """A WIT record; ``snake_case`` keyword names become the WIT's ``kebab-case``."""
    value = Record()
    for name, item in fields.items():
        setattr(value, name.replace("_", "-"), item)
    return value


def field_of(value: Any, name: str) -> Any:
    return getattr(value, name)


def resource_base_to_wit(base: ResourceBase | None) -> Variant | None:
    # resource-base: three string cases, so tagged.
    return None if base is None else Variant(base.kind, base.value)


def content_to_wit(blocks: list[Any]) -> list[Variant]:
    """Stored blocks as WIT blocks: ``{"type":"text","text":…}`` is text, anything else its JSON (tagged)."""
    return [
        Variant("text", block["text"])
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        else Variant("other", stringify(block))
        for block in blocks
    ]


def _summary(candidate: Candidate) -> Record:
    return record(
        name=candidate.name,
        description=candidate.description,
        when_to_use=candidate.when_to_use,
        invocation=record(
            model_invocable=candidate.invocation.model_invocable, user_invocable=candidate.invocation.user_invocable
        ),
        provider=candidate.provider,
        source=candidate.source,
        path=candidate.path,
        body_digest=candidate.body_digest,
    )


def _record_of(source: Variant) -> records.Record:
    """The record a typed source (``added-source``, tagged) is."""
    tag, payload = source.tag, source.payload
    if tag == "catalog":
        return records.Catalog()
    if tag == "skill-catalog":
        entries = tuple(records.CatalogEntry(entry.name, entry.description) for entry in payload.entries)
        return records.SkillCatalog(payload.update, entries, payload.coverage)
    if tag == "catalog-update":
        return records.CatalogUpdate(tuple(payload))
    if tag == "invocation":
        return records.Invocation(payload)
    if tag == "invocation-note":
        return records.InvocationNote()
    if tag == "changed":
        return records.ChangedNotice(payload.name, payload.provider, getattr(payload, "body-digest"))
    if tag == "gone":
        return records.GoneNotice(payload)
    if tag == "reload":
        return records.ReloadNotice(tuple(payload))
    raise HostImportError(f"the plugin added a message of unknown source `{tag}`")


def skill_files_to_wit(files: SkillFiles | None) -> Record | None:
    """``option<skill-files>``."""
    if files is None:
        return None
    return record(files=[record(path=file.path, size=file.size) for file in files.files], total=files.total)


def file_answer_to_wit(answer: FileAnswer) -> Variant:
    """A ``file-answer`` (tagged: two ``u64`` cases)."""
    if answer.kind == "text":
        return Variant("text", answer.text)
    if answer.kind in ("binary", "too-large"):
        return Variant(answer.kind, answer.size)
    return Variant(answer.kind)


def written(added: Record) -> Record:
    """A 0.3.0 plugin's ``added-message`` as the session stores it: its record
    written by :func:`~dsh_skill.records.to_json`, its text as the one block.
    The result is checked as a source a plugin wrote is (names, digests and
    counts are not in the types)."""
    return record(source=records.to_json(_record_of(added.source)), content=[Variant("text", added.text)])


@dataclass
class StepState:
    """A pre-step's proposed messages (WIT records) and what the plugin
    decided: kept proposed indices (ints) and added messages as ``message``
    records, their sources JSON text whatever the contract version."""

    proposed: list[Record]
    decided: list[Any] | None = None
    decisions: int = 0


def _never() -> bool:
    return False


@dataclass
class CallContext:
    """What one plugin call may reach: ``registry`` and ``session`` may be None;
    ``cwd`` is the only directory the registry answers about; ``step`` is a
    pre-step's state (None in other calls)."""

    registry: SkillRegistry | None = None
    session: SessionLog | None = None
    cwd: str | None = None
    step: StepState | None = None
    aborted: Callable[[], bool] = field(default=_never)
    #: ``(name, path)`` of every file the registry answered ``text`` for in
    #: this call: the only files an ``invoke`` may return (spec §8.5).
    files_read: set[tuple[str, str]] = field(default_factory=set)

    # dsh:skill/registry ---------------------------------------------------

    def snapshot(self, known: int | None) -> Variant:
        # result<snapshot-answer, registry-error>: tagged; snapshot-answer
        # (unchanged | changed(record)) and registry-error (aborted | failed(string)) are not.
        if self.aborted():
            return Variant("err", None)
        if self.registry is None:
            return Variant("ok", record(complete=True, revision=0, skills=[]))
        snapshot = self.registry.snapshot(self.cwd)
        if self.aborted():
            return Variant("err", None)
        if snapshot.complete and known == snapshot.revision:
            return Variant("ok", None)
        skills = [_summary(winner.candidate) for winner in snapshot.skills]
        return Variant("ok", record(complete=snapshot.complete, revision=snapshot.revision, skills=skills))

    def list_skills(self, name: str | None) -> Any:
        # result<list<skill-summary>, registry-error>: untagged, a list, None (aborted) or a str (failed).
        if self.aborted():
            return None
        if self.registry is None:
            return []
        try:
            winners = self.registry.list(self.cwd).skills
        except RegistryFailure as error:
            return str(error)
        if name is not None:
            winners = [winner for winner in winners if winner.candidate.name == name]
        return [_summary(winner.candidate) for winner in winners]

    def get_skill(self, name: str) -> Variant:
        # result<option<skill-definition>, registry-error>: tagged.
        if self.aborted():
            return Variant("err", None)
        if self.registry is None:
            return Variant("ok", None)
        try:
            definition = self.registry.get(self.cwd, name)
        except RegistryFailure as error:
            return Variant("err", str(error))
        if definition is None:
            return Variant("ok", None)
        skill = definition.summary
        return Variant(
            "ok",
            record(
                name=skill.name,
                description=skill.description,
                invocation=record(
                    model_invocable=skill.invocation.model_invocable, user_invocable=skill.invocation.user_invocable
                ),
                provider=skill.provider,
                resource_base=resource_base_to_wit(skill.resource_base),
                path=skill.path,
                content=definition.content,
                body_digest=skill.body_digest,
            ),
        )

    def list_skill_files(self, name: str, limit: int) -> Variant:
        """``list-skill-files`` (contract 0.4.0)."""
        # result<option<skill-files>, registry-error>: tagged, as get-skill's.
        if self.aborted():
            return Variant("err", None)
        if self.registry is None:
            return Variant("ok", None)
        try:
            files = self.registry.list_files(self.cwd, name, limit)
        except RegistryFailure as error:
            return Variant("err", str(error))
        return Variant("ok", skill_files_to_wit(files))

    def read_skill_file(self, name: str, path: str) -> Variant | str | None:
        """``read-skill-file`` (contract 0.4.0); a ``text`` answer is noted in :attr:`files_read`."""
        # result<file-answer, registry-error>: untagged (file-answer is a
        # Variant, registry-error None or a str), so the answer alone, None
        # (aborted) or the failure's text.
        if self.aborted():
            return None
        if self.registry is None:
            return file_answer_to_wit(FileAnswer("unavailable"))
        try:
            answer = self.registry.read_file(self.cwd, name, path)
        except RegistryFailure as error:
            return str(error)
        return self.note_read(name, path, file_answer_to_wit(answer))

    def note_read(self, name: str, path: str, answer: Any) -> Any:
        """Notes ``(name, path)`` when ``answer`` (as lowered) is ``text``; returns it."""
        if isinstance(answer, Variant) and answer.tag == "text":
            self.files_read.add((name, path))
        return answer

    # dsh:skill/session ----------------------------------------------------

    def list_user_messages(self, filters: list[Record], before: int | None, limit: int) -> Record:
        """A page of refs matching any filter, newest first, seqs below ``before``;
        ``next`` only when a further match exists."""
        check_filters(filters)
        session = self.session
        if session is None:
            return record(refs=[], next=None)
        size = min(max(limit, 1), MAX_PAGE)
        wanted = [(f.kind, getattr(f, "plugin")) for f in filters]

        def matches(source: Any) -> bool:
            if not isinstance(source, dict):
                return False
            return any(
                source.get("kind") == kind and (plugin is None or source.get("plugin") == plugin)
                for kind, plugin in wanted
            )

        streams = []
        for kind in dict.fromkeys(kind for kind, _ in wanted):
            messages = session.user_messages_of_kind(kind)
            index = len(messages) - 1
            while index >= 0 and before is not None and messages[index].seq >= before:
                index -= 1
            streams.append([messages, index])
        refs: list[Record] = []
        next_seq = None
        while True:
            newest = None
            for stream in streams:
                if stream[1] >= 0 and (newest is None or stream[0][stream[1]].seq > newest[0][newest[1]].seq):
                    newest = stream
            if newest is None:
                break
            message = newest[0][newest[1]]
            newest[1] -= 1
            if not matches(message.source):
                continue
            if len(refs) == size:
                next_seq = refs[-1].seq
                break
            refs.append(record(seq=message.seq, visible=session.is_visible(message.seq)))
        return record(refs=refs, next=next_seq)

    def get_user_message(self, seq: int) -> Record | None:
        message = None if self.session is None else self.session.user_message(seq)
        if message is None:
            return None
        return record(source=stringify(message.source), content=content_to_wit(message.content))

    # dsh:skill/step -------------------------------------------------------

    def proposed_messages(self) -> list[Record]:
        return self._step("proposed-messages").proposed

    def decide(self, messages: list[Any]) -> None:
        """0.3.0's ``decide``: a typed added message is :func:`written` as its source."""
        # decided-message: proposed(u32) | added(added-message), told apart by type: an int or a Record.
        self.decide_with(messages, lambda entry: entry if isinstance(entry, int) else written(entry))

    def decide_with(self, messages: list[Any], convert: Callable[[Any], Any]) -> None:
        """Keeps the first decision of a pre-step, each message ``convert``-ed
        (checked after the call); counts them all. ``step.decide`` of any contract version."""
        step = self._step("decide")
        step.decisions += 1
        if step.decided is None:
            step.decided = [convert(entry) for entry in messages]

    def _step(self, function: str) -> StepState:
        if self.step is None:
            raise HostImportError(f"the plugin called `step.{function}` outside a pre-step")
        return self.step

"""A DeepSeek Harness session log (spec §5): a ``{"type":"session",…}``
header, then one event per line (``{"type","seq","time","data",
"surfaceOp"?,"sourceEventSeqs"?}``), user-role messages indexed by source
kind for the plugin's paging, and the model-visible surface as the fold of
the ``surfaceOp`` markers.

User-role messages are the ``user/message`` events and the message of each
``tool/result`` whose ``data.message.source.plugin`` is ``dsh-tool-skill``
(the plugin's record of a load): an ordinary tool result is not indexed and
leaves the history version alone.

A log lives in memory (:meth:`SessionLog.in_memory`) or in a JSONL file
(:meth:`SessionLog.open`): the file is read once, leniently (torn or
unreadable lines are skipped with a warning), and every append is one write
of whole lines under an exclusive ``flock``, after reading what other
processes appended meanwhile.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .jsonvalue import JsonSyntaxError, as_u64, parse, stringify

try:  # POSIX only; elsewhere the log takes no lock.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

USER_MESSAGE = "user/message"
TOOL_RESULT = "tool/result"
MESSAGE_EVENT_TYPES = ("user/message", "assistant/message", "tool/result")
#: The largest seq DeepSeek Harness can write (2^53 - 1).
MAX_SEQ = (1 << 53) - 1
IN_MEMORY_PATH = "<in-memory session>"

_keys = itertools.count(1)
_key_lock = threading.Lock()
_id_counter = itertools.count(1)


class SessionError(Exception):
    """A failure of the session log, worded as the Rust host words it."""


def new_message_id() -> str:
    """A fresh id shaped like a UUIDv7 (time first), unique in this process."""
    data = bytearray(secrets.token_bytes(16))
    millis = int(time.time() * 1000) & 0xFFFFFFFFFFFF
    data[0:6] = millis.to_bytes(6, "big")
    data[6] = 0x70 | (data[6] & 0x0F)
    data[8] = 0x80 | (data[8] & 0x3F)
    data[12:16] = (next(_id_counter) & 0xFFFFFFFF).to_bytes(4, "big")
    h = data.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


Replace = tuple[int, int]  # (start, end) of a replace marker
SurfaceOp = str | Replace  # "append" or a replace


class SurfaceFold:
    """The model-visible surface: a replace is positional; ends that are not
    both on the surface in order hide the nodes whose seqs lie in the range."""

    def __init__(self) -> None:
        self.nodes: list[int] = []
        self.positions: dict[int, int] = {}

    def clone(self) -> SurfaceFold:
        copy = SurfaceFold()
        copy.nodes = list(self.nodes)
        copy.positions = dict(self.positions)
        return copy

    def __contains__(self, seq: int) -> bool:
        return seq in self.positions

    def shadowed_by(self, start: int, end: int) -> list[int] | None:
        first, last = self.positions.get(start), self.positions.get(end)
        if first is None or last is None or first > last:
            return None
        return self.nodes[first : last + 1]

    def whole_range(self) -> Replace | None:
        return (self.nodes[0], self.nodes[-1]) if self.nodes else None

    def apply(self, seq: int, op: SurfaceOp) -> str | None:
        """Folds in event ``seq`` with marker ``op``; returns a warning when it fell back."""
        if op == "append":
            self.positions[seq] = len(self.nodes)
            self.nodes.append(seq)
            return None
        assert isinstance(op, tuple)
        start, end = op
        first, last = self.positions.get(start), self.positions.get(end)
        warning = None
        if first is not None and last is not None and first <= last:
            hidden = self.nodes[first : last + 1]
            self.nodes[first : last + 1] = [seq]
        else:
            in_range = [node for node in self.nodes if start <= node <= end]
            if not in_range:
                self.positions[seq] = len(self.nodes)
                self.nodes.append(seq)
                return f"seq {seq} replaces {start}..={end}, but no surface node lies in that range; appended it at the end"
            at = next(i for i, node in enumerate(self.nodes) if start <= node <= end)
            hidden = in_range
            self.nodes = [node for node in self.nodes if not start <= node <= end]
            self.nodes.insert(at, seq)
            warning = (
                f"seq {seq} replaces {start}..={end}, whose ends are not both on the surface in that order; "
                f"hid the {len(hidden)} surface node(s) with seqs in that range instead"
            )
        for node in hidden:
            self.positions.pop(node, None)
        self.positions = {node: position for position, node in enumerate(self.nodes)}
        return warning


@dataclass
class UserMessage:
    seq: int
    source: Any
    content: list[Any]


@dataclass
class _Index:
    messages: list[UserMessage] = field(default_factory=list)
    by_seq: dict[int, UserMessage] = field(default_factory=dict)
    by_kind: dict[str, list[UserMessage]] = field(default_factory=dict)

    def add(self, seq: int, data: Any) -> None:
        source = data.get("source") if isinstance(data, dict) else None
        content = data.get("content") if isinstance(data, dict) and isinstance(data.get("content"), list) else []
        kind = source.get("kind") if isinstance(source, dict) and isinstance(source.get("kind"), str) else ""
        message = UserMessage(seq, source, content)
        self.messages.append(message)
        self.by_seq[seq] = message
        self.by_kind.setdefault(kind, []).append(message)


def user_role_message(kind: str, data: Any) -> Any:
    """The user-role message an event carries, or None."""
    if kind == USER_MESSAGE:
        return data
    if kind != TOOL_RESULT or not isinstance(data, dict) or "message" not in data:
        return None
    message = data["message"]
    source = message.get("source") if isinstance(message, dict) else None
    if isinstance(source, dict) and source.get("plugin") == "dsh-tool-skill" and isinstance(message.get("content"), list):
        return message
    return None


def _op_json(op: SurfaceOp) -> Any:
    return "append" if op == "append" else {"op": "replace", "start": op[0], "end": op[1]}


def _event_line(event: dict[str, Any]) -> str:
    line = f'{{"type":{stringify(event["type"])},"seq":{event["seq"]},"time":{event["time"]},"data":{stringify(event["data"])}'
    if "surfaceOp" in event:
        op = event["surfaceOp"]
        line += ',"surfaceOp":' + ('"append"' if op == "append" else f'{{"op":"replace","start":{op[0]},"end":{op[1]}}}')
    if "sourceEventSeqs" in event:
        line += ',"sourceEventSeqs":[' + ",".join(str(s) for s in event["sourceEventSeqs"]) + "]"
    return line + "}"


def _header_line(header: dict[str, Any]) -> str:
    fields = f'"type":"session","version":0,"id":{stringify(header["id"])},"createdAt":{header["createdAt"]}'
    if header.get("cwd") is not None:
        fields += f',"cwd":{stringify(header["cwd"])}'
    return "{" + fields + "}"


class SessionLog:
    """A session log, in memory or backed by a JSONL file. Seqs are ints."""

    def __init__(self, cwd: str | None = None, path: Path | None = None) -> None:
        with _key_lock:
            #: Unique among the logs of this process (the step context's ``session``).
            self.key: int = next(_keys)
        self.path = path
        self.header: dict[str, Any] = {"type": "session", "version": 0, "id": new_message_id(), "createdAt": int(time.time() * 1000)}
        if cwd is not None:
            self.header["cwd"] = cwd
        self.header_written = path is None
        self.events: list[dict[str, Any]] = []
        self.surface = SurfaceFold()
        self._index = _Index()
        #: Bumped by every user-role message appended and every replace (the step context's ``history-version``).
        self.history_version = 0
        self.warnings: list[str] = []
        self._read_bytes = 0
        self._last_seq: int | None = None
        #: The handle whose exclusive lock :meth:`hold` holds, if any.
        self._held: Any = None

    # -- opening -----------------------------------------------------------

    @classmethod
    def in_memory(cls, cwd: str | None = None) -> SessionLog:
        return cls(cwd)

    @classmethod
    def open(cls, path: str | os.PathLike[str], cwd: str | None = None) -> SessionLog:
        """Opens a DeepSeek Harness JSONL log; a missing or empty file is a new
        session whose header is written with the first append."""
        log = cls(cwd, Path(path))
        log._refresh()
        return log

    @property
    def display_path(self) -> str:
        return IN_MEMORY_PATH if self.path is None else str(self.path)

    def _regular(self, fd: int) -> None:
        """Refuses what is not a regular file (spec §5.3), before a byte is read or written."""
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            raise SessionError(f"session log {self.display_path}: not a regular file ({_kind(mode)})")

    def _open_fd(self, flags: int) -> int:
        """The path opened without blocking (a FIFO cannot hang the open) and checked regular."""
        assert self.path is not None
        fd = os.open(self.path, flags | getattr(os, "O_NONBLOCK", 0), 0o644)
        self._regular(fd)
        if hasattr(os, "O_NONBLOCK"):
            os.set_blocking(fd, True)
        return fd

    def _refresh(self, locked: bool = False) -> None:
        """Reads what was appended to the file since it was last read, under a
        shared lock unless the caller holds the exclusive one."""
        assert self.path is not None
        try:
            try:
                fd = self._open_fd(os.O_RDONLY)
            except FileNotFoundError:
                return
            with os.fdopen(fd, "rb") as handle:
                if fcntl is not None and not locked:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
                handle.seek(self._read_bytes)
                chunk = handle.read()
        except OSError as error:
            raise SessionError(f"cannot read {self.path}: {error.strerror}") from None
        if not chunk:
            return
        end = chunk.rfind(b"\n") + 1
        complete, torn = chunk[:end], chunk[end:]
        lines = complete.split(b"\n")[:-1]
        number = self._lines_read
        for raw in lines:
            number += 1
            self._read_line(number, raw, torn_note="")
        self._read_bytes += end
        self._lines_read = number
        if torn:
            self._read_line(number + 1, torn, torn_note=" (the file's last line has no newline: a torn write?)")

    _lines_read = 0

    def _warn(self, text: str) -> None:
        self.warnings.append(text)

    def _read_line(self, number: int, raw: bytes, torn_note: str) -> None:
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            return
        try:
            value = parse(text)
        except JsonSyntaxError as error:
            self._warn(f"line {number}: skipped: unreadable JSON ({error}){torn_note}")
            return
        if not isinstance(value, dict):
            self._warn(f"line {number}: skipped: not a JSON object{torn_note}")
            return
        kind = value.get("type")
        if not isinstance(kind, str):
            self._warn(f"line {number}: skipped: no \"type\"")
            return
        if kind == "session":
            if self.header_written or self.events:
                self._warn(f"line {number}: skipped: a session header after the first line")
                return
            self._read_header(value)
            return
        if "seq" not in value:
            self._warn(f"line {number}: skipped {kind}: no seq")
            return
        seq = as_u64(value["seq"])
        if seq is None:
            self._warn(f"line {number}: skipped {kind}: seq {stringify(value['seq'])} is not a non-negative integer")
            return
        if seq > MAX_SEQ:
            self._warn(f"line {number}: skipped {kind}: seq {seq} is above {MAX_SEQ}, the largest DeepSeek Harness can write")
            return
        if self._last_seq is not None and seq <= self._last_seq:
            relation = "a duplicate of" if seq == self._last_seq else "older than"
            self._warn(f"line {number}: ignored {kind}: seq {seq} is {relation} seq {self._last_seq} read before it")
            return
        if not self.header_written:
            self.header_written = True  # a synthetic header: the file has events but none
            self.header["id"] = self.path.stem if self.path is not None else self.header["id"]
            created = as_u64(value.get("time"))
            if created is not None:
                self.header["createdAt"] = created
            self._warn(f'line 1: no session header; using a synthetic one (id "{self.header["id"]}", from the file name)')
        op: SurfaceOp | None = None
        marker = value.get("surfaceOp")
        if marker is not None:
            op = self._marker(marker)
            if op is None or kind not in MESSAGE_EVENT_TYPES:
                if op is None:
                    self._warn(f"line {number}: {kind} seq {seq} has an invalid surfaceOp {stringify(marker)}; it stays off the surface")
                else:
                    self._warn(f"line {number}: {kind} seq {seq} cannot carry a surfaceOp; ignored")
                op = None
        event: dict[str, Any] = {"type": kind, "seq": seq, "time": value.get("time", 0), "data": value.get("data")}
        if op is not None:
            event["surfaceOp"] = op
        self._last_seq = seq
        self.events.append(event)
        if op is not None:
            warning = self.surface.apply(seq, op)
            if warning is not None:
                self._warn(f"line {number}: {warning}")
        message = user_role_message(kind, event["data"])
        if message is not None:
            if kind == USER_MESSAGE and not (isinstance(message, dict) and isinstance(message.get("content"), list)):
                self._warn(f"line {number}: user message seq {seq} not indexed: its data has no content list")
            else:
                self._index.add(seq, message)
        if message is not None or (op is not None and op != "append"):
            self.history_version += 1

    @staticmethod
    def _marker(marker: Any) -> SurfaceOp | None:
        if marker == "append":
            return "append"
        if isinstance(marker, dict) and marker.get("op") == "replace":
            start, end = as_u64(marker.get("start")), as_u64(marker.get("end"))
            if start is not None and end is not None:
                return (start, end)
        return None

    def _read_header(self, value: dict[str, Any]) -> None:
        def bad(reason: str) -> SessionError:
            return SessionError(f"session log {self.display_path}: bad session header: {reason}")

        if "version" not in value:
            raise bad("version is missing")
        if value["version"] != 0 or isinstance(value["version"], bool):
            raise bad(f"version must be 0, got {stringify(value['version'])}; the log was written by another harness version")
        if "id" not in value:
            raise bad("id is missing")
        if not isinstance(value["id"], str) or value["id"] == "":
            raise bad(f"id must be a non-empty string, got {stringify(value['id'])}")
        if "createdAt" not in value:
            raise bad("createdAt is missing")
        if as_u64(value["createdAt"]) is None:
            raise bad(f"createdAt must be a non-negative integer, got {stringify(value['createdAt'])}")
        cwd = value.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise bad(f"cwd must be a string, got {stringify(cwd)}")
        self.header = {"type": "session", "version": 0, "id": value["id"], "createdAt": value["createdAt"]}
        if cwd is not None:
            self.header["cwd"] = cwd
        self.header_written = True

    # -- reading -----------------------------------------------------------

    @property
    def cwd(self) -> str | None:
        cwd = self.header.get("cwd")
        return cwd if isinstance(cwd, str) else None

    def next_seq(self) -> int:
        return 0 if self._last_seq is None else self._last_seq + 1

    def is_visible(self, seq: int) -> bool:
        return seq in self.surface

    def user_messages_of_kind(self, kind: str) -> list[UserMessage]:
        """The user-role messages whose source kind is ``kind``, oldest first."""
        return self._index.by_kind.get(kind, [])

    def user_message(self, seq: int) -> UserMessage | None:
        return self._index.by_seq.get(seq)

    # -- appending ---------------------------------------------------------

    def append_user_messages(self, messages: list[tuple[Any, SurfaceOp | None]]) -> list[int]:
        """Appends user messages (``(data, op)`` pairs) as one batch; returns their seqs."""
        return self._append([(USER_MESSAGE, data, op) for data, op in messages])

    def append_event(self, kind: str, data: Any, op: SurfaceOp | None = None) -> int:
        """Appends any event, with an optional surface marker."""
        return self._append([(kind, data, op)])[0]

    def compact(self, summary: str) -> int:
        """Appends a summary that replaces the whole current surface (spec §5.4)."""
        data = {
            "content": [{"type": "text", "text": summary}],
            "source": {"kind": "plugin", "plugin": "compaction"},
            "role": "user",
            "id": new_message_id(),
        }
        return self._append([(USER_MESSAGE, data, "whole-surface")])[0]

    def to_jsonl(self) -> str:
        """The log as JSONL: the header, then every event, keys in the harness's order."""
        return "".join(line + "\n" for line in [_header_line(self.header), *(_event_line(e) for e in self.events)])

    def _append(self, requests: list[tuple[str, Any, Any]]) -> list[int]:
        for kind, data, op in requests:
            problem = _event_problem(kind, data, op)
            if problem is not None:
                raise SessionError(f"session log {self.display_path}: cannot append {kind}: {problem}")
        if self.path is None:
            return self._plan_and_commit(requests, None)
        if self._held is not None:
            return self._commit_locked(requests, self._held)
        with self._locked() as handle:
            return self._commit_locked(requests, handle)

    def _locked(self) -> Any:
        """The file opened for appending (created if missing) under an exclusive ``flock``."""
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = os.fdopen(self._open_fd(os.O_WRONLY | os.O_APPEND | os.O_CREAT), "ab")
        if fcntl is not None:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            except BaseException:
                handle.close()
                raise
        return handle  # closing it releases the lock

    def _commit_locked(self, requests: list[tuple[str, Any, Any]], handle: Any) -> list[int]:
        size = os.fstat(handle.fileno()).st_size
        if size < self._read_bytes:
            raise SessionError(
                f"session log {self.display_path}: the file shrank from {self._read_bytes} to {size} bytes since it was read; "
                "refusing to append to a rewritten log"
            )
        self._refresh(locked=True)  # what other processes appended first
        return self._plan_and_commit(requests, handle)

    @contextlib.contextmanager
    def hold(self) -> Iterator[SessionLog]:
        """Holds the exclusive lock (spec §5.3, step lock) until the block
        ends, having read what other processes appended: appends inside it
        write under this lock. An in-memory log holds nothing."""
        if self.path is None or self._held is not None:
            yield self
            return
        existed = self.path.exists()
        handle = self._locked()
        try:
            self._held = handle
            self._refresh(locked=True)
            yield self
        finally:
            self._held = None
            # A file this hold created, with nothing appended, is removed again, still under the lock.
            if not existed and not self.header_written and os.fstat(handle.fileno()).st_size == 0:
                with contextlib.suppress(OSError):
                    self.path.unlink()
            handle.close()

    def _plan_and_commit(self, requests: list[tuple[str, Any, Any]], handle: Any) -> list[int]:
        surface = self.surface.clone()  # plan on a copy: a refused batch changes nothing
        now = int(time.time() * 1000)
        seq = self.next_seq()
        planned: list[dict[str, Any]] = []
        for kind, data, op in requests:
            if op == "whole-surface":
                op = surface.whole_range() or "append"
            shadowed = None
            if op is not None and op != "append":
                shadowed = surface.shadowed_by(*op)
                if shadowed is None:
                    start, end = op
                    raise SessionError(
                        f"session log {self.display_path}: cannot replace surface range {start}..={end}: {_range_problem(surface, op)}"
                    )
            if seq > MAX_SEQ:
                raise SessionError(
                    f"session log {self.display_path}: cannot append {kind}: its seq {seq} would be above {MAX_SEQ}, the largest DeepSeek Harness can read"
                )
            if op is not None:
                surface.apply(seq, op)
            event: dict[str, Any] = {"type": kind, "seq": seq, "time": now, "data": data}
            if op is not None:
                event["surfaceOp"] = op
            if shadowed is not None:
                event["sourceEventSeqs"] = shadowed
            planned.append(event)
            seq += 1
        if handle is not None:
            lines = "".join(_event_line(e) + "\n" for e in planned)
            if not self.header_written:
                lines = _header_line(self.header) + "\n" + lines
            size = handle.seek(0, os.SEEK_END)
            if size > self._read_bytes:  # a torn last line: start on a line of our own
                lines = "\n" + lines
            encoded = lines.encode("utf-8")
            try:
                handle.write(encoded)
                handle.flush()
                os.fsync(handle.fileno())
            except OSError:
                handle.truncate(size)
                raise
            self._read_bytes = size + len(encoded)
            self._lines_read += lines.count("\n")
            self.header_written = True
        self.surface = surface
        for event in planned:
            self.events.append(event)
            self._last_seq = event["seq"]
            message = user_role_message(event["type"], event["data"])
            if message is not None:
                self._index.add(event["seq"], message)
            if message is not None or event.get("surfaceOp", "append") != "append":
                self.history_version += 1
        return [event["seq"] for event in planned]


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a file"


def _event_problem(kind: str, data: Any, op: Any) -> str | None:
    if kind in ("", "session"):
        return "not an event type"
    if op is not None and kind not in MESSAGE_EVENT_TYPES:
        return "only user/message, assistant/message, tool/result events carry a surfaceOp"
    if kind == USER_MESSAGE:
        if not isinstance(data, dict):
            return "data must be a user-message object"
        if not isinstance(data.get("content"), list):
            return "data.content must be a list of content blocks"
    return None


def _range_problem(surface: SurfaceFold, op: Replace) -> str:
    start, end = op
    if start not in surface:
        return f"seq {start} is not on the surface"
    if end not in surface:
        return f"seq {end} is not on the surface"
    return f"seq {start} comes after seq {end} on the surface"

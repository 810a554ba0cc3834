"""A DeepSeek Harness session log (spec §5): a ``{"type":"session",…}``
header, then one event per line (``{"type","seq","time","data",
"surfaceOp"?,"sourceEventSeqs"?}``), user-role messages indexed by source
kind for the plugin's paging (:mod:`.session_index`), and the model-visible
surface as the fold of the ``surfaceOp`` markers (:mod:`.session_surface`).

A log lives in memory (:meth:`SessionLog.in_memory`) or in a JSONL file
(:meth:`SessionLog.open`), as skill-host's ``session`` module keeps one: the
file is streamed from the log's cursor, leniently (torn, unreadable or
over-long lines are skipped with a warning), and every append is one write
of whole lines under an exclusive ``flock``, after reading what other
processes appended meanwhile. Locks wait as the log's :class:`LockWait`
says (:mod:`.session_file`); a user message is read back from its line when
asked for, so a rewritten file is an error, never another message.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import session_errors as errors
from .jsonvalue import JsonSyntaxError, as_u64, parse, stringify
from .session_errors import MAX_LINE_BYTES, MAX_SEQ, SessionError
from .session_file import Access, LockedFile, LockWait, open_locked
from .session_index import IndexedMessage, MessageIndex, UserMessage, user_role_message
from .session_lines import TOOL_RESULT, USER_MESSAGE, LineSpan, RawLine, event_line, header_line, read_lines, read_user_message
from .session_surface import Replace, SurfaceFold, SurfaceOp, range_problem

__all__ = [
    "IN_MEMORY_PATH", "MAX_LINE_BYTES", "MAX_SEQ", "MESSAGE_EVENT_TYPES", "TOOL_RESULT", "USER_MESSAGE",
    "IndexedMessage", "LockWait", "Replace", "SessionError", "SessionLog", "SurfaceFold", "SurfaceOp", "UserMessage",
    "new_message_id", "user_role_message",
]

MESSAGE_EVENT_TYPES = ("user/message", "assistant/message", "tool/result")
IN_MEMORY_PATH = "<in-memory session>"
_TORN = " (the file's last line has no newline: a torn write?)"

_keys = itertools.count(1)
_key_lock = threading.Lock()
_id_counter = itertools.count(1)


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


@dataclass
class _Batch:
    """Events planned for one append, their lines (without newlines), and the
    surface after them: nothing of the log changes until the write succeeded."""

    events: list[dict[str, Any]]
    lines: list[bytes]
    surface: SurfaceFold


class SessionLog:
    """A session log, in memory or backed by a JSONL file. Seqs are ints."""

    def __init__(self, cwd: str | None = None, path: Path | None = None, lock_wait: LockWait | None = None) -> None:
        with _key_lock:
            #: Unique among the logs of this process (the step context's ``session``).
            self.key: int = next(_keys)
        self.path = path
        #: How every lock this log takes waits for another holder.
        self.lock_wait = lock_wait or LockWait()
        self.header: dict[str, Any] = {"type": "session", "version": 0, "id": new_message_id(), "createdAt": int(time.time() * 1000)}
        if cwd is not None:
            self.header["cwd"] = cwd
        self.header_written = path is None
        self.events: list[dict[str, Any]] = []
        self.surface = SurfaceFold()
        self._index = MessageIndex()
        #: Bumped by every user-role message appended and every replace (the step context's ``history-version``).
        self.history_version = 0
        self.warnings: list[str] = []
        self._last_seq: int | None = None
        # The cursor: bytes folded in, lines started (an unterminated last one
        # counted), and whether what was read ends with a newline, so an
        # append never glues its line onto a torn one.
        self._offset = 0
        self._lines = 0
        self._ends_with_newline = True
        #: The file whose exclusive lock :meth:`hold` holds, if any.
        self._held: LockedFile | None = None

    # -- opening -----------------------------------------------------------

    @classmethod
    def in_memory(cls, cwd: str | None = None) -> SessionLog:
        return cls(cwd)

    @classmethod
    def open(cls, path: str | os.PathLike[str], cwd: str | None = None, lock_wait: LockWait | None = None) -> SessionLog:
        """Opens a DeepSeek Harness JSONL log; a missing or empty file is a new
        session whose header is written with the first append. Every lock the
        log takes, now and later, waits as ``lock_wait`` says (by default, as
        long as it takes)."""
        log = cls(cwd, Path(path), lock_wait)
        locked = open_locked(log._file, Access.READ, log.lock_wait, "opening", missing_ok=True)
        if locked is not None:
            with locked:
                log._read_new_lines(locked.fd)
        return log

    @property
    def display_path(self) -> str:
        return IN_MEMORY_PATH if self.path is None else str(self.path)

    @property
    def _file(self) -> Path:
        assert self.path is not None, "an in-memory log has no file"
        return self.path

    def refresh(self) -> None:
        """Folds in lines other processes appended since this log last read
        the file (appends and holds do this on their own). A file no append
        has created yet reads as empty; one this log read from must still exist."""
        if self.path is None:
            return
        if self._held is not None:
            self._read_new_lines(self._held.fd)
            return
        locked = open_locked(self.path, Access.READ, self.lock_wait, "reopening", missing_ok=self._offset == 0)
        if locked is not None:
            with locked:
                self._read_new_lines(locked.fd)

    def _append_access(self) -> Access:
        """A log that has read nothing may create the file (a new session); one
        that has read lines must find it: a fresh file would be a log missing its history."""
        return Access.APPEND_OR_CREATE if self._offset == 0 else Access.APPEND

    def _read_new_lines(self, fd: int) -> None:
        """Folds every line after the cursor into the log, streaming. A file
        shorter than what was read was rewritten: refused, whatever the call."""
        try:
            length = os.fstat(fd).st_size
        except OSError as error:
            raise errors.io_error(self.display_path, "reading the length", error) from None
        if length < self._offset:
            raise errors.shrunk(self.display_path, self._offset, length)
        if length == self._offset:
            return
        try:
            for line in read_lines(fd, self._offset):
                self._ingest(line)
        except OSError as error:
            raise errors.io_error(self.display_path, "reading", error) from None

    def _ingest(self, line: RawLine) -> None:
        """Moves the cursor past one line and folds it in; a chunk after an
        unterminated line continues that line's number."""
        if self._ends_with_newline:
            self._lines += 1
        self._ends_with_newline = line.terminated
        self._offset += line.span.length
        if line.text is None:
            self._warn(errors.long_line_skipped(self._lines, line.span.length))
            return
        self._read_line(self._lines, line.text, line.span, "" if line.terminated else _TORN)

    def _warn(self, text: str) -> None:
        self.warnings.append(text)

    def _read_line(self, number: int, raw: bytes, span: LineSpan, torn_note: str) -> None:
        """Folds one line into the log; every problem but a bad header is a
        warning, and the line stays in the file."""
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
                self._index.add(seq, message, span)
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
            return errors.bad_header(self.display_path, reason)

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

    def user_messages_of_kind(self, kind: str) -> list[IndexedMessage]:
        """The user-role messages whose source kind is ``kind``, oldest first."""
        return self._index.by_kind.get(kind, [])

    def user_message(self, seq: int) -> UserMessage | None:
        """The user-role message with this seq, or None when there is none. A
        file's log reads its source and content back from the line it was
        indexed at: an error when that line no longer holds it."""
        indexed = self._index.by_seq.get(seq)
        if indexed is None:
            return None
        if indexed.span is None:
            return UserMessage(seq, indexed.source, indexed.content or [])
        source, content = read_user_message(self._file, seq, indexed.span)
        return UserMessage(seq, source, content)

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
        return "".join(line + "\n" for line in [header_line(self.header), *(event_line(e) for e in self.events)])

    def _append(self, requests: list[tuple[str, Any, Any]]) -> list[int]:
        for kind, data, op in requests:
            problem = _event_problem(kind, data, op)
            if problem is not None:
                raise errors.invalid_event(self.display_path, kind, problem)
        if not requests:
            return []
        if self.path is None:
            return self._commit(self._plan(requests), None)
        if self._held is not None:
            return self._append_locked(self._held, requests)
        # Closing the file lets the lock go, after removing it if this call
        # created it and the append failed (spec §5.3, step lock).
        with self._lock_for_append() as locked:
            return self._append_locked(locked, requests)

    def _lock_for_append(self) -> LockedFile:
        locked = open_locked(self._file, self._append_access(), self.lock_wait, "opening for append")
        assert locked is not None
        return locked

    @contextlib.contextmanager
    def hold(self) -> Iterator[SessionLog]:
        """Holds the exclusive lock (spec §5.3, step lock) until the block
        ends, having read what other processes appended: appends inside it
        write under this lock. A new session's file is created, empty, to be
        locked, and removed again, still under the lock, when nothing was
        appended. An in-memory log holds nothing."""
        if self.path is None or self._held is not None:
            yield self
            return
        with self._lock_for_append() as locked:
            self._read_new_lines(locked.fd)
            self._held = locked
            try:
                yield self
            finally:
                self._held = None

    def _append_locked(self, locked: LockedFile, requests: list[tuple[str, Any, Any]]) -> list[int]:
        """Appends a batch to the file this log holds locked, after folding in
        what others appended: header first for a new file, a newline first
        after a torn line, one write, synced."""
        self._read_new_lines(locked.fd)
        batch = self._plan(requests)
        prefix = b"" if self._ends_with_newline else b"\n"
        new_lines = len(batch.lines)
        if not self.header_written:
            header = header_line(self.header).encode("utf-8")
            reason = errors.line_too_long(len(header))
            if reason is not None:
                raise errors.bad_header(self.display_path, f"cannot write the header: {reason}")
            prefix += header + b"\n"
            new_lines += 1
        batch_at = self._offset + len(prefix)
        data = prefix + b"".join(line + b"\n" for line in batch.lines)
        self._write_durably(locked.fd, data)
        self._offset += len(data)
        self._lines += new_lines
        self._ends_with_newline = True
        self.header_written = True
        return self._commit(batch, batch_at)

    def _write_durably(self, fd: int, data: bytes) -> None:
        """Writes ``data`` at the end of the file and syncs it; on failure the
        bytes that did land are cut off again, so the file stays as it was."""
        length = self._offset
        operation = "writing"
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            operation = "syncing"
            getattr(os, "fdatasync", os.fsync)(fd)
        except OSError as error:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, length)
            raise errors.io_error(self.display_path, operation, error) from None

    def _plan(self, requests: list[tuple[str, Any, Any]]) -> _Batch:
        """Assigns seqs, resolves markers against a copy of the surface and
        serializes the lines, refusing a replace off the surface, a seq past
        what DeepSeek Harness can read, and a line a reader would skip."""
        last = self.next_seq() + len(requests) - 1
        if last > MAX_SEQ:
            reason = f"its seq {last} would be above {MAX_SEQ}, the largest DeepSeek Harness can read"
            raise errors.invalid_event(self.display_path, requests[0][0], reason)
        surface = self.surface.clone()  # plan on a copy: a refused batch changes nothing
        now = int(time.time() * 1000)
        events: list[dict[str, Any]] = []
        for seq, (kind, data, op) in enumerate(requests, start=self.next_seq()):
            if op == "whole-surface":
                op = surface.whole_range() or "append"
            event: dict[str, Any] = {"type": kind, "seq": seq, "time": now, "data": data}
            if op is not None and op != "append":
                shadowed = surface.shadowed_by(*op)
                if shadowed is None:
                    raise errors.bad_range(self.display_path, op[0], op[1], range_problem(surface, op))
                event["sourceEventSeqs"] = shadowed
            if op is not None:
                surface.apply(seq, op)
                event["surfaceOp"] = op
            events.append(event)
        lines = [event_line(event).encode("utf-8") for event in events]
        for event, line in zip(events, lines):
            reason = errors.line_too_long(len(line))
            if reason is not None:
                raise errors.invalid_event(self.display_path, event["type"], reason)
        return _Batch(events, lines, surface)

    def _commit(self, batch: _Batch, written_at: int | None) -> list[int]:
        """Adds a batch that was written (its lines from byte ``written_at``)
        or, in memory (None), accepted; returns its seqs."""
        self.surface = batch.surface
        offset = written_at
        for event, line in zip(batch.events, batch.lines):
            self.events.append(event)
            self._last_seq = event["seq"]
            message = user_role_message(event["type"], event["data"])
            if message is not None:
                self._index.add(event["seq"], message, None if offset is None else LineSpan(offset, len(line) + 1))
            if message is not None or event.get("surfaceOp", "append") != "append":
                self.history_version += 1
            if offset is not None:
                offset += len(line) + 1
        return [event["seq"] for event in batch.events]


def _event_problem(kind: str, data: Any, op: Any) -> str | None:
    """What can be refused without the surface: the type, a marker on a
    type that cannot carry one, a user message's data shape."""
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

"""The lines of a session file (spec §5.1, §5.3), as skill-host's
``session/reading.rs`` and ``wire.rs`` read and write them: streamed from the
log's cursor with the 64 MiB cap (a longer line is skipped without being held
in memory), written in DeepSeek Harness's key order, and a user message read
back from the line it was indexed at, so a rewritten file is noticed instead
of answering with another message."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from . import session_errors as errors
from .jsonvalue import JsonSyntaxError, as_u64, parse, stringify
from .session_file import open_to_read

USER_MESSAGE = "user/message"
TOOL_RESULT = "tool/result"
#: What the reader reads at a time, and skips an over-long line by.
_CHUNK = 1 << 16


@dataclass(frozen=True)
class LineSpan:
    """A line's place in the file: its first byte, and its length with its
    newline (when it has one)."""

    offset: int
    length: int


@dataclass(frozen=True)
class RawLine:
    """One line read from the file: its bytes, or None when it was longer than
    :data:`~.session_errors.MAX_LINE_BYTES` and skipped unread."""

    span: LineSpan
    text: bytes | None
    terminated: bool


def read_lines(fd: int, start: int) -> Iterator[RawLine]:
    """The lines of the file from byte ``start`` to its end, streamed: memory
    is the longest line up to the cap, however long the file or its lines."""
    with open(fd, "rb", buffering=_CHUNK, closefd=False) as reader:
        reader.seek(start)
        offset = start
        while True:
            line = reader.readline(errors.MAX_LINE_BYTES + 1)
            if not line:
                return
            terminated = line.endswith(b"\n")
            if len(line) > errors.MAX_LINE_BYTES and not terminated:
                rest, terminated = _skip_line(reader)
                span = LineSpan(offset, len(line) + rest)
                del line
                yield RawLine(span, None, terminated)
            else:
                span = LineSpan(offset, len(line))
                yield RawLine(span, line, terminated)
            offset += span.length


def _skip_line(reader: BinaryIO) -> tuple[int, bool]:
    """Reads past the rest of a line without keeping it: the bytes read, and
    whether a newline ended them."""
    skipped = 0
    while True:
        chunk = reader.readline(_CHUNK)
        if not chunk:
            return skipped, False
        skipped += len(chunk)
        if chunk.endswith(b"\n"):
            return skipped, True


def event_line(event: dict[str, Any]) -> str:
    """An event's line, without its newline: ``type, seq, time, data,
    surfaceOp, sourceEventSeqs``, keys inside ``data`` sorted."""
    line = f'{{"type":{stringify(event["type"])},"seq":{event["seq"]},"time":{event["time"]},"data":{stringify(event["data"])}'
    if "surfaceOp" in event:
        op = event["surfaceOp"]
        line += ',"surfaceOp":' + ('"append"' if op == "append" else f'{{"op":"replace","start":{op[0]},"end":{op[1]}}}')
    if "sourceEventSeqs" in event:
        line += ',"sourceEventSeqs":[' + ",".join(str(s) for s in event["sourceEventSeqs"]) + "]"
    return line + "}"


def header_line(header: dict[str, Any]) -> str:
    """The header's line, without its newline: ``type, version, id, createdAt, cwd``."""
    fields = f'"type":"session","version":0,"id":{stringify(header["id"])},"createdAt":{header["createdAt"]}'
    if header.get("cwd") is not None:
        fields += f',"cwd":{stringify(header["cwd"])}'
    return "{" + fields + "}"


def read_user_message(path: Path, seq: int, span: LineSpan) -> tuple[Any, list[Any]]:
    """The source and content of user message ``seq``, read back from the line
    at ``span``, which held it when the file was indexed. An error when the
    line is cut short, no longer reads as a user-role message, or holds
    another event: the append-only file was rewritten."""
    fd = open_to_read(path, "reopening")
    try:
        raw = os.pread(fd, span.length, span.offset)
    except OSError as error:
        raise errors.io_error(str(path), "reading", error) from None
    finally:
        os.close(fd)
    if len(raw) != span.length:
        raise errors.changed(str(path), seq, span.offset, f"the file ends {len(raw)} bytes into the line")
    message, kind, read_seq = _user_role_line(raw, lambda reason: errors.changed(str(path), seq, span.offset, reason))
    if kind not in (USER_MESSAGE, TOOL_RESULT) or read_seq != seq:
        raise errors.changed(str(path), seq, span.offset, f"the line now holds {kind} seq {read_seq}")
    return message.get("source"), message["content"]


def _user_role_line(raw: bytes, changed: Any) -> tuple[dict[str, Any], str, int]:
    """The message a line read back carries (a user message's data, a tool
    result's ``data.message``), its type and its seq; ``changed(reason)``
    makes the error when the line no longer reads as one."""

    def unreadable(reason: str) -> Exception:
        return changed(f"the line no longer reads ({reason})")

    try:
        value = parse(raw.decode("utf-8", "replace").strip())
    except JsonSyntaxError as error:
        raise unreadable(str(error)) from None
    if not isinstance(value, dict):
        raise unreadable("not a JSON object")
    kind, read_seq = value.get("type"), as_u64(value.get("seq"))
    if not isinstance(kind, str):
        raise unreadable('no "type"')
    if read_seq is None:
        raise unreadable("no seq")
    data = value.get("data")
    message = data.get("message") if kind == TOOL_RESULT and isinstance(data, dict) else data
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        raise unreadable("its message has no content list")
    return message, kind, read_seq

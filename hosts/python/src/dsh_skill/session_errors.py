"""The session log's errors (spec §5), each text in one place and worded as
skill-host's ``SessionError`` words it, so the three hosts print the same
``error: …`` line. Every text names the session file first."""

from __future__ import annotations

#: The longest line of a session file, without its newline, in bytes (64 MiB):
#: a reader skips a longer line unread, so an append refuses to write one.
MAX_LINE_BYTES = 64 * 1024 * 1024

#: The largest seq DeepSeek Harness can write (2^53 - 1).
MAX_SEQ = (1 << 53) - 1


class SessionError(Exception):
    """A failure of the session log, worded as the Rust host words it."""


def io_error(path: str, operation: str, error: OSError) -> SessionError:
    """An I/O failure naming the operation, as Rust's ``io::Error`` shows one
    (``No such file or directory (os error 2)``)."""
    detail = error.strerror or str(error)
    if error.errno is not None:
        detail = f"{detail} (os error {error.errno})"
    return SessionError(f"session log {path}: {operation}: {detail}")


def not_regular(path: str, kind: str) -> SessionError:
    """The path, after following symlinks, names a device, FIFO, socket or directory."""
    return SessionError(f"session log {path}: not a regular file ({kind})")


def lock_timeout(path: str, timeout_ms: int) -> SessionError:
    """The wait for another holder's lock ran out; the bound is named, not the
    clock's reading, so the text is the same on every run."""
    return SessionError(f"session log {path}: still locked by another process after {timeout_ms} ms")


def bad_header(path: str, reason: str) -> SessionError:
    return SessionError(f"session log {path}: bad session header: {reason}")


def shrunk(path: str, read: int, found: int) -> SessionError:
    """The file is shorter than what was read: the append-only log was rewritten."""
    return SessionError(
        f"session log {path}: the file shrank from {read} to {found} bytes since it was read; "
        "refusing to append to a rewritten log"
    )


def changed(path: str, seq: int, offset: int, reason: str) -> SessionError:
    """A user message read back is no longer on the line it was indexed at."""
    return SessionError(
        f"session log {path}: user message seq {seq} is no longer at byte {offset}: {reason}; "
        "the append-only file was rewritten"
    )


def invalid_event(path: str, kind: str, reason: str) -> SessionError:
    return SessionError(f"session log {path}: cannot append {kind}: {reason}")


def bad_range(path: str, start: int, end: int, reason: str) -> SessionError:
    return SessionError(f"session log {path}: cannot replace surface range {start}..={end}: {reason}")


def line_too_long(length: int, limit: int = MAX_LINE_BYTES) -> str | None:
    """Why a line of ``length`` bytes (without its newline) cannot be written:
    a reader would skip it. ``None`` when it fits."""
    if length <= limit:
        return None
    mib = 1024 * 1024
    limit_text = f"{limit // mib} MiB ({limit} bytes)" if limit % mib == 0 else f"{limit} bytes"
    return f"the line would be {length} bytes, over the {limit_text} a session line may have"


def long_line_skipped(line: int, length: int) -> str:
    """The warning for a line read past the cap (its length counts its newline)."""
    return f"line {line}: skipped: {length} bytes long, over the {MAX_LINE_BYTES} bytes a line may have"

"""The session file on disk (spec §5.3), as skill-host's ``session/file.rs``:
opened only when it is a regular file, locked with a bounded and announced
wait, checked after locking to still be the file the path names, and, when
a log created it and wrote nothing, removed again before its lock is let go.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from types import TracebackType

from . import session_errors as errors

try:  # POSIX only; elsewhere the log takes no lock.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

#: The first pause between two tries of a busy lock, in seconds; it doubles up
#: to LONGEST_PAUSE, so a short wait ends soon after the holder is done and a
#: long one costs little.
FIRST_PAUSE = 0.001
#: The longest pause between two tries of a busy lock, in seconds.
LONGEST_PAUSE = 0.050

#: flock errors that mean the file system has no locks (some network mounts):
#: such a file gets no locking rather than no session.
_NO_LOCKS = {errno.ENOSYS, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)}


@dataclass(frozen=True)
class LockWait:
    """How a session log waits for a lock another process holds on its file
    (skill-host's ``LockWait``). The default waits as long as it takes and
    says nothing, which suits a library caller taking turns with other
    writers; a command line announces the wait and bounds it."""

    #: The longest wait for one lock before the call fails with
    #: ``still locked by another process after {ms} ms``; None waits forever.
    timeout_ms: int | None = None
    #: Called with the session file, once per lock, when that lock is not
    #: free at once.
    on_wait: Callable[[Path], None] | None = None


class Access(Enum):
    """What a session file is opened for, and so which lock it takes."""

    #: Reading under a shared lock.
    READ = "read"
    #: Appending under the exclusive lock. A missing file is an error: it held
    #: events once, and a fresh file would be a log missing its history.
    APPEND = "append"
    #: Appending under the exclusive lock, creating the file when it is
    #: missing (for a log that has read nothing from it).
    APPEND_OR_CREATE = "append-or-create"


class LockedFile:
    """A session file, opened and locked; closing it lets the lock go. A file
    this open created is removed first, still under the lock, when nothing
    was written to it, so a failed call leaves no file behind."""

    def __init__(self, fd: int, path: Path, created: bool) -> None:
        self.fd = fd
        self.path = path
        self.created = created
        self._closed = False

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self.created:
                _remove_if_still_empty(self.fd, self.path)
        finally:
            os.close(self.fd)

    def __enter__(self) -> LockedFile:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class _Waiting:
    """One wait for a lock: when it began, and whether it was announced. It
    spans the reopens of :func:`open_locked`, so they share one timeout and
    one notice."""

    def __init__(self, wait: LockWait) -> None:
        self.wait = wait
        self.began: float | None = None

    def busy(self, path: Path) -> float:
        """Notes that the lock is busy: the first time, starts the clock and
        announces the wait. Returns how long the wait has lasted, in seconds."""
        if self.began is not None:
            return time.monotonic() - self.began
        self.began = time.monotonic()
        if self.wait.on_wait is not None:
            self.wait.on_wait(path)
        return 0.0


def open_locked(path: Path, access: Access, wait: LockWait, operation: str, missing_ok: bool = False) -> LockedFile | None:
    """Opens ``path`` for ``access`` and takes its lock, waiting as ``wait``
    says; ``operation`` names what failed in an error. With ``missing_ok``, a
    missing file is None (a session no append has created yet).

    After the lock is taken the path must still name the file that was
    opened: while this call waited, the holder may have removed the empty
    file it had created, and another may have created a new one. Then the
    path is opened again."""
    waiting = _Waiting(wait)
    while True:
        try:
            fd, created = _open_file(path, access)
        except FileNotFoundError as error:
            if missing_ok:
                return None
            raise errors.io_error(str(path), operation, error) from None
        except OSError as error:
            raise _open_error(path, operation, error) from None
        try:
            _check_regular(fd, path, operation)
            _lock(fd, path, access != Access.READ, waiting)
            if _still_names(path, fd, operation):
                # Armed only now, under the lock: before it, another process may
                # have opened and locked the new file, and it is theirs to keep.
                return LockedFile(fd, path, created)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def open_to_read(path: Path, operation: str) -> int:
    """``path`` opened to read without a lock (a message read back from its
    line), refused when it is not a regular file."""
    try:
        fd = os.open(path, _flags(Access.READ))
    except OSError as error:
        raise _open_error(path, operation, error) from None
    try:
        _check_regular(fd, path, operation)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _flags(access: Access) -> int:
    """Open flags for ``access``: without blocking, since a FIFO in the
    session file's place would otherwise hang the open until someone writes
    to it, before it can be refused (reads, writes and locks of a regular
    file do not heed the flag, and it is cleared once the file is checked)."""
    flags = os.O_RDONLY if access == Access.READ else os.O_RDWR | os.O_APPEND
    return flags | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_file(path: Path, access: Access) -> tuple[int, bool]:
    """Opens the file for ``access``, and says whether this call created it."""
    while True:
        try:
            return os.open(path, _flags(access)), False
        except FileNotFoundError:
            if access != Access.APPEND_OR_CREATE:
                raise
        try:
            return os.open(path, _flags(access) | os.O_CREAT | os.O_EXCL, 0o644), True
        except FileExistsError:
            pass
        # Neither there nor creatable: a dangling symlink (O_EXCL does not
        # follow it), whose target an ordinary create makes. That file is not
        # marked as created here, so it is never removed again.
        if os.path.islink(path):
            return os.open(path, _flags(access) | os.O_CREAT, 0o644), False
        # Otherwise another process created it and removed it again between
        # the two opens: try again.


def _open_error(path: Path, operation: str, error: OSError) -> errors.SessionError:
    """The error for a failed open: what the path is when it is not a regular
    file (a directory cannot be opened for append), else the I/O error."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return errors.io_error(str(path), operation, error)
    if not stat.S_ISREG(mode):
        return errors.not_regular(str(path), kind_of(mode))
    return errors.io_error(str(path), operation, error)


def _check_regular(fd: int, path: Path, operation: str) -> None:
    """Refuses an opened file that is not a regular file, before anything is
    read from it or written to it; a regular one is made blocking again."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError as error:
        raise errors.io_error(str(path), operation, error) from None
    if not stat.S_ISREG(mode):
        raise errors.not_regular(str(path), kind_of(mode))
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, for an error message."""
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


def _lock(fd: int, path: Path, exclusive: bool, waiting: _Waiting) -> None:
    """Takes the advisory lock every writer of a session file respects. A busy
    lock is announced and retried, with pauses from 1 ms doubling to 50 ms,
    until the wait's timeout; without a timeout the call blocks."""
    if fcntl is None:  # pragma: no cover
        return
    operation = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    pause = FIRST_PAUSE
    while True:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        except OSError as error:
            _without_locks(error, path)
            return
        waited = waiting.busy(path)
        timeout_ms = waiting.wait.timeout_ms
        if timeout_ms is None:
            try:
                fcntl.flock(fd, operation)
            except OSError as error:
                _without_locks(error, path)
            return
        timeout = timeout_ms / 1000
        if waited >= timeout:
            raise errors.lock_timeout(str(path), int(timeout_ms))
        time.sleep(min(pause, timeout - waited))
        pause = min(pause * 2, LONGEST_PAUSE)


def _without_locks(error: OSError, path: Path) -> None:
    """A locking error, except on a file system that has no locks."""
    if error.errno not in _NO_LOCKS:
        raise errors.io_error(str(path), "locking", error) from None


def _still_names(path: Path, fd: int, operation: str) -> bool:
    """Whether ``path`` still names the open file (device and inode); false
    when it names nothing."""
    try:
        opened = os.fstat(fd)
        named = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError as error:
        raise errors.io_error(str(path), "checking the file after locking it", error) from None
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def _remove_if_still_empty(fd: int, path: Path) -> None:
    """Removes the file this log created, if nothing was written to it and the
    path still names it; the caller holds its exclusive lock. Best effort: at
    worst an empty file stays, which reads as an empty session."""
    try:
        if os.fstat(fd).st_size == 0 and _still_names(path, fd, "removing"):
            os.unlink(path)
    except (OSError, errors.SessionError):
        pass

"""Other processes on a session file, for the session log's tests: a holder
of the file's ``flock`` in a separate Python process, driven line by line,
and ``skill-host step`` run on the same file. Every wait is bounded."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers import REPO, skill_host

#: How long any one wait of these tests may last before it fails.
BOUND = 20.0

#: The holder: opens the file (``open``) or creates it (``create``, as a hold
#: on a new session does), takes the exclusive lock, says ``locked``, then
#: obeys its stdin: ``append TEXT`` writes a line, ``release`` lets go (a
#: created file still empty is removed first, under the lock, as skill-host
#: and this host do) and exits.
_HOLDER = r"""
import fcntl, os, sys
mode, path = sys.argv[1], sys.argv[2]
flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT | os.O_EXCL if mode == "create" else 0)
fd = os.open(path, flags, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
for line in sys.stdin:
    command, _, text = line.rstrip("\n").partition(" ")
    if command == "append":
        os.write(fd, text.encode() + b"\n")
        print("appended", flush=True)
    elif command == "release":
        if mode == "create" and os.fstat(fd).st_size == 0:
            os.unlink(path)
        break
os.close(fd)
"""


class Holder:
    """A second process holding the session file's exclusive ``flock``."""

    def __init__(self, path: Path, create: bool = False) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, "create" if create else "open", str(path)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        self._expect("locked")

    def _expect(self, word: str) -> None:
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], BOUND)
        line = self.process.stdout.readline() if ready else ""
        if line.strip() != word:
            self.kill()
            raise AssertionError(f"the holder did not say {word!r} within {BOUND} s (said {line!r})")

    def _send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def append(self, line: str) -> None:
        """Writes ``line`` to the file while holding its lock."""
        self._send(f"append {line}")
        self._expect("appended")

    def release(self) -> None:
        """Lets go of the lock, and waits for the holder to end."""
        self._send("release")
        self.process.wait(BOUND)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(BOUND)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


class Waiter:
    """A call run on a thread, so the test can act while it waits for a lock."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self.thread.start()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            self.result = call()
        except BaseException as error:  # handed to the test by outcome()
            self.error = error

    def outcome(self) -> Any:
        self.thread.join(BOUND)
        if self.thread.is_alive():
            raise AssertionError(f"the waiting call did not end within {BOUND} s")
        if self.error is not None:
            raise self.error
        return self.result


def run_step_in_skill_host(session: Path, cwd: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """``skill-host step --session FILE --cwd DIR`` with no skills of the
    user's (HOME and DSH_HOME point into ``cwd``), bounded in time."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin"),
        "HOME": str(cwd), "DSH_HOME": str(cwd / ".dsh"), "DSH_AGENTS_HOME": str(cwd / ".agents"),
        "SKILL_HOST_CACHE_DIR": str(REPO / "target" / "python-host" / "skill-host-cache"),
    }
    command = [str(skill_host()), "step", "--session", str(session), "--cwd", str(cwd), *options]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


def warnings_of(stderr: str) -> list[str]:
    """The ``warning: …`` lines skill-host printed, without the prefix."""
    return [line.removeprefix("warning: ") for line in stderr.splitlines() if line.startswith("warning: ")]

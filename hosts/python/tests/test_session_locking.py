"""Waiting for a session file's lock (spec §5.3), against a second process
holding its ``flock``: bounded by the log's LockWait with skill-host's
error text, announced once per lock, kept for every later lock; a waiter
whose file the holder removed locks the one the path names; a new session
that fails its first append leaves no file."""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
import unittest
from pathlib import Path

from dsh_skill import SessionError, SessionLog, user_message
from dsh_skill.session import LockWait
from helpers import REPO
from session_processes import BOUND, Holder, Waiter, run_step_in_skill_host

SEEDED = REPO / "tests" / "fixtures" / "seeded-session.jsonl"


def timed_out(path: Path, ms: int) -> str:
    return f"session log {path}: still locked by another process after {ms} ms"


def line(seq: int, text: str) -> str:
    """A user message line as another writer would append it."""
    return (
        f'{{"type":"user/message","seq":{seq},"time":1,"data":{{"content":[{{"type":"text","text":"{text}"}}],'
        f'"source":{{"kind":"user"}},"role":"user","id":"x-{seq}"}},"surfaceOp":"append"}}'
    )


class LockWaiting(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)
        self.path = self.dir / "session.jsonl"

    def hold(self, create: bool = False) -> Holder:
        holder = Holder(self.path, create)
        self.addCleanup(holder.kill)
        return holder

    def seeded(self) -> Path:
        shutil.copy(SEEDED, self.path)
        return self.path

    def test_a_busy_lock_is_announced_once_and_given_up_after_the_timeout(self) -> None:
        self.seeded()
        self.hold()
        notices: list[Path] = []
        started = time.monotonic()
        with self.assertRaises(SessionError) as raised:
            SessionLog.open(self.path, lock_wait=LockWait(timeout_ms=100, on_wait=notices.append))
        waited = time.monotonic() - started
        self.assertEqual(str(raised.exception), timed_out(self.path, 100))
        self.assertTrue(0.1 <= waited < BOUND, waited)
        self.assertEqual(notices, [self.path], "the wait is announced once")

    def test_skill_host_gives_up_with_the_same_text(self) -> None:
        self.seeded()
        self.hold()
        done = run_step_in_skill_host(self.path, self.dir, "--lock-timeout-ms", "100")
        self.assertEqual(done.returncode, 3, done.stderr)
        self.assertEqual(
            done.stderr,
            f"waiting for session log {self.path}: another process holds its lock\nerror: {timed_out(self.path, 100)}\n",
        )
        self.assertEqual(self.path.read_bytes(), SEEDED.read_bytes())

    def test_a_waiter_gets_the_lock_once_the_holder_lets_go_and_reads_what_it_wrote(self) -> None:
        log = SessionLog.open(self.seeded())
        holder = self.hold()
        waiting = threading.Event()
        notices: list[Path] = []

        def noticed(path: Path) -> None:
            notices.append(path)
            waiting.set()

        log.lock_wait = LockWait(timeout_ms=int(BOUND * 1000), on_wait=noticed)
        waiter = Waiter(lambda: log.append_user_messages([(user_message({"kind": "user"}, "waited"), "append")]))
        self.assertTrue(waiting.wait(BOUND), "the waiter never heard of the wait")
        holder.append(line(4, "the holder's"))
        holder.release()
        self.assertEqual(waiter.outcome(), [5], "the waiter read what the holder appended")
        self.assertEqual(notices, [self.path])
        reread = SessionLog.open(self.path)
        self.assertEqual(reread.warnings, [])
        self.assertEqual([reread.user_message(seq).content[0]["text"] for seq in (4, 5)], ["the holder's", "waited"])

    def test_a_free_lock_is_taken_without_a_notice(self) -> None:
        notices: list[Path] = []
        log = SessionLog.open(self.seeded(), lock_wait=LockWait(timeout_ms=0, on_wait=notices.append))
        log.append_user_messages([(user_message({"kind": "user"}, "a"), "append")])
        with log.hold():
            pass
        log.refresh()
        self.assertEqual(notices, [])

    def test_a_log_keeps_its_lock_wait_for_every_later_lock(self) -> None:
        notices: list[Path] = []
        log = SessionLog.open(self.seeded(), lock_wait=LockWait(timeout_ms=20, on_wait=notices.append))
        holder = self.hold()
        message = [(user_message({"kind": "user"}, "x"), "append")]

        def hold() -> None:
            with log.hold():
                pass

        calls = {
            "refresh": log.refresh,
            "hold": hold,
            "append": lambda: log.append_user_messages(message),
            "compact": lambda: log.compact("x"),
        }
        for name, call in calls.items():
            with self.subTest(name), self.assertRaises(SessionError) as raised:
                call()
            self.assertEqual(str(raised.exception), timed_out(self.path, 20), name)
        self.assertEqual(notices, [self.path] * 4, "one notice per lock waited for")
        self.assertEqual(self.path.read_bytes(), SEEDED.read_bytes(), "nothing was written")
        self.assertEqual(log.next_seq(), 4)
        holder.release()
        self.assertEqual(log.append_user_messages(message), [4])

    def test_a_new_session_times_out_on_a_lock_without_leaving_a_file(self) -> None:
        log = SessionLog.open(self.path, cwd="/w", lock_wait=LockWait(timeout_ms=20))
        holder = self.hold(create=True)
        with self.assertRaises(SessionError) as raised:
            log.append_user_messages([(user_message({"kind": "user"}, "x"), "append")])
        self.assertEqual(str(raised.exception), timed_out(self.path, 20))
        holder.release()
        self.assertFalse(self.path.exists(), "neither the holder nor the waiter wrote anything")

    def test_a_waiter_whose_file_was_removed_under_it_locks_the_one_the_path_names(self) -> None:
        waiting = threading.Event()
        log = SessionLog.open(self.path, cwd="/waiter", lock_wait=LockWait(on_wait=lambda _: waiting.set()))
        holder = self.hold(create=True)  # a hold on a new session: it created the file to lock it

        def step() -> None:
            with log.hold():  # opens the holder's empty file, then waits for its lock
                log.append_user_messages([(user_message({"kind": "user"}, "after"), "append")])

        waiter = Waiter(step)
        self.assertTrue(waiting.wait(BOUND), "the waiter never waited")
        holder.release()  # removes the file it created, which the waiter has open
        waiter.outcome()
        # Without the device-and-inode check the message would have gone into the removed file.
        reopened = SessionLog.open(self.path)
        self.assertEqual(reopened.warnings, [])
        self.assertEqual(reopened.header, log.header)
        self.assertEqual(reopened.cwd, "/waiter")
        self.assertEqual([(m.seq, reopened.user_message(m.seq).content[0]["text"]) for m in reopened.user_messages_of_kind("user")], [(0, "after")])

    def test_a_first_plain_append_that_fails_leaves_no_file(self) -> None:
        log = SessionLog.open(self.path, cwd="/w")
        # Refused under the lock, after the file was created to take it: the
        # data's line is one byte over the cap.
        overhead = len(b'{"type":"user/message","seq":0,"time":1700000000000,"data":{"content":[{"text":"","type":"text"}]},"surfaceOp":"append"}')
        text = "a" * (64 * 1024 * 1024 - overhead + 1)
        with self.assertRaises(SessionError) as raised:
            log.append_user_messages([({"content": [{"type": "text", "text": text}]}, "append")])
        self.assertEqual(
            str(raised.exception),
            f"session log {self.path}: cannot append user/message: the line would be 67108865 bytes, "
            "over the 64 MiB (67108864 bytes) a session line may have",
        )
        self.assertFalse(self.path.exists(), "the file the append created stayed behind")
        self.assertEqual(log.next_seq(), 0)
        log.append_user_messages([(user_message({"kind": "user"}, "fits"), "append")])
        self.assertEqual([event["seq"] for event in SessionLog.open(self.path).events], [0])

    def test_an_existing_empty_file_is_never_removed(self) -> None:
        self.path.write_bytes(b"")
        log = SessionLog.open(self.path)
        with self.assertRaises(SessionError):
            log.append_user_messages([({"content": [{"type": "text", "text": "a" * (64 * 1024 * 1024)}]}, "append")])
        with log.hold():
            pass
        self.assertEqual(self.path.read_bytes(), b"", "an existing empty file is the user's")


if __name__ == "__main__":
    unittest.main()

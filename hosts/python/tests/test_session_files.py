"""What a session file may be and hold (spec §5.1, §5.3), beside skill-host
on the same files: only a regular file, when opened and on every reopen; a
line over 64 MiB skipped unread with skill-host's warning and never written;
a file rewritten under the log refused, and a user message read back from
the line it was indexed at, never another message."""

from __future__ import annotations

import os
import shutil
import tempfile
import unittest
from pathlib import Path
from typing import Any

from dsh_skill import Enter, Plugin, RuntimeSkill, SessionError, SessionLog, SkillRegistry, run_step, user_message
from dsh_skill.session_lines import event_line
from helpers import REPO
from session_processes import run_step_in_skill_host, warnings_of

SEEDED = REPO / "tests" / "fixtures" / "seeded-session.jsonl"
HEADER = '{"type":"session","version":0,"id":"s","createdAt":1,"cwd":"/w"}'
CAP = 64 * 1024 * 1024


def user_line(seq: int, text: str) -> str:
    data = {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}, "role": "user", "id": f"m-{seq}"}
    return event_line({"type": "user/message", "seq": seq, "time": 1, "data": data, "surfaceOp": "append"})


def texts(log: SessionLog) -> list[tuple[int, str]]:
    """Every user message's seq and first text, read back from the file."""
    found = []
    for event in log.events:
        message = log.user_message(event["seq"])
        if message is not None:
            found.append((event["seq"], message.content[0]["text"]))
    return found


class Files(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)
        self.path = self.dir / "session.jsonl"

    def seeded(self) -> SessionLog:
        shutil.copy(SEEDED, self.path)
        return SessionLog.open(self.path)

    def assert_refused(self, call: Any, kind: str) -> None:
        with self.assertRaises(SessionError) as raised:
            call()
        self.assertEqual(str(raised.exception), f"session log {self.path}: not a regular file ({kind})")

    def assert_skill_host_refuses(self, kind: str) -> None:
        done = run_step_in_skill_host(self.path, self.dir)
        self.assertEqual((done.returncode, done.stderr), (3, f"error: session log {self.path}: not a regular file ({kind})\n"))

    # -- regular files -----------------------------------------------------

    def test_a_fifo_a_directory_and_a_device_are_refused_as_skill_host_refuses_them(self) -> None:
        for kind, make in [
            ("a FIFO", lambda: os.mkfifo(self.path)),
            ("a directory", lambda: self.path.mkdir()),
            ("a character device", lambda: self.path.symlink_to("/dev/null")),
        ]:
            with self.subTest(kind):
                make()
                self.assert_refused(lambda: SessionLog.open(self.path), kind)
                self.assert_skill_host_refuses(kind)
                (shutil.rmtree if self.path.is_dir() and not self.path.is_symlink() else os.unlink)(self.path)

    def test_a_session_file_replaced_by_a_device_is_refused_on_every_reopen(self) -> None:
        log = self.seeded()
        self.path.unlink()
        self.path.symlink_to("/dev/zero")

        def hold() -> None:
            with log.hold():
                pass

        self.assert_refused(log.refresh, "a character device")
        self.assert_refused(lambda: log.user_message(1), "a character device")
        self.assert_refused(hold, "a character device")
        self.assert_refused(lambda: log.append_user_messages([(user_message({"kind": "user"}, "x"), "append")]), "a character device")
        self.assert_refused(lambda: log.compact("x"), "a character device")
        self.assertEqual(log.next_seq(), 4, "nothing was read from the device")

    def test_a_new_session_whose_path_becomes_a_device_is_refused_on_its_first_append(self) -> None:
        log = SessionLog.open(self.path)
        self.path.symlink_to("/dev/null")
        self.assert_refused(log.refresh, "a character device")
        self.assert_refused(lambda: log.append_user_messages([(user_message({"kind": "user"}, "x"), "append")]), "a character device")

    def test_a_vanished_file_is_an_error_naming_it_and_is_not_recreated(self) -> None:
        log = self.seeded()
        self.path.unlink()
        with self.assertRaises(SessionError) as raised:
            log.compact("x")
        self.assertEqual(str(raised.exception), f"session log {self.path}: opening for append: No such file or directory (os error 2)")
        with self.assertRaises(SessionError) as raised:
            log.refresh()
        self.assertEqual(str(raised.exception), f"session log {self.path}: reopening: No such file or directory (os error 2)")
        self.assertFalse(self.path.exists(), "a vanished session is not recreated")

    def test_a_regular_file_through_a_symlink_is_a_session_log(self) -> None:
        self.seeded()
        link = self.dir / "link.jsonl"
        link.symlink_to(self.path)
        log = SessionLog.open(link)
        self.assertEqual(log.append_user_messages([(user_message({"kind": "user"}, "via the link"), "append")]), [4])
        self.assertEqual(texts(SessionLog.open(self.path))[-1], (4, "via the link"))

    # -- the line cap ------------------------------------------------------

    def write_long_line(self, length: int, after: str) -> None:
        """The header, a line of ``length`` NUL bytes (sparse on disk), then ``after``."""
        head = (HEADER + "\n").encode()
        self.path.write_bytes(head)
        os.truncate(self.path, len(head) + length)
        with open(self.path, "ab") as file:
            file.write(after.encode())

    def test_a_line_over_the_cap_is_skipped_unread_as_skill_host_skips_it(self) -> None:
        long = 100 * 1024 * 1024
        self.write_long_line(long, "\n" + user_line(0, "after") + "\n")
        warning = f"line 2: skipped: {long + 1} bytes long, over the 67108864 bytes a line may have"
        log = SessionLog.open(self.path)
        self.assertEqual(log.warnings, [warning])
        self.assertEqual(texts(log), [(0, "after")])
        self.assertEqual(log.append_user_messages([(user_message({"kind": "user"}, "next"), "append")]), [1])
        self.assertEqual(texts(SessionLog.open(self.path)), [(0, "after"), (1, "next")])
        done = run_step_in_skill_host(self.path, self.dir)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(warnings_of(done.stderr), [warning])

    def test_a_torn_last_line_over_the_cap_is_skipped_and_the_append_starts_a_line_of_its_own(self) -> None:
        self.write_long_line(CAP + 1, "")
        log = SessionLog.open(self.path)
        warning = f"line 2: skipped: {CAP + 1} bytes long, over the 67108864 bytes a line may have"
        self.assertEqual(log.warnings, [warning])
        self.assertEqual(log.append_user_messages([(user_message({"kind": "user"}, "after"), "append")]), [0])
        reopened = SessionLog.open(self.path)
        self.assertEqual(reopened.warnings, [warning.replace(f"{CAP + 1} bytes", f"{CAP + 2} bytes")])
        self.assertEqual(texts(reopened), [(0, "after")])

    def test_a_line_at_the_cap_is_written_and_one_over_it_refused(self) -> None:
        log = SessionLog.in_memory("/w")
        overhead = len(user_line(0, "").encode()) - len('"time":1') + len(f'"time":{2**40}')
        fits = {"content": [{"type": "text", "text": "a" * (CAP - overhead)}], "source": {"kind": "user"}, "role": "user", "id": "m-0"}
        self.assertEqual(log.append_user_messages([(fits, "append")]), [0])
        over = {**fits, "id": "m-01"}
        with self.assertRaises(SessionError) as raised:
            log.append_user_messages([(over, "append")])
        self.assertEqual(
            str(raised.exception),
            "session log <in-memory session>: cannot append user/message: the line would be 67108865 bytes, "
            "over the 64 MiB (67108864 bytes) a session line may have",
        )
        self.assertEqual(log.next_seq(), 1)

    def test_an_append_over_the_cap_writes_nothing(self) -> None:
        log = self.seeded()
        data = {"content": [{"type": "text", "text": "a" * CAP}]}
        with self.assertRaises(SessionError) as raised:
            log.append_event("tool/result", data, "append")
        length = len(event_line({"type": "tool/result", "seq": 4, "time": 2**40, "data": data, "surfaceOp": "append"}).encode())
        self.assertEqual(
            str(raised.exception),
            f"session log {self.path}: cannot append tool/result: the line would be {length} bytes, "
            "over the 64 MiB (67108864 bytes) a session line may have",
        )
        self.assertEqual(self.path.read_bytes(), SEEDED.read_bytes())
        self.assertEqual((log.next_seq(), log.surface.nodes), (4, [3, 1, 2]))

    def test_a_header_over_the_cap_is_refused_and_leaves_no_file(self) -> None:
        cwd = "/" + "d" * CAP
        log = SessionLog.open(self.path, cwd=cwd)
        with self.assertRaises(SessionError) as raised:
            log.append_user_messages([(user_message({"kind": "user"}, "x"), "append")])
        length = len(f'{{"type":"session","version":0,"id":"{log.header["id"]}","createdAt":{log.header["createdAt"]},"cwd":"{cwd}"}}')
        self.assertEqual(
            str(raised.exception),
            f"session log {self.path}: bad session header: cannot write the header: the line would be {length} bytes, "
            "over the 64 MiB (67108864 bytes) a session line may have",
        )
        self.assertFalse(self.path.exists())

    # -- rewritten files ---------------------------------------------------

    def offset_of(self, needle: str) -> int:
        text = SEEDED.read_bytes()
        return text.rfind(b"\n", 0, text.index(needle.encode())) + 1

    def changed(self, seq: int, offset: int, reason: str) -> str:
        return (
            f"session log {self.path}: user message seq {seq} is no longer at byte {offset}: {reason}; "
            "the append-only file was rewritten"
        )

    def test_user_messages_are_read_back_from_the_file(self) -> None:
        log = self.seeded()
        log.append_user_messages([(user_message({"kind": "user"}, "appended here"), "append")])
        self.assertEqual(log.user_message(1).source["entries"][0]["name"], "first-skill")
        self.assertEqual(log.user_message(4).content, [{"type": "text", "text": "appended here"}])
        self.assertIsNone(log.user_message(2), "seq 2 is an assistant message")
        self.assertEqual(texts(log), texts(SessionLog.open(self.path)))

    def test_a_message_whose_line_was_rewritten_is_an_error_never_another_message(self) -> None:
        log = self.seeded()
        original = SEEDED.read_text(encoding="utf-8")
        # Same length, another seq in the catalog's place.
        self.path.write_text(original.replace('"seq":1,', '"seq":7,'), encoding="utf-8")
        with self.assertRaises(SessionError) as raised:
            log.user_message(1)
        self.assertEqual(str(raised.exception), self.changed(1, self.offset_of('"seq":1,'), "the line now holds user/message seq 7"))
        # Cut short.
        half = len(original.encode()) // 2
        self.path.write_bytes(original.encode()[:half])
        offset = self.offset_of('"seq":3,')
        with self.assertRaises(SessionError) as raised:
            log.user_message(3)
        self.assertEqual(str(raised.exception), self.changed(3, offset, f"the file ends {max(0, half - offset)} bytes into the line"))
        # Garbage where the line was.
        self.path.write_text(original.replace('{"type":"user/message","seq":0', '!"type":"user/message","seq":0'), encoding="utf-8")
        with self.assertRaises(SessionError) as raised:
            log.user_message(0)
        self.assertEqual(
            str(raised.exception),
            self.changed(0, self.offset_of('"seq":0,'), "the line no longer reads (expected value at line 1 column 1)"),
        )

    def test_a_step_that_reads_a_rewritten_message_fails_and_appends_nothing(self) -> None:
        plugin = Plugin.create()
        registry = SkillRegistry()
        registry.register_runtime(RuntimeSkill("a-skill", "Does a.", "Body."))
        run_step(plugin, registry, SessionLog.open(self.path, cwd="/w"), Enter([user_message({"kind": "user"}, "hi")]), "/w")
        log = SessionLog.open(self.path)  # indexes the catalog, seq 1, which its first step reads back
        original = self.path.read_text(encoding="utf-8")
        rewritten = original.replace('"seq":1,', '"seq":7,')
        self.path.write_text(rewritten, encoding="utf-8")
        offset = len(original.splitlines(True)[0]) + len(original.splitlines(True)[1])
        with self.assertRaises(SessionError) as raised:
            run_step(plugin, registry, log, Enter([user_message({"kind": "user"}, "again")]), "/w")
        self.assertEqual(str(raised.exception), self.changed(1, offset, "the line now holds user/message seq 7"))
        self.assertEqual(self.path.read_text(encoding="utf-8"), rewritten)

    def test_messages_appended_after_a_torn_line_and_a_new_header_are_found_where_they_were_written(self) -> None:
        self.path.write_text(HEADER + "\n" + '{"type":"user/mess', encoding="utf-8")
        log = SessionLog.open(self.path)
        log.append_user_messages([(user_message({"kind": "user"}, "one"), "append"), (user_message({"kind": "user"}, "two"), "append")])
        fresh = SessionLog.open(self.dir / "new.jsonl", cwd="/w")
        fresh.append_user_messages([(user_message({"kind": "user"}, "first"), "append")])
        self.assertEqual(texts(log), [(0, "one"), (1, "two")])
        self.assertEqual(texts(fresh), [(0, "first")])

    def test_a_shrunk_file_is_refused_by_a_refresh_too(self) -> None:
        log = self.seeded()
        read = self.path.stat().st_size
        self.path.write_text(HEADER + "\n", encoding="utf-8")
        with self.assertRaises(SessionError) as raised:
            log.refresh()
        self.assertEqual(
            str(raised.exception),
            f"session log {self.path}: the file shrank from {read} to {len(HEADER) + 1} bytes since it was read; "
            "refusing to append to a rewritten log",
        )


if __name__ == "__main__":
    unittest.main()

"""The session log (spec §5): a real DeepSeek Harness file loads unchanged,
appends are whole lines after it, and a reopened log reads what was written."""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import unittest
from pathlib import Path

from dsh_skill import Enter, MemoryProvider, Plugin, SessionError, SessionLog, SkillRegistry, run_step, user_message
from dsh_skill.jsonvalue import parse
from helpers import REPO

SEEDED = REPO / "tests" / "fixtures" / "seeded-session.jsonl"


class Session(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.dir)

    def test_a_real_session_file_loads_and_appends_after_its_lines(self) -> None:
        path = self.dir / "s.jsonl"
        shutil.copy(SEEDED, path)
        original = path.read_bytes()
        log = SessionLog.open(path)
        self.assertEqual(log.header["id"], "seeded-demo")
        self.assertEqual(log.cwd, "/workspace")
        self.assertEqual(log.warnings, [])
        seqs = log.append_user_messages([(user_message({"kind": "user"}, "more"), "append")])
        self.assertEqual(seqs, [log.events[-1]["seq"]])
        written = path.read_bytes()
        self.assertTrue(written.startswith(original), "earlier lines are never rewritten")
        again = SessionLog.open(path)
        self.assertEqual(len(again.events), len(log.events))
        self.assertEqual(again.user_message(seqs[0]).content, [{"type": "text", "text": "more"}])
        self.assertNotEqual(again.key, log.key, "every opened log has its own key")

    def test_a_step_on_a_new_file_writes_the_header_and_the_catalog(self) -> None:
        path = self.dir / "new.jsonl"
        registry = SkillRegistry()
        registry.register_provider(MemoryProvider.of("memory", [{"name": "a-skill", "description": "A.", "content": "Body."}]))
        plugin = Plugin.create()
        log = SessionLog.open(path, cwd="/workspace")
        self.assertFalse(path.exists(), "opening writes nothing")
        run_step(plugin, registry, log, Enter([user_message({"kind": "user"}, "hi")]), "/workspace")
        lines = [parse(line) for line in path.read_text(encoding="utf-8").splitlines()]
        self.assertEqual(lines[0]["type"], "session")
        self.assertEqual([line["seq"] for line in lines[1:]], [0, 1])
        self.assertEqual(lines[2]["data"]["source"], {"kind": "plugin", "plugin": "dsh-tool-skill"})
        # The next step finds the catalog in the reopened file: nothing to add.
        reopened = SessionLog.open(path)
        outcome = run_step(plugin, registry, reopened, Enter([]), "/workspace")
        self.assertEqual(outcome.decision, Enter([]))

    def test_torn_and_unreadable_lines_are_skipped_with_a_warning(self) -> None:
        path = self.dir / "torn.jsonl"
        path.write_text(SEEDED.read_text(encoding="utf-8") + "not json\n" + '{"type":"user/message","seq":99', encoding="utf-8")
        log = SessionLog.open(path)
        self.assertEqual(len(log.warnings), 2, log.warnings)
        self.assertTrue(log.warnings[1].endswith("(the file's last line has no newline: a torn write?)"), log.warnings)
        log.append_event("assistant/message", {"text": "x"}, "append")
        self.assertTrue(path.read_text(encoding="utf-8").endswith('"seq":99\n' + path.read_text(encoding="utf-8").split('"seq":99\n')[1]))

    def test_a_bad_header_is_fatal(self) -> None:
        path = self.dir / "bad.jsonl"
        path.write_text('{"type":"session","version":1,"id":"x","createdAt":0}\n', encoding="utf-8")
        with self.assertRaises(SessionError) as raised:
            SessionLog.open(path)
        self.assertEqual(
            str(raised.exception),
            f"session log {path}: bad session header: version must be 0, got 1; the log was written by another harness version",
        )

    def test_a_rewritten_shorter_file_is_not_appended_to(self) -> None:
        path = self.dir / "shrank.jsonl"
        log = SessionLog.open(path, cwd="/w")
        log.append_user_messages([(user_message({"kind": "user"}, "one"), "append")])
        log.append_user_messages([(user_message({"kind": "user"}, "two"), "append")])
        read = path.stat().st_size
        lines = path.read_text(encoding="utf-8").splitlines(True)
        path.write_text("".join(lines[:2]), encoding="utf-8")
        found = path.stat().st_size
        with self.assertRaises(SessionError) as raised:
            log.append_user_messages([(user_message({"kind": "user"}, "three"), "append")])
        self.assertEqual(
            str(raised.exception),
            f"session log {path}: the file shrank from {read} to {found} bytes since it was read; refusing to append to a rewritten log",
        )
        self.assertEqual(path.stat().st_size, found)

    def test_a_fifo_is_refused_without_blocking(self) -> None:
        path = self.dir / "fifo"
        os.mkfifo(path)
        with self.assertRaises(SessionError) as raised:
            SessionLog.open(path)
        self.assertEqual(str(raised.exception), f"session log {path}: not a regular file (a FIFO)")

    def test_run_step_holds_the_lock_from_the_step_to_the_append(self) -> None:
        path = self.dir / "held.jsonl"
        log = SessionLog.open(path, cwd="/w")
        seen: list[bool] = []

        class Probe:
            def pre_step(self, *args: object) -> object:
                other = os.open(path, os.O_RDONLY)
                try:
                    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    seen.append(False)
                except BlockingIOError:
                    seen.append(True)
                finally:
                    os.close(other)
                raise RuntimeError("stop")

        with self.assertRaises(RuntimeError):
            run_step(Probe(), SkillRegistry(), log, Enter([]))  # type: ignore[arg-type]
        self.assertEqual(seen, [True])
        self.assertFalse(path.exists())  # created to be locked, removed again: nothing was appended


if __name__ == "__main__":
    unittest.main()

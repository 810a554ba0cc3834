"""The README's agent loop (examples/agent_loop.py) runs, and writes a session log."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from dsh_skill.jsonvalue import parse

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "agent_loop.py"
README = Path(__file__).resolve().parents[1] / "README.md"


class Example(unittest.TestCase):
    def test_the_agent_loop_runs(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            session = Path(directory) / "session.jsonl"
            done = subprocess.run([sys.executable, str(EXAMPLE), str(session)], capture_output=True, text=True)
            self.assertEqual((done.returncode, done.stderr), (0, ""))
            self.assertEqual(done.stdout, "Done: followed the release-notes skill.\n")
            events = [parse(line) for line in session.read_text(encoding="utf-8").splitlines()[1:]]
            self.assertEqual([e["type"] for e in events], ["user/message", "user/message", "tool/result"])
            self.assertEqual(events[2]["data"]["message"]["source"]["kind"], "tool")

    def test_the_readme_shows_the_loop(self) -> None:
        readme = README.read_text(encoding="utf-8")
        loop = EXAMPLE.read_text(encoding="utf-8").split('"""', 2)[2].strip().splitlines()
        body = [line for line in loop if not line.startswith(("import sys", "session = SessionLog.open(sys.argv"))]
        for line in body:
            self.assertIn(line, readme)


if __name__ == "__main__":
    unittest.main()

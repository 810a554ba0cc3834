"""Every scenario of tests/scenarios through this host, byte for byte against
its expected file (which `skill-host replay` and the Node host print too)."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest

from dsh_skill import Plugin, Scenario
from dsh_skill.jsonvalue import pretty
from helpers import REPO, SCENARIOS, scenario_files


class Scenarios(unittest.TestCase):
    def test_every_scenario_agrees_byte_for_byte(self) -> None:
        files = scenario_files()
        self.assertGreater(len(files), 30, f"too few scenarios in {SCENARIOS}")
        for path in files:
            with self.subTest(scenario=path.name):
                expected = path.with_name(path.name[: -len(".json")] + ".expected.json").read_text(encoding="utf-8")
                printed = pretty(Scenario.read(path).replay(None)) + "\n"
                self.assertEqual(printed, expected)

    def test_the_command_line_prints_what_skill_host_replay_prints(self) -> None:
        scenario = SCENARIOS / "lifecycle.json"
        done = subprocess.run(
            [sys.executable, "-m", "dsh_skill", "replay", str(scenario)], capture_output=True, text=True, cwd=REPO
        )
        self.assertEqual((done.returncode, done.stderr), (0, ""))
        self.assertEqual(done.stdout, (SCENARIOS / "lifecycle.expected.json").read_text(encoding="utf-8"))

    def test_refusals_exit_3_with_one_error_line(self) -> None:
        def replay(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "dsh_skill", "replay", *args], capture_output=True, text=True, cwd=REPO)

        missing = replay("no-such-scenario.json")
        self.assertEqual(missing.returncode, 3)
        self.assertTrue(missing.stderr.startswith("error: cannot read scenario no-such-scenario.json: "), missing.stderr)
        self.assertEqual(replay().returncode, 2)
        self.assertEqual(replay("--timeout-ms", "x", "a.json").returncode, 2)

    def test_a_refused_configuration_is_the_plugins_text(self) -> None:
        scenario = Scenario.parse('{"config": {"catalogDescriptionMaxLength": "x"}, "steps": []}')
        with self.assertRaises(Exception) as raised:
            scenario.replay(None)
        self.assertEqual(getattr(raised.exception, "kind", None), "config", str(raised.exception))

    def test_malformed_scenarios_are_refused_before_the_plugin_starts(self) -> None:
        from dsh_skill import ScenarioError

        for text in ["[]", "{}", '{"steps": [], "extra": 1}', '{"steps": [{"op": "nope"}]}', '{"steps": [], "steps": []}']:
            with self.subTest(text=text), self.assertRaises(ScenarioError):
                Scenario.parse(text)

    def test_one_compiled_plugin_replays_many_scenarios(self) -> None:
        plugin = Plugin.create()
        path = SCENARIOS / "tool-calls.json"
        expected = (SCENARIOS / "tool-calls.expected.json").read_text(encoding="utf-8")
        for _ in range(2):
            self.assertEqual(pretty(Scenario.read(path).replay_with(plugin)) + "\n", expected)


if __name__ == "__main__":
    os.chdir(REPO)
    unittest.main()

"""Every trace skill-host keeps (tests/traces, spec §7.2) replayed in this
host: the scenarios' against the packaged component, the hostile plugin's
against the hostile plugin, each reaching the results and errors skill-host
recorded. And the replayer can fail: an altered answer, an import missing
from the list or never made, a wrong return value or error, each reported
where it happens."""

from __future__ import annotations

import copy
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any

from dsh_skill import trace
from dsh_skill.sandbox import default_cache_dir
from helpers import REPO, hostile, hostile_files, plugin_v0_1, skill_host

TRACES = REPO / "tests" / "traces"


def traces(kind: str) -> list[Path]:
    return sorted((TRACES / kind).glob("*.trace.json"))


def replay(data: dict[str, Any], component: bytes | None = None) -> list[str]:
    return [str(mismatch) for mismatch in trace.replay(data, component, default_cache_dir())]


def imports_of(data: dict[str, Any], name: str) -> tuple[int, int]:
    """(call, entry) of the first import ``name`` in ``data``."""
    for index, call in enumerate(data["calls"]):
        for entry, listed in enumerate(call["imports"]):
            if listed["import"] == name:
                return index, entry
    raise AssertionError(f"no {name} in the trace")


class StoredTraces(unittest.TestCase):
    def test_every_scenarios_trace_replays_with_the_packaged_component(self) -> None:
        files = traces("scenarios")
        self.assertGreater(len(files), 30, f"too few traces in {TRACES / 'scenarios'}")
        for path in files:
            with self.subTest(trace=path.name):
                self.assertEqual(replay(trace.read(path)), [])

    def test_every_hostile_trace_replays_with_the_hostile_plugin(self) -> None:
        component = hostile()
        files = traces("hostile")
        cases = [case for case in (TRACES / "hostile").glob("*.json") if not case.name.endswith(".trace.json")]
        self.assertEqual(len(files), len(cases), f"a trace per hostile case in {TRACES / 'hostile'}")
        self.assertGreaterEqual(len(files), 20, f"the hostile cases in {TRACES / 'hostile'}")
        for path in files:
            with self.subTest(trace=path.name):
                self.assertEqual(replay(trace.read(path), component), [])

    def test_every_hostile_file_trace_replays_with_the_hostile_files_plugin(self) -> None:
        # A 0.4.0 plugin whose tool results claim files the registry did not
        # read for it: this host refuses each with skill-host's text.
        component = hostile_files()
        files = traces("hostile-files")
        cases = [case for case in (TRACES / "hostile-files").glob("*.json") if not case.name.endswith(".trace.json")]
        self.assertEqual(len(files), len(cases), f"a trace per case in {TRACES / 'hostile-files'}")
        self.assertGreaterEqual(len(files), 5)
        refused = 0
        for path in files:
            data = trace.read(path)
            refused += any("did not read for this call" in str(call["outcome"]) for call in data["calls"])
            with self.subTest(trace=path.name):
                self.assertEqual(replay(data, component), [])
        self.assertGreaterEqual(refused, 5, "the cases refuse file values")

    def test_a_0_1_0_plugins_trace_recorded_by_skill_host_replays(self) -> None:
        component = plugin_v0_1()
        skills = ",".join(
            f'{{"name":"{name}","description":"{name} skill.","content":"{name} body.","whenToUse":"When asked."}}'
            for name in ("b-skill", "a-skill")
        )
        scenario = (
            f'{{"providers":[{{"name":"memory","skills":[{skills}]}}],"steps":[{{"op":"pre-step","messages":["hello"]}},'
            '{"op":"invoke","name":"b-skill"},{"op":"invoke","name":"missing"},{"op":"compact"},{"op":"pre-step"}]}'
        )
        with tempfile.TemporaryDirectory() as folder:
            plugin = Path(folder, "plugin.wasm")
            plugin.write_bytes(component)
            Path(folder, "scenario.json").write_text(scenario, encoding="utf-8")
            out = Path(folder, "scenario.trace.json")
            args = [str(skill_host()), "replay", "scenario.json", "--plugin", str(plugin), "--trace", str(out)]
            done = subprocess.run(args, cwd=folder, capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            recorded = trace.read(out)
        self.assertEqual(recorded["contract"], "0.1.0")
        self.assertEqual([call["call"] for call in recorded["calls"]], ["configure", "pre-step", "invoke", "invoke", "pre-step"])
        self.assertEqual(replay(recorded, component), [])


class Mismatches(unittest.TestCase):
    """Each altered trace fails the replay at the call that differs, saying what."""

    def setUp(self) -> None:
        self.lifecycle = trace.read(TRACES / "scenarios" / "lifecycle.trace.json")
        self.tool_calls = trace.read(TRACES / "scenarios" / "tool-calls.trace.json")

    def test_a_changed_description_in_a_snapshot_answer_changes_the_decision(self) -> None:
        altered = copy.deepcopy(self.lifecycle)
        index, entry = imports_of(altered, "registry.snapshot")
        skills = altered["calls"][index]["imports"][entry]["answer"]["Ok"]["Changed"]["skills"]
        skills[0]["description"] = "An altered description."
        found = replay(altered)
        self.assertEqual(len(found), 1, found)
        # The catalog the plugin decided is step.decide's argument: it differs there, with the altered text.
        self.assertTrue(found[0].startswith(f"call {index} (`pre-step` on instance 0): import "), found[0])
        self.assertIn("`step.decide`: args.messages[", found[0])
        self.assertIn("An altered description.", found[0])

    def test_a_changed_skill_body_changes_what_returned_and_the_outcome(self) -> None:
        altered = copy.deepcopy(self.tool_calls)
        index, entry = imports_of(altered, "registry.get-skill")
        altered["calls"][index]["imports"][entry]["answer"]["Ok"]["content"] = "An altered body."
        found = replay(altered)
        self.assertEqual(len(found), 2, found)
        self.assertTrue(found[0].startswith(f"call {index} (`invoke` on instance 0): returned.Ok.text differs at character "), found[0])
        self.assertTrue(found[1].startswith(f"call {index} (`invoke` on instance 0): outcome.ok.text differs at character "), found[1])
        self.assertIn("An altered body.", found[1])

    def test_a_trap_this_host_decides_must_be_its_own(self) -> None:
        # The trace claims the filter cap ended a call this host answers: a
        # host without the check would pass if the trace's trap were taken.
        altered = copy.deepcopy(self.lifecycle)
        index, entry = imports_of(altered, "session.list-user-messages")
        listed = altered["calls"][index]["imports"][entry]
        del listed["answer"]
        listed["trap"] = "the plugin passed 17 source filters to `session.list-user-messages`; at most 16 are allowed"
        found = replay(altered)
        self.assertTrue(any("this host answers, the trace traps with" in line for line in found), found)

    def test_an_import_missing_from_the_list_is_named(self) -> None:
        altered = copy.deepcopy(self.lifecycle)
        index, entry = imports_of(altered, "registry.snapshot")
        del altered["calls"][index]["imports"][entry]
        found = replay(altered)
        self.assertEqual(len(found), 1, found)
        self.assertIn(f"import {entry + 1}: the plugin called `registry.snapshot` ", found[0])

    def test_an_import_listed_but_never_made_is_named(self) -> None:
        altered = copy.deepcopy(self.tool_calls)
        extra = {"import": "registry.get-skill", "args": {"name": "x"}, "answer": {"Ok": None}}
        altered["calls"][3]["imports"].append(extra)
        self.assertEqual(
            replay(altered), ["call 3 (`invoke` on instance 0): the plugin made 0 of the 1 imports listed; the next is `registry.get-skill`"]
        )

    def test_a_wrong_returned_value_is_reported(self) -> None:
        altered = copy.deepcopy(self.tool_calls)
        altered["calls"][2]["returned"] = {"Err": "Error: something else"}
        found = replay(altered)
        self.assertEqual(len(found), 1, found)
        self.assertTrue(found[0].startswith('call 2 (`invoke` on instance 0): returned.Err is "Error: skill \\"rotate-keys\\"'), found[0])
        self.assertTrue(found[0].endswith(', where the trace has "Error: something else"'), found[0])

    def test_a_wrong_outcome_is_reported(self) -> None:
        altered = copy.deepcopy(self.tool_calls)
        altered["calls"][2]["outcome"] = {"ok": {"error": "Error: something else"}}
        found = replay(altered)
        self.assertEqual(len(found), 1, found)
        self.assertTrue(found[0].startswith("call 2 (`invoke` on instance 0): outcome.ok.error is "), found[0])

    def test_a_trace_of_another_contract_version_is_refused(self) -> None:
        self.assertEqual(
            replay(self.lifecycle, hostile()),
            ["call 0 (`configure` on instance 0): the trace is of a dsh:skill@0.4.0 component, this one dsh:skill@0.2.0"],
        )

    def test_a_call_on_an_instance_never_made_is_a_malformed_trace(self) -> None:
        altered = copy.deepcopy(self.tool_calls)
        altered["calls"][1]["instance"] = 7
        with self.assertRaises(trace.TraceError) as raised:
            replay(altered)
        self.assertEqual(str(raised.exception), "call 1 names instance 7, which no configure call made")


class Failures(unittest.TestCase):
    """A failed call must fail with the trace's text, but a trap the engine
    describes, which must only trap in the same call (spec §7.2)."""

    component: bytes

    @classmethod
    def setUpClass(cls) -> None:
        cls.component = hostile()

    def replay_with_error(self, case: str, error: str) -> list[str]:
        altered = trace.read(TRACES / "hostile" / f"{case}.trace.json")
        altered["calls"][1]["outcome"] = {"error": error}
        return replay(altered, self.component)

    def test_an_engine_described_trap_may_read_otherwise(self) -> None:
        self.assertEqual(self.replay_with_error("trap-after-import", "plugin call `pre-step` trapped: another engine's words"), [])

    def test_but_it_must_trap_in_the_same_call(self) -> None:
        found = self.replay_with_error("trap-after-import", "plugin call `invoke` trapped: wasm `unreachable` instruction executed")
        self.assertEqual(len(found), 1, found)
        self.assertIn("it failed with \"plugin call `pre-step` trapped: wasm `unreachable` instruction executed\"", found[0])

    def test_a_panic_must_be_the_traces_panic(self) -> None:
        error = "plugin call `pre-step` trapped: the guest panicked at src/lib.rs:1:1: hostile plugin panicked on purpose"
        found = self.replay_with_error("panic", error)
        self.assertEqual(len(found), 1, found)
        self.assertIn("it failed with \"plugin call `pre-step` trapped: the guest panicked at src/lib.rs:", found[0])

    def test_a_trap_the_host_answered_an_import_with_is_its_text(self) -> None:
        altered = trace.read(TRACES / "hostile" / "many-filters.trace.json")
        altered["calls"][1]["imports"][0]["trap"] = "the host said no"
        found = replay(altered, self.component)
        self.assertEqual(len(found), 1, found)
        # This host decides that trap itself: the import differs, with both texts.
        self.assertIn('this host traps with "the plugin passed 17 source filters', found[0])
        self.assertIn('the trace traps with "the host said no"', found[0])

    def test_only_a_deadline_repeats_the_last_import(self) -> None:
        found = self.replay_with_error("import-loop", "plugin call `pre-step` trapped: wasm `unreachable` instruction executed")
        self.assertEqual(len(found), 1, found)
        self.assertTrue(found[0].startswith("call 1 (`pre-step` on instance 0): import 2: the plugin called `registry.get-skill` "), found[0])
        self.assertTrue(found[0].endswith("past the 1 imports the trace lists"), found[0])


class CommandLine(unittest.TestCase):
    def run_trace(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "dsh_skill", "trace", *args], capture_output=True, text=True, cwd=REPO)

    def test_a_trace_that_replays_exits_0(self) -> None:
        done = self.run_trace("tests/traces/scenarios/lifecycle.trace.json")
        self.assertEqual((done.returncode, done.stdout, done.stderr), (0, "tests/traces/scenarios/lifecycle.trace.json: replayed as traced\n", ""))

    def test_mismatches_exit_1_one_line_each(self) -> None:
        done = self.run_trace("tests/traces/hostile/loop.trace.json")
        self.assertEqual(done.returncode, 1, done.stderr)
        self.assertEqual(
            done.stderr,
            "mismatch: call 0 (`configure` on instance 0): the trace is of a dsh:skill@0.2.0 component, this one dsh:skill@0.4.0\n",
        )

    def test_an_unreadable_trace_exits_3(self) -> None:
        done = self.run_trace("no-such.trace.json")
        self.assertEqual((done.returncode, done.stderr), (3, "error: cannot read trace no-such.trace.json: No such file or directory\n"))
        self.assertEqual(self.run_trace().returncode, 2)


if __name__ == "__main__":
    unittest.main()

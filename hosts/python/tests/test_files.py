"""A skill's files (contract 0.4.0, spec §3.15): the registry's two imports
answered by each provider this host has, the `file` value's host check
(spec §8.5), the 0.3.0 adapter, the trace's values, and the local provider
against `skill-host load NAME [--path P] --json` on temporary trees (links
out of the folder, hidden, binary and over-the-cap files, the walk's limits)."""

from __future__ import annotations

import copy
import errno
import json
import os
import tempfile
import threading
import time
import unittest
from pathlib import Path
from typing import Any

from wasmtime.component import Record, Variant

from dsh_skill import HostError, MemoryProvider, Plugin, RuntimeSkill, Scenario, SkillRegistry, trace
from dsh_skill.registry import RegistryFailure
from dsh_skill.imports import CallContext, record
from dsh_skill.interface import SIGNATURES
from dsh_skill.local_files import MAX_SKILL_FILES, MAX_WALK_ENTRIES, Outside, open_beneath, stat_beneath
from dsh_skill.output import OutputCheck, OutputLimits
from dsh_skill.registry import Candidate, Listing, SkillFile, SkillFiles
from dsh_skill.plugin import checked_tool_outcome
from dsh_skill.sandbox import Compiled
from dsh_skill.trace_values import file_answer, skill_files_answer
from dsh_skill.versions import VERSIONS, imports, version_of
from helpers import REPO, skill_host
from listings import Roots, run_skill_host

TRACES = REPO / "tests" / "traces" / "scenarios"
MIB = 1024 * 1024


def write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def skill_md(name: str) -> str:
    return f"---\nname: {name}\ndescription: The {name} skill.\n---\nUse {name}.\n"


def hidden_entries(folder: Path, count: int) -> None:
    """``count`` hidden entries in ``folder``: hard links to one empty file
    (each a directory entry; far quicker to make than as many files)."""
    if count <= 0:
        return
    first = folder / ".h0"
    first.touch()
    for index in range(1, count):
        os.link(first, folder / f".h{index}")


def candidate(name: str, provider: str) -> Candidate:
    return Candidate(name, f"The {name} skill.", provider, "custom")


class MemoryFiles(unittest.TestCase):
    """The scenario provider's ``"files"`` (spec §7), as skill-host's MemoryProvider."""

    def registry(self, **provider: Any) -> SkillRegistry:
        files = {"z.md": "zed", "references/api.md": "API ü", "logo.png": {"binary": 2048},
                 "big.txt": {"tooLarge": 2000000}, "nul.txt": "a\u0000b"}
        skills = [{"name": "deploy", "description": "D.", "content": "Body.", "files": files},
                  {"name": "plain", "description": "P.", "content": "Body."}]
        registry = SkillRegistry()
        registry.register_provider(MemoryProvider.of("memory", skills, **provider))
        registry.register_runtime(RuntimeSkill("runtime-one", "R.", "Body."))
        return registry

    def test_files_are_listed_in_byte_order_with_their_sizes_and_total(self) -> None:
        listed = self.registry().list_files("/w", "deploy", 3)
        assert listed is not None
        self.assertEqual([(f.path, f.size) for f in listed.files], [("big.txt", 2000000), ("logo.png", 2048), ("nul.txt", 3)])
        self.assertEqual(listed.total, 5)
        everything = self.registry().list_files("/w", "deploy", 100)
        assert everything is not None
        self.assertEqual([f.path for f in everything.files][-2:], ["references/api.md", "z.md"])
        self.assertEqual(everything.files[-2].size, len("API ü".encode()))

    def test_each_answer(self) -> None:
        registry = self.registry()
        cases = {
            "references/api.md": ("text", "API ü", None), "logo.png": ("binary", None, 2048),
            "big.txt": ("too-large", None, 2000000), "nul.txt": ("binary", None, 3), "nope.md": ("missing", None, None),
            "../z.md": ("missing", None, None), ".hidden": ("missing", None, None),
        }
        for path, (kind, text, size) in cases.items():
            with self.subTest(path=path):
                answer = registry.read_file("/w", "deploy", path)
                self.assertEqual((answer.kind, answer.text, answer.size), (kind, text, size))

    def test_skills_without_files_and_runtime_skills_serve_none(self) -> None:
        registry = self.registry()
        for name in ("plain", "runtime-one", "absent", "Not_A_Name"):
            with self.subTest(name=name):
                self.assertIsNone(registry.list_files("/w", name, 10))
                self.assertEqual(registry.read_file("/w", name, "a.md").kind, "unavailable")

    def test_the_imports_answer_as_the_wit_says(self) -> None:
        context = CallContext(self.registry(), None, "/w")
        listed = context.list_skill_files("deploy", 1)
        self.assertEqual(listed.tag, "ok")
        self.assertEqual((listed.payload.total, listed.payload.files[0].path, listed.payload.files[0].size), (5, "big.txt", 2000000))
        self.assertEqual(context.list_skill_files("plain", 1), Variant("ok", None))
        self.assertEqual(context.read_skill_file("deploy", "logo.png"), Variant("binary", 2048))
        self.assertEqual(context.read_skill_file("deploy", "big.txt"), Variant("too-large", 2000000))
        self.assertEqual(context.read_skill_file("deploy", "nope"), Variant("missing"))
        self.assertEqual(context.read_skill_file("plain", "a.md"), Variant("unavailable"))
        self.assertEqual(context.files_read, set())
        self.assertEqual(context.read_skill_file("deploy", "z.md"), Variant("text", "zed"))
        self.assertEqual(context.files_read, {("deploy", "z.md")})
        aborted = CallContext(self.registry(), None, "/w", aborted=lambda: True)
        self.assertEqual(aborted.list_skill_files("deploy", 1), Variant("err", None))
        self.assertIsNone(aborted.read_skill_file("deploy", "z.md"))
        self.assertEqual(CallContext().read_skill_file("deploy", "z.md"), Variant("unavailable"))

    def test_a_failing_provider_fails_the_calls_with_its_text(self) -> None:
        failing = SkillRegistry()
        provider = MemoryProvider.of("memory", [{"name": "deploy", "description": "D.", "content": "B.", "files": {"a.md": "A"}}])
        failing.register_provider(provider)
        failing.snapshot("/w")
        provider.fail = "the store is down"
        context = CallContext(failing, None, "/w")
        self.assertEqual(context.list_skill_files("deploy", 5), Variant("err", "the store is down"))
        self.assertEqual(context.read_skill_file("deploy", "a.md"), "the store is down")

    def test_a_providers_listing_is_sorted_deduplicated_cut_and_keeps_its_total(self) -> None:
        """As skill-host's list_files_listed: paths outside the grammar and
        duplicates (the first kept, by path then size) dropped, then the
        limit; the total is the provider's, but at least the files kept."""

        class Listed:
            name = "listed"

            def __init__(self, files: list[SkillFile] | SkillFiles) -> None:
                self.files = files

            def list(self, cwd: str | None) -> Listing:
                return Listing([candidate("deploy", "listed")])

            def load(self, cwd: str | None, candidate: Any) -> None:
                return None

            def list_files(self, cwd: str | None, candidate: Any) -> list[SkillFile] | SkillFiles:
                return self.files

            def read_file(self, cwd: str | None, candidate: Any, path: str) -> Any:
                raise AssertionError("not read")

        def listed(files: list[SkillFile] | SkillFiles, limit: int) -> tuple[list[tuple[str, int | None]], int]:
            registry = SkillRegistry()
            registry.register_provider(Listed(files))
            found = registry.list_files("/w", "deploy", limit)
            assert found is not None
            return [(f.path, f.size) for f in found.files], found.total

        given = [SkillFile("b.md", 2), SkillFile("a.md", 7), SkillFile("a.md", 1), SkillFile("../x", 4)]
        self.assertEqual(listed(SkillFiles(given, 4), 10), ([("a.md", 1), ("b.md", 2)], 4))
        self.assertEqual(listed(given, 10), ([("a.md", 1), ("b.md", 2)], 4), "a plain list's total is its length")
        self.assertEqual(listed(SkillFiles(given, 4), 1), ([("a.md", 1)], 4))
        self.assertEqual(listed(SkillFiles(given, 1), 10), ([("a.md", 1), ("b.md", 2)], 2), "at least the files kept")
        self.assertEqual(listed(SkillFiles(given, 0), 1), ([("a.md", 1)], 1), "at least the files kept, after the cut")
        self.assertEqual(listed(SkillFiles(given, 9), 0), ([], 9))
        unsized = [SkillFile("a.md", 3), SkillFile("a.md"), SkillFile("a.md", 0)]
        self.assertEqual(listed(unsized, 5), ([("a.md", None)], 3), "an unknown size sorts first, as Rust's None")

    def test_a_bad_file_path_or_value_is_refused_with_skill_hosts_text(self) -> None:
        def replayed(files: Any) -> str:
            scenario = json.dumps({
                "providers": [{"name": "m", "skills": [{"name": "a", "description": "A.", "content": "B.", "files": files}]}],
                "steps": [],
            })
            with self.assertRaises(HostError) as raised:
                Scenario.parse(scenario).replay_with(Plugin.create(cache_dir=None))
            return str(raised.exception)

        self.assertEqual(replayed({"../x": "t"}), 'provider 0: skill "a" of provider "m": file path "../x" is not a path inside a skill')
        self.assertEqual(replayed({"a/.git": "t"}), 'provider 0: skill "a" of provider "m": file path "a/.git" is not a path inside a skill')
        shape = 'provider 0: skill "a" of provider "m": file "x" must be a string, {"binary": size} or {"tooLarge": size}'
        for value in ({"binary": -1}, {"binary": 1, "tooLarge": 2}, {"binary": 1.5}, 3, None, {"other": 1}):
            with self.subTest(value=value):
                self.assertEqual(replayed({"x": value}), shape)
        self.assertEqual(replayed([]), 'provider 0: skill "a" of provider "m": `files` must be an object')


def success(value: Variant | Record, loaded: Record | None = None) -> Record:
    return record(value=value, text="shown", loaded=loaded)


def file_value(name: str = "deploy", path: str = "a.md", provider: str = "memory", content: str = "A") -> Variant:
    return Variant("file", record(name=name, provider=provider, path=path, content=content))


class HostCheck(unittest.TestCase):
    """A `file` value (spec §8.5), as skill-host's validate_tool_result checks it."""

    def check(self, returned: Record, read: set[tuple[str, str]], limits: OutputLimits = OutputLimits(),
              arguments: str = '{"name":"deploy","path":"a.md"}') -> Any:
        return checked_tool_outcome(returned, arguments, OutputCheck("invoke", limits), read)

    def refused(self, *args: Any, **kwargs: Any) -> str:
        with self.assertRaises(HostError) as raised:
            self.check(*args, **kwargs)
        return str(raised.exception)

    def test_a_file_the_registry_read_as_text_in_the_call_is_accepted(self) -> None:
        outcome = self.check(success(file_value()), {("deploy", "a.md")})
        self.assertEqual(list(outcome.value.items()), [("name", "deploy"), ("provider", "memory"), ("path", "a.md"), ("content", "A")])
        self.assertEqual(outcome.text, "shown")

    def test_a_file_not_read_for_the_call_is_refused(self) -> None:
        reason = "plugin call `invoke` returned invalid output: the value is file {} of skill \"deploy\", which the registry did not read for this call"
        self.assertEqual(self.refused(success(file_value()), set()), reason.format('"a.md"'))
        self.assertEqual(self.refused(success(file_value()), {("other", "a.md"), ("deploy", "b.md")}), reason.format('"a.md"'))
        quoted = 'a "q"\n.md'
        self.assertEqual(self.refused(success(file_value(path=quoted)), set()), reason.format('"a \\"q\\"\\n.md"'))

    def test_the_name_and_provider_are_checked_as_a_skill_values(self) -> None:
        read = {("deploy", "a.md"), ("Bad", "a.md"), ("other", "a.md")}
        prefix = "plugin call `invoke` returned invalid output: "
        self.assertEqual(self.refused(success(file_value(name="Bad")), read), prefix + 'the value names skill "Bad", which is not a valid skill name')
        self.assertEqual(self.refused(success(file_value(name="other")), read), prefix + 'the value is skill "other", but the arguments asked for "deploy"')
        self.assertEqual(self.refused(success(file_value(provider="")), read), prefix + 'the value of skill "deploy" names no provider')
        loaded = record(name="deploy", provider="other", body_digest=None)
        self.assertEqual(
            self.refused(success(file_value(), loaded), read),
            prefix + 'the load it records is skill "deploy" of provider "other", not the value\'s',
        )
        same = record(name="deploy", provider="memory", body_digest="sha256:00")
        self.assertEqual(self.check(success(file_value(), same), read).loaded, {"name": "deploy", "provider": "memory", "bodyDigest": "sha256:00"})

    def test_the_load_it_records_is_checked_before_the_file_was_read(self) -> None:
        """As skill-host: validate_named (the load record among its checks)
        first, then whether the registry read the file."""
        prefix = "plugin call `invoke` returned invalid output: "
        other = record(name="other", provider="memory", body_digest=None)
        self.assertEqual(
            self.refused(success(file_value(), other), set()),
            prefix + 'the load it records is skill "other" of provider "memory", not the value\'s',
        )
        bad_digest = record(name="deploy", provider="memory", body_digest="not\tprintable")
        self.assertEqual(
            self.refused(success(file_value(), bad_digest), set()),
            prefix + "the load it records has a body digest that is not up to 128 printable ASCII characters",
        )

    def test_the_output_caps_name_the_values_path(self) -> None:
        read = {("deploy", "p" * 40)}
        limits = OutputLimits(max_text_bytes=30)
        self.assertEqual(
            self.refused(success(file_value(path="p" * 40)), read, limits),
            "plugin call `invoke` returned invalid output: the value's path is 40 bytes, over the cap of 30 bytes per text",
        )
        per_call = OutputLimits(max_text_bytes=100, max_output_bytes=50)
        self.assertEqual(
            self.refused(success(file_value(path="p" * 40)), read, per_call),
            "plugin call `invoke` returned invalid output: its texts add up to more than the cap of 50 bytes per call (at the value's path)",
        )

    def test_a_0_3_0_value_is_a_skill_or_matches_untagged(self) -> None:
        skill = record(name="deploy", provider="memory", resource_base=None, content="Body.")
        outcome = self.check(success(skill), set(), arguments='{"name":"deploy"}')
        self.assertEqual(outcome.value, {"name": "deploy", "provider": "memory", "content": "Body."})
        tagged = self.check(success(Variant("skill", skill)), set(), arguments='{"name":"deploy"}')
        self.assertEqual(tagged.value, outcome.value)


class ContractVersion030(unittest.TestCase):
    """0.3.0 beside 0.4.0 (spec §9.4): no file imports, no `file` value."""

    def test_a_0_3_0_component_is_linked_without_the_file_imports(self) -> None:
        self.assertEqual(VERSIONS, ("0.4.0", "0.3.0", "0.2.0", "0.1.0"))
        self.assertEqual(version_of(["dsh:skill/plugin@0.3.0"]), "0.3.0")
        self.assertEqual(version_of(["dsh:skill/plugin@0.3.0", "dsh:skill/plugin@0.4.0"]), "0.4.0")
        files = {"list-skill-files", "read-skill-file"}
        self.assertTrue(files <= set(imports("0.4.0")["registry"]))
        for version in ("0.3.0", "0.2.0", "0.1.0"):
            with self.subTest(version=version):
                self.assertFalse(files & set(imports(version)["registry"]))
                self.assertEqual(set(imports(version)["registry"]), {"snapshot", "list-skills", "get-skill"})
        # 0.3.0's answers are 0.4.0's own (the summaries keep their when-to-use).
        self.assertIs(imports("0.3.0")["registry"]["snapshot"], imports("0.4.0")["registry"]["snapshot"])
        self.assertEqual(SIGNATURES["0.3.0"], SIGNATURES["0.2.0"])
        self.assertEqual(
            SIGNATURES["0.4.0"]["invoke"].replace(", file(record{name: string, provider: string, path: string, content: string})", ""),
            SIGNATURES["0.3.0"]["invoke"],
        )

    def test_a_real_0_3_0_plugin_replays_a_scenario_as_0_4_0_does(self) -> None:
        """The packaged plugin as built for 0.3.0 (``$DSH_SKILL_V0_3_PLUGIN``,
        or ``target/python-host/plugin_v0_3.wasm``): skipped when there is none."""
        given = os.environ.get("DSH_SKILL_V0_3_PLUGIN")
        path = Path(given) if given else REPO / "target" / "python-host" / "plugin_v0_3.wasm"
        if not path.is_file():
            self.skipTest(f"no 0.3.0 plugin at {path}")
        component = path.read_bytes()
        self.assertEqual(Compiled(component, None).version, "0.3.0")
        scenario = REPO / "tests" / "scenarios" / "lifecycle.json"
        expected = json.loads((REPO / "tests" / "scenarios" / "lifecycle.expected.json").read_text())
        self.assertEqual(json.loads(json.dumps(Scenario.read(scenario).replay(component, cache_dir=None))), expected)
        plugin = Plugin.create(component, {"skillReads": True}, cache_dir=None)
        registry = SkillRegistry()
        registry.register_provider(MemoryProvider.of("m", [{"name": "a", "description": "A.", "content": "Body.", "files": {"x.md": "X"}}]))
        outcome = plugin.invoke(registry, {"name": "a"}, "/w")
        self.assertEqual(outcome.value["content"], "Body.")


class TraceValues(unittest.TestCase):
    def test_the_two_answers_as_serde_writes_them(self) -> None:
        self.assertEqual(skill_files_answer({"Ok": None}), Variant("ok", None))
        listed = skill_files_answer({"Ok": {"files": [{"path": "a.md", "size": 3}, {"path": "b", "size": None}], "total": 9}})
        self.assertEqual((listed.payload.total, [(f.path, f.size) for f in listed.payload.files]), (9, [("a.md", 3), ("b", None)]))
        self.assertEqual(skill_files_answer({"Err": {"Failed": "down"}}), Variant("err", "down"))
        self.assertEqual(skill_files_answer({"Err": "Aborted"}), Variant("err", None))
        self.assertEqual(file_answer({"Ok": {"Text": "t"}}), Variant("text", "t"))
        self.assertEqual(file_answer({"Ok": {"Binary": 2}}), Variant("binary", 2))
        self.assertEqual(file_answer({"Ok": {"TooLarge": 5}}), Variant("too-large", 5))
        self.assertEqual(file_answer({"Ok": "Missing"}), Variant("missing"))
        self.assertEqual(file_answer({"Ok": "Unavailable"}), Variant("unavailable"))
        self.assertEqual(file_answer({"Err": {"Failed": "down"}}), "down")
        self.assertIsNone(file_answer({"Err": "Aborted"}))
        for bad in ({"Ok": {"Text": 3}}, {"Ok": {"Binary": "2"}}, {"Ok": "Text"}, {"Ok": {"Missing": None}}, {"Ok": "Gone"}):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                file_answer(bad)

    def test_a_read_answered_otherwise_than_the_trace_is_reported(self) -> None:
        recorded = trace.read(TRACES / "skill-files.trace.json")
        self.assertEqual(trace.replay(recorded), [])
        altered = copy.deepcopy(recorded)
        entry = next(e for c in altered["calls"] for e in c["imports"] if e["import"] == "registry.read-skill-file"
                     and "Text" in e["answer"]["Ok"])
        entry["answer"] = {"Ok": "Missing"}
        mismatches = trace.replay(altered)
        self.assertTrue(mismatches, "a text read turned missing must change the call")

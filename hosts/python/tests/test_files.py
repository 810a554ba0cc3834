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


class Confinement(unittest.TestCase):
    """open_beneath / stat_beneath: links followed only while they stay beneath the folder."""

    def setUp(self) -> None:
        self.top = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: __import__("shutil").rmtree(self.top))
        self.folder = self.top / "skill"
        write(self.folder / "a" / "b.md", "B")
        write(self.top / "outside.md", "O")
        os.symlink("../a/b.md", self.folder / "a" / "up-and-back.md")
        os.symlink("../outside.md", self.folder / "out.md")
        os.symlink(str(self.folder / "a" / "b.md"), self.folder / "absolute.md")
        os.symlink("..", self.folder / "a" / "parent")
        os.symlink("loop2", self.folder / "loop1")
        os.symlink("loop1", self.folder / "loop2")
        os.symlink("..", self.folder / "up")
        self.fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY)
        self.addCleanup(os.close, self.fd)

    def read(self, path: str) -> bytes:
        fd = open_beneath(self.fd, path)
        try:
            return os.read(fd, 100)
        finally:
            os.close(fd)

    def test_paths_that_stay_beneath_resolve(self) -> None:
        self.assertEqual(self.read("a/b.md"), b"B")
        self.assertEqual(self.read("a/up-and-back.md"), b"B")
        self.assertEqual(self.read("a/parent/a/b.md"), b"B")
        self.assertEqual(stat_beneath(self.fd, "a/parent/a/up-and-back.md").st_size, 1)

    def test_paths_that_leave_are_refused_before_anything_outside_is_opened(self) -> None:
        for path in ("out.md", "absolute.md", "up/outside.md", "a/parent/up/outside.md", "../outside.md", "a/../../outside.md"):
            with self.subTest(path=path):
                with self.assertRaises(Outside):
                    self.read(path)
                with self.assertRaises(Outside):
                    stat_beneath(self.fd, path)

    def test_a_link_loop_ends(self) -> None:
        with self.assertRaises(OSError) as raised:
            self.read("loop1")
        self.assertEqual(raised.exception.errno, errno.ELOOP)


def candidate(name: str, provider: str) -> Candidate:
    return Candidate(name, f"The {name} skill.", provider, "custom")


class LocalRaces(unittest.TestCase):
    """The local provider's reads against a tree another thread changes, and
    the walk's bound on the entries it looks at."""

    def setUp(self) -> None:
        self.top = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: __import__("shutil").rmtree(self.top))
        self.root = self.top / "skills"
        self.cwd = str(self.top)
        self.roots = Roots({"HOME": str(self.top / "home")}, [str(self.root)])

    def registry(self) -> SkillRegistry:
        registry = SkillRegistry()
        registry.register_provider(self.roots.provider())
        return registry

    def test_a_file_swapped_for_a_link_to_a_hidden_file_is_never_read(self) -> None:
        """``a.md`` alternates between a plain file and ``a.md -> .env`` (each
        put in place by a rename) while reads run: a read may find the plain
        file, or nothing, but never the hidden file's text."""
        secret = "SECRET=swapped-in\n"
        swap = self.root / "swap"
        write(swap / "SKILL.md", skill_md("swap"))
        write(swap / ".env", secret)
        write(swap / "a.md", "A\n")
        registry = self.registry()
        self.assertEqual(registry.read_file(self.cwd, "swap", "a.md").text, "A\n")
        stop = threading.Event()
        swaps = [0]

        def swapping() -> None:
            plain, link = swap / ".plain", swap / ".link"
            while not stop.is_set():
                plain.write_text("A\n")
                os.replace(plain, swap / "a.md")
                os.symlink(".env", link)
                os.replace(link, swap / "a.md")
                swaps[0] += 1

        thread = threading.Thread(target=swapping, daemon=True)
        thread.start()
        seen: dict[tuple[str, str | None], int] = {}
        try:
            deadline = time.monotonic() + 4
            while time.monotonic() < deadline:
                for path in ("a.md", ".env"):
                    answer = registry.read_file(self.cwd, "swap", path)
                    self.assertNotEqual(answer.text, secret, f"read {path} after {swaps[0]} swaps")
                    key = (answer.kind, answer.text)
                    seen[key] = seen.get(key, 0) + 1
                listed = registry.list_files(self.cwd, "swap", 10)
                assert listed is not None
                self.assertLessEqual({f.path for f in listed.files}, {"a.md"})
        finally:
            stop.set()
            thread.join()
        self.assertLessEqual(set(seen), {("text", "A\n"), ("missing", None)}, seen)
        self.assertGreater(swaps[0], 100, "the swapping thread ran")

    def bundle(self, name: str, entries: int) -> Path:
        """A bundle with exactly ``entries`` entries below its folder: a
        file, a folder with a file, a link, a hidden folder whose entries
        are never looked at, and hidden files for the rest."""
        folder = self.root / name
        write(folder / "SKILL.md", skill_md(name))
        write(folder / "a.md", "A\n")
        write(folder / "sub" / "b.md", "B\n")
        os.symlink("a.md", folder / "link.md")
        hidden = folder / ".git"
        hidden.mkdir()
        hidden_entries(hidden, 100)
        hidden_entries(folder, entries - 5)
        return folder

    def test_a_walk_looks_at_no_more_than_16384_entries(self) -> None:
        self.assertEqual(MAX_WALK_ENTRIES, 16384)
        self.bundle("full", MAX_WALK_ENTRIES)
        self.bundle("over", MAX_WALK_ENTRIES + 1)
        registry = self.registry()
        listed = registry.list_files(self.cwd, "full", 10)
        assert listed is not None
        self.assertEqual([f.path for f in listed.files], ["a.md", "link.md", "sub/b.md"])
        self.assertEqual(registry.read_file(self.cwd, "full", "sub/b.md").text, "B\n")
        over = 'skill "over" has more than 16384 entries below its folder; at most 16384 are looked at'
        for call in (
            lambda: registry.list_files(self.cwd, "over", 10),
            lambda: registry.read_file(self.cwd, "over", "a.md"),
            lambda: registry.read_file(self.cwd, "over", "SKILL.md"),
            lambda: registry.read_file(self.cwd, "over", "nope.md"),
        ):
            with self.assertRaises(RegistryFailure) as raised:
                call()
            self.assertEqual(str(raised.exception), over)
        plugin = Plugin.create(config={"skillReads": True}, cache_dir=None)
        outcome = plugin.invoke(registry, {"name": "over", "path": "a.md"}, self.cwd)
        self.assertEqual(outcome.error, f"Error: {over}")

    def test_entries_in_folders_the_walk_enters_count_and_the_bound_is_met_there(self) -> None:
        deep = self.root / "deep"
        write(deep / "SKILL.md", skill_md("deep"))
        inner = deep / "d1" / "d2"
        inner.mkdir(parents=True)
        hidden_entries(inner, MAX_WALK_ENTRIES - 1)  # with d1 and d2: one over
        with self.assertRaises(RegistryFailure) as raised:
            self.registry().list_files(self.cwd, "deep", 10)
        self.assertIn("more than 16384 entries", str(raised.exception))
        os.remove(inner / ".h1")
        self.assertEqual(self.registry().list_files(self.cwd, "deep", 10), SkillFiles([], 0))


class LocalAgainstSkillHost(unittest.TestCase):
    """The same tree listed and read by both hosts through the same plugin:
    `skill-host load NAME [--path P] --json` against this host's invoke."""

    CONFIG = {"skillReads": True, "skillResourceManifest": 600}

    def setUp(self) -> None:
        skill_host()
        self.top = Path(tempfile.mkdtemp())
        self.addCleanup(lambda: __import__("shutil").rmtree(self.top))
        self.root = self.top / "skills"
        self.cwd = self.top / "work"
        self.cwd.mkdir()
        self.config = self.top / "config.json"
        self.config.write_text(json.dumps(self.CONFIG))
        self.roots = Roots({"HOME": str(self.top / "home")}, [str(self.root)])
        self.plugin = Plugin.create(config=self.CONFIG, cache_dir=None)

    def rust(self, name: str, path: str | None) -> Any:
        arguments = ["--config", str(self.config), "load", name, "--json", "--cwd", str(self.cwd)]
        done = run_skill_host(self.roots, *arguments, *(["--path", path] if path is not None else []))
        return json.loads(done.stdout)

    def python(self, name: str, path: str | None) -> Any:
        registry = SkillRegistry()
        registry.register_provider(self.roots.provider())
        arguments = {"name": name} if path is None else {"name": name, "path": path}
        outcome = self.plugin.invoke(registry, arguments, str(self.cwd))
        return {"error": outcome.error} if not outcome.ok else {"ok": outcome.value, "text": outcome.text}

    def assert_same(self, name: str, paths: list[str | None]) -> list[Any]:
        found = []
        for path in paths:
            with self.subTest(name=name, path=path):
                python = json.loads(json.dumps(self.python(name, path)))
                self.assertEqual(python, self.rust(name, path))
                found.append(python)
        return found

    def test_a_bundle_with_links_hidden_binary_and_large_files(self) -> None:
        deploy = self.root / "deploy"
        write(deploy / "SKILL.md", skill_md("deploy"))
        write(deploy / "references" / "api.md", "The API.\n")
        write(deploy / "references" / "ü-notes.md", "Notes ü.\n")
        write(deploy / "a" / "b" / "c" / "deep.md", "Deep.\n")
        write(deploy / "sub" / "SKILL.md", "Not the skill file.\n")
        write(deploy / ".env", "SECRET=1\n")
        write(deploy / ".git" / "config", "[core]\n")
        write(deploy / "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00")
        write(deploy / "latin1.txt", "caf\xe9".encode("latin-1"))
        write(deploy / "big.txt", b"x" * (MIB + 1))
        write(deploy / "exact.txt", b"y" * MIB)
        write(deploy / "back\\slash.md", "B\n")
        write(self.top / "outside.md", "Outside.\n")
        os.symlink("../../outside.md", deploy / "references" / "out.md")
        os.symlink(str(self.top / "outside.md"), deploy / "absolute.md")
        os.symlink("api.md", deploy / "references" / "alias.md")
        os.symlink("../.env", deploy / "references" / "env.md")
        os.symlink("../SKILL.md", deploy / "references" / "skill-link.md")
        os.symlink("references", deploy / "refs")
        os.symlink("missing.md", deploy / "dangling.md")
        os.mkfifo(deploy / "fifo")
        paths: list[str | None] = [
            None, "references/api.md", "references/ü-notes.md", "a/b/c/deep.md", "sub/SKILL.md", "SKILL.md",
            "references/out.md", "absolute.md", "references/alias.md", "references/env.md", "references/skill-link.md",
            "refs/api.md", "dangling.md", "fifo", "logo.png", "latin1.txt", "big.txt", "exact.txt", ".env",
            ".git/config", "back\\slash.md", "nope.md", "references", "../outside.md",
        ]
        whole, *_ = self.assert_same("deploy", paths)
        manifest = whole["ok"]["content"]
        for listed in ("references/api.md", "references/alias.md", "a/b/c/deep.md", "sub/SKILL.md", "big.txt"):
            self.assertIn(f"- {listed} (", manifest)
        for hidden in (".env", "out.md", "absolute.md", "env.md", "skill-link.md", "refs/", "fifo", "back"):
            self.assertNotIn(hidden, manifest)

    def test_a_flat_skill_serves_only_itself_as_skill_md(self) -> None:
        write(self.root / "flat.md", skill_md("flat"))
        write(self.root / "other.md", "x")
        self.assert_same("flat", [None, "SKILL.md", "other.md", "flat.md"])

    def test_the_walks_limits_fail_alike(self) -> None:
        many = self.root / "many"
        write(many / "SKILL.md", skill_md("many"))
        for index in range(MAX_SKILL_FILES):
            write(many / "files" / f"{index:03}.md", "x")
        huge = self.root / "huge"
        write(huge / "SKILL.md", skill_md("huge"))
        for index in range(3):
            with open(huge / f"part{index}.bin", "wb") as handle:
                handle.truncate(6 * MIB)
        found = self.assert_same("many", [None, "files/001.md"]) + self.assert_same("huge", [None, "SKILL.md"])
        # A read fails; a whole load stands without a manifest (or fails, with an older plugin).
        self.assertTrue(all("error" in each for each in found[1::2]), found)
        self.assertTrue(all("Files of this skill" not in json.dumps(each) for each in found[0::2]), found)

    def test_the_walks_bound_on_entries_fails_alike(self) -> None:
        for name, entries in (("full", MAX_WALK_ENTRIES), ("over", MAX_WALK_ENTRIES + 1)):
            folder = self.root / name
            write(folder / "SKILL.md", skill_md(name))
            write(folder / "a.md", "A\n")
            hidden_entries(folder, entries - 1)
        full = self.assert_same("full", [None, "a.md"])
        self.assertIn("- a.md (2 bytes)", full[0]["ok"]["content"])
        over = self.assert_same("over", [None, "a.md", "SKILL.md"])
        text = 'Error: skill "over" has more than 16384 entries below its folder; at most 16384 are looked at'
        self.assertEqual([each.get("error") for each in over[1:]], [text, text])

    def test_a_folder_swapped_since_the_listing_is_not_read(self) -> None:
        swapped = self.root / "swapped"
        write(swapped / "SKILL.md", skill_md("swapped"))
        write(swapped / "a.md", "A\n")
        registry = SkillRegistry()
        registry.register_provider(self.roots.provider())
        self.assertEqual(registry.read_file(str(self.cwd), "swapped", "a.md").text, "A\n")
        os.rename(swapped, self.top / "moved")
        write(swapped / "SKILL.md", skill_md("swapped"))
        write(swapped / "a.md", "Another A\n")
        outcome = self.plugin.invoke(registry, {"name": "swapped", "path": "a.md"}, str(self.cwd))
        self.assertEqual(outcome.error, 'Error: skill "swapped" changed on disk since it was listed; list the skills again')
        registry.invalidate()
        self.assertEqual(registry.read_file(str(self.cwd), "swapped", "a.md").text, "Another A\n")


if __name__ == "__main__":
    unittest.main()

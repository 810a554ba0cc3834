"""A local skill's files in this host (spec §3.15, docs/security.md): reads
confined beneath the skill's folder, the races a writer in the folder can
run against them, and the same answers as skill-host's on the same trees."""

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
from test_files import candidate, hidden_entries, skill_md, write


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

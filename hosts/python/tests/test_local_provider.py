"""The filesystem provider (spec §4.2) against skill-host's LocalProvider:
the same trees listed by both, compared field by field (names,
descriptions, policies, sources, ranks, paths, shadowed and skipped files,
completeness, warnings), the corpus loaded by both (content, resource base,
body digest), and a pre-step over the corpus publishing the same catalog."""

from __future__ import annotations

import json
import os
import tempfile
import unittest
from pathlib import Path

from dsh_skill import Enter, LocalProvider, LocalRoots, Plugin, SessionLog, SkillRegistry, packaged_component, run_step
from dsh_skill.local_provider import MAX_SKILL_FILE_BYTES
from helpers import REPO
from listings import Roots, python_load, python_skills, run_skill_host, rust_load, rust_skills

CORPUS = REPO / "tests" / "fixtures" / "corpus"


def skill(name: str, description: str = "Does things.", extra: str = "", body: str = "Body.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}"


def write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)


class Tree:
    """A project with a `.git`, user homes and custom and bundled roots, under one temporary folder."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.project = top / "project"
        (self.project / ".git").mkdir(parents=True)
        self.cwd = self.project / "src" / "deep"
        self.cwd.mkdir(parents=True)
        self.dsh = self.project / ".dsh" / "skills"
        self.agents = self.project / ".agents" / "skills"
        self.custom = top / "custom"
        self.home = top / "home"
        self.dsh_home = top / "dsh-home"
        self.agents_home = top / "agents-home"
        self.bundled = top / "bundled"
        for folder in (self.dsh, self.agents, self.custom, self.home):
            folder.mkdir(parents=True, exist_ok=True)

    def roots(self, **env: str) -> Roots:
        base = {"HOME": str(self.home), "DSH_HOME": str(self.dsh_home), "DSH_AGENTS_HOME": str(self.agents_home)}
        return Roots({**base, **env}, [str(self.custom)], str(self.bundled))


class SameListing(unittest.TestCase):
    def assert_same(self, roots: Roots, cwd: Path | str) -> dict:
        rust, rust_warnings = rust_skills(roots, str(cwd))
        python, python_warnings = python_skills(roots, str(cwd))
        self.assertEqual(python["skills"], rust["skills"])
        self.assertEqual(python["shadowed"], rust["shadowed"])
        self.assertEqual(python["skipped"], rust["skipped"])
        self.assertEqual(python["complete"], rust["complete"])
        self.assertEqual(python_warnings, rust_warnings)
        return rust


class Trees(SameListing):
    def setUp(self) -> None:
        self.directory = tempfile.TemporaryDirectory()
        self.tree = Tree(Path(self.directory.name))

    def tearDown(self) -> None:
        self.directory.cleanup()

    def test_roots_ranks_bundles_flat_files_and_duplicates(self) -> None:
        t = self.tree
        write(t.dsh / "alpha" / "SKILL.md", skill("alpha", extra="disable-model-invocation: true\n"))
        write(t.dsh / "beta.md", skill("beta", extra="user-invocable: no\nwhenToUse: When asked.\n"))
        write(t.dsh / ".hidden.md", skill("hidden-flat"))
        write(t.dsh / ".hidden-bundle" / "SKILL.md", skill("hidden-bundle"))
        write(t.dsh / "NOTES.MD", skill("upper-suffix"))
        write(t.dsh / "notes.txt", skill("not-markdown"))
        (t.dsh / "just-a-folder").mkdir()
        write(t.dsh / "folder.md" / "SKILL.md", skill("folder-named-md"))
        write(t.dsh / "deeper" / "inner" / "SKILL.md", skill("too-deep"))
        write(t.agents / "alpha" / "SKILL.md", skill("alpha", "The agents one."))
        write(t.agents / "gamma.md", skill("gamma"))
        write(t.custom / "beta" / "SKILL.md", skill("beta", "Custom beta."))
        write(t.custom / "renamed.md", skill("delta"))
        write(t.dsh_home / "skills" / ".system" / "SKILL.md", skill("system-skill"))
        write(t.dsh_home / "skills" / ".system" / "sys" / "SKILL.md", skill("system-nested"))
        write(t.dsh_home / "skills" / "delta.md", skill("delta", "User delta."))
        write(t.agents_home / "skills" / ".system" / "SKILL.md", skill("agents-system"))
        write(t.bundled / "epsilon" / "SKILL.md", skill("epsilon", extra="metadata:\n  version: 1\n"))
        rust = self.assert_same(t.roots(), t.cwd)
        self.assertEqual(len(rust["skills"]), 9)  # the user-agents root keeps its `.system`
        self.assertEqual(len(rust["shadowed"]), 3)

    def test_links_hidden_files_sizes_fifos_and_bytes(self) -> None:
        t = self.tree
        write(t.top / "elsewhere" / "linked.md", skill("linked"))
        write(t.top / "elsewhere" / "bundle" / "SKILL.md", skill("linked-bundle"))
        (t.dsh / "linked.md").symlink_to(t.top / "elsewhere" / "linked.md")
        (t.dsh / "linked-bundle").symlink_to(t.top / "elsewhere" / "bundle")
        (t.dsh / "dangling.md").symlink_to(t.top / "nowhere.md")
        (t.dsh / "loop.md").symlink_to(t.dsh / "loop.md")
        write(t.dsh / "dangling-inside" / "placeholder", "")
        (t.dsh / "dangling-inside" / "SKILL.md").symlink_to(t.top / "gone")
        os.mkfifo(t.dsh / "fifo.md")
        (t.dsh / "fifo-bundle").mkdir()
        os.mkfifo(t.dsh / "fifo-bundle" / "SKILL.md")
        (t.dsh / "dir-as-skill-file").mkdir()
        (t.dsh / "dir-as-skill-file" / "SKILL.md").mkdir()
        with open(t.dsh / "big.md", "wb") as big:
            big.truncate(MAX_SKILL_FILE_BYTES + 1)
        write(t.dsh / "at-limit.md", skill("at-limit", body="x" * (MAX_SKILL_FILE_BYTES - 64)).ljust(MAX_SKILL_FILE_BYTES))
        write(t.dsh / "nul.md", skill("nul", body="a\0b"))
        write(t.dsh / "latin1.md", skill("latin", body="caf\xe9").encode("latin-1"))
        write(t.dsh / "bom.md", "\ufeff" + skill("bom"))
        write(t.dsh / "crlf.md", skill("crlf", body="\r\n  Line one.\r\nLine two.\r\n\u3000").replace("\n", "\r\n"))
        write(t.dsh / "trim.md", skill("trim", body="\n \ufeff\xa0\t# Title\n\nText.  \n\n\u3000\x85"))
        write(Path(os.fsdecode(bytes(t.custom) + b"/\xff-bundle")) / "SKILL.md", skill("non-utf8-folder"))
        write(t.agents_home, "a file where the agents home should be")
        (t.top / "bundled").symlink_to(t.top / "missing-bundled")
        rust = self.assert_same(t.roots(), t.cwd)
        self.assertIn("broken symbolic link", json.dumps(rust["skipped"]))

    def test_a_root_that_is_a_file_and_a_link_loop_root(self) -> None:
        t = self.tree
        write(t.dsh_home / "skills", "not a folder")
        (t.top / "bundled").symlink_to(t.top / "bundled")
        write(t.custom / "ok.md", skill("ok"))
        self.assert_same(t.roots(), t.cwd)

    def test_home_variables(self) -> None:
        t = self.tree
        write(t.home / ".dsh" / "skills" / "home-dsh.md", skill("home-dsh"))
        write(t.home / ".agents" / "skills" / "home-agents.md", skill("home-agents"))
        write(t.home / "tilde" / "skills" / "tilde.md", skill("tilde"))
        self.assert_same(t.roots(DSH_HOME="  ", DSH_AGENTS_HOME=""), t.cwd)
        self.assert_same(t.roots(DSH_HOME="~/tilde", DSH_AGENTS_HOME="~/missing/../tilde"), t.cwd)
        no_home = t.roots()
        del no_home.env["HOME"], no_home.env["DSH_HOME"]
        self.assert_same(no_home, t.cwd)

    def test_without_a_git_folder_the_cwd_is_the_project(self) -> None:
        t = self.tree
        write(t.cwd / ".dsh" / "skills" / "here.md", skill("here"))
        write(t.dsh / "project.md", skill("project"))
        (t.project / ".git").rmdir()
        self.assert_same(t.roots(), t.cwd)
        write(t.project / ".git", "gitdir: elsewhere\n")  # a worktree's `.git` file marks a project too
        self.assert_same(t.roots(), t.cwd)

    def test_bad_frontmatter_of_each_kind_is_skipped_with_skill_hosts_reason(self) -> None:
        t = self.tree
        bad = {
            "no-frontmatter.md": "# Title\n",
            "unclosed.md": "---\nname: unclosed\ndescription: d\n",
            "empty.md": "---\n---\nBody",
            "not-mapping.md": "---\n- a\n---\n",
            "yaml-error.md": "---\nname: a\ndescription: Use this: when x\n---\n",
            "no-name.md": "---\ndescription: d\n---\n",
            "no-description.md": "---\nname: x\n---\n",
            "number-name.md": "---\nname: 12\ndescription: d\n---\n",
            "grammar.md": "---\nname: Bad_Name\ndescription: d\n---\n",
            "legacy.md": skill("legacy", extra="userInvocable: false\n"),
            "flag.md": skill("flag", extra="disable-model-invocation: maybe\n"),
            "alias.md": skill("alias", extra="metadata:\n  a: &x 1\n  b: *x\n"),
            "duplicate.md": skill("duplicate", extra="name: again\n"),
            "documents.md": skill("documents", extra="...\n--- \nname: x\n"),
            "deep.md": skill("deep", extra="metadata: " + "[" * 70 + "]" * 70 + "\n"),
            "large.md": skill("large", "x" * (64 * 1024)),
        }
        for name, text in bad.items():
            write(t.custom / name, text)
        rust = self.assert_same(t.roots(), t.cwd)
        self.assertEqual(len(rust["skipped"]), len(bad))


class Corpus(SameListing):
    """The real collections in tests/fixtures/corpus, as custom and bundled roots."""

    def roots(self) -> Roots:
        self.home = tempfile.TemporaryDirectory()
        self.addCleanup(self.home.cleanup)
        env = {"HOME": self.home.name}
        return Roots(env, [str(CORPUS / "dsh-agents-skills")], str(CORPUS / "anthropic-skills"))

    def test_the_corpus_lists_alike(self) -> None:
        roots = self.roots()
        rust = self.assert_same(roots, self.home.name)
        self.assertGreater(len(rust["skills"]), 10)

    def test_every_corpus_skill_loads_alike(self) -> None:
        roots = self.roots()
        cwd = self.home.name
        listed = roots.provider().list(cwd).candidates
        names = [c.name for c in listed if c.invocation.model_invocable]  # the model cannot load the others
        self.assertGreater(len(names), 10)
        for name in names:
            with self.subTest(name):
                self.assertEqual(python_load(roots, cwd, name), rust_load(roots, cwd, name))

    def test_a_pre_step_over_the_corpus_publishes_skill_hosts_catalog(self) -> None:
        roots = self.roots()
        cwd = self.home.name
        component = Path(self.home.name) / "plugin.wasm"  # both hosts run this package's component
        component.write_bytes(packaged_component())
        session_path = Path(self.home.name) / "rust.jsonl"
        done = run_skill_host(roots, "--plugin", str(component), "step", "--session", str(session_path), "--cwd", cwd)
        self.assertEqual(done.returncode, 0, done.stderr)
        registry = SkillRegistry()
        registry.register_provider(roots.provider())
        outcome = run_step(Plugin.create(), registry, SessionLog.in_memory(cwd), Enter([]), cwd=cwd)
        texts = [block["text"] for message in outcome.decision.messages for block in message["content"]]
        self.assertIn("<available_skills>", texts[0])
        self.assertEqual("\n\n".join(texts) + "\n", done.stdout.decode())


class Loading(unittest.TestCase):
    def test_a_skill_without_a_path_and_a_vanished_file(self) -> None:
        with tempfile.TemporaryDirectory() as top:
            write(Path(top) / "gone.md", skill("gone"))
            provider = LocalProvider(LocalRoots(custom=[top]))
            candidate = provider.list(None).candidates[0]
            os.remove(Path(top) / "gone.md")
            self.assertIsNone(provider.load(None, candidate))
            candidate.path = None
            with self.assertRaisesRegex(Exception, 'skill "gone" has no file, so the local provider cannot load it'):
                provider.load(None, candidate)


if __name__ == "__main__":
    unittest.main()

"""Frontmatter parsing (spec §4.2) against skill-host: each text below is a
skill file in a root of its own, listed by both hosts in one run, so every
reason (the YAML errors with their lines and columns included), name,
description and policy must be skill-host's."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from test_local_provider import SameListing, write
from listings import Roots

HEAD = "---\nname: a\ndescription: d\n"
BASE = "---\nname: my-skill\ndescription: Does things.\n"
FLAGS = ["true", "True", "FALSE", "1", "0", "1.0", "0x1", "-0", '"1"', "'0'", "yes", "ON", "no", "off", "'False'",
         "!!str true", "maybe", "2", "''", "", "~", "[true]", "{a: 1}", "0.5", "y"]
TEXTS = [
    # Delimiters, byte-order mark, line endings, the body.
    "no frontmatter\n", "", "---", " ---\nname: a\n---\n", "--- \nname: a\ndescription: b\n---\n",
    "\ufeff---\nname: a\ndescription: b\n---\n", "---\nname: a\ndescription: d\n", "---\nname: a\ndescription: d\n---",
    "---\r\nname: my-skill\r\ndescription: Does things.\r\n---\r\n\r\nLine one.\r\n",
    "---\nname: my-skill\ndescription: |\n  a\n  ---\n---\nBody\n",
    "---\nname: my-skill\ndescription: |\n  a\n  --- not a delimiter\n---- \n---\nBody\n",
    # The mapping and the required fields.
    "---\n---\nBody", "---\n# only a comment\n---\nBody", "---\n- a\n- b\n---\n", "---\njust text\n---\n",
    "---\ndescription: d\n---\n", "---\nname: my-skill\n---\n", '---\nname: my-skill\ndescription: ""\n---\n',
    "---\ndescription: d\nname: 123\n---\n", "---\nname:\ndescription: d\n---\n", "---\nname: my-skill\ndescription: [a]\n---\n",
    '---\nname: "123"\ndescription: d\n---\n', "---\nname: My-Skill\ndescription: d\n---\n", '---\nname: "a b"\ndescription: d\n---\n',
    '---\nname: "x\\ty\\u00e9\\u0001\\u00a0"\ndescription: d\n---\n', "---\nname: my-skill\ndescription: true\n---\n",
    "---\nname: my-skill\ndescription: !!str true\n---\n", "---\nname: a\ndescription: 1e300\n---\n", "---\nname: a\ndescription: 0.1e-6\n---\n",
    "---\nname: a\ndescription: yes\n---\n", "---\n'name': a\n\"description\": d\n---\n", "---\n1: x\nname: a\ndescription: d\n---\n",
    # Legacy keys and the two invocation keys.
    BASE + "modelInvocable: true\n---\n", BASE + "userInvocable:\n---\n", BASE + "disableModelInvocation: false\n---\n",
    *[BASE + f"user-invocable: {flag}\n---\n" for flag in FLAGS],
    *[BASE + f"disable-model-invocation: {flag}\n---\n" for flag in FLAGS],
    # Aliases, nesting, duplicates, documents, size.
    BASE + "metadata:\n  a: &x [1, 2]\n  b: *x\n---\n", BASE + "metadata: &m {a: 1}\n---\n",
    BASE + "metadata: " + "[" * 63 + "]" * 63 + "\n---\n", BASE + "metadata: " + "[" * 64 + "]" * 64 + "\n---\n",
    BASE + "metadata: " + "[" * 300 + "\n---\n", BASE + "metadata:\n  " + "- " * 100 + "x\n---\n",
    "---\nname: my-skill\ndescription: d\nname: other\n---\n", BASE + "metadata:\n  ~: a\n  null: b\n---\n",
    BASE + "metadata:\n  0.0: a\n  -0.0: b\n---\n", BASE + "metadata:\n  1: a\n  1.0: b\n  .nan: c\n  .NaN: d\n  x: {k: 1}\n  y: {k: 2}\n---\n",
    BASE + "metadata: {a: 1, a: 2}\n---\n", "---\nname: my-skill\ndescription: d\n...\n--- \nname: x\n---\n",
    "---\nname: a\ndescription: d\n...\nmore: x\n---\n", "---\nname: a\ndescription: d\n...\n---\n", "---\n%YAML 1.2\n---\nname: a\n---\n",
    "---\nname: a\ndescription: " + "x" * 65520 + "\n---\n", "---\nname: a\ndescription: " + "x" * 65530 + "\n---\n",
    # Scalars: plain, quoted, block; flow collections; comments.
    "---\nname: a\ndescription: x\n  y\n\n  z\n---\n", "---\nname: a\ndescription: b #c\n---\n", "---\nname: a\ndescription: b#c\n---\n",
    "---\nname: a\ndescription: 'it''s'\n---\n", "---\nname: a\ndescription: 'sq\n   fold'\n---\n",
    '---\nname: a\ndescription: "multi\n  line\n\n  quoted \\\n  joined"\n---\n',
    "---\nname: a\ndescription: d\nk: \"\\x41\\u263A\\U0001F600\"\n---\n", "---\nname: my-skill\ndescription: |-\n  Line one.\n  Line two.\n---\n",
    "---\nname: a\ndescription: >\n  folded\n  text\n\n  para\n    indented\n  back\n---\n", "---\nname: a\ndescription: |+\n  keep\n\n---\n",
    "---\nname: a\ndescription: >2-\n    two\n   x\n---\n", "---\nname: a # comment\ndescription: 'q' # c\n---\n",
    "---\nname: a\ndescription: d\nlist:\n- a\n- b\nafter: 1\n---\n", "---\nname: a\ndescription: d\nm:\n  - a: 1\n    b: 2\n  - c\n---\n",
    "--- # c\nname: a\ndescription: d\n---\n", "---\nname: a\ndescription: d\nk: [a, b\n  , c]\n---\n", "---\nname: a\ndescription: {x: 1}\n---\n",
    "---\nname: a\ndescription: d\n: x\n---\n", "---\nname: a\ndescription: d\n? x\n: y\n---\n", HEAD + "[a]: b\n---\n", HEAD + "k: [a: b]\n---\n",
    HEAD + "k: !foo bar\n---\n", HEAD + "k: &a\n---\n", HEAD + "&a k: v\n---\n",
    BASE + "whenToUse: When asked.\n---\n", BASE + "whenToUse: 3\n---\n",
    # Syntax errors skill authors make.
    "---\nname: a\ndescription: Use this: when x\n---\n", '---\nname: a\ndescription: "unclosed\n---\n', "---\nname: a\ndescription: [unclosed\n---\n",
    "---\nname: a\n description: b\n---\n", "---\nname: a\n  description: b\n---\n", "---\nname: a\ndescription: b\n  c: d\n---\n",
    "---\nname: a\ndescription: b\nfoo\n---\n", HEAD + "foo\nbar: x\n---\n", HEAD + "k: v\n\tbad: tab\n---\n", HEAD + "k: {a: 1, b\n---\n",
    HEAD + "k: v\n- x\n---\n", HEAD + "- x\nk: v\n---\n", HEAD + "k:\n  - a\n  b: c\n---\n", HEAD + "k: a: b\n---\n", HEAD + "k: @x\n---\n",
    HEAD + "k: `x\n---\n", HEAD + 'k: "a\\qb"\n---\n', '---\nname: a\ndescription: "\\xZZ"\n---\n',
]


class Frontmatter(SameListing):
    def test_every_text_reads_as_skill_host_reads_it(self) -> None:
        with tempfile.TemporaryDirectory() as top:
            folders = []
            for index, text in enumerate(TEXTS):
                folder = Path(top) / f"root-{index:03}"
                write(folder / "SKILL.md", text)
                folders.append(str(folder))
            rust = self.assert_same(Roots({}, folders), top)
            self.assertGreater(len(rust["skipped"]), 70)
            self.assertGreater(len(rust["skills"]) + len(rust["shadowed"]), 60)


if __name__ == "__main__":
    unittest.main()

"""The record table (rules/records.json), shared with the Rust and Node hosts'
tests, through this host's checks: each source and message through
``added_message``, each step through ``apply_decision``."""

from __future__ import annotations

import unittest
from typing import Any

from wasmtime.component import Variant

from dsh_skill.errors import HostError
from dsh_skill.imports import StepState, record
from dsh_skill.jsonvalue import JsonSyntaxError, parse, stringify
from dsh_skill.output import OutputCheck, OutputLimits
from dsh_skill.plugin import Enter, added_message, apply_decision, user_message
from helpers import REPO

TABLE = parse((REPO / "rules" / "records.json").read_text(encoding="utf-8"))
PREFIX = "plugin call `pre-step` returned invalid output: "


def invalid(reason: str) -> HostError:
    return HostError.invalid_output("pre-step", reason)


def source_text(row: dict[str, Any]) -> str:
    return row["text"] if "text" in row else stringify(row["source"])


def message_of(row: dict[str, Any]) -> Any:
    content = [
        Variant("text", block) if isinstance(block, str) else Variant("other", block["other"])
        for block in row.get("content", ["text"])
    ]
    return record(source=source_text(row), content=content)


def reason(row: dict[str, Any], source: str) -> str:
    refused = row["refused"]
    if refused == "not-json":
        try:
            parse(source)
        except JsonSyntaxError as error:
            if "error" in row:
                assert str(error) == row["error"], (str(error), row)
            return f"an added message's source is not JSON: {error}"
        raise AssertionError(f"{source!r} parsed")
    if refused == "not-one-text-block":
        return "an added message must be exactly one text block"
    if refused == "not-a-notice":
        return f"an added skill notice has source {stringify(parse(source))}, which is not a changed, gone or reload notice"
    if refused == "foreign":
        return (
            f"an added message has source {stringify(parse(source))}; the plugin may only write "
            '{"kind":"plugin","plugin":"dsh-tool-skill"} or a skill invocation'
        )
    raise AssertionError(f"the table names no refusal {refused}")


class Records(unittest.TestCase):
    def check_row(self, row: dict[str, Any]) -> None:
        message = message_of(row)
        if "accepted" in row:
            kind, _name, data = added_message(message, invalid)
            self.assertEqual(kind, row["accepted"])
            self.assertEqual(stringify(data["source"]), stringify(parse(message.source)))
            self.assertEqual(data["content"], [{"type": "text", "text": message.content[0].payload}])
            self.assertEqual(data["role"], "user")
            self.assertIsInstance(data["id"], str)
        else:
            expected = reason(row, message.source)
            with self.assertRaises(HostError) as raised:
                added_message(message, invalid)
            self.assertEqual(str(raised.exception), PREFIX + expected)

    def test_every_source_is_accepted_or_refused_as_the_table_says(self) -> None:
        self.assertGreater(len(TABLE["sources"]), 50)
        for row in TABLE["sources"]:
            with self.subTest(row=stringify(row)):
                self.check_row(row)

    def test_every_message_is_accepted_or_refused_as_the_table_says(self) -> None:
        for row in TABLE["messages"]:
            with self.subTest(row=stringify(row)):
                self.check_row(row)

    def test_every_step_enters_or_is_refused_as_the_table_says(self) -> None:
        for step in TABLE["steps"]:
            with self.subTest(step=stringify(step)):
                text = " ".join(f"/{name}" for name in step["names"])
                proposal = Enter([user_message({"kind": "user"}, text)])
                state = StepState([], [message_of(row) for row in step["added"]], 1)

                def apply() -> Any:
                    return apply_decision(proposal, state, OutputCheck("pre-step", OutputLimits()))

                if "accepted" in step:
                    self.assertEqual(len(apply().messages), step["accepted"])
                else:
                    with self.assertRaises(HostError) as raised:
                        apply()
                    self.assertEqual(str(raised.exception), PREFIX + step["refused"])


if __name__ == "__main__":
    unittest.main()

"""The hostile plugin (tests/fixtures/hostile-plugin) contained: each
misbehaviour stopped with the exact error the other hosts give
(tests/end_to_end/cross_host.rs), the session left as it was, and the next
call served."""

from __future__ import annotations

import unittest

from dsh_skill import Enter, HostError, MemoryProvider, OutputLimits, Plugin, SandboxLimits, Scenario
from dsh_skill import SessionLog, SkillRegistry, run_step, user_message
from dsh_skill.jsonvalue import stringify
from helpers import hostile

LIMITS = SandboxLimits(timeout_ms=500, memory_bytes=32 * 1024 * 1024, output=OutputLimits(max_text_bytes=1000))
STEPS = '[{"op":"pre-step","messages":["hello /a-skill"]},{"op":"pre-step","reject":"no"}]'
INVOKE = '[{"op":"invoke","name":"a-skill"}]'
PRE = "plugin call `pre-step` "
INV = "plugin call `invoke` "

# (mode, extra configuration, steps, the error) as cross_host.rs has them.
CASES = [
    ("loop", "", STEPS, PRE + "exceeded its deadline of 500 ms"),
    ("alloc", "", STEPS, PRE + "exceeded its memory cap of 32 MiB"),
    ("two-catalogs", "", STEPS, PRE + "returned invalid output: more than one catalog was added"),
    ("reject", "", STEPS, PRE + "returned invalid output: the plugin may not change a reject"),
    ("decide-twice", "", STEPS, PRE + "returned invalid output: it decided 2 times; a pre-step decides at most once"),
    ("bad-index", "", STEPS, PRE + "returned invalid output: it kept proposed message 1 out of order or out of range (1 proposed)"),
    ("keep-twice", "", STEPS, PRE + "returned invalid output: it kept proposed message 0 out of order or out of range (1 proposed)"),
    (
        "forge",
        "",
        STEPS,
        PRE + 'returned invalid output: an added message has source {"kind":"user"}; the plugin may only write '
        '{"kind":"plugin","plugin":"dsh-tool-skill"} or a skill invocation',
    ),
    (
        "tamper",
        "",
        STEPS,
        PRE + 'returned invalid output: an added message has source {"kind":"user"}; the plugin may only write '
        '{"kind":"plugin","plugin":"dsh-tool-skill"} or a skill invocation',
    ),
    ("many-messages", ',"count":1000', STEPS, PRE + "returned invalid output: it added 1000 messages; a pre-step may add at most 64"),
    (
        "big-text",
        ',"bytes":2000',
        STEPS,
        PRE + "returned invalid output: added message 1's content block 1 is 2000 bytes, over the cap of 1000 bytes per text",
    ),
    ("step-outside", ',"on":"invoke"', INVOKE, INV + "trapped: the plugin called `step.decide` outside a pre-step"),
    (
        "many-filters",
        ',"count":17',
        STEPS,
        PRE + "trapped: the plugin passed 17 source filters to `session.list-user-messages`; at most 16 are allowed",
    ),
    ("other-skill", "", INVOKE, INV + 'returned invalid output: the value is skill "other-skill", but the arguments asked for "a-skill"'),
    ("many-matches", "", '[{"op":"invoke","arguments":{"query":"a"}}]', INV + "returned invalid output: it returned 6 search matches; at most 5 are allowed"),
    ("bare-error", "", INVOKE, INV + "returned invalid output: a tool error must read `Error: <message>`"),
    ("big-text", ',"bytes":2000,"on":"invoke"', INVOKE, INV + "returned invalid output: the text is 2000 bytes, over the cap of 1000 bytes per text"),
    ("stack", "", STEPS, PRE + "trapped: call stack exhausted"),
    ("trap-after-import", "", STEPS, PRE + "trapped: wasm `unreachable` instruction executed"),
    ("import-loop", "", STEPS, PRE + "exceeded its deadline of 500 ms"),
]


class Hostile(unittest.TestCase):
    component: bytes

    @classmethod
    def setUpClass(cls) -> None:
        cls.component = hostile()

    def replay(self, mode: str, extra: str, steps: str) -> str:
        scenario = Scenario.parse(f'{{"config":{{"mode":"{mode}"{extra}}},"steps":{steps}}}')
        try:
            scenario.replay(self.component, LIMITS, None)
        except HostError as error:
            return str(error)
        return ""

    def test_each_misbehaviour_is_stopped_with_the_other_hosts_error(self) -> None:
        for mode, extra, steps, expected in CASES:
            with self.subTest(mode=mode, extra=extra):
                self.assertEqual(self.replay(mode, extra, steps), expected)

    def test_a_panic_names_the_guests_message(self) -> None:
        error = self.replay("panic", "", STEPS)
        self.assertTrue(error.startswith(PRE + "trapped: the guest panicked at src/lib.rs:"), error)
        self.assertTrue(error.endswith(": hostile plugin panicked on purpose"), error)

    def test_a_users_slash_name_allows_one_injection(self) -> None:
        scenario = Scenario.parse(f'{{"config":{{"mode":"inject"}},"steps":{STEPS}}}')
        steps = scenario.replay(self.component, LIMITS, None)["steps"]
        self.assertEqual(steps[0]["messages"][1]["source"]["name"], "a-skill")

    def test_the_session_is_unchanged_and_the_next_call_is_served(self) -> None:
        registry = SkillRegistry()
        registry.register_provider(MemoryProvider.of("memory", [{"name": "a-skill", "description": "A.", "content": "Body."}]))
        for mode in ["loop", "alloc", "panic", "stack", "forge", "two-catalogs", "many-messages", "import-loop", "trap-after-import"]:
            with self.subTest(mode=mode):
                config = {"mode": mode, "on": "pre-step", "count": 1000}
                plugin = Plugin.create(self.component, config, LIMITS, None)
                session = SessionLog.in_memory("/workspace")
                session.append_user_messages([(user_message({"kind": "user"}, "first"), "append")])
                before = (session.to_jsonl(), session.history_version)
                with self.assertRaises(HostError) as raised:
                    run_step(plugin, registry, session, Enter([user_message({"kind": "user"}, "hello /a-skill")]), "/workspace")
                self.assertTrue(str(raised.exception).startswith(PRE), str(raised.exception))
                self.assertEqual((session.to_jsonl(), session.history_version), before, "the session is unchanged")
                served = plugin.invoke(registry, {"name": "a-skill"}, "/workspace")
                self.assertTrue(served.ok or served.error is not None)
                definition = plugin.definition()
                self.assertIsInstance(stringify(definition.parameters), str)


if __name__ == "__main__":
    unittest.main()

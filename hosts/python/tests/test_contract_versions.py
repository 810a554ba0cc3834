"""A plugin built against the released dsh:skill@0.1.0 (tests/fixtures/plugin-v0-1)
runs every export here too, as in contract_versions.rs (spec §9.4)."""

from __future__ import annotations

import unittest

from dsh_skill import HostError, Plugin, Scenario
from helpers import plugin_v0_1


def skill(name: str, invocable: bool) -> str:
    return (
        f'{{"name":"{name}","description":"{name} skill.","content":"{name} body.",'
        f'"invocation":{{"modelInvocable":{str(invocable).lower()},"userInvocable":true}}}}'
    )


class ContractVersions(unittest.TestCase):
    def test_a_0_1_0_plugin_replays_as_in_the_other_hosts(self) -> None:
        component = plugin_v0_1()
        plugin = Plugin.create(component, "{}", cache_dir=None)
        self.assertEqual(plugin.sandbox.version, "0.1.0")
        self.assertEqual(plugin.definition().description, "Load a skill by name (a dsh:skill@0.1.0 plugin).")
        text = (
            '{"providers":[{"name":"memory","skills":[' + ",".join([skill("b-skill", True), skill("a-skill", True), skill("hidden", False)]) + "]}],"
            '"steps":[{"op":"pre-step","messages":[{"role":"user","content":[{"type":"text","text":"hello"}],"source":{"kind":"user"}}]},'
            '{"op":"pre-step","messages":[]},{"op":"invoke","name":"b-skill"},{"op":"invoke","name":"missing"},'
            '{"op":"compact"},{"op":"pre-step","messages":[]}]}'
        )
        steps = Scenario.parse(text).replay_with(plugin)["steps"]
        self.assertEqual(steps[0]["messages"][1]["text"], "0.1.0 catalog: a-skill, b-skill")
        self.assertEqual(steps[1]["messages"], [], "the catalog is shown")
        self.assertEqual(steps[2]["ok"]["name"], "b-skill")
        self.assertEqual(steps[2]["text"], "0.1.0 loaded b-skill:\nb-skill body.")
        self.assertEqual(steps[3]["error"], "Error: no skill named missing")
        self.assertEqual(steps[5]["messages"][0]["text"], "0.1.0 catalog: a-skill, b-skill", "compaction hid it")

    def test_a_refused_configuration_is_the_plugins_text(self) -> None:
        with self.assertRaises(HostError) as raised:
            Plugin.create(plugin_v0_1(), '{"refuse":true}', cache_dir=None)
        self.assertEqual(str(raised.exception), 'this 0.1.0 plugin refuses {"refuse":true}')

    def test_a_component_that_is_not_a_plugin_is_refused(self) -> None:
        with self.assertRaises(HostError) as raised:
            Plugin.create(b"\x00asm\x0d\x00\x01\x00", "{}", cache_dir=None)
        self.assertTrue(str(raised.exception).startswith("cannot load the plugin component: "), str(raised.exception))


if __name__ == "__main__":
    unittest.main()

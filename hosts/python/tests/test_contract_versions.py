"""Every contract version skill-host runs runs here too, as in
contract_versions.rs (spec §9.4): the packaged plugin is a 0.4.0 one, the
hostile plugin a 0.2.0 one, a plugin built against the released
dsh:skill@0.1.0 (tests/fixtures/plugin-v0-1) runs every export; a version
this host does not run is refused with skill-host's text, and a skill
summary carries its whenToUse for a 0.3.0 or later plugin only. (0.3.0's
own adapter: test_files.py.)"""

from __future__ import annotations

import ctypes
import unittest
from typing import Any

import wasmtime
from wasmtime import _ffi as ffi

from dsh_skill import HostError, MemoryProvider, Plugin, Scenario, SkillRegistry, packaged_component
from dsh_skill.imports import CallContext
from dsh_skill.sandbox import Compiled
from dsh_skill.versions import CURRENT, imports
from helpers import hostile, plugin_v0_1

#: skill-host's refusal of a version it does not run (tests/end_to_end/contract_versions.rs).
NOT_RUN = (
    "cannot load the plugin component: the component exports dsh:skill/plugin@0.5.0, but this host runs one that "
    "exports dsh:skill/plugin@0.4.0 or dsh:skill/plugin@0.3.0 or dsh:skill/plugin@0.2.0 or dsh:skill/plugin@0.1.0"
)


def exporting(version: str) -> bytes:
    """The packaged plugin with its export renamed to ``version`` (its imports stay the current version's)."""
    component = packaged_component()
    assert component.count(f"dsh:skill/plugin@{CURRENT}".encode()) > 0
    return component.replace(f"dsh:skill/plugin@{CURRENT}".encode(), f"dsh:skill/plugin@{version}".encode())


def lower(store: wasmtime.Store, ty: Any, value: Any) -> None:
    """Lowers ``value`` as wasmtime-py lowers an import's result of type ``ty``."""
    raw = ffi.wasmtime_component_val_t()
    ty.convert_to_c(store, value, ctypes.pointer(raw))
    ffi.wasmtime_component_val_delete(ctypes.byref(raw))


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

    def test_each_plugin_runs_as_the_version_it_exports(self) -> None:
        self.assertEqual(Plugin.create(cache_dir=None).sandbox.version, "0.4.0")
        self.assertEqual(Plugin.create(hostile(), {"mode": "none"}, cache_dir=None).sandbox.version, "0.2.0")
        self.assertEqual(Plugin.create(plugin_v0_1(), cache_dir=None).sandbox.version, "0.1.0")

    def test_a_version_this_host_does_not_run_is_refused_with_those_it_does(self) -> None:
        with self.assertRaises(HostError) as raised:
            Plugin.create(exporting("0.5.0"), cache_dir=None)
        self.assertEqual(str(raised.exception), NOT_RUN)

    def test_a_component_importing_another_version_than_it_exports_is_refused_when_loaded(self) -> None:
        # The export stays the current version's (its types are), the registry import is renamed 0.3.0.
        component = packaged_component().replace(f"dsh:skill/registry@{CURRENT}".encode(), b"dsh:skill/registry@0.3.0")
        with self.assertRaises(HostError) as raised:
            Plugin.create(component, cache_dir=None)
        self.assertEqual(
            str(raised.exception),
            "cannot load the plugin component: component imports instance `dsh:skill/registry@0.3.0`, "
            "but a matching implementation was not found in the linker",
        )

    def test_a_summary_carries_its_when_to_use_for_a_0_3_0_or_later_plugin_only(self) -> None:
        registry = SkillRegistry()
        skills = [
            {"name": "a-skill", "description": "A.", "content": "A body.", "whenToUse": "When asked."},
            {"name": "b-skill", "description": "B.", "content": "B body."},
        ]
        registry.register_provider(MemoryProvider.of("memory", skills))
        context = CallContext(registry, None, "/workspace")
        answers: dict[str, Any] = {}
        for component, version in ((packaged_component(), "0.4.0"), (hostile(), "0.2.0"), (plugin_v0_1(), "0.1.0")):
            with self.subTest(version=version):
                compiled = Compiled(component, None)
                self.assertEqual(compiled.version, version)
                registry_imports = imports(version)["registry"]
                answer = registry_imports["snapshot"](context, None)
                listed = registry_imports["list-skills"](context, None)
                for summaries in (answer.payload.skills, listed):
                    self.assertEqual([summary.name for summary in summaries], ["a-skill", "b-skill"])
                    if version == "0.4.0":
                        self.assertEqual([getattr(summary, "when-to-use") for summary in summaries], ["When asked.", None])
                    else:
                        self.assertFalse(any(hasattr(summary, "when-to-use") for summary in summaries))
                # Lowered through the component's own import types, as a call lowers them.
                functions = compiled.component.type.imports(compiled.engine)[f"dsh:skill/registry@{version}"].ty
                types = functions.exports(compiled.engine)
                store = wasmtime.Store(compiled.engine)
                lower(store, types["snapshot"].ty.result, answer)
                if "list-skills" in types:
                    lower(store, types["list-skills"].ty.result, listed)
                answers[version] = (store, types, answer)
        store, types, _ = answers["0.4.0"]
        with self.assertRaises(AttributeError, msg="a 0.4.0 summary needs its when-to-use"):
            lower(store, types["snapshot"].ty.result, answers["0.2.0"][2])

    def test_a_component_that_is_not_a_plugin_is_refused(self) -> None:
        with self.assertRaises(HostError) as raised:
            Plugin.create(b"\x00asm\x0d\x00\x01\x00", "{}", cache_dir=None)
        self.assertTrue(str(raised.exception).startswith("cannot load the plugin component: "), str(raised.exception))


if __name__ == "__main__":
    unittest.main()

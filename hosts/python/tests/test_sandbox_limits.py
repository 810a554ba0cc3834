"""The sandbox's checks before and during instantiation (spec §8.2, §8.3):
the plugin interface checked on the component's type before anything runs,
a start function held to the deadline, one memory budget shared by every
memory. The components are made here from WAT (tests/components.py)."""

from __future__ import annotations

import time
import unittest
from importlib.resources import files

from components import LOOP_EMPTY, LOOP_MODULE, WRONG_TYPE, two_memories, wat, with_core_module

from dsh_skill import HostError, Plugin, SandboxLimits

PLUGIN = (files("dsh_skill") / "plugin.wasm").read_bytes()


def create(component: bytes, limits: SandboxLimits | None = None) -> Plugin:
    return Plugin.create(component, "{}", limits=limits, cache_dir=None)


class Interface(unittest.TestCase):
    def test_missing_functions_refused_before_instantiating(self) -> None:
        # Its start function loops: instantiating it would hang without a deadline.
        started = time.monotonic()
        with self.assertRaises(HostError) as caught:
            create(wat(LOOP_EMPTY))
        self.assertEqual(
            str(caught.exception),
            "cannot load the plugin component: instance export `dsh:skill/plugin@0.2.0` does not have export `configure`",
        )
        self.assertLess(time.monotonic() - started, 0.5)

    def test_names_checked_before_types(self) -> None:
        # skill-host's text: `configure` is there (of the wrong type), `definition` is not.
        with self.assertRaises(HostError) as caught:
            create(wat(WRONG_TYPE))
        self.assertEqual(
            str(caught.exception),
            "cannot load the plugin component: instance export `dsh:skill/plugin@0.2.0` does not have export `definition`",
        )


class Instantiation(unittest.TestCase):
    def test_start_function_meets_the_deadline(self) -> None:
        with self.assertRaises(HostError) as caught:
            create(with_core_module(PLUGIN, LOOP_MODULE), SandboxLimits(timeout_ms=100))
        self.assertEqual(str(caught.exception), "plugin call `configure` exceeded its deadline of 100 ms")
        self.assertEqual(caught.exception.kind, "timeout")


class MemoryBudget(unittest.TestCase):
    def test_two_memories_share_the_budget(self) -> None:
        # 2 × 768 pages (96 MiB) under 64 MiB: each memory alone is under the
        # budget, both together are not; skill-host ends it at the memory cap,
        # here the second memory's share runs out and the guest traps.
        with self.assertRaises(HostError) as caught:
            create(with_core_module(PLUGIN, two_memories(767)))
        self.assertEqual(str(caught.exception), "plugin call `configure` trapped: wasm `unreachable` instruction executed")

    def test_two_memories_within_the_budget(self) -> None:
        # 2 × 301 pages (37.6 MiB): within the budget, as in skill-host.
        create(with_core_module(PLUGIN, two_memories(300)))

    def test_a_memory_larger_than_its_share_at_start(self) -> None:
        module = "(module (memory $a 600) (memory $b 600))"
        with self.assertRaises(HostError) as caught:
            create(with_core_module(PLUGIN, module))
        self.assertRegex(
            str(caught.exception),
            r"^cannot load the plugin component: the plugin needs 600 pages of memory at start, more than its share of the cap \(\d+\)$",
        )

    def test_the_real_plugin_keeps_its_budget(self) -> None:
        create(PLUGIN, SandboxLimits(memory_bytes=32 * 1024 * 1024)).definition()


if __name__ == "__main__":
    unittest.main()

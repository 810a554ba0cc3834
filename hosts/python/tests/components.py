"""Test components made at test time from WAT (wasmtime-py's ``wat2wasm``),
no binary fixtures: the reviewer's probes (a start function that loops, two
memories that grow), and the packaged plugin with such a core module added
at its end, so that the plugin interface checks out and the module's start
function runs while the component is instantiated."""

from __future__ import annotations

import wasmtime

from dsh_skill.memory_cap import _leb, _sections, _write_leb

# The reviewer's probe: a component whose export has no functions, and whose
# core module loops in its start function (instantiating it never returns).
LOOP_EMPTY = """
(component
  (core module $m (func $loop (loop $l (br $l))) (start $loop))
  (core instance $ci (instantiate $m))
  (instance $empty)
  (export "dsh:skill/plugin@0.2.0" (instance $empty)))
"""

# A `configure` of the wrong type.
WRONG_TYPE = """
(component
  (core module $m (func (export "f") (param i32)))
  (core instance $i (instantiate $m))
  (func $f (param "config" u32) (canon lift (core func $i "f")))
  (instance $inst (export "configure" (func $f)))
  (export "dsh:skill/plugin@0.2.0" (instance $inst)))
"""

LOOP_MODULE = "(module (func $loop (loop $l (br $l))) (start $loop))"


def two_memories(pages: int) -> str:
    """Two memories of one page, each grown by ``pages`` at start (trapping
    when a growth is refused): 2 × (1 + pages) pages in all."""
    return f"""
(module
  (memory $a 1) (memory $b 1)
  (func $grow
    (if (i32.eq (memory.grow $a (i32.const {pages})) (i32.const -1)) (then unreachable))
    (if (i32.eq (memory.grow $b (i32.const {pages})) (i32.const -1)) (then unreachable)))
  (start $grow))
"""


def wat(text: str) -> bytes:
    return wasmtime.wat2wasm(text)


def _core_module_count(component: bytes) -> int:
    """The top-level core module index space: core module sections, and
    aliases of core modules (the plugin imports none)."""
    count = 0
    for id_, _, start, end in _sections(component):
        if id_ == 1:
            count += 1
        elif id_ == 6:  # alias: sort, then target
            n, at = _leb(component, start)
            for _ in range(n):
                sort = component[at]
                core_module = sort == 0x00 and component[at + 1] == 0x11
                at += 2 if sort == 0x00 else 1
                target = component[at]
                at += 1
                if target == 0x00 or target == 0x01:  # (core) export: instance index, name
                    _, at = _leb(component, at)
                    length, at = _leb(component, at)
                    at += length
                else:  # outer: count, index
                    _, at = _leb(component, at)
                    _, at = _leb(component, at)
                count += core_module
    return count


def with_core_module(component: bytes, module_wat: str) -> bytes:
    """``component`` with a core module, and a core instance of it, added at
    its end: the module's start function runs when the component is
    instantiated, after the plugin's own modules."""
    module = wat(module_wat)
    index = _core_module_count(component)
    module_section = b"\x01" + _write_leb(len(module)) + module
    instance = b"\x01" + b"\x00" + _write_leb(index) + b"\x00"  # one instance: instantiate(index) with no arguments
    instance_section = b"\x02" + _write_leb(len(instance)) + instance
    return component + module_section + instance_section

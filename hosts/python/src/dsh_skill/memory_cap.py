"""The memory cap written into the component (spec §8.3), as the Node host
does it (hosts/node/src/memory-cap.mjs): wasmtime-py's store limits cap each
memory (and each table) on its own, so a component with several memories
would multiply the budget. Instead, before compiling, the budget is divided
up front among every memory and table the component's core modules define
(nested components included): a table that declares a maximum is charged it
(8 bytes an element), and the memories, and any table without a maximum,
share the rest equally, each getting its share as its declared maximum.
Growing past it fails inside the guest, as the wasm spec says (Rust's
allocator then reports the allocation failure, classified as the memory cap).
A plugin with one memory, like the real one, gets the whole budget."""

from __future__ import annotations

PAGE = 64 * 1024
TABLE_ELEMENT_BYTES = 8
_TABLE, _MEMORY = 4, 5
_CORE_MODULE, _COMPONENT = 1, 4


class CapError(Exception):
    """The component cannot be capped; its text is the Node host's."""


def _leb(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise CapError("truncated LEB128 in the core module")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _write_leb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _sections(data: bytes) -> list[tuple[int, int, int, int]]:
    """``(id, header, start, end)`` of each section after the 8-byte preamble."""
    found = []
    at = 8
    while at < len(data):
        size, start = _leb(data, at + 1)
        found.append((data[at], at, start, start + size))
        at = start + size
    if at != len(data):
        raise CapError("a section runs past the end of the component")
    return found


def _core_modules(component: bytes) -> list[bytes]:
    """Every core module in the component, nested components included."""
    found = []
    for id_, _, start, end in _sections(component):
        if id_ == _CORE_MODULE:
            found.append(component[start:end])
        elif id_ == _COMPONENT:
            found.extend(_core_modules(component[start:end]))
    return found


def _limits(data: bytes, at: int) -> tuple[int, int, int | None, int]:
    """``(flags, min, max or None, end)`` of the limits at ``at``."""
    flags = data[at]
    minimum, at = _leb(data, at + 1)
    if not flags & 0x01:
        return flags, minimum, None, at
    maximum, at = _leb(data, at)
    return flags, minimum, maximum, at


def _table_limits_at(data: bytes, at: int) -> int:
    kind = data[at]
    if kind in (0x63, 0x64):
        return _leb(data, at + 1)[1]
    if kind not in (0x70, 0x6F):
        raise CapError(f"a table of element type {kind} is not supported")
    return at + 1


def _entries(module: bytes) -> list[tuple[int, int | None]]:
    """``(section id, declared maximum)`` of each memory and table the module defines."""
    found = []
    for id_, _, start, _ in _sections(module):
        if id_ not in (_MEMORY, _TABLE):
            continue
        count, cursor = _leb(module, start)
        for _ in range(count):
            at = _table_limits_at(module, cursor) if id_ == _TABLE else cursor
            _, _, maximum, cursor = _limits(module, at)
            found.append((id_, maximum))
    return found


def _cap_limits(data: bytes, at: int, cap: int, what: str) -> tuple[bytes, int]:
    flags = data[at]
    if flags & 0x02:
        raise CapError(f"shared {what}s are not supported")
    if flags & ~0x05:
        raise CapError(f"a {what} with limit flags {flags} is not supported")
    _, minimum, declared, end = _limits(data, at)
    maximum = cap if declared is None else min(declared, cap)
    if minimum > cap:
        unit = "pages of memory" if what == "memory" else "table elements"
        raise CapError(f"the plugin needs {minimum} {unit} at start, more than its share of the cap ({cap})")
    return bytes([flags | 0x01]) + _write_leb(minimum) + _write_leb(maximum), end


def _cap_section(data: bytes, id_: int, start: int, end: int, cap: int) -> bytes:
    count, cursor = _leb(data, start)
    body = bytearray(_write_leb(count))
    for _ in range(count):
        if id_ == _MEMORY:
            limits, cursor = _cap_limits(data, cursor, cap, "memory")
        else:
            type_end = _table_limits_at(data, cursor)
            body += data[cursor:type_end]
            declared = _limits(data, type_end)[2]
            limits, cursor = _cap_limits(data, type_end, cap if declared is None else declared, "table")
        body += limits
    if cursor != end:
        raise CapError("a malformed table or memory section in the core module")
    return bytes([id_]) + _write_leb(len(body)) + bytes(body)


def _rewrite(data: bytes, memory_cap: int, table_cap: int) -> bytes:
    """The component or core module with every memory and table capped."""
    parts = [data[:8]]
    component = data[4:8] != b"\x01\x00\x00\x00"
    for id_, header, start, end in _sections(data):
        if component and id_ in (_CORE_MODULE, _COMPONENT):
            inner = _rewrite(data[start:end], memory_cap, table_cap)
            parts.append(bytes([id_]) + _write_leb(len(inner)) + inner)
        elif not component and id_ == _MEMORY:
            parts.append(_cap_section(data, id_, start, end, memory_cap))
        elif not component and id_ == _TABLE:
            parts.append(_cap_section(data, id_, start, end, table_cap))
        else:
            parts.append(data[header:end])
    return b"".join(parts)


def cap_memory(component: bytes, max_bytes: int) -> bytes:
    """The component with its memories and tables together unable to grow
    past ``max_bytes``; raises :class:`CapError` (a load error) when one
    starts larger than its share, or the tables' declared maximums alone
    exceed the cap. Bytes that are not a component are returned unchanged,
    for wasmtime to refuse."""
    if component[:4] != b"\x00asm" or len(component) < 8 or component[4:8] == b"\x01\x00\x00\x00":
        return component
    entries = [entry for module in _core_modules(component) for entry in _entries(module)]
    fixed = sum(maximum * TABLE_ELEMENT_BYTES for id_, maximum in entries if id_ == _TABLE and maximum is not None)
    if fixed > max_bytes:
        raise CapError(f"the plugin's tables declare {fixed} bytes, more than the memory cap of {max_bytes}")
    sharing = sum(1 for id_, maximum in entries if id_ == _MEMORY or maximum is None) or 1
    share = (max_bytes - fixed) // sharing
    return _rewrite(component, share // PAGE, share // TABLE_ELEMENT_BYTES)

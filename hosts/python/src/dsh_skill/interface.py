"""The plugin interface a component must export (spec §9), checked on the
compiled component's type before anything is instantiated, as skill-host's
bindings and the Node host check it: each function of
``dsh:skill/plugin@{version}`` by name and by type. A type is written out
from wasmtime-py's ``component.type`` (parameter names left out, as
wasmtime's own type check leaves them out); the expected ones are the WIT's
(``wit/world.wit`` for 0.4.0, ``wit/released/0.3.0``, ``wit/released/0.2.0``
and ``wit/released/0.1.0``)."""

from __future__ import annotations

from typing import Any

from wasmtime.component import _types as t

#: The functions of each interface version and their types.
SIGNATURES: dict[str, dict[str, str]] = {
    # 0.4.0 added the tool value's `file` case (and two registry imports).
    "0.4.0": {
        "configure": "func(string) -> result<_, string>",
        "definition": "func() -> record{name: string, description: string, parameters: string}",
        "pre-step": "func(record{session: u64, registry-revision: option<u64>, history-version: u64, tool-view: enum{visible, hidden, shadowed}, aborted: bool, proposal: variant{enter(u32), reject}}) -> result<_, variant{aborted}>",
        "invoke": "func(string) -> result<record{value: variant{skill(record{name: string, provider: string, resource-base: option<variant{directory(string), url(string), opaque(string)}>, content: string}), matches(list<record{name: string, description: string}>), file(record{name: string, provider: string, path: string, content: string})}, text: string, loaded: option<record{name: string, provider: string, body-digest: option<string>}>}, string>",
        "system-prompt": "func() -> result<string, variant{aborted}>",
        "expand": "func(string) -> result<string, variant{aborted}>",
    },
    # 0.3.0 changed the imports only (skill-summary, step.decide): its plugin interface is 0.2.0's.
    "0.3.0": {
        "configure": "func(string) -> result<_, string>",
        "definition": "func() -> record{name: string, description: string, parameters: string}",
        "pre-step": "func(record{session: u64, registry-revision: option<u64>, history-version: u64, tool-view: enum{visible, hidden, shadowed}, aborted: bool, proposal: variant{enter(u32), reject}}) -> result<_, variant{aborted}>",
        "invoke": "func(string) -> result<record{value: variant{skill(record{name: string, provider: string, resource-base: option<variant{directory(string), url(string), opaque(string)}>, content: string}), matches(list<record{name: string, description: string}>)}, text: string, loaded: option<record{name: string, provider: string, body-digest: option<string>}>}, string>",
        "system-prompt": "func() -> result<string, variant{aborted}>",
        "expand": "func(string) -> result<string, variant{aborted}>",
    },
    "0.2.0": {
        "configure": "func(string) -> result<_, string>",
        "definition": "func() -> record{name: string, description: string, parameters: string}",
        "pre-step": "func(record{session: u64, registry-revision: option<u64>, history-version: u64, tool-view: enum{visible, hidden, shadowed}, aborted: bool, proposal: variant{enter(u32), reject}}) -> result<_, variant{aborted}>",
        "invoke": "func(string) -> result<record{value: variant{skill(record{name: string, provider: string, resource-base: option<variant{directory(string), url(string), opaque(string)}>, content: string}), matches(list<record{name: string, description: string}>)}, text: string, loaded: option<record{name: string, provider: string, body-digest: option<string>}>}, string>",
        "system-prompt": "func() -> result<string, variant{aborted}>",
        "expand": "func(string) -> result<string, variant{aborted}>",
    },
    "0.1.0": {
        "configure": "func(string) -> result<_, string>",
        "definition": "func() -> record{name: string, description: string, parameters: string}",
        "pre-step": "func(record{session: u64, registry-revision: option<u64>, history-version: u64, tool-view: enum{visible, hidden, shadowed}, aborted: bool, proposal: variant{enter(u32), reject}}) -> result<_, variant{aborted}>",
        "invoke": "func(string) -> result<record{value: record{name: string, provider: string, resource-base: option<variant{directory(string), url(string), opaque(string)}>, content: string}, text: string, loaded: option<record{name: string, provider: string, body-digest: option<string>}>}, string>",
        "system-prompt": "func() -> result<string, variant{aborted}>",
        "expand": "func(string) -> result<string, variant{aborted}>",
    },
}

_SIMPLE = {
    t.Bool: "bool", t.S8: "s8", t.S16: "s16", t.S32: "s32", t.S64: "s64", t.U8: "u8", t.U16: "u16", t.U32: "u32",
    t.U64: "u64", t.F32: "f32", t.F64: "f64", t.Char: "char", t.String: "string",
}


def render(ty: Any) -> str:
    """A value type written out, WIT-like."""
    for cls, name in _SIMPLE.items():
        if isinstance(ty, cls):
            return name
    if isinstance(ty, t.ListType):
        return f"list<{render(ty.element)}>"
    if isinstance(ty, t.RecordType):
        return "record{" + ", ".join(f"{n}: {render(v)}" for n, v in ty.fields) + "}"
    if isinstance(ty, t.TupleType):
        return "tuple<" + ", ".join(render(v) for v in ty.elements) + ">"
    if isinstance(ty, t.OptionType):
        return f"option<{render(ty.payload)}>"
    if isinstance(ty, t.ResultType):
        ok, err = ty.ok, ty.err
        return f"result<{'_' if ok is None else render(ok)}, {'_' if err is None else render(err)}>"
    if isinstance(ty, t.VariantType):
        return "variant{" + ", ".join(n if v is None else f"{n}({render(v)})" for n, v in ty.cases) + "}"
    if isinstance(ty, t.EnumType):
        return "enum{" + ", ".join(ty.names) + "}"
    if isinstance(ty, t.FlagsType):
        return "flags{" + ", ".join(ty.names) + "}"
    return type(ty).__name__.removesuffix("Type").lower()


def render_func(fty: Any) -> str:
    """A function type written out: ``func(param types) -> result``."""
    params = ", ".join(render(v) for _, v in fty.params)
    result = fty.result
    return f"func({params})" + ("" if result is None else f" -> {render(result)}")

"""Parsing a ``SKILL.md`` text as skill-host does (spec §4.2): the ``---``
block, its YAML (:mod:`.frontmatter_yaml`), and the skill fields it must
carry, with skill-host's reasons byte for byte."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .frontmatter_scalar import key_text, scalar_text, to_json
from .frontmatter_yaml import parse_yaml
from .frontmatter_yaml_scalars import Node, YamlRefusal
from .names import is_skill_name
from .registry import Invocation

#: The largest frontmatter block read, in bytes (the text between the delimiters).
MAX_FRONTMATTER_BYTES = 64 * 1024
_DELIMITER = "---"
#: ECMAScript's ``String.prototype.trim`` set (``is_ecmascript_whitespace``).
ECMASCRIPT_WHITESPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680" + "".join(chr(c) for c in range(0x2000, 0x200B)) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
#: Keys DeepSeek Harness refuses, each with the spelling to use instead.
LEGACY_INVOCATION_KEYS = (
    ("disableModelInvocation", "disable-model-invocation"),
    ("modelInvocable", "disable-model-invocation"),
    ("userInvocable", "user-invocable"),
)
_KINDS = {"null": "null", "bool": "a boolean", "int": "a number", "float": "a number",
          "str": "a string", "seq": "a sequence", "map": "a mapping"}
_TRUE_WORDS = ("true", "yes", "on", "1")
_FALSE_WORDS = ("false", "no", "off", "0")


class SkillFileRefusal(Exception):
    """A skill file that is not a valid skill; the message is the reason."""


@dataclass
class ParsedSkill:
    """The fields of a valid skill file."""

    name: str
    description: str
    when_to_use: str | None
    invocation: Invocation
    metadata: dict[str, Any] | None
    body: str = field(repr=False)


def kind(node: Node) -> str:
    """The node's kind as reasons name it."""
    return _KINDS[node.kind]


def describe(node: Node) -> str:
    """The value itself when it is a scalar, else its kind."""
    return kind(node) if node.kind in ("seq", "map") else scalar_text(node.kind, node.value)


def trim_ecmascript(text: str) -> str:
    """ECMAScript ``trim`` (Python's ``strip`` would take U+0085 too and differ)."""
    return text.strip(ECMASCRIPT_WHITESPACE)


def split_frontmatter(text: str) -> tuple[str, str]:
    """The YAML between the ``---`` lines, and the body after them."""
    first_end = text.find("\n")
    if first_end < 0 or _strip_cr(text[:first_end]) != _DELIMITER:
        if text.startswith("\ufeff"):
            raise SkillFileRefusal("missing frontmatter (the file starts with a byte-order mark before `---`)")
        raise SkillFileRefusal("missing frontmatter (the first line must be exactly `---`)")
    start = line_start = first_end + 1
    while True:
        newline = text.find("\n", line_start)
        line_end = len(text) if newline < 0 else newline
        if _strip_cr(text[line_start:line_end]) == _DELIMITER:
            return text[start:line_start], "" if newline < 0 else text[newline + 1:]
        if newline < 0:
            raise SkillFileRefusal("frontmatter is not closed by a `---` line")
        line_start = newline + 1


def _strip_cr(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


class Fields:
    """The top-level frontmatter mapping: each key as a string, its line, its value."""

    def __init__(self, entries: list[tuple[Node, Node]]) -> None:
        self.entries = [(key_text(k.kind, k.value), k.line, v) for k, v in entries]

    def get(self, key: str) -> Node | None:
        """The value under ``key``; of keys equal as strings, the last (as a JavaScript object)."""
        return next((v for k, _, v in reversed(self.entries) if k == key), None)

    def required_string(self, key: str) -> tuple[str, int]:
        node = self.get(key)
        if node is None:
            raise SkillFileRefusal(f"frontmatter requires `{key}`")
        if node.kind == "str" and node.value != "":
            return node.value, node.line
        raise SkillFileRefusal(f"line {node.line}: `{key}` must be a non-empty string, found {kind(node)}")


def read_frontmatter(text: str) -> tuple[Fields, str]:
    """The frontmatter mapping's fields and the body after it."""
    yaml, body = split_frontmatter(text)
    size = len(yaml.encode("utf-8", "surrogatepass"))
    if size > MAX_FRONTMATTER_BYTES:
        raise SkillFileRefusal(f"frontmatter is {size} bytes, larger than the {MAX_FRONTMATTER_BYTES // 1024} KiB limit")
    try:
        root = parse_yaml(yaml, 2, describe)  # the opening `---` is line 1
    except YamlRefusal as refusal:
        raise SkillFileRefusal(str(refusal)) from None
    if root is None:
        raise SkillFileRefusal("frontmatter is empty; it must be a YAML mapping")
    if root.kind != "map":
        raise SkillFileRefusal(f"line {root.line}: frontmatter must be a YAML mapping, found {kind(root)}")
    return Fields(root.value), body


def parse_skill_file(text: str) -> ParsedSkill:
    """Parses a skill file; raises :class:`SkillFileRefusal` with the
    reason (without the path), the checks in skill-host's order."""
    fields, body = read_frontmatter(text)
    name, name_line = fields.required_string("name")
    description, _ = fields.required_string("description")
    if not is_skill_name(name):
        raise SkillFileRefusal(
            f"line {name_line}: `name` {scalar_text('str', name)} does not match the skill-name grammar "
            "^[a-z0-9]+(?:-[a-z0-9]+)*$"
        )
    invocation = invocation_policy(fields)
    when = fields.get("whenToUse")
    metadata = fields.get("metadata")
    return ParsedSkill(
        name=name,
        description=description,
        when_to_use=when.value if when is not None and when.kind == "str" and when.value else None,
        invocation=invocation,
        metadata=to_json(metadata.kind, metadata.value) if metadata is not None and metadata.kind == "map" else None,
        body=trim_ecmascript(body),
    )


def invocation_policy(fields: Fields) -> Invocation:
    """The invocation keys; anything ambiguous drops the skill (fail closed)."""
    for legacy, canonical in LEGACY_INVOCATION_KEYS:
        line = next((line for key, line, _ in fields.entries if key == legacy), None)
        if line is not None:
            raise SkillFileRefusal(f"line {line}: frontmatter field `{legacy}` is unsupported; use `{canonical}`")
    disable_model = _invocation_flag(fields, "disable-model-invocation")
    user = _invocation_flag(fields, "user-invocable")
    return Invocation(model_invocable=disable_model is not True, user_invocable=user is not False)


def _invocation_flag(fields: Fields, key: str) -> bool | None:
    node = fields.get(key)
    if node is None:
        return None
    flag: bool | None = None
    if node.kind == "bool":
        flag = node.value
    elif node.kind in ("int", "float") and node.value in (0, 1):
        flag = node.value == 1
    elif node.kind == "str":
        lowered = node.value.lower()
        flag = True if lowered in _TRUE_WORDS else False if lowered in _FALSE_WORDS else None
    if flag is None:
        raise SkillFileRefusal(
            f"line {node.line}: frontmatter field `{key}` must be a boolean "
            f"(true/false, yes/no, on/off, 1/0), found {describe(node)}"
        )
    return flag

"""Quoted and block scalars and flow collections of the frontmatter YAML
(:mod:`.frontmatter_yaml` reads the block structure around them), with
yaml-rust2's folding rules and error texts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .frontmatter_scalar import resolve_plain

_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
    "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85", "_": "\xa0",
    "L": "\u2028", "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_FLOW_INDICATORS = ",[]{}"
_EXPECTED = {
    "[": "while parsing a flow sequence, expected ',' or ']'",
    "{": "while parsing a flow mapping, did not find expected ',' or '}'",
}


@dataclass
class Node:
    """A YAML node: ``kind`` is null, bool, int, float, str, seq or map; ``line`` the file line."""

    kind: str
    value: Any
    line: int
    #: An empty plain scalar (``key:`` with nothing after it).
    empty: bool = False


class YamlRefusal(Exception):
    """A frontmatter the reader refuses; the message is the whole reason."""


def scalar_key(node: Node) -> Any:
    """A key as duplicates compare: numbers of different kinds differ, -0.0
    equals 0.0, NaN and collections equal nothing (None)."""
    if node.kind in ("seq", "map") or (node.kind == "float" and node.value != node.value):
        return None
    return (node.kind, node.value + 0.0 if node.kind == "float" else node.value)


class ScalarReader:
    """The scalar and flow half of the frontmatter reader (a mixin of ``_Reader``)."""

    text: str
    pos: int
    depth: int
    describe: Callable[[Node], str]
    at: Callable[..., str]
    line: Callable[[int], int]
    column: Callable[[int], int]
    syntax: Callable[[int, str], YamlRefusal]
    refuse: Callable[[int, str], YamlRefusal]
    blank_after: Callable[[int], bool]
    skip_lines: Callable[[], None]
    skip_inline: Callable[[], None]
    open: Callable[[int], None]
    properties: Callable[[], tuple[int, bool]]

    def add_entry(self, entries: list[tuple[Node, Node]], seen: set[Any], key: Node, value: Node) -> None:
        """Adds a mapping entry; a scalar key seen before is refused (at its line)."""
        scalar = scalar_key(key)
        if scalar is not None and scalar in seen:
            raise YamlRefusal(f"line {key.line}: duplicate frontmatter key {self.describe(key)}")
        if scalar is not None:
            seen.add(scalar)
        entries.append((key, value))

    def line_break(self) -> bool:
        """Consumes one line break (``\\n``, ``\\r\\n`` or ``\\r``)."""
        if self.at() == "\r":
            self.pos += 2 if self.at(1) == "\n" else 1
            return True
        if self.at() == "\n":
            self.pos += 1
            return True
        return False

    def fold_breaks(self) -> str:
        """Folds the line breaks at ``pos`` and the indentation after them:
        one break is a space, n breaks are n - 1 newlines."""
        breaks = 0
        while self.line_break():
            breaks += 1
            while self.at() in (" ", "\t"):
                self.pos += 1
        return " " if breaks == 1 else "\n" * (breaks - 1)

    def quoted(self, str_tag: bool) -> Node:
        """A single- or double-quoted scalar, lines folded, escapes decoded."""
        quote, start = self.at(), self.pos
        self.pos += 1
        out: list[str] = []
        while True:
            c = self.at()
            if c == "":
                raise self.syntax(start, "while scanning a quoted scalar, found unexpected end of stream")
            if c == quote and quote == "'" and self.at(1) == "'":
                out.append("'")
                self.pos += 2
            elif c == quote:
                self.pos += 1
                return Node("str", "".join(out), self.line(start))
            elif c == "\\" and quote == '"':
                out.append(self.escape(start))
            elif c in " \t":
                end = self.pos
                while end < len(self.text) and self.text[end] in " \t":
                    end += 1
                if end < len(self.text) and self.text[end] not in "\r\n":
                    out.append(self.text[self.pos:end])
                self.pos = end
            elif c in "\r\n":
                out.append(self.fold_breaks())
            else:
                out.append(c)
                self.pos += 1

    def escape(self, start: int) -> str:
        """A double-quoted escape at ``pos``; an escaped line break joins lines."""
        following = self.at(1)
        if following in ("\r", "\n"):
            self.pos += 1
            self.line_break()
            while self.at() in (" ", "\t"):
                self.pos += 1
            folded = self.fold_breaks() if self.at() in ("\r", "\n") else ""
            return "" if folded == " " else folded + ("\n" if folded else "")
        if following in _ESCAPES:
            self.pos += 2
            return _ESCAPES[following]
        if following in _HEX_ESCAPES:
            width = _HEX_ESCAPES[following]
            digits = self.text[self.pos + 2:self.pos + 2 + width]
            if len(digits) < width or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise self.syntax(start, "while parsing a quoted scalar, did not find expected hexadecimal number")
            code = int(digits, 16)
            if 0xD800 <= code <= 0xDFFF or code > 0x10FFFF:
                raise self.syntax(start, "while parsing a quoted scalar, found invalid Unicode character escape code")
            self.pos += 2 + width
            return chr(code)
        raise self.syntax(start, "while parsing a quoted scalar, found unknown escape character")

    def block_scalar(self, indent: int) -> Node:
        """A literal (``|``) or folded (``>``) scalar with its chomping and
        indentation indicators, read as libyaml (and yaml-rust2) read it."""
        start = self.pos
        folded = self.at() == ">"
        self.pos += 1
        chomp, increment = "clip", 0
        for _ in range(2):
            if self.at() in "+-" and self.at():
                chomp = "keep" if self.at() == "+" else "strip"
                self.pos += 1
            elif self.at() in "123456789" and self.at():
                increment = int(self.at())
                self.pos += 1
        self.skip_inline()
        if self.at() not in ("", "\r", "\n"):
            raise self.syntax(self.pos, "while scanning a block scalar, did not find expected comment or line break")
        self.line_break()
        min_indent = max(indent + 1, 1)
        if increment:
            block_indent = min_indent + increment - 1
            breaks = self.block_breaks(block_indent)
        else:
            breaks, deepest = self.block_indentation()
            block_indent = max(min_indent, deepest)
        chunks: list[str] = []
        line_break = ""
        while self.pos < len(self.text) and self.column(self.pos) == block_indent:
            chunks.extend(breaks)
            leading_non_space = self.at() not in (" ", "\t")
            end = self.pos
            while end < len(self.text) and self.text[end] not in "\r\n":
                end += 1
            chunks.append(self.text[self.pos:end])
            self.pos = end
            line_break = "\n" if self.line_break() else ""
            breaks = self.block_breaks(block_indent)
            if not (self.pos < len(self.text) and self.column(self.pos) == block_indent):
                break
            if folded and line_break == "\n" and leading_non_space and self.at() not in (" ", "\t"):
                if not breaks:
                    chunks.append(" ")
            else:
                chunks.append(line_break)
        if chomp != "strip":
            chunks.append(line_break)
        if chomp == "keep":
            chunks.extend(breaks)
        return Node("str", "".join(chunks), self.line(start))

    def block_indentation(self) -> tuple[list[str], int]:
        """The breaks before a block scalar's first line, and the deepest indentation met."""
        breaks: list[str] = []
        deepest = 0
        while self.at() in (" ", "\r", "\n") and self.at():
            if self.at() == " ":
                self.pos += 1
                deepest = max(deepest, self.column(self.pos))
            else:
                self.line_break()
                breaks.append("\n")
        return breaks, deepest

    def block_breaks(self, block_indent: int) -> list[str]:
        """Blank lines up to the next line indented ``block_indent`` (or less)."""
        breaks: list[str] = []
        while True:
            while self.at() == " " and self.column(self.pos) < block_indent:
                self.pos += 1
            if not self.line_break():
                return breaks
            breaks.append("\n")

    def flow_collection(self) -> Node:
        """``[…]`` or ``{…}``, across lines, with single-pair mappings in sequences."""
        opener, start = self.at(), self.pos
        closer = "]" if opener == "[" else "}"
        self.open(start)
        self.pos += 1
        items: list[Any] = []
        seen: set[Any] = set()
        while True:
            self.skip_lines()
            if self.at() == closer:
                break
            if self.at() == "":
                raise self.syntax(self.pos, _EXPECTED[opener])
            key = self.flow_node() if self.at() != ":" else Node("null", None, self.line(self.pos))
            self.skip_lines()
            if self.at() == ":" and (self.blank_after(self.pos + 1) or self.at(1) in _FLOW_INDICATORS):
                self.pos += 1
                self.skip_lines()
                value = Node("null", None, key.line) if self.at() in (",", closer) else self.flow_node()
                if opener == "[":
                    items.append(Node("map", [(key, value)], key.line))
                else:
                    self.add_entry(items, seen, key, value)
            elif opener == "[":
                items.append(key)
            else:
                self.add_entry(items, seen, key, Node("null", None, key.line))
            self.skip_lines()
            if self.at() == ",":
                self.pos += 1
            elif self.at() != closer:
                raise self.syntax(self.pos, _EXPECTED[opener])
        self.pos += 1
        self.depth -= 1
        return Node("seq" if opener == "[" else "map", items, self.line(start))

    def opening_node(self, str_tag: bool) -> Node | None:
        """The node that starts here when its first character says what it
        is (an alias, refused; a flow collection; a quoted scalar; a
        reserved character, refused); None for a plain scalar's start."""
        c = self.at()
        if c == "*":
            raise self.refuse(self.pos, "YAML aliases are not supported in frontmatter")
        if c in "[{":
            return self.flow_collection()
        if c in "'\"":
            return self.quoted(str_tag)
        if c in "@`":
            raise self.syntax(self.pos, f"unexpected character: `{c}'")
        return None

    def flow_node(self) -> Node:
        """A node inside a flow collection."""
        _, str_tag = self.properties()
        opened = self.opening_node(str_tag)
        if opened is not None:
            return opened
        start, parts = self.pos, []
        while True:
            begin = self.pos
            while self.at() and self.at() not in "\r\n" + _FLOW_INDICATORS:
                if self.at() == ":" and (self.blank_after(self.pos + 1) or self.at(1) in _FLOW_INDICATORS):
                    break
                if self.at() == "#" and self.text[self.pos - 1] in " \t":
                    break
                self.pos += 1
            parts.append(self.text[begin:self.pos].rstrip(" \t"))
            if self.at() not in ("\r", "\n"):
                break
            save = self.pos
            folded = self.fold_breaks()
            if self.at() in ("", "#", ":") or self.at() in _FLOW_INDICATORS:
                self.pos = save
                break
            parts.append(folded)
        text = "".join(parts)
        resolved = None if str_tag else resolve_plain(text)
        line = self.line(start)
        return Node("str", text, line) if resolved is None else Node(resolved[0], resolved[1], line)

"""The frontmatter YAML (spec §4.2): the subset skill files use, read into a
small tree of nodes with the file line each starts on, refusing what
skill-host's yaml-rust2 reader refuses (aliases, duplicate scalar keys, more
than one document, nesting deeper than 64 levels).

The standard library has no YAML parser, so this is a hand-written one for
block mappings and sequences, flow collections, plain, quoted and block
scalars, comments, anchors (ignored) and tags (only ``!!str`` honoured). Its
syntax errors name yaml-rust2's message and position for the mistakes skill
authors make (an unquoted ``: ``, a tab, an unclosed quote or bracket, a
line at the wrong indentation); rarer ones may read differently, and
``?`` keys and ``%`` directives are refused (README, "Known differences").
"""

from __future__ import annotations

import bisect
from typing import Any

from .frontmatter_scalar import resolve_plain
from .frontmatter_yaml_scalars import Node, ScalarReader, YamlRefusal

MAX_DEPTH = 64
#: yaml-rust2's scanner refuses a flow level above this before any event.
_MAX_FLOW_LEVEL = 255


def plain_node(text: str, line: int, str_tag: bool) -> Node:
    """A plain scalar resolved by the core schema (a string under ``!!str``)."""
    resolved = None if str_tag else resolve_plain(text)
    return Node("str", text, line) if resolved is None else Node(resolved[0], resolved[1], line)


class _Reader(ScalarReader):
    """A recursive-descent reader over the frontmatter text."""

    def __init__(self, text: str, first_line: int, describe: Any) -> None:
        self.text = text
        self.pos = 0
        self.first_line = first_line
        self.depth = 0
        self.describe = describe
        self.starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    # Positions and errors.
    def line_col(self, pos: int) -> tuple[int, int]:
        row = bisect.bisect_right(self.starts, pos) - 1
        return row + self.first_line, pos - self.starts[row] + 1

    def line(self, pos: int) -> int:
        return self.line_col(pos)[0]

    def column(self, pos: int) -> int:
        return self.line_col(pos)[1] - 1

    def syntax(self, pos: int, message: str) -> YamlRefusal:
        line, col = self.line_col(pos)
        return YamlRefusal(f"invalid YAML frontmatter: line {line} column {col}: {message}")

    def refuse(self, pos: int, message: str) -> YamlRefusal:
        return YamlRefusal(f"line {self.line(pos)}: {message}")

    def at(self, offset: int = 0) -> str:
        i = self.pos + offset
        return self.text[i] if i < len(self.text) else ""

    def blank_after(self, pos: int) -> bool:
        return pos >= len(self.text) or self.text[pos] in " \t\n\r"

    # Whitespace.
    def skip_inline(self) -> None:
        while self.at() in (" ", "\t"):
            self.pos += 1
        if self.at() == "#":
            self.skip_comment()

    def skip_comment(self) -> None:
        end = self.text.find("\n", self.pos)
        self.pos = len(self.text) if end < 0 else end

    def skip_lines(self) -> None:
        """Skips whitespace, comments and line breaks up to the next token."""
        while self.pos < len(self.text):
            c = self.at()
            if c in " \t\r\n":
                self.pos += 1
            elif c == "#" and (self.pos == 0 or self.text[self.pos - 1] in " \t\r\n"):
                self.skip_comment()
            else:
                return

    def is_marker(self, pos: int, marker: str) -> bool:
        return self.column(pos) == 0 and self.text.startswith(marker, pos) and self.blank_after(pos + 3)

    def open(self, pos: int) -> None:
        if self.depth >= MAX_DEPTH:
            raise self.refuse(pos, f"frontmatter nests deeper than {MAX_DEPTH} levels")
        self.depth += 1

    # Documents.
    def document(self) -> Node | None:
        self.check_flow_levels()
        self.skip_lines()
        directives = False
        while self.at() == "%" and self.column(self.pos) == 0:
            directives = True
            self.skip_comment()
            self.skip_lines()
        if directives and not self.is_marker(self.pos, "---"):
            raise self.syntax(self.pos, "did not find expected <document start>")
        if self.is_marker(self.pos, "---"):
            self.pos += 3
            self.skip_inline()
        elif self.pos >= len(self.text):
            return None
        root = self.node(-1, block_start=self.at() not in ("", "\n", "\r"))
        self.skip_lines()
        if self.is_marker(self.pos, "..."):
            self.pos += 3
            self.skip_lines()
        if self.pos < len(self.text):
            if self.is_marker(self.pos, "---") or root is not None:
                raise self.refuse(self.pos, "frontmatter holds more than one YAML document")
        return root

    def check_flow_levels(self) -> None:
        """yaml-rust2's scanner runs ahead over a run of opening brackets and
        stops above 255 flow levels before the nesting cap is reached."""
        level = 0
        quote = ""
        for i, c in enumerate(self.text):
            if quote:
                quote = "" if c == quote else quote
            elif c in "'\"" and level:
                quote = c
            elif c in "[{":
                level += 1
                if level > _MAX_FLOW_LEVEL:
                    raise self.syntax(i, "recursion limit exceeded")
            elif c in "]}":
                level = max(0, level - 1)

    # Block context.
    def node(self, indent: int, block_start: bool, seq_at_indent: bool = False) -> Node:
        """The node after an indicator (``key:``, ``-``, a document start):
        on this line, else on the next lines indented past ``indent``."""
        self.skip_inline()
        props_pos, str_tag = self.properties()
        if self.at() in ("", "\n", "\r"):
            start = self.pos
            self.skip_lines()
            col = self.column(self.pos)
            at_end = self.pos >= len(self.text) or self.is_marker(self.pos, "---") or self.is_marker(self.pos, "...")
            seq_here = seq_at_indent and col == indent and self.at() == "-" and self.blank_after(self.pos + 1)
            if at_end or (col <= indent and not seq_here):
                self.pos = start
                return Node("null", None, self.line(props_pos), empty=True)
            return self.block_node(col if not seq_here else indent, indent, str_tag, block_start=True)
        return self.block_node(self.column(self.pos), indent, str_tag, block_start)

    def properties(self) -> tuple[int, bool]:
        """Skips anchors and tags; whether a ``!!str`` tag was among them."""
        pos, str_tag = self.pos, False
        while self.at() in ("&", "!"):
            end = self.pos
            while end < len(self.text) and self.text[end] not in " \t\r\n":
                end += 1
            str_tag = str_tag or self.text[self.pos:end] in ("!!str", "!<tag:yaml.org,2002:str>")
            self.pos = end
            self.skip_inline()
        return pos, str_tag

    def block_node(self, col: int, indent: int, str_tag: bool, block_start: bool) -> Node:
        c = self.at()
        if c == "-" and self.blank_after(self.pos + 1):
            if not block_start:
                raise self.syntax(self.pos, "block sequence entries are not allowed in this context")
            return self.block_sequence(col, indent)
        if c in "?:" and self.blank_after(self.pos + 1) and block_start:
            return self.block_mapping(col)
        if c in "|>":
            return self.block_scalar(indent)
        start = self.pos
        node = self.inline_node(indent, str_tag, block_start)
        if block_start and self.key_follows():
            self.pos = start
            return self.block_mapping(col)
        if node.kind == "str" and node.value is None:
            return self.plain_rest(node, indent, str_tag)
        return node

    def key_follows(self) -> bool:
        i = self.pos
        while i < len(self.text) and self.text[i] in " \t":
            i += 1
        return i < len(self.text) and self.text[i] == ":" and self.blank_after(i + 1)

    def inline_node(self, indent: int, str_tag: bool, block_start: bool) -> Node:
        """A node that starts on this line: an alias (refused), a flow
        collection, a quoted scalar, or a plain scalar's first line (a
        ``str`` node whose value is None until :meth:`plain_rest`)."""
        opened = self.opening_node(str_tag)
        if opened is not None:
            return opened
        c = self.at()
        if c in "]},%" or (c in "-?:" and self.blank_after(self.pos + 1)):
            raise self.syntax(self.pos, f"unexpected character: `{c}'")
        start = self.pos
        self.plain_line(block_start)
        node = Node("str", None, self.line(start))
        node.start, node.end = start, self.pos  # type: ignore[attr-defined]
        return node

    def plain_line(self, may_be_key: bool) -> None:
        """Scans a plain scalar to the end of its first line; a ``: `` in it
        is yaml-rust2's "mapping values" error unless it ends a key."""
        while self.pos < len(self.text):
            c = self.at()
            if c in "\r\n":
                break
            if c == ":" and self.blank_after(self.pos + 1):
                if may_be_key:
                    break
                raise self.syntax(self.pos, "mapping values are not allowed in this context")
            if c == "#" and self.text[self.pos - 1] in " \t":
                break
            self.pos += 1
        while self.pos > 0 and self.text[self.pos - 1] in " \t":
            self.pos -= 1

    def plain_rest(self, node: Node, indent: int, str_tag: bool) -> Node:
        """The plain scalar's continuation lines (indented past ``indent``),
        folded, then resolved by the core schema."""
        parts = [self.text[node.start:node.end]]  # type: ignore[attr-defined]
        while True:
            save = self.pos
            self.skip_inline()  # a trailing comment ends the scalar
            if self.at() not in ("\n", "\r"):
                self.pos = save if self.at() == "" and save < len(self.text) else self.pos
                break
            breaks, cont = self.continuation(indent)
            if cont is None:
                self.pos = save
                break
            parts.append(" " if breaks == 1 else "\n" * (breaks - 1))
            self.pos = cont
            start = self.pos
            self.plain_line(False)
            parts.append(self.text[start:self.pos])
        return plain_node("".join(parts), node.line, str_tag)

    def continuation(self, indent: int) -> tuple[int, int | None]:
        """How many line breaks lead to the next content line, and where it
        starts when it continues a plain scalar (indented past ``indent``)."""
        i, breaks = self.pos, 0
        while i < len(self.text):
            line_end = self.text.find("\n", i)
            line_end = len(self.text) if line_end < 0 else line_end
            breaks += 1
            i = line_end + 1
            j = i
            while j < len(self.text) and self.text[j] == " ":
                j += 1
            if j < len(self.text) and self.text[j] == "\t" and j - i <= indent + 1:
                k = j
                while k < len(self.text) and self.text[k] in " \t":
                    k += 1
                if k < len(self.text) and self.text[k] not in "\r\n#":
                    raise self.syntax(self.pos - 1, "while scanning a plain scalar, found a tab")
            while j < len(self.text) and self.text[j] in " \t":
                j += 1
            if j >= len(self.text):
                return breaks, None
            if self.text[j] in "\r\n":
                continue
            if self.text[j] == "#" or j - i <= indent or self.is_marker(j, "---") or self.is_marker(j, "..."):
                return breaks, None
            return breaks, j
        return breaks, None

    def block_mapping(self, col: int) -> Node:
        line = self.line(self.pos)
        self.open(self.pos)
        entries: list[tuple[Node, Node]] = []
        seen: set[Any] = set()
        while True:
            key = self.mapping_key(col)
            while self.at() in (" ", "\t"):
                self.pos += 1
            if self.at() != ":" or not self.blank_after(self.pos + 1):
                self.skip_lines()
                raise self.syntax(self.pos, "simple key expect ':'")
            self.pos += 1
            value = self.node(col, block_start=False, seq_at_indent=True)
            if value.empty:  # reported on its key's line, not where the next token starts
                value.line = key.line
            self.add_entry(entries, seen, key, value)
            self.skip_inline()
            self.skip_lines()
            if self.pos >= len(self.text) or self.is_marker(self.pos, "---") or self.is_marker(self.pos, "..."):
                break
            here = self.column(self.pos)
            if here < col:
                break
            if here > col or (self.at() == "-" and self.blank_after(self.pos + 1)):
                pos = self.pos + 2 if self.at() == "-" else self.pos
                raise self.syntax(pos, "while parsing a block mapping, did not find expected key")
        self.depth -= 1
        return Node("map", entries, line)

    def mapping_key(self, col: int) -> Node:
        """A key: empty before a bare ``:``, a ``?`` key (a whole node), or one on this line."""
        if self.at() == ":" and self.blank_after(self.pos + 1):
            return Node("null", None, self.line(self.pos))
        if self.at() == "?" and self.blank_after(self.pos + 1):
            self.pos += 1
            key = self.node(col, block_start=True)
            self.skip_inline()
            self.skip_lines()
            if not (self.column(self.pos) == col and self.at() == ":" and self.blank_after(self.pos + 1)):
                raise self.syntax(self.pos, "complex keys without a `:` value are not supported in frontmatter")
            return key
        self.properties()
        key = self.inline_node(col, False, True)
        return self.resolve_first_line(key) if key.kind == "str" and key.value is None else key

    def resolve_first_line(self, node: Node) -> Node:
        return plain_node(self.text[node.start:node.end], node.line, False)  # type: ignore[attr-defined]

    def block_sequence(self, col: int, indent: int) -> Node:
        line = self.line(self.pos)
        self.open(self.pos)
        items: list[Node] = []
        while True:
            self.pos += 1
            items.append(self.node(col, block_start=True))
            self.skip_inline()
            self.skip_lines()
            if self.pos >= len(self.text) or self.is_marker(self.pos, "---") or self.is_marker(self.pos, "..."):
                break
            here = self.column(self.pos)
            if here < col or (here == col == indent and not (self.at() == "-" and self.blank_after(self.pos + 1))):
                break
            if here > col or not (self.at() == "-" and self.blank_after(self.pos + 1)):
                raise self.syntax(self.pos, "while parsing a block collection, did not find expected '-' indicator")
        self.depth -= 1
        return Node("seq", items, line)


def parse_yaml(text: str, first_line: int, describe: Any) -> Node | None:
    """The frontmatter's root node, None for a stream with no document;
    raises :class:`YamlRefusal` with the reason."""
    return _Reader(text, first_line, describe).document()

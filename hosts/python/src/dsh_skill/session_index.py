"""The index of a session's user-role messages: by seq, and by source kind
for the plugin's paging. A file's log keeps where each message's line is
and reads it back when asked (spec §5.3, memory and rewritten files); a log
in memory holds the content itself.

User-role messages are the ``user/message`` events and the message of each
``tool/result`` whose ``data.message.source.plugin`` is ``dsh-tool-skill``
(the plugin's record of a load): an ordinary tool result is not indexed and
leaves the history version alone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .session_lines import TOOL_RESULT, USER_MESSAGE, LineSpan


@dataclass
class UserMessage:
    """A user-role message as the plugin reads it: its seq, source and content as stored."""

    seq: int
    source: Any
    content: list[Any]


@dataclass
class IndexedMessage:
    """A user-role message in the index: its seq and source (what readers
    filter on), and where the rest is: the line at ``span`` (a file's log),
    or ``content`` held here (a log in memory)."""

    seq: int
    source: Any
    span: LineSpan | None
    content: list[Any] | None


@dataclass
class MessageIndex:
    messages: list[IndexedMessage] = field(default_factory=list)
    by_seq: dict[int, IndexedMessage] = field(default_factory=dict)
    by_kind: dict[str, list[IndexedMessage]] = field(default_factory=dict)

    def add(self, seq: int, message: dict[str, Any], span: LineSpan | None) -> None:
        """Indexes ``message`` (a user-message data object with a content
        list); its content is held only when there is no line to read it from."""
        source = message.get("source")
        kind = source.get("kind") if isinstance(source, dict) and isinstance(source.get("kind"), str) else ""
        indexed = IndexedMessage(seq, source, span, message["content"] if span is None else None)
        self.messages.append(indexed)
        self.by_seq[seq] = indexed
        self.by_kind.setdefault(kind, []).append(indexed)


def user_role_message(kind: str, data: Any) -> Any:
    """The user-role message an event carries, or None."""
    if kind == USER_MESSAGE:
        return data
    if kind != TOOL_RESULT or not isinstance(data, dict) or "message" not in data:
        return None
    message = data["message"]
    source = message.get("source") if isinstance(message, dict) else None
    if isinstance(source, dict) and source.get("plugin") == "dsh-tool-skill" and isinstance(message.get("content"), list):
        return message
    return None

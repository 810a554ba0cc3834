"""The skill-name grammar and the body digest a plugin may hand back (``skill_rules``)."""

from __future__ import annotations

import re
from typing import Any

_SKILL_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")

#: The longest body digest a plugin may hand back (``MAX_BODY_DIGEST_BYTES``).
MAX_DIGEST_BYTES = 128
#: The most names a reload notice may list (``MAX_RELOAD_NAMES``).
MAX_RELOAD_NAMES = 256
#: The most skills one ``query`` returns (``MAX_SEARCH_MATCHES``).
MAX_SEARCH_MATCHES = 5


def is_skill_name(name: Any) -> bool:
    """``^[a-z0-9]+(?:-[a-z0-9]+)*$`` (spec §3.3)."""
    return isinstance(name, str) and _SKILL_NAME.fullmatch(name) is not None


def is_digest(digest: Any) -> bool:
    """Up to ``MAX_DIGEST_BYTES`` of printable ASCII (0x21..=0x7e)."""
    return (
        isinstance(digest, str)
        and len(digest) <= MAX_DIGEST_BYTES
        and all(0x21 <= ord(c) <= 0x7E for c in digest)
    )

#: The most bytes a skill file's path may have (``MAX_SKILL_FILE_PATH_BYTES``).
MAX_SKILL_FILE_PATH_BYTES = 1024
#: The most bytes one read of a skill's file returns (``MAX_SKILL_FILE_READ_BYTES``, 1 MiB).
MAX_SKILL_FILE_READ_BYTES = 1024 * 1024
_PATH_REFUSED = re.compile("[\\\\\x00-\x1f\x7f]")


def is_skill_file_path(path: Any) -> bool:
    """A path inside a skill (``is_skill_file_path``, spec §3.15): non-empty,
    at most :data:`MAX_SKILL_FILE_PATH_BYTES` UTF-8 bytes, ``/``-separated
    segments, each non-empty, neither ``.`` nor ``..`` nor hidden (a leading
    ``.``), without ``\\`` or a control character (U+0000–U+001F, U+007F)."""
    if not isinstance(path, str) or path == "" or _PATH_REFUSED.search(path) is not None:
        return False
    if len(path) > MAX_SKILL_FILE_PATH_BYTES // 4 and len(path.encode("utf-8", "surrogatepass")) > MAX_SKILL_FILE_PATH_BYTES:
        return False
    return all(segment != "" and not segment.startswith(".") for segment in path.split("/"))

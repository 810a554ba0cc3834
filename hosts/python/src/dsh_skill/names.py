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

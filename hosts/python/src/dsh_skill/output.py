"""Caps on what one plugin call returns, as the other hosts apply them: the
messages a pre-step adds, the UTF-8 bytes of each string, the bytes of all of
them (spec §8.5)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .errors import HostError


@dataclass(frozen=True)
class OutputLimits:
    max_added_messages: int = 64
    max_text_bytes: int = 16 * 1024 * 1024
    max_output_bytes: int = 32 * 1024 * 1024


class OutputCheck:
    """The running tally of one call's output."""

    def __init__(self, call: str, limits: OutputLimits) -> None:
        self.call = call
        self.limits = limits
        self.total = 0

    def text(self, what: Callable[[], str], text: str) -> None:
        """Counts one string; ``what()`` names it in the error."""
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        per_text = self.limits.max_text_bytes
        if size > per_text:
            raise HostError.invalid_output(self.call, f"{what()} is {size} bytes, over the cap of {per_text} bytes per text")
        self.total += size
        per_call = self.limits.max_output_bytes
        if self.total > per_call:
            raise HostError.invalid_output(
                self.call, f"its texts add up to more than the cap of {per_call} bytes per call (at {what()})"
            )

    def added_count(self, added: int) -> None:
        """Refuses more added messages than the cap, before any is looked at."""
        cap = self.limits.max_added_messages
        if added > cap:
            raise HostError.invalid_output(self.call, f"it added {added} messages; a pre-step may add at most {cap}")

"""What can go wrong in the host, worded as the Rust host words it (its
``HostError``), so that all three hosts print the same ``error: …`` line."""

from __future__ import annotations


class HostError(Exception):
    """A failure of a plugin call or of the host around it. ``kind`` is one of
    ``load``, ``config``, ``timeout``, ``memory``, ``stack``, ``panic``,
    ``trap``, ``invalid-output``, ``input``, ``session``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    def __str__(self) -> str:
        return self.message

    @classmethod
    def load(cls, reason: str) -> HostError:
        return cls("load", f"cannot load the plugin component: {reason}")

    @classmethod
    def config(cls, message: str) -> HostError:
        """The plugin refused its configuration; the text is the plugin's."""
        return cls("config", message)

    @classmethod
    def timeout(cls, call: str, timeout_ms: int) -> HostError:
        return cls("timeout", f"plugin call `{call}` exceeded its deadline of {timeout_ms} ms")

    @classmethod
    def memory(cls, call: str, limit_bytes: int) -> HostError:
        return cls("memory", f"plugin call `{call}` exceeded its memory cap of {limit_bytes // (1024 * 1024)} MiB")

    @classmethod
    def stack(cls, call: str) -> HostError:
        return cls("stack", f"plugin call `{call}` trapped: call stack exhausted")

    @classmethod
    def panic(cls, call: str, location: str, message: str) -> HostError:
        return cls("panic", f"plugin call `{call}` trapped: the guest panicked at {location}: {message}")

    @classmethod
    def trap(cls, call: str, reason: str, stderr: str = "") -> HostError:
        suffix = f" (guest stderr: {stderr})" if stderr else ""
        return cls("trap", f"plugin call `{call}` trapped: {reason}{suffix}")

    @classmethod
    def invalid_output(cls, call: str, reason: str) -> HostError:
        return cls("invalid-output", f"plugin call `{call}` returned invalid output: {reason}")

    @classmethod
    def input(cls, message: str) -> HostError:
        """An input the host refuses (``provider N: …``, ``runtime skill N: …``, ``step N: …``)."""
        return cls("input", message)

    @classmethod
    def session(cls, message: str) -> HostError:
        return cls("session", message)


class ScenarioError(Exception):
    """A scenario file that is not JSON or not the shape of spec §7, refused
    before the plugin starts; printed as ``error: scenario <file>: …``."""

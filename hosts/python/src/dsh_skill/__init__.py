"""dsh-skill: the DeepSeek Harness ``skill`` plugin (the WebAssembly component
``dsh:skill@0.3.0``) in a Python host on wasmtime.

    from dsh_skill import Plugin, SkillRegistry, MemoryProvider, SessionLog, Enter, run_step

    plugin = Plugin.create()                      # the packaged component, configured with {}
    registry = SkillRegistry()
    registry.register_provider(MemoryProvider.of("memory", [{"name": "pdf", "description": "PDFs.", "content": "…"}]))
    session = SessionLog.open("session.jsonl", cwd="/workspace")
    run_step(plugin, registry, session, Enter([user_message({"kind": "user"}, "hello")]), cwd="/workspace")
    outcome = plugin.invoke(registry, {"name": "pdf"}, cwd="/workspace")

``dsh_skill.trace.replay(trace.read(path), component)`` replays a trace
that ``skill-host replay --trace`` recorded (spec §7.2).

See hosts/python/README.md in the repository, and docs/embedding.md.
"""

from __future__ import annotations

from importlib import resources

from .errors import HostError, ScenarioError
from .local_provider import LocalProvider, LocalRoots
from .memory_provider import MemoryProvider, MemorySkill
from .output import OutputLimits
from .plugin import (
    Decision,
    Enter,
    Plugin,
    Reject,
    StepOutcome,
    ToolDefinition,
    ToolOutcome,
    record_tool_result,
    run_step,
    single_text,
    tool_result_data,
    user_message,
)
from .registry import (
    Candidate,
    Definition,
    Invocation,
    Listing,
    ProviderError,
    ResourceBase,
    RuntimeSkill,
    SkillRegistry,
    SkippedFile,
    body_digest,
)
from .sandbox import SandboxLimits
from .scenario import Scenario
from .session import LockWait, SessionError, SessionLog

__version__ = "0.1.0"

__all__ = [
    "Candidate",
    "Decision",
    "Definition",
    "Enter",
    "HostError",
    "Invocation",
    "Listing",
    "LocalProvider",
    "LocalRoots",
    "LockWait",
    "MemoryProvider",
    "MemorySkill",
    "OutputLimits",
    "Plugin",
    "ProviderError",
    "Reject",
    "ResourceBase",
    "RuntimeSkill",
    "SandboxLimits",
    "Scenario",
    "ScenarioError",
    "SessionError",
    "SessionLog",
    "SkillRegistry",
    "SkippedFile",
    "StepOutcome",
    "ToolDefinition",
    "ToolOutcome",
    "body_digest",
    "packaged_component",
    "record_tool_result",
    "run_step",
    "single_text",
    "tool_result_data",
    "user_message",
]


def packaged_component() -> bytes:
    """The component packaged in the wheel (``plugin.wasm``, written by scripts/build.sh)."""
    try:
        return resources.files(__package__).joinpath("plugin.wasm").read_bytes()
    except FileNotFoundError:
        raise HostError.load(
            "this dsh_skill has no plugin.wasm: build the wheel with hosts/python/scripts/build.sh, or pass the component's bytes"
        ) from None

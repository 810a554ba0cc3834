"""``python -m dsh_skill replay [options] SCENARIO.json``: runs a scenario
(spec §7) in this Python host and prints the document ``skill-host replay``
prints. ``python -m dsh_skill trace [--component FILE.wasm] [--no-cache]
TRACE.json`` replays a trace (spec §7.2) against the component (default: the
packaged one) and says where it differs: exit 0 when it does not, 1 with one
``mismatch: …`` line each when it does. Options as skill-host's and the Node host's: ``--plugin FILE.wasm``
(default: the packaged component), ``--config FILE``, ``--timeout-ms N``,
``--memory-mb N``, ``--max-added-messages N``, ``--max-text-bytes N``,
``--max-output-bytes N``; ``--no-cache`` compiles without the on-disk cache.

Exit codes as skill-host's: 0 success, 2 a usage error, 3 a failure of the
host (an unreadable or malformed scenario, a refused configuration, a trap,
a limit), printed as one ``error: …`` line.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from .errors import HostError, ScenarioError
from .jsonvalue import pretty
from .output import OutputLimits
from .sandbox import SandboxLimits, default_cache_dir
from .scenario import Scenario
from .session import SessionError

USAGE = (
    "usage: python -m dsh_skill replay [--plugin FILE.wasm] [--config FILE] [--timeout-ms N] [--memory-mb N] "
    "[--max-added-messages N] [--max-text-bytes N] [--max-output-bytes N] [--no-cache] SCENARIO.json\n"
    "       python -m dsh_skill trace [--component FILE.wasm] [--no-cache] TRACE.json"
)


class UsageError(Exception):
    pass


@dataclass
class Options:
    scenario: str
    plugin: str | None = None
    config: str | None = None
    timeout_ms: int = 1000
    memory_mb: int = 64
    max_added_messages: int = 64
    max_text_bytes: int = 16 * 1024 * 1024
    max_output_bytes: int = 32 * 1024 * 1024
    cache: bool = True


def parse_options(args: list[str]) -> Options:
    found: dict[str, object] = {}
    scenario = None
    numbers = {
        "--timeout-ms": "timeout_ms",
        "--memory-mb": "memory_mb",
        "--max-added-messages": "max_added_messages",
        "--max-text-bytes": "max_text_bytes",
        "--max-output-bytes": "max_output_bytes",
    }
    index = 0
    while index < len(args):
        arg = args[index]

        def value() -> str:
            nonlocal index
            index += 1
            if index >= len(args):
                raise UsageError(f"{arg} needs a value")
            return args[index]

        if arg == "--plugin":
            found["plugin"] = value()
        elif arg == "--config":
            found["config"] = value()
        elif arg in numbers:
            text = value()
            if not text.isascii() or not text.isdigit():
                raise UsageError(f'{arg} needs a whole number, not "{text}"')
            found[numbers[arg]] = int(text)
        elif arg == "--no-cache":
            found["cache"] = False
        elif arg in ("--help", "-h"):
            print(USAGE)
            raise SystemExit(0)
        elif arg.startswith("-"):
            raise UsageError(f"unknown option {arg}")
        elif scenario is None:
            scenario = arg
        else:
            raise UsageError(f"unexpected argument {arg}")
        index += 1
    if scenario is None:
        raise UsageError("a SCENARIO.json is required")
    return Options(scenario=scenario, **found)  # type: ignore[arg-type]


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise HostError("read", f"cannot read {what} {path}: {error.strerror}") from None


def replay(options: Options) -> int:
    try:
        try:
            data = _read(options.scenario, "scenario")
            try:
                scenario = Scenario.parse(data.decode("utf-8"))
            except UnicodeDecodeError as error:
                raise ScenarioError(f"not valid UTF-8 at byte {error.start}") from None
        except ScenarioError as error:
            raise HostError("scenario", f"scenario {options.scenario}: {error}") from None
        if scenario.config is None and options.config is not None:
            scenario.config = _read(options.config, "configuration").decode("utf-8")
        component = None if options.plugin is None else _read(options.plugin, "plugin")
        limits = SandboxLimits(
            timeout_ms=options.timeout_ms,
            memory_bytes=options.memory_mb * 1024 * 1024,
            output=OutputLimits(options.max_added_messages, options.max_text_bytes, options.max_output_bytes),
        )
        output = scenario.replay(component, limits, default_cache_dir() if options.cache else None)
    except (HostError, SessionError) as error:
        sys.stderr.write("error: " + str(error).replace("\n", " ") + "\n")
        return 3
    sys.stdout.write(pretty(output) + "\n")
    return 0


def parse_trace_options(args: list[str]) -> tuple[str, str | None, bool]:
    """(the trace file, the component file or None, whether to use the cache)."""
    path = component = None
    cache = True
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg == "--component":
            if not rest:
                raise UsageError("--component needs a value")
            component = rest.pop(0)
        elif arg == "--no-cache":
            cache = False
        elif arg.startswith("-"):
            raise UsageError(f"unknown option {arg}")
        elif path is None:
            path = arg
        else:
            raise UsageError(f"unexpected argument {arg}")
    if path is None:
        raise UsageError("a TRACE.json is required")
    return path, component, cache


def replay_trace(path: str, component_path: str | None, cache: bool) -> int:
    from . import trace

    try:
        component = None if component_path is None else _read(component_path, "component")
        mismatches = trace.replay(trace.read(path), component, default_cache_dir() if cache else None)
    except (HostError, trace.TraceError) as error:
        sys.stderr.write("error: " + str(error).replace("\n", " ") + "\n")
        return 3
    for mismatch in mismatches:
        sys.stderr.write("mismatch: " + str(mismatch).replace("\n", " ") + "\n")
    if mismatches:
        return 1
    sys.stdout.write(f"{path}: replayed as traced\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in ("replay", "trace"):
        if args and args[0] in ("--help", "-h"):
            print(USAGE)
            return 0
        sys.stderr.write(f"error: a command is required: replay or trace\n{USAGE}\n")
        return 2
    try:
        if args[0] == "trace":
            return replay_trace(*parse_trace_options(args[1:]))
        options = parse_options(args[1:])
    except UsageError as error:
        sys.stderr.write(f"error: {error}\n{USAGE}\n")
        return 2
    return replay(options)


if __name__ == "__main__":
    raise SystemExit(main())

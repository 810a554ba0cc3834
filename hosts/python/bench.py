"""The steady pre-step and a ``skill`` load through the Python host, with the
workload of host-runner/examples/pre_step_bench.rs: N runtime skills with
~120-character descriptions, a session of M events whose catalog was
published near the start and is still visible, K warm calls; prints one JSON
line with the median and p90 in microseconds. Never run by the tests.

    python hosts/python/bench.py --skills 1000 --events 1000 --iterations 200 [--load]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from dsh_skill import Enter, Plugin, RuntimeSkill, SessionLog, SkillRegistry, run_step, user_message

CWD = "/workspace"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", type=int, default=100)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--load", action="store_true")
    args = parser.parse_args()
    plugin = Plugin.create()
    registry = SkillRegistry()
    for i in range(args.skills):
        description = f"Skill number {i}: " + "does one careful thing with files, tests and reviews " * 2
        registry.register_runtime(RuntimeSkill(f"skill-{i:04}", description[:120], f"Body of skill {i}."))
    session = SessionLog.in_memory(CWD)
    run_step(plugin, registry, session, Enter([user_message({"kind": "user"}, "hello")]), CWD)
    for i in range(max(0, args.events - 2)):
        session.append_event("assistant/message", {"content": [{"type": "text", "text": f"reply {i}"}]}, "append")
    name = f"skill-{args.skills // 2:04}"
    samples = []
    for i in range(args.iterations + min(50, args.iterations)):
        started = time.perf_counter()
        if args.load:
            outcome = plugin.invoke(registry, {"name": name}, CWD)
            assert outcome.ok, outcome.error
        else:
            outcome = plugin.pre_step(registry, session, Enter([]), CWD)
            assert outcome.decision == Enter([]), outcome
        elapsed = time.perf_counter() - started
        if i >= min(50, args.iterations):
            samples.append(elapsed * 1e6)
    samples.sort()
    print(json.dumps({
        "host": "python", "what": "load" if args.load else "steady pre-step", "skills": args.skills,
        "events": args.events, "iterations": args.iterations,
        "median_us": round(statistics.median(samples), 1), "p90_us": round(samples[int(len(samples) * 0.9)], 1),
    }))


if __name__ == "__main__":
    main()

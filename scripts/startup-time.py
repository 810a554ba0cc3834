#!/usr/bin/env python3
"""Times `skill-host step` from process start to exit (its first pre-step
done and the catalog printed), for the example workspace and a new session
each run: with a warm compiled-component cache, and with none.

    cargo build --release -p skill-host --bin skill-host
    python3 scripts/startup-time.py [--runs 30]
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "skill-host")


def step(session, cache):
    env = dict(os.environ, SKILL_HOST_CACHE_DIR=cache)
    start = time.perf_counter()
    subprocess.run([BINARY, "step", "--session", session, "--cwd", os.path.join(ROOT, "examples", "workspace")],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    return (time.perf_counter() - start) * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        cache = os.path.join(scratch, "cache")
        sessions = iter(os.path.join(scratch, f"session-{n}.jsonl") for n in range(10 * args.runs))
        step(next(sessions), cache)  # writes the cache
        warm = sorted(step(next(sessions), cache) for _ in range(args.runs))
        cold = sorted(step(next(sessions), os.path.join(scratch, f"empty-{n}")) for n in range(5))
    print(f"warm cache: median {statistics.median(warm):.1f} ms, min {warm[0]:.1f} ms ({args.runs} runs)")
    print(f"no cache: median {statistics.median(cold):.1f} ms, min {cold[0]:.1f} ms (5 runs)")


if __name__ == "__main__":
    main()

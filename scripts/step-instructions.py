#!/usr/bin/env python3
"""Counts the instructions of one steady pre-step with callgrind, for the
real plugin, the empty plugin (scripts/idle-plugin) and the plugin logic
compiled natively: the figures of the README's "Where the time goes".

    python3 scripts/step-instructions.py [--skills 10] [--events 100] [--breakdown]

Wall-clock medians on a shared machine move from process to process;
instruction counts do not. Each mode runs pre_step_bench twice under
callgrind, with 1,000 and with 3,000 timed steps, and reports the difference
divided by 2,000: the cost of a steady step alone, without the setup (which
builds and publishes the catalog) or the process around it. The count is
`run_step` inclusive (for `--native`, the bench's own `native::pre_step`).

`--breakdown` splits the wasm step by where the instructions run: wasmtime,
the host (`skill_host`), the guest (code compiled from the plugin, which
callgrind sees without symbols), and the rest (libc, the bench's loop).
Needs valgrind (`apt-get install valgrind`).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "target", "release", "examples", "pre_step_bench")
IDLE = os.path.join(ROOT, "target", "idle-plugin", "wasm32-wasip2", "release", "idle_plugin.wasm")
SHORT, LONG = 1000, 3000
# The function whose inclusive count is one step, per mode.
STEP = re.compile(r"[:\s](skill_host::step::run_step|pre_step_bench::native::pre_step) \[")
LINE = re.compile(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)")


def build():
    subprocess.run(["cargo", "build", "--release", "-p", "host-runner", "--example", "pre_step_bench"],
                   cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "--target", "wasm32-wasip2", "--manifest-path",
                    "scripts/idle-plugin/Cargo.toml", "--target-dir", "target/idle-plugin"], cwd=ROOT, check=True)


def annotate(profile, inclusive):
    """Every function's count in a callgrind profile, by name."""
    command = ["callgrind_annotate", "--threshold=100", f"--inclusive={'yes' if inclusive else 'no'}", profile]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    counts = {}
    for line in out.splitlines():
        match = LINE.match(line)
        if match:
            counts[match.group(2)] = counts.get(match.group(2), 0) + int(match.group(1).replace(",", ""))
    return counts


def profile(directory, name, steps, bench_args):
    out = os.path.join(directory, f"{name}.{steps}")
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", BENCH,
               "--iterations", str(steps), "--warmup", "10"] + bench_args
    subprocess.run(command, check=True, capture_output=True)
    return out


def per_step(short, long, key):
    return (long.get(key, 0) - short.get(key, 0)) / (LONG - SHORT)


def step_count(short_profile, long_profile):
    short, long = annotate(short_profile, True), annotate(long_profile, True)
    keys = [key for key in long if STEP.search(key) and "PROGRAM TOTALS" not in key]
    if not keys:
        sys.exit(f"no run_step in {long_profile}")
    return round(per_step(short, long, keys[0]))


def category(name):
    if re.search(r":0x[0-9a-f]+ \[", name):
        return "guest (compiled wasm)"
    if re.search(r"wasmtime|cranelift_bforest|CompiledFunctionsTable|FuncKey", name):
        return "wasmtime"
    if "skill_host" in name:
        return "host (skill_host)"
    return "other (libc, the bench's loop)"


def breakdown(short_profile, long_profile):
    short, long = annotate(short_profile, False), annotate(long_profile, False)
    totals = {}
    for key in set(short) | set(long):
        if "PROGRAM TOTALS" in key:
            continue
        totals[category(key)] = totals.get(category(key), 0) + per_step(short, long, key)
    return totals


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--skills", type=int, default=10)
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--breakdown", action="store_true")
    args = parser.parse_args()
    for tool in ("valgrind", "callgrind_annotate"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed (apt-get install valgrind)")
    build()
    sizes = ["--skills", str(args.skills), "--events", str(args.events)]
    modes = {"wasm": sizes, "empty plugin": sizes + ["--component", IDLE], "native": sizes + ["--native"]}
    with tempfile.TemporaryDirectory() as directory:
        counts = {}
        for name, bench_args in modes.items():
            slug = name.replace(" ", "-")
            short = profile(directory, slug, SHORT, bench_args)
            long = profile(directory, slug, LONG, bench_args)
            counts[name] = step_count(short, long)
            if name == "wasm" and args.breakdown:
                split = breakdown(short, long)
        print(f"instructions per steady pre-step, {args.skills} skills × {args.events} events:")
        print("| mode | instructions | ÷ native |")
        print("|---|---:|---:|")
        for name, count in counts.items():
            print(f"| {name} | {count:,} | {count / counts['native']:.1f}× |")
        if args.breakdown:
            print("\nthe wasm step by where it runs (self counts; the bench's loop included):")
            for name, count in sorted(split.items(), key=lambda item: -item[1]):
                print(f"- {name}: {round(count):,}")


if __name__ == "__main__":
    main()

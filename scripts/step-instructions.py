#!/usr/bin/env python3
"""Counts the instructions of one steady pre-step with callgrind, for the
real plugin, the empty plugin (scripts/idle-plugin) and the plugin logic
compiled natively: the figures of the README's "Where the time goes".

    python3 scripts/step-instructions.py [--skills 10] [--events 100] [--breakdown]

Wall-clock medians on a shared machine move from process to process;
instruction counts move by a few instructions at most. Each mode runs
pre_step_bench twice under callgrind, with 1,000 and with 3,000 timed
steps, counting only inside the step's function (`run_step`; in native mode
the bench's `native::pre_step`), and reports the difference divided by
2,000: the cost of a steady step alone, without the setup (which builds and
publishes the catalog) or the bench's loop around it.

`--breakdown` splits the wasm step by where its instructions run: wasmtime,
the host (`skill_host`), the guest (code compiled from the plugin, which
callgrind sees without symbols), and the rest (libc). Needs valgrind
(`apt-get install valgrind`).
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
RUN_STEP = "skill_host::step::run_step"
NATIVE_STEP = "pre_step_bench::native::pre_step"
LINE = re.compile(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)")
TOTAL = "PROGRAM TOTALS"


def build():
    subprocess.run(["cargo", "build", "--release", "-p", "skill-host", "--example", "pre_step_bench"],
                   cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "--target", "wasm32-wasip2", "--manifest-path",
                    "scripts/idle-plugin/Cargo.toml", "--target-dir", "target/idle-plugin"], cwd=ROOT, check=True)


def annotate(profile):
    """Every function's own count in a callgrind profile, by name, and the total."""
    command = ["callgrind_annotate", "--threshold=100", profile]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    counts = {}
    for line in out.splitlines():
        match = LINE.match(line)
        if match:
            counts[match.group(2)] = counts.get(match.group(2), 0) + int(match.group(1).replace(",", ""))
    return counts


def profile(directory, name, steps, step_function, bench_args):
    """Profiles `steps` timed steps, counting only inside `step_function`."""
    out = os.path.join(directory, f"{name}.{steps}")
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", f"--toggle-collect={step_function}",
               BENCH, "--iterations", str(steps), "--warmup", "10"] + bench_args
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        tail = "\n".join(run.stderr.strip().splitlines()[-5:])
        sys.exit(f"pre_step_bench {' '.join(bench_args)} failed under valgrind:\n{tail}")
    counts = annotate(out)
    if not counts.get(TOTAL):
        sys.exit(f"callgrind counted nothing inside {step_function}: was it renamed or inlined?")
    return counts


def per_step(short, long, key):
    return (long.get(key, 0) - short.get(key, 0)) / (LONG - SHORT)


def category(key):
    """Where a function runs, from its name (`file:function [object]`)."""
    function = key.split(":", 1)[-1].rsplit(" [", 1)[0]
    if re.fullmatch(r"0x[0-9a-f]+", function):
        return "guest (compiled wasm)"
    if re.search(r"wasmtime|cranelift_bforest|CompiledFunctionsTable|FuncKey", function):
        return "wasmtime"
    if function.startswith("skill_host::") or "<skill_host::" in function:
        return "host (skill_host)"
    return "other (libc)"


def breakdown(short, long):
    totals = {}
    for key in set(short) | set(long):
        if key != TOTAL:
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
    modes = {
        "wasm": (RUN_STEP, sizes),
        "empty plugin": (RUN_STEP, sizes + ["--component", IDLE]),
        "native": (NATIVE_STEP, sizes + ["--native"]),
    }
    counts, profiles = {}, {}
    with tempfile.TemporaryDirectory() as directory:
        for name, (step_function, bench_args) in modes.items():
            print(f"{name}: {SHORT} and {LONG} steps under callgrind…", file=sys.stderr, flush=True)
            slug = name.replace(" ", "-")
            profiles[name] = [profile(directory, slug, steps, step_function, bench_args) for steps in (SHORT, LONG)]
            counts[name] = round(per_step(*profiles[name], TOTAL))
    print(f"instructions per steady pre-step, {args.skills} skills × {args.events} events:")
    print("| mode | instructions | ÷ native |")
    print("|---|---:|---:|")
    for name, count in counts.items():
        print(f"| {name} | {count:,} | {count / max(counts['native'], 1):.1f}× |")
    if args.breakdown:
        print("\nthe wasm step by where its instructions run:")
        for name, count in sorted(breakdown(*profiles["wasm"]).items(), key=lambda item: -item[1]):
            print(f"- {name}: {round(count):,}")


if __name__ == "__main__":
    main()

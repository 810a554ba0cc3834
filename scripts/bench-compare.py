#!/usr/bin/env python3
"""Runs the reference bench (the published DeepSeek Harness skill plugin in
Node.js, bench/reference/bench.mjs) and skill-host's pre_step_bench side by
side, in one run, and prints the ratios.

    (cd bench/reference && npm install)    # once
    python3 scripts/bench-compare.py [--reference DIR] [--skills 10,1000] [--events 100,100000] [--repeats 3]

DIR defaults to bench/reference in this repository.
Each cell runs as its own process, interleaved (reference, wasm, empty,
native) so machine noise hits them all alike. Medians are of warm calls.
*empty* is the pre-step through scripts/idle-plugin, a plugin that does
nothing: what the sandbox costs by itself, the floor under any plugin.
"""

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(ROOT, "bench", "reference")


def iterations(events):
    # As the reference's RESULTS.md: fewer iterations for the big sessions.
    return 1000 if events <= 1000 else 300 if events <= 10000 else 100


def run(command, cwd):
    out = subprocess.run(command, cwd=cwd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference", metavar="DIR", default=REFERENCE,
                        help="the reference harness, with bench.mjs and its node_modules "
                             f"(default: {os.path.relpath(REFERENCE, ROOT)})")
    parser.add_argument("--skills", default="10,1000", help="comma-separated skill counts (default: %(default)s)")
    parser.add_argument("--events", default="100,100000", help="comma-separated session sizes (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="processes per cell and implementation; the median is kept (default: %(default)s)")
    args = parser.parse_args()
    args.reference = os.path.abspath(args.reference)
    if not os.path.isfile(os.path.join(args.reference, "bench.mjs")):
        sys.exit(f"no bench.mjs in {args.reference}")
    if not os.path.isdir(os.path.join(args.reference, "node_modules")):
        if args.reference == REFERENCE:
            sys.exit(f"the reference is not installed: run `(cd {os.path.relpath(REFERENCE, ROOT)} && npm install)`")
        sys.exit(f"the reference is not installed: run `npm install` in {args.reference}")
    subprocess.run(["cargo", "build", "--release", "-p", "skill-host", "--example", "pre_step_bench"], cwd=ROOT, check=True)
    ours = [os.path.join(ROOT, "target", "release", "examples", "pre_step_bench")]
    subprocess.run(["cargo", "build", "--release", "--target", "wasm32-wasip2", "--manifest-path",
                    "scripts/idle-plugin/Cargo.toml", "--target-dir", "target/idle-plugin"], cwd=ROOT, check=True)
    idle = os.path.join(ROOT, "target", "idle-plugin", "wasm32-wasip2", "release", "idle_plugin.wasm")

    def cell(skills, events, load=False):
        k = iterations(events)
        extra = ["--load"] if load else []
        rows = {"ref": [], "wasm": [], "empty": [], "native": []}
        for _ in range(args.repeats):
            base = ["--skills", str(skills), "--events", str(events), "--iterations", str(k)] + extra
            rows["ref"].append(run(["node", "bench.mjs"] + base, args.reference)["median_us"])
            rows["wasm"].append(run(ours + base, ROOT)["median_us"])
            if not load:
                rows["empty"].append(run(ours + base + ["--component", idle], ROOT)["median_us"])
            rows["native"].append(run(ours + base + ["--native"], ROOT)["median_us"])
        return {key: sorted(values)[len(values) // 2] for key, values in rows.items() if values}

    print("| op | skills | events | reference | skill-host (wasm) | empty plugin | native "
          "| reference ÷ wasm | wasm ÷ native | empty ÷ native |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    flat = {}
    for skills in map(int, args.skills.split(",")):
        for events in map(int, args.events.split(",")):
            m = cell(skills, events)
            flat[(skills, events)] = m["wasm"]
            print(f"| pre-step | {skills} | {events} | {m['ref']:.1f} µs | {m['wasm']:.2f} µs | {m['empty']:.2f} µs "
                  f"| {m['native']:.2f} µs | {m['ref'] / m['wasm']:.0f}× | {m['wasm'] / m['native']:.1f}× "
                  f"| {m['empty'] / m['native']:.1f}× |", flush=True)
        m = cell(skills, 1000, load=True)
        print(f"| load | {skills} | 1000 | {m['ref']:.1f} µs | {m['wasm']:.2f} µs | | {m['native']:.2f} µs "
              f"| {m['ref'] / m['wasm']:.0f}× | {m['wasm'] / m['native']:.1f}× | |", flush=True)
    events = sorted(map(int, args.events.split(",")))
    for skills in map(int, args.skills.split(",")):
        small, large = flat[(skills, events[0])], flat[(skills, events[-1])]
        print(f"\n{skills} skills: median at {events[-1]} events ÷ at {events[0]} events = {large / small:.2f}×")


if __name__ == "__main__":
    main()

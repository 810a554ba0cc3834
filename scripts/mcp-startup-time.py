#!/usr/bin/env python3
"""Times `skill-host mcp` from a client's `initialize` to its first
`tools/list` answer, with the official MCP Python SDK
(tests/mcp-client/client.py), for examples/workspace and for a workspace of
1,000 generated skills: the median of 20 runs each, every run a new server
process. Not part of the test suite.

    python3 scripts/mcp-startup-time.py [--bin target/release/skill-host] [--runs 20]

Needs the client's virtual environment (.ci/run makes it:
target/mcp-client-venv).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_thousand(root: str) -> str:
    workspace = os.path.join(root, "thousand")
    skills = os.path.join(workspace, ".agents", "skills")
    for i in range(1000):
        folder = os.path.join(skills, f"skill-{i:04}")
        os.makedirs(folder)
        with open(os.path.join(folder, "SKILL.md"), "w", encoding="utf-8") as file:
            file.write(f"---\nname: skill-{i:04}\ndescription: Generated skill number {i} for the timing.\n---\n\nSteps.\n")
    return workspace


def time_once(python: str, binary: str, workspace: str, home: str) -> float:
    plan = {
        "command": [binary, "mcp", "--cwd", workspace],
        "env": {"DSH_HOME": os.path.join(home, "dsh"), "DSH_AGENTS_HOME": os.path.join(home, "agents")},
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(plan, file)
    try:
        out = subprocess.run([python, os.path.join(ROOT, "tests/mcp-client/client.py"), file.name],
                             check=True, capture_output=True, text=True, timeout=300).stdout
    finally:
        os.unlink(file.name)
    return json.loads(out)["initialize_to_tools_ms"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, "target/release/skill-host"))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--python", default=os.path.join(ROOT, "target/mcp-client-venv/bin/python"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        home = os.path.join(root, "home")
        os.makedirs(os.path.join(home, "dsh"))
        os.makedirs(os.path.join(home, "agents"))
        example = os.path.join(root, "example")
        shutil.copytree(os.path.join(ROOT, "examples/workspace"), example)
        results = {}
        for label, workspace in [("examples/workspace", example), ("1000 skills", make_thousand(root))]:
            times = [time_once(args.python, args.bin, workspace, home) for _ in range(args.runs)]
            results[label] = {"median_ms": round(statistics.median(times), 1),
                              "min_ms": round(min(times), 1), "max_ms": round(max(times), 1), "runs": args.runs}
        print(json.dumps({"bin": args.bin, "results": results}, indent=1))


if __name__ == "__main__":
    main()

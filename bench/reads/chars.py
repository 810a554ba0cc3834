"""What a model reads to use one section of each corpus skill (issue 30):
the whole body in one load, against `skillReads` with a 2,000-character
`skillBodyMaxLength` (the cut body and its outline) plus one `section` read
of the skill's last heading. Characters of the tool's text, as the model
sees it. Needs a built skill-host (default target/release/skill-host).

    python3 bench/reads/chars.py [SKILL_HOST]
"""

import json
import re
import statistics
import subprocess
import sys
import tempfile

HOST = sys.argv[1] if len(sys.argv) > 1 else "target/release/skill-host"
DIRS = ["tests/fixtures/corpus/anthropic-skills", "tests/fixtures/corpus/dsh-agents-skills"]
ROOTS = [arg for path in DIRS for arg in ("--skills-dir", path)]
HEADING = re.compile(r"^#{1,6} (.+?)\s*$", re.M)


def run(config: dict, *args: str) -> str:
    """The tool's text for `args` under `config`."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(config, file)
    done = subprocess.run([HOST, "--config", file.name, "load", *args, *ROOTS], capture_output=True, text=True)
    return done.stdout


def main() -> None:
    listing = json.loads(subprocess.run([HOST, "skills", "--json", *ROOTS], capture_output=True, text=True).stdout)
    rows = []
    for skill in listing["skills"]:
        whole = run({}, skill["name"])
        headings = HEADING.findall(whole)
        if not whole.startswith("<skill_content") or len(headings) < 3:
            continue
        cut = run({"skillReads": True, "skillBodyMaxLength": 2000}, skill["name"])
        section = run({"skillReads": True}, skill["name"], "--section", headings[-1])
        rows.append((skill["name"], len(whole), len(cut), len(section)))
    print("| skill | whole load | cut load with outline | one section | reads together |")
    print("|---|---:|---:|---:|---:|")
    for name, whole, cut, section in rows:
        print(f"| {name} | {whole:,} | {cut:,} | {section:,} | {cut + section:,} |")
    wholes = [row[1] for row in rows]
    reads = [row[2] + row[3] for row in rows]
    print(f"| **{len(rows)} skills, median** | {statistics.median(wholes):,.0f} | | | {statistics.median(reads):,.0f} |")
    print(f"| **total** | {sum(wholes):,} | | | {sum(reads):,} |")


if __name__ == "__main__":
    main()

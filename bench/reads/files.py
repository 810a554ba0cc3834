"""What a model reads to use one file of each corpus bundle (issue 30): the
whole body in one load plus the file read whole with the model's own file
tool, against `skillReads` with a 2,000-character `skillBodyMaxLength` and
`skillResourceManifest` (the cut body, its outline and the file list) plus
the file read through the tool's `path` (cut at 2,000 characters too, and
whole, as a configuration without the cap reads it).
Characters of the tool's text, as the model sees it, and of the file. Every
bundle file but `SKILL.md` and licences counts, of the skills the model
may load. Needs a built skill-host
(default target/release/skill-host).

    python3 bench/reads/files.py [SKILL_HOST]
"""

import json
import pathlib
import statistics
import subprocess
import sys
import tempfile

HOST = sys.argv[1] if len(sys.argv) > 1 else "target/release/skill-host"
DIRS = ["tests/fixtures/corpus/anthropic-skills", "tests/fixtures/corpus/dsh-agents-skills"]
ROOTS = [arg for path in DIRS for arg in ("--skills-dir", path)]
ON_DEMAND = {"skillReads": True, "skillBodyMaxLength": 2000, "skillResourceManifest": 20}
# Only the corpus: no project or user skills of this machine.
EMPTY = tempfile.mkdtemp()
ENV = {"PATH": "/usr/bin:/bin", "DSH_HOME": EMPTY, "DSH_AGENTS_HOME": EMPTY, "HOME": EMPTY}


def run(config: dict, *args: str) -> str:
    """The tool's text for `args` under `config`."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(config, file)
    command = [HOST, "--config", file.name, "load", *args, "--cwd", EMPTY, *ROOTS]
    done = subprocess.run(command, capture_output=True, text=True, env=ENV)
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def main() -> None:
    command = [HOST, "skills", "--json", "--cwd", EMPTY, *ROOTS]
    listing = json.loads(subprocess.run(command, capture_output=True, text=True, env=ENV).stdout)
    rows = []
    for skill in listing["skills"]:
        folder = pathlib.Path(skill["path"]).parent
        if pathlib.Path(skill["path"]).name != "SKILL.md" or not skill["invocation"]["modelInvocable"]:
            continue
        files = sorted(
            str(path.relative_to(folder))
            for path in folder.rglob("*")
            if path.is_file() and path.name != "SKILL.md" and not path.name.startswith("LICENSE")
        )
        if not files:
            continue
        whole = run({}, skill["name"])
        cut = run(ON_DEMAND, skill["name"])
        for relative in files:
            text = (folder / relative).read_text()
            read = run(ON_DEMAND, skill["name"], "--path", relative)
            # The whole file, as a configuration without the cap reads it.
            full = run({"skillReads": True}, skill["name"], "--path", relative)
            rows.append((skill["name"], relative, len(whole) + len(text), len(cut), len(read), len(full)))
    print(
        "| skill | file | whole load + file | cut load, outline, manifest | file through `path`, cut "
        "| together | file through `path`, whole | together |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, relative, whole, cut, read, full in rows:
        print(f"| {name} | {relative} | {whole:,} | {cut:,} | {read:,} | {cut + read:,} | {full:,} | {cut + full:,} |")
    wholes = [row[2] for row in rows]
    reads = [row[3] + row[4] for row in rows]
    fulls = [row[3] + row[5] for row in rows]
    median = statistics.median
    print(
        f"| **{len(rows)} files, median** | | {median(wholes):,.0f} | | | {median(reads):,.0f} | | {median(fulls):,.0f} |"
    )
    print(f"| **total** | | {sum(wholes):,} | | | {sum(reads):,} | | {sum(fulls):,} |")


if __name__ == "__main__":
    main()

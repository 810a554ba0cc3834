"""skill-host's `skills --json` and `load --json` for a tree, and the same
documents made from this host's LocalProvider, so the tests compare the two
hosts and not this host with itself."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from typing import Any

from dsh_skill import LocalProvider, LocalRoots
from dsh_skill.registry import Candidate, SkillRegistry
from helpers import REPO, skill_host

#: The compiled component cache skill-host uses in these tests (its default
#: lies under HOME, which the tests replace).
CACHE = str(REPO / "target" / "python-host" / "skill-host-cache")


class Roots:
    """The roots of one comparison: the environment and the command line's folders."""

    def __init__(self, env: dict[str, str], custom: list[str] | None = None, bundled: str | None = None) -> None:
        self.env = env
        self.custom = custom or []
        self.bundled = bundled

    def arguments(self) -> list[str]:
        given = [arg for folder in self.custom for arg in ("--skills-dir", folder)]
        return given + (["--bundled-dir", self.bundled] if self.bundled else [])

    def provider(self) -> LocalProvider:
        roots = LocalRoots.from_env(self.env)
        roots.custom, roots.bundled = list(self.custom), self.bundled
        return LocalProvider(roots)


def run_skill_host(roots: Roots, *arguments: str) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin"), "SKILL_HOST_CACHE_DIR": CACHE, **roots.env}
    return subprocess.run([str(skill_host()), *arguments, *roots.arguments()], capture_output=True, env=env)


def rust_skills(roots: Roots, cwd: str) -> tuple[dict[str, Any], list[str]]:
    """`skill-host skills --json` and its registry warnings (not the command line's own)."""
    done = run_skill_host(roots, "skills", "--json", "--cwd", cwd)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.decode().splitlines() if "is not a directory; no skills come" not in line]
    return json.loads(done.stdout), warnings


def shown(path: str | None) -> str | None:
    """A path as Rust's ``display()`` shows it (invalid UTF-8 as U+FFFD)."""
    return None if path is None else os.fsencode(path).decode("utf-8", "replace")


def _skill(c: Candidate) -> dict[str, Any]:
    return {
        "name": c.name, "description": c.description, "source": c.source, "rank": c.rank, "provider": c.provider,
        "path": shown(c.path),
        "invocation": {"modelInvocable": c.invocation.model_invocable, "userInvocable": c.invocation.user_invocable},
    }


def python_skills(roots: Roots, cwd: str) -> tuple[dict[str, Any], list[str]]:
    """The same document from this host's provider (winners by rank, then
    listing order; the rest shadowed), and the registry's warnings."""
    provider = roots.provider()
    listing = provider.list(cwd)
    ranked = sorted(enumerate(listing.candidates), key=lambda entry: (entry[1].rank, entry[0]))
    winners: dict[str, Candidate] = {}
    shadowed = []
    for _, candidate in ranked:
        winner = winners.get(candidate.name)
        if winner is None:
            winners[candidate.name] = candidate
            continue
        shadowed.append({"name": candidate.name, "source": candidate.source, "path": shown(candidate.path),
                         "by": {"source": winner.source, "path": shown(winner.path)}})
    document = {
        "skills": [_skill(winners[name]) for name in sorted(winners)],
        "shadowed": shadowed,
        "skipped": [{"path": shown(s.path), "reason": s.reason} for s in listing.skipped],
        "complete": listing.complete,
    }
    registry = SkillRegistry()
    registry.register_provider(provider)
    return document, [f"warning: {w}" for w in registry.snapshot(cwd).warnings]


def rust_load(roots: Roots, cwd: str, name: str) -> dict[str, Any]:
    """What `skill-host load NAME --json` returns, with the digest of its content."""
    done = run_skill_host(roots, "load", name, "--json", "--cwd", cwd)
    loaded = json.loads(done.stdout)["ok"]
    loaded["bodyDigest"] = "sha256:" + hashlib.sha256(loaded["content"].encode("utf-8")).hexdigest()
    return loaded


def python_load(roots: Roots, cwd: str, name: str) -> dict[str, Any]:
    """The same fields from this host's provider: what it listed, then loaded."""
    provider = roots.provider()
    candidate = next(c for c in sorted(provider.list(cwd).candidates, key=lambda c: c.rank) if c.name == name)
    definition = provider.load(cwd, candidate)
    assert definition is not None
    summary = definition.summary
    loaded: dict[str, Any] = {"name": summary.name, "provider": summary.provider}
    if summary.when_to_use is not None:
        loaded["whenToUse"] = summary.when_to_use
    if summary.resource_base is not None:
        loaded["resourceBase"] = summary.resource_base.to_json()
    loaded["content"] = definition.content
    assert candidate.body_digest == summary.body_digest
    loaded["bodyDigest"] = summary.body_digest
    return loaded

"""Paths and fixtures shared by the tests.

The repository is found from this file; the test plugins (the hostile
plugin, the hostile files plugin and the 0.1.0 plugin, built by
tests/build.rs) from $DSH_SKILL_HOSTILE_PLUGIN,
$DSH_SKILL_HOSTILE_FILES_PLUGIN and $DSH_SKILL_V0_1_PLUGIN, else the newest
under target/. With
$DSH_SKILL_REQUIRE_FIXTURES=1 (scripts/test sets it) a missing one fails
the tests instead of skipping them."""

from __future__ import annotations

import os
import unittest
from pathlib import Path

REPO = Path(os.environ.get("DSH_SKILL_REPO", Path(__file__).resolve().parents[3]))
SCENARIOS = REPO / "tests" / "scenarios"


def _newest(name: str) -> Path | None:
    found = sorted(REPO.glob(f"target/*/build/end-to-end-*/out/{name}"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def fixture(variable: str, name: str) -> bytes:
    """A test plugin's bytes, or a skip (a failure when fixtures are required)."""
    given = os.environ.get(variable)
    path = Path(given) if given else _newest(name)
    if path is None or not path.is_file():
        message = f"no {name}: set ${variable}, or build the end-to-end tests (cargo test -p end-to-end --no-run)"
        if os.environ.get("DSH_SKILL_REQUIRE_FIXTURES") == "1":
            raise AssertionError(message)
        raise unittest.SkipTest(message)
    return path.read_bytes()


def hostile() -> bytes:
    return fixture("DSH_SKILL_HOSTILE_PLUGIN", "hostile_plugin.wasm")


def hostile_files() -> bytes:
    return fixture("DSH_SKILL_HOSTILE_FILES_PLUGIN", "hostile_files_plugin.wasm")


def plugin_v0_1() -> bytes:
    return fixture("DSH_SKILL_V0_1_PLUGIN", "plugin_v0_1.wasm")


def scenario_files() -> list[Path]:
    return sorted(p for p in SCENARIOS.glob("*.json") if not p.name.endswith(".expected.json"))


def skill_host() -> Path:
    """The skill-host binary: $SKILL_HOST, else target/debug/skill-host; a
    skip when there is none (a failure when fixtures are required)."""
    path = Path(os.environ.get("SKILL_HOST") or REPO / "target" / "debug" / "skill-host")
    if not path.is_file():
        message = f"no skill-host at {path}: set $SKILL_HOST, or cargo build -p skill-host"
        if os.environ.get("DSH_SKILL_REQUIRE_FIXTURES") == "1":
            raise AssertionError(message)
        raise unittest.SkipTest(message)
    return path

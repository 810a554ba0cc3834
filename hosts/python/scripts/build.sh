#!/usr/bin/env bash
# Builds the Python host's wheel with the component inside, in one command:
#   bash hosts/python/scripts/build.sh [OUT_DIR]
# The component is the one skill-host carries (`skill-host component`), so
# this host runs byte for byte the same .wasm as the others. $SKILL_HOST names
# the binary; else target/debug/skill-host is built with cargo. The wheel
# lands in OUT_DIR (default: target/python-host/dist). Needs Python 3.10+
# with venv; the build backend (setuptools) is installed into a build venv
# under target/ from the package index pip is configured for.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/target/python-host/dist}"
skill_host="${SKILL_HOST:-$root/target/debug/skill-host}"
if [ -z "${SKILL_HOST:-}" ]; then
  (cd "$root" && cargo build --quiet -p skill-host)
fi
"$skill_host" component --output "$here/src/dsh_skill/plugin.wasm"

build_venv="$root/target/python-host/build-venv"
if [ ! -x "$build_venv/bin/python" ]; then
  python3 -m venv "$build_venv" || { apt-get update -qq && apt-get install -y -qq python3-venv && python3 -m venv "$build_venv"; }
fi
"$build_venv/bin/pip" install --quiet --disable-pip-version-check 'setuptools>=68' wheel
rm -rf "$here/build" "$here/src/dsh_skill.egg-info"
mkdir -p "$out"
"$build_venv/bin/pip" wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation --wheel-dir "$out" "$here"
rm -rf "$here/build" "$here/src/dsh_skill.egg-info"
ls "$out"/dsh_skill-*.whl

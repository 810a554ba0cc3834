#!/usr/bin/env bash
# Builds the plugin with cargo-component instead of the plain
# `cargo build --target wasm32-wasip2` that host-runner/build.rs runs, and
# checks that the result is the same contract: a component whose `dsh:skill`
# imports and exports are those of the embedded one (printed by jco, as
# `wasm-tools component wit` prints them), and that both hosts run it to the
# expected output of every scenario (wasmtime type-checks every import and
# export of the `skill-plugin` world when it links the component).
#
# Needs: cargo-component 0.21 (`cargo install --locked cargo-component`,
# about 5 minutes; not installed by .ci/run), the wasm32-wasip1 target
# (cargo-component builds for it and adapts WASI preview 1 to preview 2;
# `rustup target add wasm32-wasip1`), a built `skill-host`
# (`cargo build -p skill-host`) and the Node host's packages
# (`npm install` in hosts/node).
#
# Usage: scripts/build-with-cargo-component.sh [OUTPUT.wasm]
set -euo pipefail
cd "$(dirname "$0")/.."

output=${1:-target/cargo-component/skill_plugin.wasm}
# Its own target directory: the workspace's is locked by whatever else builds.
target_dir=target/cargo-component
skill_host=${SKILL_HOST:-target/debug/skill-host}

if ! cargo component --version >/dev/null 2>&1; then
    echo "cargo-component is not installed: cargo install --locked cargo-component" >&2
    exit 1
fi
if ! rustup target list --installed | grep -qx wasm32-wasip1; then
    echo "cargo-component builds for wasm32-wasip1: rustup target add wasm32-wasip1" >&2
    exit 1
fi
if [ ! -x "$skill_host" ]; then
    echo "$skill_host is missing: cargo build -p skill-host (or set SKILL_HOST)" >&2
    exit 1
fi
if [ ! -d hosts/node/node_modules/@bytecodealliance/jco ]; then
    echo "hosts/node has no packages: (cd hosts/node && npm install --no-audit --no-fund)" >&2
    exit 1
fi

echo "== $(cargo component --version): building skill-plugin" >&2
cargo component build --package skill-plugin --release --target-dir "$target_dir"
built="$target_dir/wasm32-wasip1/release/skill_plugin.wasm"
mkdir -p "$(dirname "$output")"
cp "$built" "$output"
output=$(realpath "$output")
echo "== built $output ($(wc -c <"$output") bytes)" >&2

embedded=$(mktemp --suffix=.wasm)
trap 'rm -f "$embedded"' EXIT
"$skill_host" component --output "$embedded"

# The world's dsh:skill imports and exports, as jco prints them (WASI imports
# differ by design: the preview 1 adapter imports more of WASI than std on
# wasip2 does, and the host grants none of it either way).
world() {
    (cd hosts/node && node --input-type=module -e '
        import { componentWit } from "@bytecodealliance/jco";
        import { readFileSync } from "node:fs";
        const wit = await componentWit(readFileSync(process.argv[1]));
        for (const line of wit.split("\n")) if (/^\s*(import|export) dsh:skill\//.test(line)) console.log(line.trim());
    ' "$1")
}
if ! diff <(world "$output") <(world "$embedded"); then
    echo "== FAIL: the cargo-component build declares another world than the embedded plugin" >&2
    exit 1
fi
echo "== same world:" >&2
world "$output" | sed 's/^/   /' >&2

# Every scenario, run on the cargo-component build, gives the expected
# output in skill-host, and its stored trace replays in the Node host.
actual=$(mktemp)
trap 'rm -f "$embedded" "$actual"' EXIT
failed=0
for scenario in tests/scenarios/*.json; do
    case "$scenario" in *.expected.json) continue ;; esac
    "$skill_host" --plugin "$output" replay "$scenario" >"$actual"
    if ! node -e '
    const { readFileSync } = require("node:fs");
    const [actual, expected] = process.argv.slice(1).map((file) => JSON.parse(readFileSync(file, "utf8")));
    process.exit(require("node:util").isDeepStrictEqual(actual, expected) ? 0 : 1);
    ' "$actual" "${scenario%.json}.expected.json"; then
        echo "== FAIL: $scenario in skill-host" >&2
        failed=1
    fi
    trace="tests/traces/scenarios/$(basename "${scenario%.json}").trace.json"
    if ! mismatches=$(node hosts/node/trace.mjs "$trace" --plugin "$output") || [ -n "$mismatches" ]; then
        echo "== FAIL: $trace in the Node host: $mismatches" >&2
        failed=1
    fi
done
if [ "$failed" -ne 0 ]; then
    exit 1
fi
echo "== every scenario replays to its expected output on the cargo-component build in skill-host, and its trace in the Node host" >&2

#!/usr/bin/env node
// The installable package, with the plugin component inside, so that a
// DeepSeek Harness project installs it with one command and no Rust:
//
//   npm run pack [-- NPM-PACK-OPTIONS]   # writes plugin.wasm and transpiled/, `npm pack`s, removes both
//   npm run component                    # only writes plugin.wasm and transpiled/
//   node scripts/pack.mjs --check        # the `prepack` script
//
// plugin.wasm is the component built into skill-host, written out by
// `skill-host component --output plugin.wasm`; skill-host is found as
// src/component.mjs finds it: `$SKILL_HOST`, else the newer of the
// repository's target/{debug,release}/skill-host, else `skill-host` on PATH.
// transpiled/ is plugin.wasm translated to JavaScript by jco, so that the
// installed package needs neither jco nor a cache (src/component.mjs
// `writePackagedTranslation`). `npm run pack` removes both again once
// packed: left beside package.json, they would take precedence over a
// rebuilt skill-host in this checkout (dsh/index.mjs `componentBytes`) and go
// stale. `--check` fails unless plugin.wasm is there, is a component and has
// its translation: plain `npm pack` runs it first, so no tarball is ever
// made without them. Options after `--` go to `npm pack`
// (`--pack-destination DIR`, `--json`).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { PACKAGED_TRANSLATION, writeEmbeddedComponent, writePackagedTranslation } from '../src/component.mjs';

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPOSITORY = path.resolve(PACKAGE, '..', '..');
const COMPONENT = path.join(PACKAGE, 'plugin.wasm');

/** A component's preamble: `\0asm`, then version 0x0d and layer 1 (a core module has layer 0). */
const COMPONENT_PREAMBLE = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]);

/** Why plugin.wasm cannot be packed, or null when it can. */
function problem() {
  if (!existsSync(COMPONENT)) return `${COMPONENT} is missing`;
  const bytes = readFileSync(COMPONENT);
  if (bytes.length < 8 || !bytes.subarray(0, 8).equals(COMPONENT_PREAMBLE)) {
    return `${COMPONENT} is not a WebAssembly component`;
  }
  const hash = createHash('sha256').update(bytes).digest('hex');
  const translations = existsSync(PACKAGED_TRANSLATION) ? readdirSync(PACKAGED_TRANSLATION) : [];
  if (!translations.some((name) => name.startsWith(`${hash}-`) && existsSync(path.join(PACKAGED_TRANSLATION, name, 'files.json')))) {
    return `${PACKAGED_TRANSLATION} holds no translation of plugin.wasm`;
  }
  return null;
}

function check() {
  // `npm run pack` runs `prepack` first, as the pre-script of a script named
  // `pack`: there plugin.wasm is about to be written, and the `npm pack` that
  // follows runs this check again.
  if (['run', 'run-script'].includes(process.env.npm_command) && process.env.npm_lifecycle_event === 'prepack') return;
  const found = problem();
  if (found === null) return;
  process.stderr.write(
    `dsh-tool-skill-wasm: ${found}; the package would install without its plugin component.\n` +
      'Make the package with `npm run pack` in hosts/node: it writes plugin.wasm with `skill-host component --output plugin.wasm`, then packs.\n',
  );
  process.exit(1);
}

/** Writes plugin.wasm (through a temporary file, so a failure leaves no half-written component). */
async function component() {
  const staging = `${COMPONENT}.${process.pid}.tmp`;
  try {
    writeEmbeddedComponent(REPOSITORY, staging);
    renameSync(staging, COMPONENT);
    // Its translation to JavaScript, so the installed package needs no jco.
    await writePackagedTranslation(readFileSync(COMPONENT));
  } catch (error) {
    rmSync(staging, { force: true });
    process.stderr.write(`dsh-tool-skill-wasm: cannot write plugin.wasm and its translation: ${error.message}\n`);
    process.exit(1);
  }
  const found = problem();
  if (found !== null) {
    process.stderr.write(`dsh-tool-skill-wasm: ${found}\n`);
    process.exit(1);
  }
  process.stderr.write(`wrote ${COMPONENT} (${readFileSync(COMPONENT).length} bytes)\n`);
}

/** `npm pack` with `args` (the npm that runs this script, else `npm` on PATH): its exit code. */
function pack(args) {
  const npm = process.env.npm_execpath;
  const [program, prefix] = npm && existsSync(npm) ? [process.execPath, [npm]] : ['npm', []];
  try {
    execFileSync(program, [...prefix, 'pack', ...args], { cwd: PACKAGE, stdio: 'inherit' });
    return 0;
  } catch (error) {
    if (typeof error.status !== 'number') process.stderr.write(`dsh-tool-skill-wasm: cannot run npm pack: ${error.message}\n`);
    return typeof error.status === 'number' && error.status !== 0 ? error.status : 1;
  }
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === '--check') check();
else if (mode === '--component') await component();
else {
  const args = mode === undefined ? [] : [mode, ...rest];
  await component();
  const code = pack(args);
  rmSync(COMPONENT, { force: true });
  rmSync(PACKAGED_TRANSLATION, { recursive: true, force: true });
  process.exitCode = code;
}

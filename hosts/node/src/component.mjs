// The plugin component as JavaScript: jco transpiles the `.wasm` once into an
// ES module plus core modules, cached on disk under the component's SHA-256
// (and jco's version), so the next run of the same component starts at once.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The default cache: `hosts/node/.cache` (git-ignored). */
export const DEFAULT_CACHE_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '.cache');

/** Bumped whenever `patchStringLifting` changes what is cached. */
const PATCH_LEVEL = 'p1';

/** The name the transpiled module gets; its file is `<name>.js`. */
const NAME = 'plugin';

function jcoVersion() {
  const require = createRequire(import.meta.url);
  // The package's exports hide package.json: find it beside the entry point.
  const entry = require.resolve('@bytecodealliance/jco');
  return JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')).version;
}

/**
 * Transpiles `component` (bytes) unless the cache already holds it. Returns
 * the module's file URL and the core modules' bytes by file name.
 */
export async function transpiled(component, cacheDir = DEFAULT_CACHE_DIR) {
  const hash = createHash('sha256').update(component).digest('hex');
  const dir = path.join(cacheDir, `${hash}-jco${jcoVersion()}-${PATCH_LEVEL}`);
  const manifest = path.join(dir, 'files.json');
  if (!existsSync(manifest)) {
    const { transpile } = await import('@bytecodealliance/jco');
    // `instantiation: 'sync'`: the module exports `instantiate(getCoreModule,
    // imports)` and imports nothing itself, so this host supplies every
    // import (WASI included) and compiles the core modules.
    const { files } = await transpile(component, {
      name: NAME,
      instantiation: 'sync',
      noTypescript: true,
      quiet: true,
    });
    patchStringLifting(files);
    const staging = `${dir}.staging-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    const written = [];
    for (const [name, bytes] of Object.entries(files)) {
      if (name.endsWith('.d.ts')) continue;
      const target = path.join(staging, name);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, bytes);
      written.push(name);
    }
    writeFileSync(path.join(staging, 'files.json'), JSON.stringify(written));
    try {
      renameSync(staging, dir);
    } catch (error) {
      // Another process cached the same component first: use its copy.
      rmSync(staging, { recursive: true, force: true });
      if (!existsSync(manifest)) throw error;
    }
  }
  const names = JSON.parse(readFileSync(manifest, 'utf8'));
  const core = {};
  for (const name of names.filter((file) => file.endsWith('.wasm'))) {
    core[name] = readFileSync(path.join(dir, name));
  }
  return { moduleUrl: pathToFileURL(path.join(dir, `${NAME}.js`)).href, core, hash };
}

// jco lifts the guest's strings with `new TextDecoder()`, whose defaults drop
// a leading U+FEFF (ignoreBOM: false) and replace invalid UTF-8 with U+FFFD.
// The canonical ABI keeps every character and refuses invalid UTF-8 (a trap
// in wasmtime): a message starting with U+FEFF came back changed, and the
// host refused the decision. Decode as the ABI says.
const DEFAULT_DECODER = 'const TEXT_DECODER_UTF8 = new TextDecoder();';
const ABI_DECODER = "const TEXT_DECODER_UTF8 = new TextDecoder('utf-8', { ignoreBOM: true, fatal: true });";

function patchStringLifting(files) {
  const name = `${NAME}.js`;
  const source = Buffer.from(files[name]).toString('utf8');
  if (!source.includes(DEFAULT_DECODER)) {
    throw new Error(`jco's output changed: ${name} has no \`${DEFAULT_DECODER}\` to fix (see component.mjs)`);
  }
  files[name] = Buffer.from(source.replaceAll(DEFAULT_DECODER, ABI_DECODER));
}

/**
 * The component built into skill-host, written out by `skill-host component`:
 * the binary is `$SKILL_HOST`, else the newer of `repository`'s
 * target/debug and target/release builds, else `skill-host` on PATH.
 */
export function embeddedComponent(repository) {
  const builds = ['debug', 'release']
    .map((profile) => path.join(repository, 'target', profile, 'skill-host'))
    .filter((candidate) => existsSync(candidate))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  const chosen = process.env.SKILL_HOST && existsSync(process.env.SKILL_HOST) ? process.env.SKILL_HOST : builds[0];
  const binary = chosen ?? 'skill-host';
  const dir = mkdtempSync(path.join(tmpdir(), 'skill-host-node-'));
  try {
    const output = path.join(dir, 'plugin.wasm');
    execFileSync(binary, ['component', '--output', output], { stdio: ['ignore', 'ignore', 'pipe'] });
    return readFileSync(output);
  } catch (error) {
    throw new Error(
      `no --plugin given, and \`${binary} component\` failed (${error.message.split('\n')[0]}): build skill-host or pass --plugin FILE.wasm`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

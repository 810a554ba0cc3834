// Where jco's transpiled component is cached (src/component.mjs): a per-user
// folder, never the package's own folder, and memory when no folder can be
// written. Each case runs the drop-in from a copy of the package in a child
// process, so the environment and the one warning are the child's own.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { CACHE_ENV, defaultCacheDir, embeddedComponent } from '../src/component.mjs';

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPOSITORY = path.resolve(PACKAGE, '..', '..');
const WARNING = 'cannot write the component cache';

test('the default cache folder: DSH_TOOL_SKILL_CACHE, else an absolute XDG_CACHE_HOME, else ~/.cache', () => {
  assert.equal(defaultCacheDir({ [CACHE_ENV]: '/c/mine', XDG_CACHE_HOME: '/x' }), '/c/mine');
  assert.equal(defaultCacheDir({ XDG_CACHE_HOME: '/x' }), '/x/dsh-tool-skill-wasm');
  // A relative XDG_CACHE_HOME is ignored, as the XDG specification says.
  assert.equal(defaultCacheDir({ XDG_CACHE_HOME: 'relative' }), path.join(homedir(), '.cache', 'dsh-tool-skill-wasm'));
  assert.equal(defaultCacheDir({}), path.join(homedir(), '.cache', 'dsh-tool-skill-wasm'));
});

/** Every file under `dir`, relative, sorted. */
function listing(dir) {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}

/**
 * A copy of the package as npm installs it (dsh/, src/, package.json,
 * plugin.wasm; its dependencies through a node_modules link), made
 * read-only, and a script that runs two harnesses with the drop-in from it.
 */
function installedCopy(root) {
  const pkg = path.join(root, 'node_modules', 'dsh-tool-skill-wasm');
  mkdirSync(pkg, { recursive: true });
  for (const entry of ['dsh', 'src', 'package.json']) cpSync(path.join(PACKAGE, entry), path.join(pkg, entry), { recursive: true });
  writeFileSync(path.join(pkg, 'plugin.wasm'), embeddedComponent(REPOSITORY));
  symlinkSync(path.join(PACKAGE, 'node_modules'), path.join(pkg, 'node_modules'));
  const script = path.join(root, 'run.mjs');
  writeFileSync(
    script,
    `import * as toolSkill from ${JSON.stringify(pathToFileURL(path.join(pkg, 'dsh', 'index.mjs')).href)};
import { createHarness } from ${JSON.stringify(pathToFileURL(path.join(PACKAGE, 'dsh-harness', 'harness.mjs')).href)};
const skills = [{ name: 'cache-demo', description: 'Shows the cache.', content: 'The demo body.' }];
const seen = [];
// Two plugins in one process: still one warning.
for (let run = 0; run < 2; run++) {
  const harness = await createHarness({ plugin: toolSkill, skills });
  const step = await harness.preStep({ messages: ['hello'] });
  const catalog = step.messages.find((message) => message.source.kind === 'skill-catalog');
  const tool = await harness.invoke({ name: 'cache-demo' });
  seen.push({ catalog: catalog.source.entries.map((entry) => entry.name), tool: tool.output ?? tool });
}
process.stdout.write(JSON.stringify(seen));
process.exit(0);
`,
  );
  chmodSync(pkg, 0o555);
  for (const dir of ['dsh', 'src']) chmodSync(path.join(pkg, dir), 0o555);
  return { pkg, script };
}

/** Runs `script` (bounded) with `env` added to this environment less the cache variables: what it printed. */
async function run(script, env) {
  const base = { ...process.env };
  for (const name of [CACHE_ENV, 'XDG_CACHE_HOME']) delete base[name];
  const child = spawn(process.execPath, [script], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  assert.equal(code, 0, `the drop-in failed:\n${stderr}`);
  return { seen: JSON.parse(stdout), stderr };
}

function loadedBothTimes(seen) {
  assert.equal(seen.length, 2);
  for (const { catalog, tool } of seen) {
    assert.deepEqual(catalog, ['cache-demo']);
    assert.match(JSON.stringify(tool), /The demo body\./);
  }
}

test('a read-only package and no writable cache folder: the drop-in runs from memory with one warning', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'dsh-cache-'));
  try {
    const { pkg, script } = installedCopy(root);
    const before = listing(pkg);
    // A regular file where the cache's parents should be: no folder can be
    // made below it, whoever runs the test (root ignores permission bits).
    const blocked = path.join(root, 'not-a-folder');
    writeFileSync(blocked, '');
    const { seen, stderr } = await run(script, {
      HOME: path.join(blocked, 'home'),
      XDG_CACHE_HOME: path.join(blocked, 'cache'),
    });
    loadedBothTimes(seen);
    const warnings = stderr.split('\n').filter((line) => line.includes(WARNING));
    assert.equal(warnings.length, 1, stderr);
    assert.ok(warnings[0].includes(path.join(blocked, 'cache', 'dsh-tool-skill-wasm')), warnings[0]);
    assert.match(warnings[0], /DSH_TOOL_SKILL_CACHE/);
    assert.deepEqual(listing(pkg), before, 'nothing was written into the package');
  } finally {
    chmodTree(root);
    rmSync(root, { recursive: true, force: true });
  }
});

test('the cache is $XDG_CACHE_HOME/dsh-tool-skill-wasm, or $DSH_TOOL_SKILL_CACHE, and never the package', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'dsh-cache-'));
  try {
    const { pkg, script } = installedCopy(root);
    const before = listing(pkg);
    const xdg = path.join(root, 'xdg');
    const first = await run(script, { HOME: path.join(root, 'home'), XDG_CACHE_HOME: xdg });
    loadedBothTimes(first.seen);
    assert.equal(first.stderr.includes(WARNING), false, first.stderr);
    const [entry] = readdirSync(path.join(xdg, 'dsh-tool-skill-wasm'));
    assert.ok(existsSync(path.join(xdg, 'dsh-tool-skill-wasm', entry, 'files.json')), entry);
    const mine = path.join(root, 'mine');
    const second = await run(script, { HOME: path.join(root, 'home'), XDG_CACHE_HOME: xdg, [CACHE_ENV]: mine });
    loadedBothTimes(second.seen);
    assert.deepEqual(readdirSync(mine), [entry]);
    assert.equal(existsSync(path.join(root, 'home', '.cache')), false);
    assert.deepEqual(listing(pkg), before, 'nothing was written into the package');
  } finally {
    chmodTree(root);
    rmSync(root, { recursive: true, force: true });
  }
});

/** Makes the read-only copy removable again. */
function chmodTree(root) {
  const pkg = path.join(root, 'node_modules', 'dsh-tool-skill-wasm');
  if (!existsSync(pkg)) return;
  chmodSync(pkg, 0o755);
  for (const dir of ['dsh', 'src']) if (existsSync(path.join(pkg, dir))) chmodSync(path.join(pkg, dir), 0o755);
}

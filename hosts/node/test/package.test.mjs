// The npm package a DeepSeek Harness project installs: publishable, its
// version tied to the component's WIT package, and never packed without
// its component (scripts/pack.mjs).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPOSITORY = path.resolve(PACKAGE, '..', '..');
const manifest = JSON.parse(readFileSync(path.join(PACKAGE, 'package.json'), 'utf8'));

test("the package's version is the WIT package's version (wit/world.wit)", () => {
  const wit = readFileSync(path.join(REPOSITORY, 'wit', 'world.wit'), 'utf8');
  const declared = wit.match(/^package dsh:skill@([0-9A-Za-z.+-]+);/m);
  assert.ok(declared, 'wit/world.wit declares no `package dsh:skill@VERSION;`');
  assert.equal(manifest.version, declared[1], 'bump package.json with the WIT package (or the WIT package with it)');
});

test('the package is publishable and says what it needs', () => {
  assert.equal(manifest.private, undefined);
  assert.equal(manifest.license, 'MIT OR Apache-2.0');
  assert.equal(manifest.repository.directory, 'hosts/node');
  // The harness's packages (dsh-agent, dsh-agent-loop) use Promise.withResolvers.
  assert.equal(manifest.engines.node, '>=22');
  assert.ok(manifest.files.includes('plugin.wasm'));
  assert.ok(manifest.files.includes('transpiled/'));
  // Its translation is packed: jco is needed only for another component, an optional peer.
  assert.equal(manifest.dependencies['@bytecodealliance/jco'], undefined);
  assert.equal(manifest.peerDependencies['@bytecodealliance/jco'], manifest.devDependencies['@bytecodealliance/jco']);
  assert.deepEqual(manifest.peerDependenciesMeta['@bytecodealliance/jco'], { optional: true });
  assert.equal(manifest.scripts.pack, 'node scripts/pack.mjs');
  assert.equal(manifest.scripts.prepack, 'node scripts/pack.mjs --check');
  // Published packages are pinned exactly; no lockfile names a registry.
  for (const [name, version] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })) {
    assert.match(version, /^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.]+)?$/, name);
  }
});

/** A copy of what `npm pack` needs (package.json, scripts/, src/) in a temporary folder. */
function copy() {
  const dir = mkdtempSync(path.join(tmpdir(), 'dsh-pack-'));
  for (const entry of ['package.json', 'scripts', 'src', 'dsh', 'README.md']) {
    cpSync(path.join(PACKAGE, entry), path.join(dir, entry), { recursive: true });
  }
  return dir;
}

function check(dir) {
  const env = { ...process.env };
  delete env.npm_command;
  delete env.npm_lifecycle_event;
  return spawnSync(process.execPath, [path.join(dir, 'scripts', 'pack.mjs'), '--check'], { env, encoding: 'utf8', timeout: 30_000 });
}

test('the prepack check refuses a package without plugin.wasm, or with a core module, and says to run `npm run pack`', () => {
  const dir = copy();
  try {
    let result = check(dir);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /plugin\.wasm is missing/);
    assert.match(result.stderr, /`npm run pack`/);
    writeFileSync(path.join(dir, 'plugin.wasm'), Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]));
    result = check(dir);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /not a WebAssembly component/);
    const component = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]);
    writeFileSync(path.join(dir, 'plugin.wasm'), component);
    result = check(dir);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /holds no translation of plugin\.wasm/);
    const translation = path.join(dir, 'transpiled', `${createHash('sha256').update(component).digest('hex')}-p1`);
    mkdirSync(translation, { recursive: true });
    writeFileSync(path.join(translation, 'files.json'), '[]');
    result = check(dir);
    assert.equal(result.status, 0, result.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('plain `npm pack` without plugin.wasm fails with the way to make it', () => {
  const dir = copy();
  try {
    const env = { ...process.env };
    for (const name of Object.keys(env)) if (name.startsWith('npm_')) delete env[name];
    const result = spawnSync('npm', ['pack', '--dry-run', '--ignore-scripts=false'], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
    assert.notEqual(result.status, 0, result.stdout);
    assert.match(result.stderr, /plugin\.wasm is missing/);
    assert.match(result.stderr, /`npm run pack`/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Loads the drop-in installed at `pkg` into a harness, in a process of its
 * own with `env`: prints `loaded`, or the error's message.
 */
function loadInstalled(root, pkg, env) {
  const script = path.join(root, 'run.mjs');
  writeFileSync(
    script,
    `import * as toolSkill from ${JSON.stringify(pathToFileURL(path.join(pkg, 'dsh', 'index.mjs')).href)};
import { createHarness } from ${JSON.stringify(pathToFileURL(path.join(PACKAGE, 'dsh-harness', 'harness.mjs')).href)};
try {
  await createHarness({ plugin: toolSkill });
  process.stdout.write('loaded');
} catch (error) {
  process.stdout.write(error.message);
}
process.exit(0);
`,
  );
  return spawnSync(process.execPath, [script], { env, encoding: 'utf8', timeout: 60_000 });
}

test('a package installed without its component fails to load naming DSH_TOOL_SKILL_COMPONENT and `npm run pack`', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'dsh-no-component-'));
  try {
    const pkg = path.join(root, 'node_modules', 'dsh-tool-skill-wasm');
    mkdirSync(pkg, { recursive: true });
    for (const entry of ['dsh', 'src', 'package.json']) cpSync(path.join(PACKAGE, entry), path.join(pkg, entry), { recursive: true });
    symlinkSync(path.join(PACKAGE, 'node_modules'), path.join(pkg, 'node_modules'));
    const env = { ...process.env, PATH: path.dirname(process.execPath) };
    delete env.SKILL_HOST;
    delete env.DSH_TOOL_SKILL_COMPONENT;
    const result = loadInstalled(root, pkg, env);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^dsh-tool-skill-wasm has no plugin component: this package was packed without its plugin\.wasm/);
    assert.match(result.stdout, /DSH_TOOL_SKILL_COMPONENT is not set/);
    assert.match(result.stdout, /`npm run pack`/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('another component, in a package installed without jco, fails to load naming the package to install', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'dsh-no-jco-'));
  try {
    const pkg = path.join(root, 'node_modules', 'dsh-tool-skill-wasm');
    mkdirSync(path.join(pkg, 'node_modules', '@bytecodealliance'), { recursive: true });
    for (const entry of ['dsh', 'src', 'package.json']) cpSync(path.join(PACKAGE, entry), path.join(pkg, entry), { recursive: true });
    // What an install gives it: its dependency and the harness's packages, no jco.
    const installed = path.join(PACKAGE, 'node_modules');
    symlinkSync(path.join(installed, '@bytecodealliance', 'preview2-shim'), path.join(pkg, 'node_modules', '@bytecodealliance', 'preview2-shim'));
    symlinkSync(path.join(installed, '@deepseek-ai'), path.join(pkg, 'node_modules', '@deepseek-ai'));
    const other = path.join(root, 'other.wasm');
    writeFileSync(other, Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]));
    const result = loadInstalled(root, pkg, { ...process.env, DSH_TOOL_SKILL_COMPONENT: other });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /not the plugin\.wasm the package was packed with/);
    assert.match(result.stdout, /`npm install @bytecodealliance\/jco@1\.35\.0`/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

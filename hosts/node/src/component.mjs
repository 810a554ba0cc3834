// The plugin component as JavaScript: jco transpiles the `.wasm` into an ES
// module plus core modules. The installed package carries that translation
// of its own plugin.wasm (`transpiled/`, written by `npm run pack`), so it
// needs neither jco nor a cache. Any other component is transpiled once and
// cached on disk under its SHA-256 (and jco's version), so the next run of
// it starts at once. That cache is a per-user folder (`defaultCacheDir`),
// never the package's own folder, which may be read-only inside
// node_modules; when the cache cannot be written, the transpiled module runs
// from memory (a `data:` URL: it imports nothing) and one warning says so.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The package's own translation of its plugin.wasm, by `npm run pack` (`writePackagedTranslation`). */
export const PACKAGED_TRANSLATION = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'transpiled');

/** The version of jco this package pins (package.json), for the error that asks for it. */
const JCO = '@bytecodealliance/jco';

/** The environment variable that names the cache folder. */
export const CACHE_ENV = 'DSH_TOOL_SKILL_CACHE';

/** The cache folder's name under the user's cache root. */
const CACHE_NAME = 'dsh-tool-skill-wasm';

/**
 * The default cache folder: `$DSH_TOOL_SKILL_CACHE`, else
 * `$XDG_CACHE_HOME/dsh-tool-skill-wasm` (an absolute `XDG_CACHE_HOME` only,
 * as the XDG base directory specification says), else
 * `~/.cache/dsh-tool-skill-wasm`. Read when called, not when loaded.
 */
export function defaultCacheDir(env = process.env) {
  if (env[CACHE_ENV]) return path.resolve(env[CACHE_ENV]);
  if (env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME)) return path.join(env.XDG_CACHE_HOME, CACHE_NAME);
  return path.join(homedir(), '.cache', CACHE_NAME);
}

/** Transpilations held in memory because no cache could be written, by key. */
const IN_MEMORY = new Map();

/** Whether the one warning about an unwritable cache has been printed. */
let warned = false;

/** Bumped whenever `patchStringLifting` changes what is cached. */
const PATCH_LEVEL = 'p1';

/** The name the transpiled module gets; its file is `<name>.js`. */
const NAME = 'plugin';

function jcoVersion() {
  const require = createRequire(import.meta.url);
  let entry;
  try {
    entry = require.resolve(JCO);
  } catch {
    const wanted = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).devDependencies?.[JCO];
    throw new Error(
      `this component is not the plugin.wasm the package was packed with, and translating it to JavaScript needs ${JCO}, which is not installed: \`npm install ${JCO}${wanted ? `@${wanted}` : ''}\``,
    );
  }
  // The package's exports hide package.json: find it beside the entry point.
  return JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')).version;
}

/** The translation of the component with SHA-256 `hash` in `root` (`<hash>-<patch level>/`). */
function translationDir(root, hash) {
  return path.join(root, `${hash}-${PATCH_LEVEL}`);
}

/**
 * Writes the translation of `component` (bytes) into `root` (the package's
 * `transpiled/`), where `transpiled` finds it without jco; returns its folder.
 */
export async function writePackagedTranslation(component, root = PACKAGED_TRANSLATION) {
  const dir = translationDir(root, createHash('sha256').update(component).digest('hex'));
  rmSync(root, { recursive: true, force: true });
  store(await transpile(component), dir, path.join(dir, 'files.json'));
  return dir;
}

/**
 * The package's own translation when `component` (bytes) is the plugin.wasm
 * it was packed with; else transpiles it unless the cache holds it. Returns
 * the module's URL (a file URL in the cache, or a `data:` URL when the cache
 * cannot be written) and the core modules' bytes by file name.
 * @param {string} [cacheDir] - the cache folder; `defaultCacheDir()` when absent.
 */
export async function transpiled(component, cacheDir = defaultCacheDir()) {
  const hash = createHash('sha256').update(component).digest('hex');
  const packaged = translationDir(PACKAGED_TRANSLATION, hash);
  if (existsSync(path.join(packaged, 'files.json'))) return fromDisk(packaged, path.join(packaged, 'files.json'), hash);
  const key = `${hash}-jco${jcoVersion()}-${PATCH_LEVEL}`;
  const dir = path.join(cacheDir, key);
  const manifest = path.join(dir, 'files.json');
  if (existsSync(manifest)) return fromDisk(dir, manifest, hash);
  const held = IN_MEMORY.get(key);
  if (held) return held;
  const files = await transpile(component);
  try {
    store(files, dir, manifest);
  } catch (error) {
    if (typeof error?.code !== 'string') throw error;
    // No cache can be written (a read-only home, a full disk): run from memory.
    if (!warned) {
      warned = true;
      process.emitWarning(
        `cannot write the component cache ${cacheDir} (${error.message}); the component runs from memory and is transpiled again in each process. Set ${CACHE_ENV} to a writable folder.`,
        { type: 'DshToolSkillWarning', code: 'DSH_TOOL_SKILL_CACHE_UNWRITABLE' },
      );
    }
    const loaded = fromMemory(files, hash);
    IN_MEMORY.set(key, loaded);
    return loaded;
  }
  return fromDisk(dir, manifest, hash);
}

/** jco's output for `component`, string lifting patched, without type declarations. */
async function transpile(component) {
  const { transpile: jco } = await import(JCO);
  // `instantiation: 'sync'`: the module exports `instantiate(getCoreModule,
  // imports)` and imports nothing itself, so this host supplies every
  // import (WASI included) and compiles the core modules.
  const { files } = await jco(component, {
    name: NAME,
    instantiation: 'sync',
    noTypescript: true,
    quiet: true,
  });
  patchStringLifting(files);
  return Object.fromEntries(Object.entries(files).filter(([name]) => !name.endsWith('.d.ts')));
}

/** Writes `files` into the cache as `dir`, atomically (a staging folder renamed). */
function store(files, dir, manifest) {
  // The cache folder first, so that an unwritable one is named in the error.
  mkdirSync(path.dirname(dir), { recursive: true });
  const staging = `${dir}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  try {
    for (const [name, bytes] of Object.entries(files)) {
      const target = path.join(staging, name);
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, bytes);
    }
    writeFileSync(path.join(staging, 'files.json'), JSON.stringify(Object.keys(files)));
    renameSync(staging, dir);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    // Another process cached the same component first: use its copy.
    if (!existsSync(manifest)) throw error;
  }
}

function fromDisk(dir, manifest, hash) {
  const names = JSON.parse(readFileSync(manifest, 'utf8'));
  const core = {};
  for (const name of names.filter((file) => file.endsWith('.wasm'))) {
    core[name] = readFileSync(path.join(dir, name));
  }
  return { moduleUrl: pathToFileURL(path.join(dir, `${NAME}.js`)).href, core, hash };
}

function fromMemory(files, hash) {
  const core = {};
  for (const [name, bytes] of Object.entries(files)) {
    if (name.endsWith('.wasm')) core[name] = Buffer.from(bytes);
  }
  const source = Buffer.from(files[`${NAME}.js`]).toString('base64');
  return { moduleUrl: `data:text/javascript;base64,${source}`, core, hash };
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
 * The skill-host binary to ask for the component: `$SKILL_HOST`, else the
 * newer of `repository`'s target/debug and target/release builds, else
 * `skill-host` on PATH.
 */
export function skillHostBinary(repository) {
  if (process.env.SKILL_HOST && existsSync(process.env.SKILL_HOST)) return process.env.SKILL_HOST;
  const builds = ['debug', 'release']
    .map((profile) => path.join(repository, 'target', profile, 'skill-host'))
    .filter((candidate) => existsSync(candidate))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return builds[0] ?? 'skill-host';
}

/** Runs `skill-host component --output output`; throws with the fix when it cannot. */
export function writeEmbeddedComponent(repository, output) {
  const binary = skillHostBinary(repository);
  try {
    execFileSync(binary, ['component', '--output', output], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const detail = error.code === 'ENOENT' ? 'not found' : (error.stderr?.toString().trim() || error.message.split('\n')[0]);
    throw new Error(
      `\`${binary} component\` failed (${detail}): build it with \`cargo build -p skill-host\` in the repository, or set SKILL_HOST to a skill-host binary`,
    );
  }
}

/**
 * The component built into skill-host (see `skillHostBinary`), written out
 * by `skill-host component`.
 */
export function embeddedComponent(repository) {
  const dir = mkdtempSync(path.join(tmpdir(), 'skill-host-node-'));
  try {
    const output = path.join(dir, 'plugin.wasm');
    writeEmbeddedComponent(repository, output);
    return readFileSync(output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// A skill's files on this machine, for the drop-in's `list-skill-files` and
// `read-skill-file` (docs/spec.md §3.15, the design every host follows):
// the files below a skill the harness's filesystem provider listed from a
// skill file on disk, the set skill-host's local provider and its MCP
// Skills extension serve (host-runner/src/providers/local/files.rs), found
// and read with what Node.js offers. A link is resolved here one segment at
// a time, as cap-std's RESOLVE_BENEATH resolves it (and the Python host);
// Node has no `openat2`, so the open itself is checked around instead of
// confined by the kernel: see hosts/node/README.md ("A skill's files") for
// what that holds and the race it leaves.

import { constants as fsConstants } from 'node:fs';
import { lstat, open as openFile, opendir, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';

import { isObject } from '../src/json.mjs';
import { isSkillFilePath, MAX_SKILL_FILE_READ_BYTES } from '../src/host-imports.mjs';

/** A bundle's skill file, at the top of its folder. */
export const SKILL_FILE = 'SKILL.md';
/** The most files one skill may have, its `SKILL.md` included (the walk's limit in skill-host). */
export const MAX_SKILL_FILES = 512;
/** The most bytes all of one skill's files may have together, 16 MiB. */
export const MAX_SKILL_BYTES = 16 * 1024 * 1024;
/** Nested folders followed below a skill's folder. */
export const MAX_DEPTH = 16;
/**
 * The most entries a walk looks at below a skill's folder (files, folders,
 * links, hidden ones; not the top `SKILL.md`): skill-host's bound, so a
 * folder of needless entries costs a bounded walk.
 */
export const MAX_WALK_ENTRIES = 16384;
/** Symbolic links followed in one resolution (Linux's `MAXSYMLINKS`, the Python host's bound). */
export const MAX_LINKS = 40;
/**
 * The name under which the harness's filesystem provider
 * (`@deepseek-ai/dsh-skill-filesystem`, its `providerName` default) lists
 * its skills; a registry provider's candidates must carry its name, and
 * the name `runtime` is reserved for runtime registrations.
 */
export const FILESYSTEM_PROVIDER = 'filesystem';

const missing = { tag: 'missing' };
const SKILL_FILE_BYTES = Buffer.from(SKILL_FILE);

/** A file name's bytes as UTF-8 text, or null when they are not (such a file is skipped, as skill-host skips it). */
function fileName(bytes) {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Whether `target` (a real path) is strictly beneath the real folder `root`. */
function beneath(root, target) {
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return target.startsWith(prefix) && target.length > prefix.length;
}

/** Two paths in byte order of their UTF-8 (as Rust sorts strings). */
function byteOrder(a, b) {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * Where the files of `skill` (a harness skill definition) are on this
 * machine, when the harness's filesystem provider listed it from a skill
 * file on disk (its provider `filesystem`, an absolute `skill.path` whose
 * folder is its directory resource base, as that provider writes both):
 * `{ kind: 'bundle', folder }` for a bundle, `<root>/<name>/SKILL.md`
 * (`skill.path` is the folder's `SKILL.md`, the resource base the folder),
 * `{ kind: 'flat', file }` for a flat `<root>/<name>.md` (its resource base
 * is the root, which holds other skills: only the file itself is served, as
 * `SKILL.md`); null for every other skill (a runtime skill, another
 * provider's, a URL or opaque resource base, one whose path and resource
 * base disagree), which serves no files whatever its resource base.
 */
export function skillFilesOf(skill) {
  if (!isObject(skill) || skill.provider !== FILESYSTEM_PROVIDER) return null;
  const base = skill.resourceBase;
  if (!isObject(base) || base.kind !== 'directory' || typeof base.path !== 'string' || !path.isAbsolute(base.path)) {
    return null;
  }
  if (typeof skill.path !== 'string' || !path.isAbsolute(skill.path)) return null;
  const folder = path.resolve(base.path);
  const file = path.resolve(skill.path);
  if (path.dirname(file) !== folder) return null;
  if (path.basename(file) === SKILL_FILE) return { kind: 'bundle', folder };
  if (file.endsWith('.md')) return { kind: 'flat', file };
  return null;
}

/**
 * Where the link at `relative` (a path the walk found below `root`, the
 * folder's real path) leads, resolved beneath `root` as cap-std's
 * RESOLVE_BENEATH resolves it: one segment at a time, each link's target
 * read (`readlink`) and resolved from the folder holding the link, `..`
 * taken from the folders already entered (never from the file system).
 * Resolves to the path it leads to, with no link on it, or null when it
 * leaves the folder (an absolute target, a `..` above the folder at any
 * point, even one that comes back down) or leads through more than
 * `MAX_LINKS` links or a file on the way; throws what `lstat` or
 * `readlink` throws.
 */
async function resolveBeneath(root, relative) {
  const held = [];
  const parts = relative.split('/');
  let links = 0;
  while (parts.length > 0) {
    const part = parts.shift();
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (held.length === 0) return null;
      held.pop();
      continue;
    }
    const at = path.join(root, ...held, part);
    const meta = await lstat(at);
    if (meta.isSymbolicLink()) {
      links += 1;
      if (links > MAX_LINKS) return null;
      const target = await readlink(at);
      if (target.startsWith('/') || path.isAbsolute(target)) return null;
      parts.unshift(...target.split('/'));
      continue;
    }
    if (parts.length === 0) return at;
    if (!meta.isDirectory()) return null;
    held.push(part);
  }
  return path.join(root, ...held);
}

/**
 * The files a bundle's folder serves, walked afresh: every regular file
 * below it but hidden ones (a name starting with `.`, a folder so named
 * not entered), down to `MAX_DEPTH` folders, links to folders not
 * followed; a link to a file only when it resolves beneath the folder
 * (`resolveBeneath`, then its real path) to a file the walk found as
 * itself; `SKILL.md` at the top counted first. Entries are read in the
 * order the file system gives them (`opendir`, as skill-host reads them),
 * and at most `MAX_WALK_ENTRIES` are looked at. Resolves to `{ root, files
 * }`: `root` the folder's real path, `files` a Map of path → `{ size, dev,
 * ino, at }` (`at`: the real path of the file at the time of the walk).
 * Throws the walk's error text over 512 files, 16 MiB or 16384 entries,
 * or for a folder it cannot list.
 */
async function walk(name, folder) {
  const unreadable = (relative, error) => new Error(`skill "${name}": cannot list ${relative || '.'}: ${error.message}`);
  let root;
  try {
    root = await realpath(folder);
  } catch (error) {
    throw unreadable('', error);
  }
  const found = new Map();
  /** `dev:ino` of each file found as itself, and each link with the file it leads to. */
  const plain = new Set();
  const links = [];
  let bytes = 0n;
  let entries = 0;
  const identity = (meta) => `${meta.dev}:${meta.ino}`;
  const count = (relative, meta, at) => {
    if (found.size === MAX_SKILL_FILES) {
      throw new Error(
        `skill "${name}" has more than ${MAX_SKILL_FILES} files; the Skills extension allows at most ${MAX_SKILL_FILES} per skill`,
      );
    }
    bytes += meta.size;
    if (bytes > BigInt(MAX_SKILL_BYTES)) {
      throw new Error(
        `skill "${name}" has ${bytes} bytes of files; the Skills extension allows at most 16 MiB (${MAX_SKILL_BYTES} bytes) per skill`,
      );
    }
    found.set(relative, { size: meta.size, dev: meta.dev, ino: meta.ino, at });
  };
  // SKILL.md, links followed wherever they lead: it is the file the harness loaded the skill from.
  try {
    const at = await realpath(path.join(root, SKILL_FILE));
    const meta = await stat(at, { bigint: true });
    if (meta.isFile()) count(SKILL_FILE, meta, at);
  } catch {
    // A bundle without its SKILL.md serves its other files all the same.
  }
  const visit = async (relative, depth) => {
    const here = relative === '' ? root : path.join(root, ...relative.split('/'));
    let listed;
    try {
      listed = await opendir(here, { encoding: 'buffer' });
    } catch (error) {
      throw unreadable(relative, error);
    }
    // The iterator closes the folder when the loop ends, by a throw too.
    for await (const entry of listed) {
      // Every entry looked at counts, hidden ones and folders too; the top SKILL.md does not.
      const topSkillFile = depth === 0 && entry.name.equals(SKILL_FILE_BYTES);
      if (!topSkillFile) {
        entries += 1;
        if (entries > MAX_WALK_ENTRIES) {
          throw new Error(
            `skill "${name}" has more than ${MAX_WALK_ENTRIES} entries below its folder; at most ${MAX_WALK_ENTRIES} are looked at`,
          );
        }
      }
      const entryName = fileName(entry.name);
      if (entryName === null || entryName.startsWith('.') || topSkillFile) continue;
      const entryPath = relative === '' ? entryName : `${relative}/${entryName}`;
      const full = path.join(here, entryName);
      let kind = entry;
      if (!entry.isFile() && !entry.isDirectory() && !entry.isSymbolicLink()) {
        // The file system gave no type (or another one): asked of the entry itself, not followed.
        try {
          kind = await lstat(full);
        } catch {
          continue;
        }
      }
      if (kind.isDirectory()) {
        if (depth < MAX_DEPTH) await visit(entryPath, depth + 1);
        continue;
      }
      const link = kind.isSymbolicLink();
      let at = full;
      let meta;
      try {
        if (link) {
          // Only a link that resolves beneath the folder, never rising above it; a link to a folder is not followed.
          const resolved = await resolveBeneath(root, entryPath);
          if (resolved === null) continue;
          at = await realpath(resolved);
          if (!beneath(root, at)) continue;
          meta = await stat(at, { bigint: true });
        } else {
          // Never followed: a file swapped for a link since the listing is not a file.
          meta = await lstat(full, { bigint: true });
        }
      } catch {
        continue;
      }
      if (!meta.isFile()) continue;
      count(entryPath, meta, at);
      if (link) links.push([entryPath, identity(meta)]);
      else plain.add(identity(meta));
    }
  };
  await visit('', 0);
  // A link serves only a file the walk found as itself (not a hidden one, nor one past the depth bound).
  for (const [relative, target] of links) if (!plain.has(target)) found.delete(relative);
  return { root, files: found };
}

/**
 * `list-skill-files` for a skill whose files are `where` (`skillFilesOf`):
 * jco's `skill-files`, the first `limit` of its files other than its skill
 * file, in byte order of their paths, and how many there are.
 */
export async function listSkillFiles(name, where, limit) {
  if (where.kind === 'flat') return { files: [], total: 0n };
  const { files } = await walk(name, where.folder);
  const paths = [...files.keys()].filter((relative) => relative !== SKILL_FILE && isSkillFilePath(relative)).sort(byteOrder);
  return {
    files: paths.slice(0, limit).map((relative) => ({ path: relative, size: files.get(relative).size })),
    total: BigInt(paths.length),
  };
}

/** Whether the open file `handle` is now at a path beneath `root` (Linux: the kernel's own name for it). */
async function openedBeneath(handle, root) {
  let at;
  try {
    at = await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    // No /proc (not Linux, or not mounted): the identity check alone holds.
    return true;
  }
  return beneath(root, at);
}

const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0);

/**
 * Reads the file the walk found at `at` with identity `expected` (`{ dev,
 * ino }`): opened without following a link at its last step, then checked
 * to be that very file (device and inode, from the open descriptor) and a
 * regular one, and, with `root`, to be beneath it now (Linux). Resolves to
 * jco's `file-answer`.
 */
async function readChecked(name, relative, at, expected, root) {
  let handle;
  try {
    handle = await openFile(at, OPEN_FLAGS);
  } catch (error) {
    if (['ENOENT', 'ENOTDIR', 'ELOOP', 'EMLINK', 'ENXIO'].includes(error.code)) return missing;
    throw new Error(`skill "${name}": cannot read ${relative}: ${error.message}`);
  }
  try {
    const meta = await handle.stat({ bigint: true });
    if (!meta.isFile() || meta.dev !== expected.dev || meta.ino !== expected.ino) return missing;
    if (root !== null && !(await openedBeneath(handle, root))) return missing;
    if (meta.size > BigInt(MAX_SKILL_FILE_READ_BYTES)) return { tag: 'too-large', val: meta.size };
    // One byte past the cap shows a file that grew since.
    const buffer = Buffer.alloc(Number(meta.size) + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === buffer.length) break;
    }
    if (length > MAX_SKILL_FILE_READ_BYTES) return { tag: 'too-large', val: BigInt(length) };
    const bytes = buffer.subarray(0, length);
    if (bytes.includes(0)) return { tag: 'binary', val: BigInt(length) };
    try {
      return { tag: 'text', val: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes) };
    } catch {
      return { tag: 'binary', val: BigInt(length) };
    }
  } catch (error) {
    throw new Error(`skill "${name}": cannot read ${relative}: ${error.message}`);
  } finally {
    await handle.close();
  }
}

/**
 * `read-skill-file` for a skill whose files are `where` (`skillFilesOf`),
 * read afresh: jco's `file-answer`. A path outside the grammar is `missing`
 * unlooked at; so is a file the walk does not serve (a link leaving the
 * folder, a hidden file, not a regular file). A file over 1 MiB is
 * `too-large`, decided from its size before it is read; one that is not
 * UTF-8 or holds a NUL is `binary`.
 */
export async function readSkillFile(name, where, relative) {
  if (!isSkillFilePath(relative)) return missing;
  if (where.kind === 'flat') {
    if (relative !== SKILL_FILE) return missing;
    // The flat file itself, links followed as the harness followed them to load it.
    let at;
    let meta;
    try {
      at = await realpath(where.file);
      meta = await stat(at, { bigint: true });
    } catch {
      return missing;
    }
    if (!meta.isFile()) return missing;
    if (meta.size > BigInt(MAX_SKILL_FILE_READ_BYTES)) return { tag: 'too-large', val: meta.size };
    return readChecked(name, relative, at, meta, null);
  }
  const { root, files } = await walk(name, where.folder);
  const served = files.get(relative);
  if (served === undefined) return missing;
  if (served.size > BigInt(MAX_SKILL_FILE_READ_BYTES)) return { tag: 'too-large', val: served.size };
  // SKILL.md may lead anywhere (above); every other file is beneath the folder.
  const confined = relative === SKILL_FILE && !beneath(root, served.at) ? null : root;
  return readChecked(name, relative, served.at, served, confined);
}

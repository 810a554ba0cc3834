// A skill's files on this machine, for the drop-in's `list-skill-files` and
// `read-skill-file` (docs/spec.md §3.15, the design every host follows):
// the files below a skill the harness's filesystem provider listed from a
// skill file on disk, the set skill-host's local provider and its MCP
// Skills extension serve (host-runner/src/providers/local/files.rs), found
// and read with what Node.js offers. A link is resolved here one segment at
// a time, as cap-std's RESOLVE_BENEATH resolves it (and the Python host);
// Node has no `openat` or `openat2`: on Linux a folder's open descriptor is
// named through `/proc/self/fd/N` (listing it, and stat-ing a name in it, as
// `openat` would), and the open itself is checked around instead of
// confined by the kernel: see hosts/node/README.md ("A skill's files") for
// what that holds and what it leaves.

import { constants as fsConstants } from 'node:fs';
import { lstat, open as openFile, opendir, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { getSystemErrorMap } from 'node:util';

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

/**
 * Whether `target` (a real path) is strictly beneath the real folder `root`
 * with no hidden segment (a name starting with `.`) below it: a file the
 * walk could serve at that place.
 */
function servedBeneath(root, target) {
  if (!beneath(root, target)) return false;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return !target.slice(prefix.length).split(path.sep).some((segment) => segment.startsWith('.'));
}

/**
 * What C's `strerror` says for the errors a walk meets (glibc's words, as
 * Rust's `io::Error` shows them); any other is libuv's message, capitalized.
 */
const STRERROR = {
  EACCES: 'Permission denied',
  EBADF: 'Bad file descriptor',
  EBUSY: 'Device or resource busy',
  EINVAL: 'Invalid argument',
  EIO: 'Input/output error',
  ELOOP: 'Too many levels of symbolic links',
  EMFILE: 'Too many open files',
  ENAMETOOLONG: 'File name too long',
  ENFILE: 'Too many open files in system',
  ENOENT: 'No such file or directory',
  ENOMEM: 'Cannot allocate memory',
  ENOTDIR: 'Not a directory',
  ENXIO: 'No such device or address',
  EPERM: 'Operation not permitted',
  ESTALE: 'Stale file handle',
};

/**
 * A file system error as skill-host (Rust's `io::Error`) shows it:
 * `Permission denied (os error 13)`, never a path.
 */
export function ioErrorText(error) {
  const errno = error?.errno;
  if (typeof errno !== 'number' || !Number.isInteger(errno) || typeof error.code !== 'string') {
    return String(error?.message ?? error);
  }
  let text = STRERROR[error.code];
  if (text === undefined) {
    const uv = getSystemErrorMap().get(errno)?.[1] ?? error.code;
    text = uv.charAt(0).toUpperCase() + uv.slice(1);
  }
  return `${text} (os error ${Math.abs(errno)})`;
}

/**
 * The path through which an open descriptor's own file is reached (Linux's
 * `/proc/self/fd/N`: a name below it is resolved from that very folder, as
 * `openat` resolves it), or null where there is none.
 */
async function descriptorPath(handle) {
  const at = `/proc/self/fd/${handle.fd}`;
  try {
    return { at, real: await readlink(at) };
  } catch {
    return null;
  }
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

/** Flags a folder is opened with: never through a link at its last step, never blocking. */
const FOLDER_FLAGS =
  fsConstants.O_RDONLY | (fsConstants.O_DIRECTORY ?? 0) | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0);

/** Errors that say a sub-folder is gone or is no longer a folder since its parent was listed: it is not entered. */
const NOT_A_FOLDER = ['ENOENT', 'ENOTDIR', 'ELOOP'];

/**
 * The files a bundle's folder serves, walked afresh: every regular file
 * below it but hidden ones (a name starting with `.`, a folder so named
 * not entered), down to `MAX_DEPTH` folders, links to folders not
 * followed; a link to a file only when it resolves beneath the folder
 * (`resolveBeneath`, then its real path) to a file the walk found as
 * itself; `SKILL.md` at the top counted first. Entries are read in the
 * order the file system gives them (`opendir`, as skill-host reads them),
 * and at most `MAX_WALK_ENTRIES` are looked at.
 *
 * Each folder is opened (`O_DIRECTORY | O_NOFOLLOW`) and, on Linux, listed
 * and looked into through its descriptor (`/proc/self/fd/N`, as skill-host
 * lists through its handle): a sub-folder is `lstat`ed, must be a folder,
 * is opened from its parent's descriptor without following a link, and the
 * open descriptor must be that folder (device and inode), else it is not
 * entered; a plain file is `lstat`ed in its own folder's descriptor. So a
 * folder swapped for a link while the walk runs is never listed in its
 * place, and every identity recorded is that of a file in the folder.
 * Where there is no `/proc/self/fd`, folders and files are reached by their
 * paths, the folder's identity compared before (the descriptor's) and after
 * listing, and what a folder gave is dropped when its path names another
 * folder after it was listed.
 *
 * Resolves to `{ root, files }`: `root` the folder's real path, `files` a
 * Map of path → `{ size, dev, ino, at }` (`at`: the path a read opens, the
 * real path of a link's target). Throws the walk's error text over 512
 * files, 16 MiB or 16384 entries, or for a folder it cannot list
 * (`skill "{name}": cannot list {path}: {error}`, `{path}` relative to the
 * skill's folder, `.` for the folder itself, as skill-host says it).
 */
async function walk(name, folder) {
  const unreadable = (relative, error) =>
    new Error(`skill "${name}": cannot list ${relative || '.'}: ${ioErrorText(error)}`);
  let root;
  let top;
  try {
    root = await realpath(folder);
    top = await openFile(root, FOLDER_FLAGS & ~(fsConstants.O_NOFOLLOW ?? 0));
  } catch (error) {
    throw unreadable('', error);
  }
  const found = new Map();
  /** `dev:ino` of each file found as itself, and each link with the file it leads to. */
  const plain = new Set();
  /** `plain` in the order it grew (`rollback`). */
  const plainOrder = [];
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
  /** Lists the open folder `handle` at `relative` (`''` for the skill's folder). */
  const visit = async (handle, relative, depth) => {
    const here = relative === '' ? root : path.join(root, ...relative.split('/'));
    // Linux: the descriptor's own folder, whatever is at its path now.
    const named = await descriptorPath(handle);
    const through = named?.at ?? here;
    const before = checkpoint();
    let listed;
    try {
      listed = await opendir(through, { encoding: 'buffer' });
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
      // In this folder's descriptor (Linux), else at its path.
      const inHere = path.join(through, entryName);
      let kind = entry;
      if (!entry.isFile() && !entry.isDirectory() && !entry.isSymbolicLink()) {
        // The file system gave no type (or another one): asked of the entry itself, not followed.
        try {
          kind = await lstat(inHere);
        } catch {
          continue;
        }
      }
      if (kind.isDirectory()) {
        if (depth < MAX_DEPTH) await enter(inHere, entryPath, depth + 1);
        continue;
      }
      const link = kind.isSymbolicLink();
      let at = path.join(here, entryName);
      let meta;
      try {
        if (link) {
          // Only a link that resolves beneath the folder, never rising above it; a link to a folder is not followed.
          const resolved = await resolveBeneath(root, entryPath);
          if (resolved === null) continue;
          at = await realpath(resolved);
          if (!servedBeneath(root, at)) continue;
          meta = await stat(at, { bigint: true });
        } else {
          // Never followed: a file swapped for a link since the listing is not a file.
          meta = await lstat(inHere, { bigint: true });
        }
      } catch {
        continue;
      }
      if (!meta.isFile()) continue;
      count(entryPath, meta, at);
      if (link) links.push([entryPath, identity(meta)]);
      else if (!plain.has(identity(meta))) {
        plain.add(identity(meta));
        plainOrder.push(identity(meta));
      }
    }
    if (named === null) {
      // No descriptor path: the folder listed at `here` must still be the one opened, else what it gave is dropped.
      const now = await lstat(here, { bigint: true }).catch(() => null);
      const held = await handle.stat({ bigint: true });
      if (now === null || now.dev !== held.dev || now.ino !== held.ino) rollback(before);
    }
  };
  /** Where the walk stands, for `rollback`. */
  const checkpoint = () => ({ files: found.size, links: links.length, plain: plainOrder.length, bytes });
  /** Forgets what was found since `mark` (a folder listed by a path that no longer names it). */
  const rollback = (mark) => {
    for (const relative of [...found.keys()].slice(mark.files)) found.delete(relative);
    links.length = mark.links;
    for (const id of plainOrder.splice(mark.plain)) plain.delete(id);
    bytes = mark.bytes;
  };
  /**
   * Enters the sub-folder `at` (a name in its parent's descriptor): it must
   * be a folder now (`lstat`), open without following a link, and be the
   * very folder the `lstat` saw; else it is not entered, as skill-host does
   * not enter a folder it cannot open without following a link.
   */
  const enter = async (at, relative, depth) => {
    let seen;
    try {
      seen = await lstat(at, { bigint: true });
    } catch {
      return;
    }
    if (!seen.isDirectory()) return;
    let handle;
    try {
      handle = await openFile(at, FOLDER_FLAGS);
    } catch (error) {
      if (NOT_A_FOLDER.includes(error.code)) return;
      throw unreadable(relative, error);
    }
    try {
      const opened = await handle.stat({ bigint: true });
      if (!opened.isDirectory() || opened.dev !== seen.dev || opened.ino !== seen.ino) return;
      await visit(handle, relative, depth);
    } finally {
      await handle.close();
    }
  };
  try {
    const named = await descriptorPath(top);
    // The kernel's name for the folder opened, when it has one.
    if (named !== null && path.isAbsolute(named.real)) root = named.real;
    // SKILL.md, links followed wherever they lead: it is the file the harness loaded the skill from.
    let skillFile = null;
    try {
      const at = await realpath(path.join(named?.at ?? root, SKILL_FILE));
      const meta = await stat(at, { bigint: true });
      if (meta.isFile()) skillFile = { meta, at };
    } catch {
      // A bundle without its SKILL.md serves its other files all the same.
    }
    if (skillFile !== null) count(SKILL_FILE, skillFile.meta, skillFile.at);
    await visit(top, '', 0);
  } finally {
    await top.close();
  }
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

/**
 * Whether the open file `handle` (identity `opened`), opened at `at`, is
 * now a file the walk could serve beneath `root`: its real path strictly
 * beneath the folder with no hidden segment below it. The real path is the
 * kernel's own name for the descriptor on Linux; elsewhere `realpath` of
 * `at`, which must then name the file opened (device and inode, not
 * following a link).
 */
async function openedBeneath(handle, opened, at, root) {
  let real = (await descriptorPath(handle))?.real;
  if (real === undefined) {
    try {
      real = await realpath(at);
      const meta = await lstat(real, { bigint: true });
      if (meta.dev !== opened.dev || meta.ino !== opened.ino) return false;
    } catch {
      return false;
    }
  }
  return servedBeneath(root, real);
}

const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0);

/**
 * The body of a skill file's text as the harness's filesystem provider
 * parses it (`---` on the first line, the frontmatter up to the next `---`
 * line, a `\r` before a line break ignored; the rest trimmed), or null when
 * the text has no frontmatter. The YAML itself is not parsed: the body is
 * what is compared.
 */
export function skillFileBody(text) {
  const firstLineEnd = text.indexOf('\n');
  if (firstLineEnd < 0 || text.slice(0, firstLineEnd).replace(/\r$/, '') !== '---') return null;
  let lineStart = firstLineEnd + 1;
  while (lineStart <= text.length) {
    const nextNewline = text.indexOf('\n', lineStart);
    const lineEnd = nextNewline < 0 ? text.length : nextNewline;
    if (text.slice(lineStart, lineEnd).replace(/\r$/, '') === '---') {
      return text.slice(nextNewline < 0 ? text.length : nextNewline + 1).trim();
    }
    if (nextNewline < 0) return null;
    lineStart = nextNewline + 1;
  }
  return null;
}

/** Marks a read of any file but the skill file (`readChecked`'s `skillContent`). */
const NOT_SKILL_FILE = Symbol('not the skill file');

/**
 * Reads the file the walk found at `at` with identity `expected` (`{ dev,
 * ino }`): opened without following a link at its last step, then checked
 * to be that very file (device and inode, from the open descriptor) and a
 * regular one, and, with `root`, to be a file the walk could serve beneath
 * it now (`openedBeneath`). The skill file (`skillContent` not
 * `NOT_SKILL_FILE`) is served only when its text parses as a skill file
 * whose body is `skillContent`, the body the harness loaded for the skill
 * in this call: else, or without one, `missing`. Resolves to jco's
 * `file-answer`.
 */
async function readChecked(name, relative, at, expected, root, skillContent) {
  const skillFile = skillContent !== NOT_SKILL_FILE;
  if (skillFile && typeof skillContent !== 'string') return missing;
  // The skill file is read whole to be compared (the walk bounds a skill to 16 MiB); any other file up to the cap.
  const cap = skillFile ? MAX_SKILL_BYTES : MAX_SKILL_FILE_READ_BYTES;
  let handle;
  try {
    handle = await openFile(at, OPEN_FLAGS);
  } catch (error) {
    if (['ENOENT', 'ENOTDIR', 'ELOOP', 'EMLINK', 'ENXIO'].includes(error.code)) return missing;
    throw new Error(`skill "${name}": cannot read ${relative}: ${ioErrorText(error)}`);
  }
  try {
    const meta = await handle.stat({ bigint: true });
    if (!meta.isFile() || meta.dev !== expected.dev || meta.ino !== expected.ino) return missing;
    if (root !== null && !(await openedBeneath(handle, meta, at, root))) return missing;
    if (meta.size > BigInt(cap)) return skillFile ? missing : { tag: 'too-large', val: meta.size };
    // One byte past the cap shows a file that grew since.
    const buffer = Buffer.alloc(Number(meta.size) + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === buffer.length) break;
    }
    const bytes = buffer.subarray(0, length);
    // Decoded as the harness decodes it (`readFile` in UTF-8, invalid bytes replaced).
    if (skillFile && (length > cap || skillFileBody(bytes.toString('utf8')) !== skillContent)) return missing;
    if (length > MAX_SKILL_FILE_READ_BYTES) return { tag: 'too-large', val: BigInt(length) };
    if (bytes.includes(0)) return { tag: 'binary', val: BigInt(length) };
    try {
      return { tag: 'text', val: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes) };
    } catch {
      return { tag: 'binary', val: BigInt(length) };
    }
  } catch (error) {
    throw new Error(`skill "${name}": cannot read ${relative}: ${ioErrorText(error)}`);
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
 * UTF-8 or holds a NUL is `binary`. `SKILL.md` (a bundle's, or a flat
 * skill's file) is served only when what was opened parses as a skill file
 * whose body is `content`, the body the harness returned for the skill in
 * this call (a file swapped in at its path since serves nothing), else it
 * is `missing`, as it is without a `content`.
 */
export async function readSkillFile(name, where, relative, content) {
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
    return readChecked(name, relative, at, meta, null, content);
  }
  const { root, files } = await walk(name, where.folder);
  const served = files.get(relative);
  if (served === undefined) return missing;
  // SKILL.md may lead anywhere (it is the file the harness loaded): what it holds is checked instead.
  if (relative === SKILL_FILE) return readChecked(name, relative, served.at, served, null, content);
  if (served.size > BigInt(MAX_SKILL_FILE_READ_BYTES)) return { tag: 'too-large', val: served.size };
  return readChecked(name, relative, served.at, served, root, NOT_SKILL_FILE);
}

// The memory cap: Node has no store limiter, so the cap is written into the
// core modules themselves, as one budget divided up front among all of them.
// A table that declares a maximum is charged that maximum (8 bytes, a
// pointer, per element); the memories, and any table without a maximum,
// share the rest equally, each getting a maximum of its share. Growing past
// it fails inside the guest (Rust's allocator then aborts with "memory
// allocation of N bytes failed" on stderr) instead of taking the host's
// memory, and a component with many memories cannot multiply the cap.
// (wasmtime keeps a running total instead, so there one memory may use what
// another leaves; a plugin with a single memory, like the real one, gets the
// same cap in both hosts.)

const PAGE = 64 * 1024;
const TABLE_ELEMENT_BYTES = 8;
const TABLE_SECTION = 4;
const MEMORY_SECTION = 5;

function readLeb(bytes, at) {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    const byte = bytes[at];
    if (byte === undefined) throw new Error('truncated LEB128 in the core module');
    at += 1;
    value |= BigInt(byte & 0x7f) << shift;
    shift += 7n;
    if ((byte & 0x80) === 0) return { value, at };
  }
}

function writeLeb(value) {
  const out = [];
  let rest = BigInt(value);
  do {
    let byte = Number(rest & 0x7fn);
    rest >>= 7n;
    if (rest !== 0n) byte |= 0x80;
    out.push(byte);
  } while (rest !== 0n);
  return out;
}

/** The sections of a core module: `{ id, start, end }`, `start` past the size. */
function sections(bytes) {
  const found = [];
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at];
    const size = readLeb(bytes, at + 1);
    found.push({ id, header: at, start: size.at, end: size.at + Number(size.value) });
    at = size.at + Number(size.value);
  }
  return found;
}

/**
 * Reads limits at `at` and writes them back with a maximum of at most `cap`
 * (in the limits' unit); `what` names the thing for errors.
 */
function capLimits(bytes, at, cap, what) {
  const flags = bytes[at];
  if (flags & 0x02) throw new Error(`shared ${what}s are not supported`);
  if (flags & ~0x05) throw new Error(`a ${what} with limit flags ${flags} is not supported`);
  const min = readLeb(bytes, at + 1);
  let cursor = min.at;
  let max = cap;
  if (flags & 0x01) {
    const declared = readLeb(bytes, cursor);
    cursor = declared.at;
    if (declared.value < max) max = declared.value;
  }
  if (min.value > cap) {
    const unit = what === 'memory' ? 'pages of memory' : 'table elements';
    throw new Error(`the plugin needs ${min.value} ${unit} at start, more than its share of the cap (${cap})`);
  }
  // Keep the index-type bit (64-bit), always declare a maximum.
  return { at: cursor, limits: [flags | 0x01, ...writeLeb(min.value), ...writeLeb(max)] };
}

/** The limits at `at`: `{ flags, min, max (null when undeclared), at }` past them. */
function readLimits(bytes, at) {
  const flags = bytes[at];
  const min = readLeb(bytes, at + 1);
  if (!(flags & 0x01)) return { flags, min: min.value, max: null, at: min.at };
  const max = readLeb(bytes, min.at);
  return { flags, min: min.value, max: max.value, at: max.at };
}

/** Where a table entry's limits start: past its element type. */
function tableLimitsAt(bytes, at) {
  const type = bytes[at];
  if (type === 0x63 || type === 0x64) return readLeb(bytes, at + 1).at;
  if (type !== 0x70 && type !== 0x6f) throw new Error(`a table of element type ${type} is not supported`);
  return at + 1;
}

/** Every memory and table the modules define, as `{ id, max }`. */
function entries(modules) {
  const found = [];
  for (const module of modules) {
    for (const section of sections(module)) {
      if (section.id !== MEMORY_SECTION && section.id !== TABLE_SECTION) continue;
      const count = readLeb(module, section.start);
      let cursor = count.at;
      for (let index = 0n; index < count.value; index++) {
        const limits = readLimits(module, section.id === TABLE_SECTION ? tableLimitsAt(module, cursor) : cursor);
        found.push({ id: section.id, max: limits.max });
        cursor = limits.at;
      }
    }
  }
  return found;
}

/** Rewrites one table or memory section with every entry capped at `cap`. */
function capSection(bytes, section, cap) {
  const count = readLeb(bytes, section.start);
  const body = [...writeLeb(count.value)];
  let cursor = count.at;
  for (let index = 0n; index < count.value; index++) {
    if (section.id === MEMORY_SECTION) {
      const capped = capLimits(bytes, cursor, cap, 'memory');
      body.push(...capped.limits);
      cursor = capped.at;
      continue;
    }
    // A table: its element type (funcref, externref, or a typed reference
    // with its heap type), then its limits. Tables with an initialiser
    // expression (0x40) are refused rather than left uncapped.
    const typeEnd = tableLimitsAt(bytes, cursor);
    body.push(...bytes.subarray(cursor, typeEnd));
    // A table that declares a maximum was charged all of it: it keeps it.
    const declared = readLimits(bytes, typeEnd).max;
    const capped = capLimits(bytes, typeEnd, declared ?? cap, 'table');
    body.push(...capped.limits);
    cursor = capped.at;
  }
  if (cursor !== section.end) throw new Error('a malformed table or memory section in the core module');
  return Uint8Array.from([section.id, ...writeLeb(body.length), ...body]);
}

/**
 * Returns copies of the core modules (`{ name: bytes }`) whose memories and
 * tables together cannot grow beyond `maxBytes` (see the top of this file).
 * Throws when one starts larger than its share, or when the tables'
 * declared maximums alone exceed the cap.
 */
export function capMemory(modules, maxBytes) {
  const all = entries(Object.values(modules));
  const budget = BigInt(maxBytes);
  const fixed = all
    .filter((entry) => entry.id === TABLE_SECTION && entry.max !== null)
    .reduce((sum, table) => sum + table.max * BigInt(TABLE_ELEMENT_BYTES), 0n);
  if (fixed > budget) {
    throw new Error(`the plugin's tables declare ${fixed} bytes, more than the memory cap of ${budget}`);
  }
  const sharing = BigInt(all.filter((entry) => entry.id === MEMORY_SECTION || entry.max === null).length);
  const share = (budget - fixed) / (sharing > 0n ? sharing : 1n);
  const memoryCap = share / BigInt(PAGE);
  const tableCap = share / BigInt(TABLE_ELEMENT_BYTES);
  const capped = {};
  for (const [name, bytes] of Object.entries(modules)) {
    const parts = [bytes.subarray(0, 8)];
    for (const section of sections(bytes)) {
      if (section.id === MEMORY_SECTION) parts.push(capSection(bytes, section, memoryCap));
      else if (section.id === TABLE_SECTION) parts.push(capSection(bytes, section, tableCap));
      else parts.push(bytes.subarray(section.header, section.end));
    }
    capped[name] = Buffer.concat(parts);
  }
  return capped;
}

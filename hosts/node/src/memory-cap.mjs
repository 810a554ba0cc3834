// The memory cap: Node has no store limiter, so the cap is written into the
// core modules themselves, as one budget for all of them. The memories the
// component's core modules define share `maxBytes` equally (each gets a
// maximum of its share, in whole 64 KiB pages), and so do its tables (a
// table element is counted at 8 bytes, a pointer). Growing past a maximum
// fails inside the guest (Rust's allocator then aborts with "memory
// allocation of N bytes failed" on stderr) instead of taking the host's
// memory. A component with many memories cannot multiply the cap.

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

function countEntries(modules, id) {
  let count = 0n;
  for (const module of modules) {
    for (const section of sections(module)) {
      if (section.id === id) count += readLeb(module, section.start).value;
    }
  }
  return count;
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
    const type = bytes[cursor];
    let typeEnd = cursor + 1;
    if (type === 0x63 || type === 0x64) typeEnd = readLeb(bytes, typeEnd).at;
    else if (type !== 0x70 && type !== 0x6f) throw new Error(`a table of element type ${type} is not supported`);
    body.push(...bytes.subarray(cursor, typeEnd));
    const capped = capLimits(bytes, typeEnd, cap, 'table');
    body.push(...capped.limits);
    cursor = capped.at;
  }
  if (cursor !== section.end) throw new Error('a malformed table or memory section in the core module');
  return Uint8Array.from([section.id, ...writeLeb(body.length), ...body]);
}

/**
 * Returns copies of the core modules (`{ name: bytes }`) whose memories
 * together cannot grow beyond `maxBytes`, nor their tables beyond
 * `maxBytes` of elements. Throws when a memory or table starts larger than
 * its share.
 */
export function capMemory(modules, maxBytes) {
  const all = Object.values(modules);
  const memories = countEntries(all, MEMORY_SECTION);
  const tables = countEntries(all, TABLE_SECTION);
  const memoryCap = BigInt(Math.floor(maxBytes / PAGE)) / (memories > 0n ? memories : 1n);
  const tableCap = BigInt(Math.floor(maxBytes / TABLE_ELEMENT_BYTES)) / (tables > 0n ? tables : 1n);
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

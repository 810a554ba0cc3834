// A memory cap for a core module: Node has no store limiter, so the cap is
// written into the module itself. Every memory the module defines gets a
// maximum of `maxBytes` (rounded down to whole 64 KiB pages), so growing past
// it fails inside the guest (Rust's allocator then aborts with "memory
// allocation of N bytes failed" on stderr) instead of taking the host's memory.

const PAGE = 64 * 1024;
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

/**
 * Returns a copy of the core module `bytes` whose defined memories cannot
 * grow beyond `maxBytes`. Throws when a memory's initial size already
 * exceeds the cap.
 */
export function capMemory(bytes, maxBytes) {
  const capPages = BigInt(Math.floor(maxBytes / PAGE));
  const parts = [bytes.subarray(0, 8)];
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at];
    const size = readLeb(bytes, at + 1);
    const start = size.at;
    const end = start + Number(size.value);
    if (id !== MEMORY_SECTION) {
      parts.push(bytes.subarray(at, end));
      at = end;
      continue;
    }
    const count = readLeb(bytes, start);
    const body = [...writeLeb(count.value)];
    let cursor = count.at;
    for (let index = 0n; index < count.value; index++) {
      const flags = bytes[cursor];
      if (flags & 0x02) throw new Error('shared memories are not supported');
      const min = readLeb(bytes, cursor + 1);
      cursor = min.at;
      let max = capPages;
      if (flags & 0x01) {
        const declared = readLeb(bytes, cursor);
        cursor = declared.at;
        if (declared.value < max) max = declared.value;
      }
      if (min.value > capPages) {
        throw new Error(`the plugin needs ${min.value} pages of memory at start, more than the cap of ${capPages}`);
      }
      // Keep the index-type bit (memory64), always declare a maximum.
      body.push(flags | 0x01, ...writeLeb(min.value), ...writeLeb(max));
    }
    parts.push(Uint8Array.from([MEMORY_SECTION, ...writeLeb(body.length), ...body]));
    at = end;
  }
  return Buffer.concat(parts);
}

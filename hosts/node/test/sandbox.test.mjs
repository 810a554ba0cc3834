// The plugin's WASI grants nothing, and its memory cannot grow past the cap.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { capMemory } from '../src/memory-cap.mjs';
import { GuestExit, sandboxWasi, STDERR_CAPACITY } from '../src/sandbox-wasi.mjs';

test('no environment, arguments, cwd or terminal', () => {
  const { imports } = sandboxWasi();
  assert.deepEqual(imports['wasi:cli/environment'].getEnvironment(), []);
  assert.deepEqual(imports['wasi:cli/environment'].getArguments(), []);
  assert.equal(imports['wasi:cli/environment'].initialCwd(), undefined);
  assert.equal(imports['wasi:cli/terminal-stdout'].getTerminalStdout(), undefined);
});

test('exit traps the call instead of ending the process', () => {
  const { imports } = sandboxWasi();
  assert.throws(() => imports['wasi:cli/exit'].exit({ tag: 'ok' }), GuestExit);
});

test('stdin is at its end, stdout goes nowhere, stderr is kept up to its cap', () => {
  const wasi = sandboxWasi();
  const { imports } = wasi;
  assert.throws(() => imports['wasi:cli/stdin'].getStdin().blockingRead(10n), (error) => error.tag === 'closed');
  imports['wasi:cli/stdout'].getStdout().blockingWriteAndFlush(new TextEncoder().encode('to nobody'));
  const stderr = imports['wasi:cli/stderr'].getStderr();
  stderr.blockingWriteAndFlush(new TextEncoder().encode('panicked at x\n'));
  assert.equal(wasi.stderr(), 'panicked at x');
  stderr.blockingWriteAndFlush(new Uint8Array(2 * STDERR_CAPACITY).fill(0x61));
  assert.equal(Buffer.byteLength(wasi.stderr()), STDERR_CAPACITY);
});

// (module (memory (export "memory") 1) (func (export "grow") (param i32) (result i32) local.get 0 memory.grow))
const GROWER = Uint8Array.from([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0, 5, 3, 1, 0, 1, 7, 17, 2, 6, 109, 101, 109, 111,
  114, 121, 2, 0, 4, 103, 114, 111, 119, 0, 0, 10, 8, 1, 6, 0, 32, 0, 64, 0, 11,
]);

// (module (table (export "table") 1 funcref) (func (export "grow") (param i32) (result i32) ref.null func local.get 0 table.grow 0))
const TABLE_GROWER = Uint8Array.from([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0, 4, 4, 1, 112, 0, 1, 7, 16, 2, 5, 116, 97, 98,
  108, 101, 1, 0, 4, 103, 114, 111, 119, 0, 0, 10, 11, 1, 9, 0, 208, 112, 32, 0, 252, 15, 0, 11,
]);

const instance = (bytes) => new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports;

test('a capped memory cannot grow past the cap', () => {
  assert.equal(instance(GROWER).grow(100), 1);
  const capped = instance(capMemory({ grower: GROWER }, 4 * 64 * 1024).grower);
  assert.equal(capped.grow(3), 1);
  assert.equal(capped.grow(1), -1);
  assert.equal(capped.memory.buffer.byteLength, 4 * 64 * 1024);
  assert.throws(() => capMemory({ grower: GROWER }, 0), /more than its share of the cap/);
});

test('memories share the cap, however many modules define them', () => {
  const capped = capMemory({ one: GROWER, two: GROWER }, 4 * 64 * 1024);
  for (const bytes of Object.values(capped)) {
    const memory = instance(bytes);
    assert.equal(memory.grow(1), 1);
    assert.equal(memory.grow(1), -1);
  }
});

test('a table that declares a maximum is charged it; the memories share the rest', () => {
  // GROWER's memory beside TABLE_GROWER's table, given a maximum of 8192
  // elements (64 KiB): a 3-page cap leaves the memory 2 pages.
  const bounded = Uint8Array.from(TABLE_GROWER);
  const limits = bounded.indexOf(112) + 1; // funcref, then the limits: flags 0, min 1
  bounded.set([1, 1], limits); // flags 1 (has max), min 1 …
  const withMax = Buffer.concat([bounded.subarray(0, limits + 2), Uint8Array.from([0x80, 0x40]), bounded.subarray(limits + 2)]);
  withMax[limits - 3] += 2; // the table section's size
  const capped = capMemory({ memory: GROWER, table: withMax }, 3 * 64 * 1024);
  const memory = instance(capped.memory);
  assert.equal(memory.grow(1), 1);
  assert.equal(memory.grow(1), -1);
  assert.equal(instance(capped.table).grow(8191), 1);
  assert.throws(() => capMemory({ table: withMax }, 1024), /tables declare 65536 bytes, more than the memory cap/);
});

test('tables share the cap too, at a pointer per element', () => {
  assert.equal(instance(TABLE_GROWER).grow(100_000), 1);
  const table = instance(capMemory({ table: TABLE_GROWER }, 80).table);
  assert.equal(table.grow(9), 1);
  assert.equal(table.grow(1), -1);
  assert.equal(table.table.length, 10);
});

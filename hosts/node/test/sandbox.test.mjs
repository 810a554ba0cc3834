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

test('a capped memory cannot grow past the cap', () => {
  const uncapped = new WebAssembly.Instance(new WebAssembly.Module(GROWER)).exports;
  assert.equal(uncapped.grow(100), 1);
  const capped = new WebAssembly.Instance(new WebAssembly.Module(capMemory(GROWER, 4 * 64 * 1024))).exports;
  assert.equal(capped.grow(3), 1);
  assert.equal(capped.grow(1), -1);
  assert.equal(capped.memory.buffer.byteLength, 4 * 64 * 1024);
  assert.throws(() => capMemory(GROWER, 0), /more than the cap/);
});

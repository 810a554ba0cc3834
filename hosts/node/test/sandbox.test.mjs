// The plugin's WASI grants nothing, and its memory cannot grow past the cap;
// the pool of instances grows while calls wait on the host, keeps a spare
// ready, gives back what a burst started, and replaces a thread that died.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

import { embeddedComponent } from '../src/component.mjs';
import { CallContext } from '../src/host-imports.mjs';
import { capMemory } from '../src/memory-cap.mjs';
import { DEFAULT_LIMITS, POOL, Sandbox } from '../src/sandbox.mjs';
import { GuestExit, sandboxWasi, STDERR_CAPACITY } from '../src/sandbox-wasi.mjs';

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
let component;
const plugin = () => (component ??= embeddedComponent(REPOSITORY));

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

/** A host whose registry answers once `open()` is called: the calls meanwhile each hold an instance. */
function heldHost() {
  let open;
  const opened = new Promise((resolve) => {
    open = resolve;
  });
  const answer = (value) => async () => {
    await opened;
    return { tag: 'ok', val: value };
  };
  const host = {
    snapshot: answer({ tag: 'changed', val: { complete: true, revision: 0n, skills: [] } }),
    listSkills: answer([]),
    getSkill: answer(undefined),
  };
  return { host, open };
}

const holdCall = (sandbox, host) => sandbox.call('invoke', 'invoke', ['{"name":"held"}'], host);
const definition = (sandbox) => sandbox.call('definition', 'definition', [], new CallContext());

/** Waits until `sandbox`'s pool satisfies `ready` (no thread starting), or fails after a few seconds. */
async function settled(sandbox, ready) {
  const until = performance.now() + 10_000;
  while (!(sandbox[POOL].starting === 0 && ready(sandbox[POOL]))) {
    if (performance.now() > until) assert.fail(`the pool never settled: ${JSON.stringify({ ...sandbox[POOL], idleWorkers: undefined })}`);
    await sleep(5);
  }
  return sandbox[POOL];
}

test('the pool grows up to its cap while calls wait on the host, a spare ready beside them', async () => {
  const limits = { ...DEFAULT_LIMITS, instances: 1, spareInstances: 1, maxInstances: 6, idleRetireMs: 60_000 };
  const sandbox = await Sandbox.create(plugin(), '{}', limits);
  try {
    const { host, open } = heldHost();
    const three = Array.from({ length: 3 }, () => holdCall(sandbox, host));
    const pool = await settled(sandbox, ({ busy, idle }) => busy === 3 && idle === 1);
    assert.equal(pool.live, 4, 'three busy and one spare');
    // Served by the spare while the three wait.
    assert.equal((await definition(sandbox)).val.name, 'skill');
    // At the cap, two calls wait for an instance (`busy` counts them).
    const more = Array.from({ length: 5 }, () => holdCall(sandbox, host));
    const full = await settled(sandbox, ({ busy }) => busy === 8);
    assert.equal(full.live, 6);
    assert.equal(full.idle, 0);
    open();
    for (const outcome of await Promise.all([...three, ...more])) assert.equal(outcome.tag, 'err');
  } finally {
    await sandbox.close();
  }
});

test('a call that finds no instance idle takes the first one released, not waiting for its own to start', async () => {
  const sandbox = await Sandbox.create(plugin(), '{}', { ...DEFAULT_LIMITS, instances: 1, maxInstances: 4 });
  try {
    const { host, open } = heldHost();
    const held = holdCall(sandbox, host);
    await settled(sandbox, ({ busy }) => busy === 1);
    const next = definition(sandbox);
    assert.equal(sandbox[POOL].starting, 1);
    open();
    await held;
    assert.equal((await next).val.name, 'skill');
    // Served by the released instance while the one started for it (tens of milliseconds) was still starting.
    assert.equal(sandbox[POOL].starting, 1);
    await settled(sandbox, ({ live, idle }) => live === 2 && idle === 2);
  } finally {
    await sandbox.close();
  }
});

test('instances a burst started are ended once idle; a steady load keeps its own and a spare', async () => {
  const limits = { ...DEFAULT_LIMITS, instances: 1, spareInstances: 1, maxInstances: 8, idleRetireMs: 100 };
  const sandbox = await Sandbox.create(plugin(), '{}', limits);
  try {
    const { host, open } = heldHost();
    const burst = Array.from({ length: 5 }, () => holdCall(sandbox, host));
    await settled(sandbox, ({ busy, live }) => busy === 5 && live === 6);
    open();
    await Promise.all(burst);
    // One call at a time from now on: that one and its spare stay.
    const until = performance.now() + 2000;
    while (performance.now() < until) {
      assert.equal((await definition(sandbox)).val.name, 'skill');
      await sleep(20);
    }
    // (A spare ended in a stall of the loop would be starting again.)
    const { live, starting } = sandbox[POOL];
    assert.equal(live + starting, 2);
    // Nothing at all: back to `instances`.
    await settled(sandbox, ({ live }) => live === 1);
  } finally {
    await sandbox.close();
  }
});

test('a thread that died while idle is replaced before the next call, which succeeds', async () => {
  const pools = [{ instances: 1 }, { instances: 2, spareInstances: 1, maxInstances: 4 }];
  for (const pool of pools) {
    const sandbox = await Sandbox.create(plugin(), '{}', { ...DEFAULT_LIMITS, ...pool });
    try {
      assert.equal((await definition(sandbox)).val.name, 'skill');
      const { idleWorkers } = await settled(sandbox, ({ idle }) => idle >= 1);
      // Every idle thread ends, as a crash would end it.
      await Promise.all(idleWorkers.map((worker) => worker.terminate()));
      assert.equal((await definition(sandbox)).val.name, 'skill', JSON.stringify(pool));
      assert.equal((await definition(sandbox)).val.name, 'skill', JSON.stringify(pool));
    } finally {
      await sandbox.close();
    }
  }
});

test('a call in flight when the sandbox is closed fails as closed, not as a trap of the plugin', async () => {
  const sandbox = await Sandbox.create(plugin(), '{}', { ...DEFAULT_LIMITS, wallTimeoutMs: 10_000 });
  const host = new CallContext();
  // The registry never answers: the call is in flight until close().
  host.listSkills = () => new Promise(() => {});
  const call = sandbox.call('invoke', 'invoke', ['{"name":"pdf-forms"}'], host);
  await sleep(50);
  await sandbox.close();
  await assert.rejects(call, (error) => error.kind === 'load' && /the sandbox was closed/.test(error.message));
});

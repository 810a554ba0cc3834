// The plugin's thread. Runs the transpiled component and nothing else, so the
// main thread can end a call at its deadline by terminating this Worker.
//
// After it has started, this thread never returns to its event loop: it
// sleeps on `wake[GUEST_WAKE]` (Atomics.wait) until the main thread has
// posted a call, or the answer to an import, on `port`, and reads it with
// `receiveMessageOnPort`. What it posts back (a call's outcome, an import's
// arguments: the component's imports are synchronous, while the registry
// and the session live on the main thread) it signals on `wake[HOST_WAKE]`.

import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';

import { sameValue } from './json.mjs';
import { sandboxWasi } from './sandbox-wasi.mjs';
import { decidedMessage, pluginInterface } from './versions.mjs';

const { moduleUrl, core, contract, port, wake, maxCopyBytes, debug } = workerData;

/** The indices of `wake`, as in src/sandbox.mjs: two flags, then whether each side sleeps. */
const GUEST_WAKE = 0;
const HOST_WAKE = 1;
const ASLEEP = 2;

// What the glue logs goes nowhere (unless debugging): the main thread never
// reads this thread's stdout or stderr.
if (!debug) {
  const discard = () => true;
  process.stdout.write = discard;
  process.stderr.write = discard;
  for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir']) console[method] = () => {};
}

/** A failure of the host while answering an import: it traps the guest. */
class HostImportError extends Error {}

/**
 * What one import call's arguments, or one export call's result, may copy
 * out of the guest: the memory cap, as wasmtime's hostcall fuel is set, so a
 * plugin pointing many strings at the same bytes cannot make the host
 * allocate many times its own memory. Strings are counted while jco decodes
 * them (their UTF-8 bytes, before the copy is made); lists at 32 bytes an
 * element once lifted (about what wasmtime charges; this thread's heap is
 * capped besides).
 */
let copied = 0;
const COPY_EXHAUSTED =
  'too much data is being copied between the host and the guest: fuel allocated for hostcalls has been exhausted';

function charge(bytes) {
  copied += bytes;
  if (copied > maxCopyBytes) throw new HostImportError(COPY_EXHAUSTED);
}

function chargeLists(value) {
  if (Array.isArray(value)) {
    charge(32 * value.length);
    for (const item of value) chargeLists(item);
  } else if (value !== null && typeof value === 'object') {
    for (const item of Object.values(value)) chargeLists(item);
  }
}

// jco lifts every string from the guest's memory through TextDecoder.
const decodeUtf8 = TextDecoder.prototype.decode;
TextDecoder.prototype.decode = function decode(input, options) {
  charge(input?.byteLength ?? 0);
  return decodeUtf8.call(this, input, options);
};

/**
 * The answers the host read ahead for the running call, `[{ name, args,
 * answer }]`, and how many were taken: the plugin's imports are answered from
 * them while they are exactly these, in this order; from the first other
 * import on, every one crosses.
 */
let preloads = null;
let preloadsUsed = 0;

/**
 * Calls import `name` on the main thread with `args` as the guest gave them,
 * charged as lifted; `sent` is what crosses, when the host converts them
 * first (see `decided` below).
 */
function hostCall(name, args, sent = args) {
  chargeLists(args);
  // What the next import or the export's result copies starts afresh.
  copied = 0;
  if (preloads !== null) {
    const next = preloads[preloadsUsed];
    if (next !== undefined && next.name === name && sameValue(next.args, sent)) {
      preloadsUsed += 1;
      return next.answer;
    }
    preloads = null;
  }
  send({ import: { name, args: sent } });
  const reply = receive();
  if ('failure' in reply) throw new HostImportError(reply.failure);
  return reply.value;
}

/**
 * A decided message as the main thread checks it, whatever the version
 * (versions.mjs): a typed record written as its JSON source.
 */
const decided = decidedMessage(contract);

const wasi = sandboxWasi();
const imports = {
  ...wasi.imports,
  'dsh:skill/registry': {
    snapshot: (known) => hostCall('snapshot', [known]),
    listSkills: (name) => hostCall('listSkills', [name]),
    getSkill: (name) => hostCall('getSkill', [name]),
    // Since 0.4.0: an earlier version's glue never calls these (versions.mjs).
    listSkillFiles: (name, limit) => hostCall('listSkillFiles', [name, limit]),
    readSkillFile: (name, path) => hostCall('readSkillFile', [name, path]),
  },
  'dsh:skill/session': {
    listUserMessages: (filters, before, limit) => hostCall('listUserMessages', [filters, before, limit]),
    getUserMessage: (seq) => hostCall('getUserMessage', [seq]),
  },
  'dsh:skill/step': {
    proposedMessages: () => hostCall('proposedMessages', []),
    decide: (messages) => hostCall('decide', [messages], [messages.map(decided)]),
  },
};

const { instantiate } = await import(moduleUrl);
let plugin = null;

// The plugin interface is that of the contract version the main thread
// found the component built for (contract.mjs), with the current version's
// values (versions.mjs). The imports above are jco's, unversioned: the main
// thread has checked that they are all of that version.

/** jco throws a `ComponentError` carrying the WIT `err` value as `payload`. */
function isDomainError(error) {
  return error instanceof Error && error.constructor.name === 'ComponentError' && Object.hasOwn(error, 'payload');
}

/** The next message the main thread posts, sleeping until there is one. */
function receive() {
  for (;;) {
    const received = receiveMessageOnPort(port);
    if (received !== undefined) return received.message;
    Atomics.store(wake, ASLEEP + GUEST_WAKE, 1);
    Atomics.wait(wake, GUEST_WAKE, 0);
    Atomics.store(wake, ASLEEP + GUEST_WAKE, 0);
    Atomics.store(wake, GUEST_WAKE, 0);
  }
}

/** Posts `message` to the main thread and wakes it. */
function send(message) {
  port.postMessage(message);
  Atomics.store(wake, HOST_WAKE, 1);
  if (Atomics.load(wake, ASLEEP + HOST_WAKE) !== 0) Atomics.notify(wake, HOST_WAKE);
}

function serve({ id, call, args, preloads: given = null }) {
  preloads = given;
  preloadsUsed = 0;
  try {
    // Instantiation runs the guest's start code: it happens inside the first
    // call, under that call's deadline.
    plugin ??= pluginInterface(instantiate((name) => core[name], imports), contract);
    copied = 0;
    let result;
    try {
      result = { tag: 'ok', val: plugin[call](...args) };
    } catch (error) {
      if (!isDomainError(error)) throw error;
      result = { tag: 'err', val: error.payload };
    }
    chargeLists(result.val);
    send({ id, result, preloadsUsed });
  } catch (error) {
    send({
      id,
      // A trap, the guest's exit, or the host failing an import: the
      // instance is not called again either way.
      trap: {
        // The host's own refusal reads as the host wrote it (as in skill-host).
        reason:
          error instanceof HostImportError
            ? error.message
            : error instanceof Error
              ? `${error.name}: ${error.message}`
              : String(error),
        stderr: wasi.stderr(),
      },
    });
  }
}

parentPort.postMessage({ ready: true });
for (;;) serve(receive());

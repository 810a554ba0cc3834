// The plugin's thread. Runs the transpiled component and nothing else, so the
// main thread can end a call at its deadline by terminating this Worker.
//
// The component's imports are synchronous, and the registry and the session
// live on the main thread: an import posts its arguments on `importPort` and
// sleeps on `signal` (Atomics.wait) until the main thread has posted the
// answer and woken it; `receiveMessageOnPort` then reads the answer
// synchronously.

import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';

import { sandboxWasi } from './sandbox-wasi.mjs';

const { moduleUrl, core, importPort, signal, maxCopyBytes } = workerData;
const flag = new Int32Array(signal);

/** A failure of the host while answering an import: it traps the guest. */
class HostImportError extends Error {}

/**
 * Roughly the bytes `value` takes: UTF-8 for strings, 16 per list element or
 * field besides. jco has already lifted the arguments in this thread (whose
 * heap is capped); what goes on to the main thread is capped here at the
 * memory cap, as wasmtime caps one import call's copy (its hostcall fuel), so
 * a plugin pointing many strings at the same bytes cannot make the host
 * allocate many times its own memory.
 */
function copiedBytes(value) {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (Array.isArray(value)) return value.reduce((sum, item) => sum + 16 + copiedBytes(item), 0);
  if (value !== null && typeof value === 'object') {
    return Object.values(value).reduce((sum, item) => sum + 16 + copiedBytes(item), 0);
  }
  return 8;
}

function hostCall(name, args) {
  if (copiedBytes(args) > maxCopyBytes) {
    throw new HostImportError(
      'too much data is being copied between the host and the guest: fuel allocated for hostcalls has been exhausted',
    );
  }
  Atomics.store(flag, 0, 0);
  importPort.postMessage({ name, args });
  Atomics.wait(flag, 0, 0);
  const reply = receiveMessageOnPort(importPort);
  if (!reply) throw new HostImportError(`no answer from the host for ${name}`);
  if ('failure' in reply.message) throw new HostImportError(reply.message.failure);
  return reply.message.value;
}

const wasi = sandboxWasi();
const imports = {
  ...wasi.imports,
  'dsh:skill/registry': {
    snapshot: (known) => hostCall('snapshot', [known]),
    listSkills: (name) => hostCall('listSkills', [name]),
    getSkill: (name) => hostCall('getSkill', [name]),
  },
  'dsh:skill/session': {
    listUserMessages: (filters, before, limit) => hostCall('listUserMessages', [filters, before, limit]),
    getUserMessage: (seq) => hostCall('getUserMessage', [seq]),
  },
  'dsh:skill/step': {
    proposedMessages: () => hostCall('proposedMessages', []),
    decide: (messages) => hostCall('decide', [messages]),
  },
};

const { instantiate } = await import(moduleUrl);
let plugin = null;

/** jco throws a `ComponentError` carrying the WIT `err` value as `payload`. */
function isDomainError(error) {
  return error instanceof Error && error.constructor.name === 'ComponentError' && Object.hasOwn(error, 'payload');
}

parentPort.on('message', ({ id, call, args }) => {
  try {
    // Instantiation runs the guest's start code: it happens inside the first
    // call, under that call's deadline.
    plugin ??= instantiate((name) => core[name], imports)['dsh:skill/plugin@0.1.0'];
    let result;
    try {
      result = { tag: 'ok', val: plugin[call](...args) };
    } catch (error) {
      if (!isDomainError(error)) throw error;
      result = { tag: 'err', val: error.payload };
    }
    parentPort.postMessage({ id, result });
  } catch (error) {
    parentPort.postMessage({
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
});

parentPort.postMessage({ ready: true });

// The sandbox: the component compiled once (core modules, memory capped,
// shared by every thread), a pool of Workers that each hold a configured
// instance and run one call at a time, and a deadline on every call. A call
// that runs past its deadline has its Worker terminated; a call that trapped
// has its Worker discarded: the instance is never called again, and the next
// call gets another. A Worker that dies while idle is dropped from the pool
// at once, so no call is ever handed a dead one.

import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';

import { transpiled } from './component.mjs';
import { contractVersion } from './contract.mjs';
import { capMemory } from './memory-cap.mjs';
import { Deadline } from './deadline.mjs';
import { HostError } from './errors.mjs';
import { DEFAULT_OUTPUT_LIMITS } from './output.mjs';

/**
 * A call's deadline and memory cap, and the caps on its output (see
 * output.mjs); the same defaults as the Rust host's `SandboxLimits`
 * (docs/spec.md §8: 1 s per call, 64 MiB of linear memory).
 *
 * The pool, which only this host has (`limits` may add each):
 * - `instances`: instances kept however long they stay idle (default 1);
 * - `maxInstances`: the most that exist at once (default `instances`): a
 *   call that finds every one busy at the cap waits for one, first come
 *   first served; below it, it starts one;
 * - `spareInstances`: idle instances kept ready beside the busy ones
 *   (default 0), started in the background as soon as fewer are idle, so a
 *   call that arrives while the others are busy (an agent's hung provider
 *   holds one for up to the wall-clock cap) does not wait the tens of
 *   milliseconds a new thread takes to start;
 * - `idleRetireMs`: an instance beyond `instances` that has been idle this
 *   long is ended, unless the busiest moment of the last such period still
 *   needs it with its spares (default 60 s).
 */
export const DEFAULT_LIMITS = Object.freeze({
  timeoutMs: 1000,
  memoryBytes: 64 * 1024 * 1024,
  ...DEFAULT_OUTPUT_LIMITS,
});

const DEFAULT_IDLE_RETIRE_MS = 60_000;

/** For tests: `sandbox[POOL]` is the pool's counts and the Workers of its idle instances. */
export const POOL = Symbol('the sandbox pool, for tests');

const WORKER_URL = new URL('./guest-worker.mjs', import.meta.url);

/**
 * The flags of `wake`: the one the guest's thread sleeps on (a call or an
 * import's answer is waiting) and the host's; and, beside each, whether
 * that thread is asleep, so a wake-up costs a notify (a system call) only
 * when someone sleeps. Atomics are sequentially consistent, so a sleeper
 * that has not yet set its flag finds the wake-up already there.
 */
export const GUEST_WAKE = 0;
export const HOST_WAKE = 1;
const ASLEEP = 2;

/**
 * How long the host's thread may block for a call's answer before it waits
 * asynchronously: a steady pre-step answers in tens of microseconds.
 */
const SYNC_WAIT_MS = 1;

/**
 * How long the host's thread watches for the answer before it sleeps: the
 * guest's answer then needs no wake-up of this thread at all.
 */
const SPIN_MS = 0.2;

/** Whether the guest signals the host within `ms`, watched without sleeping. */
function answeredWithin(wake, ms) {
  const until = performance.now() + ms;
  do {
    if (Atomics.load(wake, HOST_WAKE) !== 0) return true;
  } while (performance.now() < until);
  return false;
}

/** Sets flag `at` and wakes whoever sleeps on it. */
function wakeUp(wake, at) {
  Atomics.store(wake, at, 1);
  if (Atomics.load(wake, ASLEEP + at) !== 0) Atomics.notify(wake, at);
}

/** `Atomics.wait` on flag `at`, saying meanwhile that this thread sleeps. */
function sleepOn(wake, at, ms) {
  Atomics.store(wake, ASLEEP + at, 1);
  const woken = Atomics.wait(wake, at, 0, ms);
  Atomics.store(wake, ASLEEP + at, 0);
  return woken;
}

export class Sandbox {
  #moduleUrl;
  #core;
  /** The contract version the component is built for (`contract.mjs`), told to each guest thread. */
  #contract;
  #config;
  #limits;
  /** The pool's settings (see `DEFAULT_LIMITS`). */
  #base;
  #max;
  #spare;
  #retireMs;
  /**
   * Configured guest threads, each running at most one call at a time:
   * `#idle` holds those waiting for a call, the most recently used last (a
   * call takes the last, whose plugin memory is warm; a new one goes first,
   * and retirement looks from the first); `#live` every one (for `close`);
   * `#starting` counts those being started; `#waiting` the calls waiting
   * for one, first come first served, each handed the first instance that
   * is released or started; `#busy` the calls holding or waiting for one,
   * `#peakBusy` the most at once since the last retirement round.
   */
  #idle = [];
  #live = new Set();
  #starting = 0;
  #waiting = [];
  #busy = 0;
  #peakBusy = 0;
  /** Spares are started once the first instance is configured, and not after one failed to start until a call's does. */
  #sparesAllowed = false;
  #retireTimer = null;
  #nextId = 0;
  /** Told each call's name and wall time in milliseconds (the drop-in's `onCall` option). */
  #onCall;
  #closed = false;

  constructor(moduleUrl, core, contract, config, limits, onCall) {
    this.#moduleUrl = moduleUrl;
    this.#core = core;
    this.#contract = contract;
    this.#config = config;
    this.#limits = limits;
    this.#onCall = onCall;
    this.#base = Math.max(1, limits.instances ?? 1);
    this.#max = Math.max(this.#base, limits.maxInstances ?? this.#base);
    this.#spare = Math.max(0, limits.spareInstances ?? 0);
    this.#retireMs = limits.idleRetireMs ?? DEFAULT_IDLE_RETIRE_MS;
  }

  /**
   * Transpiles (or reuses the cached transpilation of) `component`, compiles
   * it, finds the contract version it is built for (a version this host does
   * not run, or imports of another version, fail to load here, as in
   * skill-host), and configures one instance, so a refused configuration
   * fails here with the plugin's own text.
   */
  static async create(component, config, limits = DEFAULT_LIMITS, { cacheDir, onCall } = {}) {
    let core;
    let moduleUrl;
    let contract;
    try {
      const files = await transpiled(component, cacheDir);
      moduleUrl = files.moduleUrl;
      const capped = capMemory(files.core, limits.memoryBytes);
      // Compiled here, once: each thread gets these modules, not bytes to compile again.
      core = Object.fromEntries(Object.entries(capped).map(([name, bytes]) => [name, new WebAssembly.Module(bytes)]));
      contract = contractVersion(component);
    } catch (error) {
      throw HostError.load(error instanceof Error ? error.message : String(error));
    }
    const sandbox = new Sandbox(moduleUrl, core, contract, config, limits, onCall);
    sandbox.#release(await sandbox.#acquire('configure'));
    sandbox.#sparesAllowed = true;
    sandbox.#fill();
    return sandbox;
  }

  get limits() {
    return this.#limits;
  }

  /**
   * Calls export `method` (jco's camelCase name) with `args` on a configured
   * instance, its imports answered by `host`. Resolves to the WIT result
   * `{tag, val}` for exports that return one, else `{tag:'ok', val}`.
   * `options`: `preloads`, answers the host read ahead (`[{ name, args,
   * answer }]`: the guest takes each while it asks exactly these imports, in
   * this order, and crosses for anything else), `onPreloadsUsed(count)`, told
   * how many it took, and `startedAt` (a `performance.now()` time), when the
   * call began for the wall-clock cap, if before this.
   */
  async call(name, method, args, host, options = {}) {
    const start = performance.now();
    const guest = await this.#acquire(name);
    try {
      const result = await this.#run(guest, name, method, args, host, true, options);
      this.#onCall?.(name, performance.now() - start);
      return result;
    } finally {
      this.#release(guest);
    }
  }

  /** Ends the guest threads (the process can then exit); later calls fail. */
  async close() {
    this.#closed = true;
    clearTimeout(this.#retireTimer);
    this.#retireTimer = null;
    for (const waiter of this.#waiting.splice(0)) waiter.reject(HostError.load('the sandbox was closed'));
    const live = [...this.#live];
    this.#live.clear();
    this.#idle = [];
    await Promise.all(live.map((guest) => guest.worker.terminate()));
  }

  get [POOL]() {
    return {
      live: this.#live.size,
      idle: this.#idle.length,
      busy: this.#busy,
      starting: this.#starting,
      idleWorkers: this.#idle.map((guest) => guest.worker),
    };
  }

  /**
   * A configured guest for one call: the warmest idle one; else the first
   * one released or started (one is started for this call unless enough
   * are starting already, or the pool is at its cap).
   */
  #acquire(name) {
    if (this.#closed) return Promise.reject(HostError.load('the sandbox was closed'));
    this.#busy += 1;
    if (this.#busy > this.#peakBusy) this.#peakBusy = this.#busy;
    for (let guest = this.#idle.pop(); guest !== undefined; guest = this.#idle.pop()) {
      // A thread that died idle leaves the pool as it exits (`#gone`); this is the rest of that.
      if (guest.dead !== null) {
        this.#live.delete(guest);
        continue;
      }
      if (this.#idle.length + this.#starting < this.#spare) this.#fill();
      return Promise.resolve(guest);
    }
    return new Promise((resolve, reject) => {
      this.#waiting.push({ name, resolve, reject });
      this.#fill();
    });
  }

  /** Back to the idle ones (or straight to a waiting call) after a call, unless the call failed it: then it is never called again. */
  #release(guest) {
    this.#busy -= 1;
    if (guest.failed || this.#closed) {
      this.#live.delete(guest);
      guest.worker.terminate();
      this.#fill();
    } else {
      this.#arrive(guest, false);
    }
  }

  /** A configured guest ready for a call: the first waiting call's, else idle (a `fresh` one under the warm ones). */
  #arrive(guest, fresh) {
    const waiter = this.#waiting.shift();
    if (waiter !== undefined) {
      waiter.resolve(guest);
      return;
    }
    guest.idleSince = performance.now();
    if (fresh) this.#idle.unshift(guest);
    else this.#idle.push(guest);
    if (this.#retireTimer === null && this.#live.size > this.#base) this.#armRetirement();
  }

  /**
   * Starts instances, within the cap: one for each waiting call that no
   * instance being started will serve, then spares until `spareInstances`
   * are idle or on their way. Each serves the first waiting call when it is
   * ready. A failed start fails the call it was started for, if that call
   * still waits (with that call's name, as spec §8.4 says); others then get
   * starts of their own.
   */
  #fill() {
    while (!this.#closed && this.#live.size + this.#starting < this.#max) {
      const waiter = this.#waiting.length > this.#starting ? this.#waiting[this.#starting] : null;
      const spare = this.#sparesAllowed && this.#idle.length + this.#starting - this.#waiting.length < this.#spare;
      if (waiter === null && !spare) return;
      this.#starting += 1;
      this.#start(waiter?.name ?? 'configure').then(
        (guest) => {
          this.#starting -= 1;
          if (this.#closed) {
            guest.worker.terminate();
            return;
          }
          this.#live.add(guest);
          if (waiter !== null) this.#sparesAllowed = true;
          this.#arrive(guest, true);
        },
        (error) => {
          this.#starting -= 1;
          if (waiter === null) {
            // Not retried in a loop: the next call that needs a start shows whether it works again.
            this.#sparesAllowed = false;
          } else {
            const at = this.#waiting.indexOf(waiter);
            if (at !== -1) {
              this.#waiting.splice(at, 1);
              this.#busy -= 1;
              waiter.reject(error);
            }
          }
          this.#fill();
        },
      );
    }
  }

  /** A guest whose thread ended while it was idle: out of the pool, and replaced if a call or the spares need it. */
  #gone(guest) {
    const at = this.#idle.indexOf(guest);
    if (at === -1) return;
    this.#idle.splice(at, 1);
    this.#live.delete(guest);
    this.#fill();
  }

  #armRetirement() {
    this.#retireTimer = setTimeout(() => this.#retire(), this.#retireMs);
    this.#retireTimer.unref();
  }

  /**
   * Ends the instances beyond `instances` that have been idle for
   * `idleRetireMs`, keeping as many as the busiest moment of that period
   * used plus the spares: a steady load keeps its instances, a burst's are
   * given back once it is over.
   */
  #retire() {
    this.#retireTimer = null;
    if (this.#closed) return;
    const keep = Math.max(this.#base, this.#peakBusy + this.#spare);
    this.#peakBusy = this.#busy;
    const now = performance.now();
    for (let at = 0; at < this.#idle.length && this.#live.size > keep; ) {
      const guest = this.#idle[at];
      if (now - guest.idleSince < this.#retireMs) {
        at += 1;
        continue;
      }
      this.#idle.splice(at, 1);
      this.#live.delete(guest);
      guest.worker.terminate();
    }
    if (this.#live.size > this.#base) this.#armRetirement();
  }

  /** A new thread with a configured instance (its configuration waits asynchronously, so it never blocks this thread). */
  async #start(name) {
    const guest = await this.#spawn();
    const answer = await this.#run(guest, name, 'configure', [this.#config], null, false);
    if (answer.tag === 'err') {
      await guest.worker.terminate();
      throw HostError.config(answer.val);
    }
    if (this.#closed) {
      await guest.worker.terminate();
      throw HostError.load('the sandbox was closed');
    }
    return guest;
  }

  async #spawn() {
    // The two threads wake each other through `wake` (see guest-worker.mjs):
    // a message on the channel, then a flag set and notified. Neither side
    // goes through its event loop to see it, which is what makes a call cost
    // tens of microseconds rather than hundreds.
    const wake = new Int32Array(new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT));
    const debug = Boolean(process.env.SKILL_HOST_NODE_DEBUG);
    const { port1, port2 } = new MessageChannel();
    const worker = new Worker(WORKER_URL, {
      workerData: {
        moduleUrl: this.#moduleUrl,
        core: this.#core,
        contract: this.#contract,
        port: port2,
        wake,
        maxCopyBytes: this.#limits.memoryBytes,
        debug,
      },
      transferList: [port2],
      // Nothing of this process reaches the guest's thread: no environment,
      // no arguments, its console captured and thrown away.
      env: {},
      argv: [],
      execArgv: [],
      stdin: false,
      stdout: true,
      stderr: true,
      // Bounds the JavaScript heap of the glue; the guest's linear memory is
      // capped in the core module itself (memory-cap.mjs).
      resourceLimits: { maxOldGenerationSizeMb: 256 },
    });
    // SKILL_HOST_NODE_DEBUG=1 shows what jco's glue logs in the guest's
    // thread. Otherwise the thread discards it itself (guest-worker.mjs): a
    // stream read here would keep this process alive as long as the thread.
    if (debug) worker.stderr.pipe(process.stderr);
    // `host` answers the imports of its running call and `clock` is that
    // call's deadline; `failed` means the thread is never called again.
    const guest = { worker, port: port1, wake, pending: null, dead: null, host: null, clock: null, failed: false };
    let onMessage;
    let onError;
    let onExit;
    const ready = new Promise((resolve, reject) => {
      onMessage = (message) => (message?.ready ? resolve() : reject(new Error('unexpected first message')));
      onError = reject;
      onExit = (code) => reject(new Error(`the plugin's thread exited (${code}) while starting`));
      worker.once('message', onMessage).once('error', onError).once('exit', onExit);
    });
    try {
      await ready;
    } catch (error) {
      await worker.terminate();
      throw HostError.load(error.message);
    }
    worker.off('message', onMessage).off('error', onError).off('exit', onExit);
    worker.on('error', (error) => guest.pending?.fail(error));
    worker.on('exit', (code) => {
      guest.dead = code;
      guest.failed = true;
      if (guest.pending !== null) guest.pending.fail(new Error(`the plugin's thread exited (${code})`));
      else this.#gone(guest);
    });
    worker.unref();
    return guest;
  }

  /**
   * Reads what the guest posts while a call is pending: import requests,
   * answered here, and the call's outcome. Waits with `Atomics.waitAsync`,
   * so this thread stays free meanwhile; a call someone waits for (`sync`)
   * first watches and blocks briefly, a spare's configuration never does.
   */
  async #pump(guest, sync) {
    const call = guest.pending;
    while (guest.pending === call && call !== null) {
      // Most calls answer within microseconds: sleep for them right here
      // (a wake-up is then one futex, not a task through the event loop),
      // then, for longer calls, wait without holding this thread.
      const answered =
        sync && (answeredWithin(guest.wake, SPIN_MS) || sleepOn(guest.wake, HOST_WAKE, SYNC_WAIT_MS) !== 'timed-out');
      if (!answered) {
        Atomics.store(guest.wake, ASLEEP + HOST_WAKE, 1);
        const waited = Atomics.waitAsync(guest.wake, HOST_WAKE, 0);
        if (waited.async) await waited.value;
        Atomics.store(guest.wake, ASLEEP + HOST_WAKE, 0);
      }
      Atomics.store(guest.wake, HOST_WAKE, 0);
      for (let received = receiveMessageOnPort(guest.port); received !== undefined; received = receiveMessageOnPort(guest.port)) {
        const message = received.message;
        if (message.import === undefined) {
          call.settle(message);
          continue;
        }
        const answering = this.#answer(guest, message.import);
        if (answering !== undefined) await answering;
      }
    }
  }

  /**
   * Answers one import: at once when the host's answer is a value, or
   * (returning a promise) once a host that answers asynchronously has: the
   * DeepSeek Harness bridge, dsh/bridge.mjs. The guest sleeps meanwhile, so
   * its deadline, which bounds the plugin's own work, pauses until then.
   */
  #answer(guest, { name, args }) {
    const reply = (message) => {
      if (guest.pending === null) return;
      guest.port.postMessage(message);
      wakeUp(guest.wake, GUEST_WAKE);
    };
    const failure = (error) => ({ failure: error instanceof Error ? error.message : String(error) });
    let value;
    try {
      if (guest.host === null) throw new Error(`import ${name} called outside a plugin call`);
      value = guest.host[name](...args);
    } catch (error) {
      reply(failure(error));
      return undefined;
    }
    if (!(value instanceof Promise)) {
      reply({ value });
      return undefined;
    }
    const clock = guest.clock;
    clock?.pause();
    return value.then(
      (answer) => ({ value: answer }),
      (error) => failure(error),
    ).then((message) => {
      clock?.resume();
      reply(message);
    });
  }

  #run(guest, name, method, args, host, sync, { preloads = null, onPreloadsUsed, startedAt } = {}) {
    const id = (this.#nextId += 1);
    guest.host = host;
    const timeoutMs = this.#limits.timeoutMs;
    return new Promise((resolve, reject) => {
      let timedOut = null;
      // An expired call's thread is never used again, even if its answer
      // arrives before the thread has exited.
      const expire = () => {
        guest.failed = true;
        guest.worker.terminate();
      };
      // The deadline pauses while an asynchronous host answers; the
      // wall-clock cap on the whole call does not, so a plugin cannot stall
      // the caller by asking the host over and over.
      const wallMs = this.#limits.wallTimeoutMs ?? null;
      const clock = new Deadline(
        timeoutMs,
        () => {
          timedOut = HostError.timeout(name, timeoutMs);
          expire();
        },
        wallMs,
        () => {
          timedOut = HostError.wallTimeout(name, wallMs);
          expire();
        },
        startedAt,
      );
      guest.clock = clock;
      const finish = (outcome) => {
        clock.stop();
        if (guest.clock === clock) guest.clock = null;
        guest.pending = null;
        guest.host = null;
        // Ends the pump's wait.
        wakeUp(guest.wake, HOST_WAKE);
        outcome();
      };
      const failed = (error) => {
        // Never call into an instance that failed: drop its thread.
        guest.failed = true;
        guest.worker.terminate();
        reject(error);
      };
      guest.pending = {
        settle: (message) => {
          if (message.id !== id || timedOut !== null) return;
          if (message.preloadsUsed > 0) onPreloadsUsed?.(message.preloadsUsed);
          finish(() => (message.trap ? failed(this.#classify(name, message.trap)) : resolve(message.result)));
        },
        fail: (error) => {
          finish(() => {
            if (timedOut !== null) failed(timedOut);
            // close() ended the thread under the call: not the plugin's doing.
            else if (this.#closed) failed(HostError.load('the sandbox was closed'));
            else if (error?.code === 'ERR_WORKER_OUT_OF_MEMORY') failed(HostError.memory(name, this.#limits.memoryBytes));
            else failed(HostError.trap(name, error instanceof Error ? error.message : String(error), ''));
          });
        },
      };
      if (guest.dead !== null) {
        guest.pending.fail(new Error(`the plugin's thread exited (${guest.dead})`));
        return;
      }
      guest.port.postMessage(preloads === null ? { id, call: method, args } : { id, call: method, args, preloads });
      wakeUp(guest.wake, GUEST_WAKE);
      this.#pump(guest, sync).catch((error) => guest.pending?.fail(error));
    });
  }

  #classify(name, { reason, stderr }) {
    // Growing memory past the cap fails inside the guest; Rust's allocator
    // then reports it on stderr and aborts.
    if (/memory allocation of \d+ bytes failed/.test(stderr)) return HostError.memory(name, this.#limits.memoryBytes);
    return HostError.trap(name, reason, stderr);
  }
}

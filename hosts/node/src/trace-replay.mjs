// Replays a trace (docs/spec.md §7.2) in this host: the real sandbox
// (sandbox.mjs, one thread per instance the trace names) and the real
// checks (plugin.mjs, output.mjs, record.mjs), with every import answered
// from the trace instead of a registry or a session. The answers take the
// same way as any host's: `TraceHost` is a `CallContext` that the sandbox
// calls from the plugin's thread through its channel, so the guest thread,
// its version adapters (an earlier version's values converted to the
// current one's, versions.mjs), the copy limits and the host checks are
// those of every other call: a `file` value must name a file the trace
// answered `text` for during that call, as a registry would have.

import { contractVersion } from './contract.mjs';
import { HostError } from './errors.mjs';
import { CallContext } from './host-imports.mjs';
import { isObject, parse, stringify } from './json.mjs';
import { Plugin } from './plugin.mjs';
import { Sandbox } from './sandbox.mjs';
import { newMessageId } from './session.mjs';
import { IMPORTS, MESSAGE, RETURNS, STEP_CONTEXT, toJco, toTrace, TraceValueError } from './trace-values.mjs';

/** A trace file that is not the format of docs/spec.md §7.2. */
export class TraceFormatError extends Error {}

/** The trace format this replays (its `trace` field). */
const TRACE_FORMAT = 1;

/** The failures of a call that end its instance (`HostError` kinds): a trap, the deadline, the memory cap. */
const TRAPPED = new Set(['trap', 'timeout', 'memory', 'load']);

const CALLS = new Set(['configure', 'definition', 'pre-step', 'invoke', 'system-prompt', 'expand']);

/** wasmtime's text for a copy beyond the memory budget, which this host words alike (guest-worker.mjs). */
const COPY_EXHAUSTED = 'too much data is being copied between the host and the guest: ';

/** The longest value a mismatch line quotes. */
const QUOTE_CHARS = 300;

/**
 * Replays `trace` (its JSON text) against `component` (bytes). Resolves to
 * the mismatches, one line each (none when this host agrees with the
 * trace). Throws `TraceFormatError` for a malformed trace, and the
 * `HostError` of a component this host refuses to load. `options`:
 * `cacheDir` (src/component.mjs), and, for tests, `sandbox`, what makes
 * each instance in place of `Sandbox` (its `create`).
 */
export async function replayTrace(component, text, { cacheDir, sandbox = Sandbox } = {}) {
  const trace = readTrace(text);
  let contract;
  try {
    contract = contractVersion(component);
  } catch (error) {
    throw HostError.load(error.message);
  }
  if (contract !== trace.contract) {
    return [`the component is built for dsh:skill@${contract}, the trace for ${trace.contract}`];
  }
  const limits = {
    timeoutMs: trace.limits.timeout_ms,
    memoryBytes: trace.limits.memory_bytes,
    maxAddedMessages: trace.limits.max_added_messages,
    maxTextBytes: trace.limits.max_text_bytes,
    maxOutputBytes: trace.limits.max_output_bytes,
  };
  const replay = new Replay(component, limits, cacheDir, sandbox);
  try {
    for (const [index, call] of trace.calls.entries()) {
      if (!(await replay.call(index, call))) break;
    }
  } finally {
    await replay.close();
  }
  return replay.mismatches;
}

function readTrace(text) {
  let trace;
  try {
    trace = parse(text);
  } catch (error) {
    throw new TraceFormatError(`not JSON: ${error.message}`);
  }
  const invalid = (what) => new TraceFormatError(what);
  if (!isObject(trace) || trace.trace !== TRACE_FORMAT) throw invalid(`not a trace of format ${TRACE_FORMAT}`);
  if (typeof trace.contract !== 'string' || typeof trace.config !== 'string') throw invalid('no `contract` or `config` text');
  const limits = trace.limits;
  for (const key of ['timeout_ms', 'memory_bytes', 'max_added_messages', 'max_text_bytes', 'max_output_bytes']) {
    if (!isObject(limits) || !Number.isSafeInteger(limits[key]) || limits[key] < 0) throw invalid(`no limit \`${key}\``);
  }
  if (!Array.isArray(trace.calls)) throw invalid('no `calls` list');
  trace.calls.forEach((call, index) => {
    const valid =
      isObject(call) &&
      Number.isSafeInteger(call.instance) &&
      CALLS.has(call.call) &&
      isObject(call.args) &&
      Array.isArray(call.imports) &&
      call.imports.every((entry) => isObject(entry) && typeof entry.import === 'string' && isObject(entry.args)) &&
      Object.hasOwn(call, 'returned') &&
      isObject(call.outcome) &&
      (Object.hasOwn(call.outcome, 'ok') || typeof call.outcome.error === 'string');
    if (!valid) throw invalid(`call ${index} is not \`{instance, call, args, imports, returned, outcome}\``);
  });
  return trace;
}

/** A value as one line quotes it. */
function quote(value) {
  return clip(stringify(plain(value)), 0);
}

/** `text` from `start` on, at most `QUOTE_CHARS` of it, with `…` where it was cut. */
function clip(text, start) {
  const end = start + QUOTE_CHARS;
  return `${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`;
}

/** Two values that differ, quoted from a little before the first character where they part. */
function contrast(ours, theirs) {
  const [a, b] = [stringify(plain(ours)), stringify(plain(theirs))];
  let at = 0;
  while (at < a.length && a[at] === b[at]) at += 1;
  // From the start when the difference shows there, else from a little before it.
  const start = at + 60 <= QUOTE_CHARS ? 0 : at - 60;
  return [clip(a, start), clip(b, start)];
}

/** `value` with every object a fresh plain one (so `stringify` sorts every key, `keepKeyOrder`'s too). */
function plain(value) {
  if (Array.isArray(value)) return value.map(plain);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plain(item)]));
  return value;
}

const same = (a, b) => stringify(plain(a)) === stringify(plain(b));

/** `what` (this host's `ours`), and the trace's `theirs`, as a mismatch line says it. */
function differs(what, ours, theirs) {
  const [a, b] = contrast(ours, theirs);
  return `${what} ${a}, the trace's ${b}`;
}

/** One trace call's imports as the plugin takes them, and where it parted from them. */
class ImportList {
  constructor(entries, deadline) {
    this.entries = entries;
    /** Whether the call ended at its deadline: then the last import may repeat. */
    this.deadline = deadline;
    this.next = 0;
    /** Lines for the mismatches found while answering. */
    this.mismatches = [];
    /** The mismatch that ended the call, if one did. */
    this.diverged = null;
  }
}

/**
 * A `CallContext` whose imports are answered from one call's list of a
 * trace (`ImportList`). Each import must be the next listed, with the same
 * arguments; this host's own checks that need no registry or session (the
 * source-filter cap, the step interface only in a pre-step) still run, and
 * a pre-step's decision is still recorded for `applyDecision`.
 */
class TraceHost extends CallContext {
  #list;

  constructor(options, list) {
    super({ ...options, registry: null, session: null });
    this.#list = list;
  }

  snapshot(known) {
    return this.#answer('snapshot', [known], () => super.snapshot(known));
  }

  listSkills(name) {
    return this.#answer('listSkills', [name], () => super.listSkills(name));
  }

  getSkill(name) {
    return this.#answer('getSkill', [name], () => super.getSkill(name));
  }

  listSkillFiles(name, limit) {
    return this.#answer('listSkillFiles', [name, limit], () => super.listSkillFiles(name, limit));
  }

  readSkillFile(name, path) {
    return this.#answer('readSkillFile', [name, path], () => super.readSkillFile(name, path));
  }

  listUserMessages(filters, before, limit) {
    return this.#answer('listUserMessages', [filters, before, limit], () => super.listUserMessages(filters, before, limit));
  }

  getUserMessage(seq) {
    return this.#answer('getUserMessage', [seq], () => super.getUserMessage(seq));
  }

  proposedMessages() {
    return this.#answer('proposedMessages', [], () => super.proposedMessages());
  }

  decide(messages) {
    return this.#answer('decide', [messages], () => super.decide(messages));
  }

  /** This import as the trace writes it: `step.decide` outside a pre-step has no arguments there, as skill-host traces it. */
  #traced(method, args) {
    const { name, params } = IMPORTS[method];
    if (method === 'decide' && this.step === null) return { import: name, args: {} };
    return { import: name, args: Object.fromEntries(params.map(([param, type], at) => [param, toTrace(type, args[at])])) };
  }

  #answer(method, args, own) {
    const list = this.#list;
    const made = this.#traced(method, args);
    const at = list.next;
    let entry = list.entries[at];
    if (entry === undefined) {
      const last = list.entries.at(-1);
      const repeat = list.deadline && last !== undefined && last.import === made.import && same(last.args, made.args);
      if (!repeat) {
        return this.#diverge(
          `import ${at}: the plugin called ${made.import} ${quote(made.args)} after the ${list.entries.length} imports the trace lists`,
        );
      }
      entry = last;
    } else if (entry.import !== made.import || !same(entry.args, made.args)) {
      const [ours, theirs] = entry.import === made.import ? contrast(made.args, entry.args) : [quote(made.args), quote(entry.args)];
      return this.#diverge(`import ${at}: the plugin called ${made.import} ${ours}, the trace has ${entry.import} ${theirs}`);
    } else {
      list.next += 1;
    }
    // This host's own answer, where it needs no registry or session: a trap it would end the call with, or the proposal.
    let ownTrap = null;
    let ownAnswer;
    try {
      ownAnswer = own();
    } catch (error) {
      ownTrap = error.message;
    }
    if (Object.hasOwn(entry, 'trap')) {
      if (ownTrap !== null && ownTrap !== entry.trap) {
        list.mismatches.push(`import ${at} (${made.import}): this host traps with ${quote(ownTrap)}, the trace with ${quote(entry.trap)}`);
      }
      // A trap this host decides without a registry or session (the step
      // interface outside a pre-step, too many source filters) it must make too.
      if (ownTrap === null && OWN_TRAPS.has(method)) {
        list.mismatches.push(`import ${at} (${made.import}): this host answers, the trace traps with ${quote(entry.trap)}`);
      }
      throw new Error(entry.trap);
    }
    if (ownTrap !== null) {
      list.mismatches.push(`import ${at} (${made.import}): this host traps with ${quote(ownTrap)}, the trace answers`);
    }
    const { result } = IMPORTS[method];
    if (method === 'proposedMessages' && ownTrap === null && !same(toTrace(result, ownAnswer), entry.answer)) {
      list.mismatches.push(`import ${at} (${made.import}): ${differs("this host's proposal is", toTrace(result, ownAnswer), entry.answer)}`);
    }
    try {
      return toJco(result, entry.answer);
    } catch (error) {
      if (!(error instanceof TraceValueError)) throw error;
      return this.#diverge(`import ${at} (${made.import}): the trace's answer ${error.message}`);
    }
  }

  /** Ends the call: the plugin parted from the trace, which has nothing more to answer. */
  #diverge(line) {
    this.#list.diverged = line;
    throw new Error(`the trace replay stopped: ${line}`);
  }
}

/**
 * The imports whose traps this host decides on its own (spec §8.4): the
 * step interface outside a pre-step, more than 16 source filters. A
 * session's own failures (a rewritten file) it cannot see in a replay.
 */
const OWN_TRAPS = new Set(['proposedMessages', 'decide', 'listUserMessages']);

/** The sandbox as a `Plugin` uses it, noting each call's arguments and what the export returned. */
class WatchedSandbox {
  #sandbox;

  constructor(sandbox) {
    this.#sandbox = sandbox;
    this.args = null;
    this.host = null;
    this.returned = null;
  }

  get limits() {
    return this.#sandbox.limits;
  }

  async call(name, method, args, host, options) {
    this.args = args;
    this.host = host;
    this.returned = null;
    this.returned = await this.#sandbox.call(name, method, args, host, options);
    return this.returned;
  }

  close() {
    return this.#sandbox.close();
  }
}

/** The replay of one trace: its instances, and what disagreed. */
class Replay {
  #component;
  #limits;
  #cacheDir;
  /** What makes an instance: `Sandbox`, or a test's stand-in with its `create`. */
  #Sandbox;
  /** Instance number → `{ plugin, sandbox }` (a `WatchedSandbox`). */
  #instances = new Map();
  /** Instances whose call trapped: never called again. */
  #ended = new Set();
  mismatches = [];

  constructor(component, limits, cacheDir, SandboxClass) {
    this.#component = component;
    this.#limits = limits;
    this.#cacheDir = cacheDir;
    this.#Sandbox = SandboxClass;
  }

  async close() {
    await Promise.all([...this.#instances.values()].map(({ sandbox }) => sandbox.close()));
    this.#instances.clear();
  }

  /** Replays call `index`; false when the replay cannot go on (the plugin parted from the trace). */
  async call(index, call) {
    const label = `call ${index} (${call.call} on instance ${call.instance})`;
    const mismatch = (line) => this.mismatches.push(`${label}: ${line}`);
    if (call.call === 'configure') return this.#configure(call, mismatch);
    const instance = this.#instances.get(call.instance);
    if (instance === undefined) {
      mismatch(
        this.#ended.has(call.instance)
          ? 'the trace calls an instance again after its call trapped'
          : 'the trace names an instance no `configure` call made',
      );
      return false;
    }
    const deadline = typeof call.outcome.error === 'string' && / exceeded its deadline of \d+ ms$/.test(call.outcome.error);
    const list = new ImportList(call.imports, deadline);
    const Host = class extends TraceHost {
      constructor(options) {
        super(options, list);
      }
    };
    let outcome;
    let trapped = false;
    instance.sandbox.returned = null;
    try {
      outcome = { ok: await this.#run(instance, call, Host, mismatch) };
    } catch (error) {
      if (!(error instanceof HostError)) throw error;
      outcome = { error: error.message };
      // An instance whose call trapped is not called again; one whose output was refused is.
      trapped = TRAPPED.has(error.kind);
      if (trapped) this.#drop(call.instance);
    }
    for (const line of list.mismatches) mismatch(line);
    if (list.diverged !== null) {
      mismatch(list.diverged);
      return false;
    }
    if (list.next < list.entries.length) {
      mismatch(`the plugin made ${list.next} imports, the trace lists ${list.entries.length}`);
    }
    const returned = returnedOf(call.call, instance.sandbox.returned);
    if (!same(returned, call.returned)) mismatch(differs('it returned', returned, call.returned));
    this.#compareOutcome(call, outcome, mismatch);
    // A call that trapped in one host only leaves the instances apart: nothing after it would be comparable.
    return trapped === (call.returned === null);
  }

  #drop(number) {
    const instance = this.#instances.get(number);
    this.#instances.delete(number);
    this.#ended.add(number);
    instance?.sandbox.close();
  }

  async #configure(call, mismatch) {
    if (this.#instances.has(call.instance) || this.#ended.has(call.instance)) {
      mismatch('the trace configures an instance it made before');
      return false;
    }
    if (typeof call.args.config !== 'string') {
      mismatch('its `args` have no `config` text');
      return false;
    }
    if (call.imports.length > 0) mismatch('the trace lists imports of a `configure` call, which this host calls without any');
    let outcome;
    let returned;
    try {
      const sandbox = new WatchedSandbox(await this.#Sandbox.create(this.#component, call.args.config, this.#limits, { cacheDir: this.#cacheDir }));
      this.#instances.set(call.instance, { plugin: new Plugin(sandbox), sandbox });
      outcome = { ok: null };
      returned = { Ok: null };
    } catch (error) {
      if (!(error instanceof HostError)) throw error;
      outcome = { error: error.message };
      // A refused configuration is the export's `err`; anything else ended the call.
      returned = error.kind === 'config' ? { Err: error.message } : null;
      this.#ended.add(call.instance);
    }
    if (!same(returned, call.returned)) mismatch(differs('it returned', returned, call.returned));
    this.#compareOutcome(call, outcome, mismatch);
    return ('error' in outcome) === ('error' in call.outcome);
  }

  /** Runs the call's export through `Plugin`, checking that it is called with the trace's arguments; resolves to its outcome in the trace's terms. */
  async #run({ plugin, sandbox }, call, Host, mismatch) {
    const argsAre = (made) => {
      if (!same(made, call.args)) mismatch(differs('this host called it with', made, call.args));
    };
    const text = (key) => {
      if (typeof call.args[key] !== 'string') throw new TraceFormatError(`a \`${call.call}\` call's \`args\` have no \`${key}\` text`);
      return call.args[key];
    };
    switch (call.call) {
      case 'definition':
        return this.#watching(sandbox, () => plugin.definition(Host), () => argsAre({}));
      case 'system-prompt':
        return this.#watching(sandbox, () => plugin.systemPrompt(null, null, Host), () => argsAre({}));
      case 'expand':
        return this.#watching(sandbox, () => plugin.expand(null, null, text('text'), Host), () =>
          argsAre({ text: sandbox.args[0] }),
        );
      case 'invoke': {
        const outcome = await this.#watching(sandbox, () => plugin.invoke(null, null, text('arguments'), Host), () =>
          argsAre({ arguments: sandbox.args[0] }),
        );
        if ('error' in outcome) return { error: outcome.error };
        const { loaded } = outcome;
        return {
          value: outcome.ok,
          text: outcome.text,
          loaded: loaded === null ? null : { name: loaded.name, provider: loaded.provider, body_digest: loaded.bodyDigest },
        };
      }
      case 'pre-step':
        return this.#preStep(plugin, sandbox, call, Host, argsAre);
      default:
        throw new TraceFormatError(`no call \`${call.call}\``);
    }
  }

  /** Runs `run`, checking the arguments (`check`) once the sandbox was called, whether or not the call then failed. */
  async #watching(sandbox, run, check) {
    sandbox.args = null;
    try {
      return await run();
    } finally {
      if (sandbox.args !== null) check();
    }
  }

  /**
   * A pre-step with the trace's step context and proposal: the proposed
   * messages as the log would hold them (the host's own copies, which a
   * kept message is), a reject with the reason the trace's outcome names
   * (the plugin is never told it, so the trace holds it nowhere else).
   */
  async #preStep(plugin, sandbox, call, Host, argsAre) {
    let context;
    let proposed;
    try {
      context = toJco(STEP_CONTEXT, call.args.context);
      proposed = toJco({ kind: 'list', of: MESSAGE }, call.args.proposed);
    } catch (error) {
      if (!(error instanceof TraceValueError)) throw error;
      throw new TraceFormatError(`a pre-step's \`args\`: ${error.message}`);
    }
    const reason = isObject(call.outcome.ok) && Object.hasOwn(call.outcome.ok, 'reject') ? call.outcome.ok.reject : null;
    const decision =
      context.proposal.tag === 'reject' ? { reject: reason } : { enter: proposed.map((message) => logMessage(message)) };
    const registry = { cachedRevision: () => context.registryRevision };
    const session = { key: context.session, historyVersion: context.historyVersion };
    const input = { cwd: null, toolView: context.toolView, aborted: () => context.aborted };
    const result = await this.#watching(sandbox, () => plugin.preStep(registry, session, input, decision, Host), () =>
      argsAre({
        context: toTrace(STEP_CONTEXT, sandbox.args[0]),
        proposed: toTrace({ kind: 'list', of: MESSAGE }, sandbox.host.step.proposed),
      }),
    );
    if (result.aborted) return 'aborted';
    if ('reject' in result.decision) return { reject: result.decision.reject };
    return { enter: result.decision.enter.map(({ id, ...message }) => message) };
  }

  /**
   * Compares this host's outcome with the trace's: exactly, but for a trap
   * the engine describes (docs/spec.md §7.2), where this host must trap too,
   * and a guest panic's location and message must be the trace's.
   */
  #compareOutcome(call, outcome, mismatch) {
    const expected = call.outcome;
    const trapped = `plugin call \`${call.call}\` trapped: `;
    if (typeof expected.error === 'string' && expected.error.startsWith(trapped)) {
      const detail = expected.error.slice(trapped.length);
      const hostTraps = call.imports.filter((entry) => Object.hasOwn(entry, 'trap')).map((entry) => entry.trap);
      if (!hostTraps.includes(detail) && !detail.startsWith(COPY_EXHAUSTED)) {
        const panic = /^the guest panicked at (\S+): ([\s\S]*)$/.exec(detail);
        const seen = outcome.error;
        const alike =
          typeof seen === 'string' &&
          seen.startsWith(trapped) &&
          (panic === null || (seen.includes(`panicked at ${panic[1]}`) && seen.includes(panic[2])));
        if (!alike) mismatch(differs('its outcome is', outcome, expected));
        return;
      }
    }
    if (!same(outcome, expected)) mismatch(differs('its outcome is', outcome, expected));
  }
}

/** What export `call` returned (the sandbox's `{ tag, val }`, or null when it trapped) as a trace writes it. */
function returnedOf(call, returned) {
  if (returned === null) return null;
  const type = RETURNS[call];
  // An export without a `result` (`definition`) comes back as `{ tag: 'ok', val }`.
  return toTrace(type, type.kind === 'result' ? returned : returned.val);
}

/** A proposed message as the log holds it: the WIT message's source parsed, its blocks in the log's shape, a fresh id. */
function logMessage({ source, content }) {
  const blocks = content.map((block) => (block.tag === 'text' ? { type: 'text', text: block.val } : parse(block.val)));
  return { content: blocks, source: parse(source), role: 'user', id: newMessageId() };
}

// Calls answered without running the plugin again. A plugin's memory is
// invisible in what it returns (docs/spec.md §9.2): a call's result is a
// function of its inputs and of what its imports answered. So a `skill` call
// with the arguments of an earlier one, whose registry reads get the same
// answers again, returns that call's (already checked) outcome; and a
// pre-step with the context of the session's last steady step, which read
// nothing and decided nothing, leaves the proposal as that one did. The host
// asks the registry what the plugin asked, as the plugin would; only the
// crossing into the sandbox is saved. A `skill` call that cannot be recalled
// is handed what it will read first, read ahead, so that it crosses once
// rather than once per import. Opt-in per `Plugin` (the drop-in).

import { sameValue } from './json.mjs';
import { isSkillFilePath } from './host-imports.mjs';
import { isSkillName } from './record.mjs';

/** The component's imports (wit/world.wit): what a `Recording` forwards. */
const IMPORTS = [
  'snapshot',
  'listSkills',
  'getSkill',
  'listSkillFiles',
  'readSkillFile',
  'listUserMessages',
  'getUserMessage',
  'proposedMessages',
  'decide',
];

/**
 * The imports that only read the registry: a call that made no others can
 * be recalled (a skill's files too: a file value is recalled only when the
 * registry answers the same text for it again, so the host check on the
 * call, which the recalled outcome passed, holds for this one).
 */
const REGISTRY_READS = new Set(['snapshot', 'listSkills', 'getSkill', 'listSkillFiles', 'readSkillFile']);

/** The most `skill` calls remembered (by their argument text), and sessions (by key). */
const MAX_CALLS = 64;
const MAX_SESSIONS = 1024;

/**
 * A host that forwards every import to `host` and keeps what each was asked
 * and answered, in order (`reads`), and whether anything but a registry read
 * was made (`other`).
 */
class Recording {
  reads = [];
  other = false;
  /** Answers read ahead for the guest (`[{ name, args, answer }]`), or null: see `Sandbox.call`. */
  preloads = null;

  constructor(host) {
    for (const name of IMPORTS) {
      this[name] = (...args) => {
        const answer = host[name](...args);
        if (!REGISTRY_READS.has(name)) {
          this.other = true;
          return answer;
        }
        const read = { name, args, answer };
        this.reads.push(read);
        if (!(answer instanceof Promise)) return answer;
        return answer.then((value) => {
          read.answer = value;
          return value;
        });
      };
    }
  }

  /** The guest took the first `count` preloaded answers, before any import it made across. */
  preloadsUsed(count) {
    this.reads = [...this.preloads.slice(0, count), ...this.reads];
  }
}

/** Asks `host` import `name` with `args`: `{ name, args, answer }`. */
async function read(host, name, args) {
  let answer = host[name](...args);
  if (answer instanceof Promise) answer = await answer;
  return { name, args, answer };
}

/**
 * What a `skill` call loading `name` reads first (docs/spec.md §3.3): the
 * registry's winner of that name, then, when the winner is one the model may
 * invoke, the skill itself, or, for a `path`, that file of it. A guess read ahead for the guest, which takes
 * only what it asks for.
 */
async function loadReads(host, argumentsText) {
  let name;
  let path;
  try {
    const value = JSON.parse(argumentsText);
    if (typeof value === 'object' && value !== null && typeof value.name === 'string' && !Object.hasOwn(value, 'query')) {
      name = value.name;
      path = value.path;
    }
  } catch {
    name = undefined;
  }
  // A name (or a file path) the component refuses before reading anything reads nothing.
  if (name === undefined || !isSkillName(name) || (path !== undefined && !isSkillFilePath(path))) return [];
  const listed = await read(host, 'listSkills', [name]);
  const winners = listed.answer?.tag === 'ok' ? listed.answer.val : [];
  if (winners.length !== 1 || winners[0].name !== name || winners[0].invocation?.modelInvocable !== true) return [listed];
  // A file's read (`skillReads`' `path`, contract 0.4.0) reads the file instead of the skill.
  return [listed, await (path === undefined ? read(host, 'getSkill', [name]) : read(host, 'readSkillFile', [name, path]))];
}

/** Puts `key` → `value` in `map`, dropping the oldest entry past `max`. */
function remember(map, key, value, max) {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value);
}

export class Recall {
  /** Argument text → `{ reads, outcome }` of the last `skill` call with it. */
  #calls = new Map();
  /** Session key → the context of its last steady pre-step. */
  #steady = new Map();
  /** Whether calls are kept to be recalled; without, answers are only read ahead (every call a first one). */
  #keep;

  constructor({ keep = true } = {}) {
    this.#keep = keep;
  }

  /** A host recording the imports of one call, to hand to the sandbox instead of `host`. */
  record(host) {
    return new Recording(host);
  }

  /**
   * `{ outcome }` of the last `skill` call with `argumentsText`, if asking
   * `host` what that call read gives the same answers; else `{ preloads }`,
   * the answers just read, to hand to the guest: those of the earlier call's
   * reads up to the first that differs, or, for arguments never seen, those
   * a load by name reads first.
   */
  async invoke(host, argumentsText) {
    const earlier = this.#calls.get(argumentsText);
    if (earlier === undefined) return { preloads: await loadReads(host, argumentsText) };
    const preloads = [];
    for (const { name, args, answer } of earlier.reads) {
      const now = await read(host, name, args);
      preloads.push(now);
      if (!sameValue(now.answer, answer)) return { preloads };
    }
    return { outcome: earlier.outcome };
  }

  /** Keeps a `skill` call's outcome if it read nothing but the registry. */
  invoked(recording, argumentsText, outcome) {
    if (this.#keep && !recording.other) remember(this.#calls, argumentsText, { reads: recording.reads, outcome }, MAX_CALLS);
  }

  /** Whether a pre-step with `context` (the WIT step context) is the session's last steady one again. */
  steady(context) {
    const earlier = this.#steady.get(context.session);
    return earlier !== undefined && isSteady(context) && sameValue(earlier, context);
  }

  /** Keeps a pre-step's context if it read nothing and decided nothing: it left the proposal as it was. */
  stepped(recording, context) {
    if (this.#keep && recording.reads.length === 0 && !recording.other && isSteady(context)) {
      remember(this.#steady, context.session, context, MAX_SESSIONS);
    } else {
      this.#steady.delete(context.session);
    }
  }
}

/** A step context a steady step can have: a held revision, nothing proposed, no abort. */
function isSteady(context) {
  return (
    context.registryRevision !== undefined &&
    context.registryRevision !== null &&
    !context.aborted &&
    context.proposal.tag === 'enter' &&
    context.proposal.val === 0
  );
}

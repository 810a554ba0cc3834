// The host side of the plugin's imports (`dsh:skill/registry`,
// `dsh:skill/session` and `dsh:skill/step`), answering for one call at a
// time: the call's registry (for its working directory), session, step and
// abort flag. Values are in jco's shapes: `u64` is a
// BigInt, `option` is a value or undefined, a `result` is `{tag:'ok'|'err',
// val}`, a variant is `{tag, val}`.

import { isObject, stringify } from './json.mjs';

/** The most references one page carries, whatever the plugin asks for. */
export const MAX_PAGE = 256;
/**
 * The most source filters one request may carry: each message of a listed
 * kind is checked against them, in host time the deadline cannot stop.
 */
export const MAX_FILTERS = 16;

/** The most bytes a skill file's path may have (docs/spec.md §3.15, `MAX_SKILL_FILE_PATH_BYTES` in rules/src/lib.rs). */
export const MAX_SKILL_FILE_PATH_BYTES = 1024;

/** The most bytes one read of a skill's file returns; a larger file is `too-large` (`MAX_SKILL_FILE_READ_BYTES`). */
export const MAX_SKILL_FILE_READ_BYTES = 1024 * 1024;

// A `\` or a control character (U+0000–U+001F, U+007F).
// eslint-disable-next-line no-control-regex
const FORBIDDEN_IN_PATH = /[\\\u0000-\u001f\u007f]/;

/**
 * Whether `path` names a file inside a skill (docs/spec.md §3.15,
 * `is_skill_file_path` in rules/src/lib.rs): non-empty, at most 1024 UTF-8
 * bytes, `/`-separated segments, each non-empty and not starting with `.`
 * (so neither `.` nor `..`, nor hidden), without `\` or a control
 * character. A host answers a path outside it `missing` without looking,
 * and lists none.
 */
export function isSkillFilePath(path) {
  return (
    typeof path === 'string' &&
    path !== '' &&
    Buffer.byteLength(path, 'utf8') <= MAX_SKILL_FILE_PATH_BYTES &&
    !FORBIDDEN_IN_PATH.test(path) &&
    path.split('/').every((segment) => segment !== '' && !segment.startsWith('.'))
  );
}

/**
 * The files the registry answered `text` for during one `skill` call, by
 * skill name and path (docs/spec.md §8.5: a `file` value must be one of
 * them). `note` is told every `read-skill-file` answer the plugin received.
 */
export class FileReads {
  #read = new Set();

  static #key(name, path) {
    return JSON.stringify([name, path]);
  }

  /** The registry answered `answer` (jco's `result<file-answer, registry-error>`) to `read-skill-file(name, path)`. */
  note(name, path, answer) {
    if (answer?.tag === 'ok' && answer.val?.tag === 'text') this.#read.add(FileReads.#key(name, path));
  }

  /** Whether the registry answered `text` for `path` of skill `name`. */
  has(name, path) {
    return this.#read.has(FileReads.#key(name, path));
  }
}

/**
 * `host` (a call's imports) with every `read-skill-file` answer it gives
 * noted in `reads` (`FileReads`), when it gives it.
 */
export function notingFileReads(host, reads) {
  const read = host.readSkillFile;
  host.readSkillFile = (name, path) => {
    const answer = read.call(host, name, path);
    if (!(answer instanceof Promise)) {
      reads.note(name, path, answer);
      return answer;
    }
    return answer.then((value) => {
      reads.note(name, path, value);
      return value;
    });
  };
  return host;
}

const ok = (val) => ({ tag: 'ok', val });
const err = (val) => ({ tag: 'err', val });
const ABORTED = err({ tag: 'aborted' });

/** A registry resource base (`{ kind, path | url | description }`) as the WIT `resource-base`. */
export function resourceBaseToWit(base) {
  if (base === null || base === undefined) return undefined;
  switch (base.kind) {
    case 'directory': return { tag: 'directory', val: base.path };
    case 'url': return { tag: 'url', val: base.url };
    default: return { tag: 'opaque', val: base.description };
  }
}

/** Stored content blocks as WIT blocks: `{"type":"text","text":…}` is text, anything else its JSON. */
export function contentToWit(blocks) {
  return blocks.map((block) =>
    isObject(block) && block.type === 'text' && typeof block.text === 'string'
      ? { tag: 'text', val: block.text }
      : { tag: 'other', val: stringify(block) },
  );
}

/**
 * What one plugin call may reach. `registry` and `session` may be null (the
 * call needs none); `cwd` is the call's working directory, the only one the
 * registry answers about (the plugin never names one); `step` is a
 * pre-step's `{ proposed, decided, decisions }` (null in other calls);
 * `aborted()` says whether the step was aborted.
 */
export class CallContext {
  constructor({ registry = null, session = null, cwd = null, step = null, aborted = () => false } = {}) {
    this.registry = registry;
    this.session = session;
    this.cwd = cwd;
    this.step = step;
    this.aborted = aborted;
  }

  // The registry's imports: a host with a registry answers them itself
  // (dsh/bridge.mjs `HarnessCallContext`); without one there are no skills.
  snapshot() {
    return this.aborted() ? ABORTED : ok({ tag: 'changed', val: { complete: true, revision: 0n, skills: [] } });
  }

  listSkills() {
    return this.aborted() ? ABORTED : ok([]);
  }

  getSkill() {
    return this.aborted() ? ABORTED : ok(undefined);
  }

  listSkillFiles() {
    return this.aborted() ? ABORTED : ok(undefined);
  }

  readSkillFile() {
    return this.aborted() ? ABORTED : ok({ tag: 'unavailable' });
  }

  /**
   * A page of user-message references matching any filter, newest first,
   * seqs below `before`; `next` is set only when a further match exists.
   */
  listUserMessages(filters, before, limit) {
    if (filters.length > MAX_FILTERS) {
      throw new Error(
        `the plugin passed ${filters.length} source filters to \`session.list-user-messages\`; at most ${MAX_FILTERS} are allowed`,
      );
    }
    const session = this.session;
    if (session === null) return { refs: [], next: undefined };
    const size = Math.min(Math.max(limit, 1), MAX_PAGE);
    const matches = (filter, source) =>
      isObject(source) &&
      source.kind === filter.kind &&
      (filter.plugin === undefined || filter.plugin === null || source.plugin === filter.plugin);
    // Newest first across the filters' kinds (each kind read once), merged by seq.
    const kinds = [...new Set(filters.map((filter) => filter.kind))];
    const streams = kinds.map((kind) => {
      const messages = session.userMessagesOfKind(kind);
      let index = messages.length - 1;
      while (index >= 0 && before !== undefined && before !== null && messages[index].seq >= before) index -= 1;
      return { messages, index };
    });
    const refs = [];
    let next;
    for (;;) {
      let newest = null;
      for (const stream of streams) {
        if (stream.index < 0) continue;
        if (newest === null || stream.messages[stream.index].seq > newest.messages[newest.index].seq) newest = stream;
      }
      if (newest === null) break;
      const event = newest.messages[newest.index];
      newest.index -= 1;
      if (!filters.some((filter) => matches(filter, event.source))) continue;
      if (refs.length === size) {
        next = refs[refs.length - 1].seq;
        break;
      }
      refs.push({ seq: event.seq, visible: session.isVisible(event.seq) });
    }
    return { refs, next };
  }

  /** The proposed messages of the pre-step this call is. */
  proposedMessages() {
    return this.#step('proposed-messages').proposed;
  }

  /** Records the plugin's decision (the first one; the host checks it after the call). */
  decide(messages) {
    const step = this.#step('decide');
    step.decisions += 1;
    step.decided ??= messages;
  }

  #step(functionName) {
    if (this.step === null) throw new Error(`the plugin called \`step.${functionName}\` outside a pre-step`);
    return this.step;
  }

  getUserMessage(seq) {
    const event = this.session?.userMessage(seq);
    if (event === undefined) return undefined;
    return { source: stringify(event.source), content: contentToWit(event.content) };
  }
}

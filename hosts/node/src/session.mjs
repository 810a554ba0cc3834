// What the plugin's `session` imports read of a DeepSeek Harness session
// (docs/spec.md §5): its user-role messages, indexed by source kind for the
// plugin's paging, and fresh message ids. The drop-in's `HarnessSession`
// (dsh/bridge.mjs) keeps one index per agent session.
//
// User-role messages are the `user/message` events and the message of each
// `tool/result` event whose `data.message.source.plugin` is `dsh-tool-skill`
// (the skill plugin's record of a load; host-runner/src/session/index.rs):
// an ordinary tool result is not indexed and leaves the history version alone.

import { randomBytes } from 'node:crypto';

import { isObject } from './json.mjs';

export const USER_MESSAGE = 'user/message';
export const TOOL_RESULT = 'tool/result';

let idCounter = 0;
/** A fresh message id shaped like a UUIDv7 (time first), unique in this process. */
export function newMessageId() {
  const bytes = randomBytes(16);
  const millis = BigInt(Date.now()) & 0xffffffffffffn;
  for (let i = 0; i < 6; i++) bytes[i] = Number((millis >> BigInt(8 * (5 - i))) & 0xffn);
  bytes[6] = 0x70 | (bytes[6] & 0x0f);
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  idCounter = (idCounter + 1) >>> 0;
  bytes.writeUInt32BE(idCounter, 10);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The user-role messages of a session, as the plugin's `session` imports
 * read them: `{ seq, source, content }` in seq order (seqs as BigInts),
 * and their positions per source `kind`.
 */
export class UserMessageIndex {
  #messages = [];
  #byKind = new Map();

  /** Indexes a user-role message: `data` is a user message's, or a tool result's `data.message`. */
  add(seq, data) {
    const source = isObject(data) && data.source !== undefined ? data.source : null;
    const content = isObject(data) && Array.isArray(data.content) ? data.content : [];
    const kind = isObject(source) && typeof source.kind === 'string' ? source.kind : '';
    if (!this.#byKind.has(kind)) this.#byKind.set(kind, []);
    this.#byKind.get(kind).push(this.#messages.length);
    this.#messages.push({ seq: BigInt(seq), source, content });
  }

  /** Every indexed seq, oldest first. */
  seqs() {
    return this.#messages.map(({ seq }) => seq);
  }

  /** The messages whose source kind is `kind`, oldest first. */
  ofKind(kind) {
    return (this.#byKind.get(kind) ?? []).map((position) => this.#messages[position]);
  }

  /** The message with this seq (a BigInt), or undefined. */
  at(seq) {
    let low = 0;
    let high = this.#messages.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      const found = this.#messages[middle].seq;
      if (found === seq) return this.#messages[middle];
      if (found < seq) low = middle + 1;
      else high = middle;
    }
    return undefined;
  }
}

/**
 * The user-role message an event carries, or null: a user message's `data`,
 * or the `data.message` of a tool result whose source names the plugin
 * `dsh-tool-skill` (its record of a skill load) and has a content list.
 */
export function userRoleMessage({ type, data }) {
  if (type === USER_MESSAGE) return data;
  if (type !== TOOL_RESULT || !isObject(data) || !Object.hasOwn(data, 'message')) return null;
  const { message } = data;
  const source = isObject(message) ? message.source : undefined;
  const recorded = isObject(source) && source.plugin === 'dsh-tool-skill' && Array.isArray(message.content);
  return recorded ? message : null;
}

// A DeepSeek Harness session log kept in memory (docs/spec.md §5): events in the
// harness's JSONL shape (`{"type","seq","time","data","surfaceOp"?,
// "sourceEventSeqs"?}` after a `{"type":"session",…}` header), user-role
// messages indexed by source kind for the plugin's paging, and the
// model-visible surface as the fold of the `surfaceOp` markers.
//
// User-role messages are the `user/message` events and the message of each
// `tool/result` event whose `data.message.source.plugin` is `dsh-tool-skill`
// (the skill plugin's record of a load; host-runner/src/session/index.rs):
// an ordinary tool result is not indexed and leaves the history version alone.

import { randomBytes } from 'node:crypto';

import { isObject, stringify } from './json.mjs';

/** The types of events that may carry a `surfaceOp` and join the surface. */
const MESSAGE_EVENT_TYPES = ['user/message', 'assistant/message', 'tool/result'];
export const USER_MESSAGE = 'user/message';
export const TOOL_RESULT = 'tool/result';
/** What errors of an in-memory session name instead of a file. */
const IN_MEMORY_PATH = '<in-memory session>';

/** A failure of the session log, worded as the Rust host words it. */
export class SessionError extends Error {}

// Keys are unique among the logs of this process: the plugin may remember
// what it read of a session under its key, and events never change.
let lastKey = 0n;

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
 * The model-visible surface: the fold of `append` and `replace` markers. A
 * replace is positional (its ends name two seqs on the surface, and every
 * node between their positions is shadowed); ends that are not both on the
 * surface in order fall back to hiding the nodes whose seqs lie in the range.
 */
export class SurfaceFold {
  nodes = [];
  positions = new Map();

  clone() {
    const copy = new SurfaceFold();
    copy.nodes = [...this.nodes];
    copy.positions = new Map(this.positions);
    return copy;
  }

  contains(seq) {
    return this.positions.has(seq);
  }

  /** The nodes a positional replace of `start..=end` would hide, or null when the harness would refuse it. */
  shadowedBy(start, end) {
    const first = this.positions.get(start);
    const last = this.positions.get(end);
    if (first === undefined || last === undefined || first > last) return null;
    return this.nodes.slice(first, last + 1);
  }

  /** A whole-surface replace (compaction), or null when the surface is empty. */
  wholeRange() {
    if (this.nodes.length === 0) return null;
    return { op: 'replace', start: this.nodes[0], end: this.nodes[this.nodes.length - 1] };
  }

  /** Folds in event `seq` (newer than every node) with marker `op`. */
  apply(seq, op) {
    if (op === 'append') {
      this.positions.set(seq, this.nodes.length);
      this.nodes.push(seq);
      return;
    }
    const first = this.positions.get(op.start);
    const last = this.positions.get(op.end);
    let hidden;
    if (first !== undefined && last !== undefined && first <= last) {
      hidden = this.nodes.splice(first, last - first + 1, seq);
    } else {
      const inRange = (node) => node >= op.start && node <= op.end;
      const at = this.nodes.findIndex(inRange);
      if (at === -1) {
        this.positions.set(seq, this.nodes.length);
        this.nodes.push(seq);
        return;
      }
      hidden = this.nodes.filter(inRange);
      this.nodes = this.nodes.filter((node) => !inRange(node));
      this.nodes.splice(at, 0, seq);
    }
    for (const node of hidden) this.positions.delete(node);
    this.nodes.forEach((node, position) => this.positions.set(node, position));
  }
}

/** An in-memory session log. Seqs are BigInts, as the plugin's WIT `u64`s. */
export class SessionLog {
  /** The header line's fields. */
  header;
  /** Every event line, as the harness writes it. */
  events = [];
  /** The user-role messages, indexed for the plugin's `session` imports. */
  #messages = new UserMessageIndex();
  surface = new SurfaceFold();
  /** Identifies this log among the logs of this process. */
  key;
  /**
   * Bumped by every user-role message appended and every replacement of
   * part of the surface: the only changes that can alter which catalogs were
   * published and which are visible (the step context's `history-version`).
   */
  historyVersion = 0n;

  constructor(cwd = null) {
    lastKey += 1n;
    this.key = lastKey;
    this.header = { type: 'session', version: 0, id: newMessageId(), createdAt: Date.now() };
    if (cwd !== null) this.header.cwd = cwd;
  }

  nextSeq() {
    return BigInt(this.events.length === 0 ? 0 : this.events[this.events.length - 1].seq + 1n);
  }

  isVisible(seq) {
    return this.surface.contains(seq);
  }

  /** The user messages whose source kind is `kind`, oldest first. */
  userMessagesOfKind(kind) {
    return this.#messages.ofKind(kind);
  }

  /** The user-role message with this seq, or undefined. */
  userMessage(seq) {
    return this.#messages.at(seq);
  }

  /** Appends user messages (`[data, op]` pairs) as one batch; returns their seqs. */
  appendUserMessages(messages) {
    return this.#append(messages.map(([data, op]) => ({ type: USER_MESSAGE, data, op })));
  }

  /** Appends any event, with an optional surface marker. */
  appendEvent(type, data, op = null) {
    return this.#append([{ type, data, op }])[0];
  }

  /**
   * Appends a compaction summary whose marker replaces the whole current
   * surface (a plain append when the surface is empty).
   */
  compact(summary) {
    const data = {
      content: [{ type: 'text', text: summary }],
      source: { kind: 'plugin', plugin: 'compaction' },
      role: 'user',
      id: newMessageId(),
    };
    return this.#append([{ type: USER_MESSAGE, data, op: 'whole-surface' }])[0];
  }

  /** The log as JSONL text: the header, then every event, keys in the harness's order. */
  toJsonl() {
    const lines = [headerLine(this.header)];
    for (const event of this.events) {
      let line = `{"type":${JSON.stringify(event.type)},"seq":${event.seq},"time":${event.time},"data":${stringify(event.data)}`;
      if (event.surfaceOp !== undefined) {
        const op = event.surfaceOp;
        line += `,"surfaceOp":${op === 'append' ? '"append"' : `{"op":"replace","start":${op.start},"end":${op.end}}`}`;
      }
      if (event.sourceEventSeqs !== undefined) line += `,"sourceEventSeqs":[${event.sourceEventSeqs.join(',')}]`;
      lines.push(`${line}}`);
    }
    return lines.map((line) => `${line}\n`).join('');
  }

  #append(requests) {
    for (const request of requests) {
      const problem = eventProblem(request);
      if (problem !== null) {
        throw new SessionError(`session log ${IN_MEMORY_PATH}: cannot append ${request.type}: ${problem}`);
      }
    }
    // Plan on a copy of the surface, so a refused batch changes nothing.
    const surface = this.surface.clone();
    const time = Date.now();
    let seq = this.nextSeq();
    const planned = [];
    for (const request of requests) {
      let op = request.op;
      if (op === 'whole-surface') op = surface.wholeRange() ?? 'append';
      let shadowed = null;
      if (op !== null && op !== 'append') {
        shadowed = surface.shadowedBy(op.start, op.end);
        if (shadowed === null) {
          throw new SessionError(
            `session log ${IN_MEMORY_PATH}: cannot replace surface range ${op.start}..=${op.end}: ${rangeProblem(surface, op)}`,
          );
        }
      }
      if (op !== null) surface.apply(seq, op);
      const line = { type: request.type, seq, time, data: request.data };
      if (op !== null) line.surfaceOp = op;
      if (shadowed !== null) line.sourceEventSeqs = shadowed;
      planned.push(line);
      seq += 1n;
    }
    this.surface = surface;
    for (const line of planned) {
      this.events.push(line);
      const message = userRoleMessage(line);
      if (message !== null) this.#messages.add(line.seq, message);
      if (message !== null || (line.surfaceOp !== undefined && line.surfaceOp !== 'append')) {
        this.historyVersion += 1n;
      }
    }
    return planned.map((line) => line.seq);
  }
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

function eventProblem({ type, data, op }) {
  if (type === '' || type === 'session') return 'not an event type';
  if (op !== null && !MESSAGE_EVENT_TYPES.includes(type)) {
    return `only ${MESSAGE_EVENT_TYPES.join(', ')} events carry a surfaceOp`;
  }
  if (type === USER_MESSAGE) {
    if (!isObject(data)) return 'data must be a user-message object';
    if (!Array.isArray(data.content)) return 'data.content must be a list of content blocks';
  }
  return null;
}

function rangeProblem(surface, { start, end }) {
  if (!surface.contains(start)) return `seq ${start} is not on the surface`;
  if (!surface.contains(end)) return `seq ${end} is not on the surface`;
  return `seq ${start} comes after seq ${end} on the surface`;
}

function headerLine({ id, createdAt, cwd }) {
  const fields = `"type":"session","version":0,"id":${JSON.stringify(id)},"createdAt":${createdAt}`;
  return `{${fields}${cwd === undefined ? '' : `,"cwd":${JSON.stringify(cwd)}`}}`;
}

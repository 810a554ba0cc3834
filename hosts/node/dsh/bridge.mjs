// The component's imports answered by a DeepSeek Harness `Context`: its
// skill registry (`ctx.skills`) for the session's cwd and the agent's scope,
// and the agent's durable session read in place. Every decision stays the
// component's; this file only translates.
//
// The harness's registry answers asynchronously. The plugin's thread sleeps
// while it does (src/sandbox.mjs pauses the call's deadline meanwhile), so
// the component sees the synchronous imports of its WIT world.

import { CallContext, resourceBaseToWit } from '../src/host-imports.mjs';
import { UserMessageIndex, userRoleMessage } from '../src/session.mjs';

const ok = (val) => ({ tag: 'ok', val });
const err = (val) => ({ tag: 'err', val });
const ABORTED = err({ tag: 'aborted' });

/** A thrown value's message, as the harness's tool runtime words it (`errorMessage` in dsh-tools). */
export function errorMessage(error) {
  try {
    if (error instanceof Error) return error.message;
    if (typeof error === 'object' && error !== null && typeof error.message === 'string') return error.message;
    return String(error);
  } catch {
    return '<unprintable thrown value>';
  }
}

/**
 * `value` with every lone surrogate in its strings read as U+FFFD, as the
 * Rust host reads a session (JavaScript can cut a string inside a pair,
 * and the published plugin's description cap does); `value` itself when
 * there is none, which is the rule.
 */
export function wellFormed(value) {
  if (typeof value === 'string') return value.isWellFormed() ? value : value.toWellFormed();
  if (Array.isArray(value)) {
    const items = value.map(wellFormed);
    return items.every((item, index) => item === value[index]) ? value : items;
  }
  if (typeof value === 'object' && value !== null) {
    let changed = false;
    const entries = Object.entries(value).map(([key, item]) => {
      const read = wellFormed(item);
      changed ||= read !== item;
      return [key, read];
    });
    return changed ? Object.fromEntries(entries) : value;
  }
  return value;
}

/** A harness skill summary as the WIT `skill-summary`. */
function summaryToWit(skill) {
  return {
    name: skill.name,
    description: skill.description,
    invocation: {
      modelInvocable: skill.invocation?.modelInvocable === true,
      userInvocable: skill.invocation?.userInvocable === true,
    },
    provider: skill.provider,
    source: typeof skill.source === 'string' ? skill.source : '',
    path: typeof skill.path === 'string' ? skill.path : undefined,
    bodyDigest: undefined,
  };
}

/**
 * The harness's skill registry for one plugin: complete snapshots remembered
 * per agent and cwd under a revision of our own, valid until the registry
 * announces a change (`skills/change`, emitted whenever it drops its cache).
 * So a steady step asks the registry nothing at all.
 */
export class HarnessSkills {
  #ctx;
  #changes = 0;
  #lastRevision = 0n;
  /** agent (scope) → cwd → `{ changes, revision, skills }` of its last complete snapshot. */
  #held = new WeakMap();

  constructor(ctx) {
    this.#ctx = ctx;
    ctx.on('skills/change', () => {
      this.#changes += 1;
    });
  }

  /** The registry as one call sees it: `lookup` is `{ cwd, signal, scope }`, as the published plugin passes it. */
  view(lookup) {
    return new RegistryView(this, lookup);
  }

  get skills() {
    return this.#ctx.skills;
  }

  /** The snapshot still held for `lookup`, or undefined. */
  held({ scope, cwd }) {
    const snapshot = scopeKey(scope) === null ? undefined : this.#held.get(scope)?.get(cwd);
    return snapshot !== undefined && snapshot.changes === this.#changes ? snapshot : undefined;
  }

  /** Takes a snapshot; a complete one is held, under a revision never used before. */
  async snapshot(lookup) {
    const changes = this.#changes;
    const { skills, complete } = await this.skills.snapshot(lookup);
    this.#lastRevision += 1n;
    const snapshot = { changes, revision: this.#lastRevision, complete: complete === true, skills };
    const key = scopeKey(lookup.scope);
    // A change announced while the registry answered makes this one stale at once.
    if (snapshot.complete && key !== null) {
      if (!this.#held.has(key)) this.#held.set(key, new Map());
      this.#held.get(key).set(lookup.cwd, snapshot);
    }
    return snapshot;
  }
}

/** The skills of `skills` named `name`, or all of them when `name` is null or undefined. */
function named(skills, name) {
  return name == null ? skills : skills.filter((skill) => skill.name === name);
}

/** Snapshots are held per agent object; a lookup without one holds nothing. */
function scopeKey(scope) {
  return typeof scope === 'object' && scope !== null ? scope : null;
}

/** One call's registry: the interface `CallContext` and `Plugin.preStep` expect, answered by the harness. */
class RegistryView {
  #skills;
  #lookup;

  constructor(skills, lookup) {
    this.#skills = skills;
    this.#lookup = lookup;
  }

  get lookup() {
    return this.#lookup;
  }

  /** The revision of the complete snapshot held for this lookup, found without asking the registry. */
  cachedRevision() {
    return this.#skills.held(this.#lookup)?.revision;
  }

  async snapshot() {
    return this.#skills.held(this.#lookup) ?? (await this.#skills.snapshot(this.#lookup));
  }

  /**
   * The registry's winners named `name` (all of them when `name` is null or
   * undefined): from the complete snapshot held for this lookup when there is
   * one, at once (the registry's `list` is that snapshot's `skills`, sorted
   * anew on every call), else a promise of the registry's answer.
   */
  list(name) {
    const held = this.#skills.held(this.#lookup);
    if (held === undefined) return this.#skills.skills.list(this.#lookup).then((skills) => named(skills, name));
    if (name == null) return held.skills;
    held.byName ??= new Map(held.skills.map((skill) => [skill.name, skill]));
    const skill = held.byName.get(name);
    return skill === undefined ? [] : [skill];
  }

  get(name) {
    return this.#skills.skills.get(name, this.#lookup);
  }
}

/**
 * The imports of one plugin call, with the registry's answered by the
 * harness (`registry` is a `RegistryView`); the session's and the step's are
 * `CallContext`'s own, over a `HarnessSession`.
 */
export class HarnessCallContext extends CallContext {
  async snapshot(known) {
    if (this.aborted()) return ABORTED;
    let snapshot;
    try {
      snapshot = await this.registry.snapshot();
    } catch (error) {
      if (this.aborted()) return ABORTED;
      throw error;
    }
    if (this.aborted()) return ABORTED;
    // Revisions are never reused: the plugin's copy of this one is exactly this list.
    if (snapshot.complete && known === snapshot.revision) return ok({ tag: 'unchanged' });
    return ok({
      tag: 'changed',
      val: { complete: snapshot.complete, revision: snapshot.revision, skills: snapshot.skills.map(summaryToWit) },
    });
  }

  listSkills(name) {
    if (this.aborted()) return ABORTED;
    const failed = (error) => (this.aborted() ? ABORTED : err({ tag: 'failed', val: errorMessage(error) }));
    // With a name, only that winner: the tool's lookup never copies the whole catalog.
    const answer = (skills) => (this.aborted() ? ABORTED : ok(skills.map(summaryToWit)));
    try {
      const listed = this.registry.list(name);
      return listed instanceof Promise ? listed.then(answer, failed) : answer(listed);
    } catch (error) {
      return failed(error);
    }
  }

  async getSkill(name) {
    if (this.aborted()) return ABORTED;
    let skill;
    try {
      skill = await this.registry.get(name);
    } catch (error) {
      return this.aborted() ? ABORTED : err({ tag: 'failed', val: errorMessage(error) });
    }
    if (this.aborted()) return ABORTED;
    if (skill === undefined || skill === null) return ok(undefined);
    return ok({
      ...summaryToWit(skill),
      resourceBase: resourceBaseToWit(skill.resourceBase),
      content: skill.content,
    });
  }
}

let lastSessionKey = 0n;

/**
 * A harness `Session` as the plugin's `session` imports read it: its
 * user-role messages indexed once each, as they are appended (the log only
 * grows). A step with nothing appended reads nothing; after an append, the
 * harness's `session.events` hands over a fresh copy of the log (its own
 * cost, which the published plugin pays on every step), and only the new
 * events are read from it.
 */
export class HarnessSession {
  /** Identifies the session in this process (the step context's `session`). */
  key;
  /** Bumped by each user-role message and each surface replacement (the step context's `history-version`). */
  historyVersion = 0n;
  #session;
  #seen = 0;
  #messages = new UserMessageIndex();
  /** The seqs (numbers) of indexed messages on the model-visible surface. */
  #visible = new Set();

  constructor(session) {
    lastSessionKey += 1n;
    this.key = lastSessionKey;
    this.#session = session;
  }

  /** Indexes what was appended since the last call. */
  refresh() {
    const session = this.#session;
    if (session.seq === this.#seen) return this;
    const events = session.events;
    let replaced = false;
    for (let index = this.#seen; index < events.length; index += 1) {
      const event = events[index];
      const message = userRoleMessage(event);
      if (message !== null) {
        // Lone surrogates read as U+FFFD, as the Rust host reads them.
        this.#messages.add(event.seq, { source: wellFormed(message.source), content: wellFormed(message.content) });
        if (event.surfaceOp === 'append') this.#visible.add(event.seq);
        this.historyVersion += 1n;
      }
      if (event.surfaceOp !== undefined && event.surfaceOp !== 'append') {
        replaced = true;
        if (message === null) this.historyVersion += 1n;
      }
    }
    this.#seen = events.length;
    if (replaced) {
      // A replacement can hide any earlier node: read the surface again (compaction is rare).
      const nodes = new Set(session.surface.nodes);
      this.#visible = new Set(this.#messages.seqs().map(Number).filter((seq) => nodes.has(seq)));
    }
    return this;
  }

  isVisible(seq) {
    return this.#visible.has(Number(seq));
  }

  userMessagesOfKind(kind) {
    return this.#messages.ofKind(kind);
  }

  userMessage(seq) {
    return this.#messages.at(seq);
  }
}

/** The `HarnessSession` of each harness session, made on first use. */
export class HarnessSessions {
  #sessions = new WeakMap();

  of(session) {
    let indexed = this.#sessions.get(session);
    if (indexed === undefined) {
      indexed = new HarnessSession(session);
      this.#sessions.set(session, indexed);
    }
    return indexed.refresh();
  }
}

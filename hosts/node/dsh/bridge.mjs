// The component's imports answered by a DeepSeek Harness `Context`: its
// skill registry (`ctx.skills`) for the session's cwd and the agent's scope,
// and the agent's durable session read in place. Every decision stays the
// component's; this file only translates.
//
// The harness's registry answers asynchronously. The plugin's thread sleeps
// while it does (src/sandbox.mjs pauses the call's deadline meanwhile), so
// the component sees the synchronous imports of its WIT world.
//
// With `loadedSkills` (docs/spec.md §3.12) two more things are translated:
// the load a `skill` call asks the host to record, which the harness's
// agent loop keeps as the tool result's `meta` (`HarnessSession`), and the
// body digests the harness's registry does not list (`HarnessSkills`).
//
// A skill's files (contract 0.4.0, docs/spec.md §3.15) are read from disk
// for a skill the harness's filesystem provider listed from a skill file
// (`files.mjs`); every other skill serves none.

import { createHash } from 'node:crypto';

import { CallContext, isSkillFilePath, resourceBaseToWit } from '../src/host-imports.mjs';
import { isObject } from '../src/json.mjs';
import { isSkillName } from '../src/record.mjs';
import { TOOL_RESULT, UserMessageIndex, userRoleMessage } from '../src/session.mjs';
import { listSkillFiles, readSkillFile, skillFilesOf } from './files.mjs';

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

/**
 * A body's digest as docs/spec.md §3.12 defines it: `sha256:` and the
 * lowercase hex SHA-256 of its UTF-8 bytes (a lone surrogate is encoded as
 * U+FFFD, as the Rust host reads it), as the Rust host's providers compute
 * it (`body_digest`, host-runner/src/registry/types.rs). The harness's
 * `content` is the body: the instructions after the frontmatter.
 */
export function bodyDigest(content) {
  return `sha256:${createHash('sha256').update(content, 'utf8').digest('hex')}`;
}

/** The plugin that names itself in a recorded load (docs/spec.md §3.12). */
const PLUGIN = 'dsh-tool-skill';

/**
 * The `meta` the drop-in's `skill` tool gives its result with
 * `loadedSkills` (`output.presentationMeta`, which the harness's agent loop
 * persists with the `tool/result` event): the two keys skill-host adds to
 * the result's source, `{ plugin: "dsh-tool-skill", loaded: { name,
 * provider, bodyDigest? } }` (`bodyDigest` left out when unknown), or null
 * for a call that recorded no load (a search).
 */
export function loadMeta(loaded) {
  if (loaded === undefined || loaded === null) return null;
  const record = { name: loaded.name, provider: loaded.provider };
  if (typeof loaded.bodyDigest === 'string') record.bodyDigest = loaded.bodyDigest;
  return { plugin: PLUGIN, loaded: record };
}

/** The load a `meta` (`loadMeta`) or a remembered call records, checked: `{ name, provider, bodyDigest? }` or null. */
function loadedRecord(loaded) {
  if (!isObject(loaded) || typeof loaded.name !== 'string' || typeof loaded.provider !== 'string') return null;
  const record = { name: loaded.name, provider: loaded.provider };
  if (typeof loaded.bodyDigest === 'string') record.bodyDigest = loaded.bodyDigest;
  return record;
}

/**
 * A harness skill summary as the WIT `skill-summary`: its `whenToUse` only
 * when a non-empty string, as the contract has it (and as the harness's
 * filesystem provider reads it).
 */
function summaryToWit(skill) {
  return {
    name: skill.name,
    description: skill.description,
    whenToUse: typeof skill.whenToUse === 'string' && skill.whenToUse !== '' ? skill.whenToUse : undefined,
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
  /** agent (scope) → cwd → `{ changes, revision, skills, digests? }` of its last complete snapshot. */
  #held = new WeakMap();
  /** With `loadedSkills`: definitions and snapshots carry body digests. */
  bodyDigests;

  /**
   * `options.bodyDigests` (the drop-in's `loadedSkills`): a definition
   * carries its body's digest, and so does each skill of a complete
   * snapshot that the session's visible loads name (`digestsOf`).
   */
  constructor(ctx, { bodyDigests = false } = {}) {
    this.#ctx = ctx;
    this.bodyDigests = bodyDigests;
    ctx.on('skills/change', () => {
      this.#changes += 1;
    });
  }

  /**
   * The registry as one call sees it: `lookup` is `{ cwd, signal, scope }`,
   * as the published plugin passes it; `session`, a pre-step's
   * `HarnessSession`, whose visible loads a new snapshot digests.
   */
  view(lookup, session = null) {
    return new RegistryView(this, lookup, session);
  }

  get skills() {
    return this.#ctx.skills;
  }

  /** The snapshot still held for `lookup`, or undefined. */
  held({ scope, cwd }) {
    const snapshot = scopeKey(scope) === null ? undefined : this.#held.get(scope)?.get(cwd);
    return snapshot !== undefined && snapshot.changes === this.#changes ? snapshot : undefined;
  }

  /**
   * Takes a snapshot; a complete one is held, under a revision never used
   * before. With `bodyDigests`, a complete one carries the body digests of
   * the winners `session`'s visible loads name (`digestsOf`); one whose
   * digests an abort cut short is not held.
   */
  async snapshot(lookup, session = null) {
    const changes = this.#changes;
    const { skills, complete } = await this.skills.snapshot(lookup);
    this.#lastRevision += 1n;
    const snapshot = { changes, revision: this.#lastRevision, complete: complete === true, skills };
    let hold = true;
    if (this.bodyDigests && snapshot.complete) {
      snapshot.digests = await this.#digestsOf(skills, session?.visibleLoads() ?? [], lookup);
      hold = !lookup.signal?.aborted;
    }
    const key = scopeKey(lookup.scope);
    // A change announced while the registry answered makes this one stale at once.
    if (snapshot.complete && hold && key !== null) {
      if (!this.#held.has(key)) this.#held.set(key, new Map());
      this.#held.get(key).set(lookup.cwd, snapshot);
    }
    return snapshot;
  }

  /**
   * The body digests (name → digest) of the model-invocable winners among
   * `skills` that `names` name, each loaded afresh from the registry (its
   * summaries carry none), all at once. A skill that fails to load, or is
   * gone, has no digest: the component then says nothing about its body
   * (docs/spec.md §3.12).
   */
  async #digestsOf(skills, names, lookup) {
    const digests = new Map();
    if (names.length === 0) return digests;
    const wanted = new Set(names);
    const listed = skills.filter((skill) => wanted.has(skill.name) && skill.invocation?.modelInvocable === true);
    await Promise.all(
      listed.map(async (skill) => {
        try {
          const definition = await this.skills.get(skill.name, lookup);
          if (typeof definition?.content === 'string' && definition.provider === skill.provider) {
            digests.set(skill.name, bodyDigest(definition.content));
          }
        } catch {
          // No digest: nothing is said about this body.
        }
      }),
    );
    return digests;
  }

  /**
   * A `skill` call loaded `loaded` (`{ name, provider, bodyDigest }`): a
   * snapshot held for `lookup` that gives that skill another digest is
   * dropped, so the next step takes the registry's current one (a registry
   * that changed a body without announcing it).
   */
  loaded(lookup, loaded) {
    const held = this.held(lookup);
    const digest = held?.digests?.get(loaded.name);
    if (digest !== undefined && digest !== loaded.bodyDigest) this.#held.get(lookup.scope).delete(lookup.cwd);
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
  #session;

  constructor(skills, lookup, session = null) {
    this.#skills = skills;
    this.#lookup = lookup;
    this.#session = session;
  }

  get lookup() {
    return this.#lookup;
  }

  /** With `loadedSkills`: definitions carry their body digests. */
  get bodyDigests() {
    return this.#skills.bodyDigests;
  }

  /** The revision of the complete snapshot held for this lookup, found without asking the registry. */
  cachedRevision() {
    return this.#skills.held(this.#lookup)?.revision;
  }

  async snapshot() {
    return this.#skills.held(this.#lookup) ?? (await this.#skills.snapshot(this.#lookup, this.#session));
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
    const { digests } = snapshot;
    const skills =
      digests === undefined
        ? snapshot.skills.map(summaryToWit)
        : snapshot.skills.map((skill) => ({ ...summaryToWit(skill), bodyDigest: digests.get(skill.name) }));
    return ok({ tag: 'changed', val: { complete: snapshot.complete, revision: snapshot.revision, skills } });
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
      // With `loadedSkills`, the digest of the body this call loads: what the load records (docs/spec.md §3.12).
      bodyDigest: this.registry.bodyDigests && typeof skill.content === 'string' ? bodyDigest(skill.content) : undefined,
    });
  }

  /**
   * The files of the winner for `name` other than its skill file, the
   * first `limit` (files.mjs); `none` for no winner or one the
   * harness's filesystem provider did not list from a skill file.
   */
  listSkillFiles(name, limit) {
    return withWinner(this, name, undefined, (where) => listSkillFiles(name, where, limit));
  }

  /**
   * The file `path` of the winner for `name`, read afresh and confined to
   * its folder (files.mjs), `SKILL.md` only when it holds the body the
   * harness loaded for the winner; `missing` for a path outside the grammar
   * (unlooked at), `unavailable` for no winner or one the harness's
   * filesystem provider did not list from a skill file.
   */
  readSkillFile(name, path) {
    if (!isSkillFilePath(path)) return this.aborted() ? ABORTED : ok({ tag: 'missing' });
    // SKILL.md is served only as the skill file whose body the harness loaded for the winner in this call.
    return withWinner(this, name, { tag: 'unavailable' }, (where, skill) => readSkillFile(name, where, path, skill.content));
  }
}

/**
 * What one of the two file imports does once the winner is known: the
 * harness's winner for `name`, found as `getSkill` finds it (a failing
 * provider fails the call with its text, an abort is `aborted`), then
 * `answer(where, skill)` (`where` from `skillFilesOf`), whose failure
 * fails the call with its text too.
 */
async function withWinner(context, name, none, answer) {
  if (context.aborted()) return ABORTED;
  const failed = (error) => (context.aborted() ? ABORTED : err({ tag: 'failed', val: errorMessage(error) }));
  // A name outside the grammar has no winner (the registry's rule in skill-host).
  if (!isSkillName(name)) return ok(none);
  let skill;
  try {
    skill = await context.registry.get(name);
  } catch (error) {
    return failed(error);
  }
  if (context.aborted()) return ABORTED;
  const where = skillFilesOf(skill);
  if (where === null) return ok(none);
  let answered;
  try {
    answered = await answer(where, skill);
  } catch (error) {
    return failed(error);
  }
  return context.aborted() ? ABORTED : ok(answered);
}

let lastSessionKey = 0n;

/** The most loads remembered per session for results not yet appended (`HarnessSession.remember`). */
const MAX_PENDING_LOADS = 64;

/** Whether a tool-result message reports a failure (a block with `isError: true`). */
function failedResult(message) {
  return message.content.some((block) => isObject(block) && block.type === 'tool-result' && block.isError === true);
}

/**
 * A harness `Session` as the plugin's `session` imports read it: its
 * user-role messages indexed once each, as they are appended (the log only
 * grows). A step with nothing appended reads nothing; after an append, the
 * harness's `session.events` hands over a fresh copy of the log (its own
 * cost, which the published plugin pays on every step), and only the new
 * events are read from it.
 *
 * With `loads` (the drop-in's `loadedSkills`, docs/spec.md §3.12), a
 * `tool/result` that records a load is a user-role message too, read as
 * skill-host records it: its source with `plugin: "dsh-tool-skill"` and
 * `loaded` added. The harness's agent loop writes the source itself
 * (`{ kind: 'tool', callId }`); the load is the event's `meta`
 * (`loadMeta`), which the loop persists, so a new process reads it again.
 * For a result written without any `meta` (a loop that does not keep it),
 * the load the drop-in's `execute` remembered for its `callId`
 * (`remember`) stands in, as long as this process lives. A failed result
 * records no load.
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
  /** With `loads`: the seq (a number) of each skill's newest recorded load, by name. */
  #loads = null;
  /** With `loads`: call id → the load `execute` returned for it, until its result is read. */
  #pending = null;

  constructor(session, { loads = false } = {}) {
    lastSessionKey += 1n;
    this.key = lastSessionKey;
    this.#session = session;
    if (loads) {
      this.#loads = new Map();
      this.#pending = new Map();
    }
  }

  /** Keeps the load (`{ name, provider, bodyDigest }`) a `skill` call with `callId` returned, for its result. */
  remember(callId, loaded) {
    if (this.#pending === null || typeof callId !== 'string') return;
    this.#pending.delete(callId);
    this.#pending.set(callId, loaded);
    if (this.#pending.size > MAX_PENDING_LOADS) this.#pending.delete(this.#pending.keys().next().value);
  }

  /** The names of the skills whose newest recorded load the model still sees. */
  visibleLoads() {
    if (this.#loads === null) return [];
    const names = [];
    for (const [name, seq] of this.#loads) if (this.#visible.has(seq)) names.push(name);
    return names;
  }

  /**
   * The message of a `tool/result` event that records a load, read as
   * skill-host records it (the source with `plugin` and `loaded`), or null.
   */
  #recordedLoad({ data }) {
    if (!isObject(data) || !isObject(data.message)) return null;
    const { message } = data;
    const { source } = message;
    if (!isObject(source) || source.kind !== 'tool' || !Array.isArray(message.content)) return null;
    let loaded;
    if (Object.hasOwn(data, 'meta')) {
      // What the tool's `presentationMeta` gave: the load, or null for none.
      loaded = isObject(data.meta) && data.meta.plugin === PLUGIN ? loadedRecord(data.meta.loaded) : null;
    } else {
      loaded = loadedRecord(this.#pending.get(source.callId));
      this.#pending.delete(source.callId);
    }
    if (loaded === null || failedResult(message)) return null;
    return { ...message, source: { ...source, plugin: PLUGIN, loaded } };
  }

  /** Indexes what was appended since the last call. */
  refresh() {
    const session = this.#session;
    if (session.seq === this.#seen) return this;
    const events = session.events;
    let replaced = false;
    for (let index = this.#seen; index < events.length; index += 1) {
      const event = events[index];
      let message = userRoleMessage(event);
      if (message === null && this.#loads !== null && event.type === TOOL_RESULT) message = this.#recordedLoad(event);
      if (message !== null) {
        // Lone surrogates read as U+FFFD, as the Rust host reads them.
        const source = wellFormed(message.source);
        this.#messages.add(event.seq, { source, content: wellFormed(message.content) });
        if (event.surfaceOp === 'append') this.#visible.add(event.seq);
        this.historyVersion += 1n;
        if (this.#loads !== null && source?.kind === 'tool' && typeof source.loaded?.name === 'string') {
          this.#loads.set(source.loaded.name, Number(event.seq));
        }
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
  #options;

  /** `options.loads`: the drop-in's `loadedSkills` (`HarnessSession`). */
  constructor(options = {}) {
    this.#options = options;
  }

  #indexed(session) {
    let indexed = this.#sessions.get(session);
    if (indexed === undefined) {
      indexed = new HarnessSession(session, this.#options);
      this.#sessions.set(session, indexed);
    }
    return indexed;
  }

  of(session) {
    return this.#indexed(session).refresh();
  }

  /** A `skill` call with `callId` in `session` loaded `loaded` (`HarnessSession.remember`). */
  remember(session, callId, loaded) {
    this.#indexed(session).remember(callId, loaded);
  }
}

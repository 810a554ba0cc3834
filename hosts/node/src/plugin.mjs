// The plugin as the host uses it: each export called in the sandbox, and
// everything it returns checked before use. Messages are user-message `data`
// objects as the session log stores them (`content`, `source`, `role`, `id`);
// a decision is `{ enter: [data…] }` or `{ reject: reason | null }`.
// A tool call's outcome is `{ ok, text, loaded }` (`loaded`: `{ name,
// provider, bodyDigest }` or null) or `{ error }`.

import { HostError } from './errors.mjs';
import { CallContext, contentToWit, FileReads, notingFileReads } from './host-imports.mjs';
import { isObject, keepKeyOrder, parse, stringify } from './json.mjs';
import { OutputCheck } from './output.mjs';
import { Recall } from './recall.mjs';
import { CATALOG_SOURCE, isDigest, isSkillName, MAX_DIGEST_BYTES, readRecord } from './record.mjs';
import { DEFAULT_LIMITS, Sandbox } from './sandbox.mjs';
import { newMessageId } from './session.mjs';

/** A user-message `data` object with one text block and a fresh id. */
export function userMessage(source, text) {
  return { content: [{ type: 'text', text }], source, role: 'user', id: newMessageId() };
}

export class Plugin {
  #sandbox;
  /** Calls answered without crossing into the sandbox again (recall.mjs), or null. */
  #recall;

  constructor(sandbox, { recall = false } = {}) {
    this.#sandbox = sandbox;
    this.#recall = recall === false ? null : new Recall({ keep: recall !== 'ahead' });
  }

  /**
   * Loads `component` (bytes) and checks that it accepts `config` (JSON
   * text). `options`: the sandbox's (`cacheDir`, `onCall`), and `recall`
   * (src/recall.mjs): `true` answers a repeated `skill` call and a repeated
   * steady pre-step from the earlier one and reads ahead for the others,
   * `'ahead'` only reads ahead, `false` (the default) does neither.
   */
  static async create(component, config = '{}', limits = DEFAULT_LIMITS, options = {}) {
    return new Plugin(await Sandbox.create(component, config, limits, options), options);
  }

  /** Ends the plugin's thread. */
  close() {
    return this.#sandbox.close();
  }

  #check(call) {
    return new OutputCheck(call, this.#sandbox.limits);
  }

  /** The `skill` tool's definition, as the plugin declares it. */
  async definition(Host = CallContext) {
    const { val } = await this.#sandbox.call('definition', 'definition', [], new Host());
    const check = this.#check('definition');
    check.text(() => 'the name', val.name);
    check.text(() => 'the description', val.description);
    check.text(() => 'the parameters', val.parameters);
    let parameters;
    try {
      parameters = parse(val.parameters);
    } catch (error) {
      throw HostError.invalidOutput('definition', `parameters are not JSON: ${error.message}`);
    }
    return { name: val.name, description: val.description, parameters };
  }

  /**
   * Runs the pre-step for `session` (its `key` and `historyVersion`, and the
   * user messages `Host` reads; dsh/bridge.mjs `HarnessSession`), with
   * `registry` telling its `cachedRevision(cwd)`. `input` is `{ cwd,
   * toolView, aborted }` (`aborted` a function, consulted before the call and
   * by every registry import). Resolves to `{ decision }` (validated) or
   * `{ aborted: true }`; appending the decision is the caller's step boundary.
   * `Host` answers the imports (a `CallContext` unless a bridge to another
   * harness brings its own, as dsh/bridge.mjs does).
   */
  async preStep(registry, session, input, decision, Host = CallContext) {
    const aborted = input.aborted ?? (() => false);
    const cwd = input.cwd ?? null;
    const proposed = 'reject' in decision ? [] : decision.enter.map(messageToWit);
    const context = {
      session: session.key,
      // What the plugin may have remembered: the registry's cached complete
      // snapshot for cwd, and the session history's version.
      registryRevision: registry.cachedRevision(cwd),
      historyVersion: session.historyVersion,
      toolView: input.toolView ?? 'visible',
      aborted: aborted(),
      proposal: 'reject' in decision ? { tag: 'reject' } : { tag: 'enter', val: proposed.length },
    };
    const step = { proposed, decided: null, decisions: 0 };
    if (this.#recall?.steady(context)) return { decision };
    let host = new Host({ registry, session, cwd, step, aborted });
    const recording = this.#recall?.record(host);
    host = recording ?? host;
    const returned = await this.#sandbox.call('pre-step', 'preStep', [context], host);
    if (returned.tag === 'err') return { aborted: true };
    const applied = applyDecision(decision, step, this.#check('pre-step'));
    if (recording !== undefined) this.#recall.stepped(recording, context);
    return { decision: applied };
  }

  /**
   * Calls the `skill` tool with the model's JSON `argumentsText`: `{ ok,
   * text, loaded }` or `{ error }`. `ok` is the skill's value, or `{ matches:
   * [{ name, description }] }` for a `query` (`skillSearch`). `loaded` is
   * what the plugin asked the host to record of the load (`{ name, provider,
   * bodyDigest }`, the digest a string or null), or null.
   */
  async invoke(registry, cwd, argumentsText, Host = CallContext) {
    // The files the registry answered `text` for during this call: a `file` value must be one (§8.5).
    const reads = new FileReads();
    const host = new Host({ registry, cwd: cwd ?? null });
    const check = this.#check('invoke');
    if (this.#recall === null) {
      const returned = await this.#sandbox.call('invoke', 'invoke', [argumentsText], notingFileReads(host, reads));
      return outcomeOf(returned, argumentsText, check, reads);
    }
    // The registry's answers read here count against the call's wall-clock cap.
    const startedAt = performance.now();
    const recalled = await this.#withinWallCap('invoke', this.#recall.invoke(host, argumentsText));
    if (recalled.outcome !== undefined) return recalled.outcome;
    const recording = this.#recall.record(notingFileReads(new Host({ registry, cwd: cwd ?? null }), reads));
    recording.preloads = recalled.preloads;
    const returned = await this.#sandbox.call('invoke', 'invoke', [argumentsText], recording, {
      preloads: recording.preloads,
      onPreloadsUsed: (count) => {
        // Answers the guest took without crossing were answered to it all the same.
        for (const { name, args, answer } of recording.preloads.slice(0, count)) {
          if (name === 'readSkillFile') reads.note(args[0], args[1], answer);
        }
        recording.preloadsUsed(count);
      },
      startedAt,
    });
    const outcome = outcomeOf(returned, argumentsText, check, reads);
    this.#recall.invoked(recording, argumentsText, outcome);
    return outcome;
  }

  /** `promise`, or the sandbox's wall-clock cap error for call `name` once the cap has passed first. */
  #withinWallCap(name, promise) {
    const wallMs = this.#sandbox.limits.wallTimeoutMs ?? null;
    if (wallMs === null) return promise;
    let timer;
    const expired = new Promise((_, reject) => {
      timer = setTimeout(() => reject(HostError.wallTimeout(name, wallMs)), wallMs);
    });
    return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
  }

  /** Pi-style disclosure: the system-prompt block for `cwd` (empty when no skill is visible). */
  async systemPrompt(registry, cwd, Host = CallContext) {
    const host = new Host({ registry, cwd: cwd ?? null });
    const returned = await this.#sandbox.call('system-prompt', 'systemPrompt', [], host);
    if (returned.tag === 'err') throw HostError.invalidOutput('system-prompt', 'reported an abort outside a step');
    this.#check('system-prompt').text(() => 'the system prompt', returned.val);
    return returned.val;
  }

  /** Pi's `/skill:NAME args`: the expanded text, or `text` unchanged. */
  async expand(registry, cwd, text, Host = CallContext) {
    const host = new Host({ registry, cwd: cwd ?? null });
    const returned = await this.#sandbox.call('expand', 'expand', [text], host);
    if (returned.tag === 'err') throw HostError.invalidOutput('expand', 'reported an abort outside a step');
    this.#check('expand').text(() => 'the expansion', returned.val);
    return returned.val;
  }
}

/**
 * A `skill` call's result, checked, as `Plugin.invoke` returns it; `reads`
 * (`FileReads`) the files the registry answered `text` for during the call.
 */
function outcomeOf(returned, argumentsText, check, reads) {
  validateToolResult(returned, argumentsText, check, reads);
  if (returned.tag === 'err') return { error: returned.val };
  const { text } = returned.val;
  if (returned.val.value.tag === 'matches') {
    const matches = returned.val.value.val.map(({ name, description }) => ({ name, description }));
    return { ok: keepKeyOrder({ matches }), text, loaded: null };
  }
  const value = returned.val.value.val;
  const ok = { name: value.name, provider: value.provider };
  const base = value.resourceBase;
  if (returned.val.value.tag === 'file') {
    ok.path = value.path;
  } else if (base !== undefined && base !== null) {
    ok.resourceBase =
      base.tag === 'directory'
        ? { kind: 'directory', path: base.val }
        : base.tag === 'url'
          ? { kind: 'url', url: base.val }
          : { kind: 'opaque', description: base.val };
  }
  ok.content = value.content;
  const recorded = returned.val.loaded;
  const loaded =
    recorded === undefined || recorded === null
      ? null
      : { name: recorded.name, provider: recorded.provider, bodyDigest: recorded.bodyDigest ?? null };
  return { ok: keepKeyOrder(ok), text, loaded };
}

function messageToWit(data) {
  if (!isObject(data?.source)) throw HostError.input(`a proposed message has no source object: ${stringify(data)}`);
  if (!Array.isArray(data.content)) throw HostError.input(`a proposed message has no content array: ${stringify(data)}`);
  return { source: stringify(data.source), content: contentToWit(data.content) };
}

/**
 * Applies what the plugin decided to the proposal, checking it first: a
 * reject cannot be changed; an enter may keep proposed messages (by index, in
 * their order, each once) and add at most one catalog with the plugin's own
 * source, plus one skill injection per distinct `/name` a user wrote in a
 * proposed message, plus at most one note naming the skills it did not load,
 * plus skill notices (docs/spec.md §3.12): at most one changed or gone notice
 * per skill and at most one reload notice. `step` is `{ decided, decisions }` as the `step` imports recorded it.
 */
export function applyDecision(proposed, step, check) {
  const invalid = (reason) => HostError.invalidOutput('pre-step', reason);
  if (step.decisions > 1) throw invalid(`it decided ${step.decisions} times; a pre-step decides at most once`);
  if ('reject' in proposed) {
    if (step.decided === null) return proposed;
    throw invalid('the plugin may not change a reject');
  }
  if (step.decided === null) return proposed;
  check.addedCount(step.decided.filter((message) => message.tag === 'added').length);
  const invocable = gestureNames(proposed.enter);
  let keptUpTo = 0;
  let catalogs = 0;
  let notes = 0;
  let addedCount = 0;
  const injected = [];
  const noticed = [];
  let reloads = 0;
  const messages = [];
  for (const { tag, val } of step.decided) {
    if (tag === 'proposed') {
      if (val < keptUpTo || val >= proposed.enter.length) {
        throw invalid(
          `it kept proposed message ${val} out of order or out of range (${proposed.enter.length} proposed)`,
        );
      }
      keptUpTo = val + 1;
      messages.push(proposed.enter[val]);
      continue;
    }
    addedCount += 1;
    check.addedMessage(addedCount, val);
    const added = addedMessage(val, invalid);
    switch (added.record) {
      case 'catalog':
      case 'skill-catalog':
      case 'catalog-update':
        // The step's one catalog: complete, in either form, or an update.
        catalogs += 1;
        if (catalogs > 1) throw invalid('more than one catalog was added');
        break;
      case 'invocation-note':
        notes += 1;
        if (notes > 1) throw invalid('more than one invocation note was added');
        break;
      case 'reload-notice':
        reloads += 1;
        if (reloads > 1) throw invalid('more than one reload notice was added');
        break;
      case 'changed-notice':
      case 'gone-notice':
        if (noticed.includes(added.name)) throw invalid(`skill "${added.name}" got more than one notice`);
        noticed.push(added.name);
        break;
      case 'invocation': {
        const { name } = added;
        if (!invocable.includes(name) || injected.includes(name)) {
          throw invalid(`skill "${name}" was injected without a user's /${name}`);
        }
        injected.push(name);
        break;
      }
    }
    messages.push(added.data);
  }
  return { enter: messages };
}

/**
 * Checks a `skill` call's result before anyone sees it: every string within
 * the caps; a success names a valid skill, the one the arguments asked for,
 * and a provider; a `file` value (since 0.4.0) names a path the registry
 * answered `text` for, for that skill, during this call (`reads`, a
 * `FileReads`; none without it); an error reads `Error: …` as the model
 * must see it.
 */
export function validateToolResult(returned, argumentsText, check, reads = null) {
  const invalid = (reason) => HostError.invalidOutput('invoke', reason);
  if (returned.tag === 'err') {
    check.text(() => 'the error text', returned.val);
    if (!returned.val.startsWith('Error: ')) throw invalid('a tool error must read `Error: <message>`');
    return;
  }
  const { text } = returned.val;
  check.text(() => 'the text', text);
  if (returned.val.value.tag === 'matches') {
    validateMatches(returned.val.value.val, returned.val.loaded, argumentsText, check, invalid);
    return;
  }
  const file = returned.val.value.tag === 'file';
  const value = returned.val.value.val;
  check.text(() => "the value's name", value.name);
  check.text(() => "the value's provider", value.provider);
  if (file) check.text(() => "the value's path", value.path);
  check.text(() => "the value's content", value.content);
  if (!file && value.resourceBase !== undefined && value.resourceBase !== null) {
    check.text(() => "the value's resource base", value.resourceBase.val);
  }
  if (!isSkillName(value.name)) {
    throw invalid(`the value names skill ${JSON.stringify(value.name)}, which is not a valid skill name`);
  }
  // The tool loads exactly the skill it was asked for (docs/spec.md §3.3).
  let requested;
  try {
    const argumentsValue = parse(argumentsText);
    if (isObject(argumentsValue) && typeof argumentsValue.name === 'string') requested = argumentsValue.name;
  } catch {
    requested = undefined;
  }
  if (requested !== value.name) {
    const asked = requested === undefined ? 'no valid name' : `"${requested}"`;
    throw invalid(`the value is skill "${value.name}", but the arguments asked for ${asked}`);
  }
  if (value.provider === '') throw invalid(`the value of skill "${value.name}" names no provider`);
  const { loaded } = returned.val;
  if (loaded !== undefined && loaded !== null) {
    if (loaded.name !== value.name || loaded.provider !== value.provider) {
      throw invalid(`the load it records is skill "${loaded.name}" of provider "${loaded.provider}", not the value's`);
    }
    if (loaded.bodyDigest !== undefined && loaded.bodyDigest !== null && !isDigest(loaded.bodyDigest)) {
      throw invalid(
        `the load it records has a body digest that is not up to ${MAX_DIGEST_BYTES} printable ASCII characters`,
      );
    }
  }
  // A file is one the registry read for this very call (docs/spec.md §8.5): the plugin names no other.
  if (file && !(reads?.has(value.name, value.path) ?? false)) {
    throw invalid(
      `the value is file ${JSON.stringify(value.path)} of skill "${value.name}", which the registry did not read for this call`,
    );
  }
}

/** The most skills one `query` returns (`MAX_SEARCH_MATCHES` in rules/src/lib.rs). */
export const MAX_SEARCH_MATCHES = 5;

/**
 * Checks what a `query` found (docs/spec.md §3.14): asked for by a string
 * `query` and no `name`, at most `MAX_SEARCH_MATCHES` distinct valid skill names, no load
 * to record.
 */
function validateMatches(matches, loaded, argumentsText, check, invalid) {
  let query;
  try {
    const argumentsValue = parse(argumentsText);
    if (isObject(argumentsValue) && typeof argumentsValue.query === 'string' && !Object.hasOwn(argumentsValue, 'name')) {
      query = argumentsValue.query;
    }
  } catch {
    query = undefined;
  }
  if (query === undefined) throw invalid('it returned search matches, but the arguments have no query');
  if (matches.length > MAX_SEARCH_MATCHES) {
    throw invalid(`it returned ${matches.length} search matches; at most ${MAX_SEARCH_MATCHES} are allowed`);
  }
  matches.forEach((found, index) => {
    check.text(() => `search match ${index}'s name`, found.name);
    check.text(() => `search match ${index}'s description`, found.description);
    if (!isSkillName(found.name) || matches.slice(0, index).some((earlier) => earlier.name === found.name)) {
      throw invalid(
        `search match ${index} names skill ${JSON.stringify(found.name)}, which is not a valid skill name or is listed twice`,
      );
    }
  });
  if (loaded !== undefined && loaded !== null) throw invalid('it records a load for search matches');
}

/**
 * Checks one added message (`{ source, content }` as the WIT gives it): its
 * source is JSON, it is exactly one text block, and its source is a record
 * the plugin may write (src/record.mjs). Returns what `readRecord` read, with
 * `data`, the message in the log's shape; throws `invalid(reason)`.
 */
export function addedMessage(message, invalid) {
  let source;
  try {
    source = parse(message.source);
  } catch (error) {
    throw invalid(`an added message's source is not JSON: ${error.message}`);
  }
  if (message.content.length !== 1 || message.content[0].tag !== 'text') {
    throw invalid('an added message must be exactly one text block');
  }
  const read = readRecord(source);
  if (read.refused === 'not-a-notice') {
    throw invalid(`an added skill notice has source ${stringify(source)}, which is not a changed, gone or reload notice`);
  }
  if (read.refused !== undefined) {
    throw invalid(
      `an added message has source ${stringify(source)}; the plugin may only write ${stringify(CATALOG_SOURCE)} or a skill invocation`,
    );
  }
  return { ...read, data: userMessage(source, message.content[0].val) };
}

// Rust's `char::is_whitespace` (Unicode White_Space) plus U+FEFF.
const TOKEN_BREAK = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/** Every `/name` token in the proposed messages' text blocks. */
function gestureNames(proposed) {
  const names = [];
  for (const data of proposed) {
    const blocks = isObject(data) && Array.isArray(data.content) ? data.content : [];
    for (const block of blocks) {
      if (!isObject(block) || typeof block.text !== 'string') continue;
      for (const token of block.text.split(TOKEN_BREAK)) {
        if (token.startsWith('/')) names.push(token.slice(1));
      }
    }
  }
  return names;
}

// Scenario files (docs/spec.md §7): the plugin driven through in-memory providers and
// an in-memory session, one step at a time, with a JSON record of each step
// — the same document `skill-host replay` prints.
//
// `Scenario.parse` reads the whole file first and refuses a malformed one
// with a `ScenarioError` worded its own way (the Rust host's words are
// serde's): what matters is that both hosts refuse the same files. So the
// shapes read here are those of the Rust host's serde types:
// - structures (the scenario, steps, providers, runtime entries, events) are
//   objects, never arrays, and none of their fields may be given twice;
// - a field no structure names is ignored, but at the top level;
// - `null` is a missing field, but for `reject`, an invoke's `arguments` and
//   `name`, and an event's `data`;
// - the values kept as JSON (`config`, skills, messages, arguments, event
//   data, `surfaceOp`, `invocation`, `resourceBase`) keep the last of a
//   repeated key.
// What is checked while replaying, in the Rust host's words, is what its
// library checks: the in-memory provider's skills, runtime registrations,
// the session's seeding.

import { HostError, ScenarioError } from './errors.mjs';
import { asU64, duplicateKeys, isObject, parse, stringify } from './json.mjs';
import { invocationPolicy, MemoryProvider, resourceBase } from './memory-provider.mjs';
import { Plugin, recordToolResult, singleText, userMessage } from './plugin.mjs';
import { RegistryFailure, RuntimeSkill, SkillRegistry } from './registry.mjs';
import { newMessageId, SessionError, SessionLog } from './session.mjs';

/** The cwd of a scenario that names none. */
export const DEFAULT_CWD = '/workspace';
/** The text of the summary a `compact` step writes. */
export const COMPACTION_SUMMARY = 'Summary of the earlier conversation.';

const TOP_FIELDS = ['config', 'cwd', 'providers', 'runtime', 'session', 'steps'];
const PROVIDER_FIELDS = ['name', 'complete', 'fail', 'skills'];
const RUNTIME_FIELDS = ['name', 'description', 'content', 'invocation', 'whenToUse', 'source', 'provider', 'resourceBase'];
const EVENT_FIELDS = ['type', 'data', 'surfaceOp'];
/** Each op and the fields of its step (`op` aside). */
const STEP_FIELDS = {
  'pre-step': ['reject', 'messages', 'toolView'],
  propose: ['reject', 'messages', 'toolView'],
  invoke: ['arguments', 'name'],
  compact: [],
  'set-providers': ['providers'],
  'set-runtime': ['runtime'],
};
const TOOL_VIEWS = ['visible', 'hidden', 'shadowed'];

const refuse = (where, reason) => {
  throw new ScenarioError(`${where}: ${reason}`);
};
const absent = (value) => value === undefined || value === null;
const has = (object, key) => Object.hasOwn(object, key);

/** `value` as a structure with these fields: an object, none of them twice, and (`strict`) no others. */
function struct(value, where, fields, strict = false) {
  if (!isObject(value)) refuse(where, 'must be an object');
  for (const key of duplicateKeys(value)) {
    if (fields.includes(key)) refuse(where, `has \`${key}\` twice`);
  }
  if (strict) {
    for (const key of Object.keys(value)) {
      if (!fields.includes(key)) refuse(where, `has an unknown field \`${key}\``);
    }
  }
  return value;
}

/** An array read item by item; `null` or missing is an empty one unless `required`. */
function list(value, where, item, required = false) {
  if (!required && absent(value)) return [];
  if (!Array.isArray(value)) refuse(where, 'must be an array');
  return value.map((entry, index) => item(entry, `${where}[${index}]`));
}

function string(value, where) {
  if (typeof value !== 'string') refuse(where, 'must be a string');
  return value;
}

function providerEntry(value, where) {
  struct(value, where, PROVIDER_FIELDS);
  let complete = true;
  if (!absent(value.complete)) {
    if (typeof value.complete !== 'boolean') refuse(`${where}.complete`, 'must be a boolean');
    complete = value.complete;
  }
  return {
    name: string(value.name, `${where}.name`),
    complete,
    fail: absent(value.fail) ? null : string(value.fail, `${where}.fail`),
    skills: list(value.skills, `${where}.skills`, skillEntry),
  };
}

/** A provider's skill: its fields as given (checked by `MemoryProvider`), less `loaded`. */
function skillEntry(value, where) {
  if (!isObject(value)) refuse(where, 'must be an object');
  const fields = Object.assign(Object.create(null), value);
  delete fields.loaded;
  // undefined: as listed; null: nothing; an object: the fields it replaces.
  const loaded = value.loaded;
  if (loaded !== undefined && loaded !== null && !isObject(loaded)) refuse(`${where}.loaded`, 'must be an object or null');
  return { fields, loaded };
}

/** A runtime skill; `whenToUse`, `source` and `provider` count only as strings. */
function runtimeEntry(value, where) {
  struct(value, where, RUNTIME_FIELDS);
  const text = (key) => (typeof value[key] === 'string' ? value[key] : null);
  const entry = {
    name: string(value.name, `${where}.name`),
    description: string(value.description, `${where}.description`),
    content: string(value.content, `${where}.content`),
    invocation: null,
    whenToUse: text('whenToUse'),
    source: text('source'),
    provider: text('provider'),
    resourceBase: null,
  };
  try {
    if (!absent(value.invocation)) entry.invocation = invocationPolicy(value.invocation);
  } catch (error) {
    refuse(`${where}.invocation`, error.message);
  }
  try {
    entry.resourceBase = resourceBase(value.resourceBase);
  } catch (error) {
    refuse(`${where}.resourceBase`, error.message);
  }
  return entry;
}

function seedEvent(value, where) {
  struct(value, where, EVENT_FIELDS);
  return {
    type: string(value.type, `${where}.type`),
    data: value.data === undefined ? {} : value.data,
    surfaceOp: surfaceOp(value.surfaceOp, `${where}.surfaceOp`),
  };
}

/** `"append"`, `{"op":"replace","start","end"}` (seqs; a value, not a structure), or null. */
function surfaceOp(marker, where) {
  if (absent(marker)) return null;
  if (marker === 'append') return 'append';
  if (isObject(marker) && marker.op === 'replace') {
    const start = asU64(marker.start);
    const end = asU64(marker.end);
    if (start !== undefined && end !== undefined) return { op: 'replace', start, end };
  }
  return refuse(where, 'must be "append" or {"op":"replace","start":SEQ,"end":SEQ}');
}

function step(value, where) {
  if (!isObject(value)) refuse(where, 'must be an object');
  const { op } = value;
  if (op === undefined) refuse(where, 'has no `op`');
  if (typeof op !== 'string' || !has(STEP_FIELDS, op)) refuse(where, `has an unknown op ${stringify(op)}`);
  struct(value, where, ['op', ...STEP_FIELDS[op]]);
  switch (op) {
    case 'pre-step':
    case 'propose': {
      // undefined: enter the messages; null or a string: reject, without or with a reason.
      const reject = has(value, 'reject') && value.reject !== null ? string(value.reject, `${where}.reject`) : value.reject;
      let toolView = 'visible';
      if (!absent(value.toolView)) {
        if (!TOOL_VIEWS.includes(value.toolView)) refuse(`${where}.toolView`, 'must be "visible", "hidden" or "shadowed"');
        toolView = value.toolView;
      }
      return { op, reject, messages: list(value.messages, `${where}.messages`, proposedMessage), toolView };
    }
    case 'invoke': {
      let args;
      if (has(value, 'arguments')) args = value.arguments;
      else if (has(value, 'name')) args = { name: value.name };
      else refuse(where, 'an invoke step needs `name` or `arguments`');
      return { op, argumentsText: stringify(args) };
    }
    case 'set-providers':
      return { op, providers: list(value.providers, `${where}.providers`, providerEntry, true) };
    case 'set-runtime':
      return { op, runtime: list(value.runtime, `${where}.runtime`, runtimeEntry, true) };
    default:
      return { op };
  }
}

/** A proposed message: a plain string, or a user-message `data` object. */
function proposedMessage(value, where) {
  if (typeof value === 'string') return { text: value };
  if (!isObject(value)) refuse(where, 'must be a string or an object');
  if (!isObject(value.source)) refuse(where, 'needs a `source` object');
  if (!Array.isArray(value.content)) refuse(where, 'needs a `content` array');
  return { data: value };
}

export class Scenario {
  /** Parses a scenario document; throws a `ScenarioError` naming the field at fault. */
  static parse(text) {
    let document;
    try {
      document = parse(text);
    } catch (error) {
      throw new ScenarioError(`not valid JSON: ${error.message}`);
    }
    struct(document, 'the scenario', TOP_FIELDS, true);
    if (!has(document, 'steps')) refuse('the scenario', 'has no `steps`');
    const scenario = new Scenario();
    Object.assign(scenario, {
      config: absent(document.config) ? null : stringify(document.config),
      cwd: absent(document.cwd) ? DEFAULT_CWD : string(document.cwd, 'cwd'),
      providers: list(document.providers, 'providers', providerEntry),
      runtime: list(document.runtime, 'runtime', runtimeEntry),
      session: list(document.session, 'session', seedEvent),
      steps: list(document.steps, 'steps', step),
    });
    return scenario;
  }

  /** Runs every step against `component` (bytes) and returns `{ steps: […] }`. */
  async replay(component, limits, options = {}) {
    const plugin = await Plugin.create(component, this.config ?? '{}', limits, options);
    try {
      const registry = new SkillRegistry();
      registry.setProviders(providers(this.providers));
      setRuntime(registry, this.runtime);
      const session = new SessionLog(this.cwd);
      seed(session, this.session);
      const records = [];
      for (const [index, step] of this.steps.entries()) {
        try {
          records.push(await this.#run(plugin, registry, session, step));
        } catch (error) {
          if (error instanceof HostError && error.kind === 'input') {
            throw HostError.input(`step ${index}: ${error.message}`);
          }
          throw error;
        }
      }
      return { steps: records };
    } finally {
      await plugin.close();
    }
  }

  async #run(plugin, registry, session, step) {
    switch (step.op) {
      case 'pre-step':
      case 'propose': {
        const proposed =
          step.reject === undefined ? { enter: step.messages.map(proposedData) } : { reject: step.reject };
        const stepInput = { cwd: this.cwd, toolView: step.toolView };
        const outcome = await plugin.preStep(registry, session, stepInput, proposed);
        // A step boundary appends what the step enters; a proposal only records it.
        if (step.op === 'pre-step' && outcome.decision?.enter?.length > 0) {
          guardSession(() => session.appendUserMessages(outcome.decision.enter.map((data) => [data, 'append'])));
        }
        return decisionRecord(outcome);
      }
      case 'invoke': {
        const outcome = await plugin.invoke(registry, this.cwd, step.argumentsText);
        // The call is recorded in the session as a harness records it
        // (host-runner/src/step.rs `record_tool_result`), so later steps read it.
        guardSession(() => recordToolResult(session, outcome));
        return 'error' in outcome ? { error: outcome.error } : { ok: outcome.ok, text: outcome.text };
      }
      case 'compact':
        guardSession(() => session.compact(COMPACTION_SUMMARY));
        return {};
      case 'set-providers':
        registry.setProviders(providers(step.providers));
        return {};
      default:
        setRuntime(registry, step.runtime);
        return {};
    }
  }
}

/** A proposed message's `data`, with `role` and a fresh `id` when it names none. */
function proposedData(message) {
  if (message.text !== undefined) return userMessage({ kind: 'user' }, message.text);
  const data = Object.assign(Object.create(null), message.data);
  if (!('role' in data)) data.role = 'user';
  if (!('id' in data)) data.id = newMessageId();
  return data;
}

/** Session failures end the replay as the Rust host's do (not as input errors). */
function guardSession(append) {
  try {
    return append();
  } catch (error) {
    if (error instanceof SessionError) throw new HostError('session', error.message);
    throw error;
  }
}

/** The record of a pre-step or proposal: every message of the decision. */
function decisionRecord(outcome) {
  if (outcome.aborted) return { kind: 'aborted' };
  if ('reject' in outcome.decision) return { kind: 'reject' };
  const messages = outcome.decision.enter.map((data) => {
    const text = singleText(data);
    const source = data.source ?? null;
    return text === undefined ? { source, content: data.content ?? null } : { source, text };
  });
  return { kind: 'enter', messages };
}

/** The in-memory providers; a malformed skill is refused here, in the Rust host's words. */
function providers(entries) {
  return entries.map((entry, index) => {
    try {
      return new MemoryProvider(entry.name, entry.complete, entry.fail, entry.skills);
    } catch (error) {
      throw HostError.input(`provider ${index}: ${error.message}`);
    }
  });
}

function setRuntime(registry, entries) {
  registry.clearRuntime();
  entries.forEach((entry, index) => {
    const skill = new RuntimeSkill(entry.name, entry.description, entry.content);
    if (entry.invocation !== null) skill.invocation = entry.invocation;
    skill.whenToUse = entry.whenToUse;
    skill.source = entry.source ?? skill.source;
    skill.provider = entry.provider ?? skill.provider;
    skill.resourceBase = entry.resourceBase;
    try {
      registry.registerRuntime(skill);
    } catch (error) {
      if (error instanceof RegistryFailure) throw HostError.input(`runtime skill ${index}: ${error.message}`);
      throw error;
    }
  });
}

/** Seeds the session with the scenario's events, seq assigned in order. */
function seed(session, events) {
  for (const { type, data, surfaceOp: op } of events) {
    guardSession(() => {
      if (type === 'user/message') session.appendUserMessages([[data, op ?? 'append']]);
      else session.appendEvent(type, data, op);
    });
  }
}

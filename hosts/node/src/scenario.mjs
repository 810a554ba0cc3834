// Scenario files (SPEC §7): the plugin driven through in-memory providers and
// an in-memory session, one step at a time, with a JSON record of each step
// — the same document `skill-host replay` prints.

import { HostError } from './errors.mjs';
import { asU64, compareCodePoints, isObject, parse, stringify } from './json.mjs';
import { invocationPolicy, MemoryProvider, resourceBase } from './memory-provider.mjs';
import { Plugin, singleText, userMessage } from './plugin.mjs';
import { RegistryFailure, RuntimeSkill, SkillRegistry } from './registry.mjs';
import { newMessageId, SessionError, SessionLog } from './session.mjs';

/** The cwd of a scenario that names none. */
export const DEFAULT_CWD = '/workspace';
/** The text of the summary a `compact` step writes. */
export const COMPACTION_SUMMARY = 'Summary of the earlier conversation.';

const FIELDS = ['config', 'cwd', 'providers', 'runtime', 'session', 'steps'];
const input = (reason) => HostError.input(reason);

export class Scenario {
  /** Parses a scenario document; errors name the field at fault. */
  static parse(text) {
    let document;
    try {
      document = parse(text);
    } catch (error) {
      throw input(`scenario is not valid JSON: ${error.message}`);
    }
    if (!isObject(document)) throw input('scenario must be a JSON object');
    for (const key of Object.keys(document).sort(compareCodePoints)) {
      if (!FIELDS.includes(key)) throw input(`scenario has an unknown field \`${key}\``);
    }
    const list = (key) => {
      const value = document[key];
      if (value === undefined || value === null) return [];
      if (!Array.isArray(value)) throw input(`scenario field \`${key}\` must be an array`);
      return value;
    };
    const config = document.config === undefined || document.config === null ? null : stringify(document.config);
    let cwd = DEFAULT_CWD;
    if (typeof document.cwd === 'string') cwd = document.cwd;
    else if (document.cwd !== undefined && document.cwd !== null) throw input('scenario field `cwd` must be a string');
    if (!('steps' in document)) throw input('scenario has no `steps`');
    const scenario = new Scenario();
    Object.assign(scenario, {
      config,
      cwd,
      providers: list('providers'),
      runtime: list('runtime'),
      session: list('session'),
      steps: list('steps'),
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
          if (error instanceof HostError && error.kind === 'input') throw input(`step ${index}: ${error.message}`);
          throw error;
        }
      }
      return { steps: records };
    } finally {
      await plugin.close();
    }
  }

  async #run(plugin, registry, session, step) {
    const op = isObject(step) ? step.op : undefined;
    if (typeof op !== 'string') throw input('a step needs an `op` string');
    switch (op) {
      case 'pre-step':
      case 'propose': {
        let proposed;
        if (!('reject' in step)) proposed = { enter: proposedMessages(step.messages) };
        else if (step.reject === null) proposed = { reject: null };
        else if (typeof step.reject === 'string') proposed = { reject: step.reject };
        else throw input('`reject` must be a reason string or null');
        const stepInput = { cwd: this.cwd, toolView: toolView(step.toolView) };
        const outcome = await plugin.preStep(registry, session, stepInput, proposed);
        // A step boundary appends what the step enters; a proposal only records it.
        if (op === 'pre-step' && outcome.decision?.enter?.length > 0) {
          guardSession(() => session.appendUserMessages(outcome.decision.enter.map((data) => [data, 'append'])));
        }
        return decisionRecord(outcome);
      }
      case 'invoke': {
        let argumentsText;
        if ('arguments' in step) argumentsText = stringify(step.arguments);
        else if ('name' in step) argumentsText = stringify({ name: step.name });
        else throw input('an invoke step needs `name` or `arguments`');
        const outcome = await plugin.invoke(registry, this.cwd, argumentsText);
        return 'error' in outcome ? { error: outcome.error } : { ok: outcome.ok, text: outcome.text };
      }
      case 'compact':
        guardSession(() => session.compact(COMPACTION_SUMMARY));
        return {};
      case 'set-providers':
        if (!Array.isArray(step.providers)) throw input('`set-providers` needs a `providers` array');
        registry.setProviders(providers(step.providers));
        return {};
      case 'set-runtime':
        if (!Array.isArray(step.runtime)) throw input('`set-runtime` needs a `runtime` array');
        setRuntime(registry, step.runtime);
        return {};
      default:
        throw input(`unknown step op \`${op}\``);
    }
  }
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

function toolView(value) {
  if (value === undefined || value === null) return 'visible';
  if (value === 'visible' || value === 'hidden' || value === 'shadowed') return value;
  throw input('`toolView` must be "visible", "hidden" or "shadowed"');
}

/** A step's proposed messages: user-message `data` objects (an id added when missing), or strings. */
function proposedMessages(value) {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw input('`messages` must be an array');
  return value.map((item) => {
    if (typeof item === 'string') return userMessage({ kind: 'user' }, item);
    if (!isObject(item)) throw input('a proposed message must be an object or a string');
    if (!isObject(item.source)) throw input('a proposed message needs a `source` object');
    if (!Array.isArray(item.content)) throw input('a proposed message needs a `content` array');
    const data = Object.assign(Object.create(null), item);
    if (!('role' in data)) data.role = 'user';
    if (!('id' in data)) data.id = newMessageId();
    return data;
  });
}

function providers(list) {
  return list.map((value, index) => {
    const provider = (reason) => input(`provider ${index}: ${reason}`);
    const name = isObject(value) ? value.name : undefined;
    if (typeof name !== 'string') throw provider('needs a `name` string');
    let complete = true;
    if (typeof value.complete === 'boolean') complete = value.complete;
    else if (value.complete !== undefined && value.complete !== null) throw provider('`complete` must be a boolean');
    let fail = null;
    if (typeof value.fail === 'string') fail = value.fail;
    else if (value.fail !== undefined && value.fail !== null) throw provider('`fail` must be a string or null');
    const skills = (Array.isArray(value.skills) ? value.skills : []).map((skill) => {
      if (!isObject(skill)) throw provider('a skill must be an object');
      const fields = Object.assign(Object.create(null), skill);
      let loaded;
      if ('loaded' in fields) {
        loaded = fields.loaded;
        delete fields.loaded;
        if (loaded !== null && !isObject(loaded)) throw provider('`loaded` must be an object or null');
      }
      return { fields, loaded };
    });
    try {
      return new MemoryProvider(name, complete, fail, skills);
    } catch (error) {
      throw provider(error.message);
    }
  });
}

function setRuntime(registry, list) {
  registry.clearRuntime();
  list.forEach((value, index) => {
    const runtime = (reason) => input(`runtime skill ${index}: ${reason}`);
    const text = (key) => (isObject(value) && typeof value[key] === 'string' ? value[key] : undefined);
    const required = (key) => {
      const found = text(key);
      if (found === undefined) throw runtime(`needs a \`${key}\` string`);
      return found;
    };
    const skill = new RuntimeSkill(required('name'), required('description'), required('content'));
    const invocation = isObject(value) ? value.invocation : undefined;
    if (invocation !== undefined && invocation !== null) {
      try {
        skill.invocation = invocationPolicy(invocation);
      } catch (error) {
        throw runtime(`\`invocation\`: ${error.message}`);
      }
    }
    skill.whenToUse = text('whenToUse') ?? null;
    skill.source = text('source') ?? skill.source;
    skill.provider = text('provider') ?? skill.provider;
    try {
      skill.resourceBase = resourceBase(value.resourceBase);
    } catch (error) {
      throw runtime(error.message);
    }
    try {
      registry.registerRuntime(skill);
    } catch (error) {
      if (error instanceof RegistryFailure) throw runtime(error.message);
      throw error;
    }
  });
}

/** Seeds the session with the scenario's events, seq assigned in order. */
function seed(session, events) {
  events.forEach((event, index) => {
    const problem = (reason) => input(`session event ${index}: ${reason}`);
    const type = isObject(event) ? event.type : undefined;
    if (typeof type !== 'string') throw problem('needs a `type` string');
    const data = event.data === undefined ? {} : event.data;
    let op = null;
    const marker = event.surfaceOp;
    if (marker === 'append') op = 'append';
    else if (isObject(marker) && marker.op === 'replace') {
      const start = asU64(marker.start);
      const end = asU64(marker.end);
      if (start === undefined || end === undefined) throw problem('a replace needs `start` and `end` seqs');
      op = { op: 'replace', start, end };
    } else if (marker !== undefined && marker !== null) {
      throw problem('`surfaceOp` must be "append" or {"op":"replace","start","end"}');
    }
    guardSession(() => {
      if (type === 'user/message') session.appendUserMessages([[data, op ?? 'append']]);
      else session.appendEvent(type, data, op);
    });
  });
}

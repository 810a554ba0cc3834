// A drop-in replacement for `@deepseek-ai/dsh-tool-skill` (0.1.0-rc.8): the
// same exports (`name`, `inject`, `Config`, `apply`), the same `skill` tool
// and `agent/pre-step` behaviour, the same session records, with every
// decision made by the sandboxed component (docs/spec.md §3.1,
// `catalogSource: "skill-catalog"` with `userInvocation`).
//
//   import * as toolSkill from '@deepseek-ai/dsh-tool-skill'   // before
//   import * as toolSkill from 'dsh-tool-skill-wasm'           // after
//   await ctx.plugin(toolSkill, { catalogDescriptionMaxLength: 500 })

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import z from '@deepseek-ai/schemastery';
import { createUserMessage } from '@deepseek-ai/dsh-llm';
import { escapeText, renderSkillContent } from '@deepseek-ai/dsh-skill';
import { defineTool } from '@deepseek-ai/dsh-tools';

import { embeddedComponent } from '../src/component.mjs';
import { HostError } from '../src/errors.mjs';
import { Plugin } from '../src/plugin.mjs';
import { sameValue } from '../src/json.mjs';
import { DEFAULT_LIMITS } from '../src/sandbox.mjs';
import { HarnessCallContext, HarnessSessions, HarnessSkills, loadMeta, wellFormed } from './bridge.mjs';

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The published plugin's name and services. */
export const name = 'tool-skill';
export const inject = ['agents', 'tools', 'skills'];

const DEFAULT_CATALOG_DESCRIPTION_MAX_LENGTH = 500;

/**
 * The component's other configuration keys (docs/spec.md §3.1), in its
 * order: the opt-in modes, and the two the drop-in turns on by default.
 */
const MODE_KEYS = Object.freeze([
  'userInvocation',
  'loadedSkills',
  'skillBodyMaxLength',
  'catalogSource',
  'catalogBudget',
  'catalogSummaries',
  'catalogWhenToUse',
  'catalogPinned',
  'catalogExclude',
  'catalogNameOnly',
  'userOnly',
  'catalogUpdates',
  'skillSearch',
  'skillReads',
  'skillResourceManifest',
]);

/**
 * What the drop-in gives the component for a key left unset (or `null`):
 * the published version's `/name` invocation and catalog form. Every other
 * key is left to the component's own default.
 */
const DROP_IN_DEFAULTS = Object.freeze({ userInvocation: true, catalogSource: 'skill-catalog' });

/**
 * A key the component checks: any value passes the schema, and the
 * component refuses a bad one in its own words (`tool-skill: skillSearch
 * must be a boolean`, docs/spec.md §3.1). No schema default, so that
 * `Config({})` stays the published plugin's; `componentConfig` fills in
 * the drop-in's.
 */
const modeKey = (description) => z.any().description(description);

/**
 * The published plugin's configuration schema, its one key's default and
 * texts unchanged, and the component's opt-in keys (docs/spec.md §3.1,
 * §3.10–§3.14), passed to the component as given.
 */
export const Config = z.object({
  catalogDescriptionMaxLength: z.number().default(DEFAULT_CATALOG_DESCRIPTION_MAX_LENGTH),
  userInvocation: modeKey('boolean, default true: a user\'s `/name` loads that skill into the conversation (§3.10)'),
  loadedSkills: modeKey('boolean, default false: notices when a skill the model loaded changed or went (§3.12)'),
  skillBodyMaxLength: modeKey('integer ≥ 1000, default none: the most characters of a body returned (§3.12)'),
  catalogSource: modeKey('"plugin" or "skill-catalog", default "skill-catalog": the form catalogs are recorded in (§3.1)'),
  catalogBudget: modeKey('integer ≥ 1, default none: the most characters the catalog\'s entry lines take (§3.13)'),
  catalogSummaries: modeKey('boolean, default false: under a budget, a description that does not fit whole is shown as its first sentence (§3.13)'),
  catalogWhenToUse: modeKey('boolean, default false: an entry\'s description is followed by the skill\'s whenToUse (§3.13)'),
  catalogPinned: modeKey('at most 1024 skill names, default []: listed first under a budget, never shortened (§3.13)'),
  catalogExclude: modeKey('at most 1024 names or patterns (a-z, 0-9, -, *, ?), default []: left out of the catalog (§3.13)'),
  catalogNameOnly: modeKey('at most 1024 names or patterns (a-z, 0-9, -, *, ?), default []: listed by name alone (§3.13)'),
  userOnly: modeKey('at most 1024 names or patterns (a-z, 0-9, -, *, ?), default []: as disable-model-invocation: true (§3.13)'),
  catalogUpdates: modeKey('"full" or "delta", default "full": a change as an update; "delta" needs catalogSource "plugin" (§3.13)'),
  skillSearch: modeKey('boolean, default false: the tool also finds skills by `query` (§3.14)'),
  skillReads: modeKey('boolean, default false: the tool also loads one `section` of a skill, or one of its files by `path`; a cut body ends with an outline (§3.15)'),
  skillResourceManifest: modeKey('integer from 1 to 1000, default none: a whole load ends with a list of at most this many of the skill\'s files (§3.15)'),
});

/**
 * The component's configuration text for `config`: the published key, the
 * drop-in's defaults for `userInvocation` and `catalogSource`, and every
 * other §3.1 key given. Keys the component does not know are left out, as
 * the published plugin ignores them. A value JSON cannot carry (NaN,
 * Infinity, a BigInt, a function) is passed as text, which the component
 * refuses with its own words, as the published plugin refuses NaN.
 */
function componentConfig(config = {}) {
  const given = {
    catalogDescriptionMaxLength: config.catalogDescriptionMaxLength ?? DEFAULT_CATALOG_DESCRIPTION_MAX_LENGTH,
  };
  for (const key of MODE_KEYS) {
    const value = config[key] ?? DROP_IN_DEFAULTS[key];
    if (value !== undefined && value !== null) given[key] = value;
  }
  return JSON.stringify(given, (_key, value) =>
    (typeof value === 'number' && !Number.isFinite(value)) || ['bigint', 'function', 'symbol'].includes(typeof value)
      ? String(value)
      : value,
  );
}

/**
 * Whether the component's configuration text (which it accepted, so JSON
 * or blank) turns `loadedSkills` on: the drop-in then carries each load into
 * the session and gives the component body digests (bridge.mjs).
 */
function recordsLoads(configText) {
  try {
    return JSON.parse(configText)?.loadedSkills === true;
  } catch {
    return false;
  }
}

/** `plugin.wasm` beside package.json, written by `npm run pack` (or `npm run component`). */
const PACKAGED_COMPONENT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'plugin.wasm');

/**
 * The component: `$DSH_TOOL_SKILL_COMPONENT` (a `.wasm` file), else the
 * package's `plugin.wasm`, else, in a checkout of this repository, the one
 * built into its skill-host (see src/component.mjs).
 */
function componentBytes() {
  const named = process.env.DSH_TOOL_SKILL_COMPONENT;
  if (named) {
    try {
      return readFileSync(named);
    } catch (error) {
      throw new Error(`dsh-tool-skill-wasm: cannot read DSH_TOOL_SKILL_COMPONENT=${named}: ${error.message}`);
    }
  }
  try {
    return readFileSync(PACKAGED_COMPONENT);
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  try {
    return embeddedComponent(REPOSITORY);
  } catch (error) {
    if (existsSync(path.join(REPOSITORY, 'wit', 'world.wit'))) {
      // A checkout of this repository: skill-host is not built yet.
      throw new Error(`dsh-tool-skill-wasm: ${error.message}, or set DSH_TOOL_SKILL_COMPONENT to a component .wasm file`);
    }
    throw new Error(
      `dsh-tool-skill-wasm has no plugin component: this package was packed without its plugin.wasm (${PACKAGED_COMPONENT}), ` +
        'and DSH_TOOL_SKILL_COMPONENT is not set. Install a package made with `npm run pack` (in hosts/node of the skill-host repository), ' +
        "or set DSH_TOOL_SKILL_COMPONENT to the component's .wasm file (`skill-host component --output plugin.wasm` writes it).",
    );
  }
}

/**
 * The sandbox's limits: the defaults (1 s of the plugin's own time, 64 MiB),
 * at most 30 s for a whole call, the harness's answers included, and a pool
 * that grows with the calls in flight, so that no agent's step waits for
 * another's (a provider that hangs holds its instance up to the 30 s; the
 * published plugin's calls run concurrently too): one spare instance always
 * ready beside the busy ones (a new thread takes about 40 ms to start and
 * configure), up to 64 at once, two kept however idle, any more ended after
 * a minute or two idle. An idle instance costs about 10 MB (its thread's
 * JavaScript heap and the plugin's memory, which may grow to the 64 MiB cap).
 */
const DROP_IN_LIMITS = Object.freeze({
  ...DEFAULT_LIMITS,
  wallTimeoutMs: 30_000,
  instances: 2,
  spareInstances: 1,
  maxInstances: 64,
  idleRetireMs: 60_000,
});

/** The published plugin's output schema and call card; the model never sees either. */
const OUTPUT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', required: true },
    provider: { type: 'string', required: true },
    resourceBase: {
      oneOf: [
        resourceBaseSchema('directory', 'path'),
        resourceBaseSchema('url', 'url'),
        resourceBaseSchema('opaque', 'description'),
      ],
    },
    content: { type: 'string', required: true },
  },
};

function resourceBaseSchema(kind, field) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: { kind: { type: 'string', required: true, const: kind }, [field]: { type: 'string', required: true } },
  };
}

/**
 * With `skillSearch`, a call may be a search:
 * `{"matches":[{"name","description"}]}` (docs/spec.md §3.14).
 */
const MATCHES_OUTPUT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    matches: {
      type: 'array',
      required: true,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: { name: { type: 'string', required: true }, description: { type: 'string', required: true } },
      },
    },
  },
};

/**
 * With `skillReads`, a call with `path` reads one of the skill's files:
 * `{"name","provider","path","content"}` (docs/spec.md §3.15, contract
 * 0.4.0's `file` value).
 */
const FILE_OUTPUT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', required: true },
    provider: { type: 'string', required: true },
    path: { type: 'string', required: true },
    content: { type: 'string', required: true },
  },
};

/**
 * The output schema for the component's tool definition: the published one
 * (every mode's load: `skillBodyMaxLength` cuts its `content`,
 * `loadedSkills` records the load beside the value, not in it), or one of
 * it and the search matches (a tool that takes a `query`) and the file
 * value (a tool that takes a `path`).
 */
function outputSchema(definition) {
  const takes = (key) => Object.hasOwn(definition.parameters?.properties ?? {}, key);
  const schemas = [OUTPUT_SCHEMA];
  if (takes('query')) schemas.push(MATCHES_OUTPUT_SCHEMA);
  if (takes('path')) schemas.push(FILE_OUTPUT_SCHEMA);
  return schemas.length === 1 ? OUTPUT_SCHEMA : { oneOf: schemas };
}

/**
 * A value the tool did not return (a `tools/post-execute` listener replaced
 * it), rendered as the published plugin renders a skill, or as the
 * component words search matches (docs/spec.md §3.14; how many skills
 * matched in all is not in the value, so the first line is the plain one).
 */
function renderValue(value) {
  // A file: its text as it is (the plugin's own wrapping is in the text the component gave, which a listener replaced).
  if (value !== null && typeof value === 'object' && typeof value.path === 'string') return value.content;
  if (value === null || typeof value !== 'object' || !Array.isArray(value.matches)) return renderSkillContent(value);
  if (value.matches.length === 0) {
    return 'No skill matches the query. Try other words, or load a skill by the exact name the user gave.';
  }
  const lines = value.matches.map((match) => `- \`${match.name}\`: ${escapeText(match.description)}`);
  return ['Skills matching the query:', ...lines, '', 'Load one by calling the `skill` tool with its exact `name`.'].join('\n');
}

/**
 * The call card: a load reads `Load skill <name>`, as the published
 * plugin's; a file read (`skillReads` with `path`) `Read <path> of skill
 * <name>`; a search (`skillSearch`) `Find skills: <query>`. Arguments that
 * are neither (a search call without `name` or `query`) get the runtime's
 * generic card.
 */
function presentCall(args) {
  if (typeof args.name !== 'string' && typeof args.query === 'string') {
    return { card: 'generic', title: `Find skills: ${args.query}`, kind: 'search', rawInput: args.query };
  }
  if (typeof args.name !== 'string') return undefined;
  if (typeof args.path === 'string') {
    return { card: 'generic', title: `Read ${args.path} of skill ${args.name}`, kind: 'read', rawInput: `${args.name}/${args.path}` };
  }
  return { card: 'generic', title: `Load skill ${args.name}`, kind: 'read', rawInput: args.name };
}

/** The component's JSON Schema for the arguments as a dsh-tools parameter spec. */
function parameterSpec(schema) {
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const spec = {};
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    // dsh-tools takes `required: true` or no `required` at all (a search's `name` and `query` are both optional).
    spec[key] = { type: property.type, ...(required.has(key) ? { required: true } : {}), description: property.description };
  }
  return spec;
}

/** The text the harness stores for a tool error: the component's `Error: …` less its prefix, which the runtime adds back. */
function toolError(text) {
  return new Error(text.startsWith('Error: ') ? text.slice('Error: '.length) : text);
}

/**
 * Registers the `skill` tool and the `agent/pre-step` listener on `ctx`.
 * Resolves once the component is compiled and has accepted the
 * configuration; a refused configuration rejects with the component's text
 * (`tool-skill: catalogDescriptionMaxLength must be …`).
 * @param {object} [options] - for tests and embedders: `component` (bytes),
 *   `componentConfig` (the component's configuration text, instead of the
 *   one `config` means), `limits` (the sandbox's, src/sandbox.mjs),
 *   `cacheDir` (src/component.mjs), `onCall(name, ms)` (told of each call
 *   into the sandbox) and `recall` (src/recall.mjs: true unless given;
 *   `'ahead'` recalls nothing but reads ahead, `false` does neither).
 */
export async function apply(ctx, config = {}, options = {}) {
  let plugin;
  try {
    plugin = await Plugin.create(
      options.component ?? componentBytes(),
      options.componentConfig ?? componentConfig(config),
      { ...DROP_IN_LIMITS, ...options.limits },
      // A repeated `skill` call or steady pre-step is answered as the
      // component answered it before, once the registry's answers are the
      // same again (src/recall.mjs); `recall: false` always crosses.
      { recall: options.recall ?? true, cacheDir: options.cacheDir, onCall: options.onCall },
    );
  } catch (error) {
    // The published plugin throws a plain Error with the same text.
    if (error instanceof HostError && error.kind === 'config') throw new Error(error.message);
    throw error;
  }
  try {
    ctx.effect(() => () => plugin.close(), 'tool-skill sandbox');
  } catch (error) {
    // The context went away while the component compiled.
    await plugin.close();
    throw error;
  }
  // With `loadedSkills` (docs/spec.md §3.12) each load reaches the session
  // as the result's `meta`, and snapshots carry body digests (bridge.mjs);
  // without it, none of this runs.
  const loadedSkills = recordsLoads(options.componentConfig ?? componentConfig(config));
  const skills = new HarnessSkills(ctx, { bodyDigests: loadedSkills });
  const sessions = new HarnessSessions({ loads: loadedSkills });
  const definition = await plugin.definition();
  // Each call's outcome, by the call's arguments object, which the runtime
  // hands to `render` and `presentationMeta` with a copy of the value: the
  // component's text, and with `loadedSkills` the load it recorded (for the
  // `meta`). Another call may finish between a call's `execute` and its
  // `render`, and two values can be equal with different texts (a search's
  // "best 5 of n").
  const outcomes = new WeakMap();
  /** The outcome `execute` gave for `args`, if `value` is still its value (no listener replaced it). */
  const outcomeOf = (args, value) => {
    const outcome = outcomes.get(args);
    return outcome !== undefined && sameValue(outcome.ok, value) ? outcome : undefined;
  };
  const tool = defineTool({
    name: definition.name,
    description: definition.description,
    parameters: parameterSpec(definition.parameters),
    output: {
      schema: outputSchema(definition),
      // A value the tool did not return (a `tools/post-execute` listener
      // replaced it) is rendered as the published plugin renders a skill (renderValue).
      render: (args, value) => [{ type: 'text', text: outcomeOf(args, value)?.text ?? renderValue(value) }],
      // With `loadedSkills`: the load, persisted by the agent loop with the
      // `tool/result` event (bridge.mjs `loadMeta`); null for a value that
      // recorded none (a search, or a value a listener put in place).
      ...(loadedSkills ? { presentationMeta: (args, value) => loadMeta(outcomeOf(args, value)?.loaded) } : {}),
    },
    async execute(args, exec) {
      const lookup = { cwd: exec.agent?.session.header.cwd, signal: exec.signal, scope: exec.agent };
      const outcome = await plugin.invoke(skills.view(lookup), lookup.cwd, JSON.stringify(args), HarnessCallContext);
      exec.signal?.throwIfAborted();
      if ('error' in outcome) throw toolError(outcome.error);
      outcomes.set(args, outcome);
      if (loadedSkills && outcome.loaded !== null) {
        // For a loop that writes the result without its `meta`; a nested
        // call's result is not the session's (the harness gives it no `meta` either).
        const session = exec.agent?.session;
        if (session !== undefined && exec.parent === undefined) sessions.remember(session, exec.callId, outcome.loaded);
        skills.loaded(lookup, outcome.loaded);
      }
      return outcome.ok;
    },
    presentCall,
  });
  ctx.tools.register(tool);
  ctx.on('agent/pre-step', async ({ agent, signal }, next) => {
    const decision = await next();
    if (decision.kind === 'reject') return decision;
    signal.throwIfAborted();
    const lookup = { cwd: agent.session.header.cwd, signal, scope: agent };
    const resolved = ctx.tools.get(tool.name, agent);
    const toolView = resolved === tool ? 'visible' : resolved === undefined ? 'hidden' : 'shadowed';
    // The component reads lone surrogates as U+FFFD (bridge.mjs); the
    // decision keeps the harness's own messages.
    const proposed = decision.messages.map(wellFormed);
    const original = new Map(proposed.map((message, index) => [message, decision.messages[index]]));
    const session = sessions.of(agent.session);
    const outcome = await plugin.preStep(
      // A new snapshot digests the bodies of the session's visible loads (with `loadedSkills`).
      skills.view(lookup, session),
      session,
      { cwd: lookup.cwd, toolView, aborted: () => signal.aborted },
      { enter: proposed },
      HarnessCallContext,
    );
    if (outcome.aborted) {
      signal.throwIfAborted();
      throw new Error('the skill plugin reported an abort the step did not see');
    }
    const entered = outcome.decision.enter;
    const unchanged = entered.length === proposed.length && entered.every((message, index) => message === proposed[index]);
    if (unchanged) return decision;
    return {
      kind: 'enter',
      messages: entered.map(
        (message) => original.get(message) ?? createUserMessage({ content: message.content, source: message.source }),
      ),
    };
  });
}


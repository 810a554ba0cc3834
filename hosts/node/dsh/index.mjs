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
import { renderSkillContent } from '@deepseek-ai/dsh-skill';
import { defineTool } from '@deepseek-ai/dsh-tools';

import { embeddedComponent } from '../src/component.mjs';
import { HostError } from '../src/errors.mjs';
import { Plugin } from '../src/plugin.mjs';
import { DEFAULT_LIMITS } from '../src/sandbox.mjs';
import { HarnessCallContext, HarnessSessions, HarnessSkills, wellFormed } from './bridge.mjs';

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The published plugin's name and services. */
export const name = 'tool-skill';
export const inject = ['agents', 'tools', 'skills'];

const DEFAULT_CATALOG_DESCRIPTION_MAX_LENGTH = 500;

/** The published plugin's configuration schema, defaults included. */
export const Config = z.object({
  catalogDescriptionMaxLength: z.number().default(DEFAULT_CATALOG_DESCRIPTION_MAX_LENGTH),
});

/**
 * What the published plugin's configuration means to the component: that
 * version's catalog form and its user `/name` invocation. A value JSON
 * cannot carry (NaN, Infinity) is passed as text, which the component
 * refuses with its own words, as the published plugin refuses it.
 */
function componentConfig(config = {}) {
  const max = config.catalogDescriptionMaxLength ?? DEFAULT_CATALOG_DESCRIPTION_MAX_LENGTH;
  return JSON.stringify({
    catalogDescriptionMaxLength: typeof max === 'number' && !Number.isFinite(max) ? String(max) : max,
    userInvocation: true,
    catalogSource: 'skill-catalog',
  });
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
 * at most 30 s for a whole call, the harness's answers included, and up to
 * 4 instances, so that one agent's slow provider does not hold up another
 * agent's step (the published plugin's calls run concurrently too).
 */
const DROP_IN_LIMITS = Object.freeze({ ...DEFAULT_LIMITS, wallTimeoutMs: 30_000, instances: 4 });

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

/** The component's JSON Schema for the arguments as a dsh-tools parameter spec. */
function parameterSpec(schema) {
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const spec = {};
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    spec[key] = { type: property.type, required: required.has(key), description: property.description };
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
 *   one `config` means) and `limits` (the sandbox's, src/sandbox.mjs).
 */
export async function apply(ctx, config = {}, options = {}) {
  let plugin;
  try {
    plugin = await Plugin.create(
      options.component ?? componentBytes(),
      options.componentConfig ?? componentConfig(config),
      { ...DROP_IN_LIMITS, ...options.limits },
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
  const skills = new HarnessSkills(ctx);
  const sessions = new HarnessSessions();
  const definition = await plugin.definition();
  // The component's text for each value the tool returned (the last 64):
  // the runtime may render a value more than once.
  const rendered = new Map();
  const tool = defineTool({
    name: definition.name,
    description: definition.description,
    parameters: parameterSpec(definition.parameters),
    output: {
      schema: OUTPUT_SCHEMA,
      // A value the tool did not return (a `tools/post-execute` listener
      // replaced it) is rendered as the published plugin renders any value.
      render: (_args, value) => [{ type: 'text', text: rendered.get(JSON.stringify(value)) ?? renderSkillContent(value) }],
    },
    async execute(args, exec) {
      const lookup = { cwd: exec.agent?.session.header.cwd, signal: exec.signal, scope: exec.agent };
      const outcome = await plugin.invoke(skills.view(lookup), lookup.cwd, JSON.stringify(args), HarnessCallContext);
      exec.signal?.throwIfAborted();
      if ('error' in outcome) throw toolError(outcome.error);
      const key = JSON.stringify(outcome.ok);
      rendered.delete(key);
      if (rendered.size >= 64) rendered.delete(rendered.keys().next().value);
      rendered.set(key, outcome.text);
      return outcome.ok;
    },
    presentCall(args) {
      return { card: 'generic', title: `Load skill ${args.name}`, kind: 'read', rawInput: args.name };
    },
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
    const outcome = await plugin.preStep(
      skills.view(lookup),
      sessions.of(agent.session),
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


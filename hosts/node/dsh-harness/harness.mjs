// A DeepSeek Harness set-up from its published packages (pinned in
// package.json's devDependencies), in which a scenario runs once with the
// published `@deepseek-ai/dsh-tool-skill` and once with the drop-in
// (dsh/index.mjs). What a run observes is normalised (message ids, call ids
// and times removed), so two runs compare with `deepStrictEqual`.

import { Context } from '@deepseek-ai/cordis';
import { createUserMessage } from '@deepseek-ai/dsh-llm';
import { Session, SessionId } from '@deepseek-ai/dsh-session';
import SystemPrompt from '@deepseek-ai/dsh-system-prompt';
import ToolRuntime, { defineTool } from '@deepseek-ai/dsh-tools';
import AgentRegistry, { agentEvents, Inbox } from '@deepseek-ai/dsh-agent';
import SkillRegistry from '@deepseek-ai/dsh-skill';
import { createScope } from '@deepseek-ai/dsh-scope';
import * as published from '@deepseek-ai/dsh-tool-skill';

import * as dropIn from '../dsh/index.mjs';

export const PLUGINS = Object.freeze({ published, dropIn });

/** Logger output of the registry (duplicate names, skipped providers) is not what is compared. */
function quiet(ctx) {
  ctx.logger.warn = () => {};
  ctx.logger.info = () => {};
}

/**
 * A harness: a Context with the registry services and `plugin`, a scenario
 * provider, runtime skills, and one agent over `session`.
 * @param {object} options - `plugin`, `config`, `skills`, `providerSkills`, `session` (events), `cwd`, `mount(ctx)`.
 */
export async function createHarness({ plugin, config = {}, skills = [], providerSkills = null, events = [], cwd = '/workspace', mount } = {}) {
  const ctx = new Context();
  quiet(ctx);
  await ctx.plugin(SystemPrompt);
  await ctx.plugin(ToolRuntime);
  await ctx.plugin(AgentRegistry);
  await ctx.plugin(SkillRegistry);
  if (mount) await mount(ctx);
  // A context that may use `tools`, to mint the agent's scope from (setToolView).
  let scoping;
  await ctx.plugin({ name: 'differential-scope', inject: ['tools'], apply: (given) => void (scoping = given) });
  const harness = new Harness(ctx, cwd, events, scoping);
  if (providerSkills !== null) harness.mountProvider(providerSkills);
  harness.setSkills(skills);
  await ctx.plugin(plugin, config);
  return harness;
}

const MODEL_SOURCE = { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' };

class Harness {
  ctx;
  session;
  agent;
  #runtime = [];
  #provider = null;
  #scope = null;
  #calls = 0;

  #scoping;

  constructor(ctx, cwd, events, scoping) {
    this.ctx = ctx;
    this.#scoping = scoping;
    const id = SessionId('differential');
    this.session = Session.create(id, events, { version: 0, id, createdAt: 0, cwd });
    this.agent = {
      id,
      options: {},
      session: this.session,
      inbox: new Inbox(this.session, { inserted() {}, discarded() {}, claimed() {} }),
      status: 'running',
      ctx: new Context(),
      send() {},
      followup() {},
      steer() {},
      inject() {},
      cancel() {},
      runMaintenance: (task) => task(new AbortController().signal),
      whenIdle: () => Promise.resolve(),
    };
  }

  /** Replaces the runtime skills (`ctx.skills.register`). */
  setSkills(skills) {
    for (const dispose of this.#runtime) dispose();
    this.#runtime = skills.map((skill) => this.ctx.skills.register({ source: 'runtime', ...skill }));
  }

  /**
   * A provider named `scenario` whose answers the scenario steers:
   * `state.skills` (candidates, with `content`), `state.incomplete` (an
   * incomplete observation), `state.listError` and `state.getErrors[name]`.
   */
  mountProvider(skills) {
    const state = { skills, incomplete: false, listError: null, getErrors: {} };
    let control;
    this.ctx.skills.registerProvider((given) => {
      control = given;
      return {
        name: 'scenario',
        list: async () => {
          if (state.listError !== null) throw new Error(state.listError);
          const candidates = state.skills.map(({ content: _content, ...candidate }) => ({
            source: 'scenario',
            rank: 500,
            invocation: { modelInvocable: true, userInvocable: true },
            provider: 'scenario',
            ...candidate,
            locator: candidate.name,
          }));
          return state.incomplete ? { candidates, complete: false } : candidates;
        },
        get: async (candidate) => {
          const error = state.getErrors[candidate.name];
          if (error !== undefined) throw new Error(error);
          const skill = state.skills.find((entry) => entry.name === candidate.locator);
          if (skill === undefined) return undefined;
          const { rank: _rank, locator: _locator, ...definition } = { ...candidate, content: skill.content };
          return { ...definition, ...(skill.resourceBase ? { resourceBase: skill.resourceBase } : {}) };
        },
      };
    });
    this.#provider = { state, invalidate: () => control.invalidate() };
  }

  /** Changes the provider's state and tells the registry. */
  steerProvider(change) {
    Object.assign(this.#provider.state, change);
    this.#provider.invalidate();
  }

  /** Hides the `skill` tool from the agent (a restriction) or shadows it (another tool named `skill`). */
  setToolView(view) {
    this.#scope?.dispose();
    this.#scope = null;
    if (view === 'visible') return;
    const scope = createScope(this.#scoping, this.agent);
    if (view === 'hidden') scope.ctx.tools.restrict({ deny: ['skill'] });
    else {
      scope.ctx.tools.register(
        defineTool({
          name: 'skill',
          description: 'Another tool named skill.',
          parameters: { name: { type: 'string', required: true, description: 'Anything.' } },
          output: { schema: { type: 'string' }, render: (_args, value) => [{ type: 'text', text: value }] },
          execute: async () => 'other',
        }),
      );
    }
    this.#scope = scope;
  }

  /** Fires `agent/pre-step` as the agent loop does and appends what it decided. */
  preStep(options = {}) {
    return preStepOf(this.ctx, this.agent, options);
  }

  /** Another agent on this harness's context, over a new session in `cwd`. */
  otherAgent(cwd) {
    const id = SessionId(`other-${cwd}`);
    const session = Session.create(id, [], { version: 0, id, createdAt: 0, cwd });
    const agent = { ...this.agent, id, session, inbox: new Inbox(session, { inserted() {}, discarded() {}, claimed() {} }) };
    return { agent, preStep: (options = {}) => preStepOf(this.ctx, agent, options) };
  }

  /** Calls the `skill` tool through the tool runtime (argument validation, output schema, render). */
  async invoke(args) {
    this.#calls += 1;
    const result = await this.ctx.tools.execute({
      signal: new AbortController().signal,
      callId: `call-${this.#calls}`,
      name: 'skill',
      arguments: args,
      agent: this.agent,
    });
    return JSON.parse(JSON.stringify(result));
  }

  /** A model turn's records: an assistant message and the tool result, as the loop appends them. */
  appendTurn(text) {
    this.session.append(
      'assistant/message',
      { turn: 1, step: 1, message: { role: 'assistant', id: `a-${this.session.seq}`, content: [{ type: 'text', text }], source: MODEL_SOURCE } },
      { surfaceOp: 'append' },
    );
  }

  /** Compaction: a summary replacing the surface from `start` to `end` (seqs, or `first`, `last`, `catalog`). */
  compact({ start = 'first', end = 'last', text = 'Summary of the conversation so far.' } = {}) {
    const nodes = this.session.surface.nodes;
    const catalog = [...nodes].reverse().find((seq) => this.session.events[seq].data?.source?.kind === 'skill-catalog');
    const resolve = (at) => (at === 'first' ? nodes[0] : at === 'last' ? nodes[nodes.length - 1] : at === 'catalog' ? catalog : at);
    const [from, to] = [resolve(start), resolve(end)];
    const shadowed = nodes.slice(nodes.indexOf(from), nodes.indexOf(to) + 1);
    this.session.append(
      'user/message',
      createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'plugin', plugin: 'compaction' } }),
      { surfaceOp: { op: 'replace', start: from, end: to }, sourceEventSeqs: shadowed },
    );
  }

  /** The session's events without ids and times. */
  events() {
    return this.session.events.map(normaliseEvent);
  }

  /** The model-facing definition of the `skill` tool as the agent sees it. */
  definition() {
    const tool = this.ctx.tools.get('skill', this.agent);
    return JSON.parse(JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters, output: tool.output.schema }));
  }

}

/** Fires `agent/pre-step` for `agent` as the agent loop does and appends what it decided. */
async function preStepOf(ctx, agent, { messages = [], aborted = false } = {}) {
  const batch = messages.map(batchMessage);
  const controller = new AbortController();
  if (aborted) controller.abort(new Error('step aborted'));
  let decision;
  try {
    decision = await agentEvents(ctx, agent).waterfall(
      'agent/pre-step',
      { messages: batch, turn: 1, step: 1, signal: controller.signal },
      () => Promise.resolve({ kind: 'enter', messages: batch }),
    );
  } catch (error) {
    return { error: error.message };
  }
  if (decision.kind !== 'enter') return { decision: decision.kind };
  for (const message of decision.messages) agent.session.append('user/message', message, { surfaceOp: 'append' });
  return { decision: 'enter', messages: decision.messages.map(normaliseMessage) };
}

/** A batch message: a string is the user's; `{ text, kind }` a plugin's. */
function batchMessage(message) {
  if (typeof message === 'string') return createUserMessage({ content: [{ type: 'text', text: message }], source: { kind: 'user' } });
  if (message.source) return createUserMessage({ content: [{ type: 'text', text: message.text }], source: message.source });
  const source = message.kind === 'user' ? { kind: 'user' } : { kind: 'plugin', plugin: message.kind };
  return createUserMessage({ content: [{ type: 'text', text: message.text }], source });
}

function normaliseMessage(message) {
  const { id: _id, ...rest } = message;
  return JSON.parse(JSON.stringify(rest));
}

function normaliseEvent(event) {
  const { time: _time, ...rest } = event;
  const copy = JSON.parse(JSON.stringify(rest));
  if (copy.data?.id !== undefined) delete copy.data.id;
  if (copy.data?.message?.id !== undefined) delete copy.data.message.id;
  return copy;
}

/**
 * Runs `scenario` with `plugin` (`PLUGINS.published` or `PLUGINS.dropIn`); a
 * `switch` step carries the session on into a new harness with the other of
 * `plugin` and `switchTo`, alternately. Returns what every step observed and
 * the final events.
 */
export async function runScenario(scenario, plugin, switchTo = plugin) {
  const setup = {
    config: scenario.config ?? {},
    skills: scenario.skills ?? [],
    providerSkills: scenario.providerSkills ?? null,
    cwd: scenario.cwd,
    mount: scenario.mount,
  };
  let harness = await createHarness({ ...setup, plugin });
  // What a switch carries into the next harness besides the session.
  const changes = [];
  let view = 'visible';
  const plugins = [plugin, switchTo];
  let current = 0;
  const observed = [];
  for (const step of scenario.steps) {
    switch (step.op) {
      case 'pre-step':
        observed.push(await harness.preStep(step));
        break;
      case 'invoke':
        observed.push(await harness.invoke(step.args ?? { name: step.name }));
        break;
      case 'turn':
        harness.appendTurn(step.text ?? 'Working on it.');
        break;
      case 'compact':
        harness.compact(step);
        break;
      case 'set-skills':
        harness.setSkills(step.skills);
        setup.skills = step.skills;
        break;
      case 'provider':
        harness.steerProvider(step.change);
        changes.push(step.change);
        break;
      case 'tool-view':
        harness.setToolView(step.view);
        view = step.view;
        break;
      case 'switch': {
        const events = harness.session.events;
        current = 1 - current;
        harness = await createHarness({ ...setup, plugin: plugins[current], events: [...events] });
        for (const change of changes) harness.steerProvider(change);
        harness.setToolView(view);
        break;
      }
      default:
        throw new Error(`unknown step op ${step.op}`);
    }
  }
  return { observed, events: harness.events() };
}

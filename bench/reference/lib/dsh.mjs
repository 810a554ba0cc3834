// The published DSH host around the `skill` tool plugin: a cordis Context
// with the skill registry and the plugin, a minimal Agent over a Session, and
// the two timed operations (an `agent/pre-step` waterfall, a `skill` call).
import { createRequire } from 'node:module'
import { Context } from '@deepseek-ai/cordis'
import { CallId } from '@deepseek-ai/dsh-llm'
import { Session, SessionId } from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import ToolRuntime from '@deepseek-ai/dsh-tools'
import AgentRegistry, { agentEvents, Inbox } from '@deepseek-ai/dsh-agent'
import SkillRegistry from '@deepseek-ai/dsh-skill'
import * as toolSkill from '@deepseek-ai/dsh-tool-skill'

const require = createRequire(import.meta.url)

/** The plugin under test, as package@version (the version actually installed). */
export const PLUGIN_ID = `@deepseek-ai/dsh-tool-skill@${require('@deepseek-ai/dsh-tool-skill/package.json').version}`

/** A Context with the services the plugin needs, and the plugin (default Config). */
export async function createHarness() {
  const ctx = new Context()
  await ctx.plugin(SystemPrompt)
  await ctx.plugin(ToolRuntime)
  await ctx.plugin(AgentRegistry)
  await ctx.plugin(SkillRegistry)
  await ctx.plugin(toolSkill, {})
  return ctx
}

/** An empty session: `Session.create` appends `session/end-seed` (seq 0). */
export function newSession(id, cwd = '/workspace') {
  const sid = SessionId(id)
  return Session.create(sid, [], { version: 0, id: sid, createdAt: 0, cwd })
}

/** A minimal Agent (the plugin reads agent.session and keys its state by the agent). */
export function makeAgent(session, id = 'dsh-reference-agent') {
  return {
    id: SessionId(id),
    options: {},
    session,
    inbox: new Inbox(session, { inserted() {}, discarded() {}, claimed() {} }),
    status: 'running',
    ctx: new Context(),
    send() {},
    followup() {},
    steer() {},
    inject() { throw new Error('not supported in the benchmark') },
    cancel() {},
    runMaintenance: task => task(new AbortController().signal),
    whenIdle: () => Promise.resolve(),
  }
}

/**
 * One `agent/pre-step` through the real event waterfall, as the agent loop
 * fires it; the messages of the decision are appended to the session.
 * @returns {Promise<{decision: object, appended: number[]}>} the seqs appended.
 */
export async function firePreStep(ctx, agent, { messages = [], turn = 1, step = 1 } = {}) {
  const signal = new AbortController().signal
  const decision = await agentEvents(ctx, agent).waterfall(
    'agent/pre-step',
    { messages, turn, step, signal },
    () => Promise.resolve({ kind: 'enter', messages }),
  )
  const appended = []
  if (decision.kind === 'enter') {
    for (const message of decision.messages) {
      appended.push(agent.session.append('user/message', message, { surfaceOp: 'append' }).seq)
    }
  }
  return { decision, appended }
}

/** The `skill` tool through the ToolRuntime: argument validation, execute, output validation, render. */
let callCounter = 0
export async function invokeSkillTool(ctx, agent, name) {
  callCounter += 1
  return await ctx.tools.execute({
    signal: new AbortController().signal,
    callId: CallId(`ref-call-${callCounter}`),
    name: 'skill',
    arguments: { name },
    agent,
  })
}

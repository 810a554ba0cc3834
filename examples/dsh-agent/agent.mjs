// A DeepSeek Harness agent with the skill plugin from dsh-tool-skill-wasm:
// the published agent loop, a skills folder served by the published
// filesystem provider, and a scripted model of a few lines. One turn: the
// model sees the skill catalog, calls the `skill` tool, and answers.
//
//   node agent.mjs            (Node.js 22 or later)

import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Context } from '@deepseek-ai/cordis';
import AgentRegistry from '@deepseek-ai/dsh-agent';
import AgentLoop from '@deepseek-ai/dsh-agent-loop';
import LlmRuntime, { CallId, LlmAdapter, createUserMessage } from '@deepseek-ai/dsh-llm';
import SessionStore, { SessionId } from '@deepseek-ai/dsh-session';
import SkillRegistry from '@deepseek-ai/dsh-skill';
import * as skillFilesystem from '@deepseek-ai/dsh-skill-filesystem';
import SystemPrompt from '@deepseek-ai/dsh-system-prompt';
import ToolRuntime from '@deepseek-ai/dsh-tools';
import * as toolSkill from 'dsh-tool-skill-wasm'; // instead of '@deepseek-ai/dsh-tool-skill'

const HERE = path.dirname(fileURLToPath(import.meta.url));

/**
 * The model: on its first call it notes what it was sent and loads the first
 * skill the catalog lists; on its second it answers with text.
 */
class ScriptedModel extends LlmAdapter {
  requests = [];
  called = null;

  async *stream(request) {
    this.requests.push(request);
    if (this.requests.length === 1) {
      const catalog = request.messages.find((message) => message.source?.kind === 'skill-catalog');
      const name = catalog?.source.entries[0]?.name ?? 'release-notes';
      const call = { type: 'tool-call', id: CallId('call-1'), name: 'skill', arguments: JSON.stringify({ name }) };
      this.called = `${call.name} ${call.arguments}`;
      yield { type: 'block-start', index: 0, blockType: 'tool-call' };
      yield { type: 'tool-call-delta', index: 0, id: call.id, name: call.name, argumentsDelta: call.arguments };
      yield { type: 'block-end', index: 0, block: call };
      yield { type: 'finish', reason: { kind: 'tool-calls' } };
    } else {
      const text = 'I loaded the skill and will follow it.';
      yield { type: 'block-start', index: 0, blockType: 'text' };
      yield { type: 'text-delta', index: 0, text };
      yield { type: 'block-end', index: 0, block: { type: 'text', text } };
      yield { type: 'finish', reason: { kind: 'stop' } };
    }
  }
}

const ctx = new Context();
await ctx.plugin(LlmRuntime);
await ctx.plugin(SessionStore);
await ctx.plugin(SystemPrompt);
await ctx.plugin(ToolRuntime);
await ctx.plugin(AgentRegistry);
await ctx.plugin(SkillRegistry);
await ctx.plugin(skillFilesystem, { includeDefaultRoots: false, customSkillDirs: [path.join(HERE, 'skills')], watch: false });
await ctx.plugin(toolSkill, { catalogDescriptionMaxLength: 500 });
await ctx.plugin(AgentLoop);

const model = new ScriptedModel();
ctx.llm.registerAdapter(['scripted'], model);

const { agent, dispose } = await ctx.agents.create({
  sessionId: SessionId('dsh-agent-example'),
  meta: { cwd: HERE },
  agentOptions: { provider: 'scripted', model: 'scripted-1' },
});
agent.followup(createUserMessage({ content: [{ type: 'text', text: 'Draft the release notes.' }], source: { kind: 'user' } }));
await agent.whenIdle();

const text = (message) => message.content.map((block) => block.text ?? '').join('');
const [first, second] = model.requests;
const catalog = first?.messages.find((message) => message.source?.kind === 'skill-catalog');
const result = second?.messages.flatMap((message) => message.content).find((block) => block.type === 'tool-result');

console.log(`== the catalog the model received (a ${catalog?.role} message, source kind ${catalog?.source.kind}):`);
console.log(catalog ? text(catalog) : '(none)');
console.log(`== the model called: ${model.called}`);
console.log(`== the tool result it received${result?.isError ? ' (an error)' : ''}:`);
console.log(result ? result.content.map((block) => block.text ?? '').join('') : '(none)');
console.log('== its answer:');
console.log(agent.session.events.filter((event) => event.type === 'assistant/message').map((event) => text(event.data.message)).at(-1) ?? '(none)');

await dispose();
await ctx.dispose?.();
process.exitCode = catalog && result && !result.isError ? 0 : 1;

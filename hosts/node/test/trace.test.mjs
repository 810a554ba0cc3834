// The trace replayer (src/trace-replay.mjs, docs/spec.md §7.2): a value
// converts between a trace's serde form and jco's by its WIT type; a stored
// trace of the embedded plugin replays with no mismatch; and a trace altered
// in an answer, an import, a returned value or an outcome is reported, one
// line per mismatch, naming the call.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { embeddedComponent } from '../src/component.mjs';
import { HostError } from '../src/errors.mjs';
import { CallContext } from '../src/host-imports.mjs';
import { DEFAULT_LIMITS, Sandbox } from '../src/sandbox.mjs';
import { replayTrace, TraceFormatError } from '../src/trace-replay.mjs';
import { IMPORTS, RETURNS, STEP_CONTEXT, toJco, toTrace, TraceValueError } from '../src/trace-values.mjs';

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
let component;
const plugin = () => (component ??= embeddedComponent(REPOSITORY));
const stored = (name) => JSON.parse(readFileSync(path.join(REPOSITORY, 'tests/traces/scenarios', `${name}.trace.json`), 'utf8'));
const replay = (trace) => replayTrace(plugin(), JSON.stringify(trace));

test('values convert by their WIT type, both ways', () => {
  const answer = {
    Ok: {
      Changed: {
        complete: true,
        revision: 7,
        skills: [
          {
            name: 'a-skill',
            description: 'A.',
            when_to_use: null,
            invocation: { model_invocable: true, user_invocable: false },
            provider: 'p',
            source: 'p',
            path: '/a',
            body_digest: null,
          },
        ],
      },
    },
  };
  const jco = toJco(IMPORTS.snapshot.result, answer);
  assert.equal(jco.val.tag, 'changed');
  assert.equal(jco.val.val.revision, 7n);
  assert.deepEqual(jco.val.val.skills[0].invocation, { modelInvocable: true, userInvocable: false });
  assert.equal(jco.val.val.skills[0].whenToUse, undefined);
  assert.deepEqual(toTrace(IMPORTS.snapshot.result, jco), answer);
  assert.deepEqual(toJco(IMPORTS.snapshot.result, { Ok: 'Unchanged' }), { tag: 'ok', val: { tag: 'unchanged' } });
  assert.deepEqual(toJco(IMPORTS.getSkill.result, { Err: { Failed: 'x' } }), { tag: 'err', val: { tag: 'failed', val: 'x' } });
  const context = { session: 3, registry_revision: null, history_version: 0, tool_view: 'Shadowed', aborted: false, proposal: 'Reject' };
  assert.deepEqual(toJco(STEP_CONTEXT, context).toolView, 'shadowed');
  assert.deepEqual(toTrace(STEP_CONTEXT, toJco(STEP_CONTEXT, context)), context);
  // A decision as skill-host traces it: a typed record as its written source.
  const decided = [{ tag: 'proposed', val: 0 }, { tag: 'added', val: { source: '{}', content: [{ tag: 'other', val: '1' }] } }];
  assert.deepEqual(toTrace(IMPORTS.decide.params[0][1], decided), [
    { proposed: 0 },
    { added: { source: '{}', content: [{ Other: '1' }] } },
  ]);
  assert.deepEqual(toTrace(RETURNS['pre-step'], { tag: 'err', val: { tag: 'aborted' } }), { Err: 'Aborted' });
  assert.throws(() => toJco(IMPORTS.snapshot.result, { Ok: 'Changed' }), TraceValueError);
  assert.throws(() => toJco(IMPORTS.getUserMessage.params[0][1], -1), TraceValueError);
});

test('a stored trace replays in this host with no mismatch', async () => {
  assert.deepEqual(await replay(stored('user-invocation')), []);
});

test('an answer the trace changed shows in the decision that follows', async () => {
  const trace = stored('user-invocation');
  const entry = trace.calls.flatMap((call) => call.imports).find((found) => found.import === 'registry.get-skill');
  entry.answer.Ok.content += ' (changed)';
  const mismatches = await replay(trace);
  assert.equal(mismatches.length, 1, mismatches.join('\n'));
  assert.match(mismatches[0], /^call 1 \(pre-step on instance 0\): import \d+: the plugin called step\.decide .*\(changed\)/);
});

test('a trap this host decides itself and the trace claims is a mismatch when this host answers', async () => {
  const trace = stored('user-invocation');
  const entry = trace.calls.flatMap((call) => call.imports).find((found) => found.import === 'session.list-user-messages');
  delete entry.answer;
  entry.trap = 'the plugin passed 17 source filters to `session.list-user-messages`; at most 16 are allowed';
  const mismatches = await replay(trace);
  assert.ok(
    mismatches.some((line) => /: this host answers, the trace traps with "the plugin passed 17 source filters/.test(line)),
    mismatches.join('\n'),
  );
});

test('an import the trace does not hold ends the replay, naming both', async () => {
  const trace = stored('user-invocation');
  trace.calls[1].imports.splice(0, 1);
  const mismatches = await replay(trace);
  assert.equal(mismatches.length, 1, mismatches.join('\n'));
  assert.match(mismatches[0], /^call 1 \(pre-step on instance 0\): import 0: the plugin called \S+ .*, the trace has \S+ /);
});

test('imports the plugin did not make, and outcomes and returned values that differ, are each a line', async () => {
  const trace = stored('user-invocation');
  const last = trace.calls.at(-1);
  last.imports.push({ import: 'registry.list-skills', args: { name: null }, answer: { Ok: [] } });
  const invoke = trace.calls.findIndex((call) => call.call === 'invoke');
  const called = trace.calls[invoke];
  called.outcome = { error: 'plugin call `invoke` trapped: wasm `unreachable` instruction executed' };
  called.returned = null;
  const mismatches = await replay(trace);
  const lines = mismatches.map((line) => line.replace(/: .*/s, ''));
  assert.deepEqual(lines, [`call ${invoke} (invoke on instance 0)`, `call ${invoke} (invoke on instance 0)`], mismatches.join('\n'));
  assert.match(mismatches[0], /it returned \{"(Ok|Err)":/);
  assert.match(mismatches[1], /its outcome is \{"ok":/);
  // The replay stops where the instances part: the invoke failed only in the trace.
  const again = stored('user-invocation');
  again.calls.at(-1).imports.push({ import: 'registry.list-skills', args: { name: null }, answer: { Ok: [] } });
  assert.deepEqual(await replay(again), [
    `call ${again.calls.length - 1} (pre-step on instance 0): the plugin made ${again.calls.at(-1).imports.length - 1} imports, the trace lists ${again.calls.at(-1).imports.length}`,
  ]);
});

test('a trace of another contract version, a malformed trace and a refused component', async () => {
  const trace = stored('user-invocation');
  assert.deepEqual(await replay({ ...trace, contract: '0.2.0' }), [
    `the component is built for dsh:skill@${trace.contract}, the trace for 0.2.0`,
  ]);
  await assert.rejects(replayTrace(plugin(), '{"trace":1}'), TraceFormatError);
  await assert.rejects(replayTrace(plugin(), JSON.stringify({ ...trace, calls: [{ call: 'dance' }] })), TraceFormatError);
  await assert.rejects(replayTrace(new Uint8Array([0, 1, 2]), JSON.stringify(trace)), (error) => {
    assert.ok(error instanceof HostError);
    assert.equal(error.message, 'cannot load the plugin component: the file is not a WebAssembly component');
    return true;
  });
});

test('an instance whose output was refused is called again; one that trapped is not', async () => {
  // Under a cap of 100 bytes a text, this host refuses the catalog the trace's host entered.
  const trace = stored('user-invocation');
  trace.limits.max_text_bytes = 100;
  const mismatches = await replay(trace);
  assert.match(mismatches[0], /^call 1 \(pre-step on instance 0\): its outcome is \{"error":"plugin call `pre-step` returned invalid output: added message 1's content block 1 is \d+ bytes, over the cap of 100 bytes per text"\}/);
  assert.ok(mismatches.some((line) => /^call [2-9] /.test(line)), mismatches.join('\n'));
  assert.ok(!mismatches.some((line) => line.includes('trapped')), mismatches.join('\n'));
  // A trap the trace's host did not see: the replay stops there.
  const trapped = stored('user-invocation');
  trapped.limits.memory_bytes = 1 << 16;
  const stopped = await replay(trapped);
  assert.ok(stopped.every((line) => /^call [01] /.test(line)), stopped.join('\n'));
});

test('definition, system-prompt and expand replay too (no stored trace has them: skill-host replay makes none)', async () => {
  const sandbox = await Sandbox.create(plugin(), '{}', DEFAULT_LIMITS);
  const { val: declared } = await sandbox.call('definition', 'definition', [], new CallContext());
  await sandbox.close();
  const invocation = { model_invocable: true, user_invocable: true };
  const skill = { name: 'a-skill', description: 'A skill.', invocation, provider: 'p', path: '/s/a-skill/SKILL.md', body_digest: null };
  const summary = { ...skill, when_to_use: null, source: 'p' };
  const definition = { ...skill, resource_base: { Directory: '/s/a-skill' }, content: 'Body.' };
  const expanded = '<skill name="a-skill" location="/s/a-skill/SKILL.md">\nReferences are relative to /s/a-skill.\n\nBody.\n</skill>\n\nnow';
  const trace = {
    ...stored('user-invocation'),
    calls: [
      { instance: 0, call: 'configure', args: { config: '{}' }, imports: [], returned: { Ok: null }, outcome: { ok: null } },
      {
        instance: 0,
        call: 'definition',
        args: {},
        imports: [],
        returned: declared,
        outcome: { ok: { ...declared, parameters: JSON.parse(declared.parameters) } },
      },
      {
        instance: 0,
        call: 'system-prompt',
        args: {},
        imports: [
          { import: 'registry.snapshot', args: { known: null }, answer: { Ok: { Changed: { complete: true, revision: 3, skills: [summary] } } } },
        ],
        returned: { Ok: 'not the prompt' },
        outcome: { ok: 'not the prompt' },
      },
      {
        instance: 0,
        call: 'expand',
        args: { text: '/skill:a-skill now' },
        imports: [{ import: 'registry.get-skill', args: { name: 'a-skill' }, answer: { Ok: definition } }],
        returned: { Ok: expanded },
        outcome: { ok: expanded },
      },
    ],
  };
  const mismatches = await replay({ ...trace, config: '{}' });
  // The definition and the expansion agree; the prompt is the plugin's, not the trace's.
  assert.equal(mismatches.length, 2, mismatches.join('\n'));
  assert.match(mismatches[0], /^call 2 \(system-prompt on instance 0\): it returned \{"Ok":"\\n\\nThe following skills .*, the trace's \{"Ok":"not the prompt"\}$/);
  assert.match(mismatches[1], /^call 2 \(system-prompt on instance 0\): its outcome is \{"ok":".*, the trace's \{"ok":"not the prompt"\}$/);
});

test("a skill's files convert by their WIT types (contract 0.4.0)", () => {
  const listing = { Ok: { files: [{ path: 'references/api.md', size: 12 }, { path: 'logo.png', size: null }], total: 7 } };
  const jco = toJco(IMPORTS.listSkillFiles.result, listing);
  assert.deepEqual(jco, {
    tag: 'ok',
    val: { files: [{ path: 'references/api.md', size: 12n }, { path: 'logo.png', size: undefined }], total: 7n },
  });
  assert.deepEqual(toTrace(IMPORTS.listSkillFiles.result, jco), listing);
  assert.deepEqual(toJco(IMPORTS.listSkillFiles.result, { Ok: null }), { tag: 'ok', val: undefined });
  for (const [answer, value] of [
    [{ Text: 'x' }, { tag: 'text', val: 'x' }],
    [{ Binary: 2048 }, { tag: 'binary', val: 2048n }],
    [{ TooLarge: 5000000 }, { tag: 'too-large', val: 5000000n }],
    ['Missing', { tag: 'missing' }],
    ['Unavailable', { tag: 'unavailable' }],
  ]) {
    assert.deepEqual(toJco(IMPORTS.readSkillFile.result, { Ok: answer }), { tag: 'ok', val: value });
    assert.deepEqual(toTrace(IMPORTS.readSkillFile.result, { tag: 'ok', val: value }), { Ok: answer });
  }
  assert.deepEqual(IMPORTS.readSkillFile.params.map(([name]) => name), ['name', 'path']);
  assert.deepEqual(IMPORTS.listSkillFiles.params.map(([name]) => name), ['name', 'limit']);
  assert.throws(() => toJco(IMPORTS.readSkillFile.result, { Ok: 'Text' }), TraceValueError);
  const file = { tag: 'file', val: { name: 'a', provider: 'p', path: 'x.md', content: 'c' } };
  assert.deepEqual(toTrace(RETURNS.invoke, { tag: 'ok', val: { value: file, text: 't', loaded: undefined } }), {
    Ok: { value: { File: { name: 'a', provider: 'p', path: 'x.md', content: 'c' } }, text: 't', loaded: null },
  });
});

test("the trace of a skill's files replays with no mismatch, and an altered file answer is reported", async () => {
  const trace = stored('skill-files');
  assert.deepEqual(await replay(trace), []);
  const reads = trace.calls.flatMap((call) => call.imports).filter((entry) => entry.import === 'registry.read-skill-file');
  assert.ok(reads.some((entry) => 'Text' in entry.answer.Ok), 'the trace reads a text file');
  const altered = stored('skill-files');
  const at = altered.calls.findIndex((call) => call.args.arguments === '{"name":"deploy","path":"references/short.md"}');
  altered.calls[at].imports.find((entry) => entry.import === 'registry.read-skill-file').answer.Ok.Text = 'Altered.';
  const mismatches = await replay(altered);
  assert.ok(mismatches.length > 0);
  assert.ok(mismatches.every((line) => line.startsWith(`call ${at} (invoke on instance 0): `)), mismatches.join('\n'));
  assert.match(mismatches.join('\n'), /Altered\./);
});

/**
 * A stand-in for `Sandbox` whose "plugin" replays the trace's own calls:
 * it makes each import the trace lists for the call with these arguments
 * (answered by the replay's host, from the trace) and returns what the
 * trace says the plugin returned, whatever the answers. A plugin that
 * names a file it was not given, as the real one cannot be made to.
 */
function puppetOf(trace) {
  return {
    create: async (_component, _config, limits) => ({
      limits,
      async call(_name, method, args, host) {
        const call = trace.calls.find((entry) => entry.call === 'invoke' && entry.args.arguments === args[0]);
        assert.equal(method, 'invoke');
        for (const entry of call.imports) {
          const [jcoName, { params }] = Object.entries(IMPORTS).find(([, { name }]) => name === entry.import);
          await host[jcoName](...params.map(([param, type]) => toJco(type, entry.args[param])));
        }
        return toJco(RETURNS.invoke, call.returned);
      },
      close: async () => {},
    }),
  };
}

test('a file value the registry did not read for the call is refused, in replay as in skill-host (spec §8.5)', async () => {
  const full = stored('skill-files');
  const call = full.calls.find((entry) => entry.call === 'invoke' && entry.args.arguments === '{"name":"deploy","path":"references/short.md"}');
  const trace = { ...full, calls: [full.calls.find((entry) => entry.call === 'configure'), { ...call, instance: 0 }] };
  const puppet = (edited) => replayTrace(plugin(), JSON.stringify(edited), { sandbox: puppetOf(edited) });
  // As traced, the puppet's file value is one the registry read: accepted.
  assert.deepEqual(await puppet(trace), []);
  // The registry's answer edited: the file was not read as text, but the plugin returns it all the same.
  for (const answer of ['Missing', { Binary: 10 }, { TooLarge: 2000000 }, 'Unavailable']) {
    const edited = structuredClone(trace);
    edited.calls[1].imports.find((entry) => entry.import === 'registry.read-skill-file').answer = { Ok: answer };
    const refusal =
      'plugin call `invoke` returned invalid output: the value is file "references/short.md" of skill "deploy", which the registry did not read for this call';
    const lines = await puppet(edited);
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.ok(lines[0].startsWith(`call 1 (invoke on instance 0): its outcome is {"error":${JSON.stringify(refusal)}}, the trace's {"ok":`), lines[0]);
    // The trace that records the refusal replays with no mismatch.
    edited.calls[1].outcome = { error: refusal };
    assert.deepEqual(await puppet(edited), []);
  }
  // The real plugin, given the same edit, does not return the file: its own error is the mismatch.
  const honest = structuredClone(trace);
  honest.calls[1].imports.find((entry) => entry.import === 'registry.read-skill-file').answer = { Ok: { Binary: 10 } };
  const lines = await replay(honest);
  assert.ok(lines.some((line) => line.includes('is not text')), lines.join('\n'));
  assert.ok(lines.every((line) => !line.includes('which the registry did not read')), lines.join('\n'));
});

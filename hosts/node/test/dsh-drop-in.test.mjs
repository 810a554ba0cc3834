// The drop-in (dsh/index.mjs) as a DeepSeek Harness plugin: the same
// exports, configuration and tool as the published one, the harness's own
// filesystem provider through it, and the deadline that bounds the plugin's
// work but not the harness's.

import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { PLUGINS, createHarness, runScenario } from '../dsh-harness/harness.mjs';

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

test('the drop-in exports what the published plugin exports, with the same configuration defaults', () => {
  const { published, dropIn } = PLUGINS;
  assert.deepEqual(Object.keys(dropIn).sort(), Object.keys(published).sort());
  assert.equal(dropIn.name, published.name);
  assert.deepEqual(dropIn.inject, published.inject);
  assert.deepEqual(dropIn.Config({}), published.Config({}));
  assert.deepEqual(dropIn.Config({ catalogDescriptionMaxLength: 80 }), published.Config({ catalogDescriptionMaxLength: 80 }));
  assert.equal(typeof dropIn.apply, 'function');
});

test('a configuration is refused, or accepted, as the published plugin does it, in its words', async () => {
  for (const value of [2, 3.5, -1, NaN, Infinity, '10', 1e300, null, 3]) {
    const outcomes = [];
    for (const plugin of [PLUGINS.published, PLUGINS.dropIn]) {
      try {
        const harness = await createHarness({ plugin, config: { catalogDescriptionMaxLength: value } });
        outcomes.push(`accepted, tool ${harness.definition().name}`);
      } catch (error) {
        outcomes.push(`refused: ${error.message}`);
      }
    }
    assert.equal(outcomes[1], outcomes[0], `catalogDescriptionMaxLength ${String(value)}`);
  }
});

test('the tool the agent sees is the published one: name, description, parameters, output schema', async () => {
  const [published, dropIn] = await Promise.all(
    [PLUGINS.published, PLUGINS.dropIn].map((plugin) => createHarness({ plugin })),
  );
  assert.deepEqual(dropIn.definition(), published.definition());
  assert.equal(dropIn.definition().description.startsWith('Load the full instructions for an available skill.'), true);
});

test("the harness's filesystem provider over examples/workspace gives the same catalog, loads and /name", async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'dsh-drop-in-'));
  try {
    // A copy outside the repository: the provider takes the nearest `.git` as the project root.
    const workspace = path.join(root, 'workspace');
    cpSync(path.join(REPOSITORY, 'examples', 'workspace'), workspace, { recursive: true });
    for (const home of ['dsh-home', 'agents-home']) mkdirSync(path.join(root, home));
    const filesystem = await import('@deepseek-ai/dsh-skill-filesystem');
    const scenario = {
      cwd: workspace,
      mount: (ctx) =>
        ctx.plugin(filesystem, { watch: false, dshHome: path.join(root, 'dsh-home'), agentsHome: path.join(root, 'agents-home') }),
      steps: [
        { op: 'pre-step', messages: ['Triage the crash, then /deploy-production'] },
        { op: 'pre-step' },
        { op: 'invoke', name: 'triage-bug' },
        { op: 'invoke', name: 'release-notes' },
        { op: 'invoke', name: 'commit-message' },
        { op: 'invoke', name: 'deploy-production' },
      ],
    };
    const expected = await runScenario(scenario, PLUGINS.published);
    const actual = await runScenario(scenario, PLUGINS.dropIn);
    assert.equal(JSON.stringify(actual), JSON.stringify(expected));
    // Not an empty agreement: the catalog lists the workspace's model-invocable skills.
    const catalog = actual.observed[0].messages.find((message) => message.source.kind === 'skill-catalog');
    assert.deepEqual(
      catalog.source.entries.map((entry) => entry.name),
      ['commit-message', 'release-notes', 'review-pr', 'triage-bug'],
    );
    assert.equal(actual.observed[0].messages.at(-1).source.kind, 'skill-invocation');
    assert.equal(actual.observed[2].isError, false);
    assert.equal(actual.observed[5].isError, true);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

/** A harness whose one provider takes `delayMs` to list, with the drop-in under `limits`. */
async function slowHarness(delayMs, limits) {
  const harness = await createHarness({
    plugin: { ...PLUGINS.dropIn, apply: (ctx, config) => PLUGINS.dropIn.apply(ctx, config, { limits }) },
    mount: (ctx) => {
      ctx.skills.registerProvider(() => ({
        name: 'slow',
        list: () =>
          new Promise((resolve) =>
            setTimeout(() => resolve([{ name: 'slow-skill', description: 'Slow.', source: 'slow', provider: 'slow', rank: 1, invocation: { modelInvocable: true, userInvocable: true } }]), delayMs),
          ),
        get: async () => undefined,
      }));
    },
  });
  return harness;
}

test("the plugin's deadline does not count the harness's own time; the wall-clock cap does", async () => {
  // The provider takes three times the plugin's deadline: the step is still served.
  const patient = await slowHarness(300, { timeoutMs: 100, wallTimeoutMs: 5000 });
  const served = await patient.preStep({ messages: ['hi'] });
  assert.equal(served.decision, 'enter');
  assert.equal(served.messages.at(-1).source.kind, 'skill-catalog');
  // A whole call longer than the wall-clock cap fails that step only.
  const capped = await slowHarness(400, { timeoutMs: 100, wallTimeoutMs: 150 });
  const before = capped.session.seq;
  assert.deepEqual(await capped.preStep({ messages: ['hi'] }), {
    error: 'plugin call `pre-step` exceeded its wall-clock cap of 150 ms, host answers included',
  });
  assert.equal(capped.session.seq, before);
});

test("a published catalog whose description was cut inside a surrogate pair is the drop-in's after a switch", async () => {
  // The published plugin keeps a lone high surrogate (`slice`); the drop-in
  // reads it as U+FFFD and writes U+FFFD itself, so its digest is the same
  // and nothing is published again. (The other way round the published
  // plugin republishes: it hashes the lone surrogate, docs/spec.md §3.1.)
  const scenario = {
    config: { catalogDescriptionMaxLength: 6 },
    skills: [{ name: 'emoji', description: 'ab😀😀c', content: 'x' }],
    steps: [{ op: 'pre-step', messages: ['start'] }, { op: 'switch' }, { op: 'pre-step' }, { op: 'pre-step', messages: ['/emoji'] }],
  };
  const expected = await runScenario(scenario, PLUGINS.published, PLUGINS.published);
  const actual = await runScenario(scenario, PLUGINS.published, PLUGINS.dropIn);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected));
  assert.equal(expected.observed[0].messages[1].source.entries[0].description, 'ab\ud83d...');
  assert.deepEqual(actual.observed[1], { decision: 'enter', messages: [] });
});

test('a result the harness renders again, or a value a listener replaced, reads as with the published plugin', async () => {
  const scenario = {
    skills: [{ name: 'pdf-forms', description: 'Fill PDF forms.', content: 'Steps.' }],
    mount: (ctx) => {
      // A wrapper that copies the result: the runtime renders it again.
      ctx.on('tools/execute', async (_exec, next) => ({ ...(await next()) }));
      // A listener that replaces one value.
      ctx.on('tools/post-execute', async (exec, result, next) =>
        exec.arguments.name === 'pdf-forms' && !result.isError && result.value.content === 'Steps.'
          ? { kind: 'accept', value: { ...result.value, content: 'Replaced by a listener.' } }
          : next(),
      );
    },
    steps: [{ op: 'pre-step', messages: ['start'] }, { op: 'invoke', name: 'pdf-forms' }, { op: 'invoke', name: 'pdf-forms' }],
  };
  const expected = await runScenario(scenario, PLUGINS.published);
  const actual = await runScenario(scenario, PLUGINS.dropIn);
  assert.equal(JSON.stringify(actual), JSON.stringify(expected));
  assert.equal(actual.observed[1].isError, false, JSON.stringify(actual.observed[1]));
  assert.match(actual.observed[1].content[0].text, /Replaced by a listener\./);
});

test("one agent's slow provider does not hold up another agent's step", async () => {
  const harness = await createHarness({
    plugin: PLUGINS.dropIn,
    mount: (ctx) => {
      ctx.skills.registerProvider(() => ({
        name: 'per-project',
        list: ({ cwd }) =>
          new Promise((resolve) =>
            setTimeout(
              () => resolve([{ name: 'a-skill', description: `Skill of ${cwd}.`, source: 'p', provider: 'per-project', rank: 1, invocation: { modelInvocable: true, userInvocable: true } }]),
              cwd === '/slow' ? 600 : 0,
            ),
          ),
        get: async () => undefined,
      }));
    },
  });
  const slow = harness.otherAgent('/slow');
  const fast = harness.otherAgent('/fast');
  let slowDone = false;
  const slowStep = slow.preStep({ messages: ['hi'] }).then((outcome) => {
    slowDone = true;
    return outcome;
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  const quick = await fast.preStep({ messages: ['hi'] });
  assert.equal(slowDone, false, 'the fast agent waited for the slow one');
  assert.match(quick.messages.at(-1).content[0].text, /Skill of \/fast\./);
  assert.match((await slowStep).messages.at(-1).content[0].text, /Skill of \/slow\./);
});

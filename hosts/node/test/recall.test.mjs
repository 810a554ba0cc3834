// Calls answered without crossing into the sandbox (src/recall.mjs): a
// repeated `skill` call whose registry reads answer as before, and a repeated
// steady pre-step, give what the component gave; anything that changes what
// the component would read crosses again.

import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { PLUGINS, createHarness } from '../dsh-harness/harness.mjs';
import { embeddedComponent } from '../src/component.mjs';
import { CallContext } from '../src/host-imports.mjs';
import { sameValue } from '../src/json.mjs';
import { Recall } from '../src/recall.mjs';
import { DEFAULT_LIMITS, Sandbox } from '../src/sandbox.mjs';

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const SKILLS = [
  { name: 'pdf-forms', description: 'Fill PDF forms.', content: '# PDF forms\nUse the form filler.' },
  { name: 'release-notes', description: 'Write release notes.', content: '# Release notes\nList the changes.' },
];

/** A harness on the drop-in that counts the calls that crossed into the sandbox, by name. */
async function counted(recall, options = {}) {
  const crossed = {};
  const plugin = {
    ...PLUGINS.dropIn,
    apply: (ctx, config) =>
      PLUGINS.dropIn.apply(ctx, config, { recall, onCall: (name) => void (crossed[name] = (crossed[name] ?? 0) + 1) }),
  };
  const harness = await createHarness({ plugin, skills: SKILLS, ...options });
  return { harness, crossed };
}

test('answers compare by value: BigInts, undefined, nesting and key sets', () => {
  assert.ok(sameValue({ tag: 'ok', val: [{ a: 1n, b: undefined }] }, { tag: 'ok', val: [{ a: 1n, b: undefined }] }));
  assert.ok(!sameValue({ a: 1n }, { a: 2n }));
  assert.ok(!sameValue({ a: undefined }, {}));
  assert.ok(!sameValue([1], { 0: 1 }));
  assert.ok(!sameValue({ val: 'x' }, { val: 'y' }));
  assert.ok(!sameValue(null, {}));
});

test('a repeated skill call is the same result without crossing; an edited skill crosses again', async () => {
  const { harness, crossed } = await counted(true);
  const published = await createHarness({ plugin: PLUGINS.published, skills: SKILLS });
  const first = await harness.invoke({ name: 'pdf-forms' });
  const second = await harness.invoke({ name: 'pdf-forms' });
  assert.deepEqual(second, first);
  assert.deepEqual(second, await published.invoke({ name: 'pdf-forms' }));
  assert.equal(crossed.invoke, 1);

  // Another name, an unknown name and a bad argument are calls of their own.
  await harness.invoke({ name: 'release-notes' });
  const unknown = await harness.invoke({ name: 'no-such-skill' });
  assert.deepEqual(await harness.invoke({ name: 'no-such-skill' }), unknown);
  assert.equal(crossed.invoke, 3);

  // The registry answers otherwise: the component decides again, on what it reads now.
  const edited = SKILLS.map((skill) => (skill.name === 'pdf-forms' ? { ...skill, content: '# PDF forms\nEdited.' } : skill));
  harness.setSkills(edited);
  published.setSkills(edited);
  const after = await harness.invoke({ name: 'pdf-forms' });
  assert.equal(crossed.invoke, 4);
  assert.match(after.value.content, /Edited\./);
  assert.deepEqual(after, await published.invoke({ name: 'pdf-forms' }));
  harness.setSkills(SKILLS.filter((skill) => skill.name !== 'pdf-forms'));
  published.setSkills(SKILLS.filter((skill) => skill.name !== 'pdf-forms'));
  const gone = await harness.invoke({ name: 'pdf-forms' });
  assert.equal(crossed.invoke, 5);
  assert.deepEqual(gone, await published.invoke({ name: 'pdf-forms' }));
});

test('a steady pre-step is recalled until the session or the registry moves', async () => {
  const { harness, crossed } = await counted(true);
  const published = await createHarness({ plugin: PLUGINS.published, skills: SKILLS });
  for (const h of [harness, published]) await h.preStep({ messages: ['hello'] });
  const before = crossed['pre-step'];
  for (let index = 0; index < 5; index += 1) assert.deepEqual(await harness.preStep(), await published.preStep());
  // The first step after the catalog reads the session; the second is the
  // component's steady step (no import), kept; the last three are recalled.
  assert.equal(crossed['pre-step'], before + 2);

  // An assistant turn leaves the history version (user-role messages, spec
  // §5.5) as it was: still recalled. A user's message is proposed: it crosses.
  for (const h of [harness, published]) h.appendTurn('Done.');
  assert.deepEqual(await harness.preStep(), await published.preStep());
  assert.equal(crossed['pre-step'], before + 2);
  assert.deepEqual(await harness.preStep({ messages: ['and now?'] }), await published.preStep({ messages: ['and now?'] }));
  assert.equal(crossed['pre-step'], before + 3);

  // A registry change: the catalog is published again, exactly as the published plugin does.
  const more = [...SKILLS, { name: 'sql-queries', description: 'Write SQL.', content: '# SQL' }];
  harness.setSkills(more);
  published.setSkills(more);
  const changed = await harness.preStep();
  assert.deepEqual(changed, await published.preStep());
  assert.equal(changed.messages.length, 1);
  assert.equal(crossed['pre-step'], before + 4);
  assert.deepEqual(harness.events(), published.events());
});

test('without recall every call crosses', async () => {
  const { harness, crossed } = await counted(false);
  await harness.preStep({ messages: ['hello'] });
  for (let index = 0; index < 3; index += 1) {
    await harness.invoke({ name: 'pdf-forms' });
    await harness.preStep();
  }
  assert.equal(crossed.invoke, 3);
  assert.equal(crossed['pre-step'], 4);
});

/** A registry host for `skills` that counts what it is asked. */
function countingHost(skills) {
  const asked = [];
  const summary = ({ name, description, modelInvocable = true }) => ({
    name,
    description,
    invocation: { modelInvocable, userInvocable: true },
    provider: 'test',
    source: 'runtime',
    path: undefined,
    bodyDigest: undefined,
  });
  const host = new CallContext();
  host.listSkills = (name) => {
    asked.push(['listSkills', name]);
    return { tag: 'ok', val: skills.filter((skill) => name === undefined || skill.name === name).map(summary) };
  };
  host.getSkill = (name) => {
    asked.push(['getSkill', name]);
    const skill = skills.find((entry) => entry.name === name);
    return { tag: 'ok', val: skill && { ...summary(skill), resourceBase: undefined, content: skill.content } };
  };
  return { host, asked };
}

test('a first call is read ahead: a load by name gets the winner, then the skill when the model may load it', async () => {
  const skills = [
    { name: 'pdf-forms', description: 'Fill PDF forms.', content: '# PDF forms' },
    { name: 'user-only', description: 'Only for users.', content: '# Secret', modelInvocable: false },
  ];
  const recall = new Recall();
  const reads = async (args) => {
    const { host } = countingHost(skills);
    return (await recall.invoke(host, args)).preloads.map(({ name, args: asked }) => [name, ...asked]);
  };
  assert.deepEqual(await reads('{"name":"pdf-forms"}'), [['listSkills', 'pdf-forms'], ['getSkill', 'pdf-forms']]);
  assert.deepEqual(await reads('{"name":"user-only"}'), [['listSkills', 'user-only']]);
  assert.deepEqual(await reads('{"name":"no-such-skill"}'), [['listSkills', 'no-such-skill']]);
  assert.deepEqual(await reads('{"query":"pdf"}'), []);
  assert.deepEqual(await reads('not json'), []);
});

test('the guest takes answers read ahead only while it asks exactly for them, and crosses for the rest', async () => {
  const skills = [{ name: 'pdf-forms', description: 'Fill PDF forms.', content: '# PDF forms\nUse the filler.' }];
  const sandbox = await Sandbox.create(embeddedComponent(REPOSITORY), '{}', DEFAULT_LIMITS);
  try {
    const call = async (preloads) => {
      const { host, asked } = countingHost(skills);
      let used = 0;
      const result = await sandbox.call('invoke', 'invoke', ['{"name":"pdf-forms"}'], host, {
        preloads: preloads(host),
        onPreloadsUsed: (count) => void (used = count),
      });
      return { result, asked, used };
    };
    const crossing = await call(() => null);
    assert.equal(crossing.result.tag, 'ok');
    assert.deepEqual(crossing.asked, [['listSkills', 'pdf-forms'], ['getSkill', 'pdf-forms']]);

    // Both reads handed over: the guest asks the host nothing.
    const ahead = await call((host) => [
      { name: 'listSkills', args: ['pdf-forms'], answer: host.listSkills('pdf-forms') },
      { name: 'getSkill', args: ['pdf-forms'], answer: host.getSkill('pdf-forms') },
    ]);
    assert.deepEqual(ahead.result, crossing.result);
    assert.equal(ahead.used, 2);
    assert.deepEqual(ahead.asked, [['listSkills', 'pdf-forms'], ['getSkill', 'pdf-forms']]);

    // A read the guest does not ask for first: nothing is taken, every import crosses.
    const wrong = await call(() => [{ name: 'listSkills', args: ['other'], answer: { tag: 'ok', val: [] } }]);
    assert.deepEqual(wrong.result, crossing.result);
    assert.equal(wrong.used, 0);
    assert.deepEqual(wrong.asked, [['listSkills', 'pdf-forms'], ['getSkill', 'pdf-forms']]);

    // The first taken, the second differs: the guest crosses for the second.
    const half = await call((host) => [
      { name: 'listSkills', args: ['pdf-forms'], answer: host.listSkills('pdf-forms') },
      { name: 'getSkill', args: ['other'], answer: { tag: 'ok', val: undefined } },
    ]);
    assert.deepEqual(half.result, crossing.result);
    assert.equal(half.used, 1);
    assert.deepEqual(half.asked, [['listSkills', 'pdf-forms'], ['getSkill', 'pdf-forms']]);
  } finally {
    await sandbox.close();
  }
});

test('calls finishing together each render their own text, even when their values are equal', async () => {
  // Five skills match both queries; a sixth matches only `alpha`, in a
  // longer description, so it scores below them (spec §3.14, BM25F): equal
  // values, and texts that differ in their first line ("best 5 of 6").
  const skills = Array.from({ length: 5 }, (_, index) => ({ name: `tool-${index + 1}`, description: `alpha beta tool ${index + 1}`, content: 'x' }));
  skills.push({ name: 'zzz-extra', description: 'alpha, in a description longer than the others', content: 'x' });
  for (const recall of [true, false]) {
    const plugin = { ...PLUGINS.dropIn, apply: (ctx, config) => PLUGINS.dropIn.apply(ctx, config, { recall }) };
    const harness = await createHarness({ plugin, config: { skillSearch: true }, skills });
    const alone = [await harness.invoke({ query: 'alpha' }), await harness.invoke({ query: 'beta' })];
    assert.deepEqual(alone[0].value, alone[1].value);
    assert.notEqual(alone[0].content[0].text, alone[1].content[0].text);
    for (let round = 0; round < 3; round += 1) {
      const together = await Promise.all([harness.invoke({ query: 'alpha' }), harness.invoke({ query: 'beta' })]);
      assert.deepEqual(together, alone, `recall ${recall}, round ${round}`);
    }
  }
});

test("the registry's answers read for a recall count against the call's wall-clock cap", { timeout: 30_000 }, async () => {
  const hanging = { name: 'slow-skill', description: 'Never loads.', content: 'never' };
  for (const recall of [true, 'ahead', false]) {
    const plugin = { ...PLUGINS.dropIn, apply: (ctx, config) => PLUGINS.dropIn.apply(ctx, config, { recall, limits: { wallTimeoutMs: 300 } }) };
    const harness = await createHarness({ plugin });
    // A provider whose `get` never answers.
    harness.ctx.skills.registerProvider(() => ({
      name: 'hanging',
      list: async () => [{ ...hanging, source: 'hanging', rank: 900, provider: 'hanging', locator: 'slow', invocation: { modelInvocable: true, userInvocable: true } }],
      get: () => new Promise(() => {}),
    }));
    const started = performance.now();
    const result = await harness.invoke({ name: 'slow-skill' });
    const elapsed = performance.now() - started;
    assert.equal(result.isError, true, `recall ${recall}`);
    assert.match(result.content[0].text, /exceeded its wall-clock cap of 300 ms, host answers included/);
    assert.ok(elapsed < 2000, `recall ${recall}: ${elapsed} ms`);
  }
});

test('a name the component refuses reads nothing ahead: a hung registry does not hold it', async () => {
  const harness = await createHarness({ plugin: PLUGINS.dropIn });
  harness.ctx.skills.registerProvider(() => ({ name: 'hanging', list: () => new Promise(() => {}), get: async () => undefined }));
  const published = await createHarness({ plugin: PLUGINS.published });
  const result = await Promise.race([
    harness.invoke({ name: 'Bad Name' }),
    new Promise((resolve) => setTimeout(() => resolve('still waiting after 3 s'), 3000)),
  ]);
  assert.deepEqual(result, await published.invoke({ name: 'Bad Name' }));
});

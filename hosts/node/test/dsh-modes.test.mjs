// The opt-in modes through the drop-in's `Config` (`ctx.plugin(toolSkill,
// { skillSearch: true })`), each compared with what `skill-host replay`
// decides for the same scenario (dsh-harness/modes.mjs says how a scenario
// is translated and what is normalised), and bad values refused in the
// component's words (docs/spec.md §3.1).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { PLUGINS, createHarness, runScenario } from '../dsh-harness/harness.mjs';
import { MODE_SCENARIOS, agentLoopCall, harnessRecords, replayRecords, runInHarness, toReplayScenario } from '../dsh-harness/modes.mjs';
import { bodyDigest } from '../dsh/bridge.mjs';

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** skill-host as the drop-in finds the component in it: `$SKILL_HOST`, else the newer build, else PATH. */
function skillHost() {
  if (process.env.SKILL_HOST && existsSync(process.env.SKILL_HOST)) return process.env.SKILL_HOST;
  const builds = ['debug', 'release']
    .map((profile) => path.join(REPOSITORY, 'target', profile, 'skill-host'))
    .filter((candidate) => existsSync(candidate))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return builds[0] ?? 'skill-host';
}

const scratch = mkdtempSync(path.join(tmpdir(), 'dsh-modes-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** `skill-host replay` of a §7 scenario (an object): its document. */
function replay(file, name) {
  const scenario = path.join(scratch, `${name}.json`);
  writeFileSync(scenario, JSON.stringify(file, null, 1));
  return JSON.parse(execFileSync(skillHost(), ['replay', scenario], { encoding: 'utf8', maxBuffer: 64 << 20 }));
}

/** The steps of the two hosts, equal, or the first that differs shown. */
function assertSameSteps(harness, replayed) {
  assert.equal(harness.length, replayed.length, 'the two hosts recorded a different number of steps');
  for (let index = 0; index < harness.length; index += 1) {
    const [got, want] = [JSON.stringify(harness[index]), JSON.stringify(replayed[index])];
    if (got !== want) assert.fail(`deciding step ${index} differs:\n  skill-host replay: ${want}\n  drop-in:           ${got}`);
  }
}

for (const [index, scenario] of MODE_SCENARIOS.entries()) {
  test(`mode through Config, as skill-host replay decides it: ${scenario.name}`, async () => {
    const replayed = replayRecords(scenario, replay(toReplayScenario(scenario), `mode-${index}`));
    assertSameSteps(harnessRecords(await runInHarness(scenario)), replayed);
  });
}

const LOADED_SKILLS = MODE_SCENARIOS.find((scenario) => scenario.config.loadedSkills === true);

/** The sources of the `skill-notice` messages of each deciding step (spec §3.12). */
function notices(records) {
  return records.map((record) => (record.messages ?? []).filter((message) => message.source.kind === 'skill-notice').map((message) => message.source));
}

test('loadedSkills: the scenario gives the changed, gone and reload notices, each once, across restarts', async () => {
  const given = notices(harnessRecords(await runInHarness(LOADED_SKILLS)));
  const forms = given.flatMap((step, index) => step.map((source) => `${index} ${source.form} ${source.name ?? source.names}`));
  assert.deepEqual(forms, ['5 changed pdf-forms', '8 gone pdf-forms', '10 reload release-notes', '13 changed release-notes']);
});

test('loadedSkills through a loop that keeps no meta: the load is carried by its callId while the process lives', async () => {
  const scenario = { ...LOADED_SKILLS, steps: LOADED_SKILLS.steps.filter((step) => step.op !== 'restart') };
  const replayed = replayRecords(scenario, replay(toReplayScenario(scenario), 'loaded-no-meta'));
  assertSameSteps(harnessRecords(await runInHarness(scenario, PLUGINS.dropIn, { keepMeta: false })), replayed);
  // After a restart the memory is gone: the loads before it are not read again (the limit the docs state).
  const restarted = notices(harnessRecords(await runInHarness(LOADED_SKILLS, PLUGINS.dropIn, { keepMeta: false })));
  assert.deepEqual(restarted[8], []);
  assert.deepEqual(restarted[10], []);
});

/**
 * A harness whose provider `counted` counts the registry's loads (`get`)
 * of its skills, and can announce a change.
 */
async function countedHarness(config) {
  const counted = { gets: 0, invalidate: null, skills: null };
  const skills = [
    { name: 'pdf-forms', description: 'Fill PDF forms.', content: 'Steps \ud800 for pdf-forms.' },
    { name: 'release-notes', description: 'Draft release notes.', content: 'Steps for release notes.' },
  ];
  counted.skills = skills;
  const harness = await createHarness({
    plugin: PLUGINS.dropIn,
    config,
    mount: (ctx) =>
      ctx.skills.registerProvider((control) => {
        counted.invalidate = () => control.invalidate();
        return {
          name: 'counted',
          list: async () => skills.map(({ content: _content, ...skill }) => ({ ...skill, source: 'counted', rank: 500, provider: 'counted', invocation: { modelInvocable: true, userInvocable: true }, locator: skill.name })),
          get: async (candidate) => {
            counted.gets += 1;
            const skill = skills.find((entry) => entry.name === candidate.locator);
            return { name: skill.name, description: skill.description, source: 'counted', provider: 'counted', invocation: candidate.invocation, content: skill.content };
          },
        };
      }),
  });
  return { harness, counted };
}

test("loadedSkills: the load is the tool result's meta, the harness's own record otherwise unchanged, and digested bodies are the visible loads'", async () => {
  const { harness, counted } = await countedHarness({ loadedSkills: true });
  await harness.preStep({ messages: ['start'] });
  await agentLoopCall(harness, { name: 'pdf-forms' }, 'call-a');
  await agentLoopCall(harness, { name: 'missing-skill' }, 'call-b');
  assert.equal(counted.gets, 1);
  const results = harness.session.events.filter((event) => event.type === 'tool/result');
  assert.deepEqual(results[0].data.message.source, { kind: 'tool', callId: 'call-a' });
  // The spec's digest of the body (a lone surrogate read as U+FFFD), as skill-host computes it.
  const digest = 'sha256:' + createHash('sha256').update('Steps \ufffd for pdf-forms.').digest('hex');
  assert.equal(bodyDigest('Steps \ud800 for pdf-forms.'), digest);
  assert.deepEqual(results[0].data.meta, { plugin: 'dsh-tool-skill', loaded: { name: 'pdf-forms', provider: 'counted', bodyDigest: digest } });
  assert.equal(Object.hasOwn(results[1].data, 'meta'), false, 'a failed call records no load');
  // A steady step asks the registry nothing; a new snapshot loads the visible loads' bodies only.
  await harness.preStep();
  assert.equal(counted.gets, 1);
  counted.invalidate();
  await harness.preStep();
  assert.equal(counted.gets, 2);
  harness.compact();
  counted.invalidate();
  await harness.preStep();
  assert.equal(counted.gets, 2, 'a load compaction hid is not digested');
});

test('loadedSkills: a load whose body the held snapshot contradicts (a change the registry did not announce) drops it', async () => {
  const { harness, counted } = await countedHarness({ loadedSkills: true });
  await harness.preStep({ messages: ['start'] });
  await agentLoopCall(harness, { name: 'release-notes' }, 'call-a');
  counted.invalidate();
  assert.deepEqual(notices([harnessRecords([await harness.preStep()])[0]]), [[]]);
  assert.equal(counted.gets, 2);
  // The body changes unannounced; the model loads the new one, which the held snapshot's digest contradicts.
  counted.skills[1].content = 'New steps for release notes.';
  await agentLoopCall(harness, { name: 'release-notes' }, 'call-b');
  const [step] = harnessRecords([await harness.preStep()]);
  assert.equal(counted.gets, 4, 'a new snapshot loads the body again');
  assert.deepEqual(notices([step]), [[]], 'the model has the body the registry serves: nothing to say');
});

test('without loadedSkills the tool result has no meta and the steps load no bodies', async () => {
  const { harness, counted } = await countedHarness({});
  await harness.preStep({ messages: ['start'] });
  await agentLoopCall(harness, { name: 'pdf-forms' }, 'call-a');
  const [result] = harness.session.events.filter((event) => event.type === 'tool/result');
  assert.deepEqual(Object.keys(result.data), ['turn', 'step', 'message']);
  counted.invalidate();
  await harness.preStep();
  assert.equal(counted.gets, 1);
});

test("Config keeps the published key's default and texts, and passes the component's keys as given", () => {
  const { published, dropIn } = PLUGINS;
  assert.deepEqual(dropIn.Config({}), published.Config({}));
  const given = { skillSearch: 'yes', catalogPinned: ['pdf-forms'], catalogBudget: -1, userInvocation: null };
  assert.deepEqual(dropIn.Config(given), { catalogDescriptionMaxLength: 500, ...given });
  for (const value of ['10', true, {}]) {
    assert.throws(() => dropIn.Config({ catalogDescriptionMaxLength: value }), (error) => {
      assert.throws(() => published.Config({ catalogDescriptionMaxLength: value }), { message: error.message });
      return true;
    });
  }
});

test('a bad value for a mode key is refused through ctx.plugin in the words of spec §3.1', async () => {
  const refusals = [
    [{ userInvocation: 'yes' }, 'tool-skill: userInvocation must be a boolean'],
    [{ loadedSkills: 1 }, 'tool-skill: loadedSkills must be a boolean'],
    [{ skillBodyMaxLength: 999 }, 'tool-skill: skillBodyMaxLength must be an integer greater than or equal to 1000'],
    [{ skillBodyMaxLength: NaN }, 'tool-skill: skillBodyMaxLength must be an integer greater than or equal to 1000'],
    [{ skillBodyMaxLength: 2000n }, 'tool-skill: skillBodyMaxLength must be an integer greater than or equal to 1000'],
    [{ catalogSource: 'published' }, 'tool-skill: catalogSource must be "plugin" or "skill-catalog"'],
    [{ catalogBudget: 0 }, 'tool-skill: catalogBudget must be an integer greater than or equal to 1'],
    [{ catalogBudget: Infinity }, 'tool-skill: catalogBudget must be an integer greater than or equal to 1'],
    [{ catalogPinned: 'pdf-forms' }, 'tool-skill: catalogPinned must be an array of at most 1024 skill names'],
    [{ catalogPinned: ['Pdf Forms'] }, 'tool-skill: catalogPinned must be an array of at most 1024 skill names'],
    [
      { catalogExclude: ['*.md'] },
      'tool-skill: catalogExclude must be an array of at most 1024 skill names or patterns (a-z, 0-9, "-", "*" and "?")',
    ],
    [{ catalogSummaries: 'yes' }, 'tool-skill: catalogSummaries must be a boolean'],
    [
      { catalogNameOnly: 'legacy-*' },
      'tool-skill: catalogNameOnly must be an array of at most 1024 skill names or patterns (a-z, 0-9, "-", "*" and "?")',
    ],
    [
      { userOnly: ['Deploy'] },
      'tool-skill: userOnly must be an array of at most 1024 skill names or patterns (a-z, 0-9, "-", "*" and "?")',
    ],
    [{ catalogUpdates: 'sometimes' }, 'tool-skill: catalogUpdates must be "full" or "delta"'],
    // The drop-in's catalogs are of the skill-catalog form unless told otherwise.
    [{ catalogUpdates: 'delta' }, 'tool-skill: catalogUpdates "delta" needs catalogSource "plugin"'],
    [{ skillSearch: 'true' }, 'tool-skill: skillSearch must be a boolean'],
    [{ catalogWhenToUse: 1 }, 'tool-skill: catalogWhenToUse must be a boolean'],
    [{ skillReads: 'yes' }, 'tool-skill: skillReads must be a boolean'],
  ];
  for (const [config, message] of refusals) {
    const shown = JSON.stringify(config, (_key, value) => (typeof value === 'bigint' ? `${value}n` : value));
    await assert.rejects(createHarness({ plugin: PLUGINS.dropIn, config }), { message }, shown);
  }
});

test("the modes' defaults, given explicitly or as null, keep the published plugin's records", async () => {
  const skills = [
    { name: 'pdf-forms', description: 'Fill PDF forms.', content: 'Steps.' },
    { name: 'deploy-production', description: 'Deploy.', content: 'Deploy steps.', invocation: { modelInvocable: false, userInvocable: true } },
  ];
  const steps = [
    { op: 'pre-step', messages: ['start /deploy-production'] },
    { op: 'invoke', name: 'pdf-forms' },
    { op: 'set-skills', skills: skills.slice(1) },
    { op: 'pre-step' },
  ];
  const expected = await runScenario({ skills, steps }, PLUGINS.published);
  const explicit = {
    userInvocation: true,
    loadedSkills: false,
    catalogSource: 'skill-catalog',
    catalogSummaries: false,
    catalogWhenToUse: false,
    catalogPinned: [],
    catalogExclude: [],
    catalogNameOnly: [],
    userOnly: [],
    catalogUpdates: 'full',
    skillSearch: false,
    skillReads: false,
  };
  const unset = Object.fromEntries(Object.keys(explicit).map((key) => [key, null]));
  for (const config of [explicit, unset, { skillBodyMaxLength: null, catalogBudget: null, unknownKey: 'ignored, as the published plugin ignores it' }]) {
    assert.equal(JSON.stringify(await runScenario({ skills, steps, config }, PLUGINS.dropIn)), JSON.stringify(expected), JSON.stringify(config));
  }
});

test('with skillSearch the tool takes a query: its definition, output schema and call cards', async () => {
  const skills = [{ name: 'pdf-forms', description: 'Fill PDF forms.', content: 'Steps.' }];
  const harness = await createHarness({ plugin: PLUGINS.dropIn, config: { skillSearch: true }, skills });
  const definition = harness.definition();
  assert.match(definition.description, /or find skills by `query`/);
  assert.deepEqual(Object.keys(definition.parameters.properties), ['name', 'query']);
  assert.equal(definition.parameters.required, undefined);
  assert.equal(definition.output.oneOf.length, 2);
  const tool = harness.ctx.tools.get('skill', harness.agent);
  assert.deepEqual(tool.presentCall({ query: 'pdf forms' }), { card: 'generic', title: 'Find skills: pdf forms', kind: 'search', rawInput: 'pdf forms' });
  assert.deepEqual(tool.presentCall({ name: 'pdf-forms' }), { card: 'generic', title: 'Load skill pdf-forms', kind: 'read', rawInput: 'pdf-forms' });
  assert.equal(tool.presentCall({}), undefined);
  // Without the mode, the published plugin's definition and card.
  const [published, dropIn] = await Promise.all([PLUGINS.published, PLUGINS.dropIn].map((plugin) => createHarness({ plugin, skills })));
  assert.deepEqual(dropIn.definition(), published.definition());
  const card = (view) => view.ctx.tools.get('skill', view.agent).presentCall({ name: 'pdf-forms' });
  assert.deepEqual(card(dropIn), card(published));
});

test('with skillReads and catalogWhenToUse the drop-in loads a section and lists whenToUse (spec §3.13, §3.15)', async () => {
  const skills = [
    { name: 'pdf-forms', description: 'Fill PDF forms.', whenToUse: 'A form must be filled.', content: '# Forms\nIntro.\n\n## Fields\nName the fields.\n\n## Submit\nSend it.' },
  ];
  const harness = await createHarness({ plugin: PLUGINS.dropIn, config: { skillReads: true, catalogWhenToUse: true }, skills });
  const step = await harness.preStep({ messages: ['Fill the form.'] });
  assert.match(JSON.stringify(step.messages), /Fill PDF forms. When to use: A form must be filled./);
  const definition = harness.definition();
  assert.match(definition.description, /call it with `name` and `section`/);
  assert.deepEqual(Object.keys(definition.parameters.properties), ['name', 'section', 'path']);
  const section = await harness.invoke({ name: 'pdf-forms', section: 'fields' });
  assert.equal(section.isError, false, JSON.stringify(section));
  assert.match(section.content[0].text, /<skill_instructions>\n## Fields\nName the fields.\n<\/skill_instructions>/);
  const missing = await harness.invoke({ name: 'pdf-forms', section: 'Deploy' });
  assert.equal(missing.isError, true);
  assert.match(JSON.stringify(missing.content), /has no section \\"Deploy\\"; its headings are \\"Forms\\", \\"Fields\\", \\"Submit\\"/);
});

test('search matches a listener put in place of the tool\'s are rendered in the words of spec §3.14', async () => {
  const replacements = {
    pdf: { matches: [{ name: 'other-skill', description: 'Use <b> & "quotes"' }] },
    none: { matches: [] },
  };
  const harness = await createHarness({
    plugin: PLUGINS.dropIn,
    config: { skillSearch: true },
    skills: [{ name: 'pdf-forms', description: 'Fill PDF forms.', content: 'Steps.' }],
    mount: (ctx) =>
      ctx.on('tools/post-execute', async (exec, result, next) =>
        result.isError ? next() : { kind: 'accept', value: replacements[exec.arguments.query] },
      ),
  });
  const pdf = await harness.invoke({ query: 'pdf' });
  assert.equal(pdf.isError, false, JSON.stringify(pdf));
  assert.equal(
    pdf.content[0].text,
    'Skills matching the query:\n- `other-skill`: Use &lt;b&gt; &amp; "quotes"\n\nLoad one by calling the `skill` tool with its exact `name`.',
  );
  const none = await harness.invoke({ query: 'none' });
  assert.equal(none.content[0].text, 'No skill matches the query. Try other words, or load a skill by the exact name the user gave.');
});

test("the drop-in's words for a replaced search value are the component's own (no drift between the two copies)", async () => {
  const skills = [
    { name: 'pdf-forms', description: 'Fill PDF forms & <fields>.', content: 'Steps.' },
    { name: 'pdf-merge', description: 'Merge PDF files.', content: 'Steps.' },
  ];
  // What the component itself writes for a search, recall off so that it runs.
  const plugin = { ...PLUGINS.dropIn, apply: (ctx, config) => PLUGINS.dropIn.apply(ctx, config, { recall: false }) };
  const own = await createHarness({ plugin, config: { skillSearch: true }, skills });
  const found = await own.invoke({ query: 'pdf' });
  const missed = await own.invoke({ query: 'spreadsheet' });
  assert.equal(found.value.matches.length, 2);
  assert.deepEqual(missed.value, { matches: [] });
  // The same values, put in place by a listener, rendered by the drop-in's copy of those words.
  const replacements = { a: found.value, b: missed.value };
  const replaced = await createHarness({
    plugin: PLUGINS.dropIn,
    config: { skillSearch: true },
    skills: [{ name: 'other-skill', description: 'Other.', content: 'Steps.' }],
    mount: (ctx) =>
      ctx.on('tools/post-execute', async (exec, result, next) =>
        result.isError ? next() : { kind: 'accept', value: replacements[exec.arguments.query] },
      ),
  });
  assert.equal((await replaced.invoke({ query: 'a' })).content[0].text, found.content[0].text);
  assert.equal((await replaced.invoke({ query: 'b' })).content[0].text, missed.content[0].text);
});

#!/usr/bin/env node
// `node hosts/node/dsh-harness/hostile.mjs HOSTILE.wasm`: the hostile plugin
// (tests/fixtures/hostile-plugin) through the drop-in, in a DeepSeek Harness
// set-up, one misbehaviour per case. Prints one JSON line per case: the
// error the harness saw, whether the session was left as it was, and
// whether the harness's next call was served (by a fresh instance).
// tests/end_to_end/cross_host.rs checks the lines.

import { readFileSync } from 'node:fs';

import { PLUGINS, createHarness } from './harness.mjs';

const LIMITS = { timeoutMs: 500, memoryBytes: 32 * 1024 * 1024, maxTextBytes: 1000, wallTimeoutMs: 3000 };

/** `on` limits the misbehaviour to one export, so the next call shows the harness still served. */
const CASES = [
  { mode: 'loop', on: 'pre-step' },
  { mode: 'alloc', on: 'pre-step' },
  { mode: 'panic', on: 'pre-step' },
  { mode: 'import-loop', on: 'pre-step' },
  { mode: 'forge', on: 'pre-step' },
  { mode: 'two-catalogs', on: 'pre-step' },
  { mode: 'many-messages', on: 'pre-step', count: 1000 },
  { mode: 'big-text', on: 'pre-step', bytes: 2000 },
  { mode: 'loop', on: 'invoke' },
  { mode: 'import-loop', on: 'invoke' },
  { mode: 'alloc', on: 'invoke' },
  { mode: 'other-skill', on: 'invoke' },
  { mode: 'bare-error', on: 'invoke' },
  { mode: 'step-outside', on: 'invoke' },
];

const component = readFileSync(process.argv[2]);
for (const hostile of CASES) {
  const harness = await createHarness({
    plugin: {
      ...PLUGINS.dropIn,
      apply: (ctx, config) => PLUGINS.dropIn.apply(ctx, config, { component, componentConfig: JSON.stringify(hostile), limits: LIMITS }),
    },
    skills: [{ name: 'a-skill', description: 'A skill.', content: 'Steps.' }],
  });
  const before = harness.session.seq;
  let error;
  let served;
  if (hostile.on === 'pre-step') {
    error = (await harness.preStep({ messages: ['hello /a-skill'] })).error;
    const untouched = harness.session.seq === before;
    const next = await harness.invoke({ name: 'a-skill' });
    served = untouched && next.isError === false;
  } else {
    const result = await harness.invoke({ name: 'a-skill' });
    error = result.isError ? result.content[0].text : undefined;
    const untouched = harness.session.seq === before;
    const next = await harness.preStep({ messages: ['next'] });
    served = untouched && next.decision === 'enter';
  }
  process.stdout.write(`${JSON.stringify({ ...hostile, error, served })}\n`);
}
process.exit(0);

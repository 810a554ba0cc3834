#!/usr/bin/env node
// `node hosts/node/dsh-harness/bench.mjs [--skills 10,1000] [--events 100,100000]
// [--iterations 200] [--warmup 50] [--growing] [--alone | --only published|dropIn] [--json]`: the published
// `@deepseek-ai/dsh-tool-skill` and the drop-in (dsh/index.mjs) side by side in
// one DeepSeek Harness set-up, in one process.
//
// For each skills × events pair, each plugin gets its own harness: N runtime
// skills (about 120-character descriptions, 1.3 KB bodies) and a session of M
// events whose catalog was published by a real pre-step and is still
// visible. Timed, in alternating blocks of samples of each plugin: the steady
// `agent/pre-step` waterfall (nothing to publish, which the bench checks) and
// the `skill` tool call through the tool runtime, repeated (the drop-in
// answers a repeat from the earlier call once the registry's answers are the
// same, src/recall.mjs) and as the first call of a name (a drop-in with
// `recall: 'ahead'`, which recalls nothing).
// With --growing, a model turn is recorded (untimed) before each step, so
// each step sees a longer session than the last, as in an agent loop.
// With --alone, each plugin is timed on its own, one after the other, so
// neither's garbage lands in the other's samples; --only times one of them
// (the flatness figure, without the other's heap in the process).
// Prints a Markdown table (or JSON lines with --json). Not part of the tests.

import { performance } from 'node:perf_hooks';

import { createUserMessage } from '@deepseek-ai/dsh-llm';

import { PLUGINS, createHarness } from './harness.mjs';

function options(argv) {
  const found = { skills: [10, 1000], events: [100, 100_000], iterations: 200, warmup: 50, json: false, alone: false, only: null, growing: false };
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index];
    const value = argv[index + 1];
    if (flag === '--json') found.json = true;
    else if (flag === '--alone') found.alone = true;
    else if (flag === '--growing') found.growing = true;
    else if (flag === '--only') {
      if (!Object.hasOwn(PLUGINS, value)) throw new Error(`--only takes ${Object.keys(PLUGINS).join(' or ')}`);
      found.only = value;
      found.alone = true;
      index += 1;
    }
    else if (flag === '--skills' || flag === '--events') {
      found[flag.slice(2)] = value.split(',').map(Number);
      index += 1;
    } else if (flag === '--iterations' || flag === '--warmup') {
      found[flag.slice(2)] = Number(value);
      index += 1;
    } else throw new Error(`unknown option ${flag}`);
  }
  return found;
}

const VERBS = ['review', 'write', 'debug', 'migrate', 'profile', 'audit', 'draft', 'refactor', 'document', 'triage'];
const OBJECTS = ['pdf-forms', 'release-notes', 'sql-queries', 'rust-crates', 'api-schemas', 'docker-images', 'git-history', 'csv-reports', 'python-tests', 'changelogs'];

/** `count` skills with kebab names, ~120-character descriptions and ~1.3 KB bodies. */
function skills(count) {
  return Array.from({ length: count }, (_, index) => {
    const verb = VERBS[index % VERBS.length];
    const object = OBJECTS[Math.floor(index / VERBS.length) % OBJECTS.length];
    const round = Math.floor(index / (VERBS.length * OBJECTS.length));
    const name = `${verb}-${object}${round === 0 ? '' : `-${round + 1}`}`;
    const description = `Use when the user asks to ${verb} ${object.replace('-', ' ')}: collect context first, apply the smallest change, verify with the project tooling.`;
    const steps = Array.from({ length: 12 }, (_, step) => `${step + 1}. Inspect the relevant files, apply change ${step + 1}, and record what you verified.`);
    return { name, description, content: [`# ${name}`, '', ...steps].join('\n') };
  });
}

/** Appends `count` events in cycles of user message, assistant tool call, tool result (~1 KB), assistant reply. */
function appendEvents(harness, count) {
  const { session } = harness;
  const lines = Array.from({ length: 12 }, (_, line) => `${String(line + 1).padStart(4)}| let value_${line} = compute(input, ${line * 37}); // line ${line}`).join('\n');
  const model = { kind: 'model', provider: 'deepseek', model: 'deepseek-chat' };
  for (let index = 0; index < count; index += 1) {
    const at = session.seq;
    switch (index % 4) {
      case 0:
        session.append('user/message', createUserMessage({ content: [{ type: 'text', text: 'Please look at the failing test and fix it.' }], source: { kind: 'user' } }), { surfaceOp: 'append' });
        break;
      case 1:
        session.append('assistant/message', { turn: 1, step: 1, message: { role: 'assistant', id: `a-${at}`, content: [{ type: 'text', text: 'Reading the file.' }, { type: 'tool-call', id: `call-${at}`, name: 'read', arguments: '{"path":"src/lib.rs"}' }], source: model } }, { surfaceOp: 'append' });
        break;
      case 2:
        session.append('tool/result', { turn: 1, step: 1, message: { role: 'tool', id: `t-${at}`, callId: `call-${at - 1}`, content: [{ type: 'text', text: lines }], isError: false } }, { surfaceOp: 'append' });
        break;
      default:
        session.append('assistant/message', { turn: 1, step: 2, message: { role: 'assistant', id: `a-${at}`, content: [{ type: 'text', text: 'Fixed; the tests pass.' }], source: model } }, { surfaceOp: 'append' });
    }
  }
}

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
  return { median: at(0.5), p90: at(0.9), min: sorted[0] };
}

/** Samples per block of `timedSideBySide`, and the untimed runs that start each block. */
const BLOCK = 25;
const BLOCK_WARMUP = 5;

/**
 * Times `runs` (one per plugin) in alternating blocks of `BLOCK` samples,
 * so that whatever else the machine does weighs on both alike, while one
 * plugin's garbage and cold caches fall on the other's samples only at the
 * start of a block, whose first runs are not timed.
 */
async function timedSideBySide(iterations, warmup, runs) {
  for (let index = 0; index < warmup; index += 1) for (const run of runs) await run();
  const samples = runs.map(() => []);
  while (samples[0].length < iterations) {
    for (const [at, run] of runs.entries()) {
      for (let index = 0; index < BLOCK_WARMUP; index += 1) await run();
      for (let index = 0; index < BLOCK && samples[at].length < iterations; index += 1) {
        const start = performance.now();
        // A run may time itself (when it prepares something first).
        const own = await run();
        samples[at].push(typeof own === 'number' ? own : (performance.now() - start) * 1000);
      }
    }
  }
  return samples.map(summary);
}

/**
 * The drop-in recalling no call (`recall: 'ahead'`): what the first `skill`
 * call of a name costs, which no earlier call can answer.
 */
const CROSSING = { ...PLUGINS.dropIn, apply: (ctx, config) => PLUGINS.dropIn.apply(ctx, config, { recall: 'ahead' }) };

/** A harness for `plugin` with `skillCount` skills and `eventCount` events, its catalog published and still visible. */
async function prepare(plugin, skillCount, eventCount, growing) {
  const generated = skills(skillCount);
  const harness = await createHarness({ plugin, skills: generated });
  const first = await harness.preStep({ messages: ['Start the task.'] });
  if (!first.messages?.some((message) => message.source.kind === 'skill-catalog')) throw new Error('no catalog was published');
  appendEvents(harness, Math.max(0, eventCount - harness.session.seq));
  const steady = async () => {
    // --growing: one model turn recorded before each step, untimed, as in an agent loop.
    if (growing) harness.appendTurn('Still working.');
    const start = performance.now();
    const outcome = await harness.preStep();
    const elapsed = (performance.now() - start) * 1000;
    if (outcome.decision !== 'enter' || outcome.messages.length !== 0) throw new Error(`not a steady step: ${JSON.stringify(outcome).slice(0, 200)}`);
    return elapsed;
  };
  const name = generated[Math.floor(generated.length / 2)].name;
  const load = async () => {
    const result = await harness.invoke({ name });
    if (result.isError) throw new Error(result.content[0].text);
  };
  return { harness, steady, load };
}

/** Both plugins at one size: the steady pre-step and the tool call, in microseconds. */
async function measure(skillCount, eventCount, { iterations, warmup, alone, only, growing }) {
  const loads = Math.min(iterations, 100);
  if (alone) {
    // Each plugin in a harness of its own, one after the other: no garbage of one in the other's samples.
    const results = [];
    for (const plugin of [PLUGINS.published, PLUGINS.dropIn]) {
      if (only !== null && PLUGINS[only] !== plugin) {
        results.push(null);
        continue;
      }
      const prepared = await prepare(plugin, skillCount, eventCount, growing);
      const [preStep] = await timedSideBySide(iterations, warmup, [prepared.steady]);
      const [tool] = await timedSideBySide(loads, Math.min(warmup, 20), [prepared.load]);
      results.push({ preStep, tool, events: prepared.harness.session.seq });
    }
    return { events: (results[1] ?? results[0]).events, published: results[0], ours: results[1] };
  }
  const published = await prepare(PLUGINS.published, skillCount, eventCount, growing);
  const ours = await prepare(PLUGINS.dropIn, skillCount, eventCount, growing);
  const crossing = await prepare(CROSSING, skillCount, eventCount, growing);
  const [publishedStep, oursStep] = await timedSideBySide(iterations, warmup, [published.steady, ours.steady]);
  const [publishedLoad, oursLoad, crossingLoad] = await timedSideBySide(loads, Math.min(warmup, 20), [
    published.load,
    ours.load,
    crossing.load,
  ]);
  return {
    events: ours.harness.session.seq,
    published: { preStep: publishedStep, tool: publishedLoad },
    ours: { preStep: oursStep, tool: oursLoad, crossing: crossingLoad },
  };
}

const format = (us) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);
const ratio = (published, ours) => `${(published / ours).toFixed(1)}×`;

const chosen = options(process.argv.slice(2));
const rows = [];
for (const skillCount of chosen.skills) {
  for (const eventCount of chosen.events) {
    const { published, ours } = await measure(skillCount, eventCount, chosen);
    const row = { skills: skillCount, events: eventCount, published, ours };
    rows.push(row);
    if (chosen.json) process.stdout.write(`${JSON.stringify(row)}\n`);
  }
}
if (!chosen.json) {
  const lines = [
    `Node ${process.version}; ${chosen.iterations} iterations after ${chosen.warmup} warm-up${chosen.growing ? ', one model turn recorded before each step' : ''}; medians (p90).`,
    '',
    '| skills | events | steady pre-step: published | drop-in | speed-up | `skill` call: published | drop-in | speed-up | first call of a name | speed-up |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const cell = (result, field) => (result === null ? '–' : `${format(result[field].median)}`);
  for (const { skills: count, events, published, ours } of rows) {
    if (published === null || ours === null) {
      lines.push(`| ${count} | ${events} | ${cell(published, 'preStep')} | ${cell(ours, 'preStep')} | – | ${cell(published, 'tool')} | ${cell(ours, 'tool')} | – | – | – |`);
      continue;
    }
    lines.push(
      `| ${count} | ${events} | ${format(published.preStep.median)} (${format(published.preStep.p90)}) | ${format(ours.preStep.median)} (${format(ours.preStep.p90)}) | ${ratio(published.preStep.median, ours.preStep.median)} | ${format(published.tool.median)} | ${format(ours.tool.median)} | ${ratio(published.tool.median, ours.tool.median)} | ${ours.crossing ? format(ours.crossing.median) : '–'} | ${ours.crossing ? ratio(published.tool.median, ours.crossing.median) : '–'} |`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}
process.exit(0);

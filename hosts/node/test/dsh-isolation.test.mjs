// Agents never wait on each other in the drop-in (dsh/index.mjs): however
// many agents' calls wait on a skill provider that never answers, each
// holding a sandbox instance, another agent's step is served at once, by an
// instance the pool keeps ready (src/sandbox.mjs, `spareInstances`).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { PLUGINS, createHarness } from '../dsh-harness/harness.mjs';

/** Agents whose provider hangs, all in flight at once. */
const HUNG = 20;
/** Timed healthy steps in each phase, after a few untimed ones. */
const STEPS = 15;
const WARMUP = 5;
/** A healthy step not served by then counts as this long: the test then fails without waiting for the hung calls. */
const GIVE_UP_MS = 2000;
/** How much slower the healthy step may be with the hung agents in flight (medians). */
const MARGIN_MS = 10;

function median(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const round = (ms) => Number(ms.toFixed(2));

test("twenty agents whose provider never answers do not delay another agent's step", async (t) => {
  let release;
  const gate = new Promise((resolve) => {
    release = resolve;
  });
  // Calls that reached the provider for a hung agent's project, which answers once the test ends.
  let hungCalls = 0;
  const hangsFor = (cwd) => typeof cwd === 'string' && cwd.startsWith('/hung/');
  const harness = await createHarness({
    plugin: PLUGINS.dropIn,
    mount: (ctx) => {
      ctx.skills.registerProvider(() => ({
        name: 'per-project',
        // Each project its own answer: the registry caches by cwd and scope,
        // and every hung agent has a cwd of its own, so the healthy agent's
        // listing never waits for a hung one's.
        list: async ({ cwd }) => {
          if (hangsFor(cwd)) {
            hungCalls += 1;
            await gate;
          }
          return [{ name: 'a-skill', description: `Skill of ${cwd}.`, source: 'p', provider: 'per-project', rank: 1, locator: cwd, invocation: { modelInvocable: true, userInvocable: true } }];
        },
        get: async (candidate, { cwd }) => {
          if (hangsFor(cwd)) await gate;
          const { rank: _rank, locator: _locator, ...definition } = candidate;
          return { ...definition, content: `Steps for ${cwd}.` };
        },
      }));
    },
  });
  const healthy = harness.otherAgent('/healthy');
  const first = await healthy.preStep({ messages: ['start'] });
  assert.match(first.messages.at(-1).content[0].text, /Skill of \/healthy\./);

  let step = 0;
  /** One healthy step's time in ms (`GIVE_UP_MS` if it is not served by then). */
  const timedStep = async () => {
    step += 1;
    const start = performance.now();
    const outcome = await Promise.race([healthy.preStep({ messages: [`step ${step}`] }), sleep(GIVE_UP_MS, null)]);
    const elapsed = performance.now() - start;
    if (outcome === null) return GIVE_UP_MS;
    assert.equal(outcome.decision, 'enter', JSON.stringify(outcome));
    return elapsed;
  };
  const phase = async () => {
    for (let index = 0; index < WARMUP; index += 1) await timedStep();
    const samples = [];
    while (samples.length < STEPS) {
      const ms = await timedStep();
      // One step not served is enough: the rest would wait behind it.
      samples.push(...(ms >= GIVE_UP_MS ? Array(STEPS - samples.length).fill(ms) : [ms]));
    }
    return samples;
  };

  const alone = await phase();
  // Every hung agent's first step lists its project, then waits for the provider.
  const hung = Array.from({ length: HUNG }, (_, index) => harness.otherAgent(`/hung/${index}`).preStep({ messages: ['hi'] }));
  // Starting twenty threads takes a second or two on a busy machine; a count that stops growing stays short.
  for (let seen = -1, since = performance.now(); hungCalls < HUNG && performance.now() - since < 5000; await sleep(20)) {
    if (hungCalls !== seen) [seen, since] = [hungCalls, performance.now()];
  }
  const inFlight = hungCalls;
  // The pool's spare, taken by the last hung agent, is started again in the background.
  await sleep(300);
  const withHung = await phase();
  // A tool call is served too, and by its own project's skill.
  const started = performance.now();
  const tool = await Promise.race([harness.invoke({ name: 'a-skill' }), sleep(GIVE_UP_MS, null)]);
  const toolMs = performance.now() - started;

  // The hung calls end as soon as the provider answers.
  release();
  const ended = await Promise.all(hung);
  t.diagnostic(
    `healthy step, medians of ${STEPS}: alone ${round(median(alone))} ms, with ${inFlight} hung agents in flight ${round(median(withHung))} ms (${withHung.map(round).join(', ')})`,
  );
  assert.equal(inFlight, HUNG, 'every hung agent reached its provider (none waited for an instance)');
  assert.ok(
    median(withHung) - median(alone) <= MARGIN_MS,
    `the healthy step took ${round(median(withHung))} ms with ${HUNG} hung agents, ${round(median(alone))} ms alone`,
  );
  assert.ok(tool !== null && tool.isError === false, `the tool call was not served (${JSON.stringify(tool)}, ${round(toolMs)} ms)`);
  assert.match(tool.content[0].text, /Steps for \/workspace\./);
  for (const outcome of ended) assert.match(outcome.messages.at(-1).content[0].text, /Skill of \/hung\/\d+\./);
});

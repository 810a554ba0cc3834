// The drop-in against the published `@deepseek-ai/dsh-tool-skill` in one
// DeepSeek Harness set-up: every scenario observes the same session events,
// decisions and tool results, ids and times aside (dsh-harness/).

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { PLUGINS, runScenario } from '../dsh-harness/harness.mjs';
import { SCENARIOS, SWITCH_SCENARIOS } from '../dsh-harness/scenarios.mjs';

/**
 * Two runs are equal, or the first step and the first event that differ are
 * shown (assert's own diff of whole runs takes minutes).
 */
function assertSameRun(actual, expected, message = '') {
  for (const part of ['observed', 'events']) {
    const length = Math.max(actual[part].length, expected[part].length);
    for (let index = 0; index < length; index += 1) {
      const [got, want] = [JSON.stringify(actual[part][index]), JSON.stringify(expected[part][index])];
      if (got !== want) assert.fail(`${message}${part}[${index}] differs:\n  published: ${want}\n  drop-in:   ${got}`);
    }
  }
}

for (const scenario of SCENARIOS) {
  test(`differential: ${scenario.name}`, async () => {
    const expected = await runScenario(scenario, PLUGINS.published);
    assertSameRun(await runScenario(scenario, PLUGINS.dropIn), expected);
  });
}

for (const scenario of SWITCH_SCENARIOS) {
  test(`differential, switched between the plugins: ${scenario.name}`, async () => {
    const expected = await runScenario(scenario, PLUGINS.published, PLUGINS.published);
    assertSameRun(await runScenario(scenario, PLUGINS.published, PLUGINS.dropIn), expected, 'published, then the drop-in: ');
    assertSameRun(await runScenario(scenario, PLUGINS.dropIn, PLUGINS.published), expected, 'the drop-in, then published: ');
  });
}

// The scenario reader takes the shapes the Rust host's serde types take, and
// refuses the rest with a `ScenarioError` before any plugin runs.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ScenarioError } from '../src/errors.mjs';
import { Scenario } from '../src/scenario.mjs';

test('nulls are missing fields, but where they are values', () => {
  const scenario = Scenario.parse(
    '{"config":null,"cwd":null,"providers":null,"session":[{"type":"x/y","data":null}],"steps":[' +
      '{"op":"pre-step","messages":null,"toolView":null},{"op":"propose","reject":null},' +
      '{"op":"invoke","arguments":null,"name":"a"},{"op":"invoke","name":null}]}',
  );
  assert.equal(scenario.config, null);
  assert.equal(scenario.cwd, '/workspace');
  assert.deepEqual(scenario.providers, []);
  assert.equal(scenario.session[0].data, null);
  assert.deepEqual(scenario.steps[0], { op: 'pre-step', reject: undefined, messages: [], toolView: 'visible' });
  assert.equal(scenario.steps[1].reject, null);
  assert.equal(scenario.steps[2].argumentsText, 'null');
  assert.equal(scenario.steps[3].argumentsText, '{"name":null}');
});

test('a repeated key is the last value inside JSON values, and ignored fields may repeat', () => {
  const scenario = Scenario.parse(
    '{"runtime":[{"name":"r","description":"d","content":"c","whenToUse":3,"note":1,"note":2}],' +
      '"steps":[{"op":"invoke","arguments":{"name":"a","name":"b"}},{"op":"compact","x":1,"x":2}]}',
  );
  assert.equal(scenario.runtime[0].whenToUse, null);
  assert.equal(scenario.steps[0].argumentsText, '{"name":"b"}');
});

test('malformed scenarios are refused before anything runs', () => {
  for (const text of [
    '{"steps":[}',
    '{}',
    '{"steps":[],"steps":[]}',
    '{"steps":[],"extra":1}',
    '[null,null,null,null,null,[]]',
    '{"steps":[["compact"]]}',
    '{"steps":[{"op":3}]}',
    '{"steps":[{"op":"invoke","op":"compact"}]}',
    '{"steps":[{"op":"invoke"}]}',
    '{"steps":[{"op":"pre-step","toolView":{"hidden":null}}]}',
    '{"steps":[{"op":"pre-step","reject":null,"messages":5}]}',
    '{"steps":[{"op":"set-runtime","runtime":null}]}',
    '{"providers":[{"name":"p","skills":"x"}],"steps":[]}',
    '{"providers":[{"name":"p","skills":[{"loaded":5}]}],"steps":[]}',
    '{"runtime":[{"name":"a-b","description":"d","content":"c","invocation":[true]}],"steps":[]}',
    '{"session":[{"type":"user/message","surfaceOp":{"op":"replace","start":1.0,"end":2}}],"steps":[]}',
  ]) {
    assert.throws(() => Scenario.parse(text), ScenarioError, text);
  }
});

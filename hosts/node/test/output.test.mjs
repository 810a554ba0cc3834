// The output caps count UTF-8 bytes per string and per call, and added messages per pre-step.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { HostError } from '../src/errors.mjs';
import { OutputCheck } from '../src/output.mjs';

const limits = { maxAddedMessages: 2, maxTextBytes: 8, maxOutputBytes: 12 };
const refused = (message) => (error) => error instanceof HostError && error.message === message;

test('a string is measured in UTF-8 bytes, not UTF-16 units', () => {
  const check = new OutputCheck('expand', limits);
  check.text(() => 'the expansion', 'ééé'); // 6 bytes
  assert.throws(
    () => new OutputCheck('expand', limits).text(() => 'the expansion', 'ééééé'),
    refused('plugin call `expand` returned invalid output: the expansion is 10 bytes, over the cap of 8 bytes per text'),
  );
});

test('the strings of one call add up against the per-call cap', () => {
  const check = new OutputCheck('invoke', limits);
  check.text(() => 'the text', '12345678');
  assert.throws(
    () => check.text(() => "the value's content", '12345'),
    refused(
      "plugin call `invoke` returned invalid output: its texts add up to more than the cap of 12 bytes per call (at the value's content)",
    ),
  );
});

test('a pre-step adds at most the cap of messages, and each added block is counted', () => {
  const check = new OutputCheck('pre-step', limits);
  check.addedCount(2);
  assert.throws(
    () => check.addedCount(3),
    refused('plugin call `pre-step` returned invalid output: it added 3 messages; a pre-step may add at most 2'),
  );
  assert.throws(
    () => check.addedMessage(1, { source: '{}', content: [{ tag: 'text', val: '123456789' }] }),
    refused("plugin call `pre-step` returned invalid output: added message 1's content block 1 is 9 bytes, over the cap of 8 bytes per text"),
  );
});

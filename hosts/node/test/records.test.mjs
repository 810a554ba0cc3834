// The record table (rules/records.json), shared with the Rust host's
// host-runner/src/plugin/tests/records.rs, through this host's own checks:
// each source through `addedMessage` (src/plugin.mjs, reading with
// src/record.mjs), each step through `applyDecision`.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { HostError } from '../src/errors.mjs';
import { parse, stringify } from '../src/json.mjs';
import { DEFAULT_OUTPUT_LIMITS, OutputCheck } from '../src/output.mjs';
import { addedMessage, applyDecision, userMessage } from '../src/plugin.mjs';

// Read as the Rust host reads it (serde_json), so a `source` row is written
// with the same bytes in both tests.
const TABLE = parse(readFileSync(new URL('../../../rules/records.json', import.meta.url), 'utf8'));

const invalid = (reason) => HostError.invalidOutput('pre-step', reason);
const PREFIX = 'plugin call `pre-step` returned invalid output: ';

/** A row's source text: `text` as it is, or `source` written compactly. */
const sourceText = (row) => (Object.hasOwn(row, 'text') ? row.text : stringify(row.source));

/** A row as an added message: a string is a text block, `{ other }` another block; one text block when absent. */
function messageOf(row) {
  const content = (row.content ?? ['text']).map((block) =>
    typeof block === 'string' ? { tag: 'text', val: block } : { tag: 'other', val: block.other },
  );
  return { source: sourceText(row), content };
}

/** This host's reason for a refusal the row names (docs/spec.md §8.5). */
function reason(row, source) {
  switch (row.refused) {
    case 'not-json': {
      let message;
      assert.throws(() => parse(source), (error) => ((message = error.message), true));
      // serde_json's words, as the Rust host gives them.
      if (Object.hasOwn(row, 'error')) assert.equal(message, row.error, stringify(row));
      return `an added message's source is not JSON: ${message}`;
    }
    case 'not-one-text-block':
      return 'an added message must be exactly one text block';
    case 'not-a-notice':
      return `an added skill notice has source ${stringify(parse(source))}, which is not a changed, gone or reload notice`;
    case 'foreign':
      return `an added message has source ${stringify(parse(source))}; the plugin may only write {"kind":"plugin","plugin":"dsh-tool-skill"} or a skill invocation`;
    default:
      throw new Error(`the table names no refusal ${row.refused}`);
  }
}

function checkRow(row) {
  const message = messageOf(row);
  const shown = stringify(row);
  if (Object.hasOwn(row, 'accepted')) {
    const added = addedMessage(message, invalid);
    assert.equal(added.record, row.accepted, shown);
    // Entered in the log's shape, the source as parsed (a key given twice at its last value).
    assert.equal(stringify(added.data.source), stringify(parse(message.source)), shown);
    assert.deepEqual(added.data.content, [{ type: 'text', text: message.content[0].val }], shown);
    assert.equal(added.data.role, 'user', shown);
    assert.equal(typeof added.data.id, 'string', shown);
  } else {
    const expected = reason(row, message.source);
    assert.throws(
      () => addedMessage(message, invalid),
      (error) => error instanceof HostError && error.message === PREFIX + expected,
      shown,
    );
  }
}

test('every source of the table is accepted or refused as it says', () => {
  assert.ok(TABLE.sources.length > 100);
  for (const row of TABLE.sources) checkRow(row);
  // Each kind of record, and each refusal, has a row.
  const verdicts = new Set(TABLE.sources.map((row) => row.accepted ?? row.refused));
  assert.deepEqual([...verdicts].sort(), [
    'catalog',
    'catalog-update',
    'changed-notice',
    'foreign',
    'gone-notice',
    'invocation',
    'invocation-note',
    'not-a-notice',
    'not-json',
    'reload-notice',
    'skill-catalog',
  ]);
});

test('every message of the table is accepted or refused as it says', () => {
  for (const row of TABLE.messages) checkRow(row);
});

test('every step of the table enters or is refused as it says', () => {
  for (const step of TABLE.steps) {
    const proposed = { enter: [userMessage({ kind: 'user' }, step.names.map((name) => `/${name}`).join(' '))] };
    const decided = step.added.map((row) => ({ tag: 'added', val: messageOf(row) }));
    const apply = () =>
      applyDecision(proposed, { decided, decisions: 1 }, new OutputCheck('pre-step', DEFAULT_OUTPUT_LIMITS));
    if (Object.hasOwn(step, 'accepted')) {
      assert.equal(apply().enter.length, step.accepted, stringify(step));
    } else {
      assert.throws(apply, (error) => error instanceof HostError && error.message === PREFIX + step.refused, stringify(step));
    }
  }
});

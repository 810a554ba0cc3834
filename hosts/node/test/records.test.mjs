// The record table (rules/records.json), shared with the Rust host's
// host-runner/src/plugin/tests/records.rs, through this host's own checks:
// each source through `addedMessage` (src/plugin.mjs, reading with
// src/record.mjs), each step through `applyDecision`; and each accepted
// source sent typed, as a `dsh:skill@0.3.0` plugin sends it, written by
// `writeRecord` as rules/src/record.rs `Record::to_json` writes it.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { HostError } from '../src/errors.mjs';
import { parse, stringify } from '../src/json.mjs';
import { DEFAULT_OUTPUT_LIMITS, OutputCheck } from '../src/output.mjs';
import { addedMessage, applyDecision, userMessage } from '../src/plugin.mjs';
import { readRecord, writeRecord, writtenMessage } from '../src/record.mjs';

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

/** An accepted source (parsed) as a 0.3.0 plugin sends it: its `added-source` in jco's shape. */
function typed(source) {
  const { record } = readRecord(source);
  switch (record) {
    case 'catalog':
      return { tag: 'catalog' };
    case 'skill-catalog': {
      const entries = source.entries.map(({ name, description }) => ({ name, description }));
      return { tag: 'skill-catalog', val: { update: source.update === true, entries, coverage: source.coverage } };
    }
    case 'catalog-update':
      return { tag: 'catalog-update', val: source.removed };
    case 'invocation':
      return { tag: 'invocation', val: source.name };
    case 'invocation-note':
      return { tag: 'invocation-note' };
    case 'changed-notice':
      return { tag: 'changed', val: { name: source.name, provider: source.provider, bodyDigest: source.bodyDigest } };
    case 'gone-notice':
      return { tag: 'gone', val: source.name };
    case 'reload-notice':
      return { tag: 'reload', val: source.names };
    default:
      throw new Error(`not an accepted source: ${stringify(source)}`);
  }
}

/** The keys of each record in the order `Record::to_json` writes them (optional ones included). */
const KEY_ORDER = {
  catalog: ['kind', 'plugin'],
  'skill-catalog': ['kind', 'form', 'update', 'entries', 'coverage'],
  'catalog-update': ['kind', 'plugin', 'form', 'removed'],
  invocation: ['kind', 'name', 'form'],
  'invocation-note': ['kind', 'form'],
  'changed-notice': ['bodyDigest', 'form', 'kind', 'name', 'provider'],
  'gone-notice': ['form', 'kind', 'name'],
  'reload-notice': ['form', 'kind', 'names'],
};

test('every accepted source sent as a typed record is written as the plugin writes it, and accepted as that record', () => {
  const accepted = TABLE.sources.filter((row) => Object.hasOwn(row, 'accepted'));
  assert.ok(accepted.length > 20);
  for (const row of accepted) {
    const source = parse(sourceText(row));
    const message = writtenMessage({ source: typed(source), text: 'text' });
    const shown = `${stringify(row)} → ${message.source}`;
    // Compact, the same value, keys in the writer's order: with the escapes
    // pinned below, that is Record::to_json's bytes.
    const written = JSON.parse(message.source);
    assert.equal(JSON.stringify(written), message.source, shown);
    assert.equal(stringify(parse(message.source)), stringify(source), shown);
    assert.deepEqual(Object.keys(written), KEY_ORDER[row.accepted].filter((key) => Object.hasOwn(written, key)), shown);
    if (row.accepted === 'skill-catalog') {
      for (const entry of written.entries) assert.deepEqual(Object.keys(entry), ['name', 'description'], shown);
    }
    // Written twice is written the same.
    assert.equal(writeRecord(typed(parse(message.source))), message.source, shown);
    assert.deepEqual(message.content, [{ tag: 'text', val: 'text' }], shown);
    assert.equal(addedMessage(message, invalid).record, row.accepted, shown);
  }
});

test("each record is written with Record::to_json's bytes (rules/src/record.rs's own examples)", () => {
  const examples = [
    [{ tag: 'catalog' }, '{"kind":"plugin","plugin":"dsh-tool-skill"}'],
    [
      {
        tag: 'skill-catalog',
        val: {
          update: true,
          entries: [{ name: 'a', description: 'x < "y"\n' }],
          coverage: 'Catalog coverage: 1 of 2 skills listed.',
        },
      },
      '{"kind":"skill-catalog","form":"catalog","update":true,"entries":[{"name":"a","description":"x < \\"y\\"\\n"}],"coverage":"Catalog coverage: 1 of 2 skills listed."}',
    ],
    [
      { tag: 'skill-catalog', val: { update: false, entries: [], coverage: undefined } },
      '{"kind":"skill-catalog","form":"catalog","entries":[]}',
    ],
    [
      { tag: 'catalog-update', val: ['c', 'd'] },
      '{"kind":"plugin","plugin":"dsh-tool-skill","form":"catalog-update","removed":["c","d"]}',
    ],
    [{ tag: 'invocation', val: 'pdf' }, '{"kind":"skill-invocation","name":"pdf","form":"instructions"}'],
    [{ tag: 'invocation-note' }, '{"kind":"skill-invocation","form":"not-loaded"}'],
    [
      { tag: 'changed', val: { name: 'a', provider: 'runtime', bodyDigest: 'sha256:2' } },
      '{"bodyDigest":"sha256:2","form":"changed","kind":"skill-notice","name":"a","provider":"runtime"}',
    ],
    [
      { tag: 'changed', val: { name: 'a', provider: 'p', bodyDigest: undefined } },
      '{"form":"changed","kind":"skill-notice","name":"a","provider":"p"}',
    ],
    [{ tag: 'gone', val: 'a' }, '{"form":"gone","kind":"skill-notice","name":"a"}'],
    [{ tag: 'reload', val: ['a', 'b'] }, '{"form":"reload","kind":"skill-notice","names":["a","b"]}'],
  ];
  for (const [source, expected] of examples) assert.equal(writeRecord(source), expected);
});

test('a string is escaped as serde_json escapes it', () => {
  // Every ASCII character and a few beyond, as rules/src/record.rs writes
  // them (taken from its output): controls as \b \t \n \f \r or lowercase
  // \u00xx, `"` and `\\` escaped, DEL, U+2028, U+2029 and `/` as they are.
  const text = `${Array.from({ length: 0x80 }, (_, code) => String.fromCharCode(code)).join('')}\u2028\u2029é😀\ufeff`;
  const expected =
    '"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f' +
    '\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f' +
    ' !\\"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\x7f' +
    '\u2028\u2029é😀\ufeff"';
  assert.equal(
    writeRecord({ tag: 'skill-catalog', val: { update: false, entries: [{ name: 'a', description: text }], coverage: text } }),
    `{"kind":"skill-catalog","form":"catalog","entries":[{"name":"a","description":${expected}}],"coverage":${expected}}`,
  );
});

test('a typed record the grammar refuses is refused with the text of its written source, as in skill-host', () => {
  const changed = (provider, bodyDigest) => ({ tag: 'changed', val: { name: 'a', provider, bodyDigest } });
  const cases = [
    [{ tag: 'invocation', val: 'Not A Name' }, 'foreign'],
    [{ tag: 'catalog-update', val: ['a', 'a'] }, 'foreign'],
    [{ tag: 'skill-catalog', val: { update: false, entries: [{ name: '../x', description: 'd' }], coverage: undefined } }, 'foreign'],
    [{ tag: 'gone', val: '-bad' }, 'not-a-notice'],
    [{ tag: 'reload', val: [] }, 'not-a-notice'],
    [{ tag: 'reload', val: ['b', 'a', 'a'] }, 'not-a-notice'],
    [changed('', undefined), 'not-a-notice'],
    [changed('p', 'x'.repeat(129)), 'not-a-notice'],
  ];
  for (const [source, refused] of cases) {
    const message = writtenMessage({ source, text: 'text' });
    assert.throws(
      () => addedMessage(message, invalid),
      (error) => error instanceof HostError && error.message === PREFIX + reason({ refused }, message.source),
      message.source,
    );
  }
  // skill-host's words, spelled out for two of them.
  const refusal = (source) => {
    try {
      addedMessage(writtenMessage({ source, text: 'text' }), invalid);
    } catch (error) {
      return error.message;
    }
    assert.fail('accepted');
  };
  assert.equal(
    refusal({ tag: 'invocation', val: 'Not A Name' }),
    `${PREFIX}an added message has source {"form":"instructions","kind":"skill-invocation","name":"Not A Name"}; the plugin may only write {"kind":"plugin","plugin":"dsh-tool-skill"} or a skill invocation`,
  );
  assert.equal(
    refusal({ tag: 'reload', val: [] }),
    `${PREFIX}an added skill notice has source {"form":"reload","kind":"skill-notice","names":[]}, which is not a changed, gone or reload notice`,
  );
});

// What a pre-step may add, as the Rust host checks it (host-runner/src/plugin.rs):
// a catalog, skill injections for a user's `/name`s, and at most one note
// naming the user-invoked skills the plugin did not load.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { HostError } from '../src/errors.mjs';
import { stringify } from '../src/json.mjs';
import { DEFAULT_OUTPUT_LIMITS, OutputCheck } from '../src/output.mjs';
import { applyDecision, userMessage } from '../src/plugin.mjs';

// docs/spec.md §3.10: MAX_INVOKED_SKILLS (rules/src/lib.rs).
const MAX_INVOKED_SKILLS = 16;
const NOTE = '{"kind":"skill-invocation","form":"not-loaded"}';

const added = (source, texts) => ({
  tag: 'added',
  val: { source, content: texts.map((val) => ({ tag: 'text', val })) },
});
const injection = (name) => added(`{"kind":"skill-invocation","name":"${name}","form":"instructions"}`, ['body']);

/** The decision `decided` made on one user message naming `names`. */
function apply(names, decided) {
  const proposed = { enter: [userMessage({ kind: 'user' }, names.map((name) => `/${name}`).join(' '))] };
  return applyDecision(proposed, { decided, decisions: 1 }, new OutputCheck('pre-step', DEFAULT_OUTPUT_LIMITS));
}

const refused = (reason) => (error) =>
  error instanceof HostError && error.message === `plugin call \`pre-step\` returned invalid output: ${reason}`;

test('the default cap holds a catalog, every injection and the note', () => {
  assert.ok(DEFAULT_OUTPUT_LIMITS.maxAddedMessages >= 1 + MAX_INVOKED_SKILLS + 1);
  const names = Array.from({ length: 70 }, (_, index) => `s${index + 1}`);
  const decided = [
    { tag: 'proposed', val: 0 },
    added('{"kind":"plugin","plugin":"dsh-tool-skill"}', ['catalog']),
    ...names.slice(0, MAX_INVOKED_SKILLS).map(injection),
    added(NOTE, ['Not loaded: /s17, …']),
  ];
  const { enter } = apply(names, decided);
  assert.equal(enter.length, 1 + 1 + MAX_INVOKED_SKILLS + 1);
  const note = enter.at(-1);
  assert.equal(stringify(note.source), '{"form":"not-loaded","kind":"skill-invocation"}');
  assert.deepEqual(note.content, [{ type: 'text', text: 'Not loaded: /s17, …' }]);
  assert.equal(note.role, 'user');
});

test('the note is accepted once, in any key order, as one text block', () => {
  for (const source of [NOTE, '{"form":"not-loaded","kind":"skill-invocation"}']) {
    assert.equal(apply(['a'], [injection('a'), added(source, ['n'])]).enter.length, 2);
  }
  assert.throws(
    () => apply(['a'], [added(NOTE, ['n']), added(NOTE, ['n'])]),
    refused('more than one invocation note was added'),
  );
  for (const texts of [[], ['n', 'n']]) {
    assert.throws(() => apply(['a'], [added(NOTE, texts)]), refused('an added message must be exactly one text block'));
  }
  const other = { tag: 'added', val: { source: NOTE, content: [{ tag: 'other', val: '{"type":"image"}' }] } };
  assert.throws(() => apply(['a'], [other]), refused('an added message must be exactly one text block'));
});

test('anything else like the note keeps the refusal of a foreign source', () => {
  for (const [source, shown] of [
    [
      '{"kind":"skill-invocation","form":"not-loaded","name":"a"}',
      '{"form":"not-loaded","kind":"skill-invocation","name":"a"}',
    ],
    [
      '{"kind":"skill-invocation","form":"not-loaded","extra":1}',
      '{"extra":1,"form":"not-loaded","kind":"skill-invocation"}',
    ],
    ['{"kind":"skill-invocation","form":"Not-loaded"}', '{"form":"Not-loaded","kind":"skill-invocation"}'],
    ['{"kind":"skill-invocation"}', '{"kind":"skill-invocation"}'],
    ['{"kind":"skill-invocation","form":["not-loaded"]}', '{"form":["not-loaded"],"kind":"skill-invocation"}'],
  ]) {
    assert.throws(
      () => apply(['a'], [added(source, ['n'])]),
      refused(
        `an added message has source ${shown}; the plugin may only write {"kind":"plugin","plugin":"dsh-tool-skill"} or a skill invocation`,
      ),
      source,
    );
  }
});

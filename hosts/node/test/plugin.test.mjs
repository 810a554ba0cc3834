// What a pre-step may add, as the Rust host checks it
// (host-runner/src/plugin/decision.rs), at its largest (each source and each
// refusal is in rules/records.json, which test/records.test.mjs reads), and
// what a tool result may record of its load.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { HostError } from '../src/errors.mjs';
import { stringify } from '../src/json.mjs';
import { DEFAULT_OUTPUT_LIMITS, OutputCheck } from '../src/output.mjs';
import { applyDecision, MAX_SEARCH_MATCHES, userMessage, validateToolResult } from '../src/plugin.mjs';
import { MAX_DIGEST_BYTES, MAX_RELOAD_NAMES } from '../src/record.mjs';

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

// Which sources a pre-step may add, accepted once each: rules/records.json,
// read by test/records.test.mjs.
const noticeAbout = (name) => added(`{"kind":"skill-notice","form":"gone","name":"${name}"}`, ['gone']);

test('the default cap holds a catalog, the notices, the reload, every injection and the note', () => {
  // docs/spec.md §3.12: MAX_SKILL_NOTICES (rules/src/lib.rs).
  const MAX_SKILL_NOTICES = 8;
  const names = Array.from({ length: 70 }, (_, index) => `s${index + 1}`);
  const decided = [
    { tag: 'proposed', val: 0 },
    added('{"kind":"plugin","plugin":"dsh-tool-skill"}', ['catalog']),
    ...Array.from({ length: MAX_SKILL_NOTICES }, (_, index) => noticeAbout(`n${index}`)),
    added('{"kind":"skill-notice","form":"reload","names":["r"]}', ['reload']),
    ...names.slice(0, MAX_INVOKED_SKILLS).map(injection),
    added(NOTE, ['Not loaded: /s17, …']),
  ];
  assert.ok(DEFAULT_OUTPUT_LIMITS.maxAddedMessages >= decided.length - 1);
  assert.equal(apply(names, decided).enter.length, decided.length);
});

// Tool results (host-runner/src/plugin.rs `validate_tool_result`).
const invokeRefused = (reason) => (error) =>
  error instanceof HostError && error.message === `plugin call \`invoke\` returned invalid output: ${reason}`;

function success(loaded) {
  return {
    tag: 'ok',
    val: { value: { tag: 'skill', val: { name: 'a', provider: 'p', content: 'body' } }, text: 'text', loaded },
  };
}

test('search matches answer a query with at most five distinct skills and record no load', () => {
  const found = (names, loaded) => ({
    tag: 'ok',
    val: { value: { tag: 'matches', val: names.map((name) => ({ name, description: 'd' })) }, text: 't', loaded },
  });
  const check = () => new OutputCheck('invoke', DEFAULT_OUTPUT_LIMITS);
  validateToolResult(found(['a', 'b']), '{"query":"x"}', check());
  for (const [returned, args, reason] of [
    [found(['a']), '{"name":"a"}', 'it returned search matches, but the arguments have no query'],
    [found(['a']), '{"name":"a","query":"x"}', 'it returned search matches, but the arguments have no query'],
    [found(['a', 'b', 'c', 'd', 'e', 'f']), '{"query":"x"}', 'it returned 6 search matches; at most 5 are allowed'],
    [found(['a', 'a']), '{"query":"x"}', 'search match 1 names skill "a", which is not a valid skill name or is listed twice'],
    [found(['A']), '{"query":"x"}', 'search match 0 names skill "A", which is not a valid skill name or is listed twice'],
    [found(['a'], { name: 'a', provider: 'p' }), '{"query":"x"}', 'it records a load for search matches'],
  ]) {
    assert.throws(() => validateToolResult(returned, args, check()), invokeRefused(reason));
  }
});

const validate = (returned) =>
  validateToolResult(returned, '{"name":"a"}', new OutputCheck('invoke', DEFAULT_OUTPUT_LIMITS));

test('a recorded load names the value and carries a printable digest', () => {
  validate(success(undefined));
  validate(success({ name: 'a', provider: 'p', bodyDigest: undefined }));
  validate(success({ name: 'a', provider: 'p', bodyDigest: `sha256:${'0'.repeat(64)}` }));
  validate(success({ name: 'a', provider: 'p', bodyDigest: '!'.repeat(128) }));
  validate(success({ name: 'a', provider: 'p', bodyDigest: '' }));
  for (const [name, provider] of [['b', 'p'], ['a', 'q'], ['a', '']]) {
    assert.throws(
      () => validate(success({ name, provider, bodyDigest: undefined })),
      invokeRefused(`the load it records is skill "${name}" of provider "${provider}", not the value's`),
    );
  }
  for (const digest of ['~'.repeat(129), 'sha256:a b', 'sha256:\u007f', 'sha256:\t', 'sha256:é', 'x\u{1F600}']) {
    assert.throws(
      () => validate(success({ name: 'a', provider: 'p', bodyDigest: digest })),
      invokeRefused('the load it records has a body digest that is not up to 128 printable ASCII characters'),
      digest,
    );
  }
  // The value is checked first.
  assert.throws(
    () =>
      validateToolResult(
        success({ name: 'b', provider: 'p' }),
        '{"name":"b"}',
        new OutputCheck('invoke', DEFAULT_OUTPUT_LIMITS),
      ),
    invokeRefused('the value is skill "a", but the arguments asked for "b"'),
  );
});

test('the limits this host mirrors are the ones skill-rules defines', () => {
  const rules = readFileSync(new URL('../../../rules/src/lib.rs', import.meta.url), 'utf8');
  const constant = (name) => Number(rules.match(new RegExp(`pub const ${name}: usize = (\\d+);`))[1]);
  assert.equal(MAX_RELOAD_NAMES, constant('MAX_RELOAD_NAMES'));
  assert.equal(MAX_INVOKED_SKILLS, constant('MAX_INVOKED_SKILLS'));
  assert.equal(MAX_SEARCH_MATCHES, constant('MAX_SEARCH_MATCHES'));
  assert.equal(MAX_DIGEST_BYTES, constant('MAX_BODY_DIGEST_BYTES'));
});

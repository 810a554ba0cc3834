// What a pre-step may add, as the Rust host checks it (host-runner/src/plugin.rs):
// a catalog, skill injections for a user's `/name`s, at most one note naming
// the user-invoked skills the plugin did not load, and skill notices; what a
// tool result may record of its load, and how the result is recorded.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { HostError } from '../src/errors.mjs';
import { stringify } from '../src/json.mjs';
import { DEFAULT_OUTPUT_LIMITS, OutputCheck } from '../src/output.mjs';
import {
  applyDecision,
  CATALOG_UPDATE_FORM,
  isCatalogUpdateSource,
  isSkillCatalogSource,
  MAX_RELOAD_NAMES,
  MAX_SEARCH_MATCHES,
  toolResultData,
  userMessage,
  validateToolResult,
} from '../src/plugin.mjs';

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

// Skill notices (docs/spec.md §3.12; host-runner/src/plugin.rs `notice`).
const noticeAbout = (name) => added(`{"kind":"skill-notice","form":"gone","name":"${name}"}`, ['gone']);

test('skill notices are accepted only in their exact shapes and once', () => {
  const accepted = [
    '{"kind":"skill-notice","form":"changed","name":"a","provider":"local","bodyDigest":"sha256:00"}',
    '{"provider":"p","name":"b","form":"changed","kind":"skill-notice"}',
    '{"kind":"skill-notice","form":"gone","name":"c"}',
    '{"kind":"skill-notice","form":"reload","names":["d","e"]}',
  ];
  const { enter } = apply([], accepted.map((source) => added(source, ['text'])));
  assert.equal(enter.length, 4);
  assert.equal(stringify(enter[2].source), '{"form":"gone","kind":"skill-notice","name":"c"}');
  assert.deepEqual(enter[2].content, [{ type: 'text', text: 'text' }]);
  assert.equal(enter[2].role, 'user');
  for (const [bad, shown] of [
    ['{"kind":"skill-notice","form":"gone","name":"Bad"}', '{"form":"gone","kind":"skill-notice","name":"Bad"}'],
    ['{"kind":"skill-notice","form":"gone","name":"c","extra":1}', '{"extra":1,"form":"gone","kind":"skill-notice","name":"c"}'],
    ['{"kind":"skill-notice","form":"gone","names":"c"}', '{"form":"gone","kind":"skill-notice","names":"c"}'],
    ['{"kind":"skill-notice","form":"changed","name":"a"}', '{"form":"changed","kind":"skill-notice","name":"a"}'],
    [
      '{"kind":"skill-notice","form":"changed","name":"a","provider":""}',
      '{"form":"changed","kind":"skill-notice","name":"a","provider":""}',
    ],
    [
      '{"kind":"skill-notice","form":"changed","name":"a","provider":7}',
      '{"form":"changed","kind":"skill-notice","name":"a","provider":7}',
    ],
    [
      '{"kind":"skill-notice","form":"changed","name":"a","provider":"p","bodyDigest":"has space"}',
      '{"bodyDigest":"has space","form":"changed","kind":"skill-notice","name":"a","provider":"p"}',
    ],
    [
      '{"kind":"skill-notice","form":"changed","name":"a","provider":"p","bodyDigest":7}',
      '{"bodyDigest":7,"form":"changed","kind":"skill-notice","name":"a","provider":"p"}',
    ],
    [
      '{"kind":"skill-notice","form":"changed","name":"a","provider":"p","bodyDigest":null}',
      '{"bodyDigest":null,"form":"changed","kind":"skill-notice","name":"a","provider":"p"}',
    ],
    [
      `{"kind":"skill-notice","form":"changed","name":"a","provider":"p","bodyDigest":"${'x'.repeat(129)}"}`,
      `{"bodyDigest":"${'x'.repeat(129)}","form":"changed","kind":"skill-notice","name":"a","provider":"p"}`,
    ],
    [
      '{"kind":"skill-notice","form":"changed","name":"a","provider":"p","bodyDigest":"sha256:é"}',
      '{"bodyDigest":"sha256:é","form":"changed","kind":"skill-notice","name":"a","provider":"p"}',
    ],
    ['{"kind":"skill-notice","form":"reload","names":[]}', '{"form":"reload","kind":"skill-notice","names":[]}'],
    ['{"kind":"skill-notice","form":"reload","names":["d","d"]}', '{"form":"reload","kind":"skill-notice","names":["d","d"]}'],
    ['{"kind":"skill-notice","form":"reload","names":["d",1]}', '{"form":"reload","kind":"skill-notice","names":["d",1]}'],
    ['{"kind":"skill-notice","form":"reload","names":"d"}', '{"form":"reload","kind":"skill-notice","names":"d"}'],
    [
      '{"kind":"skill-notice","form":"reload","names":["d"],"name":"d"}',
      '{"form":"reload","kind":"skill-notice","name":"d","names":["d"]}',
    ],
    ['{"kind":"skill-notice","form":"stale","name":"c"}', '{"form":"stale","kind":"skill-notice","name":"c"}'],
    ['{"kind":"skill-notice","form":["gone"],"name":"c"}', '{"form":["gone"],"kind":"skill-notice","name":"c"}'],
    ['{"kind":"skill-notice"}', '{"kind":"skill-notice"}'],
  ]) {
    assert.throws(
      () => apply([], [added(bad, ['text'])]),
      refused(`an added skill notice has source ${shown}, which is not a changed, gone or reload notice`),
      bad,
    );
  }
  assert.throws(() => apply([], [noticeAbout('a'), noticeAbout('a')]), refused('skill "a" got more than one notice'));
  const changed = added('{"kind":"skill-notice","form":"changed","name":"a","provider":"p"}', ['changed']);
  assert.throws(() => apply([], [changed, noticeAbout('a')]), refused('skill "a" got more than one notice'));
  // A reload names skills without counting as their notice.
  const reload = added('{"kind":"skill-notice","form":"reload","names":["a"]}', ['r']);
  assert.equal(apply([], [noticeAbout('a'), reload]).enter.length, 2);
  assert.throws(() => apply([], [reload, reload]), refused('more than one reload notice was added'));
  assert.throws(
    () => apply([], [added(accepted[2], ['a', 'b'])]),
    refused('an added message must be exactly one text block'),
  );
  // A kind that is not the notice's string keeps the foreign-source refusal.
  assert.throws(
    () => apply([], [added('{"kind":["skill-notice"],"form":"gone","name":"c"}', ['t'])]),
    refused(
      'an added message has source {"form":"gone","kind":["skill-notice"],"name":"c"}; the plugin may only write {"kind":"plugin","plugin":"dsh-tool-skill"} or a skill invocation',
    ),
  );
});

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

test('a tool result is recorded as the harness records it, the load in its source', () => {
  const plain = toolResultData({ ok: {}, text: 'Loaded.', loaded: null });
  const { message } = plain;
  assert.equal(message.role, 'user');
  assert.match(message.source.callId, /^call-[0-9a-f-]{36}$/);
  assert.deepEqual(Object.keys(message.source).sort(), ['callId', 'kind']);
  assert.equal(message.source.kind, 'tool');
  assert.deepEqual(message.content, [
    { type: 'tool-result', toolCallId: message.source.callId, isError: false, content: [{ type: 'text', text: 'Loaded.' }] },
  ]);
  const recorded = toolResultData({ ok: {}, text: 'Loaded.', loaded: { name: 'a', provider: 'p', bodyDigest: 'sha256:00' } });
  const { source } = recorded.message;
  assert.equal(
    stringify({ ...source, callId: 'c' }),
    '{"callId":"c","kind":"tool","loaded":{"bodyDigest":"sha256:00","name":"a","provider":"p"},"plugin":"dsh-tool-skill"}',
  );
  const undigested = toolResultData({ ok: {}, text: 'Loaded.', loaded: { name: 'a', provider: 'p', bodyDigest: null } });
  assert.equal(stringify(undigested.message.source.loaded), '{"name":"a","provider":"p"}');
  const failed = toolResultData({ error: 'Error: no such skill' });
  assert.deepEqual(Object.keys(failed.message.source).sort(), ['callId', 'kind']);
  assert.equal(failed.message.content[0].isError, true);
  assert.deepEqual(failed.message.content[0].content, [{ type: 'text', text: 'Error: no such skill' }]);
});

test('the limits this host mirrors are the ones skill-rules defines', () => {
  const rules = readFileSync(new URL('../../../rules/src/lib.rs', import.meta.url), 'utf8');
  const constant = (name) => Number(rules.match(new RegExp(`pub const ${name}: usize = (\\d+);`))[1]);
  assert.equal(MAX_RELOAD_NAMES, constant('MAX_RELOAD_NAMES'));
  assert.equal(MAX_INVOKED_SKILLS, constant('MAX_INVOKED_SKILLS'));
  assert.equal(MAX_SEARCH_MATCHES, constant('MAX_SEARCH_MATCHES'));
  const form = rules.match(/pub const CATALOG_UPDATE_FORM: &str = "([^"]+)";/)[1];
  assert.equal(CATALOG_UPDATE_FORM, form);
});

test('a catalog update and a budgeted skill-catalog source are catalogs only in their exact shapes', () => {
  const update = { kind: 'plugin', plugin: 'dsh-tool-skill', form: 'catalog-update', removed: ['a', 'b'] };
  assert.equal(isCatalogUpdateSource(update), true);
  for (const bad of [
    { ...update, removed: ['a', 'a'] },
    { ...update, removed: ['A'] },
    { ...update, extra: 1 },
    { kind: 'plugin', plugin: 'dsh-tool-skill', form: 'catalog-update' },
    { ...update, plugin: 'other' },
  ]) {
    assert.equal(isCatalogUpdateSource(bad), false, JSON.stringify(bad));
  }
  const budgeted = { kind: 'skill-catalog', form: 'catalog', entries: [], coverage: 'Catalog coverage: 0 of 0 skills listed.' };
  assert.equal(isSkillCatalogSource(budgeted), true);
  assert.equal(isSkillCatalogSource({ ...budgeted, coverage: 1 }), false);
});

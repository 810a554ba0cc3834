// What a pre-step may add, as the Rust host checks it
// (host-runner/src/plugin/decision.rs), at its largest (each source and each
// refusal is in rules/records.json, which test/records.test.mjs reads), and
// what a tool result may record of its load.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { HostError } from '../src/errors.mjs';
import { CallContext, FileReads, isSkillFilePath, MAX_SKILL_FILE_PATH_BYTES, MAX_SKILL_FILE_READ_BYTES } from '../src/host-imports.mjs';
import { stringify } from '../src/json.mjs';
import { DEFAULT_OUTPUT_LIMITS, OutputCheck } from '../src/output.mjs';
import { applyDecision, MAX_SEARCH_MATCHES, Plugin, userMessage, validateToolResult } from '../src/plugin.mjs';
import { DEFAULT_LIMITS } from '../src/sandbox.mjs';
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
  assert.equal(MAX_SKILL_FILE_PATH_BYTES, constant('MAX_SKILL_FILE_PATH_BYTES'));
  const product = (name) =>
    rules
      .match(new RegExp(`pub const ${name}: u64 = ([\\d *]+);`))[1]
      .split('*')
      .reduce((total, factor) => total * Number(factor.trim()), 1);
  assert.equal(MAX_SKILL_FILE_READ_BYTES, product('MAX_SKILL_FILE_READ_BYTES'));
});

test("a skill file's path follows skill-rules' grammar (is_skill_file_path's own cases)", () => {
  for (const good of ['references/api.md', 'SKILL.md', 'a b/c-d_e.txt', 'ü/ñ.md', 'a'.repeat(1024), 'é'.repeat(512)]) {
    assert.ok(isSkillFilePath(good), good);
  }
  const long = 'a'.repeat(MAX_SKILL_FILE_PATH_BYTES + 1);
  for (const bad of ['', '/etc/passwd', 'a//b', 'a/', './a', 'a/../b', '..', '.hidden', 'a/.git/config', 'a\\b', 'a\nb', 'a\u007f', 'a\u0000', long, 'é'.repeat(513), 7, null]) {
    assert.ok(!isSkillFilePath(bad), JSON.stringify(bad));
  }
});

/** A `file` value (contract 0.4.0) of skill `name`, file `path`. */
function fileSuccess(name, path, { provider = 'p', content = 'text', loaded } = {}) {
  return { tag: 'ok', val: { value: { tag: 'file', val: { name, provider, path, content } }, text: 't', loaded } };
}

const notRead = (path, name = 'a') =>
  invokeRefused(`the value is file ${JSON.stringify(path)} of skill "${name}", which the registry did not read for this call`);

test('a file value names a file the registry answered text for, for that skill, during the call (spec §8.5)', () => {
  const check = () => new OutputCheck('invoke', DEFAULT_OUTPUT_LIMITS);
  const reads = new FileReads();
  reads.note('a', 'references/api.md', { tag: 'ok', val: { tag: 'text', val: 'API' } });
  reads.note('a', 'logo.png', { tag: 'ok', val: { tag: 'binary', val: 2048n } });
  reads.note('a', 'gone.md', { tag: 'ok', val: { tag: 'missing' } });
  reads.note('a', 'failed.md', { tag: 'err', val: { tag: 'failed', val: 'x' } });
  validateToolResult(fileSuccess('a', 'references/api.md'), '{"name":"a","path":"references/api.md"}', check(), reads);
  // The arguments' path is the plugin's business; what the registry read is the host's.
  validateToolResult(fileSuccess('a', 'references/api.md'), '{"name":"a","path":"other.md"}', check(), reads);
  for (const path of ['logo.png', 'gone.md', 'failed.md', 'references/API.md', '../a/references/api.md', 'never "read".md']) {
    assert.throws(() => validateToolResult(fileSuccess('a', path), '{"name":"a"}', check(), reads), notRead(path), path);
  }
  // Without a record of reads, nothing was read.
  assert.throws(() => validateToolResult(fileSuccess('a', 'references/api.md'), '{"name":"a"}', check()), notRead('references/api.md'));
  // Another skill's read is not this one's: the value names the skill asked for first.
  reads.note('b', 'x.md', { tag: 'ok', val: { tag: 'text', val: '' } });
  assert.throws(() => validateToolResult(fileSuccess('b', 'x.md'), '{"name":"a"}', check(), reads), invokeRefused('the value is skill "b", but the arguments asked for "a"'));
  assert.throws(() => validateToolResult(fileSuccess('a', 'x.md'), '{"name":"a"}', check(), reads), notRead('x.md'));
  // As a skill value: a valid name, a provider, a load that is the value's (checked before the read).
  assert.throws(() => validateToolResult(fileSuccess('A', 'x.md'), '{"name":"A"}', check(), reads), invokeRefused('the value names skill "A", which is not a valid skill name'));
  assert.throws(() => validateToolResult(fileSuccess('a', 'x.md', { provider: '' }), '{"name":"a"}', check(), reads), invokeRefused('the value of skill "a" names no provider'));
  assert.throws(
    () => validateToolResult(fileSuccess('a', 'x.md', { loaded: { name: 'a', provider: 'q' } }), '{"name":"a"}', check(), reads),
    invokeRefused('the load it records is skill "a" of provider "q", not the value\'s'),
  );
  validateToolResult(fileSuccess('a', 'references/api.md', { loaded: { name: 'a', provider: 'p' } }), '{"name":"a"}', check(), reads);
});

test("the output caps name the value's path beside its name, provider and content", () => {
  const reads = new FileReads();
  const small = new OutputCheck('invoke', { ...DEFAULT_OUTPUT_LIMITS, maxTextBytes: 8 });
  assert.throws(
    () => validateToolResult(fileSuccess('a', 'references/api.md'), '{"name":"a"}', small, reads),
    invokeRefused("the value's path is 17 bytes, over the cap of 8 bytes per text"),
  );
  const total = new OutputCheck('invoke', { ...DEFAULT_OUTPUT_LIMITS, maxOutputBytes: 5 });
  assert.throws(
    () => validateToolResult(fileSuccess('a', 'abc.md', { content: '' }), '{"name":"a"}', total, reads),
    invokeRefused("its texts add up to more than the cap of 5 bytes per call (at the value's path)"),
  );
});

/** The registry of a test: `answers` maps a path to its `file-answer`; every read is counted. */
function filesHost(answers) {
  return class extends CallContext {
    static reads = 0;
    readSkillFile(_name, path) {
      this.constructor.reads += 1;
      return { tag: 'ok', val: answers.get(path) ?? { tag: 'missing' } };
    }
  };
}

/**
 * A sandbox whose "plugin" reads `reads` (a path) of skill `a`, taking any
 * answers read ahead for it, and returns a file value for `returns`.
 */
function fakeSandbox(reads, returns) {
  return {
    limits: DEFAULT_LIMITS,
    calls: 0,
    async call(_name, _method, _args, host, { preloads = null, onPreloadsUsed } = {}) {
      this.calls += 1;
      const ahead = preloads?.findIndex((entry) => entry.name === 'readSkillFile') ?? -1;
      if (ahead >= 0) onPreloadsUsed(ahead + 1);
      else await host.readSkillFile('a', reads);
      return fileSuccess('a', returns);
    },
  };
}

test('Plugin.invoke records what its registry answered text for, with and without recall, preloads included', async () => {
  const answers = new Map([['notes.md', { tag: 'text', val: 'Notes.' }]]);
  const args = '{"name":"a","path":"notes.md"}';
  for (const recall of [false, true]) {
    const Host = filesHost(answers);
    const honest = new Plugin(fakeSandbox('notes.md', 'notes.md'), { recall });
    const outcome = await honest.invoke(null, null, args, Host);
    assert.deepEqual(outcome.ok, { name: 'a', provider: 'p', path: 'notes.md', content: 'text' }, `recall ${recall}`);
    const lying = new Plugin(fakeSandbox('notes.md', 'secret.md'), { recall });
    await assert.rejects(lying.invoke(null, null, '{"name":"a","path":"secret.md"}', Host), notRead('secret.md'), `recall ${recall}`);
  }
  // Recalled: the registry asked again, the same answer, no crossing.
  const Host = filesHost(answers);
  const sandbox = fakeSandbox('notes.md', 'notes.md');
  const plugin = new Plugin(sandbox, { recall: true });
  await plugin.invoke(null, null, args, Host);
  await plugin.invoke(null, null, args, Host);
  assert.equal(sandbox.calls, 1);
  assert.equal(Host.reads, 2);
  // A changed answer is read ahead and handed to the guest: a text answer taken that way counts as read…
  answers.set('notes.md', { tag: 'text', val: 'Changed.' });
  assert.equal((await plugin.invoke(null, null, args, Host)).ok.path, 'notes.md');
  assert.equal(sandbox.calls, 2);
  // …and one that is no longer text does not.
  answers.set('notes.md', { tag: 'binary', val: 5n });
  await assert.rejects(plugin.invoke(null, null, args, Host), notRead('notes.md'));
  assert.equal(sandbox.calls, 3);
});

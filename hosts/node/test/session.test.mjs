// The session log folds surface markers as DeepSeek Harness does and writes its JSONL shape.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { CallContext } from '../src/host-imports.mjs';
import { stringify } from '../src/json.mjs';
import { recordToolResult } from '../src/plugin.mjs';
import { SessionLog, SurfaceFold } from '../src/session.mjs';

const user = (text) => ({ content: [{ type: 'text', text }], source: { kind: 'user' }, role: 'user', id: `id-${text}` });

test('a replace is positional on an unsorted surface, with a seq-range fallback', () => {
  const surface = new SurfaceFold();
  for (const seq of [0n, 1n, 2n]) surface.apply(seq, 'append');
  surface.apply(3n, { op: 'replace', start: 0n, end: 0n });
  assert.deepEqual(surface.nodes, [3n, 1n, 2n]);
  surface.apply(4n, { op: 'replace', start: 3n, end: 2n });
  assert.deepEqual(surface.nodes, [4n]);
  surface.apply(5n, { op: 'replace', start: 9n, end: 20n });
  assert.deepEqual(surface.nodes, [4n, 5n]);
});

test('compaction hides the whole surface; the log is harness JSONL', () => {
  const log = new SessionLog('/w');
  log.appendUserMessages([[user('a'), 'append'], [user('b'), 'append']]);
  log.appendEvent('custom/event', { n: 1 });
  const summary = log.compact('Summary.');
  assert.equal(summary, 3n);
  assert.ok(!log.isVisible(0n) && log.isVisible(3n));
  const lines = log.toJsonl().trimEnd().split('\n');
  assert.match(lines[0], /^\{"type":"session","version":0,"id":"[0-9a-f-]{36}","createdAt":\d+,"cwd":"\/w"\}$/);
  assert.match(lines[4], /^\{"type":"user\/message","seq":3,"time":\d+,"data":\{.*\},"surfaceOp":\{"op":"replace","start":0,"end":1\},"sourceEventSeqs":\[0,1\]\}$/);
  assert.match(lines[3], /^\{"type":"custom\/event","seq":2,"time":\d+,"data":\{"n":1\}\}$/);
});

test('session keys are unique in the process', () => {
  assert.notEqual(new SessionLog(null).key, new SessionLog(null).key);
});

// Plugin-named tool results are user-role messages (host-runner/src/session/index.rs).
const toolResult = (callId, extra = {}) => ({
  message: {
    id: `m-${callId}`,
    role: 'user',
    source: { kind: 'tool', callId, ...extra },
    content: [{ type: 'tool-result', toolCallId: callId, isError: false, content: [{ type: 'text', text: 'r' }] }],
  },
});

test('a tool result whose source names the skill plugin is indexed as a user-role message, others are not', () => {
  const log = new SessionLog(null);
  let version = log.historyVersion;
  const ordinary = log.appendEvent('tool/result', toolResult('c'), 'append');
  assert.equal(log.historyVersion, version, 'an ordinary result leaves the history alone');
  assert.equal(log.userMessage(ordinary), undefined);
  for (const data of [{ message: { source: { kind: 'tool', plugin: 7 } } }, { message: 'x' }, {}, null, { message: null }]) {
    log.appendEvent('tool/result', data, 'append');
  }
  assert.equal(log.historyVersion, version);
  const loaded = { name: 'a', provider: 'local', bodyDigest: 'sha256:00' };
  const recorded = log.appendEvent('tool/result', toolResult('d', { plugin: 'dsh-tool-skill', loaded }), 'append');
  assert.ok(log.historyVersion > version);
  version = log.historyVersion;
  assert.ok(log.isVisible(recorded));
  const message = log.userMessage(recorded);
  assert.equal(message.source.loaded, loaded);
  assert.equal(message.content[0].type, 'tool-result');
  assert.deepEqual(log.userMessagesOfKind('tool').map((entry) => entry.seq), [recorded]);
  // Another plugin's result, or one without a content list, is not indexed
  // (as a file-backed log re-reading the line would not index it).
  const other = log.appendEvent('tool/result', toolResult('e', { plugin: 'other-plugin' }), 'append');
  const bare = log.appendEvent('tool/result', { message: { source: { kind: 'tool', plugin: 'dsh-tool-skill' } } }, null);
  assert.equal(log.historyVersion, version);
  assert.equal(log.userMessage(other), undefined);
  assert.equal(log.userMessage(bare), undefined);
  // The plugin lists and reads it back like any user message.
  const host = new CallContext({ session: log });
  const page = host.listUserMessages([{ kind: 'tool', plugin: 'dsh-tool-skill' }], undefined, 10);
  assert.deepEqual(page, { refs: [{ seq: recorded, visible: true }], next: undefined });
  assert.deepEqual(host.listUserMessages([{ kind: 'tool' }], undefined, 10).refs.map((ref) => ref.seq), [recorded]);
  const read = host.getUserMessage(recorded);
  assert.equal(
    read.source,
    '{"callId":"d","kind":"tool","loaded":{"bodyDigest":"sha256:00","name":"a","provider":"local"},"plugin":"dsh-tool-skill"}',
  );
  assert.equal(read.content[0].tag, 'other');
  assert.equal(
    read.content[0].val,
    '{"content":[{"text":"r","type":"text"}],"isError":false,"toolCallId":"d","type":"tool-result"}',
  );
  assert.equal(host.getUserMessage(ordinary), undefined);
});

test('a recorded skill call lands in the session as the harness writes it', () => {
  const log = new SessionLog(null);
  const version = log.historyVersion;
  const seq = recordToolResult(log, { ok: {}, text: 'Loaded.', loaded: { name: 'a', provider: 'p', bodyDigest: null } });
  assert.ok(log.historyVersion > version);
  assert.equal(stringify(log.userMessage(seq).source.loaded), '{"name":"a","provider":"p"}');
  const error = recordToolResult(log, { error: 'Error: no' });
  assert.equal(log.userMessage(error), undefined);
  const line = log.toJsonl().trimEnd().split('\n')[2];
  assert.match(line, /^\{"type":"tool\/result","seq":1,"time":\d+,"data":\{"message":\{.*"isError":true.*\}\},"surfaceOp":"append"\}$/);
});

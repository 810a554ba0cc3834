// The session log folds surface markers as DeepSeek Harness does and writes its JSONL shape.

import assert from 'node:assert/strict';
import { test } from 'node:test';

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

// Checks the re-implementations against what their sources expect, so a
// change here that drifts from a peer's rule stops the run. Codex: the
// expectations of its own tests in codex-rs/core-skills/src/render.rs
// (equal cuts, unused share handed on, cut characters counted). amplifier:
// the tiers of hooks.py (summary pass stops at the first that does not fit;
// the index floor is kept past the budget). Claude Code: the skip-and-continue
// grant and the names-only listing past the budget (anthropics/claude-code #81081).

import assert from 'node:assert/strict';
import { codexRenderLines, amplifier, claudeCode } from './peers.mjs';

export function selfCheck() {
  const path = (s) => `/tmp/${s.name}/SKILL.md`;
  const min = (s) => `- ${s.name}: (file: ${path(s)})\n`.length;
  const codexLines = (skills, extra) =>
    codexRenderLines(skills, path, 'characters', skills.reduce((n, s) => n + min(s), 0) + extra);

  let r = codexLines([{ name: 'alpha-skill', description: 'abcdef' }, { name: 'beta-skill', description: 'uvwxyz' }], 6);
  assert.deepEqual(r.kept.map((k) => k.d), ['ab', 'uv']);
  assert.equal(r.cutChars, 8);
  r = codexLines([{ name: 'long-skill', description: 'abcdefghi' }, { name: 'short-skill', description: 'x' }], 11);
  assert.deepEqual(r.kept.map((k) => k.d), ['abcdefgh', 'x']);
  r = codexLines([{ name: 'empty-skill', description: '' }, { name: 'long-skill', description: 'a'.repeat(250) }], 49);
  assert.equal(r.cutChars, 202);

  const three = [
    { name: 'a', description: 'First one. Second sentence here.' },
    { name: 'b', description: 'B does things. More.' },
    { name: 'c', description: 'C. D.' },
  ];
  const amp = amplifier(three, { tokens: 20 });
  assert.deepEqual(amp.entries.map((e) => e.tier ?? e.shown), ['summary', 'name', 'name']);
  assert.deepEqual(amplifier(three, { tokens: 1 }).entries.map((e) => e.shown), ['name', 'name', 'name']);

  const cc = claudeCode(three, { chars: 40 });
  assert.deepEqual(cc.entries.map((e) => e.shown), ['name', 'text', 'text']);
  const tight = claudeCode(three, { chars: 5 });
  assert.deepEqual(tight.entries.map((e) => e.shown), ['name', 'name', 'name']);
  assert.ok(tight.budgeted.used > 5);
}

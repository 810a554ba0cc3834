#!/usr/bin/env node
// Catalog coverage against the peers (issue 29, item 6): for 50, 100, 500 and
// 1,000 skills, at 8,000 characters and at 2 % of a 200k-token context, how
// many skills each rule shows by name, with at least their whole first
// sentence, whole, or not at all, and the bytes. Our rule is the real plugin
// (skill-host); Claude Code's, Codex's and amplifier's are re-implemented in
// lib/peers.mjs from their sources. See README.md.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';

import { stageFixtures, stageSynthetic } from './lib/corpus.mjs';
import { claudeCode, codex, amplifier, firstSentence } from './lib/peers.mjs';
import { hostEnv, readSkills, ours } from './lib/ours.mjs';
import { selfCheck } from './lib/selfcheck.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
if (args.includes('--help')) {
  console.log('node bench/coverage/coverage.mjs [--bin PATH] [--sizes 50,100,500,1000] [--seed N] [--config JSON] [--json FILE] [--keep]');
  process.exit(0);
}
const bin = resolve(opt('bin', join(repo, 'target/release/skill-host')));
const sizes = opt('sizes', '50,100,500,1000').split(',').map(Number);
const seed = Number(opt('seed', '29'));
// Extra plugin configuration merged under catalogBudget (for a rule that needs a key to be switched on).
const extraConfig = JSON.parse(opt('config', '{}'));
const jsonOut = opt('json', null);
const keep = args.includes('--keep');
if (!existsSync(bin)) {
  console.error(`no skill-host at ${bin}: cargo build --release -p skill-host (or --bin PATH)`);
  process.exit(2);
}

selfCheck();

const CHARS_PER_TOKEN = 4;
const BUDGETS = [
  // Claude Code's default at 200k (1 %), and Codex's when the window is unknown.
  { label: '8,000 chars', chars: 8000, codex: { chars: 8000 } },
  // Codex's default at 200k (2 %, in tokens); Claude Code with skillListingBudgetFraction 0.02.
  { label: '2 % of 200k tok', chars: 2 * 200000 / 100 * CHARS_PER_TOKEN, codex: { tokens: 2 * 200000 / 100 } },
];
for (const b of BUDGETS) b.tokens = b.chars / CHARS_PER_TOKEN;

const normalise = (s) => s.split(/\s+/).filter(Boolean).join(' ');
const pct = (n, d) => `${(100 * n / d).toFixed(n === d || n === 0 ? 0 : 1)} %`;

function measure(result, skills) {
  const byName = new Map(skills.map((s) => [s.name, s.description]));
  let names = 0, first = 0, whole = 0, hidden = 0;
  for (const e of result.entries) {
    const d = byName.get(e.name);
    if (e.shown === 'hidden') { hidden++; continue; }
    names++;
    if (e.shown !== 'text') continue;
    const t = normalise(e.text);
    if (t.startsWith(firstSentence(d))) first++;
    if (t === d) whole++;
  }
  return { total: result.entries.length, names, first, whole, hidden, bytes: result.bytes };
}

const tmp = mkdtempSync(join(tmpdir(), 'skill-coverage-'));
const env = hostEnv(tmp);
const rows = [];
try {
  for (const size of sizes) {
    const root = join(tmp, `skills-${size}`);
    // Every fixture skill, then synthetic ones up to `size` model-invocable skills
    // (a fixture skill with disable-model-invocation is in no rule's catalog).
    const fixtureNames = stageFixtures(repo, root);
    const fixtures = readSkills(bin, root, tmp, env).length;
    const staged = { fixtures, synthetic: stageSynthetic(root, Math.max(0, size - fixtures), seed, fixtureNames) };
    const skills = readSkills(bin, root, tmp, env).map((s) => ({ name: s.name, description: normalise(s.description) }));
    if (skills.length !== size) throw new Error(`${size} requested, ${skills.length} model-invocable skills read`);
    const descChars = skills.reduce((n, s) => n + [...s.description].length, 0);
    for (const budget of BUDGETS) {
      const results = {
        ours: ours(bin, root, tmp, env, { ...extraConfig, catalogBudget: budget.chars }, skills),
        'Claude Code': claudeCode(skills, budget),
        Codex: codex(skills, budget.codex),
        amplifier: amplifier(skills, budget),
      };
      const measured = Object.fromEntries(Object.entries(results).map(([k, r]) => [k, measure(r, skills)]));
      // Do the names fit? Every skill as a bare name line of our catalog, `- \`name\``.
      const namesFloor = skills.reduce((n, s) => n + [...`- \`${s.name}\`\n`].length, 0);
      const peersBestFirst = Math.max(...['Claude Code', 'Codex', 'amplifier'].map((k) => measured[k].first));
      rows.push({
        size, staged, skills: skills.length, descChars, budget: budget.label, budgetChars: budget.chars,
        namesFloor, namesFit: namesFloor <= budget.chars,
        goalHidden: !(namesFloor <= budget.chars) || measured.ours.hidden === 0,
        goalSummary: measured.ours.first > peersBestFirst,
        measured,
        ours: { messageChars: results.ours.messageChars, messageBytes: results.ours.messageBytes, entryChars: results.ours.budgeted.used, coverage: results.ours.coverage },
        codexAliases: results.Codex.budgeted.aliases,
        over: Object.fromEntries(Object.entries(results).map(([k, r]) => [k, r.budgeted.used > r.budgeted.limit])),
      });
    }
  }
} finally {
  if (keep) console.error(`kept ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
}

const out = [];
out.push(`Budgets: 8,000 characters; 2 % of 200k tokens = 4,000 tokens = 16,000 characters at ${CHARS_PER_TOKEN} characters a token. ours: catalogBudget = the characters (it bounds the entry lines). Claude Code: the characters. Codex: Characters(8000), and Tokens(4000) as at a 200k window (ceil(bytes / 4) a line). amplifier: visibility_token_budget = characters / 4 (len // 4).`);
out.push('');
out.push('| skills | budget | rule | names visible | ≥ whole first sentence | whole description | hidden | bytes |');
out.push('|---:|---|---|---:|---:|---:|---:|---:|');
for (const r of rows) {
  for (const [rule, m] of Object.entries(r.measured)) {
    const flags = [];
    if (r.over[rule]) flags.push('over budget');
    if (rule === 'Codex' && r.codexAliases) flags.push('aliased paths');
    const bytes = `${m.bytes.toLocaleString('en-US')}${flags.length ? ` (${flags.join(', ')})` : ''}`;
    out.push(`| ${r.size.toLocaleString('en-US')} | ${r.budget} | ${rule} | ${m.names} (${pct(m.names, m.total)}) | ${m.first} (${pct(m.first, m.total)}) | ${m.whole} (${pct(m.whole, m.total)}) | ${m.hidden} (${pct(m.hidden, m.total)}) | ${bytes} |`);
  }
}
out.push('');
out.push('Our whole catalog message (the entry lines plus the fixed text and the coverage line):');
out.push('');
out.push('| skills | budget | entry lines (chars) | message (chars) | fixed text + coverage line | coverage line |');
out.push('|---:|---|---:|---:|---:|---|');
for (const r of rows) {
  out.push(`| ${r.size.toLocaleString('en-US')} | ${r.budget} | ${r.ours.entryChars.toLocaleString('en-US')} | ${r.ours.messageChars.toLocaleString('en-US')} | ${(r.ours.messageChars - r.ours.entryChars).toLocaleString('en-US')} | ${r.ours.coverage} |`);
}
out.push('');
out.push('Goal (issue 29, item 6): at every row, no skill hidden while the names fit, and more skills with at least a whole first sentence than any peer.');
out.push('');
out.push('| skills | budget | names fit (bare name lines, chars) | none hidden while they fit | ours ≥ first sentence | best peer | more than every peer |');
out.push('|---:|---|---|---|---:|---:|---|');
for (const r of rows) {
  const best = Math.max(...['Claude Code', 'Codex', 'amplifier'].map((k) => r.measured[k].first));
  const who = ['Claude Code', 'Codex', 'amplifier'].filter((k) => r.measured[k].first === best).join(', ');
  out.push(`| ${r.size.toLocaleString('en-US')} | ${r.budget} | ${r.namesFit ? 'yes' : 'no'} (${r.namesFloor.toLocaleString('en-US')}) | ${r.goalHidden ? 'yes' : '**no**'} | ${r.measured.ours.first} | ${best} (${who}) | ${r.goalSummary ? 'yes' : r.measured.ours.first === best ? '**no** (tie)' : '**no**'} |`);
}
const corpus = rows.filter((r, i) => i % BUDGETS.length === 0)
  .map((r) => `${r.size}: ${r.staged.fixtures} fixture + ${r.staged.synthetic} synthetic, ${Math.round(r.descChars / r.skills)} description chars on average`);
out.push('');
out.push(`Corpora (seed ${seed}): ${corpus.join('; ')}.`);
console.log(out.join('\n'));
if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify({ seed, charsPerToken: CHARS_PER_TOKEN, rows }, null, 1)}\n`);

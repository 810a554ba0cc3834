// Our rule is not re-implemented: the real plugin runs, through the
// skill-host binary, on a fresh session with `catalogBudget` set. `step`
// gives the catalog message the model would get; `catalog --json` gives the
// counts the plugin reports (entry-line characters, message characters,
// each skill's status), which the bench cross-checks against the message.

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function hostEnv(tmp) {
  const env = { ...process.env };
  env.DSH_HOME = join(tmp, 'home/dsh');
  env.DSH_AGENTS_HOME = join(tmp, 'home/agents');
  env.SKILL_HOST_CACHE_DIR = join(tmp, 'cache');
  for (const dir of [env.DSH_HOME, env.DSH_AGENTS_HOME, join(tmp, 'empty')]) mkdirSync(dir, { recursive: true });
  return env;
}

function run(bin, args, env) {
  return execFileSync(bin, args, { env, encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
}

// The skills as the host reads them (name, raw description), model-invocable only.
export function readSkills(bin, root, tmp, env) {
  const out = JSON.parse(run(bin, ['--skills-dir', root, 'skills', '--cwd', join(tmp, 'empty'), '--json'], env));
  return out.skills
    .filter((s) => s.invocation?.modelInvocable !== false)
    .map((s) => ({ name: s.name, description: s.description ?? '' }));
}

const unescape = (s) => s.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');

// Runs the plugin with `config` and returns what the peers return, plus the plugin's own report.
export function ours(bin, root, tmp, env, config, normalised) {
  const cfgFile = join(tmp, 'config.json');
  writeFileSync(cfgFile, JSON.stringify(config));
  const session = join(tmp, `session-${process.hrtime.bigint()}.jsonl`);
  const common = ['--skills-dir', root, '--config', cfgFile];
  const step = JSON.parse(run(bin, [...common, 'step', '--session', session, '--cwd', join(tmp, 'empty'), '--json'], env));
  const report = JSON.parse(run(bin, [...common, 'catalog', '--cwd', join(tmp, 'empty'), '--json'], env));
  if (step.messages.length !== 1) throw new Error(`expected one catalog message, got ${step.messages.length}`);
  const message = step.messages[0].content.map((part) => part.text ?? '').join('');
  const open = message.indexOf('<available_skills>\n');
  const close = message.indexOf('\n</available_skills>');
  if (open < 0 || close < 0) throw new Error('no <available_skills> block in the catalog message');
  const inside = message.slice(open + '<available_skills>\n'.length, close + 1);
  const listed = new Map();
  let entryText = '';
  let coverage = '';
  const other = [];
  for (const line of inside.split('\n').slice(0, -1)) {
    // An entry: `- \`name\`: description`, or a name alone (`- \`name\``).
    const m = /^- `([a-z0-9-]+)`(?:: (.*))?$/.exec(line);
    if (m) {
      listed.set(m[1], unescape(m[2] ?? ''));
      entryText += `${line}\n`;
    } else if (line.startsWith('Catalog coverage:')) {
      coverage = line;
    } else {
      other.push(line);
    }
  }
  if (other.length) console.error(`note: ${other.length} catalog line(s) that are neither entries nor the coverage line; a skill named there in backticks counts as a visible name`);
  const mentioned = (name) => other.some((line) => line.includes(`\`${name}\``));
  const status = new Map(report.skills.map((s) => [s.name, s.status]));
  const entries = [...normalised].sort((a, b) => (a.name < b.name ? -1 : 1)).map((s) => {
    if (!listed.has(s.name)) {
      if (mentioned(s.name)) return { name: s.name, shown: 'name', text: '' };
      if (status.get(s.name) !== 'left-out') console.error(`note: ${s.name} is not in the message, but catalog --json says ${status.get(s.name)}`);
      return { name: s.name, shown: 'hidden', text: '' };
    }
    let text = listed.get(s.name);
    if (text !== s.description) {
      // Cut (by the budget or the 500-character default cap): take off the marker.
      if (text.endsWith('...')) text = text.slice(0, -3);
      else if (text.endsWith('\u2026')) text = text.slice(0, -1);
    }
    return { name: s.name, shown: text ? 'text' : 'name', text };
  });
  const entryChars = [...entryText].length;
  if (entryChars !== report.entryCharacters) {
    console.error(`note: the entry lines have ${entryChars} characters, catalog --json says ${report.entryCharacters}`);
  }
  return {
    entries,
    bytes: Buffer.byteLength(entryText, 'utf8'),
    budgeted: { used: report.entryCharacters, limit: config.catalogBudget ?? null, unit: 'characters' },
    messageChars: report.messageCharacters,
    messageBytes: Buffer.byteLength(message, 'utf8'),
    coverage,
  };
}

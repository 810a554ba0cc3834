#!/usr/bin/env node
// How long the Node host takes against `skill-host`, measured the same way
// for both: whole `replay` processes on the same component and scenarios.
//
//   node hosts/node/bench.mjs [--skill-host BIN] [--runs N]
//
// Prints one JSON document:
// - `scenarios`: the median wall time of one `replay` process per scenario
//   under tests/scenarios/, in each host;
// - `preStep`: the cost of one more pre-step, as (T(201 pre-steps) − T(1))
//   / 200 of the same process-level medians, for a steady session (the
//   catalog is current: the usual step) and a changing one (the providers are
//   replaced before every step: a new revision, a full snapshot, a new
//   catalog published);
// - `nodeInProcess`: the same two loops timed inside the Node host around
//   each `preStep` call (no process start, no transpile cache lookup).
// Not a test: nothing here fails on a number.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Scenario } from './src/scenario.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPOSITORY = path.resolve(HERE, '..', '..');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : args[at + 1];
};
const skillHost = option('--skill-host', path.join(REPOSITORY, 'target', 'debug', 'skill-host'));
const runs = Number(option('--runs', '5'));

const work = mkdtempSync(path.join(tmpdir(), 'skill-host-bench-'));
const plugin = path.join(work, 'plugin.wasm');
spawnSync(skillHost, ['component', '--output', plugin], { stdio: 'inherit' });

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Median wall milliseconds of `command args` over `runs` runs (after one warm-up). */
function timed(command, commandArgs) {
  const times = [];
  for (let run = 0; run <= runs; run++) {
    const start = process.hrtime.bigint();
    const result = spawnSync(command, commandArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
    const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    if (result.status !== 0) throw new Error(`${command} ${commandArgs.join(' ')}: ${result.stderr}`);
    if (run > 0) times.push(elapsed);
  }
  return median(times);
}

const hosts = {
  'skill-host': (scenario) => timed(skillHost, ['--plugin', plugin, 'replay', scenario]),
  node: (scenario) => timed(process.execPath, [path.join(HERE, 'replay.mjs'), '--plugin', plugin, scenario]),
};

const round = (ms) => Math.round(ms * 1000) / 1000;

const scenarioDir = path.join(REPOSITORY, 'tests', 'scenarios');
const scenarios = {};
for (const name of readdirSync(scenarioDir).sort()) {
  if (!name.endsWith('.json') || name.endsWith('.expected.json')) continue;
  const file = path.join(scenarioDir, name);
  scenarios[name] = Object.fromEntries(Object.entries(hosts).map(([host, run]) => [host, round(run(file))]));
}

const providers = (generation) => [
  {
    name: 'memory',
    skills: Array.from({ length: 20 }, (_, index) => ({
      name: `skill-${index}`,
      description: `Skill number ${index}, generation ${generation}: does one thing well.`,
      content: 'Body.',
    })),
  },
];

/** A scenario of `count` pre-steps; `changing` replaces the providers before each. */
function loop(count, changing) {
  const steps = [];
  for (let step = 0; step < count; step++) {
    if (changing) steps.push({ op: 'set-providers', providers: providers(step) });
    steps.push({ op: 'pre-step', messages: [`message ${step}`] });
  }
  return { providers: providers(-1), steps };
}

const EXTRA = 200;
const preStep = {};
const nodeInProcess = {};
const component = readFileSync(plugin);
for (const shape of ['steady', 'changing']) {
  const changing = shape === 'changing';
  const one = path.join(work, `${shape}-1.json`);
  const many = path.join(work, `${shape}-${EXTRA + 1}.json`);
  writeFileSync(one, JSON.stringify(loop(1, changing)));
  writeFileSync(many, JSON.stringify(loop(EXTRA + 1, changing)));
  preStep[shape] = Object.fromEntries(
    Object.entries(hosts).map(([host, run]) => [host, round((run(many) - run(one)) / EXTRA)]),
  );
  // In process: the replay's own pre-step calls, timed one by one.
  const scenario = Scenario.parse(JSON.stringify(loop(EXTRA + 1, changing)));
  const times = [];
  await scenario.replay(component, undefined, {
    onCall: (name, ms) => name === 'pre-step' && times.push(ms),
  });
  nodeInProcess[shape] = { medianMs: round(median(times.slice(1))), firstMs: round(times[0]) };
}

rmSync(work, { recursive: true, force: true });
process.stdout.write(
  `${JSON.stringify({ skillHost, runs, node: process.version, scenarios, preStep, nodeInProcess }, null, 1)}\n`,
);

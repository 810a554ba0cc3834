#!/usr/bin/env node
// `node hosts/node/replay.mjs [--plugin FILE.wasm] [--config FILE]
// [--timeout-ms N] [--memory-mb N] [--max-added-messages N]
// [--max-text-bytes N] [--max-output-bytes N] SCENARIO.json`: runs a scenario (docs/spec.md §7)
// in this Node.js host and prints the JSON document `skill-host replay`
// prints. Without `--plugin`, the component is the one built into
// `skill-host` (`$SKILL_HOST`, else the newer of the workspace's target/debug and
// target/release build, else `skill-host` on PATH), written out with
// `skill-host component --output`.
//
// Exit codes as skill-host's: 0 success, 2 a usage error, 3 a failure of the
// host (an unreadable or malformed scenario, a refused configuration, a trap,
// a limit), printed as one `error: …` line.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { embeddedComponent } from './src/component.mjs';
import { ScenarioError } from './src/errors.mjs';
import { pretty } from './src/json.mjs';
import { DEFAULT_LIMITS } from './src/sandbox.mjs';
import { Scenario } from './src/scenario.mjs';

const USAGE =
  'usage: node replay.mjs [--plugin FILE.wasm] [--config FILE] [--timeout-ms N] [--memory-mb N] [--max-added-messages N] [--max-text-bytes N] [--max-output-bytes N] SCENARIO.json';
const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// A tool of the repository: its transpiled components stay in the
// git-ignored hosts/node/.cache, as they always did, unless
// $DSH_TOOL_SKILL_CACHE names another folder.
const CACHE_DIR = process.env.DSH_TOOL_SKILL_CACHE || path.join(path.dirname(fileURLToPath(import.meta.url)), '.cache');

class UsageError extends Error {}

function options(args) {
  const found = {
    plugin: null,
    config: null,
    timeoutMs: DEFAULT_LIMITS.timeoutMs,
    memoryMb: 64,
    maxAddedMessages: DEFAULT_LIMITS.maxAddedMessages,
    maxTextBytes: DEFAULT_LIMITS.maxTextBytes,
    maxOutputBytes: DEFAULT_LIMITS.maxOutputBytes,
    scenario: null,
  };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    const value = () => {
      const next = args[++index];
      if (next === undefined) throw new UsageError(`${arg} needs a value`);
      return next;
    };
    const count = () => {
      const text = value();
      if (!/^[0-9]+$/.test(text)) throw new UsageError(`${arg} needs a whole number, not ${JSON.stringify(text)}`);
      return Number(text);
    };
    if (arg === '--plugin') found.plugin = value();
    else if (arg === '--config') found.config = value();
    else if (arg === '--timeout-ms') found.timeoutMs = count();
    else if (arg === '--memory-mb') found.memoryMb = count();
    else if (arg === '--max-added-messages') found.maxAddedMessages = count();
    else if (arg === '--max-text-bytes') found.maxTextBytes = count();
    else if (arg === '--max-output-bytes') found.maxOutputBytes = count();
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`);
    else if (found.scenario === null) found.scenario = arg;
    else throw new UsageError(`unexpected argument ${arg}`);
  }
  if (found.scenario === null) throw new UsageError('a SCENARIO.json is required');
  return found;
}

function embedded() {
  try {
    return embeddedComponent(REPOSITORY);
  } catch (error) {
    throw new Error(`no --plugin given, and ${error.message}; or pass --plugin FILE.wasm`);
  }
}

function read(file, what) {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new Error(`cannot read ${what} ${file}: ${error.message}`);
  }
}

async function main() {
  let chosen;
  try {
    chosen = options(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`error: ${error.message}\n${USAGE}\n`);
    return 2;
  }
  try {
    let scenario;
    try {
      scenario = Scenario.parse(read(chosen.scenario, 'scenario').toString('utf8'));
    } catch (error) {
      if (!(error instanceof ScenarioError)) throw error;
      throw new Error(`scenario ${chosen.scenario}: ${error.message}`);
    }
    // The scenario's own configuration wins over --config.
    if (scenario.config === null && chosen.config !== null) scenario.config = read(chosen.config, 'configuration').toString('utf8');
    const component = chosen.plugin === null ? embedded() : read(chosen.plugin, 'plugin');
    const limits = {
      timeoutMs: chosen.timeoutMs,
      memoryBytes: chosen.memoryMb * 1024 * 1024,
      maxAddedMessages: chosen.maxAddedMessages,
      maxTextBytes: chosen.maxTextBytes,
      maxOutputBytes: chosen.maxOutputBytes,
    };
    const output = await scenario.replay(component, limits, { cacheDir: CACHE_DIR });
    process.stdout.write(`${pretty(output)}\n`);
    return 0;
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    process.stderr.write(`error: ${text.replace(/\n/g, ' ')}\n`);
    return 3;
  }
}

process.exitCode = await main();

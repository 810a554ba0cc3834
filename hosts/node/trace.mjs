#!/usr/bin/env node
// `node hosts/node/trace.mjs TRACE.json [--plugin FILE.wasm]`: replays a
// trace that `skill-host replay SCENARIO --trace TRACE.json` wrote
// (docs/spec.md §7.2) in this Node.js host: the component in this host's
// sandbox, under the trace's configuration and limits, each import answered
// from the trace, and the results checked by this host's own validation.
// Without `--plugin`, the component is the one built into `skill-host`
// (`$SKILL_HOST`, else the newer of the workspace's target/debug and
// target/release build, else `skill-host` on PATH).
//
// Exit codes: 0 when this host agrees with the trace (nothing is printed);
// 1 when it does not, with one line per mismatch on stdout; 2 a usage
// error or a file that is not a trace; 3 a component this host refuses to
// load, or another failure of the host, as one `error: …` line (a refused
// component in skill-host's words).

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { embeddedComponent } from './src/component.mjs';
import { replayTrace, TraceFormatError } from './src/trace-replay.mjs';

const USAGE = 'usage: node trace.mjs TRACE.json [--plugin FILE.wasm]';
const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
// A tool of the repository: its transpiled components stay in the
// git-ignored hosts/node/.cache unless $DSH_TOOL_SKILL_CACHE names another folder.
const CACHE_DIR = process.env.DSH_TOOL_SKILL_CACHE || path.join(path.dirname(fileURLToPath(import.meta.url)), '.cache');

class UsageError extends Error {}

function options(args) {
  const found = { plugin: null, trace: null };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === '--plugin') {
      found.plugin = args[++index];
      if (found.plugin === undefined) throw new UsageError('--plugin needs a value');
    } else if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`);
    else if (found.trace === null) found.trace = arg;
    else throw new UsageError(`unexpected argument ${arg}`);
  }
  if (found.trace === null) throw new UsageError('a TRACE.json is required');
  return found;
}

function read(file, what) {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${file}: ${error.message}`);
  }
}

async function main() {
  let trace;
  let component;
  try {
    const chosen = options(process.argv.slice(2));
    trace = read(chosen.trace, 'trace').toString('utf8');
    if (chosen.plugin !== null) component = read(chosen.plugin, 'plugin');
    else {
      try {
        component = embeddedComponent(REPOSITORY);
      } catch (error) {
        throw new UsageError(`no --plugin given, and ${error.message}; or pass --plugin FILE.wasm`);
      }
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`error: ${error.message}\n${USAGE}\n`);
    return 2;
  }
  let mismatches;
  try {
    mismatches = await replayTrace(component, trace, { cacheDir: CACHE_DIR });
  } catch (error) {
    if (error instanceof TraceFormatError) {
      process.stderr.write(`error: not a trace: ${error.message}\n`);
      return 2;
    }
    const text = error instanceof Error ? error.message : String(error);
    process.stderr.write(`error: ${text.replace(/\n/g, ' ')}\n`);
    return 3;
  }
  for (const line of mismatches) process.stdout.write(`${line.replace(/\n/g, '\\n')}\n`);
  return mismatches.length === 0 ? 0 : 1;
}

process.exitCode = await main();

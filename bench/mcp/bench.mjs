#!/usr/bin/env node
// `skill-host mcp` against the TypeScript SDK's own skills server
// (ts-server.mjs), serving the same skill folders over stdio, in one run.
// Not part of the test suite; see README.md.
//
//     node bench.mjs [--bin PATH] [--runs 20] [--sizes workspace,anthropic,dsh,1000]
//                    [--servers skill-host,skill-host-no-watch,ts,ts-cache]
//                    [--measures tools,skills,read,read-raw] [--client raw|sdk] [--node PATH] [--keep]
//
// Measures, every run a new server process:
//   tools   spawn → initialize → notifications/initialized → first tools/list answer
//   skills  spawn → initialize → notifications/initialized → skills/list, every page
//   read    after connecting: SkillsClient.list(), then SkillsClient.read() of every
//           file of every listed skill (size and digest checked), one after another
//   read-raw  after a complete skills/list (not timed): resources/read of every listed
//           file, up to 16 requests in flight, each answer's size and sha256 digest
//           checked against the listing (node:crypto), to the last verified answer
// `tools` and `skills` use a minimal newline-delimited JSON-RPC driver (`--client raw`,
// the default) or the SDK's Client over its StdioClientTransport (`--client sdk`);
// `read` always uses the SDK's Client and SkillsClient, `read-raw` always the minimal
// driver. The same client code drives every server. Output: one JSON line per
// (server, size, measure), then a table.

import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { execFileSync } from 'node:child_process';

import { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { IN_FLIGHT, rawConnect, rawReadRun, rawRun } from './lib/raw.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../..');

// ---------------------------------------------------------------- options

function parseArgs(argv) {
    const options = {
        bin: join(ROOT, 'target/release/skill-host'),
        runs: 20,
        sizes: ['workspace', 'anthropic', 'dsh', '1000'],
        servers: ['skill-host', 'skill-host-no-watch', 'ts', 'ts-cache'],
        measures: ['tools', 'skills', 'read', 'read-raw'],
        client: 'raw',
        node: process.execPath,
        keep: false
    };
    for (let i = 0; i < argv.length; i++) {
        const key = argv[i];
        const value = () => {
            if (i + 1 >= argv.length) throw new Error(`${key} needs a value`);
            return argv[++i];
        };
        if (key === '--bin') options.bin = resolve(value());
        else if (key === '--runs') options.runs = Number(value());
        else if (key === '--sizes') options.sizes = value().split(',');
        else if (key === '--servers') options.servers = value().split(',');
        else if (key === '--measures') options.measures = value().split(',');
        else if (key === '--client') options.client = value();
        else if (key === '--node') options.node = resolve(value());
        else if (key === '--keep') options.keep = true;
        else if (key === '--help' || key === '-h') {
            console.log(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 23).join('\n'));
            process.exit(0);
        } else throw new Error(`unknown option ${key}`);
    }
    if (!['raw', 'sdk'].includes(options.client)) throw new Error('--client is raw or sdk');
    for (const measure of options.measures) {
        if (!MEASURE_NAMES[measure]) throw new Error(`unknown measure ${measure}; one of ${Object.keys(MEASURE_NAMES).join(', ')}`);
    }
    return options;
}

// ---------------------------------------------------------------- skill folders

/** examples/workspace's five skills as one folder of skill folders: the flat
 * `commit-message.md` becomes `commit-message/SKILL.md` (what skill-host serves
 * for a flat file: that file alone, as SKILL.md). */
function stageWorkspace(dir) {
    const workspace = join(ROOT, 'examples/workspace');
    for (const root of ['.dsh/skills', '.agents/skills']) {
        for (const entry of readdirSync(join(workspace, root), { withFileTypes: true })) {
            const from = join(workspace, root, entry.name);
            if (entry.isDirectory()) cpSync(from, join(dir, entry.name), { recursive: true });
            else if (entry.name.endsWith('.md')) {
                mkdirSync(join(dir, entry.name.slice(0, -3)));
                cpSync(from, join(dir, entry.name.slice(0, -3), 'SKILL.md'));
            }
        }
    }
}

const TOPICS = ['billing', 'search', 'auth', 'storage', 'metrics', 'deploys', 'queues', 'email', 'reports', 'imports'];
const VERBS = ['review', 'migrate', 'debug', 'document', 'benchmark', 'release', 'audit', 'refactor'];

/** 1,000 skill folders, deterministic: SKILL.md (about 1.5 KB), references/guide.md
 * (about 0.8 KB), and for every other skill references/examples.md. */
function generateSkills(dir, count) {
    for (let i = 0; i < count; i++) {
        const name = `skill-${String(i).padStart(4, '0')}`;
        const topic = TOPICS[i % TOPICS.length];
        const verb = VERBS[(i * 7) % VERBS.length];
        const folder = join(dir, name);
        mkdirSync(join(folder, 'references'), { recursive: true });
        const description =
            `Use when asked to ${verb} the ${topic} service (generated skill ${i}); ` +
            `checks the ${topic} configuration, runs the ${verb} steps in order and reports what changed.`;
        const steps = Array.from(
            { length: 12 },
            (_, k) => `${k + 1}. Step ${k + 1} of the ${verb} for ${topic}: read the notes for part ${(i + k) % 17}, then act on them.`
        );
        writeFileSync(
            join(folder, 'SKILL.md'),
            `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${verb} ${topic} (${i})\n\n` +
                `Read [the guide](references/guide.md) first.\n\n${steps.join('\n')}\n\n` +
                `When done, summarise the result in two sentences.\n`
        );
        const guide = Array.from(
            { length: 8 },
            (_, k) => `- ${topic} rule ${k + 1}: keep change ${i * 8 + k} small and reversible, and note it in the log.`
        );
        writeFileSync(join(folder, 'references/guide.md'), `# Guide for ${name}\n\n${guide.join('\n')}\n`);
        if (i % 2 === 0) {
            writeFileSync(
                join(folder, 'references/examples.md'),
                `# Examples\n\n\`\`\`sh\n${verb}-${topic} --dry-run --id ${i}\n${verb}-${topic} --id ${i}\n\`\`\`\n`
            );
        }
    }
}

function prepare(options) {
    const tmp = mkdtempSync(join(tmpdir(), 'bench-mcp-'));
    for (const sub of ['home/dsh', 'home/agents', 'empty/.git', 'cache', 'node-cache', 'workspace', 'thousand']) {
        mkdirSync(join(tmp, sub), { recursive: true });
    }
    stageWorkspace(join(tmp, 'workspace'));
    generateSkills(join(tmp, 'thousand'), 1000);
    const all = {
        workspace: { label: 'examples/workspace', dir: join(tmp, 'workspace') },
        anthropic: { label: 'anthropic-skills', dir: join(ROOT, 'tests/fixtures/corpus/anthropic-skills') },
        dsh: { label: 'dsh-agents-skills', dir: join(ROOT, 'tests/fixtures/corpus/dsh-agents-skills') },
        1000: { label: '1000 generated', dir: join(tmp, 'thousand') }
    };
    const sizes = options.sizes.map(key => {
        if (!all[key]) throw new Error(`unknown size ${key}; one of ${Object.keys(all).join(', ')}`);
        return { key, ...all[key] };
    });
    return { tmp, sizes };
}

/** How each server is started for one skill folder. */
function serverCommand(server, size, tmp, options) {
    const env = { ...process.env };
    if (server.startsWith('skill-host')) {
        // Only the folder's skills: no user roots, a project of its own with nothing in it.
        env.DSH_HOME = join(tmp, 'home/dsh');
        env.DSH_AGENTS_HOME = join(tmp, 'home/agents');
        env.SKILL_HOST_CACHE_DIR = join(tmp, 'cache');
        const args = ['--skills-dir', size.dir, 'mcp', '--cwd', join(tmp, 'empty')];
        if (server === 'skill-host-no-watch') args.push('--no-watch');
        return { command: options.bin, args, env };
    }
    if (server === 'floor') return { command: options.node, args: [join(HERE, 'floor-server.mjs'), size.dir], env };
    if (server === 'ts-cache') env.NODE_COMPILE_CACHE = join(tmp, 'node-cache');
    else delete env.NODE_COMPILE_CACHE;
    return { command: options.node, args: [join(HERE, 'ts-server.mjs'), size.dir], env };
}

// ---------------------------------------------------------------- the SDK client

async function connectSdk(cmd) {
    const transport = new StdioClientTransport({ command: cmd.command, args: cmd.args, env: cmd.env, stderr: 'pipe' });
    let stderr = '';
    const client = new Client({ name: 'bench-mcp', version: '0.0.0' }, { listMaxPages: 0 });
    const connecting = client.connect(transport);
    transport.stderr?.on('data', chunk => (stderr += chunk));
    await connecting;
    return { client, stderr: () => stderr };
}

async function sdkStartRun(cmd, measure) {
    const t0 = performance.now();
    const { client, stderr } = await connectSdk(cmd);
    let ms;
    const names = [];
    let files = 0;
    let tools = 0;
    let invalid = [];
    if (measure === 'tools') {
        tools = (await client.listTools()).tools.length;
        ms = performance.now() - t0;
    } else {
        const listing = await new SkillsClient(client, { skipInvalid: true }).list();
        ms = performance.now() - t0;
        invalid = listing.invalid;
        for (const skill of listing.skills) {
            names.push(skill.frontmatter.name);
            files += skill.resources.length;
        }
    }
    await client.close();
    return { ms, names, files, tools, invalid, stderr: stderr() };
}

/** Connect (not timed), then list and read + verify every file (timed). */
async function readRun(cmd) {
    const { client, stderr } = await connectSdk(cmd);
    const skills = new SkillsClient(client, { skipInvalid: true });
    const t0 = performance.now();
    const listing = await skills.list();
    let files = 0;
    let bytes = 0;
    for (const skill of listing.skills) {
        for (const resource of skill.resources) {
            const file = await skills.read(skill, resource.uri);
            if (!file.verified) throw new Error(`${resource.uri} was not verified`);
            files++;
            bytes += file.bytes.length;
        }
    }
    const ms = performance.now() - t0;
    await client.close();
    return {
        ms,
        names: listing.skills.map(skill => skill.frontmatter.name),
        invalid: listing.invalid,
        files,
        bytes,
        stderr: stderr()
    };
}

function runOnce(cmd, measure, options) {
    if (measure === 'read') return readRun(cmd);
    if (measure === 'read-raw') return rawReadRun(cmd);
    return options.client === 'raw' ? rawRun(cmd, measure) : sdkStartRun(cmd, measure);
}

// ---------------------------------------------------------------- statistics, output

function stats(values) {
    const sorted = [...values].sort((a, b) => a - b);
    const rank = p => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
    const round = x => Math.round(x * 100) / 100;
    return { median_ms: round(rank(50)), p90_ms: round(rank(90)), min_ms: round(sorted[0]), max_ms: round(sorted.at(-1)) };
}

const MEASURE_NAMES = {
    tools: 'first-tools-list',
    skills: 'full-skills-list',
    read: 'read-verify-all',
    'read-raw': 'read-verify-all-pipelined'
};
const SERVER_NAMES = {
    'skill-host': 'skill-host mcp',
    'skill-host-no-watch': 'skill-host mcp --no-watch',
    ts: 'TS SDK server',
    floor: 'floor (answers prepared in advance)',
    'ts-cache': 'TS SDK server, NODE_COMPILE_CACHE'
};

function warningLines(stderr) {
    return stderr
        .split('\n')
        .filter(line => line.trim())
        .slice(0, 20);
}

// ---------------------------------------------------------------- main

async function main() {
    const options = parseArgs(process.argv.slice(2));
    // Fails early when the release binary is missing (and one of its servers is asked for).
    if (options.servers.some(server => server.startsWith('skill-host'))) statSync(options.bin);
    const commit = (() => {
        try {
            return execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
        } catch {
            return null;
        }
    })();
    const nodeVersion = execFileSync(options.node, ['--version'], { encoding: 'utf8' }).trim();
    const { tmp, sizes } = prepare(options);
    console.log(
        JSON.stringify({
            kind: 'setup',
            bin: options.bin,
            commit,
            node_driver: process.version,
            node_ts_server: nodeVersion,
            cpus: cpus().length,
            runs: options.runs,
            client: options.client,
            read_client: 'sdk',
            read_raw_in_flight: IN_FLIGHT,
            tmp
        })
    );
    const table = [];
    try {
        for (const size of sizes) {
            // The skill set each server serves, from an untimed first run (which also
            // fills skill-host's component cache and Node's compile cache).
            const sets = {};
            for (const server of options.servers) {
                const cmd = serverCommand(server, size, tmp, options);
                const listed = await rawRun(cmd, 'skills');
                sets[server] = listed;
                console.log(
                    JSON.stringify({
                        kind: 'skill-set',
                        server: SERVER_NAMES[server],
                        size: size.label,
                        skills: listed.names.length,
                        files: listed.files,
                        stderr: warningLines(listed.stderr)
                    })
                );
            }
            const reference = sets[options.servers[0]].names;
            for (const server of options.servers.slice(1)) {
                const names = sets[server].names;
                const onlyFirst = reference.filter(name => !names.includes(name));
                const onlyThis = names.filter(name => !reference.includes(name));
                if (onlyFirst.length || onlyThis.length || sets[server].files !== sets[options.servers[0]].files) {
                    console.log(
                        JSON.stringify({
                            kind: 'skill-set-difference',
                            size: size.label,
                            [`only_${options.servers[0]}`]: onlyFirst,
                            [`only_${server}`]: onlyThis,
                            files: { [options.servers[0]]: sets[options.servers[0]].files, [server]: sets[server].files }
                        })
                    );
                }
            }
            for (const measure of options.measures) {
                const times = Object.fromEntries(options.servers.map(server => [server, []]));
                const initTimes = Object.fromEntries(options.servers.map(server => [server, []]));
                const last = {};
                for (const server of options.servers) await runOnce(serverCommand(server, size, tmp, options), measure, options); // warm-up
                for (let run = 0; run < options.runs; run++) {
                    // Interleaved, and the order rotated, so drift hits every server alike.
                    const order = options.servers.map((_, k) => options.servers[(k + run) % options.servers.length]);
                    for (const server of order) {
                        const result = await runOnce(serverCommand(server, size, tmp, options), measure, options);
                        times[server].push(result.ms);
                        if (result.initMs !== undefined) initTimes[server].push(result.initMs);
                        last[server] = result;
                    }
                }
                for (const server of options.servers) {
                    const result = last[server];
                    const line = {
                        server: SERVER_NAMES[server],
                        size: size.label,
                        measure: MEASURE_NAMES[measure],
                        client: measure === 'read' ? 'sdk' : measure === 'read-raw' ? 'raw' : options.client,
                        skills: measure === 'tools' ? sets[server].names.length : result.names.length,
                        ...(measure === 'read' || measure === 'read-raw' ? { files: result.files, bytes: result.bytes } : {}),
                        ...(result.invalid?.length
                            ? { client_refused: result.invalid.map(entry => `${entry.uri ?? entry.index}: ${entry.reason}`) }
                            : {}),
                        ...(measure === 'skills' ? { files: result.files } : {}),
                        runs: options.runs,
                        ...stats(times[server]),
                        ...(initTimes[server].length ? { initialize_median_ms: stats(initTimes[server]).median_ms } : {})
                    };
                    console.log(JSON.stringify(line));
                    table.push({ ...line, server, measure });
                }
            }
        }
    } finally {
        if (!options.keep) rmSync(tmp, { recursive: true, force: true });
    }
    printTable(table, options);
}

function printTable(rows, options) {
    const get = (server, size, measure) => rows.find(row => row.server === server && row.size === size && row.measure === measure);
    const fmt = ms => (ms === undefined ? '' : ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
    const ratio = (a, b) => (a && b ? `${(a.median_ms / b.median_ms).toFixed(1)}×` : '');
    const has = server => options.servers.includes(server);
    const columns = options.servers.map(server => `${SERVER_NAMES[server]} (median ms)`);
    const ratios = [];
    if (has('ts') && has('skill-host')) ratios.push(['TS ÷ skill-host', 'ts', 'skill-host']);
    if (has('ts') && has('skill-host-no-watch')) ratios.push(['TS ÷ --no-watch', 'ts', 'skill-host-no-watch']);
    if (has('ts-cache') && has('skill-host')) ratios.push(['TS cached ÷ skill-host', 'ts-cache', 'skill-host']);
    console.log('');
    console.log(`| size | skills | measure | ${columns.join(' | ')} | ${ratios.map(r => r[0]).join(' | ')} |`);
    console.log(`|---|---:|---|${columns.map(() => '---:').join('|')}|${ratios.map(() => '---:').join('|')}|`);
    const sizes = [...new Set(rows.map(row => row.size))];
    const targets = [];
    for (const size of sizes) {
        for (const measure of options.measures) {
            const cells = options.servers.map(server => fmt(get(server, size, measure)?.median_ms));
            const skills = get(options.servers[0], size, measure)?.skills;
            const ratioCells = ratios.map(([, a, b]) => ratio(get(a, size, measure), get(b, size, measure)));
            console.log(`| ${size} | ${skills} | ${MEASURE_NAMES[measure]} | ${cells.join(' | ')} | ${ratioCells.join(' | ')} |`);
            for (const sh of ['skill-host', 'skill-host-no-watch']) {
                const a = get('ts', size, measure);
                const b = get(sh, size, measure);
                if (a && b) targets.push({ size, measure, server: sh, ratio: a.median_ms / b.median_ms });
            }
        }
    }
    console.log('');
    for (const sh of ['skill-host', 'skill-host-no-watch']) {
        const mine = targets.filter(t => t.server === sh);
        if (!mine.length) continue;
        const misses = mine.filter(t => t.ratio < 5);
        console.log(
            `target ≥5× (TS ÷ ${SERVER_NAMES[sh]}, every size and measure): ${misses.length ? 'NOT met' : 'met'}` +
                (misses.length
                    ? ` — below 5×: ${misses.map(t => `${t.size} ${MEASURE_NAMES[t.measure]} ${t.ratio.toFixed(1)}×`).join('; ')}`
                    : '')
        );
        const first = get(sh, '1000 generated', 'tools');
        if (first) {
            console.log(
                `target <50 ms to the first tools/list at 1,000 skills (${SERVER_NAMES[sh]}): ` +
                    `${first.median_ms < 50 ? 'met' : 'NOT met'} (median ${fmt(first.median_ms)} ms, p90 ${fmt(first.p90_ms)} ms)`
            );
        }
    }
}

await main();

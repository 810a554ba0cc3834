// The benchmark's own minimal JSON-RPC driver over a server's stdin and
// stdout (newline-delimited), the same for every server: bench.mjs's
// `--client raw` start-up measures and its pipelined read measure.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';

const INITIALIZE = {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench-mcp', version: '0.0.0' } }
};

/** Calls `handle` with each answer (a message with an id and no method) the
 * child writes on stdout, one JSON line at a time. Returns a function giving
 * what the child has written on stderr so far. */
function readAnswers(child, handle) {
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', chunk => (stderr += chunk));
    onMessages(child.stdout, message => {
        if (message.id === undefined || message.method !== undefined) return; // notifications, requests
        handle(message);
    });
    return () => stderr;
}

/** Calls `handle` with each message read from `stream`, one JSON line at a time
 * (blank lines skipped). */
export function onMessages(stream, handle) {
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', chunk => {
        pending += chunk;
        let newline;
        while ((newline = pending.indexOf('\n')) >= 0) {
            const line = pending.slice(0, newline);
            pending = pending.slice(newline + 1);
            if (line.trim()) handle(JSON.parse(line));
        }
    });
}

/** One run: spawn, initialize, then tools/list or every page of skills/list.
 * Returns the milliseconds from just before the spawn to the last answer. */
export function rawRun(cmd, measure) {
    return new Promise((resolvePromise, reject) => {
        const t0 = performance.now();
        const child = spawn(cmd.command, cmd.args, { env: cmd.env, stdio: ['pipe', 'pipe', 'pipe'] });
        let nextId = 1;
        let result;
        const names = [];
        let files = 0;
        let tools = 0;
        let initMs;
        const send = message => child.stdin.write(`${JSON.stringify(message)}\n`);
        const finish = ms => {
            result = { ms, initMs, names, files, tools };
            child.stdin.end();
        };
        const timer = setTimeout(() => {
            child.kill('SIGKILL');
            reject(new Error(`${cmd.command}: no answer in 120 s; stderr: ${stderr().slice(0, 2000)}`));
        }, 120_000);
        const stderr = readAnswers(child, message => {
            if (message.error) {
                child.kill('SIGKILL');
                reject(new Error(`${cmd.command}: ${JSON.stringify(message.error)}`));
                return;
            }
            if (message.id === 0) {
                initMs = performance.now() - t0;
                send({ jsonrpc: '2.0', method: 'notifications/initialized' });
                if (measure === 'tools') send({ jsonrpc: '2.0', id: nextId++, method: 'tools/list' });
                else send({ jsonrpc: '2.0', id: nextId++, method: 'skills/list', params: {} });
            } else if (measure === 'tools') {
                tools = message.result.tools.length;
                finish(performance.now() - t0);
            } else {
                for (const skill of message.result.skills) {
                    names.push(skill.frontmatter.name);
                    files += skill.resources.length;
                }
                if (message.result.nextCursor !== undefined) {
                    send({ jsonrpc: '2.0', id: nextId++, method: 'skills/list', params: { cursor: message.result.nextCursor } });
                } else finish(performance.now() - t0);
            }
        });
        child.on('error', error => {
            clearTimeout(timer);
            reject(error);
        });
        child.on('exit', code => {
            clearTimeout(timer);
            if (!result) reject(new Error(`${cmd.command} exited (${code}) early; stderr: ${stderr().slice(0, 2000)}`));
            else resolvePromise({ ...result, stderr: stderr() });
        });
        send(INITIALIZE);
    });
}

/** The same minimal driver, as requests with answers: spawn, initialize,
 * notifications/initialized; then `request(method, params)` resolves with the
 * answer's result (any number in flight). */
export function rawConnect(cmd) {
    const child = spawn(cmd.command, cmd.args, { env: cmd.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const waiting = new Map();
    let nextId = 0;
    let failed;
    const fail = error => {
        failed ??= error;
        for (const { reject } of waiting.values()) reject(failed);
        waiting.clear();
    };
    const timer = setTimeout(() => {
        child.kill('SIGKILL');
        fail(new Error(`${cmd.command}: not done in 120 s; stderr: ${stderr().slice(0, 2000)}`));
    }, 120_000);
    const exited = new Promise(resolveExit => {
        child.on('exit', code => {
            clearTimeout(timer);
            fail(new Error(`${cmd.command} exited (${code}) with requests unanswered; stderr: ${stderr().slice(0, 2000)}`));
            resolveExit(code);
        });
    });
    child.on('error', fail);
    const stderr = readAnswers(child, message => {
        const entry = waiting.get(message.id);
        if (!entry) return;
        waiting.delete(message.id);
        if (message.error) entry.reject(new Error(`${cmd.command}: ${entry.method}: ${JSON.stringify(message.error)}`));
        else entry.resolve(message.result);
    });
    const send = message => child.stdin.write(`${JSON.stringify(message)}\n`);
    const request = (method, params) =>
        new Promise((resolveRequest, reject) => {
            if (failed) return reject(failed);
            const id = nextId++;
            waiting.set(id, { resolve: resolveRequest, reject, method });
            send({ jsonrpc: '2.0', id, method, params });
        });
    return {
        async start() {
            await request('initialize', INITIALIZE.params);
            send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        },
        request,
        async close() {
            child.stdin.end();
            await exited;
        },
        stderr
    };
}

/** Bytes of one `resources/read` content: text as UTF-8, or the base64 blob. */
function contentBytes(content) {
    if (typeof content.text === 'string') return Buffer.from(content.text, 'utf8');
    if (typeof content.blob === 'string') return Buffer.from(content.blob, 'base64');
    throw new Error(`${content.uri}: neither text nor blob`);
}

export const IN_FLIGHT = 16;

/** Spawn and list every page of skills/list (not timed); then resources/read of
 * every listed file, up to IN_FLIGHT at a time, each answer's size and digest
 * checked against the listing here (timed, to the last verified answer). */
export async function rawReadRun(cmd) {
    const server = rawConnect(cmd);
    try {
        await server.start();
        const skills = [];
        let cursor;
        do {
            const page = await server.request('skills/list', cursor === undefined ? {} : { cursor });
            skills.push(...page.skills);
            cursor = page.nextCursor;
        } while (cursor !== undefined);
        const files = skills.flatMap(skill => skill.resources);
        const t0 = performance.now();
        let next = 0;
        let bytes = 0;
        const worker = async () => {
            while (next < files.length) {
                const listed = files[next++];
                const result = await server.request('resources/read', { uri: listed.uri });
                const content =
                    result.contents.find(item => item.uri === listed.uri) ?? (result.contents.length === 1 ? result.contents[0] : undefined);
                if (!content) throw new Error(`resources/read returned no contents for ${listed.uri}`);
                const data = contentBytes(content);
                if (data.length !== listed.size) throw new Error(`${listed.uri} is ${data.length} bytes; the listing says ${listed.size}`);
                const digest = `sha256:${createHash('sha256').update(data).digest('hex')}`;
                if (digest !== listed.digest) throw new Error(`${listed.uri} has digest ${digest}; the listing says ${listed.digest}`);
                bytes += data.length;
            }
        };
        await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, files.length) }, worker));
        const ms = performance.now() - t0;
        return { ms, names: skills.map(skill => skill.frontmatter.name), files: files.length, bytes, stderr: server.stderr() };
    } finally {
        await server.close();
    }
}


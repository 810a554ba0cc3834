#!/usr/bin/env node
// The benchmark's floor: a server that does as little as a server can, to
// show how much of a measure is the client's own cost. It reads every file
// of one folder of skill folders at start-up and answers `resources/read`
// and `skills/list` from answers serialised in advance (no validation, no
// confinement, no rereading), over stdio, newline-delimited.
//
//     node floor-server.mjs SKILLS_DIR
//
// A skill is a folder holding SKILL.md; its name is the folder's. Not an MCP
// server anyone should use: it answers only what bench.mjs's raw driver asks.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { onMessages } from './lib/raw.mjs';

const root = process.argv[2];
if (!root) {
    console.error('usage: node floor-server.mjs SKILLS_DIR');
    process.exit(2);
}

function filesOf(folder, prefix = '') {
    const found = [];
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
        if (entry.name.startsWith('.')) continue;
        const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
        if (entry.isDirectory()) found.push(...filesOf(join(folder, entry.name), relative));
        else if (entry.isFile()) found.push(relative);
    }
    return found;
}

const reads = new Map(); // uri → the answer's `result`, serialised
const skills = [];
for (const entry of readdirSync(root, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!entry.isDirectory()) continue;
    const folder = join(root, entry.name);
    let files;
    try {
        files = filesOf(folder).sort();
    } catch {
        continue;
    }
    if (!files.includes('SKILL.md')) continue;
    const resources = [];
    for (const relative of files) {
        const bytes = readFileSync(join(folder, relative));
        const uri = `skill://${entry.name}/${relative}`;
        const text = !bytes.includes(0) && Buffer.from(bytes.toString('utf8'), 'utf8').equals(bytes);
        const content = text
            ? { uri, mimeType: 'text/plain', text: bytes.toString('utf8') }
            : { uri, mimeType: 'application/octet-stream', blob: bytes.toString('base64') };
        reads.set(uri, JSON.stringify({ contents: [content] }));
        resources.push({ uri, size: bytes.length, digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}` });
    }
    skills.push({ uri: `skill://${entry.name}`, frontmatter: { name: entry.name }, resources });
}
const listing = JSON.stringify({ skills });

const answer = (id, result) => process.stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}\n`);
onMessages(process.stdin, message => {
    if (message.id === undefined) return;
    if (message.method === 'initialize') answer(message.id, '{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"floor","version":"0"}}');
    else if (message.method === 'tools/list') answer(message.id, '{"tools":[]}');
    else if (message.method === 'skills/list') answer(message.id, listing);
    else if (message.method === 'resources/read') answer(message.id, reads.get(message.params.uri) ?? '{"contents":[]}');
    else process.stdout.write(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"error":{"code":-32601,"message":"not here"}}\n`);
});
process.stdin.on('end', () => process.exit(0));

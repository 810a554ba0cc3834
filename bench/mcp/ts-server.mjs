#!/usr/bin/env node
// The TypeScript SDK's own skills server, for the comparison in bench.mjs:
// an McpServer from @modelcontextprotocol/server with the Skills extension
// (SEP-2640) loaded from one folder of skill folders by the SDK's
// `loadSkills(root)`, served over stdio.
//
//     node ts-server.mjs SKILLS_DIR
//
// Like `skill-host mcp`, it offers one tool, `skill`, whose description
// lists the skills (name and description), so `tools/list` answers with a
// catalog on both sides. Warnings (skills the SDK leaves out) go to stderr.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { McpServer } from '@modelcontextprotocol/server';
import { loadSkills } from '@modelcontextprotocol/server/ext/skills/node';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const root = process.argv[2];
if (!root) {
    console.error('usage: node ts-server.mjs SKILLS_DIR');
    process.exit(2);
}

const skills = await loadSkills(root, {
    onWarning: warning => console.error(`warning: ${warning.path}: ${warning.message}`)
});

const byName = new Map();
const lines = [];
for (const entry of skills.entries) {
    const { name, description } = entry.frontmatter;
    // skill://<folder>/SKILL.md: the folder under root.
    const folder = decodeURIComponent(entry.uri.slice('skill://'.length, -'/SKILL.md'.length));
    byName.set(name, folder);
    lines.push(`- ${name}: ${description}`);
}

const server = new McpServer({ name: 'ts-sdk-skills', version: '2.4.0' });
server.registerTool(
    'skill',
    {
        description: `Load a skill's instructions by name.\n\nAvailable skills:\n${lines.join('\n')}`,
        inputSchema: z.object({ name: z.string() })
    },
    async ({ name }) => {
        const folder = byName.get(name);
        if (folder === undefined) return { content: [{ type: 'text', text: `Error: no skill "${name}"` }], isError: true };
        const text = await readFile(join(root, folder, 'SKILL.md'), 'utf8');
        return { content: [{ type: 'text', text }] };
    }
);
skills.attach(server);
await server.connect(new StdioServerTransport());

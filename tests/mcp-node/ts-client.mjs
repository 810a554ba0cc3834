// The official MCP TypeScript SDK client (@modelcontextprotocol/client,
// pinned in package.json) driving `skill-host mcp`, for
// tests/end_to_end/mcp_ts_client.rs. Usage: node ts-client.mjs PLAN.json;
// prints a JSON transcript on stdout and exits 0 (the Rust test judges it).
//
// Module resolution: ESM ignores NODE_PATH, so the Rust test copies this file
// into target/mcp-node/ (where .ci/run installs the packages) and runs the
// copy; the bare imports below then resolve to target/mcp-node/node_modules.
//
// The plan: {"server": {"command": [...], "env": {...}} | {"url": "..."},
//            "era": "legacy" | "auto", "mode": "session" | "cache",
//            "cache": {"file": PATH, "text": NEW_SKILL_MD, "uri": SKILL_MD_URI}}
// `session` lists and calls everything a host would; `cache` shows the
// client's response cache at work and a change notification emptying it.

import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const transcript = { errors: [], requests: {} };

// Every request the client puts on the wire, by method: what the response
// cache saves shows as a count that does not grow.
function counted(transport) {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (typeof message.method === 'string' && message.id !== undefined) {
      transcript.requests[message.method] = (transcript.requests[message.method] ?? 0) + 1;
    }
    return send(message, options);
  };
  return transport;
}

function transportFor(server) {
  if (server.url) return counted(new StreamableHTTPClientTransport(new URL(server.url)));
  const [command, ...args] = server.command;
  return counted(new StdioClientTransport({ command, args, env: { ...process.env, ...server.env }, stderr: 'pipe' }));
}

/** Runs `step`, recording a thrown error under `name` instead of stopping. */
async function attempt(name, step) {
  try {
    return await step();
  } catch (error) {
    transcript.errors.push({ step: name, message: String(error?.message ?? error) });
    return undefined;
  }
}

const text = (content) => content.filter((c) => c.type === 'text').map((c) => c.text);

async function session(client, skills) {
  const tools = await attempt('tools/list', () => client.listTools());
  transcript.tools = tools?.tools.map((tool) => tool.name);
  const prompts = await attempt('prompts/list', () => client.listPrompts());
  transcript.prompts = prompts?.prompts.map((prompt) => prompt.name);
  transcript.get_prompts = [];
  for (const prompt of prompts?.prompts ?? []) {
    const got = await attempt(`prompts/get ${prompt.name}`, () => client.getPrompt({ name: prompt.name }));
    if (got) transcript.get_prompts.push({ name: prompt.name, messages: got.messages.length, text: got.messages[0]?.content?.text ?? null });
  }
  const resources = await attempt('resources/list', () => client.listResources());
  transcript.resources = resources?.resources.map((r) => ({ uri: r.uri, name: r.name, description: r.description ?? null }));
  transcript.reads = [];
  for (const resource of resources?.resources ?? []) {
    const read = await attempt(`resources/read ${resource.uri}`, () => client.readResource({ uri: resource.uri }));
    if (read) transcript.reads.push({ uri: resource.uri, contents: read.contents.length });
  }
  transcript.skills_supported = skills.supported;
  const listing = await attempt('SkillsClient.list', () => skills.list());
  transcript.skills = [];
  for (const skill of listing?.skills ?? []) {
    const entry = { uri: skill.uri, name: skill.frontmatter.name, description: skill.frontmatter.description, files: [] };
    for (const file of skill.resources) {
      const read = await attempt(`SkillsClient.read ${file.uri}`, () => skills.read(skill, file.uri));
      if (read) entry.files.push({ uri: file.uri, verified: read.verified, bytes: read.bytes.byteLength, frontmatter: read.frontmatter !== undefined });
    }
    const got = await attempt(`SkillsClient.get ${skill.uri}`, () => skills.get(skill.uri));
    entry.get = got ? got.skill.uri : null;
    if (skills.directoryRead) {
      const root = skill.uri.slice(0, -'/SKILL.md'.length);
      const directory = await attempt(`SkillsClient.readDirectory ${root}`, () => skills.readDirectory(root));
      entry.directory = directory?.resources.map((child) => ({ uri: child.uri, mimeType: child.mimeType ?? null })) ?? null;
    }
    transcript.skills.push(entry);
  }
  // The `skill` tool for every skill the model may load (its prompts are the
  // user-invocable ones; the tool answers for both, isError for neither here).
  transcript.calls = [];
  for (const skill of listing?.skills ?? []) {
    const name = skill.frontmatter.name;
    const call = await attempt(`tools/call skill ${name}`, () => client.callTool({ name: 'skill', arguments: { name } }));
    if (call) transcript.calls.push({ name, isError: call.isError ?? false, text: text(call.content) });
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function cache(client, skills) {
  const { file, text: changed, uri } = plan.cache;
  let notified = 0;
  client.setNotificationHandler('notifications/resources/list_changed', () => {
    notified += 1;
  });
  // A 2026-07-28 connection gets change notifications on a listen stream;
  // a 2025 one unsolicited.
  if (client.getNegotiatedProtocolVersion() >= '2026') {
    const subscription = await attempt('listen', () => client.listen({ resourcesListChanged: true }));
    transcript.honored_filter = subscription?.honoredFilter ?? null;
  }
  const described = (list) => list?.resources.find((r) => r.uri === uri)?.description ?? null;
  const first = await attempt('resources/list 1', () => client.listResources());
  const second = await attempt('resources/list 2', () => client.listResources());
  transcript.resources_list_ttl_ms = first?.ttlMs ?? null;
  transcript.before = { first: described(first), second: described(second), wire: transcript.requests['resources/list'] ?? 0 };
  const listing = await attempt('SkillsClient.list 1', () => skills.list());
  transcript.skills_list_ttl_ms = listing?.ttlMs ?? null;
  const skill = listing?.skills.find((s) => s.uri === uri);
  if (skill) {
    await attempt('SkillsClient.read 1', () => skills.read(skill));
    const again = await attempt('SkillsClient.read 2', () => skills.read(skill));
    transcript.read_wire_before = transcript.requests['resources/read'] ?? 0;
    transcript.read_description_before = again?.frontmatter?.description ?? null;
  }
  // Saved as editors do, by rename: the watcher never sees a half-written file.
  writeFileSync(`${file}.tmp`, changed);
  renameSync(`${file}.tmp`, file);
  const deadline = Date.now() + 15000;
  while (notified === 0 && Date.now() < deadline) await sleep(50);
  transcript.notified = notified;
  const after = await attempt('resources/list 3', () => client.listResources());
  transcript.after = { description: described(after), wire: transcript.requests['resources/list'] ?? 0 };
  const relisted = await attempt('SkillsClient.list 2', () => skills.list());
  const entry = relisted?.skills.find((s) => s.uri === uri);
  transcript.skills_description_after = entry?.frontmatter.description ?? null;
  if (entry) {
    // The cached SKILL.md no longer matches the new entry: read() fetches it again.
    const read = await attempt('SkillsClient.read 3', () => skills.read(entry));
    transcript.read_description_after = read?.frontmatter?.description ?? null;
  }
}

const client = new Client(
  { name: 'skill-host-e2e-ts', version: '1.0.0' },
  plan.era === 'auto' ? { versionNegotiation: { mode: 'auto' } } : {},
);
const transport = transportFor(plan.server);
let stderr = '';
transport.stderr?.on('data', (chunk) => {
  stderr += chunk;
});
const watchdog = setTimeout(() => {
  transcript.errors.push({ step: 'watchdog', message: 'the client did not finish within 120 s' });
  finish();
}, 120000);
const connected = await attempt('connect', async () => {
  await client.connect(transport);
  return true;
});
if (connected) {
  transcript.protocolVersion = client.getNegotiatedProtocolVersion() ?? null;
  transcript.capabilities = client.getServerCapabilities() ?? null;
  const skills = new SkillsClient(client);
  if (plan.mode === 'cache') await cache(client, skills);
  else await session(client, skills);
  await attempt('close', () => client.close());
}
clearTimeout(watchdog);
finish();

/** Prints the transcript and exits once stdout has taken it all (a pipe
 * drops what `process.exit` cuts short). */
function finish() {
  transcript.stderr = stderr;
  process.stdout.write(JSON.stringify(transcript), () => process.exit(0));
}

#!/usr/bin/env node
// Benchmark the published DSH `skill` tool plugin (see README.md).
//
//   node bench.mjs --skills N --events M [--iterations K] [--warmup W]
//                  [--load] [--provider] [--dump-session FILE] [--dump-skills FILE]
//
// Default mode times K warm `agent/pre-step` waterfalls over an agent whose
// session holds M events with the plugin's catalog published near the start.
// --load times K `skill` tool executions (ToolRuntime.execute, including
// argument/output validation and rendering) for one skill instead.
// Prints one JSON line.
import { performance } from 'node:perf_hooks'
import { createHarness, makeAgent, newSession, firePreStep, invokeSkillTool, PLUGIN_ID } from './lib/dsh.mjs'
import { generateSkills, appendSyntheticEvents, userText, dumpSkillsJson, dumpSessionJsonl } from './lib/workload.mjs'

/** `--key value` and bare `--flag` (true). */
function parseArgs(argv) {
  const out = {}
  for (let i = 0; i < argv.length; i += 1) {
    if (!argv[i].startsWith('--')) continue
    const key = argv[i].slice(2)
    const next = argv[i + 1]
    if (next === undefined || next.startsWith('--')) out[key] = true
    else { out[key] = next; i += 1 }
  }
  return out
}

/** Nearest-rank percentile of a sorted array. */
function percentile(sorted, p) {
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]
}

const args = parseArgs(process.argv.slice(2))
const N = Number(args.skills ?? 100)
const M = Number(args.events ?? 1000)
const K = Number(args.iterations ?? 200)
const W = Number(args.warmup ?? Math.min(50, K))
const mode = args.load ? 'load' : 'pre-step'
if (!Number.isInteger(N) || N < 1 || !Number.isInteger(M) || M < 3 || !Number.isInteger(K) || K < 1) {
  console.error('usage: node bench.mjs --skills N(>=1) --events M(>=3) [--iterations K] [--warmup W] [--load] [--provider]')
  process.exit(2)
}

// Setup, not timed. The skills: registered one by one as runtime skills, or
// (--provider) served by one provider that lists all N.
const ctx = await createHarness()
const skills = generateSkills(N)
if (args.provider) {
  ctx.skills.registerProvider(() => ({
    name: 'bench-provider',
    async list() {
      return skills.map(skill => ({
        name: skill.name, description: skill.description,
        invocation: { modelInvocable: true, userInvocable: true },
        source: 'bench', provider: 'bench-provider', rank: 500, locator: skill.name,
      }))
    },
    async get(candidate) {
      const skill = skills.find(s => s.name === candidate.locator)
      return skill && { ...candidate, content: skill.content }
    },
  }))
} else {
  for (const skill of skills) ctx.skills.register({ ...skill, source: 'runtime' })
}
if (args['dump-skills']) dumpSkillsJson(skills, args['dump-skills'])

// The session: end-seed marker (seq 0), a user prompt, the catalog published
// by a real pre-step (seq 2), then synthetic history up to exactly M events.
const setupStart = performance.now()
const session = newSession(`bench-${N}-${M}`)
const agent = makeAgent(session)
session.append('user/message', userText('Help me get this repository ready for the release.'), { surfaceOp: 'append' })
const first = await firePreStep(ctx, agent)
if (first.appended.length !== 1) throw new Error(`expected the catalog to be published once, got ${first.appended.length} messages`)
const catalogSeq = first.appended[0]
appendSyntheticEvents(session, M - session.events.length)
if (session.events.length !== M) throw new Error(`session has ${session.events.length} events, expected ${M}`)
if (!session.surface.nodes.includes(catalogSeq)) throw new Error('catalog is not visible')
const setupMs = performance.now() - setupStart
if (args['dump-session']) dumpSessionJsonl(session, args['dump-session'])

// The timed operation. The steady pre-step must inject nothing: the visible
// catalog is the current one.
const target = skills[Math.floor(N / 2)].name
const op = mode === 'pre-step'
  ? async () => {
    const { appended } = await firePreStep(ctx, agent)
    if (appended.length !== 0) throw new Error('steady-state pre-step unexpectedly injected messages')
  }
  : async () => {
    const result = await invokeSkillTool(ctx, agent, target)
    if (result.isError) throw new Error(`skill load failed: ${JSON.stringify(result.content)}`)
  }

// The first call is the cold one; W - 1 more warm up; then K timed calls.
const coldStart = performance.now()
await op()
const coldUs = (performance.now() - coldStart) * 1000
for (let i = 1; i < W; i += 1) await op()
const samples = new Float64Array(K)
for (let i = 0; i < K; i += 1) {
  const t0 = performance.now()
  await op()
  samples[i] = (performance.now() - t0) * 1000
}
const sorted = Array.from(samples).sort((a, b) => a - b)
const round = x => Math.round(x * 10) / 10
console.log(JSON.stringify({
  impl: 'dsh-node',
  mode,
  plugin: PLUGIN_ID,
  skills: N,
  events: M,
  iterations: K,
  median_us: round(percentile(sorted, 50)),
  p90_us: round(percentile(sorted, 90)),
  min_us: round(sorted[0]),
  first_us: round(coldUs),
  registry: args.provider ? 'provider' : 'runtime',
  setup_ms: Math.round(setupMs),
  node: process.version,
}))

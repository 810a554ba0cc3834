// The benchmark's deterministic inputs: N skills and M session events,
// identical from run to run (seeded PRNG), and the same as skill-host's
// pre_step_bench generates (host-runner/examples/pre_step_bench.rs).
import { writeFileSync } from 'node:fs'
import { createUserMessage, createAssistantMessage, createToolResultMessage, CallId } from '@deepseek-ai/dsh-llm'

/** mulberry32: a small seeded PRNG. */
function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const VERBS = ['review', 'write', 'debug', 'migrate', 'profile', 'audit', 'draft', 'refactor', 'document', 'triage', 'deploy', 'test', 'summarize', 'format', 'translate', 'benchmark']
const OBJECTS = ['pdf-forms', 'release-notes', 'sql-queries', 'rust-crates', 'react-components', 'api-schemas', 'docker-images', 'terraform-plans', 'git-history', 'csv-reports', 'k8s-manifests', 'python-tests', 'changelogs', 'slide-decks', 'spreadsheets', 'security-findings', 'incident-reports', 'wasm-modules']
const PURPOSES = [
  'Use when the user asks to {v} {o} in a repository, following the team conventions and checking every result before reporting',
  'Guides how to {v} {o} safely: collect context first, apply the smallest change, and verify with the project tooling',
  'Step-by-step workflow to {v} {o}, including edge cases, naming rules, and a final checklist the agent must complete',
  'Helps {v} {o} for production use; covers validation, rollback notes, and how to explain the outcome to reviewers',
]

/** N skills `{name, description, content}`: kebab-case names, ~120-character descriptions, ~1.3 KB bodies. */
export function generateSkills(n, seed = 42) {
  const rand = rng(seed)
  const skills = []
  for (let i = 0; i < n; i += 1) {
    const v = VERBS[i % VERBS.length]
    const o = OBJECTS[Math.floor(i / VERBS.length) % OBJECTS.length]
    const round = Math.floor(i / (VERBS.length * OBJECTS.length))
    const name = round === 0 ? `${v}-${o}` : `${v}-${o}-${round + 1}`
    let description = PURPOSES[Math.floor(rand() * PURPOSES.length)].replace('{v}', v).replace('{o}', o.replace('-', ' '))
    if (description.length > 125) description = description.slice(0, 122).trimEnd() + '.'
    else description += '.'
    const body = [
      `# ${name}`, '',
      `Follow these steps to ${v} ${o.replace('-', ' ')}.`, '',
      ...Array.from({ length: 12 }, (_, k) => `${k + 1}. Step ${k + 1}: inspect the relevant files, apply the change for item ${k + 1}, and record what you verified.`),
      '', 'Report the outcome with file paths and the commands you ran.',
    ].join('\n')
    skills.push({ name, description, content: body })
  }
  return skills
}

/** A user message with a text block, from the user. */
export function userText(text) {
  return createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'user' } })
}

const USER_TEXTS = [
  'Can you look at the failing test in the parser module and tell me why it broke after the last refactor?',
  'Please update the README with the new configuration flags and an example for the CLI.',
  'Run the benchmarks again and compare against yesterday; summarize anything that regressed by more than five percent.',
  'Now add error handling for the empty-input case and make sure the tests cover it.',
]
const ASSISTANT_TEXTS = [
  'I will start by reading the relevant source files and the recent commits to understand the change.',
  'The failure comes from an off-by-one in the tokenizer: the last byte of the buffer is skipped when the input ends without a newline. I will fix the bound and add a regression test.',
  'Done. The change is limited to two files; all tests pass locally and the benchmark numbers are unchanged within noise.',
]
const MODEL_SOURCE = { provider: 'deepseek', model: 'deepseek-chat' }

/**
 * Append `count` surface events to a session, in cycles of four: a user
 * prompt, an assistant message with a tool call, its tool result (~1 KB),
 * an assistant wrap-up.
 */
export function appendSyntheticEvents(session, count, seed = 7) {
  const rand = rng(seed)
  let callNo = 0
  for (let i = 0; i < count; i += 1) {
    const kind = i % 4
    if (kind === 0) {
      session.append('user/message', userText(USER_TEXTS[Math.floor(rand() * USER_TEXTS.length)]), { surfaceOp: 'append' })
    } else if (kind === 1) {
      callNo += 1
      session.append('assistant/message', {
        turn: 1, step: 1,
        message: createAssistantMessage({
          content: [
            { type: 'text', text: ASSISTANT_TEXTS[0] },
            { type: 'tool-call', id: `call-${callNo}`, name: 'read', arguments: JSON.stringify({ path: `src/module_${callNo % 97}.rs` }) },
          ],
          source: MODEL_SOURCE,
        }),
      }, { surfaceOp: 'append' })
    } else if (kind === 2) {
      const lines = Array.from({ length: 12 }, (_, k) => `${String(k + 1).padStart(4)}| let value_${k} = compute(input, ${Math.floor(rand() * 1000)}); // line ${k}`)
      session.append('tool/result', {
        turn: 1, step: 1,
        message: createToolResultMessage({ callId: CallId(`call-${callNo}`), content: [{ type: 'text', text: lines.join('\n') }], isError: false }),
      }, { surfaceOp: 'append' })
    } else {
      session.append('assistant/message', {
        turn: 1, step: 2,
        message: createAssistantMessage({
          content: [{ type: 'text', text: ASSISTANT_TEXTS[1 + Math.floor(rand() * 2)] }],
          source: MODEL_SOURCE,
        }),
      }, { surfaceOp: 'append' })
    }
  }
}

/** Write the skills as JSON: `[{name, description, content}]`. */
export function dumpSkillsJson(skills, path) {
  writeFileSync(path, JSON.stringify(skills, null, 1) + '\n')
}

/** Write a session as DSH JSONL: a `{"type":"session",…header}` line, then one line per event. */
export function dumpSessionJsonl(session, path) {
  const lines = [JSON.stringify({ type: 'session', ...session.header })]
  for (const event of session.events) lines.push(JSON.stringify(event))
  writeFileSync(path, lines.join('\n') + '\n')
}

// The opt-in modes (docs/spec.md §3.10–§3.14) through the drop-in, turned on
// with `ctx.plugin(toolSkill, config)`. The published plugin has none of
// them, so the counterpart is `skill-host replay` (§7): each scenario here
// runs in the harness (harness.mjs's set-up, driven as an agent loop drives
// it) and is translated into a §7 scenario file with the same configuration,
// skills and steps; the same component must decide the same in both.
//
// What each host records is brought to one form (`comparable`), and only
// what the two legitimately record differently is normalised:
//
// 1. A decision: the harness returns the entered messages themselves
//    (`{ role: 'user', content, source }`, ids already removed by
//    harness.mjs), replay records `{ source, text }` for a message of one
//    text block (§7). The harness's are read the same way; `role` is always
//    `user` in both and replay does not record it.
// 2. A tool call: the harness's tool runtime returns `{ isError, content,
//    value, error? }`, replay `{ ok, text }` or `{ error }` (§7). The
//    harness's are read as `{ ok: value, text }` and `{ error: text }` (the
//    runtime writes the `Error: ` prefix that replay records).
// 3. Key order: replay sorts the keys of everything but the tool value
//    (§7); both sides are compared with sorted keys.
// 4. Steps that decide nothing (`compact`, skill and provider changes,
//    `tool-view`) record nothing in the harness and `{}` in replay; they
//    are left out of the comparison. (`restart`, a new process over the
//    same session, has no replay step at all: skill-host reads everything
//    from the session on every step anyway.)
//
// Nothing else is normalised: the texts, sources and values are compared
// as recorded.

import { createToolResultMessage } from '@deepseek-ai/dsh-llm';

import { PLUGINS, createHarness } from './harness.mjs';

const skill = (name, description, extra = {}) => ({ name, description, content: `# ${name}\n\nSteps for ${name}.`, ...extra });

const PDF = skill('pdf-forms', 'Fill and check PDF forms.');
const PDF_V2 = { ...PDF, description: 'Fill, check and sign PDF forms.', content: '# pdf-forms\n\nSteps for pdf-forms, version 2.' };
const RELEASE = skill('release-notes', 'Draft release notes from merged pull requests.');
const RELEASE_V2 = { ...RELEASE, content: '# release-notes\n\nSteps for release-notes, now with a changelog.' };
const REVIEW = skill('review-pr', 'Review a pull request for correctness, tests and style.');
const TRIAGE = skill('triage-bug', 'Triage a bug report: reproduce it, find the cause, suggest a fix.');
const DEPLOY = skill('deploy-production', 'Deploy to production.', {
  invocation: { modelInvocable: false, userInvocable: true },
});
const INTERNAL = skill('internal-audit', 'Audit internal state.', {
  invocation: { modelInvocable: true, userInvocable: false },
});
const INTERNAL_TOOLS = skill('internal-tools', 'Internal tooling notes.');
// Two sentences each, for catalogSummaries; STAGING is model-invocable until userOnly says otherwise.
const LINT = skill('lint-code', 'Lint the code base. Use before every commit, e.g. in a pre-commit hook.');
const DOCS = skill('write-docs', 'Write user documentation. Use when a feature ships or its behaviour changes.');
const STAGING = skill('deploy-staging', 'Deploy to staging. Use after every merge.');

/** A body of `lines` lines of 48 characters, a few of them outside ASCII. */
function longBody(name, lines) {
  const body = [];
  for (let line = 0; line < lines; line += 1) {
    body.push(`${String(line).padStart(2, '0')} ${name} step ${line % 7 === 3 ? 'é😀' : 'ok'}`.padEnd(48, '.'));
  }
  return body.join('\n');
}

/**
 * The drop-in's configuration for a component key left unset
 * (dsh/index.mjs, `componentConfig`): what a §7 scenario needs to be
 * configured as the drop-in configures the component.
 */
export const DROP_IN_COMPONENT_DEFAULTS = Object.freeze({
  catalogDescriptionMaxLength: 500,
  userInvocation: true,
  catalogSource: 'skill-catalog',
});

/**
 * The scenarios: `config` (what `ctx.plugin` gets), `skills` (runtime
 * skills), `providerSkills` (the harness's `scenario` provider), and steps:
 * `pre-step` (`messages`), `invoke` (`name` or `args`), `compact` (the
 * whole surface), `set-skills`, `provider` (`{ skills, incomplete,
 * listError }`), `tool-view`.
 */
export const MODE_SCENARIOS = [
  {
    name: 'userInvocation false: no /name injection, no user line in the catalogs',
    config: { userInvocation: false },
    skills: [PDF, RELEASE, DEPLOY],
    steps: [
      { op: 'pre-step', messages: ['Use /pdf-forms, then /deploy-production'] },
      { op: 'invoke', name: 'pdf-forms' },
      { op: 'invoke', name: 'deploy-production' },
      { op: 'set-skills', skills: [PDF, DEPLOY] },
      { op: 'pre-step', messages: ['/release-notes'] },
      { op: 'set-skills', skills: [DEPLOY] },
      { op: 'pre-step' },
    ],
  },
  {
    name: 'loadedSkills: a loaded skill that changed, then went, and loads compaction hid',
    config: { loadedSkills: true },
    providerSkills: [PDF, RELEASE, REVIEW],
    steps: [
      { op: 'pre-step', messages: ['start'] },
      { op: 'invoke', name: 'pdf-forms' },
      { op: 'invoke', name: 'release-notes' },
      { op: 'invoke', args: { name: 'no-such-skill' } },
      { op: 'pre-step' },
      { op: 'provider', change: { skills: [PDF_V2, RELEASE, REVIEW] } },
      { op: 'pre-step' },
      { op: 'pre-step' },
      // A new process reads the loads and the notice given from the session: nothing is said twice.
      { op: 'restart' },
      { op: 'provider', change: { skills: [PDF_V2, RELEASE, { ...REVIEW, description: 'Review a pull request.' }] } },
      { op: 'pre-step' },
      { op: 'provider', change: { skills: [RELEASE, REVIEW] } },
      { op: 'pre-step' },
      { op: 'restart' },
      { op: 'pre-step' },
      { op: 'compact' },
      { op: 'pre-step', messages: ['continue'] },
      { op: 'pre-step' },
      // Loaded again, then changed again: said again.
      { op: 'invoke', name: 'release-notes' },
      { op: 'provider', change: { skills: [RELEASE_V2, REVIEW] } },
      { op: 'pre-step' },
      { op: 'restart' },
      { op: 'pre-step' },
    ],
  },
  {
    name: 'skillBodyMaxLength: bodies cut with the line that says where the rest is, in results and /name',
    config: { skillBodyMaxLength: 1000 },
    skills: [skill('long-runtime', 'A long runtime skill.', { content: longBody('runtime', 40) })],
    providerSkills: [
      skill('long-dir', 'A long skill with a directory.', {
        content: longBody('dir', 30),
        resourceBase: { kind: 'directory', path: '/skills/long-dir' },
      }),
      skill('long-url', 'A long skill with a URL.', {
        content: longBody('url', 25),
        resourceBase: { kind: 'url', url: 'https://example.invalid/skills/long-url/' },
      }),
      skill('long-line', 'A long skill on one line.', { content: 'x'.repeat(1500) }),
      skill('short-one', 'A short skill.', { content: longBody('short', 20) }),
    ],
    steps: [
      { op: 'pre-step', messages: ['/long-runtime now'] },
      { op: 'invoke', name: 'long-runtime' },
      { op: 'invoke', name: 'long-dir' },
      { op: 'invoke', name: 'long-url' },
      { op: 'invoke', name: 'long-line' },
      { op: 'invoke', name: 'short-one' },
    ],
  },
  {
    name: 'catalogBudget with catalogPinned: shortened and left-out skills, the coverage line',
    config: { catalogBudget: 160, catalogPinned: ['triage-bug'] },
    skills: [PDF, RELEASE, REVIEW, TRIAGE, INTERNAL_TOOLS],
    steps: [
      { op: 'pre-step', messages: ['start'] },
      { op: 'pre-step' },
      { op: 'invoke', name: 'review-pr' },
      { op: 'set-skills', skills: [PDF, RELEASE, TRIAGE] },
      { op: 'pre-step' },
      { op: 'set-skills', skills: [PDF, RELEASE, REVIEW, TRIAGE, INTERNAL_TOOLS, PDF_V2, skill('a-first', 'Sorts first.')] },
      { op: 'pre-step', messages: ['/internal-tools'] },
    ],
  },
  {
    name: 'catalogSummaries with catalogNameOnly and userOnly: first sentences, a name alone, a user-only skill refused but invocable by /name',
    config: { catalogBudget: 200, catalogSummaries: true, catalogNameOnly: ['internal-*'], userOnly: ['deploy-*'] },
    skills: [PDF, RELEASE, INTERNAL_TOOLS, LINT, DOCS, STAGING],
    steps: [
      { op: 'pre-step', messages: ['/deploy-staging now'] },
      { op: 'invoke', name: 'deploy-staging' },
      { op: 'invoke', name: 'internal-tools' },
      { op: 'set-skills', skills: [PDF, INTERNAL_TOOLS, LINT, DOCS] },
      { op: 'pre-step' },
    ],
  },
  {
    name: 'catalogExclude: excluded skills stay out of the catalog, loadable by name and by /name',
    config: { catalogExclude: ['internal-*', 'release-notes'] },
    skills: [PDF, RELEASE, REVIEW, INTERNAL, INTERNAL_TOOLS],
    steps: [
      { op: 'pre-step', messages: ['/release-notes and /internal-tools please'] },
      { op: 'invoke', name: 'internal-audit' },
      { op: 'invoke', name: 'release-notes' },
      { op: 'set-skills', skills: [RELEASE, INTERNAL] },
      { op: 'pre-step' },
      { op: 'set-skills', skills: [PDF, RELEASE] },
      { op: 'pre-step' },
    ],
  },
  {
    name: 'catalogUpdates "delta" with catalogSource "plugin": updates, removals, a replacement after compaction',
    config: { catalogSource: 'plugin', catalogUpdates: 'delta' },
    skills: [PDF, RELEASE, REVIEW],
    steps: [
      { op: 'pre-step', messages: ['start'] },
      { op: 'set-skills', skills: [PDF_V2, RELEASE, REVIEW] },
      { op: 'pre-step' },
      { op: 'pre-step' },
      { op: 'set-skills', skills: [PDF_V2, REVIEW, TRIAGE] },
      { op: 'pre-step', messages: ['more'] },
      { op: 'compact' },
      { op: 'pre-step' },
      { op: 'set-skills', skills: [PDF_V2, TRIAGE] },
      { op: 'pre-step' },
      { op: 'set-skills', skills: [] },
      { op: 'pre-step' },
    ],
  },
  {
    name: 'skillSearch: queries, the ranking, no match, argument errors, and loads',
    config: { skillSearch: true, catalogBudget: 90 },
    skills: [
      PDF,
      RELEASE,
      REVIEW,
      TRIAGE,
      INTERNAL,
      DEPLOY,
      skill('pdf-merge', 'Merge PDF files into one.'),
      skill('form-letters', 'Write form letters from a template.'),
      skill('release-checklist', 'Check a release before it ships.'),
      skill('review-docs', 'Review documentation for clarity.'),
      skill('japanese-docs', '日本語の翻訳を確認する。'),
    ],
    steps: [
      { op: 'pre-step', messages: ['start'] },
      { op: 'invoke', args: { query: 'pdf forms' } },
      { op: 'invoke', args: { query: 'release' } },
      { op: 'invoke', args: { query: 'review release pdf form triage docs' } },
      { op: 'invoke', args: { query: 'deploy audit' } },
      { op: 'invoke', args: { query: '翻訳' } },
      { op: 'invoke', args: { query: 'nothing matches zzz' } },
      { op: 'invoke', args: { name: 'pdf-merge' } },
      { op: 'invoke', args: { name: 'pdf-merge', query: 'pdf' } },
      { op: 'invoke', args: {} },
      { op: 'invoke', args: { query: ' ,;' } },
      { op: 'invoke', args: { query: 5 } },
      { op: 'invoke', args: { name: 5 } },
      { op: 'pre-step', messages: ['/pdf-merge'] },
    ],
  },
  {
    name: 'catalogSource "plugin": the catalogs of the plugin form, with /name',
    config: { catalogSource: 'plugin' },
    skills: [PDF, RELEASE, DEPLOY],
    steps: [
      { op: 'pre-step', messages: ['/deploy-production go'] },
      { op: 'pre-step' },
      { op: 'set-skills', skills: [PDF, DEPLOY] },
      { op: 'pre-step' },
      { op: 'tool-view', view: 'hidden' },
      { op: 'pre-step' },
      { op: 'tool-view', view: 'visible' },
      { op: 'set-skills', skills: [] },
      { op: 'pre-step' },
      { op: 'pre-step', messages: ['/release-notes'] },
    ],
  },
];

/** The ops that decide something, and so record a step in both hosts. */
const DECIDING = new Set(['pre-step', 'invoke']);

/** A harness batch message as a §7 proposed message (harness.mjs `batchMessage`). */
function proposedMessage(message) {
  if (typeof message === 'string') return message;
  const source = message.source ?? (message.kind === 'user' ? { kind: 'user' } : { kind: 'plugin', plugin: message.kind });
  return { source, content: [{ type: 'text', text: message.text }] };
}

/** A harness skill as a §7 skill: `rank` and `source` as harness.mjs's `scenario` provider gives them. */
function scenarioSkill({ name, description, content, invocation, resourceBase }, provider) {
  return {
    name,
    description,
    content,
    ...(invocation ? { invocation } : {}),
    ...(resourceBase ? { resourceBase } : {}),
    ...(provider ? { rank: 500, source: 'scenario' } : {}),
  };
}

/** The `scenario` provider of a §7 file for the harness provider's state. */
function scenarioProvider({ skills, incomplete = false, listError = null }) {
  return { name: 'scenario', complete: !incomplete, fail: listError, skills: skills.map((entry) => scenarioSkill(entry, true)) };
}

/**
 * `scenario` as a §7 scenario file (an object): the configuration the
 * drop-in gives the component, runtime skills for `skills`, the provider
 * `scenario` for `providerSkills`, and the same steps.
 */
export function toReplayScenario(scenario) {
  const file = {
    config: { ...DROP_IN_COMPONENT_DEFAULTS, ...scenario.config },
    cwd: '/workspace',
    providers: [],
    runtime: (scenario.skills ?? []).map((entry) => scenarioSkill(entry, false)),
    steps: [],
  };
  let provider = scenario.providerSkills ? { skills: scenario.providerSkills } : null;
  if (provider) file.providers.push(scenarioProvider(provider));
  let toolView = 'visible';
  for (const step of scenario.steps) {
    switch (step.op) {
      case 'pre-step':
        file.steps.push({ op: 'pre-step', messages: (step.messages ?? []).map(proposedMessage), toolView });
        break;
      case 'invoke':
        file.steps.push(step.args ? { op: 'invoke', arguments: step.args } : { op: 'invoke', name: step.name });
        break;
      case 'compact':
        file.steps.push({ op: 'compact' });
        break;
      case 'set-skills':
        file.steps.push({ op: 'set-runtime', runtime: step.skills.map((entry) => scenarioSkill(entry, false)) });
        break;
      case 'provider':
        provider = { ...provider, ...step.change };
        file.steps.push({ op: 'set-providers', providers: [scenarioProvider(provider)] });
        break;
      case 'tool-view':
        toolView = step.view;
        break;
      case 'restart':
        break;
      default:
        throw new Error(`no §7 counterpart for step op ${step.op}`);
    }
  }
  return file;
}

/**
 * One model tool call as the harness's agent loop makes and records it
 * (dsh-agent-loop's `executeToolCalls`): a `tool/call` event, the call
 * through the tool runtime with that `callId`, and its `tool/result` (the
 * runtime's content, source `{ kind: 'tool', callId }`, and its `meta` when
 * the tool gave one, unless `keepMeta` is false: a loop that drops it).
 * Returns the runtime's result.
 */
export async function agentLoopCall(harness, args, callId, { keepMeta = true } = {}) {
  const { session } = harness;
  const callSeq = session.append('tool/call', { turn: 1, step: 1, callId, name: 'skill', arguments: JSON.stringify(args) }).seq;
  const result = await harness.ctx.tools.execute({ signal: new AbortController().signal, callId, name: 'skill', arguments: args, agent: harness.agent });
  session.append(
    'tool/result',
    {
      turn: 1,
      step: 1,
      message: createToolResultMessage({ callId, content: result.content, isError: result.isError }),
      ...(result.error?.info ? { error: result.error.info } : {}),
      ...(keepMeta && result.meta !== undefined ? { meta: result.meta } : {}),
    },
    { surfaceOp: 'append', sourceEventSeqs: [callSeq] },
  );
  return JSON.parse(JSON.stringify(result));
}

/**
 * Runs `scenario` in the harness with `plugin` (the drop-in by default), as
 * an agent loop would: each tool call is made and recorded as the loop
 * does (`agentLoopCall`, with `options.keepMeta`). A `restart` step carries
 * the session on into a new harness (a new process: nothing of the old
 * one's memory), with the skills, provider and tool view as they are.
 * Returns what each deciding step observed.
 */
export async function runInHarness(scenario, plugin = PLUGINS.dropIn, options = {}) {
  const setup = {
    plugin,
    config: scenario.config ?? {},
    skills: scenario.skills ?? [],
    providerSkills: scenario.providerSkills ?? null,
  };
  let harness = await createHarness(setup);
  let provider = null;
  let toolView = 'visible';
  const observed = [];
  let calls = 0;
  for (const step of scenario.steps) {
    switch (step.op) {
      case 'pre-step':
        observed.push(await harness.preStep(step));
        break;
      case 'invoke':
        calls += 1;
        observed.push(await agentLoopCall(harness, step.args ?? { name: step.name }, `modes-call-${calls}`, options));
        break;
      case 'compact':
        harness.compact();
        break;
      case 'set-skills':
        harness.setSkills(step.skills);
        setup.skills = step.skills;
        break;
      case 'provider':
        harness.steerProvider(step.change);
        provider = { ...provider, ...step.change };
        break;
      case 'tool-view':
        harness.setToolView(step.view);
        toolView = step.view;
        break;
      case 'restart': {
        const { events, header } = harness.session;
        harness = await createHarness({ ...setup, events: [...events], cwd: header.cwd });
        if (provider !== null) harness.steerProvider(provider);
        harness.setToolView(toolView);
        break;
      }
      default:
        throw new Error(`unknown step op ${step.op}`);
    }
  }
  return observed;
}

/** A JSON value with every object's keys sorted (normalisation 3). */
export function sortedKeys(value) {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedKeys(value[key])]));
  }
  return value;
}

/** One entered message as replay records it (§7): `{ source, text }` for one text block. */
function recordedMessage({ source, content }) {
  const single = Array.isArray(content) && content.length === 1 && content[0].type === 'text';
  return single ? { source, text: content[0].text } : { source, content };
}

/** What the harness observed at each deciding step, in replay's record form (normalisations 1–3). */
export function harnessRecords(observed) {
  return observed.map((step) => {
    if ('decision' in step) {
      return sortedKeys(step.decision === 'enter' ? { kind: 'enter', messages: step.messages.map(recordedMessage) } : { kind: step.decision });
    }
    if ('isError' in step) {
      const text = step.content.length === 1 && step.content[0].type === 'text' ? step.content[0].text : step.content;
      return sortedKeys(step.isError ? { error: text } : { ok: step.value, text });
    }
    // A step the harness failed (`{ error }` from preStep): kept as it is, so it differs.
    return sortedKeys({ harnessFailure: step });
  });
}

/** Replay's records of the deciding steps (normalisation 4), keys sorted. */
export function replayRecords(scenario, document) {
  const file = toReplayScenario(scenario);
  return document.steps.filter((_record, index) => DECIDING.has(file.steps[index].op)).map(sortedKeys);
}

// The corpora: the public skills under tests/fixtures/corpus/ (every one of
// them, in every size), topped up with deterministic synthetic skills whose
// descriptions read like real ones: a first sentence saying what the skill
// does, a "Use when" sentence, and sometimes a sentence on how and one on
// what it is not for. Seeded; no network.

import { cpSync, mkdirSync, readdirSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const FIXTURE_ROOTS = ['tests/fixtures/corpus/anthropic-skills', 'tests/fixtures/corpus/dsh-agents-skills'];

// mulberry32: a small, well-known seeded generator (same numbers on every machine).
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = (r, list) => list[Math.floor(r() * list.length)];
const chance = (r, p) => r() < p;

// [stem for the name, verb for the first sentence, gerund for "Use when ..."]
const ACTIONS = [
  ['review', 'Reviews', 'reviewing'], ['audit', 'Audits', 'auditing'], ['draft', 'Drafts', 'drafting'],
  ['migrate', 'Migrates', 'migrating'], ['validate', 'Validates', 'validating'], ['refactor', 'Refactors', 'refactoring'],
  ['summarize', 'Summarizes', 'summarizing'], ['convert', 'Converts', 'converting'], ['benchmark', 'Benchmarks', 'benchmarking'],
  ['debug', 'Debugs', 'debugging'], ['generate', 'Generates', 'generating'], ['triage', 'Triages', 'triaging'],
  ['document', 'Documents', 'documenting'], ['upgrade', 'Upgrades', 'upgrading'], ['lint', 'Lints', 'linting'],
  ['profile', 'Profiles', 'profiling'], ['secure', 'Hardens', 'hardening'], ['test', 'Tests', 'testing'],
];

// [name part, noun phrase, what the skill checks]
const OBJECTS = [
  ['terraform-plans', 'Terraform plans', ['resource drift', 'destructive replacements', 'missing tags', 'provider version pins']],
  ['k8s-manifests', 'Kubernetes manifests', ['resource limits', 'liveness probes', 'image tags', 'RBAC scopes']],
  ['sql-migrations', 'SQL schema migrations', ['locking statements', 'backfills', 'index builds', 'rollback steps']],
  ['release-notes', 'release notes', ['breaking changes', 'contributor credits', 'upgrade steps', 'security fixes']],
  ['pdf-forms', 'fillable PDF forms', ['field names', 'checkbox states', 'signature blocks', 'page order']],
  ['api-docs', 'REST API reference pages', ['endpoint examples', 'status codes', 'auth headers', 'pagination notes']],
  ['ci-pipelines', 'CI pipeline definitions', ['cache keys', 'matrix builds', 'secret usage', 'job timeouts']],
  ['docker-images', 'Docker images', ['base image age', 'layer size', 'root users', 'exposed ports']],
  ['unit-tests', 'unit test suites', ['flaky assertions', 'slow fixtures', 'missing edge cases', 'shared state']],
  ['i18n-strings', 'translation string catalogs', ['missing keys', 'placeholder mismatches', 'plural forms', 'stale entries']],
  ['changelogs', 'changelog files', ['version headings', 'dates', 'link references', 'unreleased sections']],
  ['incident-reports', 'incident postmortems', ['timelines', 'root causes', 'action items', 'customer impact']],
  ['design-tokens', 'design token files', ['color contrast', 'spacing scales', 'naming rules', 'dark-mode pairs']],
  ['dependency-updates', 'dependency update pull requests', ['semver jumps', 'license changes', 'lockfile churn', 'advisories']],
  ['log-queries', 'log search queries', ['time ranges', 'field filters', 'sampling', 'cost estimates']],
  ['grpc-services', 'gRPC service definitions', ['field numbering', 'reserved tags', 'streaming calls', 'deadlines']],
  ['spreadsheets', 'spreadsheet workbooks', ['formula errors', 'hidden sheets', 'number formats', 'pivot sources']],
  ['slide-decks', 'presentation slide decks', ['title hierarchy', 'speaker notes', 'image credits', 'font usage']],
  ['shell-scripts', 'shell scripts', ['quoting', 'exit codes', 'set -e usage', 'temporary files']],
  ['graphql-schemas', 'GraphQL schemas', ['nullable fields', 'deprecations', 'resolver costs', 'naming']],
  ['onboarding-docs', 'onboarding guides', ['setup steps', 'access requests', 'glossary terms', 'first tasks']],
  ['feature-flags', 'feature flag configurations', ['stale flags', 'rollout percentages', 'owner fields', 'kill switches']],
  ['data-pipelines', 'batch data pipelines', ['schema drift', 'late partitions', 'retry policies', 'row counts']],
  ['accessibility', 'web page accessibility', ['alt text', 'focus order', 'ARIA roles', 'contrast ratios']],
  ['openapi-specs', 'OpenAPI specifications', ['operation IDs', 'schema references', 'examples', 'security schemes']],
  ['cron-jobs', 'scheduled cron jobs', ['overlapping runs', 'time zones', 'alerting', 'idempotence']],
  ['email-templates', 'transactional email templates', ['merge fields', 'plain-text parts', 'unsubscribe links', 'preheaders']],
  ['helm-charts', 'Helm charts', ['values defaults', 'template helpers', 'chart versions', 'hooks']],
  ['benchmarks', 'micro-benchmark suites', ['warm-up runs', 'variance', 'baseline files', 'units']],
  ['contracts', 'vendor contracts', ['renewal dates', 'liability caps', 'termination clauses', 'data terms']],
];

const CONTEXTS = [
  'before they are merged', 'in a pull request', 'across a monorepo', 'for a production rollout',
  'against the team conventions', 'after an outage', 'during a release freeze', 'for an external audit',
  'in a legacy codebase', 'before a customer handover',
];
const TRIGGERS = [
  'the user asks to {g} {o}', 'a pull request touches {o}', 'a task mentions {o} or asks whether they are safe to ship',
  'someone pastes {o} and asks what is wrong with them', 'the user is about to release and {o} changed',
  'a reviewer flags {o} as risky', 'the user asks for a checklist for {o}',
];
const ARTIFACTS = ['a findings table', 'a short report with file and line references', 'a patch', 'a checklist', 'inline review comments', 'a summary for the pull request description'];
const NOT_FOR = ['writing {o} from scratch', 'one-off questions about syntax', 'performance tuning', 'projects without a test environment', 'anything outside {o}'];

function sentenceCase(s) { return s[0].toUpperCase() + s.slice(1); }
function list(items) { return items.length === 1 ? items[0] : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`; }

function description(r, action, object) {
  const [, verb, gerund] = action;
  const [, noun, checks] = object;
  const fill = (t) => t.replaceAll('{o}', noun).replaceAll('{g}', action[0]).replaceAll('{n}', noun);
  const sentences = [];
  const what = `${verb} ${noun} ${pick(r, CONTEXTS)}`;
  const when = `Use when ${fill(pick(r, TRIGGERS))}${chance(r, 0.5) ? `, or when ${fill(pick(r, TRIGGERS))}` : ''}`;
  if (chance(r, 0.25)) {
    // As many real descriptions do, the trigger comes first and the first sentence is long.
    sentences.push(`${when}; ${gerund} ${noun} for ${list(checks.slice(0, 2 + Math.floor(r() * 3)))}.`);
  } else {
    sentences.push(`${what}${chance(r, 0.4) ? `, checking ${list(checks.slice(0, 1 + Math.floor(r() * 3)))}` : ''}.`);
    sentences.push(`${when}.`);
  }
  if (chance(r, 0.6)) sentences.push(`${sentenceCase(`checks ${list(checks.slice(Math.floor(r() * 2)))}`)}, and writes ${pick(r, ARTIFACTS)}.`);
  if (chance(r, 0.35)) sentences.push(`Not for ${fill(pick(r, NOT_FOR))}.`);
  if (chance(r, 0.2)) sentences.push(`Works with ${pick(r, ['GitHub', 'GitLab', 'local checkouts', 'any CI system'])} and needs no network access beyond the repository.`);
  return sentences.join(' ');
}

// N synthetic skills, none named like a fixture skill.
export function synthetic(count, seed, taken) {
  const r = rng(seed);
  const skills = [];
  const used = new Set(taken);
  let guard = 0;
  while (skills.length < count) {
    if (++guard > count * 50) throw new Error('could not name enough synthetic skills');
    const action = pick(r, ACTIONS);
    const object = pick(r, OBJECTS);
    let name = `${action[0]}-${object[0]}`;
    for (let k = 2; used.has(name); k++) name = `${action[0]}-${object[0]}-${k}`;
    used.add(name);
    skills.push({ name, description: description(r, action, object) });
  }
  return skills;
}

const yamlQuote = (s) => `"${s.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

// Copies every fixture skill into `dir`; returns their names.
export function stageFixtures(repo, dir) {
  mkdirSync(dir, { recursive: true });
  const names = [];
  for (const root of FIXTURE_ROOTS) {
    for (const entry of readdirSync(join(repo, root), { withFileTypes: true })) {
      if (!entry.isDirectory() || !existsSync(join(repo, root, entry.name, 'SKILL.md'))) continue;
      cpSync(join(repo, root, entry.name), join(dir, entry.name), { recursive: true });
      names.push(entry.name);
    }
  }
  return names;
}

// Writes `count` synthetic skills into `dir`, named unlike any of `taken`.
export function stageSynthetic(dir, count, seed, taken) {
  const extra = synthetic(count, seed, taken);
  for (const skill of extra) {
    mkdirSync(join(dir, skill.name));
    writeFileSync(join(dir, skill.name, 'SKILL.md'),
      `---\nname: ${skill.name}\ndescription: ${yamlQuote(skill.description)}\n---\n\n# ${skill.name}\n\nInstructions for ${skill.name}.\n`);
  }
  return extra.length;
}

// The differential scenarios: each runs once with the published plugin and
// once with the drop-in in the same harness set-up (harness.mjs), and what
// they observe must be identical. `switch` steps move the session to a new
// harness with the other plugin, in both directions.

const skill = (name, description, extra = {}) => ({ name, description, content: `# ${name}\n\nSteps for ${name}.`, ...extra });

const PDF = skill('pdf-forms', 'Fill and check PDF forms.');
const RELEASE = skill('release-notes', 'Draft release notes from merged pull requests.');
const DEPLOY = skill('deploy-production', 'Deploy to production.', {
  invocation: { modelInvocable: false, userInvocable: true },
});
const INTERNAL = skill('internal-audit', 'Audit internal state.', {
  invocation: { modelInvocable: true, userInvocable: false },
});

export const SCENARIOS = [
  {
    name: 'lifecycle: initial, unchanged, replacement, empty replacement, re-listed',
    skills: [PDF],
    steps: [
      { op: 'pre-step', messages: ['Please fill the form.'] },
      { op: 'pre-step' },
      { op: 'turn' },
      { op: 'pre-step', messages: ['And the next one.'] },
      { op: 'set-skills', skills: [PDF, RELEASE] },
      { op: 'pre-step' },
      { op: 'set-skills', skills: [] },
      { op: 'pre-step' },
      { op: 'pre-step' },
      { op: 'set-skills', skills: [RELEASE] },
      { op: 'pre-step' },
    ],
  },
  {
    name: 'nothing listed: no catalog, no tombstone',
    skills: [],
    steps: [{ op: 'pre-step', messages: ['hi'] }, { op: 'pre-step' }],
  },
  {
    name: 'only skills the model may not invoke: no catalog',
    skills: [DEPLOY],
    steps: [{ op: 'pre-step', messages: ['hi'] }, { op: 'invoke', name: 'deploy-production' }],
  },
  {
    name: 'descriptions: whitespace, escaping, the cap, astral characters that fit',
    config: { catalogDescriptionMaxLength: 24 },
    skills: [
      skill('spacing', '  Tabs\tand\n\nnewlines \u00a0 and\u2003spaces  '),
      skill('escaping', 'Use <b> & "quotes" > here'),
      skill('long-one', 'This description is far longer than the cap allows.'),
      skill('emoji-ok', '😀😀😀 fine here'),
      skill('exact-cap', 'x'.repeat(24)),
    ],
    steps: [{ op: 'pre-step', messages: ['hi'] }],
  },
  {
    name: 'compaction hides the catalog: the next step re-establishes it as an update',
    skills: [PDF, RELEASE],
    steps: [
      { op: 'pre-step', messages: ['start'] },
      { op: 'turn' },
      { op: 'pre-step', messages: ['more'] },
      { op: 'compact', start: 'first', end: 'last' },
      { op: 'pre-step' },
      { op: 'pre-step' },
      { op: 'turn' },
      { op: 'compact', start: 'catalog', end: 'catalog', text: 'Catalog summarised.' },
      { op: 'pre-step', messages: ['again'] },
    ],
  },
  {
    name: 'incomplete snapshots keep the last catalog; a complete one replaces it',
    providerSkills: [PDF, RELEASE],
    steps: [
      { op: 'pre-step', messages: ['start'] },
      { op: 'provider', change: { incomplete: true, skills: [PDF] } },
      { op: 'pre-step' },
      { op: 'provider', change: { incomplete: false, listError: 'index unreachable' } },
      { op: 'pre-step', messages: ['/pdf-forms now'] },
      { op: 'invoke', name: 'release-notes' },
      { op: 'provider', change: { listError: null } },
      { op: 'pre-step' },
    ],
  },
  {
    name: 'an incomplete first snapshot publishes nothing',
    providerSkills: [PDF],
    steps: [
      { op: 'provider', change: { incomplete: true } },
      { op: 'pre-step', messages: ['hi'] },
      { op: 'provider', change: { incomplete: false } },
      { op: 'pre-step' },
    ],
  },
  {
    name: 'hidden and shadowed tools retire the catalog; visible again republishes it',
    skills: [PDF],
    steps: [
      { op: 'pre-step', messages: ['start'] },
      { op: 'tool-view', view: 'hidden' },
      { op: 'pre-step' },
      { op: 'pre-step' },
      { op: 'tool-view', view: 'visible' },
      { op: 'pre-step' },
      { op: 'tool-view', view: 'shadowed' },
      { op: 'pre-step', messages: ['/pdf-forms still works for users'] },
      { op: 'tool-view', view: 'visible' },
      { op: 'pre-step' },
    ],
  },
  {
    name: 'a hidden tool from the start publishes nothing',
    skills: [PDF],
    steps: [
      { op: 'tool-view', view: 'hidden' },
      { op: 'pre-step', messages: ['hi'] },
    ],
  },
  {
    name: 'proposed catalogs: a current one is dropped, a stale one replaced in place',
    skills: [PDF],
    steps: [
      { op: 'pre-step', messages: ['start'] },
      {
        op: 'pre-step',
        messages: [
          'x',
          {
            text: 'an old catalog',
            source: { kind: 'skill-catalog', form: 'catalog', entries: [{ name: 'pdf-forms', description: 'Fill and check PDF forms.' }] },
          },
          'y',
        ],
      },
      { op: 'set-skills', skills: [PDF, RELEASE] },
      {
        op: 'pre-step',
        messages: [
          'x',
          { text: 'stale', source: { kind: 'skill-catalog', form: 'catalog', entries: [{ name: 'gone', description: 'Gone.' }] } },
          'y',
        ],
      },
      {
        op: 'pre-step',
        messages: [
          {
            text: 'unreadable catalog',
            source: { kind: 'skill-catalog', form: 'catalog', entries: [{ name: '', description: 'x' }] },
          },
        ],
      },
    ],
  },
  {
    name: 'a proposed catalog that is current before anything was published',
    skills: [PDF],
    steps: [
      {
        op: 'pre-step',
        messages: [
          'hello',
          {
            text: 'proposed by another listener',
            source: { kind: 'skill-catalog', form: 'catalog', entries: [{ name: 'pdf-forms', description: 'Fill and check PDF forms.' }] },
          },
        ],
      },
      { op: 'pre-step' },
    ],
  },
  {
    name: 'tool errors and every resource guidance',
    skills: [PDF, DEPLOY],
    providerSkills: [
      skill('dir-skill', 'Has a directory.', { resourceBase: { kind: 'directory', path: '/skills/dir-skill' } }),
      skill('url-skill', 'Has a URL.', { resourceBase: { kind: 'url', url: 'https://example.invalid/skills/url-skill/' } }),
      skill('opaque-skill', 'Has guidance.', { resourceBase: { kind: 'opaque', description: 'Ask the <team> & wait.' } }),
      skill('broken-skill', 'Fails to load.'),
    ],
    steps: [
      { op: 'provider', change: { getErrors: { 'broken-skill': 'disk read failed: EIO' } } },
      { op: 'pre-step', messages: ['start'] },
      { op: 'invoke', name: 'pdf-forms' },
      { op: 'invoke', name: 'dir-skill' },
      { op: 'invoke', name: 'url-skill' },
      { op: 'invoke', name: 'opaque-skill' },
      { op: 'invoke', name: 'Bad Name' },
      { op: 'invoke', name: '' },
      { op: 'invoke', name: 'no-such-skill' },
      { op: 'invoke', name: 'deploy-production' },
      { op: 'invoke', name: 'broken-skill' },
      { op: 'invoke', args: {} },
      { op: 'invoke', args: { name: 7 } },
      { op: 'invoke', args: { name: 'pdf-forms', extra: true } },
    ],
  },
  {
    name: 'user /name invocation',
    skills: [PDF, RELEASE, DEPLOY, INTERNAL],
    steps: [
      { op: 'pre-step', messages: ['Run /deploy-production and /pdf-forms, then /pdf-forms again'] },
      { op: 'pre-step', messages: ['/internal-audit /unknown-skill /release-notes'] },
      { op: 'pre-step', messages: ['paths /usr/bin, 5/8, foo/bar, (/pdf-forms), /pdf-forms. /Pdf-forms'] },
      { op: 'pre-step', messages: [{ text: '/pdf-forms from a plugin', kind: 'reminders' }] },
      { op: 'pre-step', messages: ['first /pdf-forms', 'second\n/release-notes\tand /pdf-forms'] },
      { op: 'tool-view', view: 'hidden' },
      { op: 'pre-step', messages: ['/deploy-production while hidden'] },
    ],
  },
  {
    name: 'an aborted step fails as the published plugin fails it',
    skills: [PDF],
    steps: [{ op: 'pre-step', messages: ['hi'], aborted: true }, { op: 'pre-step', messages: ['hi'] }],
  },
];

/**
 * Scenarios that move one session between the two plugins: each runs
 * published→drop-in and drop-in→published, and both must observe what
 * published→published observes.
 */
export const SWITCH_SCENARIOS = [
  {
    name: 'switched after the first catalog: no duplicate, then a replacement',
    skills: [PDF],
    steps: [
      { op: 'pre-step', messages: ['start'] },
      { op: 'switch' },
      { op: 'pre-step', messages: ['continue'] },
      { op: 'set-skills', skills: [PDF, RELEASE] },
      { op: 'pre-step' },
      { op: 'switch' },
      { op: 'pre-step' },
      { op: 'set-skills', skills: [] },
      { op: 'pre-step' },
    ],
  },
  {
    name: 'switched after compaction hid the catalog',
    skills: [PDF, RELEASE],
    steps: [
      { op: 'pre-step', messages: ['start'] },
      { op: 'turn' },
      { op: 'compact', start: 'first', end: 'last' },
      { op: 'switch' },
      { op: 'pre-step', messages: ['/release-notes please'] },
      { op: 'switch' },
      { op: 'pre-step' },
    ],
  },
  {
    name: 'switched while the skills changed',
    skills: [PDF],
    steps: [
      { op: 'pre-step', messages: ['start'] },
      { op: 'set-skills', skills: [RELEASE] },
      { op: 'switch' },
      { op: 'pre-step' },
      { op: 'invoke', name: 'release-notes' },
      { op: 'invoke', name: 'pdf-forms' },
    ],
  },
];

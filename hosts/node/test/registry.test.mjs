// Body digests (host-runner/src/registry/types.rs `body_digest`): the in-memory
// provider and runtime skills carry the digest of their content, and the
// imports pass it to the plugin in `skill-summary` and `skill-definition`;
// a summary carries its `whenToUse` too (dsh:skill@0.3.0).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';

import { CallContext } from '../src/host-imports.mjs';
import { MemoryProvider } from '../src/memory-provider.mjs';
import { bodyDigest, RuntimeSkill, SkillRegistry } from '../src/registry.mjs';

const digest = (text) => `sha256:${createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex')}`;

test('a body digest is sha256 in lowercase hex of the UTF-8 bytes', () => {
  assert.equal(bodyDigest(''), 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  assert.equal(bodyDigest('é\u{1F600}'), digest('é\u{1F600}'));
});

test('listed and loaded skills carry the digest of their body', () => {
  const skills = [
    { fields: { name: 'a', description: 'A.', content: 'Listed body.' }, loaded: { content: 'Loaded body.' } },
    { fields: { name: 'b', description: 'B.', content: 'B body.' }, loaded: undefined },
  ];
  const registry = new SkillRegistry();
  registry.setProviders([new MemoryProvider('m', true, null, skills)]);
  registry.registerRuntime(new RuntimeSkill('r', 'R.', 'Runtime body.'));
  const host = new CallContext({ registry, cwd: '/w' });

  const snapshot = host.snapshot(undefined);
  assert.equal(snapshot.tag, 'ok');
  const listed = Object.fromEntries(snapshot.val.val.skills.map((skill) => [skill.name, skill.bodyDigest]));
  assert.deepEqual(listed, { a: digest('Listed body.'), b: digest('B body.'), r: digest('Runtime body.') });
  assert.deepEqual(
    host.listSkills('a').val.map((skill) => skill.bodyDigest),
    [digest('Listed body.')],
  );
  // A load that finds another body reports the body it found.
  assert.equal(host.getSkill('a').val.bodyDigest, digest('Loaded body.'));
  assert.equal(host.getSkill('a').val.content, 'Loaded body.');
  assert.equal(host.getSkill('b').val.bodyDigest, digest('B body.'));
  assert.equal(host.getSkill('r').val.bodyDigest, digest('Runtime body.'));
});

test('a skill without a digest passes none', () => {
  const provider = {
    name: 'x',
    list: () => ({
      candidates: [
        {
          name: 'a',
          description: 'A.',
          whenToUse: null,
          invocation: { modelInvocable: true, userInvocable: true },
          source: 'x',
          provider: 'x',
          resourceBase: null,
          rank: 100n,
          path: null,
          bodyDigest: null,
        },
      ],
      complete: true,
    }),
    load: (_cwd, candidate) => ({ summary: { ...candidate }, content: 'c' }),
  };
  const registry = new SkillRegistry();
  registry.setProviders([provider]);
  const host = new CallContext({ registry, cwd: null });
  const [summary] = host.listSkills(undefined).val;
  assert.ok(Object.hasOwn(summary, 'bodyDigest'));
  assert.equal(summary.bodyDigest, undefined);
  assert.equal(host.getSkill('a').val.bodyDigest, undefined);
});

test("a skill summary carries the provider's whenToUse, as skill-host passes it", () => {
  const skills = [
    { fields: { name: 'a', description: 'A.', whenToUse: 'When a PDF is attached.', content: 'a' } },
    { fields: { name: 'b', description: 'B.', content: 'b' } },
  ];
  const registry = new SkillRegistry();
  registry.setProviders([new MemoryProvider('m', true, null, skills)]);
  const runtime = new RuntimeSkill('r', 'R.', 'r');
  runtime.whenToUse = 'Always.';
  registry.registerRuntime(runtime);
  const host = new CallContext({ registry, cwd: '/w' });
  const expected = { a: 'When a PDF is attached.', b: undefined, r: 'Always.' };
  const whenToUse = (skills) => Object.fromEntries(skills.map((skill) => [skill.name, skill.whenToUse]));
  assert.deepEqual(whenToUse(host.snapshot(undefined).val.val.skills), expected);
  assert.deepEqual(whenToUse(host.listSkills(undefined).val), expected);
  // jco writes an option that is none from undefined (or null); the key is there.
  assert.ok(host.listSkills('b').val.every((skill) => Object.hasOwn(skill, 'whenToUse')));
});

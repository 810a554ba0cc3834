// A skill's files through the drop-in (contract 0.4.0, docs/spec.md §3.15):
// dsh/files.mjs lists and reads the files below a local skill's folder
// with the design's rules (only skills the harness's filesystem provider
// listed, hidden files skipped, links only when they resolve beneath the
// folder as RESOLVE_BENEATH does to a file served as itself, regular files
// only, the 1 MiB cap, binary text, byte order, the walk's limits), and the
// published harness, with its own filesystem provider, reads a file and
// lists a manifest through the `skill` tool (`skillReads`,
// `skillResourceManifest`), and serves none of a runtime skill's or another
// provider's.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { PLUGINS, createHarness } from '../dsh-harness/harness.mjs';
import { HarnessCallContext } from '../dsh/bridge.mjs';
import { listSkillFiles, MAX_SKILL_FILES, MAX_WALK_ENTRIES, readSkillFile, skillFilesOf } from '../dsh/files.mjs';

const scratch = mkdtempSync(path.join(tmpdir(), 'dsh-files-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Writes `files` (path → text or bytes) below `root`. */
function write(root, files) {
  for (const [relative, contents] of Object.entries(files)) {
    const at = path.join(root, ...relative.split('/'));
    mkdirSync(path.dirname(at), { recursive: true });
    writeFileSync(at, contents);
  }
}

const SKILL_MD = '---\nname: deploy\ndescription: Deploy the service.\n---\n# Deploy\nSee references/api.md.\n';
/** The body the harness's filesystem provider loads from SKILL_MD. */
const SKILL_BODY = '# Deploy\nSee references/api.md.';

/**
 * A skills root with a bundle `deploy` (its files, a hidden file and
 * folder, links in and out of its folder, a binary, a non-UTF-8, an
 * oversized file) and a flat skill `notes.md`; a secret outside both.
 */
function skillsRoot(name) {
  const base = path.join(scratch, name);
  const root = path.join(base, 'skills');
  const deploy = path.join(root, 'deploy');
  write(base, { 'outside/secret.md': 'secret', 'outside/dir/inner.md': 'inner secret' });
  write(deploy, {
    'SKILL.md': SKILL_MD,
    'references/api.md': '\ufeffAPI <reference> & more.\n',
    'scripts/run.sh': '#!/bin/sh\necho run\n',
    'Zeta.md': 'upper case sorts first',
    'é.md': 'two bytes',
    'z.md': 'one byte',
    '.hidden.md': 'hidden',
    '.git/config': 'hidden folder',
    'logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]),
    'latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9]),
    'big.txt': Buffer.alloc(1024 * 1024 + 1, 0x61),
    'max.txt': Buffer.alloc(1024 * 1024, 0x62),
  });
  symlinkSync(path.join(base, 'outside', 'secret.md'), path.join(deploy, 'link-out.md'));
  symlinkSync('../../outside/secret.md', path.join(deploy, 'relative-out.md'));
  symlinkSync(path.join(base, 'outside', 'dir'), path.join(deploy, 'dir-out'));
  symlinkSync('references/api.md', path.join(deploy, 'link-in.md'));
  symlinkSync('.hidden.md', path.join(deploy, 'link-hidden.md'));
  symlinkSync('SKILL.md', path.join(deploy, 'link-skill.md'));
  symlinkSync('references', path.join(deploy, 'refs'));
  symlinkSync('missing.md', path.join(deploy, 'dangling.md'));
  write(root, { 'notes.md': '---\nname: notes\ndescription: Notes.\n---\nNotes body.\n' });
  return { base, root, deploy };
}

const fixture = skillsRoot('fixture');
const bundle = { kind: 'bundle', folder: fixture.deploy };

test('where a skill has files: one the filesystem provider listed, a bundle or a flat file; no other', () => {
  const { root, deploy } = fixture;
  const filesystem = (resourceBase, file) => ({ provider: 'filesystem', resourceBase, path: file });
  const folder = (at) => ({ kind: 'directory', path: at });
  assert.deepEqual(skillFilesOf(filesystem(folder(deploy), path.join(deploy, 'SKILL.md'))), bundle);
  assert.deepEqual(skillFilesOf(filesystem(folder(root), path.join(root, 'notes.md'))), {
    kind: 'flat',
    file: path.join(root, 'notes.md'),
  });
  assert.equal(skillFilesOf({ name: 'runtime' }), null);
  // Another provider's skill, a runtime skill: none, whatever its resource base and path.
  for (const provider of ['runtime', 'scenario', 'filesystem-2', undefined]) {
    assert.equal(skillFilesOf({ provider, resourceBase: folder(deploy), path: path.join(deploy, 'SKILL.md') }), null, provider);
    assert.equal(skillFilesOf({ provider, resourceBase: folder(deploy) }), null, provider);
  }
  // The filesystem provider's marks: an absolute path in the folder that is its resource base.
  assert.equal(skillFilesOf(filesystem(folder(deploy))), null);
  assert.equal(skillFilesOf(filesystem(folder(deploy), 'deploy/SKILL.md')), null);
  assert.equal(skillFilesOf(filesystem(folder(root), path.join(deploy, 'SKILL.md'))), null);
  assert.equal(skillFilesOf(filesystem(folder('/etc'), path.join(deploy, 'SKILL.md'))), null);
  assert.equal(skillFilesOf(filesystem(folder(root), path.join(root, 'notes.txt'))), null);
  assert.equal(skillFilesOf(filesystem({ kind: 'url', url: 'https://skills.invalid/x' }, path.join(deploy, 'SKILL.md'))), null);
  assert.equal(skillFilesOf(filesystem(folder('relative/dir'), 'relative/dir/SKILL.md')), null);
});

test('a listing: regular files below the folder, hidden ones and links out skipped, in byte order, sizes given', async () => {
  const listing = await listSkillFiles('deploy', bundle, 100);
  const paths = listing.files.map((file) => file.path);
  assert.deepEqual(paths, [
    'Zeta.md',
    'big.txt',
    'latin1.txt',
    'link-in.md',
    'logo.png',
    'max.txt',
    'references/api.md',
    'scripts/run.sh',
    'z.md',
    'é.md',
  ]);
  assert.equal(listing.total, 10n);
  assert.equal(listing.files.find((file) => file.path === 'logo.png').size, 6n);
  assert.equal(listing.files.find((file) => file.path === 'link-in.md').size, BigInt(Buffer.byteLength('\ufeffAPI <reference> & more.\n')));
  // The first `limit`, and how many there are in all.
  assert.deepEqual(await listSkillFiles('deploy', bundle, 2), {
    files: [
      { path: 'Zeta.md', size: 22n },
      { path: 'big.txt', size: 1048577n },
    ],
    total: 10n,
  });
  assert.deepEqual(await listSkillFiles('notes', { kind: 'flat', file: path.join(fixture.root, 'notes.md') }, 10), { files: [], total: 0n });
});

test('reads: text whole (a BOM kept), binary, too large, and missing for what the listing does not serve', async () => {
  const read = (relative) => readSkillFile('deploy', bundle, relative);
  assert.deepEqual(await read('references/api.md'), { tag: 'text', val: '\ufeffAPI <reference> & more.\n' });
  assert.deepEqual(await read('link-in.md'), { tag: 'text', val: '\ufeffAPI <reference> & more.\n' });
  // SKILL.md only with the body the harness loaded for the skill.
  assert.deepEqual(await readSkillFile('deploy', bundle, 'SKILL.md', SKILL_BODY), { tag: 'text', val: SKILL_MD });
  assert.deepEqual(await read('SKILL.md'), { tag: 'missing' });
  assert.deepEqual(await readSkillFile('deploy', bundle, 'SKILL.md', 'Another body.'), { tag: 'missing' });
  assert.deepEqual(await read('logo.png'), { tag: 'binary', val: 6n });
  assert.deepEqual(await read('latin1.txt'), { tag: 'binary', val: 4n });
  assert.deepEqual(await read('big.txt'), { tag: 'too-large', val: 1048577n });
  assert.equal((await read('max.txt')).val.length, 1024 * 1024);
  for (const refused of [
    'link-out.md', // a link out of the folder
    'relative-out.md',
    'dir-out/inner.md', // through a link to a folder outside
    'refs/api.md', // through a link to a folder inside: the walk does not follow it
    'link-hidden.md', // a link to a hidden file
    'link-skill.md', // a link to the skill file
    'dangling.md',
    'references', // a folder
    'nothing.md',
    '.hidden.md', // outside the grammar: not looked at
    '.git/config',
    '../notes.md',
    'references/../SKILL.md',
    '/etc/passwd',
  ]) {
    assert.deepEqual(await read(refused), { tag: 'missing' }, refused);
  }
  const flat = { kind: 'flat', file: path.join(fixture.root, 'notes.md') };
  assert.deepEqual(await readSkillFile('notes', flat, 'SKILL.md', 'Notes body.'), {
    tag: 'text',
    val: '---\nname: notes\ndescription: Notes.\n---\nNotes body.\n',
  });
  assert.deepEqual(await readSkillFile('notes', flat, 'SKILL.md'), { tag: 'missing' });
  assert.deepEqual(await readSkillFile('notes', flat, 'deploy/SKILL.md'), { tag: 'missing' });
});

test("over the walk's limits a listing and a read fail with its text", async () => {
  const many = path.join(scratch, 'many');
  write(many, Object.fromEntries(Array.from({ length: MAX_SKILL_FILES }, (_, index) => [`f/${index}.md`, 'x'])));
  write(many, { 'SKILL.md': SKILL_MD });
  const where = { kind: 'bundle', folder: many };
  const text = 'skill "many" has more than 512 files; the Skills extension allows at most 512 per skill';
  await assert.rejects(listSkillFiles('many', where, 1), { message: text });
  await assert.rejects(readSkillFile('many', where, 'f/1.md'), { message: text });
  // Without SKILL.md's share the same 512 are served.
  rmSync(path.join(many, 'f', '0.md'));
  assert.equal((await listSkillFiles('many', where, 1)).total, 511n);
});

test('links resolve beneath the folder as RESOLVE_BENEATH does: no absolute target, no step above the folder', async () => {
  const demo = path.join(scratch, 'links', 'demo');
  write(demo, { 'SKILL.md': SKILL_MD, 'a.md': 'A.', 'sub/b.md': 'B.' });
  symlinkSync(path.join(demo, 'a.md'), path.join(demo, 'abs.md')); // absolute, though inside the folder
  symlinkSync('../../demo/a.md', path.join(demo, 'sub', 'up.md')); // above the folder and back down
  symlinkSync('../a.md', path.join(demo, 'sub', 'rel.md'));
  symlinkSync('sub', path.join(demo, 'folder-link'));
  symlinkSync('../folder-link/../a.md', path.join(demo, 'sub', 'through.md')); // `..` of the folder the link led to
  symlinkSync('folder-link/../../demo/a.md', path.join(demo, 'through-up.md'));
  symlinkSync('loop.md', path.join(demo, 'loop.md'));
  const where = { kind: 'bundle', folder: demo };
  const listing = await listSkillFiles('demo', where, 100);
  assert.deepEqual(
    listing.files.map((file) => file.path),
    ['a.md', 'sub/b.md', 'sub/rel.md', 'sub/through.md'],
  );
  assert.deepEqual(await readSkillFile('demo', where, 'sub/rel.md'), { tag: 'text', val: 'A.' });
  assert.deepEqual(await readSkillFile('demo', where, 'sub/through.md'), { tag: 'text', val: 'A.' });
  for (const refused of ['abs.md', 'sub/up.md', 'through-up.md', 'loop.md', 'folder-link/b.md']) {
    assert.deepEqual(await readSkillFile('demo', where, refused), { tag: 'missing' }, refused);
  }
});

test(`past ${MAX_WALK_ENTRIES} entries below the folder a listing and every read fail`, async () => {
  const crowded = path.join(scratch, 'crowded');
  // Hidden files count as entries, so do folders; the top SKILL.md does not.
  write(crowded, { 'SKILL.md': SKILL_MD, 'a.md': 'A.' });
  mkdirSync(path.join(crowded, 'pile'));
  for (let index = 0; index < MAX_WALK_ENTRIES - 2; index += 1) writeFileSync(path.join(crowded, 'pile', `.${index}`), '');
  const where = { kind: 'bundle', folder: crowded };
  // a.md, pile and the files in it: exactly the bound.
  assert.deepEqual(await listSkillFiles('crowded', where, 5), { files: [{ path: 'a.md', size: 2n }], total: 1n });
  writeFileSync(path.join(crowded, '.one-more'), '');
  const text = `skill "crowded" has more than ${MAX_WALK_ENTRIES} entries below its folder; at most ${MAX_WALK_ENTRIES} are looked at`;
  await assert.rejects(listSkillFiles('crowded', where, 5), { message: text });
  await assert.rejects(readSkillFile('crowded', where, 'a.md'), { message: text });
  await assert.rejects(readSkillFile('crowded', where, 'SKILL.md'), { message: text });
});

test('the bridge: the winner found as get-skill finds it, its failures and aborts, no folder is none or unavailable', async () => {
  const skills = {
    deploy: {
      name: 'deploy',
      provider: 'filesystem',
      resourceBase: { kind: 'directory', path: fixture.deploy },
      path: path.join(fixture.deploy, 'SKILL.md'),
    },
    runtime: { name: 'runtime', provider: 'runtime', content: 'Body.' },
    // A runtime skill whose resource base is a folder of files: it serves none of them.
    folder: { name: 'folder', provider: 'runtime', resourceBase: { kind: 'directory', path: fixture.deploy }, content: 'Body.' },
  };
  let aborted = false;
  const registry = {
    get: async (name) => {
      if (name === 'broken') throw new Error('provider "p" failed');
      return skills[name];
    },
  };
  const context = new HarnessCallContext({ registry, aborted: () => aborted });
  assert.deepEqual(await context.listSkillFiles('deploy', 1), { tag: 'ok', val: { files: [{ path: 'Zeta.md', size: 22n }], total: 10n } });
  assert.deepEqual(await context.readSkillFile('deploy', 'z.md'), { tag: 'ok', val: { tag: 'text', val: 'one byte' } });
  assert.deepEqual(await context.readSkillFile('deploy', 'link-out.md'), { tag: 'ok', val: { tag: 'missing' } });
  assert.deepEqual(await context.listSkillFiles('runtime', 5), { tag: 'ok', val: undefined });
  assert.deepEqual(await context.readSkillFile('runtime', 'a.md'), { tag: 'ok', val: { tag: 'unavailable' } });
  assert.deepEqual(await context.listSkillFiles('folder', 5), { tag: 'ok', val: undefined });
  assert.deepEqual(await context.readSkillFile('folder', 'z.md'), { tag: 'ok', val: { tag: 'unavailable' } });
  assert.deepEqual(await context.readSkillFile('gone', 'a.md'), { tag: 'ok', val: { tag: 'unavailable' } });
  // A path outside the grammar is missing before any lookup.
  assert.deepEqual(await context.readSkillFile('gone', '../a.md'), { tag: 'ok', val: { tag: 'missing' } });
  const failed = { tag: 'err', val: { tag: 'failed', val: 'provider "p" failed' } };
  assert.deepEqual(await context.listSkillFiles('broken', 5), failed);
  assert.deepEqual(await context.readSkillFile('broken', 'a.md'), failed);
  aborted = true;
  assert.deepEqual(await context.readSkillFile('deploy', 'z.md'), { tag: 'err', val: { tag: 'aborted' } });
  assert.deepEqual(await context.listSkillFiles('deploy', 5), { tag: 'err', val: { tag: 'aborted' } });
});

/** A harness with the drop-in under `config` over the harness's own filesystem provider on `root`. */
async function filesystemHarness(root, config, extra = {}) {
  const filesystem = await import('@deepseek-ai/dsh-skill-filesystem');
  const homes = path.join(scratch, `homes-${path.basename(path.dirname(root))}`);
  for (const home of ['dsh-home', 'agents-home']) mkdirSync(path.join(homes, home), { recursive: true });
  return createHarness({
    plugin: PLUGINS.dropIn,
    config,
    cwd: path.dirname(root),
    mount: (ctx) =>
      ctx.plugin(filesystem, {
        watch: false,
        includeDefaultRoots: false,
        customSkillDirs: [root],
        dshHome: path.join(homes, 'dsh-home'),
        agentsHome: path.join(homes, 'agents-home'),
      }),
    ...extra,
  });
}

test('through the published harness: a file read by `path`, and a whole load listing its files', async () => {
  const harness = await filesystemHarness(fixture.root, { skillReads: true, skillResourceManifest: 20 });
  const definition = harness.definition();
  assert.ok(Object.hasOwn(definition.parameters.properties, 'path'), JSON.stringify(definition.parameters));
  const read = await harness.invoke({ name: 'deploy', path: 'references/api.md' });
  assert.equal(read.isError, false, JSON.stringify(read));
  assert.deepEqual(read.value, { name: 'deploy', provider: 'filesystem', path: 'references/api.md', content: '\ufeffAPI <reference> & more.\n' });
  // The model sees the component's text for the value, not a skill's rendering of it.
  assert.equal(read.content.length, 1);
  assert.match(read.content[0].text, /^<skill_file name="deploy" path="references\/api.md">\n/);
  assert.ok(read.content[0].text.includes('\ufeffAPI <reference> & more.\n'), read.content[0].text);
  // The card says what is read.
  const tool = harness.ctx.tools.get('skill', harness.agent);
  assert.equal(tool.presentCall({ name: 'deploy', path: 'references/api.md' }).title, 'Read references/api.md of skill deploy');
  // A whole load ends with the manifest: served files only.
  const load = await harness.invoke({ name: 'deploy' });
  assert.equal(load.isError, false, JSON.stringify(load));
  const text = load.content[0].text;
  for (const listed of ['references/api.md', 'scripts/run.sh', 'link-in.md', 'logo.png']) assert.ok(text.includes(listed), `${listed} in ${text}`);
  for (const unlisted of ['.hidden.md', '.git/config', 'link-out.md', 'relative-out.md', 'dir-out', 'link-hidden.md', 'secret']) {
    assert.ok(!text.includes(unlisted), `${unlisted} in ${text}`);
  }
  // A link out of the folder and a hidden file: neither is read.
  const out = await harness.invoke({ name: 'deploy', path: 'link-out.md' });
  assert.equal(out.isError, true);
  assert.match(JSON.stringify(out.content), /has no file \\"link-out.md\\"/);
  assert.doesNotMatch(JSON.stringify(out), /secret/);
  const hidden = await harness.invoke({ name: 'deploy', path: '.hidden.md' });
  assert.equal(hidden.isError, true);
  assert.match(JSON.stringify(hidden.content), /is not a path inside a skill/);
  // A binary file is not read; a flat skill has only itself.
  const binary = await harness.invoke({ name: 'deploy', path: 'logo.png' });
  assert.equal(binary.isError, true);
  assert.match(JSON.stringify(binary.content), /is not text/);
  const flat = await harness.invoke({ name: 'notes', path: 'SKILL.md' });
  assert.equal(flat.isError, false, JSON.stringify(flat));
  assert.match(flat.value.content, /Notes body\./);
  const flatOther = await harness.invoke({ name: 'notes', path: 'deploy/SKILL.md' });
  assert.equal(flatOther.isError, true);
});

test('skillResourceManifest is passed as given: the component refuses a bad value in its words', async () => {
  await assert.rejects(
    filesystemHarness(fixture.root, { skillResourceManifest: 0 }),
    { message: 'tool-skill: skillResourceManifest must be an integer from 1 to 1000' },
  );
  const harness = await filesystemHarness(fixture.root, { skillResourceManifest: 2 });
  const load = await harness.invoke({ name: 'deploy' });
  assert.equal(load.isError, false, JSON.stringify(load));
  assert.match(load.content[0].text, /Zeta\.md/);
  assert.doesNotMatch(load.content[0].text, /scripts\/run\.sh/);
});

test("through the published harness: a runtime skill's and another provider's folder serve nothing", async () => {
  // A folder holding a file, given as the resource base of skills the filesystem provider did not list.
  const exposed = path.join(scratch, 'exposed');
  write(exposed, { 'SKILL.md': SKILL_MD, 'secret.md': 'exposed secret' });
  const base = { kind: 'directory', path: exposed };
  const harness = await filesystemHarness(
    fixture.root,
    { skillReads: true, skillResourceManifest: 20 },
    {
      skills: [{ name: 'etc', description: 'A runtime skill.', content: 'Runtime body.', resourceBase: base, path: path.join(exposed, 'SKILL.md') }],
      providerSkills: [{ name: 'other', description: 'Another provider.', content: 'Other body.', resourceBase: base, path: path.join(exposed, 'SKILL.md') }],
    },
  );
  for (const [name, provider] of [
    ['etc', 'runtime'],
    ['other', 'scenario'],
  ]) {
    const read = await harness.invoke({ name, path: 'secret.md' });
    assert.equal(read.isError, true, JSON.stringify(read));
    assert.match(JSON.stringify(read.content), new RegExp(`has no files to read: provider \\\\"${provider}\\\\" serves only its instructions`));
    assert.doesNotMatch(JSON.stringify(read), /exposed secret/);
    const load = await harness.invoke({ name });
    assert.equal(load.isError, false, JSON.stringify(load));
    assert.doesNotMatch(load.content[0].text, /Files of this skill|secret\.md/);
  }
  // The filesystem provider's own skill still serves its files in the same harness.
  const served = await harness.invoke({ name: 'deploy', path: 'z.md' });
  assert.equal(served.isError, false, JSON.stringify(served));
  assert.equal(served.value.content, 'one byte');
});

test('SKILL.md swapped for a link to another file since the harness loaded it: missing, bundle and flat', async () => {
  const base = path.join(scratch, 'swapped-skill');
  write(base, { 'outside.txt': 'outside text', 'skills/s2/SKILL.md': SKILL_MD, 'skills/s2/a.md': 'A.', 'skills/flat.md': SKILL_MD });
  const s2 = path.join(base, 'skills', 's2');
  const flatFile = path.join(base, 'skills', 'flat.md');
  const bundleWhere = { kind: 'bundle', folder: s2 };
  const flatWhere = { kind: 'flat', file: flatFile };
  assert.deepEqual(await readSkillFile('s2', bundleWhere, 'SKILL.md', SKILL_BODY), { tag: 'text', val: SKILL_MD });
  assert.deepEqual(await readSkillFile('flat', flatWhere, 'SKILL.md', SKILL_BODY), { tag: 'text', val: SKILL_MD });
  // mv s2/SKILL.md s2/orig; ln -s /outside.txt s2/SKILL.md (and the same for the flat file).
  renameSync(path.join(s2, 'SKILL.md'), path.join(s2, 'orig'));
  symlinkSync(path.join(base, 'outside.txt'), path.join(s2, 'SKILL.md'));
  renameSync(flatFile, path.join(base, 'skills', 'flat.orig'));
  symlinkSync(path.join(base, 'outside.txt'), flatFile);
  assert.deepEqual(await readSkillFile('s2', bundleWhere, 'SKILL.md', SKILL_BODY), { tag: 'missing' });
  assert.deepEqual(await readSkillFile('flat', flatWhere, 'SKILL.md', SKILL_BODY), { tag: 'missing' });
  // Another skill file with the same frontmatter but another body: missing too.
  writeFileSync(path.join(base, 'outside.txt'), SKILL_MD.replace('See references', 'Something else than'));
  assert.deepEqual(await readSkillFile('s2', bundleWhere, 'SKILL.md', SKILL_BODY), { tag: 'missing' });
  assert.deepEqual(await readSkillFile('flat', flatWhere, 'SKILL.md', SKILL_BODY), { tag: 'missing' });
  // The other files are served as before.
  assert.deepEqual(await readSkillFile('s2', bundleWhere, 'a.md', SKILL_BODY), { tag: 'text', val: 'A.' });
  // Through the bridge: the body is the one the harness's registry returned for the winner in the call.
  const registry = {
    get: async (name) => ({
      name,
      provider: 'filesystem',
      content: SKILL_BODY,
      ...(name === 's2'
        ? { resourceBase: { kind: 'directory', path: s2 }, path: path.join(s2, 'SKILL.md') }
        : { resourceBase: { kind: 'directory', path: path.dirname(flatFile) }, path: flatFile }),
    }),
  };
  const context = new HarnessCallContext({ registry, aborted: () => false });
  for (const name of ['s2', 'flat']) {
    assert.deepEqual(await context.readSkillFile(name, 'SKILL.md'), { tag: 'ok', val: { tag: 'missing' } }, name);
  }
  // Put back: served again.
  rmSync(path.join(s2, 'SKILL.md'));
  renameSync(path.join(s2, 'orig'), path.join(s2, 'SKILL.md'));
  rmSync(flatFile);
  renameSync(path.join(base, 'skills', 'flat.orig'), flatFile);
  for (const name of ['s2', 'flat']) {
    assert.deepEqual(await context.readSkillFile(name, 'SKILL.md'), { tag: 'ok', val: { tag: 'text', val: SKILL_MD } }, name);
  }
});

/** Whether python3 can call renameat2 (glibc 2.28 and later, Linux): the swap is then one atomic exchange. */
function pythonExchanges() {
  if (process.platform !== 'linux') return false;
  const probe = spawnSync('python3', ['-c', 'import ctypes; ctypes.CDLL(None).renameat2'], { stdio: 'ignore' });
  return probe.status === 0;
}

/**
 * A process that swaps `a` and `b` (a folder and a link) until killed:
 * renameat2(RENAME_EXCHANGE) through Python where it can, else a cycle of
 * renames in Node (`a` is the link half the time).
 */
function swapper(a, b) {
  if (pythonExchanges()) {
    const script = [
      'import ctypes, os, sys',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'a, b = sys.argv[1].encode(), sys.argv[2].encode()',
      'while True:',
      '    if libc.renameat2(-100, a, -100, b, 2) != 0:',
      '        sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))',
    ].join('\n');
    return spawn('python3', ['-c', script, a, b], { stdio: ['ignore', 'ignore', 'pipe'] });
  }
  const script = [
    "const { renameSync } = require('node:fs');",
    'const [a, b] = process.argv.slice(1);',
    "const spare = a + '.spare';",
    'for (;;) { renameSync(a, spare); renameSync(b, a); renameSync(a, b); renameSync(spare, a); }',
  ].join('\n');
  return spawn(process.execPath, ['-e', script, a, b], { stdio: ['ignore', 'ignore', 'pipe'] });
}

test('a folder swapped for a link to a hidden folder while reads run: never lists or reads the hidden files', async () => {
  const race = path.join(scratch, 'race');
  write(race, {
    'SKILL.md': SKILL_MD,
    'sub/config': 'visible config',
    '.git/config': 'HIDDEN CONFIG',
    '.git/HEAD': 'HIDDEN HEAD',
  });
  symlinkSync('.git', path.join(race, 'sublnk'));
  const where = { kind: 'bundle', folder: race };
  const child = swapper(path.join(race, 'sub'), path.join(race, 'sublnk'));
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const seen = new Map();
  try {
    for (let round = 0; round < 1500; round += 1) {
      for (const relative of ['sub/config', 'sub/HEAD']) {
        const answer = await readSkillFile('race', where, relative, SKILL_BODY);
        const key = `${relative} ${answer.tag}${answer.val === undefined ? '' : ` ${answer.val}`}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
      if (round % 10 === 0) {
        const { files } = await listSkillFiles('race', where, 100);
        const listed = files.map((file) => file.path);
        assert.ok(!listed.includes('sub/HEAD'), JSON.stringify(listed));
      }
    }
  } finally {
    child.kill();
  }
  assert.equal(stderr, '', 'the swapper ran');
  const answers = Object.fromEntries(seen);
  for (const key of Object.keys(answers)) {
    assert.ok(!key.includes('HIDDEN'), JSON.stringify(answers));
    assert.ok(['sub/config text visible config', 'sub/config missing', 'sub/HEAD missing'].includes(key), JSON.stringify(answers));
  }
  // The swap happened while reads ran: the folder was there some of the time and not all of it.
  assert.ok(answers['sub/config missing'] > 0, JSON.stringify(answers));
});

/** Runs `code` (an ES module's text) in Node as a user without root's privileges when this is root; resolves to its stdout. */
function runUnprivileged(code) {
  const options = { encoding: 'utf8' };
  if (typeof process.getuid === 'function' && process.getuid() === 0) Object.assign(options, { uid: 65534, gid: 65534 });
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', code], options);
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

test("a folder the walk cannot list: skill-host's text, its path relative to the skill's folder", async () => {
  await assert.rejects(listSkillFiles('gone', { kind: 'bundle', folder: path.join(scratch, 'no-such-folder') }, 5), {
    message: 'skill "gone": cannot list .: No such file or directory (os error 2)',
  });
  // A folder below that cannot be read (as a user other than root: root reads any folder).
  const shut = mkdtempSync(path.join(tmpdir(), 'dsh-files-shut-'));
  try {
    write(shut, { 'SKILL.md': SKILL_MD, 'sub/deeper/a.md': 'A.', 'sub/b.md': 'B.' });
    chmodSync(shut, 0o755);
    for (const folder of ['sub', 'sub/deeper']) chmodSync(path.join(shut, ...folder.split('/')), 0o755);
    chmodSync(path.join(shut, 'sub', 'deeper'), 0o311);
    const files = pathToFileURL(fileURLToPath(new URL('../dsh/files.mjs', import.meta.url))).href;
    const out = runUnprivileged(
      `import { listSkillFiles, readSkillFile } from ${JSON.stringify(files)};\n` +
        `const where = { kind: 'bundle', folder: ${JSON.stringify(shut)} };\n` +
        `for (const run of [() => listSkillFiles('shut', where, 5), () => readSkillFile('shut', where, 'sub/b.md')]) {\n` +
        `  try { await run(); console.log('no error'); } catch (error) { console.log(error.message); }\n` +
        `}\n`,
    );
    const text = 'skill "shut": cannot list sub/deeper: Permission denied (os error 13)';
    assert.equal(out, `${text}\n${text}\n`);
  } finally {
    rmSync(shut, { recursive: true, force: true });
  }
});

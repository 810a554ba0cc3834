// The contract version a component is built for (src/contract.mjs, docs/spec.md
// §9.4) is found when the sandbox is created, from the component's own
// import and export names: a version this host does not run, and a
// component importing another version than it exports, fail to load with
// skill-host's text instead of trapping inside a call.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { embeddedComponent } from '../src/component.mjs';
import { ACCEPTED_VERSIONS, componentInterfaces, contractVersion } from '../src/contract.mjs';
import { HostError } from '../src/errors.mjs';
import { CallContext } from '../src/host-imports.mjs';
import { Sandbox } from '../src/sandbox.mjs';
import { decidedMessage, pluginInterface } from '../src/versions.mjs';

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
let component;
const plugin = () => (component ??= embeddedComponent(REPOSITORY));

/** The current contract version, as wit/world.wit declares it. */
const CURRENT = readFileSync(path.join(REPOSITORY, 'wit', 'world.wit'), 'utf8').match(/^package dsh:skill@([0-9.]+);/m)[1];

const cacheDir = mkdtempSync(path.join(tmpdir(), 'dsh-contract-test-'));
after(() => rmSync(cacheDir, { recursive: true, force: true }));

/** `bytes` with every `from` replaced by `to` (of the same length). */
function patched(bytes, from, to) {
  assert.equal(from.length, to.length);
  const out = Buffer.from(bytes);
  let replaced = 0;
  for (let at = out.indexOf(from); at !== -1; at = out.indexOf(from, at + from.length)) {
    out.write(to, at, 'latin1');
    replaced += 1;
  }
  assert.ok(replaced > 0, `no ${from} in the component`);
  return out;
}

/** The load error `Sandbox.create` fails with for `bytes`. */
async function loadError(bytes) {
  const error = await Sandbox.create(bytes, '{}', undefined, { cacheDir }).then(
    async (sandbox) => {
      await sandbox.close();
      assert.fail('the component loaded');
    },
    (refused) => refused,
  );
  assert.ok(error instanceof HostError, String(error));
  assert.equal(error.kind, 'load');
  return error.message;
}

test("the component's own import and export names, with their versions, not jco's", () => {
  const { imports, exports } = componentInterfaces(plugin());
  assert.deepEqual(exports, [`dsh:skill/plugin@${CURRENT}`]);
  const contract = imports.filter(({ name }) => name.startsWith('dsh:skill/'));
  assert.deepEqual(contract, [
    { name: `dsh:skill/types@${CURRENT}`, kind: 'instance' },
    { name: `dsh:skill/registry@${CURRENT}`, kind: 'instance' },
    { name: `dsh:skill/session@${CURRENT}`, kind: 'instance' },
    { name: `dsh:skill/step@${CURRENT}`, kind: 'instance' },
  ]);
  assert.equal(contractVersion(plugin()), CURRENT);
  assert.equal(ACCEPTED_VERSIONS[0], CURRENT);
  // A core module is not a component.
  assert.throws(() => componentInterfaces(Uint8Array.from([0, 97, 115, 109, 1, 0, 0, 0])), /not a WebAssembly component/);
});

test('a version this host does not run is a load error with the versions it runs', async () => {
  const future = patched(plugin(), `dsh:skill/plugin@${CURRENT}`, 'dsh:skill/plugin@0.9.0');
  assert.equal(
    await loadError(future),
    'cannot load the plugin component: the component exports dsh:skill/plugin@0.9.0, but this host runs one that exports dsh:skill/plugin@0.4.0 or dsh:skill/plugin@0.3.0 or dsh:skill/plugin@0.2.0 or dsh:skill/plugin@0.1.0',
  );
});

test('a component exporting one version and importing another is a load error, as in skill-host', async () => {
  const mixed = patched(plugin(), `dsh:skill/plugin@${CURRENT}`, 'dsh:skill/plugin@0.3.0');
  assert.deepEqual(componentInterfaces(mixed).exports, ['dsh:skill/plugin@0.3.0']);
  // skill-host's text goes on with the first function its linker missed.
  assert.equal(
    await loadError(mixed),
    `cannot load the plugin component: component imports instance \`dsh:skill/registry@${CURRENT}\`, but a matching implementation was not found in the linker`,
  );
});

/** jco's exports of a plugin of `version` whose `invoke` returns `value`. */
function exportsOf(version, value) {
  return { [`dsh:skill/plugin@${version}`]: { configure: () => undefined, invoke: () => ({ value, text: 't', loaded: undefined }) } };
}

test('the 0.3.0 adapter: its values are 0.4.0\'s less the file case, its records written as 0.4.0\'s (spec §9.4)', () => {
  const skill = { tag: 'skill', val: { name: 'a', provider: 'p', resourceBase: undefined, content: 'body' } };
  const matches = { tag: 'matches', val: [{ name: 'a', description: 'd' }] };
  for (const value of [skill, matches]) {
    const exported = exportsOf('0.3.0', value);
    const adapted = pluginInterface(exported, '0.3.0');
    assert.deepEqual(adapted.invoke('{}'), { value, text: 't', loaded: undefined });
    // No conversion, no copy: the export itself.
    assert.equal(adapted, exported['dsh:skill/plugin@0.3.0']);
  }
  // A typed record is written as the JSON source 0.2.0 plugins wrote, as from 0.4.0.
  const typed = { tag: 'added', val: { source: { tag: 'catalog' }, text: 'the catalog' } };
  for (const version of ['0.4.0', '0.3.0']) {
    const written = decidedMessage(version)(typed);
    assert.equal(written.tag, 'added');
    assert.deepEqual(JSON.parse(written.val.source), { kind: 'plugin', plugin: 'dsh-tool-skill' });
    assert.deepEqual(written.val.content, [{ tag: 'text', val: 'the catalog' }]);
    assert.deepEqual(decidedMessage(version)({ tag: 'proposed', val: 2 }), { tag: 'proposed', val: 2 });
  }
  // 0.2.0 wrote its sources itself; 0.1.0's value is a skill.
  const source = { tag: 'added', val: { source: '{"kind":"plugin","plugin":"dsh-tool-skill"}', content: [{ tag: 'text', val: 'c' }] } };
  assert.equal(decidedMessage('0.2.0')(source), source);
  assert.deepEqual(pluginInterface(exportsOf('0.1.0', skill.val), '0.1.0').invoke('{}').value, skill);
  assert.throws(() => pluginInterface(exportsOf('0.3.0', skill), '0.4.0'), /does not export dsh:skill\/plugin@0.4.0/);
  assert.throws(() => pluginInterface(exportsOf('0.9.0', skill), '0.9.0'), /no conversion for dsh:skill@0.9.0/);
});

/**
 * A component built for dsh:skill@0.3.0 (`DSH_TEST_PLUGIN_0_3_0`, e.g.
 * `skill-host component` of a build before 0.4.0): it loads and runs in
 * this host, which answers the imports it has; it never sees the two new
 * ones. Skipped when none is at hand (the repository keeps no 0.3.0 build).
 */
test('a 0.3.0 component runs: configured, defined and its tool called', { skip: !existsSync(process.env.DSH_TEST_PLUGIN_0_3_0 ?? '') && 'set DSH_TEST_PLUGIN_0_3_0 to a 0.3.0 component' }, async () => {
  const bytes = readFileSync(process.env.DSH_TEST_PLUGIN_0_3_0);
  assert.equal(contractVersion(bytes), '0.3.0');
  const sandbox = await Sandbox.create(bytes, '{"skillReads":true}', undefined, { cacheDir });
  try {
    const definition = await sandbox.call('definition', 'definition', [], new CallContext());
    assert.ok(!Object.hasOwn(JSON.parse(definition.val.parameters).properties, 'path'));
    const invoked = await sandbox.call('invoke', 'invoke', ['{"name":"a-skill"}'], new CallContext());
    assert.equal(invoked.tag, 'err');
    assert.match(invoked.val, /^Error: /);
  } finally {
    await sandbox.close();
  }
});

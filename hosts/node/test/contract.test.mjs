// The contract version a component is built for (src/contract.mjs, docs/spec.md
// §9.4) is found when the sandbox is created, from the component's own
// import and export names: a version this host does not run, and a
// component importing another version than it exports, fail to load with
// skill-host's text instead of trapping inside a call.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { embeddedComponent } from '../src/component.mjs';
import { componentInterfaces, contractVersion } from '../src/contract.mjs';
import { HostError } from '../src/errors.mjs';
import { Sandbox } from '../src/sandbox.mjs';

const REPOSITORY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
let component;
const plugin = () => (component ??= embeddedComponent(REPOSITORY));

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
  assert.deepEqual(exports, ['dsh:skill/plugin@0.3.0']);
  const contract = imports.filter(({ name }) => name.startsWith('dsh:skill/'));
  assert.deepEqual(contract, [
    { name: 'dsh:skill/types@0.3.0', kind: 'instance' },
    { name: 'dsh:skill/registry@0.3.0', kind: 'instance' },
    { name: 'dsh:skill/session@0.3.0', kind: 'instance' },
    { name: 'dsh:skill/step@0.3.0', kind: 'instance' },
  ]);
  assert.equal(contractVersion(plugin()), '0.3.0');
  // A core module is not a component.
  assert.throws(() => componentInterfaces(Uint8Array.from([0, 97, 115, 109, 1, 0, 0, 0])), /not a WebAssembly component/);
});

test('a version this host does not run is a load error with the versions it runs', async () => {
  const future = patched(plugin(), 'dsh:skill/plugin@0.3.0', 'dsh:skill/plugin@0.4.0');
  assert.equal(
    await loadError(future),
    'cannot load the plugin component: the component exports dsh:skill/plugin@0.4.0, but this host runs one that exports dsh:skill/plugin@0.3.0 or dsh:skill/plugin@0.2.0 or dsh:skill/plugin@0.1.0',
  );
});

test('a component exporting one version and importing another is a load error, as in skill-host', async () => {
  const mixed = patched(plugin(), 'dsh:skill/plugin@0.3.0', 'dsh:skill/plugin@0.2.0');
  assert.deepEqual(componentInterfaces(mixed).exports, ['dsh:skill/plugin@0.2.0']);
  // skill-host's text goes on with the first function its linker missed.
  assert.equal(
    await loadError(mixed),
    'cannot load the plugin component: component imports instance `dsh:skill/registry@0.3.0`, but a matching implementation was not found in the linker',
  );
});

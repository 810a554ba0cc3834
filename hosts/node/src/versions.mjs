// The contract versions a component may be built for, converted to the
// current one (docs/spec.md §9.4), as host-runner/src/bindings does for
// skill-host: the guest thread (guest-worker.mjs) calls a component of any
// accepted version through these, with dsh:skill@0.4.0's values.
//
// What each earlier version lacks, and what that takes here:
// - 0.3.0: the registry's `list-skill-files` and `read-skill-file` and the
//   tool value's `file` case. Nothing to convert: jco's glue for a 0.3.0
//   component never calls the two imports (the functions offered for them
//   go unused), and its tool values are `skill` or `matches`, in the same
//   shapes as 0.4.0's.
// - 0.2.0: as 0.3.0, and an added message's source is JSON text the plugin
//   wrote (`decidedMessage`), and a skill summary has no `whenToUse` (jco
//   lowers a record by its fields' names, so it never sees it).
// - 0.1.0: as 0.2.0, and a tool result's value is a skill, not yet the
//   `skill`/`matches` variant (`pluginInterface`).

import { writtenMessage } from './record.mjs';

/** The versions whose plugin writes an added message's source itself, as JSON text. */
const SOURCES_AS_TEXT = new Set(['0.1.0', '0.2.0']);

/**
 * `step.decide`'s messages as the main thread checks them, whatever the
 * version: from `dsh:skill@0.3.0` on an added message is a typed record,
 * which the host writes as the JSON source a 0.2.0 plugin wrote
 * (src/record.mjs, as skill-host's `written` does), so it is accepted and
 * refused alike. Returns the conversion of one decided message.
 */
export function decidedMessage(version) {
  return SOURCES_AS_TEXT.has(version)
    ? (message) => message
    : (message) => (message.tag === 'added' ? { tag: 'added', val: writtenMessage(message.val) } : message);
}

/**
 * The plugin interface of contract version `version` among a component's
 * `exports` (jco's instance exports), with the current version's values.
 * Throws when the component does not export it.
 */
export function pluginInterface(exports, version) {
  const exported = exports[`dsh:skill/plugin@${version}`];
  if (exported === undefined) throw new Error(`the component does not export dsh:skill/plugin@${version}`);
  switch (version) {
    case '0.4.0':
    case '0.3.0':
    case '0.2.0':
      // The same values as 0.4.0's, less what the version lacks (above).
      return exported;
    case '0.1.0':
      return {
        ...exported,
        invoke(argumentsText) {
          const success = exported.invoke(argumentsText);
          return { ...success, value: { tag: 'skill', val: success.value } };
        },
      };
    default:
      throw new Error(`this host has no conversion for dsh:skill@${version}`);
  }
}

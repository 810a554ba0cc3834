// The records the plugin writes: the source of every message a pre-step may
// add, read as the Rust host reads it (`skill_rules::Record` in
// rules/src/record.rs, docs/spec.md §8.5), and, for a `dsh:skill@0.3.0`
// plugin, which sends them typed, written as `Record::to_json` writes them.
// rules/records.json holds the accepted and refused sources;
// test/records.test.mjs holds this reader and writer to it, as host-runner's
// tests hold the Rust ones.

import { isObject } from './json.mjs';

/** The skill-name grammar `^[a-z0-9]+(?:-[a-z0-9]+)*$` (docs/spec.md §3.3; `is_skill_name` in rules/src/lib.rs). */
export function isSkillName(name) {
  return typeof name === 'string' && /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name);
}

/** The source of a catalog in the seed's form (docs/spec.md §3.1; `CATALOG_SOURCE` in rules/src/lib.rs). */
export const CATALOG_SOURCE = Object.freeze({ kind: 'plugin', plugin: 'dsh-tool-skill' });

/** The source of the note naming the user-invoked skills not loaded (`INVOCATION_NOTE_SOURCE` in rules/src/lib.rs). */
const INVOCATION_NOTE_TEXT = '{"kind":"skill-invocation","form":"not-loaded"}';

/** The most names a reload notice may list (`MAX_RELOAD_NAMES` in rules/src/lib.rs). */
export const MAX_RELOAD_NAMES = 256;

/**
 * The longest body digest a plugin may hand back (`sha256:` and 64 hex
 * digits is 71); `MAX_BODY_DIGEST_BYTES` in rules/src/lib.rs.
 */
export const MAX_DIGEST_BYTES = 128;

/** A body digest a plugin may hand back: up to `MAX_DIGEST_BYTES` of printable ASCII (0x21..=0x7e). */
export function isDigest(digest) {
  if (typeof digest !== 'string' || digest.length > MAX_DIGEST_BYTES) return false;
  for (let i = 0; i < digest.length; i++) {
    const code = digest.charCodeAt(i);
    if (code < 0x21 || code > 0x7e) return false;
  }
  return true;
}

/**
 * Reads a parsed source: `{ record }`, the record's name as `Record::name`
 * gives it (`catalog`, `skill-catalog`, `catalog-update`, `invocation`,
 * `invocation-note`, `changed-notice`, `gone-notice`, `reload-notice`) with
 * `name` for an invocation or a changed or gone notice; or `{ refused }`,
 * `not-a-notice` (kind `skill-notice` in none of its exact shapes) or
 * `foreign`. Keys in any order; exactly the fields of the form.
 */
export function readRecord(source) {
  const foreign = { refused: 'foreign' };
  if (!isObject(source)) return foreign;
  const count = Object.keys(source).length;
  const text = (key) => (Object.hasOwn(source, key) && typeof source[key] === 'string' ? source[key] : undefined);
  switch (text('kind')) {
    case CATALOG_SOURCE.kind:
      if (text('plugin') !== CATALOG_SOURCE.plugin) return foreign;
      if (count === 2) return { record: 'catalog' };
      if (count === 4 && text('form') === 'catalog-update' && distinctNames(source.removed, Infinity)) {
        return { record: 'catalog-update' };
      }
      return foreign;
    case 'skill-catalog':
      return isSkillCatalog(source, count) ? { record: 'skill-catalog' } : foreign;
    case 'skill-invocation':
      if (text('form') === 'not-loaded' && count === 2) return { record: 'invocation-note' };
      if (text('form') === 'instructions' && count === 3 && isSkillName(text('name'))) {
        return { record: 'invocation', name: source.name };
      }
      return foreign;
    case 'skill-notice':
      return skillNotice(source, count, text) ?? { refused: 'not-a-notice' };
    default:
      return foreign;
  }
}

/**
 * `skill-catalog`: exactly `kind`, `form` `catalog`, `entries`, an optional
 * `update: true` and an optional string `coverage`, each entry exactly a
 * skill `name` and a string `description`.
 */
function isSkillCatalog(source, count) {
  const update = Object.hasOwn(source, 'update');
  if (update && source.update !== true) return false;
  const coverage = Object.hasOwn(source, 'coverage');
  if (coverage && typeof source.coverage !== 'string') return false;
  return (
    count === 3 + (update ? 1 : 0) + (coverage ? 1 : 0) &&
    source.form === 'catalog' &&
    Array.isArray(source.entries) &&
    source.entries.every(
      (entry) =>
        isObject(entry) &&
        Object.keys(entry).length === 2 &&
        isSkillName(entry.name) &&
        typeof entry.description === 'string',
    )
  );
}

/** A skill notice: exactly the fields of its form, else null. */
function skillNotice(source, count, text) {
  const has = (key) => Object.hasOwn(source, key);
  const named = (record) => (isSkillName(text('name')) ? { record, name: source.name } : null);
  switch (text('form')) {
    case 'changed': {
      const digest = !has('bodyDigest') || isDigest(source.bodyDigest);
      const provider = text('provider') !== undefined && source.provider !== '';
      return digest && provider && count === 4 + (has('bodyDigest') ? 1 : 0) ? named('changed-notice') : null;
    }
    case 'gone':
      return count === 3 ? named('gone-notice') : null;
    case 'reload': {
      const names = has('names') ? source.names : undefined;
      const valid = count === 3 && Array.isArray(names) && names.length > 0 && distinctNames(names, MAX_RELOAD_NAMES);
      return valid ? { record: 'reload-notice' } : null;
    }
    default:
      return null;
  }
}

/** An array of at most `max` distinct skill names. */
function distinctNames(names, max) {
  return Array.isArray(names) && names.length <= max && names.every(isSkillName) && new Set(names).size === names.length;
}

/**
 * The JSON source of a record a `dsh:skill@0.3.0` plugin sends typed (its
 * `added-source`, in jco's shape `{ tag, val }`), byte for byte as
 * `Record::to_json` (rules/src/record.rs) writes it: compact, keys in the
 * order the plugin has always written them (the reference's for catalogs and
 * invocations, sorted for notices). Nothing is checked here: what the types
 * cannot say (names, digests, distinct names, counts) is refused on the
 * written source, as a source a plugin wrote is (docs/spec.md §8.5).
 *
 * `JSON.stringify` escapes a string as serde_json does (`"`, `\\`, `\b \f \n
 * \r \t`, other controls as lowercase `\u00xx`, nothing else) except for a
 * lone surrogate, which a string the component model lifts (valid UTF-8,
 * decoded fatally, src/component.mjs) cannot hold.
 */
export function writeRecord(source) {
  const string = JSON.stringify;
  switch (source.tag) {
    case 'catalog':
      return string(CATALOG_SOURCE);
    case 'skill-catalog': {
      const { update, entries, coverage } = source.val;
      let text = '{"kind":"skill-catalog","form":"catalog",';
      if (update) text += '"update":true,';
      const lines = entries.map(({ name, description }) => `{"name":${string(name)},"description":${string(description)}}`);
      text += `"entries":[${lines.join(',')}]`;
      if (coverage !== undefined && coverage !== null) text += `,"coverage":${string(coverage)}`;
      return `${text}}`;
    }
    case 'catalog-update':
      return `${string(CATALOG_SOURCE).slice(0, -1)},"form":"catalog-update","removed":${string(source.val)}}`;
    case 'invocation':
      return `{"kind":"skill-invocation","name":${string(source.val)},"form":"instructions"}`;
    case 'invocation-note':
      return INVOCATION_NOTE_TEXT;
    case 'changed': {
      const { name, provider, bodyDigest } = source.val;
      const digest = bodyDigest === undefined || bodyDigest === null ? '' : `"bodyDigest":${string(bodyDigest)},`;
      return `{${digest}"form":"changed","kind":"skill-notice","name":${string(name)},"provider":${string(provider)}}`;
    }
    case 'gone':
      return `{"form":"gone","kind":"skill-notice","name":${string(source.val)}}`;
    case 'reload':
      return `{"form":"reload","kind":"skill-notice","names":${string(source.val)}}`;
    default:
      throw new Error(`an added message's source has the unknown case \`${source.tag}\``);
  }
}

/**
 * A typed added message (`added-message`: `{ source, text }`) as a plugin of
 * `dsh:skill@0.2.0` sent it: its source written by `writeRecord`, its text
 * the one text block (skill-host's `written`, host-runner/src/imports/step.rs).
 */
export function writtenMessage({ source, text }) {
  return { source: writeRecord(source), content: [{ tag: 'text', val: text }] };
}

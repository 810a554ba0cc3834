// The in-memory provider of scenario files (docs/spec.md §7): skills given as JSON
// objects, an optional failure, an optional explicit incomplete listing, and
// per-skill overrides of what a load finds. The texts of its errors are the
// Rust host's, so a tool error reads the same in both hosts.

import { asI64, F64, formatF64, isObject, stringify } from './json.mjs';
import { bodyDigest, ProviderError } from './registry.mjs';

/** The rank of a scenario skill that names none. */
export const DEFAULT_RANK = 100n;

/** How serde names a JSON value it did not expect (its `Unexpected`). */
function unexpected(value) {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return `boolean \`${value}\``;
  if (typeof value === 'number' || typeof value === 'bigint') return `integer \`${value}\``;
  if (value instanceof F64) return `floating point \`${formatF64(value.value)}\``;
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`;
  return Array.isArray(value) ? 'sequence' : 'map';
}

const POLICY_FIELDS = ['modelInvocable', 'userInvocable'];
const POLICY_TYPE = 'struct InvocationPolicy';

/**
 * An invocation policy read as serde reads `InvocationPolicy` from a JSON
 * value (a map, or a sequence of two booleans); throws serde's message.
 */
export function invocationPolicy(value) {
  const flag = (field) => {
    if (typeof field !== 'boolean') throw new Error(`invalid type: ${unexpected(field)}, expected a boolean`);
    return field;
  };
  if (Array.isArray(value)) {
    const flags = value.slice(0, 2).map(flag);
    if (flags.length < 2) throw new Error(`invalid length ${flags.length}, expected ${POLICY_TYPE} with 2 elements`);
    if (value.length > 2) throw new Error(`invalid length ${value.length}, expected fewer elements in array`);
    return { modelInvocable: flags[0], userInvocable: flags[1] };
  }
  if (!isObject(value)) throw new Error(`invalid type: ${unexpected(value)}, expected ${POLICY_TYPE}`);
  const policy = {};
  for (const key of POLICY_FIELDS) {
    if (Object.hasOwn(value, key)) policy[key] = flag(value[key]);
  }
  for (const key of POLICY_FIELDS) {
    if (!(key in policy)) throw new Error(`missing field \`${key}\``);
  }
  return policy;
}

const RESOURCE_BASE_FIELDS = { directory: 'path', url: 'url', opaque: 'description' };

/**
 * Reads a `resourceBase` value (null: none) as serde reads the Rust host's
 * internally tagged enum: `{"kind", <field>}` with no other key, or the
 * sequence form `[kind, value]`; throws the host's "invalid output" text.
 */
export function resourceBase(value) {
  if (value === undefined || value === null) return null;
  const field = (kind) => (typeof kind === 'string' && Object.hasOwn(RESOURCE_BASE_FIELDS, kind) ? RESOURCE_BASE_FIELDS[kind] : null);
  if (Array.isArray(value) && value.length === 2 && field(value[0]) !== null && typeof value[1] === 'string') {
    return { kind: value[0], [field(value[0])]: value[1] };
  }
  const kind = isObject(value) ? value.kind : undefined;
  const named = field(kind);
  if (named !== null && typeof value[named] === 'string' && Object.keys(value).every((key) => key === 'kind' || key === named)) {
    return { kind, [named]: value[named] };
  }
  const shown = kind === undefined ? 'missing' : stringify(kind);
  throw new Error(
    `tool "skill" returned invalid output: resourceBase must be {"kind":"directory","path"}, {"kind":"url","url"} or {"kind":"opaque","description"} (kind: ${shown})`,
  );
}

/** A provider serving scenario skills. */
export class MemoryProvider {
  /**
   * `skills` are `{ fields, loaded }`: the listed fields, and what a load
   * finds (`undefined`: as listed; `null`: nothing; an object: the listed
   * fields with these replaced). Throws the text naming a malformed skill.
   */
  constructor(name, complete, fail, skills) {
    this.name = name;
    this.complete = complete;
    this.fail = fail;
    this.skills = skills;
    for (const skill of skills) this.#candidate(skill.fields);
  }

  #candidate(fields) {
    const subject = () => `skill ${stringify(fields.name ?? null)} of provider "${this.name}"`;
    const text = (key, fallback) => {
      const value = fields[key];
      if (typeof value === 'string') return value;
      if (value === undefined || value === null) {
        if (fallback !== undefined) return fallback;
        throw new Error(`${subject()}: \`${key}\` is required`);
      }
      throw new Error(`${subject()}: \`${key}\` must be a string`);
    };
    let invocation = { modelInvocable: true, userInvocable: true };
    if (fields.invocation !== undefined && fields.invocation !== null) {
      try {
        invocation = invocationPolicy(fields.invocation);
      } catch (error) {
        throw new Error(`${subject()}: \`invocation\`: ${error.message}`);
      }
    }
    let rank = DEFAULT_RANK;
    if (fields.rank !== undefined && fields.rank !== null) {
      rank = asI64(fields.rank);
      if (rank === undefined) throw new Error(`${subject()}: \`rank\` must be an integer`);
    }
    let whenToUse = null;
    if (fields.whenToUse !== undefined && fields.whenToUse !== null) {
      if (typeof fields.whenToUse !== 'string') throw new Error(`${subject()}: \`whenToUse\` must be a string`);
      whenToUse = fields.whenToUse;
    }
    text('content');
    return {
      name: text('name'),
      description: text('description'),
      whenToUse,
      invocation,
      source: text('source', this.name),
      provider: text('provider', this.name),
      // Checked when a load returns it: an invalid kind is the tool's
      // invalid output, never a rendering (docs/spec.md §3.3).
      resourceBase: null,
      rank,
      path: null,
      // What identifies the body: the digest of the string `content`.
      bodyDigest: typeof fields.content === 'string' ? bodyDigest(fields.content) : null,
    };
  }

  list() {
    if (this.fail !== null) throw new ProviderError(this.fail);
    const candidates = this.skills.map((skill) => {
      try {
        return this.#candidate(skill.fields);
      } catch (error) {
        throw new ProviderError(error.message);
      }
    });
    return { candidates, complete: this.complete };
  }

  load(_cwd, candidate) {
    const skill = this.skills.find((entry) => entry.fields.name === candidate.name);
    if (!skill || skill.loaded === null) return null;
    const fields = Object.assign(Object.create(null), skill.fields, skill.loaded ?? {});
    try {
      const summary = this.#candidate(fields);
      summary.resourceBase = resourceBase(fields.resourceBase);
      const content = typeof fields.content === 'string' ? fields.content : '';
      return { summary, content };
    } catch (error) {
      throw new ProviderError(error.message);
    }
  }
}

// The values of a trace (docs/spec.md §7.2) and jco's values of the same
// WIT types, converted both ways. A trace writes a value as serde writes the
// current contract's (dsh:skill@0.4.0) Rust bindings: records as objects
// with `snake_case` fields, variants as `{"Case": payload}` or `"Case"`
// (`UpperCamelCase`), enums as `"Case"`, options as `null` or the value,
// results as `{"Ok": …}` or `{"Err": …}`, `u64` as numbers. jco has
// `camelCase` fields, `{ tag: 'kebab-case', val }` for variants and
// results, kebab-case strings for enums, `undefined` for `none` and unit,
// and BigInts for `u64`. Which is which depends on the WIT type, so each
// value is converted by its type, listed here after wit/world.wit.

/** A trace value that is not of the type the WIT says. */
export class TraceValueError extends Error {}

const string = { kind: 'string' };
const bool = { kind: 'bool' };
const u32 = { kind: 'u32' };
const u64 = { kind: 'u64' };
const unit = { kind: 'unit' };
const option = (of) => ({ kind: 'option', of });
const list = (of) => ({ kind: 'list', of });
const record = (fields) => ({ kind: 'record', fields });
const variant = (cases) => ({ kind: 'variant', cases });
const enumeration = (cases) => ({ kind: 'enum', cases });
const result = (ok, err) => ({ kind: 'result', ok, err });
/** `step.decide`'s messages as a trace has them: `{"proposed": i}` or `{"added": message}` (a typed record as its written source). */
const decided = { kind: 'decided' };

const invocationPolicy = record({ modelInvocable: bool, userInvocable: bool });
const resourceBase = variant({ directory: string, url: string, opaque: string });
const skillSummary = record({
  name: string,
  description: string,
  whenToUse: option(string),
  invocation: invocationPolicy,
  provider: string,
  source: string,
  path: option(string),
  bodyDigest: option(string),
});
const skillDefinition = record({
  name: string,
  description: string,
  invocation: invocationPolicy,
  provider: string,
  resourceBase: option(resourceBase),
  path: option(string),
  content: string,
  bodyDigest: option(string),
});
const registryError = variant({ aborted: null, failed: string });
const contentBlock = variant({ text: string, other: string });
export const MESSAGE = record({ source: string, content: list(contentBlock) });
const snapshotAnswer = variant({
  unchanged: null,
  changed: record({ complete: bool, revision: u64, skills: list(skillSummary) }),
});
const stepError = variant({ aborted: null });
const skillFiles = record({ files: list(record({ path: string, size: option(u64) })), total: u64 });
const fileAnswer = variant({ text: string, binary: u64, 'too-large': u64, missing: null, unavailable: null });

/** Each import by jco's function name: its name in a trace, its parameters (trace name and type), its result type. */
export const IMPORTS = Object.freeze({
  snapshot: { name: 'registry.snapshot', params: [['known', option(u64)]], result: result(snapshotAnswer, registryError) },
  listSkills: {
    name: 'registry.list-skills',
    params: [['name', option(string)]],
    result: result(list(skillSummary), registryError),
  },
  getSkill: { name: 'registry.get-skill', params: [['name', string]], result: result(option(skillDefinition), registryError) },
  listSkillFiles: {
    name: 'registry.list-skill-files',
    params: [
      ['name', string],
      ['limit', u32],
    ],
    result: result(option(skillFiles), registryError),
  },
  readSkillFile: {
    name: 'registry.read-skill-file',
    params: [
      ['name', string],
      ['path', string],
    ],
    result: result(fileAnswer, registryError),
  },
  listUserMessages: {
    name: 'session.list-user-messages',
    params: [
      ['filters', list(record({ kind: string, plugin: option(string) }))],
      ['before', option(u64)],
      ['limit', u32],
    ],
    result: record({ refs: list(record({ seq: u64, visible: bool })), next: option(u64) }),
  },
  getUserMessage: { name: 'session.get-user-message', params: [['seq', u64]], result: option(MESSAGE) },
  proposedMessages: { name: 'step.proposed-messages', params: [], result: list(MESSAGE) },
  decide: { name: 'step.decide', params: [['messages', list(decided)]], result: unit },
});

/** The pre-step's step context. */
export const STEP_CONTEXT = record({
  session: u64,
  registryRevision: option(u64),
  historyVersion: u64,
  toolView: enumeration(['visible', 'hidden', 'shadowed']),
  aborted: bool,
  proposal: variant({ enter: u32, reject: null }),
});

/**
 * What each export returns, as the sandbox hands it back: `{ tag, val }`,
 * where `val` is the returned value of an export without a `result`.
 */
export const RETURNS = Object.freeze({
  configure: result(unit, string),
  definition: record({ name: string, description: string, parameters: string }),
  'pre-step': result(unit, stepError),
  invoke: result(
    record({
      value: variant({
        skill: record({ name: string, provider: string, resourceBase: option(resourceBase), content: string }),
        matches: list(record({ name: string, description: string })),
        file: record({ name: string, provider: string, path: string, content: string }),
      }),
      text: string,
      loaded: option(record({ name: string, provider: string, bodyDigest: option(string) })),
    }),
    string,
  ),
  'system-prompt': result(string, stepError),
  expand: result(string, stepError),
});

const snakeCase = (name) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
const upperCamelCase = (name) => name.replace(/(^|-)([a-z])/g, (_, __, letter) => letter.toUpperCase());
const isPlainObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** jco's `value` of `type` as a trace writes it. */
export function toTrace(type, value) {
  switch (type.kind) {
    case 'string':
    case 'bool':
    case 'u32':
      return value;
    case 'u64':
      return typeof value === 'bigint' && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
    case 'unit':
      return null;
    case 'option':
      return value === undefined || value === null ? null : toTrace(type.of, value);
    case 'list':
      return Array.from(value, (item) => toTrace(type.of, item));
    case 'record':
      return Object.fromEntries(Object.entries(type.fields).map(([name, of]) => [snakeCase(name), toTrace(of, value[name])]));
    case 'variant': {
      const of = type.cases[value.tag];
      const name = upperCamelCase(value.tag);
      return of === null ? name : { [name]: toTrace(of, value.val) };
    }
    case 'enum':
      return upperCamelCase(value);
    case 'result':
      return value.tag === 'ok' ? { Ok: toTrace(type.ok, value.val) } : { Err: toTrace(type.err, value.val) };
    case 'decided':
      return value.tag === 'proposed' ? { proposed: value.val } : { added: toTrace(MESSAGE, value.val) };
    default:
      throw new TypeError(`no type ${type.kind}`);
  }
}

/** A trace's `value` of `type` as jco's value; throws `TraceValueError` when it is not of that type. */
export function toJco(type, value) {
  const wrong = () => new TraceValueError(`${JSON.stringify(value) ?? String(value)} is not a ${describe(type)}`);
  switch (type.kind) {
    case 'string':
      if (typeof value !== 'string') throw wrong();
      return value;
    case 'bool':
      if (typeof value !== 'boolean') throw wrong();
      return value;
    case 'u32':
      if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw wrong();
      return value;
    case 'u64':
      if (!(Number.isInteger(value) || typeof value === 'bigint') || value < 0) throw wrong();
      return BigInt(value);
    case 'unit':
      if (value !== null) throw wrong();
      return undefined;
    case 'option':
      return value === null ? undefined : toJco(type.of, value);
    case 'list':
      if (!Array.isArray(value)) throw wrong();
      return value.map((item) => toJco(type.of, item));
    case 'record':
      if (!isPlainObject(value)) throw wrong();
      return Object.fromEntries(
        Object.entries(type.fields).map(([name, of]) => [name, toJco(of, value[snakeCase(name)] ?? null)]),
      );
    case 'variant': {
      const cases = Object.keys(type.cases);
      if (typeof value === 'string') {
        const tag = cases.find((name) => type.cases[name] === null && upperCamelCase(name) === value);
        if (tag === undefined) throw wrong();
        return { tag };
      }
      const keys = isPlainObject(value) ? Object.keys(value) : [];
      const tag = keys.length === 1 ? cases.find((name) => type.cases[name] !== null && upperCamelCase(name) === keys[0]) : undefined;
      if (tag === undefined) throw wrong();
      return { tag, val: toJco(type.cases[tag], value[keys[0]]) };
    }
    case 'enum': {
      const found = type.cases.find((name) => upperCamelCase(name) === value);
      if (found === undefined) throw wrong();
      return found;
    }
    case 'result':
      if (isPlainObject(value) && Object.keys(value).length === 1 && 'Ok' in value) return { tag: 'ok', val: toJco(type.ok, value.Ok) };
      if (isPlainObject(value) && Object.keys(value).length === 1 && 'Err' in value) return { tag: 'err', val: toJco(type.err, value.Err) };
      throw wrong();
    default:
      throw new TypeError(`no jco value of ${type.kind} is read from a trace`);
  }
}

function describe(type) {
  switch (type.kind) {
    case 'option':
    case 'list':
      return `${type.kind}<${describe(type.of)}>`;
    case 'record':
      return `record of ${Object.keys(type.fields).join(', ')}`;
    case 'variant':
      return `variant of ${Object.keys(type.cases).join(', ')}`;
    case 'enum':
      return `enum of ${type.cases.join(', ')}`;
    case 'result':
      return `result<${describe(type.ok)}, ${describe(type.err)}>`;
    default:
      return type.kind;
  }
}

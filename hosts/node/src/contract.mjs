// Which released version of the `dsh:skill` contract a component is built
// for (docs/spec.md §9.4), decided as skill-host decides it
// (host-runner/src/bindings/mod.rs, `ContractVersion::of`): by the plugin
// interface it exports. The names come from the component's own import and
// export sections, not from jco: jco lists its short alias (`plugin`) among
// the exports, and gives every import without its version
// (`dsh:skill/registry`), so a component exporting one version while
// importing another would otherwise load and fail inside its first call.

/** Every version this host runs, newest first (as skill-host's `ContractVersion::ACCEPTED`). */
export const ACCEPTED_VERSIONS = Object.freeze(['0.4.0', '0.3.0', '0.2.0', '0.1.0']);

/** The interfaces of `dsh:skill` a plugin may import that the host implements. */
const CONTRACT_IMPORTS = new Set(['registry', 'session', 'step']);

/**
 * The interface that holds only types: wasmtime's linker needs nothing for
 * it, so skill-host accepts it at any version (its types are checked where
 * they are used).
 */
const TYPES_ONLY = 'types';

const pluginExport = (version) => `dsh:skill/plugin@${version}`;

/**
 * The version `component` (bytes) is built for: the newest accepted one
 * whose plugin interface it exports. Throws, with skill-host's text, when it
 * exports none of them, or when one of its `dsh:skill` imports is not of
 * that version. skill-host's linker, holding only that version's imports,
 * refuses it with this text followed by the first function it found missing
 * (`: instance export \`snapshot\` has the wrong type: …`), which this does
 * not name: that needs the imported instance's type.
 */
export function contractVersion(component) {
  const { imports, exports } = componentInterfaces(component);
  const version = ACCEPTED_VERSIONS.find((candidate) => exports.includes(pluginExport(candidate)));
  if (version === undefined) {
    const found = exports.length === 0 ? 'nothing' : exports.join(', ');
    throw new Error(
      `the component exports ${found}, but this host runs one that exports ${ACCEPTED_VERSIONS.map(pluginExport).join(' or ')}`,
    );
  }
  for (const { name, kind } of imports) {
    const match = /^dsh:skill\/([^@]*)(?:@(.*))?$/.exec(name);
    if (match === null || match[1] === TYPES_ONLY) continue;
    if (!CONTRACT_IMPORTS.has(match[1]) || match[2] !== version) {
      throw new Error(`component imports ${kind} \`${name}\`, but a matching implementation was not found in the linker`);
    }
  }
  return version;
}

/** The component's external kinds, as wasmtime names them in its errors. */
const KINDS = { 0x01: 'func', 0x02: 'value', 0x03: 'type', 0x04: 'component', 0x05: 'instance' };

/** The sections of a component's top level that this reads (Binary.md). */
const IMPORT_SECTION = 10;
const EXPORT_SECTION = 11;

/**
 * The names of `component`'s top-level imports (`{name, kind}`) and exports,
 * in order, read from its binary. Throws when it is not a component.
 */
export function componentInterfaces(component) {
  const bytes = component instanceof Uint8Array ? component : new Uint8Array(component);
  const reader = new Reader(bytes);
  const preamble = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];
  if (bytes.length < preamble.length || preamble.some((byte, at) => bytes[at] !== byte)) {
    throw new Error('the file is not a WebAssembly component');
  }
  reader.at = preamble.length;
  const imports = [];
  const exports = [];
  while (reader.at < bytes.length) {
    const id = reader.byte();
    const size = reader.u32();
    const end = reader.at + size;
    if (end > bytes.length) throw new Error('the component ends inside a section');
    if (id === IMPORT_SECTION) {
      for (let count = reader.u32(); count > 0; count -= 1) {
        const name = reader.externName();
        const kind = reader.externDesc();
        imports.push({ name, kind });
      }
    } else if (id === EXPORT_SECTION) {
      for (let count = reader.u32(); count > 0; count -= 1) {
        exports.push(reader.externName());
        reader.sort();
        reader.u32();
        if (reader.byte() === 0x01) reader.externDesc();
      }
    }
    reader.at = end;
  }
  return { imports, exports };
}

class Reader {
  constructor(bytes) {
    this.bytes = bytes;
    this.at = 0;
  }

  byte() {
    if (this.at >= this.bytes.length) throw new Error('the component ends early');
    return this.bytes[this.at++];
  }

  /** An unsigned LEB128 number (u32, or the bits of an s33 type index). */
  u32() {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = this.byte();
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
      if (shift > 28) throw new Error('a number in the component is too long');
    }
  }

  string() {
    const length = this.u32();
    if (this.at + length > this.bytes.length) throw new Error('the component ends inside a name');
    const text = new TextDecoder('utf-8', { fatal: true }).decode(this.bytes.subarray(this.at, this.at + length));
    this.at += length;
    return text;
  }

  /** `importname'`/`exportname'`: a leading byte, the name, then (after 0x02) its options. */
  externName() {
    const lead = this.byte();
    if (lead > 0x02) throw new Error(`unknown name encoding 0x${lead.toString(16)} in the component`);
    const name = this.string();
    if (lead === 0x02) {
      for (let count = this.u32(); count > 0; count -= 1) {
        this.byte();
        this.string();
      }
    }
    return name;
  }

  /** A `sort`; returns the external kind's name. */
  sort() {
    const byte = this.byte();
    if (byte === 0x00) {
      this.byte();
      return 'module';
    }
    const kind = KINDS[byte];
    if (kind === undefined) throw new Error(`unknown external kind 0x${byte.toString(16)} in the component`);
    return kind;
  }

  /** An `externdesc`; returns its kind's name. */
  externDesc() {
    const kind = this.sort();
    // A type's bound is `eq` and an index, or a fresh resource; anything
    // else is one number (an index, or a value's primitive type, one byte).
    if (kind !== 'type' || this.byte() === 0x00) this.u32();
    return kind;
  }
}

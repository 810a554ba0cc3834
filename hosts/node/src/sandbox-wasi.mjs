// The WASI imports the plugin gets: Rust's std on wasm32-wasip2 imports
// wasi:cli, wasi:io and wasi:random even though the plugin uses none of
// them (a wasip1 build adapted by cargo-component also imports clocks and
// the filesystem), so they must be linked, and they grant nothing (docs/spec.md §8):
// no environment, no arguments, no cwd, no terminal, no preopened directory,
// stdin at its end, stdout thrown away, stderr kept in memory (capped) so a
// panic message can be reported, and `exit` a trap instead of the end of the
// process. Clocks and randomness are given, as wasmtime-wasi gives them.
//
// Why not preview2-shim's `cli` and `io` modules: importing them starts the
// shim's I/O worker thread, its stdout/stderr write to the real process
// streams, and its `exit` calls `process.exit()` (CONTRIBUTING.md, "Pitfalls").
// Only its `random` module is used, which touches nothing but node:crypto.

import { insecure, insecureSeed, random } from '@bytecodealliance/preview2-shim/random';

/** What the guest wrote to stderr is kept up to this many bytes. */
export const STDERR_CAPACITY = 64 * 1024;

/** Thrown into the guest when it calls `wasi:cli/exit`: the call traps. */
export class GuestExit extends Error {
  constructor(status) {
    super(`the plugin called wasi:cli/exit (${status?.tag === 'err' ? 'failure' : 'success'})`);
    this.name = 'GuestExit';
  }
}

/**
 * The import object for every WASI interface the component imports, and a
 * reader of the captured stderr.
 */
export function sandboxWasi() {
  const stderrChunks = [];
  let stderrBytes = 0;

  class Pollable {
    ready() {
      return true;
    }
    block() {}
  }

  class IoError {
    toDebugString() {
      return 'sandbox: no I/O is granted';
    }
  }

  // Stream errors are thrown as the WIT `stream-error` value (jco turns a
  // thrown non-Error into the `err` case).
  const closed = () => {
    throw { tag: 'closed' };
  };

  class InputStream {
    read() {
      closed();
    }
    blockingRead() {
      closed();
    }
    skip() {
      closed();
    }
    blockingSkip() {
      closed();
    }
    subscribe() {
      return new Pollable();
    }
  }

  class OutputStream {
    constructor(keep) {
      this.keep = keep;
    }
    checkWrite() {
      return 4096n;
    }
    write(bytes) {
      this.keep?.(bytes);
    }
    blockingWriteAndFlush(bytes) {
      this.keep?.(bytes);
    }
    flush() {}
    blockingFlush() {}
    writeZeroes() {}
    blockingWriteZeroesAndFlush() {}
    splice() {
      closed();
    }
    blockingSplice() {
      closed();
    }
    subscribe() {
      return new Pollable();
    }
  }

  const stdin = new InputStream();
  const stdout = new OutputStream(null);
  const stderr = new OutputStream((bytes) => {
    const room = STDERR_CAPACITY - stderrBytes;
    if (room <= 0) return;
    const kept = bytes.slice(0, room);
    stderrChunks.push(kept);
    stderrBytes += kept.length;
  });

  class TerminalInput {}
  class TerminalOutput {}

  // No descriptor is ever handed out (no preopens), so these are never called.
  class Descriptor {}
  class DirectoryEntryStream {}

  const monotonicStart = process.hrtime.bigint();

  const imports = {
    'wasi:cli/environment': {
      getEnvironment: () => [],
      getArguments: () => [],
      initialCwd: () => undefined,
    },
    'wasi:cli/exit': {
      exit(status) {
        throw new GuestExit(status);
      },
    },
    'wasi:cli/stdin': { getStdin: () => stdin },
    'wasi:cli/stdout': { getStdout: () => stdout },
    'wasi:cli/stderr': { getStderr: () => stderr },
    'wasi:cli/terminal-input': { TerminalInput },
    'wasi:cli/terminal-output': { TerminalOutput },
    'wasi:cli/terminal-stdin': { getTerminalStdin: () => undefined },
    'wasi:cli/terminal-stdout': { getTerminalStdout: () => undefined },
    'wasi:cli/terminal-stderr': { getTerminalStderr: () => undefined },
    'wasi:io/error': { Error: IoError },
    'wasi:io/poll': { Pollable, poll: (list) => new Uint32Array(list.map((_, index) => index)) },
    'wasi:io/streams': { InputStream, OutputStream },
    'wasi:random/insecure-seed': insecureSeed,
    'wasi:random/insecure': insecure,
    'wasi:random/random': random,
    'wasi:clocks/wall-clock': {
      now() {
        const ms = Date.now();
        return { seconds: BigInt(Math.floor(ms / 1000)), nanoseconds: (ms % 1000) * 1e6 };
      },
      resolution: () => ({ seconds: 0n, nanoseconds: 1e6 }),
    },
    'wasi:clocks/monotonic-clock': {
      now: () => process.hrtime.bigint() - monotonicStart,
      resolution: () => 1n,
      subscribeInstant: () => new Pollable(),
      subscribeDuration: () => new Pollable(),
    },
    'wasi:filesystem/preopens': { getDirectories: () => [] },
    'wasi:filesystem/types': { Descriptor, DirectoryEntryStream, filesystemErrorCode: () => undefined },
  };

  return {
    imports,
    /** What the instance wrote to stderr so far, as text, trimmed. */
    stderr() {
      return Buffer.concat(stderrChunks).toString('utf8').trim();
    },
  };
}

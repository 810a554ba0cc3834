// What can go wrong in the host, worded as the Rust host words it (its
// `HostError`), so both hosts give the same error texts.

export class HostError extends Error {
  constructor(kind, message) {
    super(message);
    this.name = 'HostError';
    this.kind = kind;
  }

  /** The component could not be transpiled, compiled or started. */
  static load(reason) {
    return new HostError('load', `cannot load the plugin component: ${reason}`);
  }

  /** The plugin refused its configuration; the text is the plugin's. */
  static config(message) {
    return new HostError('config', message);
  }

  static timeout(call, timeoutMs) {
    return new HostError('timeout', `plugin call \`${call}\` exceeded its deadline of ${timeoutMs} ms`);
  }

  /** The whole call, the host's asynchronous answers included, outlasted its cap (`wallTimeoutMs`). */
  static wallTimeout(call, wallMs) {
    return new HostError('timeout', `plugin call \`${call}\` exceeded its wall-clock cap of ${wallMs} ms, host answers included`);
  }

  static memory(call, limitBytes) {
    return new HostError(
      'memory',
      `plugin call \`${call}\` exceeded its memory cap of ${Math.floor(limitBytes / (1024 * 1024))} MiB`,
    );
  }

  static trap(call, reason, stderr) {
    const suffix = stderr === '' ? '' : ` (guest stderr: ${stderr})`;
    return new HostError('trap', `plugin call \`${call}\` trapped: ${reason}${suffix}`);
  }

  static invalidOutput(call, reason) {
    return new HostError('invalid-output', `plugin call \`${call}\` returned invalid output: ${reason}`);
  }

  /** An input the host refuses before the call (a proposed message without a source object or content array). */
  static input(message) {
    return new HostError('input', message);
  }
}

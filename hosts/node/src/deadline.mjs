// A plugin call's clocks: the deadline on the plugin's own time, paused
// while the host answers, and the wall-clock cap on the whole call.

/**
 * A call's deadline: `onExpiry` runs once `timeoutMs` of running time have
 * passed, time spent paused not counted; and, when `wallMs` is given,
 * `onWall` once that much time has passed since `startedAt` (the start, or
 * when the caller began the call), paused or not. A call that never pauses
 * is bounded by its deadline alone, so the wall timer is only set at the
 * first pause.
 */
export class Deadline {
  #left;
  #onExpiry;
  #since = 0;
  #timer = null;
  #stopped = false;
  #started;
  #wallMs;
  #onWall;
  #wallTimer = null;

  constructor(timeoutMs, onExpiry, wallMs = null, onWall = () => {}, startedAt = performance.now()) {
    this.#started = startedAt;
    this.#left = timeoutMs;
    this.#onExpiry = onExpiry;
    this.#wallMs = wallMs;
    this.#onWall = onWall;
    this.resume();
  }

  pause() {
    if (this.#timer === null) return;
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#left -= performance.now() - this.#since;
    if (this.#wallMs !== null && this.#wallTimer === null) {
      this.#wallTimer = setTimeout(this.#onWall, Math.max(this.#wallMs - (performance.now() - this.#started), 0));
    }
  }

  resume() {
    if (this.#stopped || this.#timer !== null) return;
    this.#since = performance.now();
    this.#timer = setTimeout(this.#onExpiry, Math.max(this.#left, 0));
  }

  stop() {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#wallTimer);
  }
}

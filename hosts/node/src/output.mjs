// Caps on what one plugin call returns, as the Rust host applies them
// (host-runner/src/plugin/output.rs): the messages a pre-step adds, the
// UTF-8 bytes of each string, the bytes of all of them. They bound what goes
// on into the session file and the model's context; the guest's memory cap
// bounds the copy jco makes before these can look at it.

import { HostError } from './errors.mjs';

export const DEFAULT_OUTPUT_LIMITS = Object.freeze({
  maxAddedMessages: 64,
  maxTextBytes: 16 * 1024 * 1024,
  maxOutputBytes: 32 * 1024 * 1024,
});

/** The running tally of one call's output. */
export class OutputCheck {
  #call;
  #limits;
  #total = 0;

  constructor(call, limits) {
    this.#call = call;
    this.#limits = { ...DEFAULT_OUTPUT_LIMITS, ...limits };
  }

  /** Counts one string; `what()` names it in the error. */
  text(what, text) {
    const bytes = Buffer.byteLength(text, 'utf8');
    const perText = this.#limits.maxTextBytes;
    if (bytes > perText) {
      throw HostError.invalidOutput(this.#call, `${what()} is ${bytes} bytes, over the cap of ${perText} bytes per text`);
    }
    this.#total += bytes;
    const perCall = this.#limits.maxOutputBytes;
    if (this.#total > perCall) {
      throw HostError.invalidOutput(
        this.#call,
        `its texts add up to more than the cap of ${perCall} bytes per call (at ${what()})`,
      );
    }
  }

  /** Counts a message the plugin added (its source and every block); `ordinal` counts from 1. */
  addedMessage(ordinal, message) {
    this.text(() => `added message ${ordinal}'s source`, message.source);
    message.content.forEach((block, index) => {
      this.text(() => `added message ${ordinal}'s content block ${index + 1}`, block.val);
    });
  }

  /** Refuses a decision with more added messages than the cap, before any of them is looked at. */
  addedCount(added) {
    const cap = this.#limits.maxAddedMessages;
    if (added > cap) {
      throw HostError.invalidOutput(this.#call, `it added ${added} messages; a pre-step may add at most ${cap}`);
    }
  }
}

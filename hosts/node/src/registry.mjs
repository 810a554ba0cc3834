// The skill registry (docs/spec.md §4.1): providers and runtime skills merged into
// one winning skill per name, complete snapshots cached per cwd, bodies
// loaded from the winning provider on every call.
//
// A provider is an object `{ name, list(cwd), load(cwd, candidate) }`:
// `list` returns `{ candidates, complete }` or throws a `ProviderError`;
// `load` returns a definition `{ summary, content }`, `null`, or throws.
// A candidate is `{ name, description, whenToUse, invocation: {
// modelInvocable, userInvocable }, source, provider, resourceBase, rank
// (BigInt), path, bodyDigest (a string, or null when the provider cannot
// tell) }`.

import { createHash } from 'node:crypto';

import { compareCodePoints } from './json.mjs';

/** How many complete snapshots are cached (one per cwd). */
export const DEFAULT_CACHE_CAPACITY = 128;
/** The provider name and rank of runtime skills. */
export const RUNTIME_PROVIDER = 'runtime';
export const RUNTIME_RANK = 250n;

/**
 * The digest of a skill body: `sha256:` and the SHA-256 of its UTF-8 bytes in
 * lowercase hex (host-runner/src/registry/types.rs `body_digest`).
 */
export function bodyDigest(body) {
  return `sha256:${createHash('sha256').update(body, 'utf8').digest('hex')}`;
}

/** A provider's failure, in its own words (the model sees `Error: <message>`). */
export class ProviderError extends Error {}

/** A registry call the tool cannot answer: a provider failed. */
export class RegistryFailure extends Error {}

/** The skill-name grammar `^[a-z0-9]+(?:-[a-z0-9]+)*$` (docs/spec.md §3.3). */
export function isSkillName(name) {
  return typeof name === 'string' && /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name);
}

// Revisions are unique in this process, whatever registry hands them out, so
// a plugin instance that serves several registries can trust that equal
// revisions mean equal lists.
let lastRevision = 0n;
function nextRevision() {
  lastRevision += 1n;
  return lastRevision;
}

/** A skill registered by the host itself, body included. */
export class RuntimeSkill {
  constructor(name, description, content) {
    this.name = name;
    this.description = description;
    this.content = content;
    this.whenToUse = null;
    this.invocation = { modelInvocable: true, userInvocable: true };
    this.source = RUNTIME_PROVIDER;
    this.provider = RUNTIME_PROVIDER;
    this.resourceBase = null;
  }

  /** The refusal text, or null when the skill is valid. */
  problem() {
    if (!isSkillName(this.name)) return `invalid skill name "${this.name}"`;
    if (this.description === '') return `skill "${this.name}" requires a description`;
    return null;
  }

  candidate() {
    return {
      name: this.name,
      description: this.description,
      whenToUse: this.whenToUse,
      invocation: { ...this.invocation },
      source: this.source,
      provider: this.provider,
      resourceBase: this.resourceBase,
      rank: RUNTIME_RANK,
      path: null,
      bodyDigest: bodyDigest(this.content),
    };
  }
}

function candidateProblem(candidate, provider) {
  if (!isSkillName(candidate.name)) {
    return `skill provider "${provider}" returned invalid skill name "${candidate.name}"`;
  }
  if (candidate.description === '') {
    return `skill provider "${provider}" returned skill "${candidate.name}" without a description`;
  }
  if (candidate.provider !== provider) {
    return `skill provider "${provider}" returned skill "${candidate.name}" for provider "${candidate.provider}"`;
  }
  return null;
}

function definitionProblem({ summary }) {
  if (!isSkillName(summary.name)) return `loaded skill has invalid name "${summary.name}"`;
  if (summary.description === '') return `loaded skill "${summary.name}" requires a description`;
  return null;
}

export class SkillRegistry {
  #providers = [];
  #runtime = [];
  /** Bumped by every invalidation; a listing that saw it move is superseded. */
  #generation = 0;
  /** cwd (string or null) → complete snapshot, in insertion order for eviction. */
  #cache = new Map();
  #capacity;

  constructor(capacity = DEFAULT_CACHE_CAPACITY) {
    this.#capacity = Math.max(1, capacity);
  }

  registerProvider(provider) {
    this.#providers.push(provider);
    this.invalidate();
  }

  /** Replaces every provider (a scenario's `set-providers`). */
  setProviders(providers) {
    this.#providers = [...providers];
    this.invalidate();
  }

  /**
   * Registers a runtime skill: the first registration of a name wins (a later
   * one returns false). Throws the refusal text for an invalid skill.
   */
  registerRuntime(skill) {
    const problem = skill.problem();
    if (problem !== null) throw new RegistryFailure(problem);
    if (this.#runtime.some((existing) => existing.name === skill.name)) return false;
    this.#runtime.push(skill);
    this.invalidate();
    return true;
  }

  clearRuntime() {
    this.#runtime = [];
    this.invalidate();
  }

  /** Drops every cached snapshot. */
  invalidate() {
    this.#generation += 1;
    this.#cache.clear();
  }

  /**
   * The current view for `cwd` (a string or null): the cached complete
   * snapshot, or a fresh listing with a new revision. A listing superseded
   * by an invalidation while it ran is retried once, then returned incomplete.
   */
  snapshot(cwd) {
    for (let attempt = 1; ; attempt++) {
      const hit = this.#cache.get(cwd);
      if (hit) return hit;
      const generation = this.#generation;
      const fresh = this.#collect(cwd);
      fresh.revision = nextRevision();
      if (this.#generation !== generation) {
        if (attempt < 2) continue;
        fresh.complete = false;
        return fresh;
      }
      if (fresh.complete) {
        if (this.#cache.size >= this.#capacity) this.#cache.delete(this.#cache.keys().next().value);
        this.#cache.set(cwd, fresh);
      }
      return fresh;
    }
  }

  /**
   * The revision of the complete snapshot cached for `cwd`, if any, asking no
   * provider (the step context's `registry-revision`).
   */
  cachedRevision(cwd) {
    return this.#cache.get(cwd)?.revision;
  }

  /** The winners for the tool's lookup; throws `RegistryFailure` when a provider listed an invalid candidate. */
  list(cwd) {
    const snapshot = this.snapshot(cwd);
    if (snapshot.invalidCandidate !== null) throw new RegistryFailure(snapshot.invalidCandidate);
    return snapshot;
  }

  /**
   * The winning definition of `name`, loaded afresh; null when nothing has
   * it, or when the load found another name (the provider is invalidated).
   */
  get(cwd, name) {
    if (!isSkillName(name)) return null;
    const snapshot = this.list(cwd);
    const winner = snapshot.skills.find((skill) => skill.candidate.name === name);
    if (!winner) return null;
    let definition;
    if (winner.provider === null) {
      const skill = this.#runtime.find((runtime) => runtime.name === name);
      definition = skill ? { summary: skill.candidate(), content: skill.content } : null;
    } else {
      const provider = this.#providers[winner.provider];
      if (!provider) return null;
      try {
        definition = provider.load(cwd, winner.candidate);
      } catch (error) {
        if (error instanceof ProviderError) throw new RegistryFailure(error.message);
        throw error;
      }
    }
    if (!definition) return null;
    const problem = definitionProblem(definition);
    if (problem !== null) throw new RegistryFailure(problem);
    if (definition.summary.name !== winner.candidate.name) {
      this.invalidate();
      return null;
    }
    return definition;
  }

  #collect(cwd) {
    let complete = true;
    const warnings = [];
    let invalidCandidate = null;
    // (rank, provider order, local order) decides duplicates; runtime skills
    // come before every provider at equal rank, sorted by name.
    const ranked = [];
    const runtime = [...this.#runtime].sort((a, b) => compareCodePoints(a.name, b.name));
    runtime.forEach((skill, local) => {
      ranked.push({ rank: RUNTIME_RANK, order: -1, local, winner: { candidate: skill.candidate(), provider: null } });
    });
    this.#providers.forEach((provider, index) => {
      let listing;
      try {
        listing = provider.list(cwd);
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error;
        complete = false;
        warnings.push(`skill provider "${provider.name}" skipped: ${error.message}`);
        return;
      }
      const invalid = listing.candidates.map((c) => candidateProblem(c, provider.name)).find((p) => p !== null);
      if (invalid !== undefined) {
        // One invalid candidate discredits the whole listing.
        complete = false;
        warnings.push(invalid);
        invalidCandidate ??= invalid;
        return;
      }
      complete &&= listing.complete;
      listing.candidates.forEach((candidate, local) => {
        ranked.push({ rank: candidate.rank, order: index, local, winner: { candidate, provider: index } });
      });
    });
    ranked.sort((a, b) => {
      if (a.rank !== b.rank) return a.rank < b.rank ? -1 : 1;
      if (a.order !== b.order) return a.order - b.order;
      return a.local - b.local;
    });
    const seen = new Set();
    const skills = [];
    for (const { winner } of ranked) {
      if (seen.has(winner.candidate.name)) continue;
      seen.add(winner.candidate.name);
      skills.push(winner);
    }
    skills.sort((a, b) => compareCodePoints(a.candidate.name, b.candidate.name));
    return { complete, revision: 0n, skills, warnings, invalidCandidate };
  }
}

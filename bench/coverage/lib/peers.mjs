// The peers' published catalog rules, re-implemented from what we read
// (docs/performance.md, "Catalog coverage against the peers", says where).
// Each takes skills [{name, description}] (description already whitespace-
// collapsed, as every one of these hosts reads frontmatter into one line)
// and a budget, and returns {entries: [{name, shown, text}], bytes, budgeted}:
//   shown: 'hidden' | 'name' | 'text'  (text: some description is visible)
//   text:  the visible description, without any marker the rule added
//   bytes: UTF-8 bytes of what the budget bounds (the entry lines)
//   budgeted: the same, in the rule's own unit, and the limit, for the record

const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const utf8 = (s) => Buffer.byteLength(s, 'utf8');
const chars = (s) => [...s].length;
const prefixChars = (s, n) => [...s].slice(0, n).join('');

// ---------------------------------------------------------------------------
// Claude Code (closed source; the rule as recovered from the shipped CLI and
// reported in anthropics/claude-code #64606, #81081 and the measurement in
// melodic-software/claude-code-plugins#1286; the budget and the 1,536 cap are
// also in its settings documentation):
//   budget (characters) = floor(contextTokens * 4 * skillListingBudgetFraction), 0.01 by default
//   entry  = `- ${name}: ${text.slice(0, 1536)}`, or `- ${name}` (name only)
//   cost   = sum of entry lengths + (n - 1) newlines
//   over budget: every skill keeps its name-only line; descriptions are then
//   granted whole, in priority order (decayed usage; with no history every
//   skill scores 0 and the listing order, by name, decides), skipping any that
//   does not fit what is left and going on with the next. Never cut to fit,
//   never a skill left out: when even the names overflow, the listing is
//   names only and exceeds the budget.
// ---------------------------------------------------------------------------
export function claudeCode(skills, { chars: budget }) {
  const CAP = 1536;
  const list = [...skills].sort(byName);
  const full = (s) => `- ${s.name}: ${prefixChars(s.description, CAP)}`;
  const bare = (s) => `- ${s.name}`;
  const sep = Math.max(0, list.length - 1);
  const fullCost = list.reduce((n, s) => n + chars(full(s)), 0) + sep;
  let granted;
  if (fullCost <= budget) {
    granted = new Set(list.map((s) => s.name));
  } else {
    granted = new Set();
    const floor = list.reduce((n, s) => n + chars(bare(s)), 0) + sep;
    let room = budget - floor;
    for (const s of list) {
      const extra = chars(full(s)) - chars(bare(s));
      if (s.description && extra <= room) {
        granted.add(s.name);
        room -= extra;
      }
    }
  }
  const lines = list.map((s) => (granted.has(s.name) && s.description ? full(s) : bare(s)));
  const text = lines.join('\n');
  return {
    entries: list.map((s) => (granted.has(s.name) && s.description
      ? { name: s.name, shown: 'text', text: prefixChars(s.description, CAP) }
      : { name: s.name, shown: 'name', text: '' })),
    bytes: utf8(text),
    budgeted: { used: chars(text), limit: budget, unit: 'characters' },
  };
}

// ---------------------------------------------------------------------------
// Codex (openai/codex, codex-rs/core-skills/src/render.rs; the 1,024 limit in
// codex-rs/core-skills/src/loader.rs):
//   budget = 2 % of the context window in tokens (approx: ceil(bytes / 4) per
//   line), or 8,000 characters when the window is unknown; it bounds the skill
//   lines (each with its newline), not the fixed text around them (~2,300 chars)
//   line   = `- ${name}: ${description} (file: ${path})`, `- ${name}: (file: ${path})` without one
//   1. everything fits: all whole;
//   2. the description-less lines fit: the rest is handed out one character
//      at a time, round robin over the skills in order (so short ones finish
//      and the long ones share what is left equally); descriptions are cut
//      with no marker;
//   3. otherwise: description-less lines, in order, while they fit; the rest
//      are left out ("N additional skills were not included").
//   Order: scope (system, admin, repo, user), then name. When the absolute
//   render cuts or omits anything, the same is tried with paths shortened to
//   `r0/<name>/SKILL.md` plus a skill-roots table (which costs its text), and
//   the better of the two kept (more skills, then fewer cut characters).
//   A description over 1,024 characters fails validation: the skill is not
//   loaded at all.
// ---------------------------------------------------------------------------
const CODEX_ROOT = '/home/user/.agents/skills';
// The aliased render's fixed text minus the absolute one's (its intro and
// "how to use" paragraphs differ), in characters, measured from render.rs's
// constants: 157, plus "### Skill roots" and the root line with their newlines.
const CODEX_ALIAS_TEXT_DELTA = 157;

function codexCost(unit, line) {
  const withNewline = `${line}\n`;
  return unit === 'tokens' ? Math.ceil(utf8(withNewline) / 4) : chars(withNewline);
}

export function codexRenderLines(list, pathOf, unit, limit) {
  const line = (s, d) => (d ? `- ${s.name}: ${d} (file: ${pathOf(s)})` : `- ${s.name}: (file: ${pathOf(s)})`);
  const fullCost = list.reduce((n, s) => n + codexCost(unit, line(s, s.description)), 0);
  if (fullCost <= limit) {
    return { lines: list.map((s) => line(s, s.description)), kept: list.map((s) => ({ s, d: s.description })), omitted: 0, cutChars: 0 };
  }
  const minCost = list.reduce((n, s) => n + codexCost(unit, line(s, '')), 0);
  if (minCost <= limit) {
    let remaining = limit - minCost;
    const descs = list.map((s) => [...s.description]);
    const alloc = list.map(() => 0);
    const cost = list.map(() => 0);
    // extra cost of k description characters over the description-less line
    const base = list.map((s) => line(s, ''));
    // bytes of the first k description characters, for the token estimate
    const prefixBytes = descs.map((d) => {
      const sums = [0];
      for (const c of d) sums.push(sums.at(-1) + utf8(c));
      return sums;
    });
    const extra = (i, k) => {
      if (k === 0) return 0;
      if (unit === 'tokens') {
        const minBytes = utf8(base[i]) + 1;
        return Math.ceil((minBytes + prefixBytes[i][k] + 1) / 4) - Math.ceil(minBytes / 4);
      }
      return k + 1; // the characters and the space before them
    };
    for (let changed = true; changed;) {
      changed = false;
      for (let i = 0; i < list.length; i++) {
        if (alloc[i] >= descs[i].length) continue;
        const next = extra(i, alloc[i] + 1);
        const delta = Math.max(0, next - cost[i]);
        if (delta <= remaining) {
          alloc[i] += 1;
          cost[i] = next;
          remaining -= delta;
          changed = true;
        }
      }
    }
    const kept = list.map((s, i) => ({ s, d: descs[i].slice(0, alloc[i]).join('') }));
    const cutChars = list.reduce((n, s, i) => n + descs[i].length - alloc[i], 0);
    return { lines: kept.map(({ s, d }) => line(s, d)), kept, omitted: 0, cutChars };
  }
  const kept = [];
  let used = 0;
  let omitted = 0;
  let cutChars = 0;
  for (const s of list) {
    const c = codexCost(unit, line(s, ''));
    if (used + c <= limit) {
      used += c;
      kept.push({ s, d: '' });
    } else {
      omitted += 1;
    }
    cutChars += chars(s.description);
  }
  return { lines: kept.map(({ s }) => line(s, '')), kept, omitted, cutChars };
}

export function codex(skills, budget) {
  const unit = budget.tokens ? 'tokens' : 'characters';
  const limit = budget.tokens ?? budget.chars;
  const loaded = skills.filter((s) => chars(s.description) <= 1024).sort(byName);
  const absolute = codexRenderLines(loaded, (s) => `${CODEX_ROOT}/${s.name}/SKILL.md`, unit, limit);
  let chosen = absolute;
  let tableText = '';
  if (absolute.omitted > 0 || absolute.cutChars > 0) {
    const table = `### Skill roots\n- \`r0\` = \`${CODEX_ROOT}\`\n`;
    const tableCost = unit === 'tokens'
      ? Math.ceil((CODEX_ALIAS_TEXT_DELTA + utf8(table)) / 4)
      : CODEX_ALIAS_TEXT_DELTA + chars(table);
    if (tableCost < limit) {
      const aliased = codexRenderLines(loaded, (s) => `r0/${s.name}/SKILL.md`, unit, limit - tableCost);
      const lineCost = (r) => r.lines.reduce((n, l) => n + codexCost(unit, l), 0);
      const better = aliased.kept.length !== absolute.kept.length
        ? aliased.kept.length > absolute.kept.length
        : aliased.cutChars !== absolute.cutChars
          ? aliased.cutChars < absolute.cutChars
          : tableCost + lineCost(aliased) < lineCost(absolute);
      if (better) {
        chosen = aliased;
        tableText = table;
      }
    }
  }
  const shownByName = new Map(chosen.kept.map(({ s, d }) => [s.name, d]));
  const text = chosen.lines.map((l) => `${l}\n`).join('');
  return {
    entries: [...skills].sort(byName).map((s) => (shownByName.has(s.name)
      ? (shownByName.get(s.name) ? { name: s.name, shown: 'text', text: shownByName.get(s.name) } : { name: s.name, shown: 'name', text: '' })
      : { name: s.name, shown: 'hidden', text: '' })),
    bytes: utf8(text) + utf8(tableText),
    budgeted: {
      used: chosen.lines.reduce((n, l) => n + codexCost(unit, l), 0), limit, unit,
      aliases: tableText !== '',
    },
  };
}

// ---------------------------------------------------------------------------
// amplifier (microsoft/amplifier-bundle-skills PR #63,
// modules/tool-skills/amplifier_module_tool_skills/hooks.py,
// SkillsVisibilityHook._assemble_budgeted_regular):
//   budget = visibility_token_budget (default 5,000) tokens, estimated as
//   len(text) // 4 over the whole regular section: the header
//   "Available skills (use load_skill tool):", a blank line, one line a skill
//   line   = `- **${name}**` (index), `- **${name}**: ${summary}`, `- **${name}**: ${description}`
//   summary = the description's first sentence (up to the first . ! or ?
//   followed by a space or the end), whitespace collapsed, cut to 140
//   characters with "..." (a `visibility.summary` in the frontmatter wins)
//   1. every skill starts at the index tier (never left out, even over budget);
//   2. index -> summary in rank order (-priority, name), stopping at the first
//      that does not fit;
//   3. summary -> full description in rank order, stopping at the first that
//      does not fit.
// ---------------------------------------------------------------------------
const AMPLIFIER_HEADER = 'Available skills (use load_skill tool):';

export function firstSentence(text) {
  const m = /[.!?](?:\s|$)/.exec(text);
  return m ? text.slice(0, m.index + 1) : text;
}

function amplifierSummary(description) {
  const text = description.split(/\s+/).filter(Boolean).join(' ');
  if (!text) return { text: '', cut: false };
  let s = firstSentence(text);
  if (s.length > 140) return { text: `${s.slice(0, 137).trimEnd()}...`, cut: true, visible: s.slice(0, 137).trimEnd() };
  return { text: s, cut: false, visible: s };
}

export function amplifier(skills, { tokens: budget }) {
  const ranked = [...skills].sort(byName); // priority 0 for all: no skill here sets visibility.priority
  const INDEX = 0, SUMMARY = 1, FULL = 2;
  const tier = ranked.map(() => INDEX);
  const summaries = ranked.map((s) => amplifierSummary(s.description));
  const line = (i) => {
    const s = ranked[i];
    if (tier[i] === INDEX) return `- **${s.name}**`;
    if (tier[i] === SUMMARY) return `- **${s.name}**: ${summaries[i].text}`;
    return `- **${s.name}**: ${s.description}`;
  };
  // len("\n".join([header, "", *lines])), kept incrementally (Python's len counts code points)
  let length = chars(AMPLIFIER_HEADER) + 1 + ranked.reduce((n, _, i) => n + 1 + chars(line(i)), 0);
  const fits = () => Math.floor(length / 4) <= budget;
  const setTier = (i, t) => {
    length -= chars(line(i));
    tier[i] = t;
    length += chars(line(i));
  };
  for (let i = 0; i < ranked.length; i++) {
    setTier(i, SUMMARY);
    if (!fits()) { setTier(i, INDEX); break; }
  }
  for (let i = 0; i < ranked.length; i++) {
    if (tier[i] !== SUMMARY) continue;
    setTier(i, FULL);
    if (!fits()) { setTier(i, SUMMARY); break; }
  }
  const text = [AMPLIFIER_HEADER, '', ...ranked.map((_, i) => line(i))].join('\n');
  return {
    entries: ranked.map((s, i) => {
      if (tier[i] === INDEX || !s.description) return { name: s.name, shown: 'name', text: '' };
      if (tier[i] === SUMMARY) return { name: s.name, shown: 'text', text: summaries[i].visible, tier: 'summary' };
      return { name: s.name, shown: 'text', text: s.description, tier: 'full' };
    }),
    bytes: utf8(text),
    budgeted: { used: Math.floor(length / 4), limit: budget, unit: 'tokens (len // 4)' },
  };
}

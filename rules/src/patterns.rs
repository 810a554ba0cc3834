//! A `catalogExclude` list compiled once (docs/spec.md §3.13): every
//! pattern goes into one automaton, a trie of the patterns' tokens (a letter,
//! `?`, `*`) in which a node reached by `*` loops on any character. A name is
//! read once, left to right, keeping the set of nodes it can be at: the cost
//! is the name's length times the nodes alive at once, whatever the number of
//! patterns, since patterns that share a beginning share its nodes and a
//! pattern whose literal beginning the name does not have never wakes.
//!
//! Why this and not the alternatives: matching each pattern in turn (the
//! rule, [`matches_skill_pattern`](crate::matches_skill_pattern)) costs
//! patterns × skills × backtracking, 1,024 × 5,000 of which ran past a
//! step's deadline; a lazily built DFA can grow a state per character of
//! every name with star-heavy patterns, and remembering each name's answer
//! still pays the full price on the first step. The automaton has one node
//! per pattern character at most, built once per configuration, and needs
//! no dependency, so the guest and the host share it here.

use alloc::string::String;
use alloc::vec::Vec;

/// One node of the pattern trie.
#[derive(Debug, Clone, Default)]
struct Node {
    /// Reached by a `*`: stays here on any character.
    loops: bool,
    /// The first (lowest) index of a pattern that ends here.
    accepts: Option<usize>,
    /// The child reached by `*` without reading a character.
    star: Option<u32>,
    /// The child reached by `?` (any one character).
    any: Option<u32>,
    /// The children reached by a literal byte, sorted by byte.
    literal: Vec<(u8, u32)>,
}

/// A list of `catalogExclude` patterns compiled for matching many names.
/// Matches exactly when [`matches_skill_pattern`](crate::matches_skill_pattern)
/// matches one of the patterns.
#[derive(Debug, Clone, Default)]
pub struct SkillPatterns {
    /// The patterns as given, in order.
    patterns: Vec<String>,
    /// The trie; node 0 is the root. Empty when there are no patterns.
    nodes: Vec<Node>,
}

impl PartialEq for SkillPatterns {
    /// Equal lists compile to equal automata.
    fn eq(&self, other: &Self) -> bool {
        self.patterns == other.patterns
    }
}

impl Eq for SkillPatterns {}

impl SkillPatterns {
    /// No patterns: matches nothing.
    pub const EMPTY: Self = Self { patterns: Vec::new(), nodes: Vec::new() };

    /// The patterns a configuration the plugin accepted gives under `key`
    /// (`catalogExclude`, `catalogNameOnly`, `userOnly`), compiled; none
    /// when it has no such list. For the host, which reads what the plugin
    /// validated (see [`config_names`](crate::config_names)).
    pub fn from_config(config: &serde_json::Value, key: &str) -> Self {
        Self::new(crate::config_names(config, key))
    }

    /// Compiles `patterns`, in time linear in their total length.
    pub fn new(patterns: Vec<String>) -> Self {
        let mut nodes = Vec::new();
        if !patterns.is_empty() {
            nodes.push(Node::default());
        }
        for (index, pattern) in patterns.iter().enumerate() {
            let mut at = 0;
            let mut previous = None;
            for &byte in pattern.as_bytes() {
                // `**` is `*`.
                if byte == b'*' && previous == Some(b'*') {
                    continue;
                }
                previous = Some(byte);
                at = child(&mut nodes, at, byte);
            }
            let accepts = &mut nodes[at as usize].accepts;
            accepts.get_or_insert(index);
        }
        Self { patterns, nodes }
    }

    /// The patterns, in the order given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether there are no patterns.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether some pattern matches `name`.
    pub fn matches(&self, name: &str) -> bool {
        self.run(name, true).is_some()
    }

    /// The first pattern, in the order given, that matches `name`.
    pub fn first_match(&self, name: &str) -> Option<&str> {
        self.run(name, false).map(|index| self.patterns[index].as_str())
    }

    /// The lowest index of a pattern matching `name`; with `any`, the index
    /// of some matching pattern, found as early as possible.
    fn run(&self, name: &str, any: bool) -> Option<usize> {
        if self.nodes.is_empty() {
            return None;
        }
        let mut alive = Vec::new();
        self.enter(&mut alive, 0);
        let mut next = Vec::new();
        for &byte in name.as_bytes() {
            next.clear();
            for &at in &alive {
                let node = &self.nodes[at as usize];
                if node.loops {
                    // A pattern that ends in `*` here matches whatever follows.
                    if any && node.accepts.is_some() {
                        return node.accepts;
                    }
                    next.push(at);
                }
                if let Ok(found) = node.literal.binary_search_by_key(&byte, |&(literal, _)| literal) {
                    self.enter(&mut next, node.literal[found].1);
                }
                if let Some(child) = node.any {
                    self.enter(&mut next, child);
                }
            }
            // A node can be reached both by its loop and from its parent.
            next.sort_unstable();
            next.dedup();
            core::mem::swap(&mut alive, &mut next);
            if alive.is_empty() {
                return None;
            }
        }
        alive.iter().filter_map(|&at| self.nodes[at as usize].accepts).min()
    }

    /// Adds `at` and the node its `*` leads to (stars are collapsed, so
    /// there is at most one).
    fn enter(&self, alive: &mut Vec<u32>, at: u32) {
        alive.push(at);
        if let Some(star) = self.nodes[at as usize].star {
            alive.push(star);
        }
    }
}

/// The child of `at` by the pattern byte `byte`, created if missing.
fn child(nodes: &mut Vec<Node>, at: u32, byte: u8) -> u32 {
    let fresh = u32::try_from(nodes.len()).expect("fewer than 2^32 pattern characters");
    let node = &mut nodes[at as usize];
    let found = match byte {
        b'*' => *node.star.get_or_insert(fresh),
        b'?' => *node.any.get_or_insert(fresh),
        _ => match node.literal.binary_search_by_key(&byte, |&(literal, _)| literal) {
            Ok(found) => node.literal[found].1,
            Err(slot) => {
                node.literal.insert(slot, (byte, fresh));
                fresh
            }
        },
    };
    if found == fresh {
        nodes.push(Node { loops: byte == b'*', ..Node::default() });
    }
    found
}

#[cfg(test)]
mod tests;

//! The model-visible surface: the fold of the `surfaceOp` markers carried by
//! message events.
//!
//! DeepSeek Harness resolves a `replace` positionally: `start` and `end` name
//! two seqs on the current surface and everything between their positions
//! (inclusive) is shadowed by the replacing event. Positions matter because
//! the surface is not sorted once a replacement has landed (`[3, 1, 2]` after
//! seq 3 replaced seq 0), so a compaction of that surface is written as
//! `start: 3, end: 2`. A log written by a looser producer may name endpoints
//! that are not on the surface; then the fold falls back to hiding the nodes
//! whose seqs lie in `start..=end`, and reports what it did so the reader can
//! warn.

use std::collections::HashMap;
use std::ops::Range;

/// How a message event enters the model-visible surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SurfaceOp {
    /// The event joins the end of the surface (`"surfaceOp":"append"`).
    Append,
    /// The event shadows the surface nodes from `start` to `end` and takes
    /// their place (`{"op":"replace","start":S,"end":E}`).
    Replace {
        /// Seq of the first shadowed surface node.
        start: u64,
        /// Seq of the last shadowed surface node.
        end: u64,
    },
}

/// What a fold step did, so the caller can warn about a replacement that did
/// not match the surface the way DeepSeek Harness requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FoldOutcome {
    /// Appended at the end.
    Appended,
    /// Replaced the nodes between the positions of `start` and `end`.
    Replaced {
        /// The seqs the replacement hid, in surface order.
        shadowed: Vec<u64>,
    },
    /// `start` or `end` was not on the surface (or `start` came after `end`),
    /// so the nodes whose seqs lie in `start..=end` were hidden instead.
    ReplacedBySeqRange {
        /// The seqs the replacement hid, in surface order.
        shadowed: Vec<u64>,
    },
    /// Nothing on the surface lay in the range: the event was appended at
    /// the end.
    NothingToReplace,
}

/// The ordered surface plus a seq → position map, so membership is O(1) and
/// the common replacements stay cheap: a one-node rewrite (tool-result
/// pruning) is O(1); a range replacement costs one splice plus re-indexing
/// the nodes after it, which for a whole-surface compaction is nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SurfaceFold {
    nodes: Vec<u64>,
    positions: HashMap<u64, usize>,
}

impl SurfaceFold {
    /// The surface nodes in model-visible order.
    pub fn nodes(&self) -> &[u64] {
        &self.nodes
    }

    /// Whether `seq` is currently on the surface.
    pub fn contains(&self, seq: u64) -> bool {
        self.positions.contains_key(&seq)
    }

    /// The surface nodes a positional replacement of `start..=end` would
    /// shadow, or `None` when DeepSeek Harness would refuse it (an endpoint
    /// is not on the surface, or `start` comes after `end`).
    pub fn shadowed_by(&self, start: u64, end: u64) -> Option<&[u64]> {
        self.positional_range(start, end).map(|r| &self.nodes[r])
    }

    /// A whole-surface replacement (compaction), or `None` when the surface
    /// is empty.
    pub fn whole_range(&self) -> Option<SurfaceOp> {
        Some(SurfaceOp::Replace { start: *self.nodes.first()?, end: *self.nodes.last()? })
    }

    /// Folds one event with seq `seq` into the surface. `seq` must be newer
    /// than every node on the surface (the log guarantees it by ignoring
    /// out-of-order seqs).
    pub fn apply(&mut self, seq: u64, op: SurfaceOp) -> FoldOutcome {
        match op {
            SurfaceOp::Append => {
                self.push(seq);
                FoldOutcome::Appended
            }
            SurfaceOp::Replace { start, end } => match self.positional_range(start, end) {
                Some(range) => FoldOutcome::Replaced { shadowed: self.splice(range, seq) },
                None => self.replace_by_seq_range(seq, start, end),
            },
        }
    }

    fn positional_range(&self, start: u64, end: u64) -> Option<Range<usize>> {
        let first = *self.positions.get(&start)?;
        let last = *self.positions.get(&end)?;
        (first <= last).then_some(first..last + 1)
    }

    fn push(&mut self, seq: u64) {
        self.positions.insert(seq, self.nodes.len());
        self.nodes.push(seq);
    }

    /// Replaces `range` by `seq` and returns the removed nodes.
    fn splice(&mut self, range: Range<usize>, seq: u64) -> Vec<u64> {
        let first = range.start;
        let removed_count = range.len();
        let shadowed: Vec<u64> = self.nodes.splice(range, [seq]).collect();
        for old in &shadowed {
            self.positions.remove(old);
        }
        self.positions.insert(seq, first);
        // Only a multi-node replacement shifts the nodes after it.
        if removed_count != 1 {
            for (offset, node) in self.nodes[first + 1..].iter().enumerate() {
                self.positions.insert(*node, first + 1 + offset);
            }
        }
        shadowed
    }

    fn replace_by_seq_range(&mut self, seq: u64, start: u64, end: u64) -> FoldOutcome {
        let in_range = |node: &u64| (start..=end).contains(node);
        let Some(first) = self.nodes.iter().position(in_range) else {
            self.push(seq);
            return FoldOutcome::NothingToReplace;
        };
        let shadowed: Vec<u64> = self.nodes.iter().copied().filter(in_range).collect();
        self.nodes.retain(|node| !in_range(node));
        self.nodes.insert(first, seq);
        self.positions = self.nodes.iter().enumerate().map(|(position, node)| (*node, position)).collect();
        FoldOutcome::ReplacedBySeqRange { shadowed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(ops: &[(u64, SurfaceOp)]) -> SurfaceFold {
        let mut surface = SurfaceFold::default();
        for (seq, op) in ops {
            surface.apply(*seq, *op);
        }
        surface
    }

    fn replace(start: u64, end: u64) -> SurfaceOp {
        SurfaceOp::Replace { start, end }
    }

    /// The membership map must always agree with the ordered nodes.
    fn assert_consistent(surface: &SurfaceFold) {
        assert_eq!(surface.positions.len(), surface.nodes.len());
        for (position, node) in surface.nodes.iter().enumerate() {
            assert_eq!(surface.positions.get(node), Some(&position), "node {node}");
        }
    }

    #[test]
    fn seeded_session_folds_to_summary_then_rest() {
        let surface =
            fold(&[(0, SurfaceOp::Append), (1, SurfaceOp::Append), (2, SurfaceOp::Append), (3, replace(0, 0))]);
        assert_eq!(surface.nodes(), &[3, 1, 2]);
        assert!(!surface.contains(0));
        assert!(surface.contains(3));
        assert_consistent(&surface);
    }

    #[test]
    fn replace_is_positional_on_an_unsorted_surface() {
        let mut surface =
            fold(&[(0, SurfaceOp::Append), (1, SurfaceOp::Append), (2, SurfaceOp::Append), (3, replace(0, 0))]);
        // [3, 1, 2]: a whole-surface compaction is start 3, end 2.
        assert_eq!(surface.whole_range(), Some(replace(3, 2)));
        assert_eq!(surface.shadowed_by(3, 2), Some(&[3, 1, 2][..]));
        let outcome = surface.apply(4, replace(3, 2));
        assert_eq!(outcome, FoldOutcome::Replaced { shadowed: vec![3, 1, 2] });
        assert_eq!(surface.nodes(), &[4]);
        assert_consistent(&surface);
    }

    #[test]
    fn middle_range_replacement_reindexes_the_tail() {
        let mut surface = fold(&[
            (0, SurfaceOp::Append),
            (1, SurfaceOp::Append),
            (2, SurfaceOp::Append),
            (3, SurfaceOp::Append),
            (4, SurfaceOp::Append),
        ]);
        surface.apply(5, replace(1, 3));
        assert_eq!(surface.nodes(), &[0, 5, 4]);
        assert_consistent(&surface);
        // A later one-node rewrite of the shifted tail must find it.
        surface.apply(6, replace(4, 4));
        assert_eq!(surface.nodes(), &[0, 5, 6]);
        assert_consistent(&surface);
    }

    #[test]
    fn endpoints_off_the_surface_fall_back_to_the_seq_range() {
        let mut surface =
            fold(&[(0, SurfaceOp::Append), (1, SurfaceOp::Append), (2, SurfaceOp::Append), (3, replace(1, 1))]);
        // Seq 1 is hidden, so DeepSeek Harness would refuse start 1.
        assert_eq!(surface.shadowed_by(1, 2), None);
        let outcome = surface.apply(4, replace(1, 2));
        assert_eq!(outcome, FoldOutcome::ReplacedBySeqRange { shadowed: vec![2] });
        assert_eq!(surface.nodes(), &[0, 3, 4]);
        assert_consistent(&surface);
    }

    #[test]
    fn start_after_end_falls_back_to_the_seq_range() {
        let mut surface = fold(&[(0, SurfaceOp::Append), (1, SurfaceOp::Append)]);
        assert_eq!(surface.shadowed_by(1, 0), None);
        assert_eq!(surface.apply(2, replace(1, 0)), FoldOutcome::NothingToReplace);
        assert_eq!(surface.nodes(), &[0, 1, 2]);
        assert_consistent(&surface);
    }

    #[test]
    fn unmatched_replace_appends_at_the_end() {
        let mut surface = fold(&[(5, SurfaceOp::Append)]);
        assert_eq!(surface.apply(6, replace(0, 3)), FoldOutcome::NothingToReplace);
        assert_eq!(surface.nodes(), &[5, 6]);
        assert_consistent(&surface);
    }

    #[test]
    fn empty_surface_has_no_whole_range() {
        assert_eq!(SurfaceFold::default().whole_range(), None);
    }
}

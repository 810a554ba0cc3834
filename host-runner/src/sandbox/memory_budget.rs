//! The plugin's memory budget: one cap on everything its code can grow — all
//! its linear memories and tables together — rather than a cap per memory,
//! which a component with many memories (or one huge table) would multiply.

use std::fmt;

use wasmtime::ResourceLimiter;

/// How many linear memories, and how many tables, one plugin instance may
/// create. A component built from several core modules has a few of each;
/// the budget below bounds their sizes, this bounds the address space
/// reserved for them.
const MAX_MEMORIES: usize = 32;
const MAX_TABLES: usize = 32;
/// Core instances per store: the components plugins are built into have a
/// handful (the module, its adapters and shims).
const MAX_INSTANCES: usize = 32;
/// What one table element costs the host (a pointer, in wasmtime).
const TABLE_ELEMENT_BYTES: usize = size_of::<usize>();

/// The refusal that ends a call whose plugin asked to grow past the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OverBudget {
    /// The budget, in bytes.
    pub limit_bytes: usize,
}

impl fmt::Display for OverBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the plugin's memories and tables would exceed {} bytes", self.limit_bytes)
    }
}

impl std::error::Error for OverBudget {}

/// A store's running total of the bytes its memories and tables hold.
#[derive(Debug)]
pub(crate) struct MemoryBudget {
    limit_bytes: usize,
    used_bytes: usize,
    /// The growth just allowed, taken back if wasmtime then fails to make it.
    /// Cleared by every request, so a failure reported without a request
    /// before it (wasmtime has a few) takes back nothing.
    pending_bytes: usize,
}

impl MemoryBudget {
    pub(crate) fn new(limit_bytes: usize) -> Self {
        MemoryBudget { limit_bytes, used_bytes: 0, pending_bytes: 0 }
    }

    /// Allows a growth of `added` bytes if the total stays within the budget.
    fn grow(&mut self, added: usize) -> wasmtime::Result<bool> {
        self.pending_bytes = 0;
        let total = self.used_bytes.checked_add(added).filter(|&total| total <= self.limit_bytes);
        let Some(total) = total else {
            return Err(wasmtime::Error::new(OverBudget { limit_bytes: self.limit_bytes }));
        };
        self.used_bytes = total;
        self.pending_bytes = added;
        Ok(true)
    }

    /// Takes back the growth just allowed, which did not happen.
    fn undo(&mut self) {
        self.used_bytes -= self.pending_bytes;
        self.pending_bytes = 0;
    }
}

impl ResourceLimiter for MemoryBudget {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        // Past the memory's own declared maximum, `memory.grow` fails as the
        // wasm spec says (it returns -1); that is not the host's cap.
        if maximum.is_some_and(|maximum| desired > maximum) {
            self.pending_bytes = 0;
            return Ok(false);
        }
        self.grow(desired.saturating_sub(current))
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.undo();
        Err(error.context("the host could not grow the plugin's memory"))
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        if maximum.is_some_and(|maximum| desired > maximum) {
            self.pending_bytes = 0;
            return Ok(false);
        }
        self.grow(desired.saturating_sub(current).saturating_mul(TABLE_ELEMENT_BYTES))
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.undo();
        Err(error.context("the host could not grow the plugin's table"))
    }

    fn instances(&self) -> usize {
        MAX_INSTANCES
    }

    fn tables(&self) -> usize {
        MAX_TABLES
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    #[test]
    fn memories_and_tables_share_one_budget() {
        let mut budget = MemoryBudget::new(64 * MIB);
        assert!(budget.memory_growing(0, 40 * MIB, None).unwrap());
        // A second memory may not take what the first already holds.
        let refused = budget.memory_growing(0, 30 * MIB, None).unwrap_err();
        assert_eq!(refused.downcast_ref::<OverBudget>(), Some(&OverBudget { limit_bytes: 64 * MIB }));
        assert!(budget.memory_growing(0, 20 * MIB, None).unwrap());
        // 4 MiB left: half a million table elements fit, a million do not.
        assert!(budget.table_growing(0, 500_000, None).unwrap());
        assert!(budget.table_growing(500_000, 1_000_000, None).is_err());
        assert!(budget.memory_growing(40 * MIB, 40 * MIB + 64 * 1024, None).unwrap());
    }

    #[test]
    fn a_growth_that_failed_gives_its_bytes_back() {
        let mut budget = MemoryBudget::new(64 * MIB);
        assert!(budget.memory_growing(0, 60 * MIB, None).unwrap());
        assert!(budget.memory_grow_failed(wasmtime::Error::msg("no memory")).is_err());
        assert!(budget.memory_growing(0, 60 * MIB, None).unwrap());
    }

    #[test]
    fn a_failure_without_a_request_takes_back_nothing() {
        let mut budget = MemoryBudget::new(64 * MIB);
        assert!(budget.memory_growing(0, 60 * MIB, None).unwrap());
        // A growth refused by the memory's own maximum, then a failure
        // reported by wasmtime on its own: the 60 MiB stay counted.
        assert!(!budget.memory_growing(60 * MIB, 200 * MIB, Some(100 * MIB)).unwrap());
        assert!(budget.memory_grow_failed(wasmtime::Error::msg("too big")).is_err());
        assert!(budget.table_grow_failed(wasmtime::Error::msg("overflow")).is_err());
        assert!(budget.memory_growing(0, 8 * MIB, None).is_err());
    }

    #[test]
    fn a_memory_past_its_own_maximum_fails_as_wasm_says_without_counting() {
        let mut budget = MemoryBudget::new(64 * MIB);
        assert!(!budget.memory_growing(MIB, 3 * MIB, Some(2 * MIB)).unwrap());
        assert!(budget.memory_growing(0, 64 * MIB, None).unwrap());
    }

    #[test]
    fn sizes_that_overflow_are_refused() {
        let mut budget = MemoryBudget::new(64 * MIB);
        assert!(budget.table_growing(0, usize::MAX / 2, None).is_err());
        assert!(budget.memory_growing(0, MIB, None).unwrap());
        let mut budget = MemoryBudget::new(usize::MAX);
        assert!(budget.memory_growing(0, usize::MAX, None).unwrap());
        assert!(budget.memory_growing(0, 1, None).is_err());
    }
}

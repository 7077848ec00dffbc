//! What a target's memory-system models (`[flash]` and those after it) did,
//! as running totals one number each: the engine reads them at every ARP
//! call, so a section's share is the difference between its leave and its
//! enter (issue 27: "the report and `--report-json` give per-section fetch
//! and data stall cycles, and cache hits and misses").
//!
//! Like a section's instruction count, the difference covers whatever the
//! machine ran between the two calls: on one core with several threads, a
//! section that spans a thread switch includes what the other threads'
//! fetches and reads cost the memory system meanwhile.

use serde::Serialize;

/// Running totals of the memory-system models (all of them, summed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemoryCounters {
    /// Cycles instruction fetches stalled (wait states, misses).
    pub fetch_stall: u64,
    /// Cycles data accesses stalled.
    pub data_stall: u64,
    /// Instruction lines found in a cache, and missed.
    pub fetch_hits: u64,
    pub fetch_misses: u64,
    /// Data lines found in a cache, and missed.
    pub data_hits: u64,
    pub data_misses: u64,
}

impl MemoryCounters {
    /// What happened between `earlier` and `self` (the totals only grow;
    /// saturating so that a model reset can never wrap).
    pub fn since(self, earlier: MemoryCounters) -> MemoryCounters {
        MemoryCounters {
            fetch_stall: self.fetch_stall.saturating_sub(earlier.fetch_stall),
            data_stall: self.data_stall.saturating_sub(earlier.data_stall),
            fetch_hits: self.fetch_hits.saturating_sub(earlier.fetch_hits),
            fetch_misses: self.fetch_misses.saturating_sub(earlier.fetch_misses),
            data_hits: self.data_hits.saturating_sub(earlier.data_hits),
            data_misses: self.data_misses.saturating_sub(earlier.data_misses),
        }
    }

    /// The two added (two models of one target, or two samples of one
    /// section).
    pub fn plus(self, other: MemoryCounters) -> MemoryCounters {
        MemoryCounters {
            fetch_stall: self.fetch_stall + other.fetch_stall,
            data_stall: self.data_stall + other.data_stall,
            fetch_hits: self.fetch_hits + other.fetch_hits,
            fetch_misses: self.fetch_misses + other.fetch_misses,
            data_hits: self.data_hits + other.data_hits,
            data_misses: self.data_misses + other.data_misses,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(n: u64) -> MemoryCounters {
        MemoryCounters {
            fetch_stall: n,
            data_stall: 2 * n,
            fetch_hits: 3 * n,
            fetch_misses: 4 * n,
            data_hits: 5 * n,
            data_misses: 6 * n,
        }
    }

    #[test]
    fn a_section_gets_the_difference_of_each_total() {
        let d = counters(10).since(counters(3));
        assert_eq!(d, counters(7));
        assert_eq!(counters(3).plus(d), counters(10));
    }

    #[test]
    fn an_earlier_larger_total_gives_zero_not_a_wrap() {
        assert_eq!(counters(3).since(counters(10)), MemoryCounters::default());
    }
}

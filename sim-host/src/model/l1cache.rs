//! The Cortex-M7's L1 instruction and data caches and its tightly coupled
//! memories (issue 27), described by a target file's `[l1cache]` table and
//! switched by the firmware through the core's registers (CCR.IC, CCR.DC,
//! the cache maintenance operations), as on silicon.
//!
//! The rules, each from ARM DDI 0489F (Cortex-M7 TRM) or DUI 0646C (the
//! Cortex-M7 Devices Generic User Guide) as the target file cites them,
//! or marked as this model's assumption:
//! - an address is in one of the file's ranges: TCM (never cached, no
//!   stall: DDI 0489F 5.1, TCM accesses bypass the caches), write-through
//!   or write-back cacheable (DUI 0646C Table 2.12: the default memory map
//!   makes the Code region WT and the SRAM region WBWA), or uncached;
//!   each non-TCM range has a `latency`, the stall of one read over AXI;
//! - instruction side, per executed block: each cache line the block's
//!   instructions are in is looked up once (in order). With CCR.IC and a
//!   cacheable range, a hit costs nothing, a miss allocates the line
//!   (read-allocate, DDI 0489F 5.9) and stalls `latency` (the line fill
//!   returns the critical word first and streams the rest, 5.9: the core
//!   waits for the first word only). Without the cache, each 64-bit fetch
//!   granule the block touches is one AXI read: `latency` each (the PFU
//!   fetches 64 bits at a time, DDI 0489F 1.2.3; no prefetch across
//!   reads is modelled);
//! - data side, per access: with CCR.DC in a cacheable range, a read hit
//!   or a write hit costs nothing (a write hit in a write-back range makes
//!   the line dirty); a read miss allocates (`latency`); a write miss
//!   allocates in a write-back range (write-allocate: `latency`, the line
//!   dirty) and goes to memory through the store buffer in a
//!   write-through range (no stall, no allocation). Without the cache, or
//!   in an uncached range, a read costs `latency` and a write nothing (the
//!   store buffer: this model's assumption);
//! - replacement: the TRM pages found give none for the M7. The model
//!   fills an invalid way first (the lowest) and otherwise replaces the
//!   least recently used way of the set: deterministic, and this model's
//!   choice;
//! - evicting a dirty line writes it back: `latency` of its range (one
//!   AXI burst; the eviction buffer that may hide it is not modelled:
//!   this model's assumption); cleaning a dirty line by a maintenance
//!   operation costs the same;
//! - the caches are invalid at reset (silicon leaves them unknown and
//!   firmware must invalidate them: CMSIS's SCB_EnableICache and
//!   SCB_EnableDCache do).
//!
//! Not modelled: dynamic read-allocate mode (DDI 0489F 5.9.1), the MPU's
//! attributes (enabling the MPU is refused), the AXI's outstanding
//! transactions, a miss waiting for a line fill in flight.
//!
//! The state is plain data and every step is a function of it and the
//! access: identical runs give identical counts.

use crate::model::memsys::Cited;
use serde::Deserialize;

/// The cache maintenance registers (ARMv7-M B2.2.7, DDI 0489F Table 4-1).
pub const CLIDR: u32 = 0xE000_ED78;
pub const CTR: u32 = 0xE000_ED7C;
pub const CCSIDR: u32 = 0xE000_ED80;
pub const CSSELR: u32 = 0xE000_ED84;
pub const ICIALLU: u32 = 0xE000_EF50;
pub const ICIMVAU: u32 = 0xE000_EF58;
pub const DCIMVAC: u32 = 0xE000_EF5C;
pub const DCISW: u32 = 0xE000_EF60;
pub const DCCMVAU: u32 = 0xE000_EF64;
pub const DCCMVAC: u32 = 0xE000_EF68;
pub const DCCSW: u32 = 0xE000_EF6C;
pub const DCCIMVAC: u32 = 0xE000_EF70;
pub const DCCISW: u32 = 0xE000_EF74;
pub const BPIALL: u32 = 0xE000_EF78;
/// CCR's cache enable bits (ARMv7-M B3.2.8: DC bit 16, IC bit 17).
pub const CCR_DC: u32 = 1 << 16;
pub const CCR_IC: u32 = 1 << 17;

/// The most stall cycles a range's access may cost.
pub const MAX_LATENCY: u64 = 1000;

/// One cache as a file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheFile {
    pub size: u64,
    pub ways: u64,
    pub cite: String,
}

/// An address range and what it is to the caches.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangeFile {
    pub name: String,
    pub start: u64,
    pub size: u64,
    /// `tcm`, `write-through`, `write-back` or `uncached`.
    pub policy: String,
    /// Stall cycles of one read over AXI (not for `tcm`).
    #[serde(default)]
    pub latency: Option<u64>,
    pub cite: String,
}

/// The `[l1cache]` table of a target file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L1CacheFile {
    /// `cortex-m7` (the only one so far).
    pub kind: String,
    pub line_bytes: Cited,
    /// Bytes of one instruction fetch without the cache.
    pub fetch_bytes: Cited,
    pub icache: CacheFile,
    pub dcache: CacheFile,
    /// Where the replacement rule comes from (or that it is a choice).
    pub replacement: String,
    /// CCR's IC and DC bits at reset.
    pub reset: Cited,
    pub ranges: Vec<RangeFile>,
}

/// What a range is to the caches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Tcm,
    WriteThrough,
    WriteBack,
    Uncached,
}

impl Policy {
    fn parse(s: &str) -> Option<Policy> {
        Some(match s {
            "tcm" => Policy::Tcm,
            "write-through" => Policy::WriteThrough,
            "write-back" => Policy::WriteBack,
            "uncached" => Policy::Uncached,
            _ => return None,
        })
    }

    fn cacheable(self) -> bool {
        matches!(self, Policy::WriteThrough | Policy::WriteBack)
    }
}

/// A validated range.
#[derive(Debug, Clone, PartialEq)]
pub struct Range {
    pub name: String,
    pub start: u64,
    pub end: u64,
    pub policy: Policy,
    pub latency: u32,
}

/// A validated cache: `sets` x `ways` lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub sets: u32,
    pub ways: u32,
}

/// A validated `[l1cache]`.
#[derive(Debug, Clone, PartialEq)]
pub struct L1Spec {
    pub line_bytes: u32,
    pub fetch_bytes: u32,
    pub icache: Geometry,
    pub dcache: Geometry,
    /// CCR's IC and DC bits at reset.
    pub reset: u32,
    pub ranges: Vec<Range>,
}

impl L1Spec {
    /// The range holding `addr`.
    pub fn range_of(&self, addr: u64) -> Option<&Range> {
        self.ranges
            .iter()
            .find(|r| (r.start..r.end).contains(&addr))
    }

    /// The ranges whose accesses the model prices (all but TCM).
    pub fn priced_ranges(&self) -> impl Iterator<Item = &Range> {
        self.ranges.iter().filter(|r| r.policy != Policy::Tcm)
    }
}

type FieldError = (String, String);

/// Checks `[l1cache]` against the memory map (`regions`: name, start, end).
pub fn validate(f: L1CacheFile, regions: &[(String, u64, u64)]) -> Result<L1Spec, FieldError> {
    let err = |field: &str, m: String| (format!("l1cache.{field}"), m);
    if f.kind != "cortex-m7" {
        return Err(err(
            "kind",
            format!("`{}`: the only kind is \"cortex-m7\"", f.kind),
        ));
    }
    for (field, cite) in [
        ("line_bytes.cite", &f.line_bytes.cite),
        ("fetch_bytes.cite", &f.fetch_bytes.cite),
        ("icache.cite", &f.icache.cite),
        ("dcache.cite", &f.dcache.cite),
        ("replacement", &f.replacement),
        ("reset.cite", &f.reset.cite),
    ] {
        if cite.trim().is_empty() {
            return Err(err(field, "must name its source".into()));
        }
    }
    let line = f.line_bytes.value;
    if !(8..=256).contains(&line) || !line.is_power_of_two() {
        return Err(err(
            "line_bytes.value",
            format!("{line}: a power of two from 8 to 256"),
        ));
    }
    let fetch = f.fetch_bytes.value;
    if !(2..=line).contains(&fetch) || !fetch.is_power_of_two() {
        return Err(err(
            "fetch_bytes.value",
            format!("{fetch}: a power of two from 2 to line_bytes"),
        ));
    }
    if f.reset.value & !u64::from(CCR_IC | CCR_DC) != 0 {
        return Err(err(
            "reset.value",
            format!(
                "{:#x}: only CCR.IC ({CCR_IC:#x}) and CCR.DC ({CCR_DC:#x})",
                f.reset.value
            ),
        ));
    }
    let icache = geometry(&f.icache, line).map_err(|m| err("icache", m))?;
    let dcache = geometry(&f.dcache, line).map_err(|m| err("dcache", m))?;
    let mut ranges = Vec::new();
    for (i, r) in f.ranges.into_iter().enumerate() {
        ranges.push(
            range(r, regions, &ranges).map_err(|(k, m)| err(&format!("ranges[{i}].{k}"), m))?,
        );
    }
    Ok(L1Spec {
        line_bytes: line as u32,
        fetch_bytes: fetch as u32,
        icache,
        dcache,
        reset: f.reset.value as u32,
        ranges,
    })
}

/// A cache's sets and ways: a power-of-two number of sets, 1 to 8 ways.
fn geometry(c: &CacheFile, line: u64) -> Result<Geometry, String> {
    if !(1..=8).contains(&c.ways) {
        return Err(format!("ways = {}: 1 to 8", c.ways));
    }
    let sets = c.size / line / c.ways;
    if sets == 0 || sets * line * c.ways != c.size || !sets.is_power_of_two() || sets > 4096 {
        return Err(format!(
            "size = {}: ways x a power-of-two number of sets (at most 4096) of {line}-byte lines",
            c.size
        ));
    }
    Ok(Geometry {
        sets: sets as u32,
        ways: c.ways as u32,
    })
}

fn range(
    r: RangeFile,
    regions: &[(String, u64, u64)],
    before: &[Range],
) -> Result<Range, (String, String)> {
    let e = |k: &str, m: String| (k.to_owned(), m);
    if r.cite.trim().is_empty() {
        return Err(e("cite", "must name its source".into()));
    }
    let policy = Policy::parse(&r.policy).ok_or_else(|| {
        e(
            "policy",
            format!(
                "`{}`: one of tcm, write-through, write-back, uncached",
                r.policy
            ),
        )
    })?;
    let end = r
        .start
        .checked_add(r.size)
        .filter(|&end| r.size > 0 && end <= 1 << 32);
    let Some(end) = end else {
        return Err(e(
            "size",
            format!("{:#x}: a non-empty range of the 32-bit space", r.size),
        ));
    };
    if !regions.iter().any(|(_, s, t)| *s <= r.start && end <= *t) {
        return Err(e(
            "start",
            format!(
                "{:#x}..{end:#x} is not inside one region of the memory map",
                r.start
            ),
        ));
    }
    if let Some(o) = before.iter().find(|o| r.start < o.end && o.start < end) {
        return Err(e("start", format!("overlaps range `{}`", o.name)));
    }
    let latency = match (policy, r.latency) {
        (Policy::Tcm, None) => 0,
        (Policy::Tcm, Some(_)) => {
            return Err(e(
                "latency",
                "a TCM has no latency: zero wait states".into(),
            ))
        }
        (_, None) => return Err(e("latency", "missing: the stall of one read".into())),
        (_, Some(l)) if l > MAX_LATENCY => {
            return Err(e("latency", format!("{l}: at most {MAX_LATENCY}")))
        }
        (_, Some(l)) => l as u32,
    };
    Ok(Range {
        name: r.name,
        start: r.start,
        end,
        policy,
        latency,
    })
}

/// What the caches did in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct L1Stats {
    /// Stall cycles of instruction fetches and of data accesses.
    pub fetch_stall: u64,
    pub data_stall: u64,
    pub icache_hits: u64,
    pub icache_misses: u64,
    /// Instruction fetches over AXI without the cache (64-bit granules).
    pub uncached_fetches: u64,
    pub dcache_hits: u64,
    pub dcache_misses: u64,
    /// Data reads over AXI without the cache.
    pub uncached_reads: u64,
    /// Dirty lines written back (evicted, or cleaned by maintenance).
    pub write_backs: u64,
}

impl L1Stats {
    /// Its share of the run's memory counters (`model::memory_counters`):
    /// an access that bypasses a disabled or uncached cache is a miss, as
    /// a flash line read without the ART's cache is.
    pub fn counters(&self) -> crate::model::memory_counters::MemoryCounters {
        crate::model::memory_counters::MemoryCounters {
            fetch_stall: self.fetch_stall,
            data_stall: self.data_stall,
            fetch_hits: self.icache_hits,
            fetch_misses: self.icache_misses + self.uncached_fetches,
            data_hits: self.dcache_hits,
            data_misses: self.dcache_misses + self.uncached_reads,
        }
    }
}

/// One way of a set: the line number + 1 (0: invalid), dirty, last use.
#[derive(Debug, Clone, Copy, Default)]
struct Way {
    tag: u32,
    dirty: bool,
    used: u64,
}

/// A set-associative cache's state.
#[derive(Debug, Clone)]
struct Cache {
    geometry: Geometry,
    ways: Vec<Way>,
    clock: u64,
}

/// What a lookup found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lookup {
    Hit,
    /// A miss that allocated; the line it evicted if that was dirty.
    Filled(Option<u32>),
}

impl Cache {
    fn new(geometry: Geometry) -> Cache {
        Cache {
            geometry,
            ways: vec![Way::default(); (geometry.sets * geometry.ways) as usize],
            clock: 0,
        }
    }

    fn set(&mut self, line: u32) -> &mut [Way] {
        let g = self.geometry;
        let s = (line & (g.sets - 1)) as usize * g.ways as usize;
        &mut self.ways[s..s + g.ways as usize]
    }

    /// Looks `line` up; a hit is used now. `allocate`: fill on a miss.
    fn access(&mut self, line: u32, allocate: bool, dirty: bool) -> Option<Lookup> {
        self.clock += 1;
        let now = self.clock;
        let set = self.set(line);
        if let Some(w) = set.iter_mut().find(|w| w.tag == line + 1) {
            w.used = now;
            w.dirty |= dirty;
            return Some(Lookup::Hit);
        }
        if !allocate {
            return None;
        }
        let victim = match set.iter().position(|w| w.tag == 0) {
            Some(i) => i,
            None => (0..set.len()).min_by_key(|&i| set[i].used).unwrap_or(0),
        };
        let old = set[victim];
        set[victim] = Way {
            tag: line + 1,
            dirty,
            used: now,
        };
        Some(Lookup::Filled(
            (old.tag != 0 && old.dirty).then(|| old.tag - 1),
        ))
    }

    /// The way holding `line`, if any.
    fn find(&mut self, line: u32) -> Option<&mut Way> {
        self.set(line).iter_mut().find(|w| w.tag == line + 1)
    }

    fn invalidate_all(&mut self) {
        self.ways.fill(Way::default());
    }
}

/// A maintenance operation on one data line: clean (write back if
/// dirty) and/or invalidate.
#[derive(Debug, Clone, Copy)]
struct Maintain {
    clean: bool,
    invalidate: bool,
}

/// The caches' state in a run.
#[derive(Debug, Clone)]
pub struct L1State {
    spec: L1Spec,
    ccr: u32,
    csselr: u32,
    icache: Cache,
    dcache: Cache,
    pub stats: L1Stats,
}

impl L1State {
    pub fn new(spec: &L1Spec) -> L1State {
        L1State {
            spec: spec.clone(),
            ccr: spec.reset,
            csselr: 0,
            icache: Cache::new(spec.icache),
            dcache: Cache::new(spec.dcache),
            stats: L1Stats::default(),
        }
    }

    pub fn spec(&self) -> &L1Spec {
        &self.spec
    }

    /// CCR's IC and DC bits as the firmware last wrote them.
    pub fn ccr_bits(&self) -> u32 {
        self.ccr
    }

    pub fn set_ccr_bits(&mut self, value: u32) {
        self.ccr = value & (CCR_IC | CCR_DC);
    }

    fn line(&self, addr: u64) -> u32 {
        (addr / u64::from(self.spec.line_bytes)) as u32
    }

    /// A block executes: `lines` are the cache lines its instructions are
    /// in, and `granules` the 64-bit fetch granules, both in order, all in
    /// priced (non-TCM) ranges. Returns the stall cycles.
    pub fn fetch_block(&mut self, lines: &[u32], granules: &[u32]) -> u32 {
        let mut stall = 0;
        let line_bytes = u64::from(self.spec.line_bytes);
        let fetch_bytes = u64::from(self.spec.fetch_bytes);
        let enabled = self.ccr & CCR_IC != 0;
        let cached = |s: &L1State, addr: u64| {
            s.spec
                .range_of(addr)
                .map_or((false, 0), |r| (r.policy.cacheable(), r.latency))
        };
        for &line in lines {
            let (cacheable, latency) = cached(self, u64::from(line) * line_bytes);
            if !(enabled && cacheable) {
                continue;
            }
            if self.icache.access(line, true, false) == Some(Lookup::Hit) {
                self.stats.icache_hits += 1;
            } else {
                self.stats.icache_misses += 1;
                stall += latency;
            }
        }
        for &granule in granules {
            let addr = u64::from(granule) * fetch_bytes;
            let (cacheable, latency) = cached(self, addr);
            if !(enabled && cacheable) {
                self.stats.uncached_fetches += 1;
                stall += latency;
            }
        }
        self.stats.fetch_stall += u64::from(stall);
        stall
    }

    /// A data access at `addr`: returns its stall cycles.
    pub fn data(&mut self, addr: u64, write: bool) -> u32 {
        let Some(range) = self.spec.range_of(addr) else {
            return 0;
        };
        let (policy, latency) = (range.policy, range.latency);
        let stall = if policy == Policy::Tcm {
            0
        } else if !(self.ccr & CCR_DC != 0 && policy.cacheable()) {
            if write {
                0
            } else {
                self.stats.uncached_reads += 1;
                latency
            }
        } else {
            self.cached_data(self.line(addr), write, policy, latency)
        };
        self.stats.data_stall += u64::from(stall);
        stall
    }

    fn cached_data(&mut self, line: u32, write: bool, policy: Policy, latency: u32) -> u32 {
        let write_back = policy == Policy::WriteBack;
        let allocate = !write || write_back;
        match self.dcache.access(line, allocate, write && write_back) {
            Some(Lookup::Hit) => {
                self.stats.dcache_hits += 1;
                0
            }
            Some(Lookup::Filled(evicted)) => {
                self.stats.dcache_misses += 1;
                latency + evicted.map_or(0, |l| self.write_back(l))
            }
            // a write-through write miss: to memory through the store buffer
            None => {
                self.stats.dcache_misses += 1;
                0
            }
        }
    }

    /// A dirty line goes to memory: its range's latency.
    fn write_back(&mut self, line: u32) -> u32 {
        self.stats.write_backs += 1;
        let addr = u64::from(line) * u64::from(self.spec.line_bytes);
        self.spec.range_of(addr).map_or(0, |r| r.latency)
    }

    /// A read of one of the cache's ID registers, `None` for another.
    pub fn read_register(&self, addr: u32) -> Option<u32> {
        Some(match addr {
            // separate I and D caches at level 1 (Ctype1 0b011), LoUU =
            // LoC = 1, in ARMv7-M's CLIDR layout: the model's encoding of
            // its one level, not a value quoted from the TRM
            CLIDR => 0x0900_0003,
            // DUI 0646C 4.5.2: ARMv7 format, 8-word writeback granule and
            // smallest lines, ERG 0 (the monitor holds no address)
            CTR => 0x8000_0000 | self.ctr_lines(),
            CCSIDR => self.ccsidr(),
            CSSELR => self.csselr,
            _ => return None,
        })
    }

    fn ctr_lines(&self) -> u32 {
        let words = (self.spec.line_bytes / 4).trailing_zeros();
        (words << 24) | (words << 16) | 0xC000 | words
    }

    /// CCSIDR of the cache CSSELR selects (ARMv7-M's CCSIDR layout):
    /// NumSets - 1, Associativity - 1, log2(words per line) - 2 (what
    /// CMSIS's set/way loops read), and the policies supported in bits
    /// 31:28: WT, WB, RA, WA for the data cache (DDI 0489F 5.9), RA for
    /// the instruction cache (the model's choice: it only reads).
    fn ccsidr(&self) -> u32 {
        let (g, attributes) = if self.csselr & 1 != 0 {
            (self.spec.icache, 0x2000_0000)
        } else {
            (self.spec.dcache, 0xF000_0000)
        };
        let line = (self.spec.line_bytes / 4).trailing_zeros() - 2;
        attributes | (g.sets - 1) << 13 | (g.ways - 1) << 3 | line
    }

    /// A write of one of the cache registers: returns the stall cycles it
    /// costs (write-backs), `None` for another register.
    pub fn write_register(&mut self, addr: u32, value: u32) -> Option<u32> {
        let (clean, invalidate) = (true, true);
        let by_address = |s: &L1State| s.line(u64::from(value));
        let stall = match addr {
            CSSELR => {
                self.csselr = value & 1;
                0
            }
            ICIALLU => {
                self.icache.invalidate_all();
                0
            }
            ICIMVAU => {
                let line = by_address(self);
                if let Some(w) = self.icache.find(line) {
                    *w = Way::default();
                }
                0
            }
            BPIALL => 0,
            DCIMVAC => self.maintain_line(
                by_address(self),
                Maintain {
                    clean: false,
                    invalidate,
                },
            ),
            DCCMVAU | DCCMVAC => self.maintain_line(
                by_address(self),
                Maintain {
                    clean,
                    invalidate: false,
                },
            ),
            DCCIMVAC => self.maintain_line(by_address(self), Maintain { clean, invalidate }),
            DCISW => self.maintain_set_way(
                value,
                Maintain {
                    clean: false,
                    invalidate,
                },
            ),
            DCCSW => self.maintain_set_way(
                value,
                Maintain {
                    clean,
                    invalidate: false,
                },
            ),
            DCCISW => self.maintain_set_way(value, Maintain { clean, invalidate }),
            _ => return None,
        };
        self.stats.data_stall += u64::from(stall);
        Some(stall)
    }

    fn maintain_line(&mut self, line: u32, op: Maintain) -> u32 {
        let Some(way) = self.dcache.find(line) else {
            return 0;
        };
        let old = *way;
        Self::apply(way, op);
        self.cleaned(old, op)
    }

    /// DCISW and friends: the set in bits [log2(sets) + 4 : 5] for 32-byte
    /// lines, the way in the top bits (ARMv7-M B2.2.7).
    fn maintain_set_way(&mut self, value: u32, op: Maintain) -> u32 {
        let g = self.spec.dcache;
        let line_shift = self.spec.line_bytes.trailing_zeros();
        let set = (value >> line_shift) & (g.sets - 1);
        let way_shift = 32 - g.ways.next_power_of_two().trailing_zeros();
        let way = if g.ways == 1 { 0 } else { value >> way_shift };
        if way >= g.ways {
            return 0;
        }
        let slot = &mut self.dcache.ways[(set * g.ways + way) as usize];
        let old = *slot;
        Self::apply(slot, op);
        self.cleaned(old, op)
    }

    fn apply(way: &mut Way, op: Maintain) {
        if op.invalidate {
            *way = Way::default();
        } else if op.clean {
            way.dirty = false;
        }
    }

    /// The write-back a clean of `old` makes.
    fn cleaned(&mut self, old: Way, op: Maintain) -> u32 {
        if op.clean && old.tag != 0 && old.dirty {
            self.write_back(old.tag - 1)
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> L1Spec {
        L1Spec {
            line_bytes: 32,
            fetch_bytes: 8,
            icache: Geometry { sets: 64, ways: 2 },
            dcache: Geometry { sets: 32, ways: 4 },
            reset: 0,
            ranges: vec![
                Range {
                    name: "itcm".into(),
                    start: 0,
                    end: 0x4000,
                    policy: Policy::Tcm,
                    latency: 0,
                },
                Range {
                    name: "flash".into(),
                    start: 0x0800_0000,
                    end: 0x0810_0000,
                    policy: Policy::WriteThrough,
                    latency: 7,
                },
                Range {
                    name: "sram".into(),
                    start: 0x2001_0000,
                    end: 0x2005_0000,
                    policy: Policy::WriteBack,
                    latency: 2,
                },
            ],
        }
    }

    const FLASH_LINE: u32 = 0x0800_0000 / 32;

    #[test]
    fn without_the_instruction_cache_every_granule_is_a_read() {
        let mut c = L1State::new(&spec());
        let granules: Vec<u32> = (0..3).map(|i| 0x0800_0000 / 8 + i).collect();
        assert_eq!(c.fetch_block(&[FLASH_LINE], &granules), 3 * 7);
        assert_eq!(
            c.fetch_block(&[FLASH_LINE], &granules),
            3 * 7,
            "no cache: again"
        );
        assert_eq!(c.stats.uncached_fetches, 6);
    }

    #[test]
    fn two_ways_hold_two_lines_of_a_set_and_lru_thrashes_three() {
        let mut c = L1State::new(&spec());
        c.set_ccr_bits(CCR_IC);
        // lines 64 apart map to one set of the 64-set instruction cache
        let set = |k: u32| FLASH_LINE + 64 * k;
        let two = [set(0), set(1)];
        assert_eq!(c.fetch_block(&two, &[]), 2 * 7);
        assert_eq!(c.fetch_block(&two, &[]), 0, "both hit");
        let three = [set(0), set(1), set(2)];
        assert_eq!(c.fetch_block(&three, &[]), 7, "the third misses");
        // set(2) evicted set(0), the least recently used: every line misses
        assert_eq!(c.fetch_block(&three, &[]), 3 * 7);
        c.write_register(ICIALLU, 0);
        assert_eq!(c.fetch_block(&[set(2)], &[]), 7, "invalidated");
    }

    #[test]
    fn tcm_costs_nothing_and_uncached_reads_cost_the_latency() {
        let mut c = L1State::new(&spec());
        assert_eq!(c.data(0x100, false), 0);
        assert_eq!(c.data(0x2001_0000, false), 2, "D-cache off");
        assert_eq!(c.data(0x2001_0000, true), 0, "writes: store buffer");
        c.set_ccr_bits(CCR_DC);
        assert_eq!(c.data(0x2001_0000, false), 2, "a miss fills");
        assert_eq!(c.data(0x2001_0004, false), 0, "the same line hits");
    }

    #[test]
    fn a_dirty_line_evicted_is_written_back() {
        let mut c = L1State::new(&spec());
        c.set_ccr_bits(CCR_DC);
        // 1024 bytes apart: one set of the 32-set, 4-way data cache
        let at = |k: u64| 0x2001_0000 + 1024 * k;
        let first: u32 = (0..4).map(|k| c.data(at(k), true)).sum();
        assert_eq!(first, 4 * 2, "write-allocate: four fills");
        assert_eq!(c.data(at(4), true), 2 + 2, "a fill and a write-back");
        assert_eq!(c.stats.write_backs, 1);
        // write-through: a write miss neither allocates nor stalls (set 1:
        // no dirty line to evict there)
        assert_eq!(c.data(0x0800_0020, true), 0);
        assert_eq!(c.data(0x0800_0020, false), 7);
    }

    #[test]
    fn set_way_maintenance_cleans_and_invalidates() {
        let mut c = L1State::new(&spec());
        c.set_ccr_bits(CCR_DC);
        c.data(0x2001_0020, true); // line in set 1, way 0, dirty
                                   // DCCSW set 1 way 0: cleaned (a write-back), still valid
        assert_eq!(c.write_register(DCCSW, 1 << 5), Some(2));
        assert_eq!(c.data(0x2001_0020, false), 0);
        // DCISW of every set and way (CMSIS's loop): all invalid
        for set in 0..32u32 {
            for way in 0..4u32 {
                c.write_register(DCISW, set << 5 | way << 30);
            }
        }
        assert_eq!(c.data(0x2001_0020, false), 2);
        assert_eq!(c.stats.write_backs, 1);
    }

    #[test]
    fn the_id_registers_describe_the_geometry() {
        let mut c = L1State::new(&spec());
        assert_eq!(c.read_register(CLIDR), Some(0x0900_0003));
        assert_eq!(c.read_register(CTR), Some(0x8303_C003));
        // data: 32 sets, 4 ways, 8 words
        assert_eq!(
            c.read_register(CCSIDR),
            Some(0xF000_0000 | 31 << 13 | 3 << 3 | 1)
        );
        c.write_register(CSSELR, 1);
        assert_eq!(
            c.read_register(CCSIDR),
            Some(0x2000_0000 | 63 << 13 | 1 << 3 | 1)
        );
    }
}

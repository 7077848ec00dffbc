//! The memory system in front of a flash region (issue 27): a flash
//! accelerator of the STM32F4 kind (RM0090 section 3.5, "Read interface"),
//! described by a target file's `[flash]` table and switched by the
//! firmware through its access control register (FLASH_ACR), as on
//! silicon.
//!
//! The model, each rule from RM0090 (Rev 19) as the target file cites it:
//! - the flash is read a line (128 bits) at a time; a read takes
//!   `LATENCY` wait states beyond the one cycle a zero-wait memory takes
//!   (3.5.1, Table 10; FLASH_ACR.LATENCY, 3.9.1). The core's cycle table
//!   already counts that one cycle, so a line read costs `LATENCY` stall
//!   cycles;
//! - instructions of the line being executed come from the line just read
//!   (the "currently used instruction line", 3.5.2): no stall;
//! - with PRFTEN, the next sequential line is read while the current one
//!   executes (3.5.2 "Instruction prefetch"): it is ready `LATENCY + 1`
//!   cycles after the current line was delivered, so a sequential line
//!   stalls `max(0, LATENCY + 1 - E)`, E the cycles the core spent
//!   executing the current line's instructions since it was delivered,
//!   and never more than a read of its own (`LATENCY`);
//! - with ICEN, a line in the instruction cache costs nothing; a line read
//!   on a miss (not the current line, not the prefetched one, not in the
//!   cache) is copied into a 64-line instruction
//!   cache, replaced least recently used (3.5.2 "Instruction cache
//!   memory"); a hit costs nothing ("provided without inserting any
//!   delay"). The manual gives no associativity: the model's cache is
//!   fully associative;
//! - data reads from the flash (literal pools, constants; D-Code, 3.5.2
//!   "Data management") each read a line: `LATENCY` stall cycles, unless,
//!   with DCEN, the line is in the 8-line data cache ("works like the
//!   instruction cache memory");
//! - ICRST and DCRST empty the caches when written 1 while the cache is
//!   disabled (3.9.1).
//!
//! Not modelled (the manual gives no figure): a demand fetch waiting for a
//! prefetch already in flight, and D-Code priority over I-Code when both
//! read the flash in the same cycle.
//!
//! The state is plain data and every step is a function of it and the
//! block executed: identical runs give identical counts.

use serde::Deserialize;

/// FLASH_ACR bits (RM0090 3.9.1, STM32F405/07/15/17: LATENCY is bits 2:0).
pub const ACR_LATENCY: u32 = 0x7;
pub const ACR_PRFTEN: u32 = 1 << 8;
pub const ACR_ICEN: u32 = 1 << 9;
pub const ACR_DCEN: u32 = 1 << 10;
pub const ACR_ICRST: u32 = 1 << 11;
pub const ACR_DCRST: u32 = 1 << 12;
/// The bits FLASH_ACR holds; the others read 0.
pub const ACR_BITS: u32 = ACR_LATENCY | ACR_PRFTEN | ACR_ICEN | ACR_DCEN | ACR_ICRST | ACR_DCRST;

/// The most lines a cache of the model may have: far beyond the ART's 64,
/// small enough for the model's linear search.
pub const MAX_CACHE_LINES: u64 = 1024;

/// A number and its source, as a target file writes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cited {
    pub value: u64,
    pub cite: String,
}

/// The wait states the manual requires per clock range, as a file writes
/// it: `[[max_hz, wait_states], ...]`, ascending.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitStateTable {
    pub table: Vec<(u64, u32)>,
    pub cite: String,
}

/// The `[flash]` table of a target file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlashFile {
    /// The accelerator's kind: `stm32f4-art` (the only one so far).
    pub kind: String,
    /// The memory region it reads.
    pub region: String,
    pub line_bytes: Cited,
    pub wait_states: WaitStateTable,
    pub icache_lines: Cited,
    pub dcache_lines: Cited,
    /// FLASH_ACR's address.
    pub control: Cited,
    /// FLASH_ACR's value at reset.
    pub reset: Cited,
    /// Where the prefetch rule comes from.
    pub prefetch: String,
}

/// A validated flash accelerator.
#[derive(Debug, Clone, PartialEq)]
pub struct FlashSpec {
    pub region: String,
    pub start: u64,
    pub end: u64,
    pub line_bytes: u32,
    /// The wait states the manual requires at the target's clock (at
    /// reset, when a clock tree changes it).
    pub required_wait_states: u32,
    /// The manual's table: `(max_hz, wait_states)` rows, ascending.
    pub wait_state_table: Vec<(u64, u32)>,
    pub icache_lines: usize,
    pub dcache_lines: usize,
    pub control: u64,
    pub reset: u32,
}

impl FlashSpec {
    /// Whether `addr` is in the flash the accelerator reads.
    pub fn contains(&self, addr: u64) -> bool {
        (self.start..self.end).contains(&addr)
    }

    /// The line holding `addr`.
    pub fn line(&self, addr: u64) -> u32 {
        (addr / u64::from(self.line_bytes)) as u32
    }
}

type FieldError = (String, String);

/// Checks `[flash]` against the memory map (`regions`: name, start, end)
/// and the clock.
pub fn validate(
    f: FlashFile,
    regions: &[(String, u64, u64)],
    clock_hz: u64,
    max_hz: u64,
) -> Result<FlashSpec, FieldError> {
    let err = |field: &str, m: String| (format!("flash.{field}"), m);
    if f.kind != "stm32f4-art" {
        return Err(err(
            "kind",
            format!("`{}`: the only kind is \"stm32f4-art\"", f.kind),
        ));
    }
    let Some((_, start, end)) = regions.iter().find(|(n, _, _)| *n == f.region) else {
        return Err(err(
            "region",
            format!("`{}` is no region of the memory map", f.region),
        ));
    };
    for (field, c) in [
        ("line_bytes", &f.line_bytes),
        ("icache_lines", &f.icache_lines),
        ("dcache_lines", &f.dcache_lines),
        ("control", &f.control),
        ("reset", &f.reset),
    ] {
        if c.cite.trim().is_empty() {
            return Err(err(&format!("{field}.cite"), "must name its source".into()));
        }
    }
    for (field, cite) in [
        ("wait_states.cite", &f.wait_states.cite),
        ("prefetch", &f.prefetch),
    ] {
        if cite.trim().is_empty() {
            return Err(err(field, "must name its source".into()));
        }
    }
    let line = f.line_bytes.value;
    if !(4..=256).contains(&line) || !line.is_power_of_two() {
        return Err(err(
            "line_bytes.value",
            format!("{line}: a power of two from 4 to 256"),
        ));
    }
    for (field, c) in [
        ("icache_lines", &f.icache_lines),
        ("dcache_lines", &f.dcache_lines),
    ] {
        if c.value > MAX_CACHE_LINES {
            return Err(err(
                &format!("{field}.value"),
                format!("{}: at most {MAX_CACHE_LINES}", c.value),
            ));
        }
    }
    if f.control.value > u64::from(u32::MAX) - 3 || f.control.value % 4 != 0 {
        return Err(err(
            "control.value",
            format!("{:#x}: a word address of the 32-bit space", f.control.value),
        ));
    }
    if let Some((name, _, _)) = regions
        .iter()
        .find(|(_, s, e)| (*s..*e).contains(&f.control.value))
    {
        return Err(err(
            "control.value",
            format!("{:#x} is in memory region `{name}`", f.control.value),
        ));
    }
    if f.reset.value & !u64::from(ACR_BITS) != 0 {
        return Err(err(
            "reset.value",
            format!(
                "{:#x} sets bits FLASH_ACR does not have (it has {ACR_BITS:#x})",
                f.reset.value
            ),
        ));
    }
    let required = required_wait_states(&f.wait_states.table, clock_hz)
        .map_err(|m| err("wait_states.table", m))?;
    required_wait_states(&f.wait_states.table, max_hz).map_err(|m| err("wait_states.table", m))?;
    Ok(FlashSpec {
        region: f.region,
        start: *start,
        end: *end,
        line_bytes: line as u32,
        required_wait_states: required,
        wait_state_table: f.wait_states.table.clone(),
        icache_lines: f.icache_lines.value as usize,
        dcache_lines: f.dcache_lines.value as usize,
        control: f.control.value,
        reset: f.reset.value as u32,
    })
}

/// The wait states the table requires at `clock_hz`: the first row whose
/// `max_hz` is at least the clock.
pub fn required_wait_states(table: &[(u64, u32)], clock_hz: u64) -> Result<u32, String> {
    for (i, w) in table.windows(2).enumerate() {
        if w[1].0 <= w[0].0 || w[1].1 <= w[0].1 {
            return Err(format!(
                "row {}: clock limits and wait states must both ascend",
                i + 1
            ));
        }
    }
    if let Some((_, ws)) = table.iter().find(|(_, ws)| *ws > ACR_LATENCY) {
        return Err(format!(
            "{ws} wait states: FLASH_ACR.LATENCY holds at most 7"
        ));
    }
    table
        .iter()
        .find(|(max_hz, _)| clock_hz <= *max_hz)
        .map(|(_, ws)| *ws)
        .ok_or_else(|| format!("no row covers the target's clock_hz {clock_hz}"))
}

/// What the accelerator did in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct FlashStats {
    /// Stall cycles of instruction fetches.
    pub fetch_stall: u64,
    /// Stall cycles of data reads.
    pub data_stall: u64,
    /// Instruction lines found in the cache, and read from the flash on a
    /// miss (not the current line, not the prefetched one).
    pub icache_hits: u64,
    pub icache_misses: u64,
    /// Sequential lines the prefetch had read.
    pub prefetched: u64,
    /// Data reads found in the data cache, and read from the flash.
    pub dcache_hits: u64,
    pub dcache_misses: u64,
    /// Blocks fetched from the flash with FLASH_ACR.LATENCY below what the
    /// wait-state table requires at the target's clock (the silicon would
    /// read wrong instructions; the model charges the LATENCY set).
    pub blocks_below_required_latency: u64,
}

impl FlashStats {
    /// Its share of the run's memory counters (`model::memory_counters`):
    /// prefetched lines are neither hits nor misses.
    pub fn counters(&self) -> crate::model::memory_counters::MemoryCounters {
        crate::model::memory_counters::MemoryCounters {
            fetch_stall: self.fetch_stall,
            data_stall: self.data_stall,
            fetch_hits: self.icache_hits,
            fetch_misses: self.icache_misses,
            data_hits: self.dcache_hits,
            data_misses: self.dcache_misses,
        }
    }
}

/// A cache of whole lines, fully associative, least recently used
/// replaced: `lines[0]` the most recently used.
#[derive(Debug, Clone, Default)]
struct LruLines {
    lines: Vec<u32>,
    capacity: usize,
}

impl LruLines {
    fn new(capacity: usize) -> LruLines {
        LruLines {
            lines: Vec::with_capacity(capacity),
            capacity,
        }
    }

    /// Looks `line` up; a hit becomes the most recently used.
    fn hit(&mut self, line: u32) -> bool {
        match self.lines.iter().position(|l| *l == line) {
            Some(i) => {
                self.lines[..=i].rotate_right(1);
                true
            }
            None => false,
        }
    }

    /// Fills `line` (after a miss), replacing the least recently used.
    fn fill(&mut self, line: u32) {
        if self.capacity == 0 {
            return;
        }
        if self.lines.len() == self.capacity {
            self.lines.pop();
        }
        self.lines.insert(0, line);
    }
}

/// The accelerator's state in a run.
#[derive(Debug, Clone)]
pub struct FlashState {
    acr: u32,
    required: u32,
    /// The line being executed, and the cycles its instructions have
    /// taken since it was delivered.
    current: Option<u32>,
    executed: u32,
    icache: LruLines,
    dcache: LruLines,
    pub stats: FlashStats,
}

impl FlashState {
    pub fn new(spec: &FlashSpec) -> FlashState {
        FlashState {
            acr: spec.reset,
            required: spec.required_wait_states,
            current: None,
            executed: 0,
            icache: LruLines::new(spec.icache_lines),
            dcache: LruLines::new(spec.dcache_lines),
            stats: FlashStats::default(),
        }
    }

    /// FLASH_ACR as the firmware reads it.
    pub fn acr(&self) -> u32 {
        self.acr
    }

    /// The firmware writes FLASH_ACR: ICRST / DCRST written 1 while the
    /// cache is disabled empty it (3.9.1: "This bit can be written only
    /// when the I cache is disabled").
    pub fn write_acr(&mut self, value: u32) {
        let value = value & ACR_BITS;
        if value & ACR_ICRST != 0 && value & ACR_ICEN == 0 {
            self.icache.lines.clear();
        }
        if value & ACR_DCRST != 0 && value & ACR_DCEN == 0 {
            self.dcache.lines.clear();
        }
        self.acr = value;
    }

    /// FLASH_ACR.LATENCY as set.
    pub fn latency(&self) -> u32 {
        self.acr & ACR_LATENCY
    }

    /// The wait states the clock in force requires (a clock tree changed
    /// the clock).
    pub fn required(&self) -> u32 {
        self.required
    }

    /// The clock changed: the table's requirement at the new clock.
    pub fn set_required(&mut self, wait_states: u32) {
        self.required = wait_states;
    }

    /// A block executes: `lines` are the flash lines its instructions are
    /// in, in order, each with the cycles its instructions take. Returns
    /// the stall cycles of its instruction fetches.
    pub fn fetch_block(&mut self, lines: &[(u32, u32)]) -> u32 {
        let ws = self.latency();
        if ws < self.required {
            self.stats.blocks_below_required_latency += 1;
        }
        let mut stall = 0;
        for &(line, cycles) in lines {
            if self.current != Some(line) {
                stall += self.deliver(line, ws);
                self.current = Some(line);
                self.executed = 0;
            }
            self.executed = self.executed.saturating_add(cycles);
        }
        self.stats.fetch_stall += u64::from(stall);
        stall
    }

    /// The stall until `line`, which is not the current line, is
    /// delivered.
    fn deliver(&mut self, line: u32, ws: u32) -> u32 {
        let cached = self.acr & ACR_ICEN != 0;
        if cached && self.icache.hit(line) {
            self.stats.icache_hits += 1;
            return 0;
        }
        let sequential = self.current.is_some_and(|c| c.wrapping_add(1) == line);
        if self.acr & ACR_PRFTEN != 0 && sequential {
            // never later than a read of its own
            self.stats.prefetched += 1;
            return (ws + 1).saturating_sub(self.executed).min(ws);
        }
        if cached {
            self.icache.fill(line);
        }
        self.stats.icache_misses += 1;
        ws
    }

    /// A data read of the line `line`: returns its stall cycles.
    pub fn read_data(&mut self, line: u32) -> u32 {
        let ws = self.latency();
        let stall = if self.acr & ACR_DCEN != 0 {
            if self.dcache.hit(line) {
                self.stats.dcache_hits += 1;
                0
            } else {
                self.dcache.fill(line);
                self.stats.dcache_misses += 1;
                ws
            }
        } else {
            self.stats.dcache_misses += 1;
            ws
        };
        self.stats.data_stall += u64::from(stall);
        stall
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> FlashSpec {
        FlashSpec {
            region: "flash".into(),
            start: 0x0800_0000,
            end: 0x0810_0000,
            line_bytes: 16,
            required_wait_states: 5,
            wait_state_table: vec![(168_000_000, 5)],
            icache_lines: 64,
            dcache_lines: 8,
            control: 0x4002_3C00,
            reset: 0,
        }
    }

    #[test]
    fn without_the_accelerator_every_new_line_costs_the_latency() {
        let mut f = FlashState::new(&spec());
        f.write_acr(5);
        // three lines, then the first again (a loop): four line reads x 5
        assert_eq!(f.fetch_block(&[(0, 4), (1, 4), (2, 4)]), 15);
        assert_eq!(f.fetch_block(&[(0, 4)]), 5);
        // the same line again (a loop inside one line): the current line
        assert_eq!(f.fetch_block(&[(0, 4)]), 0);
        assert_eq!(f.stats.icache_misses, 4);
    }

    #[test]
    fn blocks_run_below_the_required_latency_are_counted() {
        let mut f = FlashState::new(&spec());
        f.fetch_block(&[(0, 1)]);
        f.write_acr(5);
        f.fetch_block(&[(1, 1)]);
        assert_eq!(f.stats.blocks_below_required_latency, 1);
    }

    #[test]
    fn prefetch_hides_what_the_current_line_takes_to_execute() {
        let mut f = FlashState::new(&spec());
        f.write_acr(5 | ACR_PRFTEN);
        // line 0 read: 5; line 1 prefetched while line 0's 4 cycles ran:
        // ready at 5 + 1 = 6, so 6 - 4 = 2; line 2 after line 1's 8: 0
        assert_eq!(f.fetch_block(&[(0, 4), (1, 8), (2, 1)]), 5 + 2);
        // a jump back to line 0: not sequential, no cache: 5
        assert_eq!(f.fetch_block(&[(0, 1)]), 5);
        assert_eq!(f.stats.prefetched, 2);
    }

    #[test]
    fn the_instruction_cache_keeps_the_64_most_recently_used_lines() {
        let mut f = FlashState::new(&spec());
        f.write_acr(5 | ACR_ICEN);
        // lines 0, 2, 4, ... (never sequential): 64 misses fill the cache
        let fits: Vec<(u32, u32)> = (0..64).map(|i| (2 * i, 1)).collect();
        assert_eq!(f.fetch_block(&fits), 64 * 5);
        assert_eq!(f.fetch_block(&fits), 0, "all 64 lines hit");
        // 65 lines in a loop: LRU evicts each line before its next use
        let thrash: Vec<(u32, u32)> = (0..65).map(|i| (2 * i, 1)).collect();
        assert_eq!(f.fetch_block(&thrash), 5, "line 128 misses, evicts line 0");
        assert_eq!(f.fetch_block(&thrash), 65 * 5, "every line misses");
        // ICRST empties it only while ICEN is clear
        f.write_acr(5 | ACR_ICEN | ACR_ICRST);
        assert_eq!(f.icache.lines.len(), 64);
        f.write_acr(5 | ACR_ICRST);
        assert!(f.icache.lines.is_empty());
    }

    #[test]
    fn data_reads_hit_the_eight_line_data_cache() {
        let mut f = FlashState::new(&spec());
        f.write_acr(5);
        assert_eq!(f.read_data(7) + f.read_data(7), 10, "no cache: every read");
        f.write_acr(5 | ACR_DCEN);
        let lines: u32 = (0..8).map(|l| f.read_data(l)).sum();
        assert_eq!(lines, 8 * 5);
        let again: u32 = (0..8).map(|l| f.read_data(l)).sum();
        assert_eq!(again, 0);
        assert_eq!(f.read_data(8) + f.read_data(0), 10, "line 8 evicted line 0");
    }

    #[test]
    fn the_wait_state_table_picks_the_row_of_the_clock() {
        let t = [(30_000_000, 0), (60_000_000, 1), (168_000_000, 5)];
        assert_eq!(required_wait_states(&t, 168_000_000), Ok(5));
        assert_eq!(required_wait_states(&t, 30_000_000), Ok(0));
        assert!(required_wait_states(&t, 180_000_000)
            .unwrap_err()
            .contains("no row covers"));
        let bad = [(60_000_000, 1), (30_000_000, 2)];
        assert!(required_wait_states(&bad, 1)
            .unwrap_err()
            .contains("ascend"));
    }
}

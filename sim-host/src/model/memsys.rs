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
//! - a prefetched line the core goes on to execute is copied into the
//!   instruction cache as well (the model's reading, not the manual's
//!   words: read literally, 3.5.2 copies only lines read on a miss, and
//!   then a loop over two lines refetches its second line from the flash
//!   on every pass with PRFTEN set and hits the cache with it clear, so
//!   turning the prefetch on made CoreMark 13 % slower, 1.147 against
//!   1.008 x zero-wait. The same section and DS8626 2.2.2 state that
//!   "based on CoreMark benchmark, the performance achieved thanks to the
//!   ART accelerator is equivalent to 0 wait state program execution",
//!   which the literal reading contradicts). With it, a line costs the
//!   same or less with PRFTEN set than with it clear, and the cache holds
//!   the same lines either way;
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
//! The kind `stm32f7-art` (RM0385 Rev 8, 3.3, the STM32F74xxx/75xxx) is
//! the same machinery with the F7's differences, each as the target file
//! cites it:
//! - it accelerates the flash as the ITCM interface sees it (0x00200000),
//!   a region of its own holding the same bytes as the AXIM view
//!   (`mirror`); fetches through AXIM are the L1 caches' (`model::l1cache`);
//! - lines of 256 bits; FLASH_ACR.LATENCY is bits 3:0 (RM0385 3.7.1:
//!   LATENCY 3:0, PRFTEN 8, ARTEN 9, ARTRST 11), so up to 15 wait states;
//! - one cache, the ART (ARTEN, bit 9 as the F4's ICEN; ARTRST, bit 11 as
//!   ICRST, empties it while ARTEN is clear), of `icache_lines` lines, for
//!   instructions and for data read through the ITCM interface alike: a
//!   data read looks its line up there and fills it on a miss (the model's
//!   reading: no separate data cache on the F7);
//! - prefetch (PRFTEN) as on the F4.
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

/// The STM32F7's FLASH_ACR (RM0385 3.7.1): LATENCY is bits 3:0, ARTEN and
/// ARTRST sit where the F4 has ICEN and ICRST, there is no DCEN or DCRST.
pub const F7_ACR_LATENCY: u32 = 0xF;
pub const F7_ACR_ARTEN: u32 = ACR_ICEN;
pub const F7_ACR_ARTRST: u32 = ACR_ICRST;
pub const F7_ACR_BITS: u32 = F7_ACR_LATENCY | ACR_PRFTEN | F7_ACR_ARTEN | F7_ACR_ARTRST;

/// Which accelerator a `[flash]` table describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlashKind {
    /// `stm32f4-art`: RM0090 3.5, an instruction and a data cache.
    Stm32f4Art,
    /// `stm32f7-art`: RM0385 3.3, one ART cache on the ITCM interface.
    Stm32f7Art,
}

impl FlashKind {
    /// FLASH_ACR's LATENCY field.
    pub fn latency_mask(self) -> u32 {
        match self {
            FlashKind::Stm32f4Art => ACR_LATENCY,
            FlashKind::Stm32f7Art => F7_ACR_LATENCY,
        }
    }

    /// The bits FLASH_ACR holds.
    pub fn acr_bits(self) -> u32 {
        match self {
            FlashKind::Stm32f4Art => ACR_BITS,
            FlashKind::Stm32f7Art => F7_ACR_BITS,
        }
    }
}

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
    /// The accelerator's kind: `stm32f4-art` or `stm32f7-art`.
    pub kind: String,
    /// The memory region it reads.
    pub region: String,
    /// `stm32f7-art`: the region holding the same bytes (the AXIM view of
    /// the flash the ITCM interface's `region` reads).
    pub mirror: Option<String>,
    pub line_bytes: Cited,
    pub wait_states: WaitStateTable,
    /// `stm32f7-art`: the ART's lines (instructions and data).
    pub icache_lines: Cited,
    /// `stm32f4-art` only (the F7 has one cache).
    pub dcache_lines: Option<Cited>,
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
    pub kind: FlashKind,
    pub region: String,
    pub start: u64,
    pub end: u64,
    /// The region holding the same bytes, and its start (`stm32f7-art`).
    pub mirror: Option<(String, u64)>,
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
    let kind = match f.kind.as_str() {
        "stm32f4-art" => FlashKind::Stm32f4Art,
        "stm32f7-art" => FlashKind::Stm32f7Art,
        other => {
            return Err(err(
                "kind",
                format!("`{other}`: the kinds are \"stm32f4-art\" and \"stm32f7-art\""),
            ))
        }
    };
    let (mirror, dcache_lines) = kind_fields(kind, &f, regions)?;
    let Some((_, start, end)) = regions.iter().find(|(n, _, _)| *n == f.region) else {
        return Err(err(
            "region",
            format!("`{}` is no region of the memory map", f.region),
        ));
    };
    for (field, c) in [
        ("line_bytes", &f.line_bytes),
        ("icache_lines", &f.icache_lines),
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
    for (field, lines) in [
        ("icache_lines", f.icache_lines.value),
        ("dcache_lines", dcache_lines),
    ] {
        if lines > MAX_CACHE_LINES {
            return Err(err(
                &format!("{field}.value"),
                format!("{lines}: at most {MAX_CACHE_LINES}"),
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
    let bits = kind.acr_bits();
    if f.reset.value & !u64::from(bits) != 0 {
        return Err(err(
            "reset.value",
            format!(
                "{:#x} sets bits FLASH_ACR does not have (it has {bits:#x})",
                f.reset.value
            ),
        ));
    }
    let required = required_wait_states(&f.wait_states.table, clock_hz, kind.latency_mask())
        .map_err(|m| err("wait_states.table", m))?;
    required_wait_states(&f.wait_states.table, max_hz, kind.latency_mask())
        .map_err(|m| err("wait_states.table", m))?;
    Ok(FlashSpec {
        kind,
        region: f.region,
        start: *start,
        end: *end,
        mirror,
        line_bytes: line as u32,
        required_wait_states: required,
        wait_state_table: f.wait_states.table.clone(),
        icache_lines: f.icache_lines.value as usize,
        dcache_lines: dcache_lines as usize,
        control: f.control.value,
        reset: f.reset.value as u32,
    })
}

/// What the kinds differ in: the F7's mirror region (its name and start,
/// the same size as `region`) and the F4's data cache lines (0 on the F7,
/// whose data reads use the ART).
fn kind_fields(
    kind: FlashKind,
    f: &FlashFile,
    regions: &[(String, u64, u64)],
) -> Result<(Option<(String, u64)>, u64), FieldError> {
    let err = |field: &str, m: String| (format!("flash.{field}"), m);
    let size_of = |name: &str| {
        regions
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, s, e)| (*s, e - s))
    };
    match kind {
        FlashKind::Stm32f4Art => {
            if f.mirror.is_some() {
                return Err(err(
                    "mirror",
                    "only a kind = \"stm32f7-art\" table has it".into(),
                ));
            }
            let d = f.dcache_lines.as_ref().ok_or_else(|| {
                err(
                    "dcache_lines",
                    "missing: kind \"stm32f4-art\" needs it".into(),
                )
            })?;
            if d.cite.trim().is_empty() {
                return Err(err("dcache_lines.cite", "must name its source".into()));
            }
            Ok((None, d.value))
        }
        FlashKind::Stm32f7Art => {
            if f.dcache_lines.is_some() {
                return Err(err(
                    "dcache_lines",
                    "kind \"stm32f7-art\" has one cache, the ART: icache_lines".into(),
                ));
            }
            let name = f
                .mirror
                .as_deref()
                .ok_or_else(|| err("mirror", "missing: kind \"stm32f7-art\" needs it".into()))?;
            let (Some((start, size)), Some((_, own))) = (size_of(name), size_of(&f.region)) else {
                return Err(err(
                    "mirror",
                    format!("`{name}` is no region of the memory map"),
                ));
            };
            if name == f.region || size != own {
                return Err(err(
                    "mirror",
                    format!(
                        "`{name}` must be another region of the size of `{}`",
                        f.region
                    ),
                ));
            }
            Ok((Some((name.to_owned(), start)), 0))
        }
    }
}

/// The wait states the table requires at `clock_hz`: the first row whose
/// `max_hz` is at least the clock. `latency_mask` is FLASH_ACR.LATENCY's
/// field (7 on the F4, 15 on the F7): no row may need more.
pub fn required_wait_states(
    table: &[(u64, u32)],
    clock_hz: u64,
    latency_mask: u32,
) -> Result<u32, String> {
    for (i, w) in table.windows(2).enumerate() {
        if w[1].0 <= w[0].0 || w[1].1 <= w[0].1 {
            return Err(format!(
                "row {}: clock limits and wait states must both ascend",
                i + 1
            ));
        }
    }
    if let Some((_, ws)) = table.iter().find(|(_, ws)| *ws > latency_mask) {
        return Err(format!(
            "{ws} wait states: FLASH_ACR.LATENCY holds at most {latency_mask}"
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
    kind: FlashKind,
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
            kind: spec.kind,
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
    /// On the F7, ARTRST (ICRST's bit) empties the ART while ARTEN (ICEN's
    /// bit) is clear (RM0385 3.7.1).
    pub fn write_acr(&mut self, value: u32) {
        let value = value & self.kind.acr_bits();
        if value & ACR_ICRST != 0 && value & ACR_ICEN == 0 {
            self.icache.lines.clear();
        }
        if self.kind == FlashKind::Stm32f4Art && value & ACR_DCRST != 0 && value & ACR_DCEN == 0 {
            self.dcache.lines.clear();
        }
        self.acr = value;
    }

    /// FLASH_ACR.LATENCY as set.
    pub fn latency(&self) -> u32 {
        self.acr & self.kind.latency_mask()
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
        if cached {
            self.icache.fill(line);
        }
        let sequential = self.current.is_some_and(|c| c.wrapping_add(1) == line);
        if self.acr & ACR_PRFTEN != 0 && sequential {
            // never later than a read of its own
            self.stats.prefetched += 1;
            return (ws + 1).saturating_sub(self.executed).min(ws);
        }
        self.stats.icache_misses += 1;
        ws
    }

    /// A data read of the line `line`: returns its stall cycles. On the
    /// F7 it looks the line up in the ART (ARTEN), which a miss fills.
    pub fn read_data(&mut self, line: u32) -> u32 {
        let ws = self.latency();
        let stall = if self.kind == FlashKind::Stm32f7Art {
            self.read_data_art(line, ws)
        } else if self.acr & ACR_DCEN != 0 {
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

    /// The F7's data read through the ITCM interface: the ART's line, or
    /// one read from the flash (kept in the ART when ARTEN is set).
    fn read_data_art(&mut self, line: u32, ws: u32) -> u32 {
        let art = self.acr & F7_ACR_ARTEN != 0;
        if art && self.icache.hit(line) {
            self.stats.dcache_hits += 1;
            return 0;
        }
        if art {
            self.icache.fill(line);
        }
        self.stats.dcache_misses += 1;
        ws
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> FlashSpec {
        FlashSpec {
            kind: FlashKind::Stm32f4Art,
            region: "flash".into(),
            start: 0x0800_0000,
            end: 0x0810_0000,
            mirror: None,
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
    fn a_prefetched_line_is_kept_in_the_cache_for_the_next_pass() {
        let mut f = FlashState::new(&spec());
        f.write_acr(5 | ACR_PRFTEN | ACR_ICEN);
        // a loop over two lines, 1 cycle in the first: pass 1 reads line 0
        // (a miss, 5) and waits for the prefetched line 1 (ready 5 + 1
        // cycles after line 0, 1 of them executing: min(5, 6 - 1) = 5)
        let pass = [(0, 1), (1, 3)];
        assert_eq!(f.fetch_block(&pass), 5 + 5);
        // pass 2: both lines are in the cache (read literally, RM0090
        // 3.5.2 would refetch line 1 by the prefetch: 5 on every pass)
        assert_eq!(f.fetch_block(&pass), 0);
        assert_eq!((f.stats.icache_hits, f.stats.prefetched), (2, 1));
    }

    proptest::proptest! {
        /// RM0090 3.5.2 / DS8626 2.2.2: the prefetch speeds code up; the
        /// model never charges a run more with PRFTEN set than without.
        #[test]
        fn the_prefetch_never_makes_a_run_slower(
            steps in proptest::collection::vec((-3i64..4, 1u32..12), 1..400),
            caches in proptest::bool::ANY,
        ) {
            // mostly sequential lines, with jumps back and forth (loops)
            let mut line = 0i64;
            let run: Vec<(u32, u32)> = steps.iter().map(|&(step, cycles)| {
                line = (line + step).rem_euclid(100);
                (line as u32, cycles)
            }).collect();
            let acr = 5 | if caches { ACR_ICEN } else { 0 };
            let (mut on, mut off) = (FlashState::new(&spec()), FlashState::new(&spec()));
            on.write_acr(acr | ACR_PRFTEN);
            off.write_acr(acr);
            for block in run.chunks(3) {
                proptest::prop_assert!(on.fetch_block(block) <= off.fetch_block(block));
            }
        }
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
        assert_eq!(required_wait_states(&t, 168_000_000, ACR_LATENCY), Ok(5));
        assert_eq!(required_wait_states(&t, 30_000_000, ACR_LATENCY), Ok(0));
        assert!(required_wait_states(&t, 180_000_000, ACR_LATENCY)
            .unwrap_err()
            .contains("no row covers"));
        let bad = [(60_000_000, 1), (30_000_000, 2)];
        assert!(required_wait_states(&bad, 1, ACR_LATENCY)
            .unwrap_err()
            .contains("ascend"));
    }

    /// RM0385 3.3.2 Table 5, 2.7 V - 3.6 V (targets/stm32f746.toml).
    const F7_TABLE: [(u64, u32); 8] = [
        (30_000_000, 0),
        (60_000_000, 1),
        (90_000_000, 2),
        (120_000_000, 3),
        (150_000_000, 4),
        (180_000_000, 5),
        (210_000_000, 6),
        (216_000_000, 7),
    ];

    fn spec_f7() -> FlashSpec {
        FlashSpec {
            kind: FlashKind::Stm32f7Art,
            region: "flash_itcm".into(),
            start: 0x0020_0000,
            end: 0x0030_0000,
            mirror: Some(("flash".into(), 0x0800_0000)),
            line_bytes: 32,
            required_wait_states: 7,
            wait_state_table: F7_TABLE.to_vec(),
            icache_lines: 64,
            dcache_lines: 0,
            control: 0x4002_3C00,
            reset: 0,
        }
    }

    #[test]
    fn the_f7_table_needs_seven_wait_states_at_216_mhz() {
        let ws = |hz| required_wait_states(&F7_TABLE, hz, F7_ACR_LATENCY);
        assert_eq!(ws(216_000_000), Ok(7));
        assert_eq!(ws(180_000_000), Ok(5));
        assert_eq!(ws(180_000_001), Ok(6));
        assert_eq!(ws(16_000_000), Ok(0));
        // 8 to 15 fit the F7's 4-bit LATENCY, not the F4's 3 bits
        let eight = [(300_000_000, 8)];
        assert_eq!(required_wait_states(&eight, 1, F7_ACR_LATENCY), Ok(8));
        assert!(required_wait_states(&eight, 1, ACR_LATENCY)
            .unwrap_err()
            .contains("at most 7"));
    }

    #[test]
    fn the_f7_acr_has_a_four_bit_latency_and_no_data_cache_bits() {
        let mut f = FlashState::new(&spec_f7());
        f.write_acr(0xFFFF_FFFF);
        assert_eq!(f.acr(), 0xF | ACR_PRFTEN | F7_ACR_ARTEN | F7_ACR_ARTRST);
        assert_eq!(f.latency(), 15);
    }

    #[test]
    fn the_art_holds_instruction_and_data_lines_alike() {
        let mut f = FlashState::new(&spec_f7());
        f.write_acr(7 | F7_ACR_ARTEN);
        assert_eq!(f.fetch_block(&[(5, 1)]), 7, "a miss, kept in the ART");
        assert_eq!(f.read_data(5), 0, "the same line read as data hits");
        assert_eq!(f.read_data(9), 7, "a data miss fills the ART");
        assert_eq!(
            f.fetch_block(&[(9, 1)]),
            0,
            "and an instruction fetch hits it"
        );
        // without ARTEN every data read is a flash read
        f.write_acr(7);
        assert_eq!(f.read_data(5) + f.read_data(5), 14);
        // ARTRST empties the ART only while ARTEN is clear
        f.write_acr(7 | F7_ACR_ARTEN | F7_ACR_ARTRST);
        assert_eq!(f.icache.lines.len(), 2);
        f.write_acr(7 | F7_ACR_ARTRST);
        assert!(f.icache.lines.is_empty());
    }
}

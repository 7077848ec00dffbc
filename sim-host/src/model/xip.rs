//! The RP2040's execute-in-place (XIP) cache in front of its QSPI flash
//! (issue 27), described by a target file's `[xip]` table and switched by
//! the firmware through XIP_CTRL, as on silicon.
//!
//! The rules, each from the RP2040 datasheet (section 2.6.3 "Flash";
//! 2.5.3 in its first editions) as the target file cites it:
//! - the cache is 16 KiB, two-way set-associative, 8-byte lines, with a
//!   1-cycle hit (2.6.3.1; 2.6.3.2: "16 kB total size / 8 bytes per line
//!   / 2 ways per set" = 1024 sets). A hit costs what a zero-wait memory
//!   costs, which the core's cycle table already counts: no stall;
//! - the flash's 24-bit address space is mirrored: the 0x10 alias is
//!   cached and allocating, 0x11 checks for a hit but does not allocate on
//!   a miss, 0x12 does not check but always allocates, 0x13 bypasses the
//!   cache (2.6.3.1);
//! - XIP_CTRL.EN clear: every access goes straight to the flash without
//!   querying the cache (XIP_CTRL register description); the model then
//!   neither looks up nor fills;
//! - every access that is not a hit reads the line from the flash through
//!   the SSI: the stall is the serial transfer, in system clocks:
//!   `clkdiv x (address_clocks + wait_clocks + line bits / data_lines)`
//!   (the SSI set up as the second-stage boot leaves it: the target file
//!   cites boot2_w25q080.S). That the SSI reads exactly one 8-byte line
//!   per miss, and that chip-select and synchronisation cycles add
//!   nothing, are this model's reading, not a datasheet figure;
//! - the replacement within a set is least recently used: the datasheet
//!   names no policy (the model's choice, said in the target file);
//! - writing 1 to FLUSH empties the tag memory (2.6.3.2). The flush's own
//!   duration ("just over 1024 clock cycles") is not charged: the model's
//!   flush is instant and STAT.FLUSH_READY always reads 1.
//!
//! Instruction fetches are counted per line a block's instructions touch
//! (one look-up per line per executed block, consecutive duplicates
//! merged), data reads per load.
//!
//! The state is plain data and every step is a function of it and the
//! access: identical runs give identical counts.

use crate::model::memsys::Cited;
use serde::Deserialize;

/// XIP_CTRL bits (pico-sdk src/rp2040/hardware_regs/include/hardware/regs/xip.h).
pub const CTRL_EN: u32 = 1 << 0;
pub const CTRL_ERR_BADWRITE: u32 = 1 << 1;
pub const CTRL_POWER_DOWN: u32 = 1 << 3;
/// The bits XIP_CTRL holds (XIP_CTRL_BITS 0xb).
pub const CTRL_BITS: u32 = CTRL_EN | CTRL_ERR_BADWRITE | CTRL_POWER_DOWN;
/// STAT as the model reads it: FLUSH_READY (bit 0, the flush is instant)
/// and FIFO_EMPTY (bit 1, the streaming FIFO is never used).
pub const STAT_VALUE: u32 = 0b011;
/// Register offsets from XIP_CTRL's address (xip.h).
pub const FLUSH_OFFSET: u64 = 4;
pub const STAT_OFFSET: u64 = 8;

/// The most lines the model's cache may have.
pub const MAX_LINES: u64 = 1 << 16;

/// How an alias of the flash uses the cache (datasheet 2.6.3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alias {
    /// 0x10: cacheable, allocating.
    Cached,
    /// 0x11: check for a hit, do not update the cache on a miss.
    NoAllocate,
    /// 0x12: do not check for a hit, always update the cache.
    NoCheck,
    /// 0x13: bypass the cache.
    Bypass,
}

impl Alias {
    /// Whether it looks up, and whether it fills.
    fn checks_and_allocates(self) -> (bool, bool) {
        match self {
            Alias::Cached => (true, true),
            Alias::NoAllocate => (true, false),
            Alias::NoCheck => (false, true),
            Alias::Bypass => (false, false),
        }
    }
}

/// The serial transfer of a line from the flash, as the second-stage boot
/// configures the SSI.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MissFile {
    /// clk_sys cycles per SCK cycle (PICO_FLASH_SPI_CLKDIV).
    pub clkdiv: u64,
    /// SCK cycles of address and mode bits.
    pub address_clocks: u64,
    /// SCK cycles of Hi-Z dummy clocks after them (WAIT_CYCLES).
    pub wait_clocks: u64,
    /// Data lines (4: quad I/O).
    pub data_lines: u64,
    pub cite: String,
}

/// The aliases of the cached window, by memory region name.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AliasesFile {
    pub noallocate: String,
    pub nocheck: String,
    pub bypass: String,
    pub cite: String,
}

/// The `[xip]` table of a target file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XipFile {
    /// `rp2040-xip` (the only one so far).
    pub kind: String,
    /// The cached, allocating window (the ELF's flash).
    pub region: String,
    pub aliases: AliasesFile,
    pub cache_bytes: Cited,
    pub ways: Cited,
    pub line_bytes: Cited,
    /// Where the replacement rule comes from.
    pub replacement: String,
    pub miss: MissFile,
    /// XIP_CTRL's address (FLUSH and STAT follow it).
    pub control: Cited,
    /// XIP_CTRL's value at reset.
    pub reset: Cited,
}

/// A validated XIP cache.
#[derive(Debug, Clone, PartialEq)]
pub struct XipSpec {
    pub region: String,
    /// The windows: start, end, and how each uses the cache.
    pub windows: Vec<(u64, u64, Alias)>,
    pub line_bytes: u32,
    pub sets: u32,
    pub ways: u32,
    /// Stall cycles of a line read from the flash.
    pub miss_cycles: u32,
    pub control: u64,
    pub reset: u32,
}

impl XipSpec {
    /// The window holding `addr`: its start and alias.
    pub fn window(&self, addr: u64) -> Option<(u64, Alias)> {
        self.windows
            .iter()
            .find(|(s, e, _)| (*s..*e).contains(&addr))
            .map(|(s, _, a)| (*s, *a))
    }

    /// The flash line of `addr` in a window starting at `start`.
    pub fn line(&self, start: u64, addr: u64) -> u32 {
        ((addr - start) / u64::from(self.line_bytes)) as u32
    }

    /// The lowest and highest address of the windows (the data hook's
    /// range).
    pub fn span(&self) -> (u64, u64) {
        let lo = self.windows.iter().map(|w| w.0).min().unwrap_or(0);
        let hi = self.windows.iter().map(|w| w.1).max().unwrap_or(0);
        (lo, hi)
    }
}

type FieldError = (String, String);

fn err(field: &str, m: String) -> FieldError {
    (format!("xip.{field}"), m)
}

/// Checks `[xip]` against the memory map (`regions`: name, start, end).
pub fn validate(f: XipFile, regions: &[(String, u64, u64)]) -> Result<XipSpec, FieldError> {
    if f.kind != "rp2040-xip" {
        return Err(err(
            "kind",
            format!("`{}`: the only kind is \"rp2040-xip\"", f.kind),
        ));
    }
    check_cites(&f)?;
    let windows = windows(&f, regions)?;
    let geometry = |field: &str, c: &Cited, lo: u64, hi: u64| {
        if !(lo..=hi).contains(&c.value) || !c.value.is_power_of_two() {
            return Err(err(
                &format!("{field}.value"),
                format!("{}: a power of two from {lo} to {hi}", c.value),
            ));
        }
        Ok(c.value)
    };
    let line = geometry("line_bytes", &f.line_bytes, 4, 256)?;
    let ways = geometry("ways", &f.ways, 1, 16)?;
    let bytes = geometry("cache_bytes", &f.cache_bytes, line * ways, MAX_LINES * line)?;
    let miss = miss_cycles(&f.miss, line)?;
    if f.control.value > u64::from(u32::MAX) - STAT_OFFSET - 3 || f.control.value % 4 != 0 {
        return Err(err(
            "control.value",
            format!("{:#x}: a word address of the 32-bit space", f.control.value),
        ));
    }
    if let Some((name, _, _)) = regions
        .iter()
        .find(|(_, s, e)| *s < f.control.value + STAT_OFFSET + 4 && f.control.value < *e)
    {
        return Err(err(
            "control.value",
            format!("{:#x} is in memory region `{name}`", f.control.value),
        ));
    }
    if f.reset.value & !u64::from(CTRL_BITS) != 0 {
        return Err(err(
            "reset.value",
            format!(
                "{:#x} sets bits XIP_CTRL does not have (it has {CTRL_BITS:#x})",
                f.reset.value
            ),
        ));
    }
    Ok(XipSpec {
        region: f.region,
        windows,
        line_bytes: line as u32,
        sets: (bytes / line / ways) as u32,
        ways: ways as u32,
        miss_cycles: miss,
        control: f.control.value,
        reset: f.reset.value as u32,
    })
}

fn check_cites(f: &XipFile) -> Result<(), FieldError> {
    for (field, cite) in [
        ("cache_bytes.cite", &f.cache_bytes.cite),
        ("ways.cite", &f.ways.cite),
        ("line_bytes.cite", &f.line_bytes.cite),
        ("control.cite", &f.control.cite),
        ("reset.cite", &f.reset.cite),
        ("miss.cite", &f.miss.cite),
        ("aliases.cite", &f.aliases.cite),
        ("replacement", &f.replacement),
    ] {
        if cite.trim().is_empty() {
            return Err(err(field, "must name its source".into()));
        }
    }
    Ok(())
}

/// The four windows: the region and its three aliases, each a memory
/// region of the same size.
fn windows(
    f: &XipFile,
    regions: &[(String, u64, u64)],
) -> Result<Vec<(u64, u64, Alias)>, FieldError> {
    let find = |field: &str, name: &str| {
        regions
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, s, e)| (*s, *e))
            .ok_or_else(|| err(field, format!("`{name}` is no region of the memory map")))
    };
    let (start, end) = find("region", &f.region)?;
    let mut out = vec![(start, end, Alias::Cached)];
    for (field, name, alias) in [
        (
            "aliases.noallocate",
            &f.aliases.noallocate,
            Alias::NoAllocate,
        ),
        ("aliases.nocheck", &f.aliases.nocheck, Alias::NoCheck),
        ("aliases.bypass", &f.aliases.bypass, Alias::Bypass),
    ] {
        let (s, e) = find(field, name)?;
        if e - s != end - start || out.iter().any(|w| w.0 == s) {
            return Err(err(
                field,
                format!(
                    "`{name}` must be a region of its own as large as `{}` ({} bytes)",
                    f.region,
                    end - start
                ),
            ));
        }
        out.push((s, e, alias));
    }
    Ok(out)
}

/// The stall of a line read: clkdiv x (address + wait + data clocks).
fn miss_cycles(m: &MissFile, line_bytes: u64) -> Result<u32, FieldError> {
    if m.clkdiv < 2 || m.clkdiv % 2 != 0 || m.clkdiv > 256 {
        return Err(err(
            "miss.clkdiv",
            format!(
                "{}: a positive even divider up to 256 (boot2: \"This must be a positive, even integer\")",
                m.clkdiv
            ),
        ));
    }
    if ![1, 2, 4].contains(&m.data_lines) {
        return Err(err(
            "miss.data_lines",
            format!("{}: 1, 2 or 4 (single, dual, quad I/O)", m.data_lines),
        ));
    }
    for (field, v) in [
        ("miss.address_clocks", m.address_clocks),
        ("miss.wait_clocks", m.wait_clocks),
    ] {
        if v > 64 {
            return Err(err(field, format!("{v}: at most 64 SCK cycles")));
        }
    }
    let data = line_bytes * 8 / m.data_lines;
    Ok((m.clkdiv * (m.address_clocks + m.wait_clocks + data)) as u32)
}

/// What the XIP cache did in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct XipStats {
    /// Stall cycles of instruction fetches and of data reads.
    pub fetch_stall: u64,
    pub data_stall: u64,
    /// Instruction lines found in the cache, and read from the flash
    /// (misses, and lines read uncached).
    pub fetch_hits: u64,
    pub fetch_misses: u64,
    /// Data reads found in the cache, and read from the flash.
    pub data_hits: u64,
    pub data_misses: u64,
    /// FLUSH written 1.
    pub flushes: u64,
}

impl XipStats {
    /// Its share of the run's memory counters (`model::memory_counters`).
    pub fn counters(&self) -> crate::model::memory_counters::MemoryCounters {
        crate::model::memory_counters::MemoryCounters {
            fetch_stall: self.fetch_stall,
            data_stall: self.data_stall,
            fetch_hits: self.fetch_hits,
            fetch_misses: self.fetch_misses,
            data_hits: self.data_hits,
            data_misses: self.data_misses,
        }
    }
}

/// The cache's state in a run.
#[derive(Debug, Clone)]
pub struct XipState {
    ctrl: u32,
    ways: usize,
    sets: u32,
    miss: u32,
    /// Per set, `ways` line numbers, most recently used first; u32::MAX
    /// is an empty way.
    tags: Vec<u32>,
    pub stats: XipStats,
}

const EMPTY: u32 = u32::MAX;

impl XipState {
    pub fn new(spec: &XipSpec) -> XipState {
        XipState {
            ctrl: spec.reset,
            ways: spec.ways as usize,
            sets: spec.sets,
            miss: spec.miss_cycles,
            tags: vec![EMPTY; (spec.sets * spec.ways) as usize],
            stats: XipStats::default(),
        }
    }

    /// XIP_CTRL as the firmware reads it.
    pub fn ctrl(&self) -> u32 {
        self.ctrl
    }

    /// The firmware writes XIP_CTRL: POWER_DOWN forces EN to 0.
    pub fn write_ctrl(&mut self, value: u32) {
        let mut v = value & CTRL_BITS;
        if v & CTRL_POWER_DOWN != 0 {
            v &= !CTRL_EN;
        }
        self.ctrl = v;
    }

    /// The firmware writes FLUSH: bit 0 empties the tag memory.
    pub fn write_flush(&mut self, value: u32) {
        if value & 1 != 0 {
            self.tags.fill(EMPTY);
            self.stats.flushes += 1;
        }
    }

    fn ways_of(&mut self, line: u32) -> &mut [u32] {
        let set = (line % self.sets) as usize;
        &mut self.tags[set * self.ways..(set + 1) * self.ways]
    }

    /// Looks `line` up; a hit becomes the set's most recently used.
    fn hit(&mut self, line: u32) -> bool {
        let ways = self.ways_of(line);
        match ways.iter().position(|t| *t == line) {
            Some(i) => {
                ways[..=i].rotate_right(1);
                true
            }
            None => false,
        }
    }

    /// Puts `line` in its set as the most recently used, replacing the
    /// least recently used way (or refreshing it, when present).
    fn fill(&mut self, line: u32) {
        let ways = self.ways_of(line);
        let i = ways
            .iter()
            .position(|t| *t == line)
            .unwrap_or(ways.len() - 1);
        ways[..=i].rotate_right(1);
        ways[0] = line;
    }

    /// One access to `line` through `alias`: returns whether it hit and
    /// its stall.
    fn access(&mut self, line: u32, alias: Alias) -> (bool, u32) {
        let (check, allocate) = if self.ctrl & CTRL_EN == 0 {
            (false, false)
        } else {
            alias.checks_and_allocates()
        };
        if check && self.hit(line) {
            return (true, 0);
        }
        if allocate {
            self.fill(line);
        }
        (false, self.miss)
    }

    /// A block executes from a window of `alias`: `lines` are the flash
    /// lines its instructions touch, in order. Returns the stall.
    pub fn fetch_block(&mut self, alias: Alias, lines: &[u32]) -> u32 {
        let mut stall = 0;
        for &line in lines {
            let (hit, s) = self.access(line, alias);
            if hit {
                self.stats.fetch_hits += 1;
            } else {
                self.stats.fetch_misses += 1;
            }
            stall += s;
        }
        self.stats.fetch_stall += u64::from(stall);
        stall
    }

    /// A data read of `line` through `alias`: returns its stall.
    pub fn read_data(&mut self, alias: Alias, line: u32) -> u32 {
        let (hit, stall) = self.access(line, alias);
        if hit {
            self.stats.data_hits += 1;
        } else {
            self.stats.data_misses += 1;
        }
        self.stats.data_stall += u64::from(stall);
        stall
    }
}

pub mod run;

#[cfg(test)]
mod tests;

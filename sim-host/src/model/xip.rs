//! The execute-in-place (XIP) cache in front of the QSPI flash of the
//! RP2040 and the RP2350 (issue 27), described by a target file's `[xip]`
//! table and switched by the firmware through XIP_CTRL, as on silicon.
//! Both kinds share the cache mechanics here (sets, ways, replacement,
//! windows); `rp2350` has what the RP2350's kind adds (its XIP_CTRL, the
//! maintenance window, the QMI's transfers). Its rules are listed there.
//!
//! The rules of `rp2040-xip`, each from the RP2040 datasheet (section 2.6.3 "Flash";
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
    /// `rp2350-xip`: system clocks the chip select stays asserted after
    /// a transfer (a sequential transfer within them is chained).
    #[serde(default)]
    pub cooldown: Option<u64>,
    /// `rp2350-xip`: a burst ends at a multiple of this many bytes
    /// (M0_TIMING.PAGEBREAK: 256, 1024 or 4096; absent: never).
    #[serde(default)]
    pub pagebreak: Option<u64>,
    pub cite: String,
}

/// The aliases of the cached window, by memory region name.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AliasesFile {
    /// `rp2040-xip`: the 0x11, 0x12 and 0x13 windows.
    #[serde(default)]
    pub noallocate: String,
    #[serde(default)]
    pub nocheck: String,
    #[serde(default)]
    pub bypass: String,
    /// `rp2350-xip`: the 0x14 (uncached) and 0x1c (uncached, untranslated)
    /// windows.
    #[serde(default)]
    pub uncached: Option<String>,
    #[serde(default)]
    pub untranslated: Option<String>,
    pub cite: String,
}

/// The `[xip]` table of a target file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XipFile {
    /// `rp2040-xip` or `rp2350-xip`.
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
    /// `rp2350-xip`: the cache maintenance window's address.
    #[serde(default)]
    pub maintenance: Option<Cited>,
    /// `rp2350-xip`: the bytes of an instruction fetch that does not use
    /// the cache.
    #[serde(default)]
    pub fetch_bytes: Option<Cited>,
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
    /// What the RP2350's kind adds (None: the RP2040's).
    pub rp2350: Option<rp2350::Rp2350Spec>,
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
    let rp2350 = match f.kind.as_str() {
        "rp2040-xip" => false,
        "rp2350-xip" => true,
        other => {
            return Err(err(
                "kind",
                format!("`{other}`: the kinds are \"rp2040-xip\" and \"rp2350-xip\""),
            ))
        }
    };
    check_cites(&f)?;
    let windows = if rp2350 {
        windows_rp2350(&f, regions)?
    } else {
        only_rp2350(&f)?;
        windows(&f, regions)?
    };
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
    let miss = miss_cycles(&f.miss, line, rp2350)?;
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
    let ctrl_bits = if rp2350 { rp2350::CTRL_BITS } else { CTRL_BITS };
    if f.reset.value & !u64::from(ctrl_bits) != 0 {
        return Err(err(
            "reset.value",
            format!(
                "{:#x} sets bits XIP_CTRL does not have (it has {ctrl_bits:#x})",
                f.reset.value
            ),
        ));
    }
    let extra = if rp2350 {
        Some(rp2350_spec(&f, regions)?)
    } else {
        None
    };
    Ok(XipSpec {
        region: f.region,
        windows,
        line_bytes: line as u32,
        sets: (bytes / line / ways) as u32,
        ways: ways as u32,
        miss_cycles: miss,
        control: f.control.value,
        reset: f.reset.value as u32,
        rp2350: extra,
    })
}

/// An `rp2040-xip` table has none of the RP2350's fields.
fn only_rp2350(f: &XipFile) -> Result<(), FieldError> {
    for (field, set) in [
        ("maintenance", f.maintenance.is_some()),
        ("fetch_bytes", f.fetch_bytes.is_some()),
        ("miss.cooldown", f.miss.cooldown.is_some()),
        ("miss.pagebreak", f.miss.pagebreak.is_some()),
        ("aliases.uncached", f.aliases.uncached.is_some()),
        ("aliases.untranslated", f.aliases.untranslated.is_some()),
    ] {
        if set {
            return Err(err(
                field,
                "only a kind = \"rp2350-xip\" table has it".into(),
            ));
        }
    }
    Ok(())
}

/// The RP2350's windows: the cached region, then its uncached and its
/// uncached untranslated aliases (neither looks up nor fills).
fn windows_rp2350(
    f: &XipFile,
    regions: &[(String, u64, u64)],
) -> Result<Vec<(u64, u64, Alias)>, FieldError> {
    for (field, name) in [
        ("aliases.noallocate", &f.aliases.noallocate),
        ("aliases.nocheck", &f.aliases.nocheck),
        ("aliases.bypass", &f.aliases.bypass),
    ] {
        if !name.is_empty() {
            return Err(err(
                field,
                "only a kind = \"rp2040-xip\" table has it".into(),
            ));
        }
    }
    let (start, end) = find_region(regions, "region", &f.region)?;
    let mut out = vec![(start, end, Alias::Cached)];
    for (field, name) in [
        ("aliases.uncached", &f.aliases.uncached),
        ("aliases.untranslated", &f.aliases.untranslated),
    ] {
        let name = name
            .as_deref()
            .ok_or_else(|| err(field, "missing: kind \"rp2350-xip\" needs it".into()))?;
        out.push(alias_window(
            regions,
            field,
            name,
            &f.region,
            (start, end),
            &out,
        )?);
    }
    Ok(out)
}

/// What the RP2350's kind adds: the maintenance window, the uncached
/// fetch size, the QMI's timing.
fn rp2350_spec(
    f: &XipFile,
    regions: &[(String, u64, u64)],
) -> Result<rp2350::Rp2350Spec, FieldError> {
    let missing = |field: &str| err(field, "missing: kind \"rp2350-xip\" needs it".into());
    let maintenance = f
        .maintenance
        .as_ref()
        .ok_or_else(|| missing("maintenance"))?;
    let fetch = f
        .fetch_bytes
        .as_ref()
        .ok_or_else(|| missing("fetch_bytes"))?;
    let cooldown = f.miss.cooldown.ok_or_else(|| missing("miss.cooldown"))?;
    for (field, c) in [
        ("maintenance.cite", &maintenance.cite),
        ("fetch_bytes.cite", &fetch.cite),
    ] {
        if c.trim().is_empty() {
            return Err(err(field, "must name its source".into()));
        }
    }
    let (m, m_end) = (
        maintenance.value,
        maintenance.value + rp2350::MAINTENANCE_BYTES,
    );
    if m % rp2350::MAINTENANCE_BYTES != 0 || m_end > 1 << 32 {
        return Err(err(
            "maintenance.value",
            format!("{m:#x}: a 64 MiB-aligned window of the 32-bit space"),
        ));
    }
    if let Some((name, _, _)) = regions.iter().find(|(_, s, e)| *s < m_end && m < *e) {
        return Err(err(
            "maintenance.value",
            format!("{m:#x} overlaps memory region `{name}`"),
        ));
    }
    if ![2, 4].contains(&fetch.value) {
        return Err(err(
            "fetch_bytes.value",
            format!("{}: 2 or 4 bytes", fetch.value),
        ));
    }
    if cooldown > 64 * 3 + 128 {
        return Err(err(
            "miss.cooldown",
            format!("{cooldown}: at most 64 x 3 system clocks and half an SCK period"),
        ));
    }
    let pagebreak = f.miss.pagebreak.unwrap_or(0);
    if ![0, 256, 1024, 4096].contains(&pagebreak) {
        return Err(err(
            "miss.pagebreak",
            format!("{pagebreak}: 256, 1024 or 4096 bytes (QMI M0_TIMING.PAGEBREAK)"),
        ));
    }
    Ok(rp2350::Rp2350Spec {
        maintenance: m,
        fetch_bytes: fetch.value as u32,
        qmi: rp2350::QmiTiming {
            clkdiv: f.miss.clkdiv,
            head: f.miss.address_clocks + f.miss.wait_clocks,
            data_lines: f.miss.data_lines,
            cooldown,
            pagebreak,
        },
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
    let (start, end) = find_region(regions, "region", &f.region)?;
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
        if name.is_empty() {
            return Err(err(field, "missing: kind \"rp2040-xip\" needs it".into()));
        }
        let (s, e, _) = alias_window(regions, field, name, &f.region, (start, end), &out)?;
        out.push((s, e, alias));
    }
    Ok(out)
}

/// The memory region `name`: its start and end.
fn find_region(
    regions: &[(String, u64, u64)],
    field: &str,
    name: &str,
) -> Result<(u64, u64), FieldError> {
    regions
        .iter()
        .find(|(n, _, _)| n == name)
        .map(|(_, s, e)| (*s, *e))
        .ok_or_else(|| err(field, format!("`{name}` is no region of the memory map")))
}

/// An alias of the cached window `region` (`cached`): a region of its own,
/// as large, that bypasses the cache (its caller says how it uses it).
fn alias_window(
    regions: &[(String, u64, u64)],
    field: &str,
    name: &str,
    region: &str,
    cached: (u64, u64),
    taken: &[(u64, u64, Alias)],
) -> Result<(u64, u64, Alias), FieldError> {
    let (start, end) = cached;
    let (s, e) = find_region(regions, field, name)?;
    if e - s != end - start || taken.iter().any(|w| w.0 == s) {
        return Err(err(
            field,
            format!(
                "`{name}` must be a region of its own as large as `{region}` ({} bytes)",
                end - start
            ),
        ));
    }
    Ok((s, e, Alias::Bypass))
}

/// The stall of a line read: clkdiv x (address + wait + data clocks).
fn miss_cycles(m: &MissFile, line_bytes: u64, rp2350: bool) -> Result<u32, FieldError> {
    if rp2350 && !(1..=256).contains(&m.clkdiv) {
        return Err(err(
            "miss.clkdiv",
            format!(
                "{}: a divider from 1 to 256 (QMI M0_TIMING.CLKDIV)",
                m.clkdiv
            ),
        ));
    }
    if !rp2350 && (m.clkdiv < 2 || m.clkdiv % 2 != 0 || m.clkdiv > 256) {
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
    /// Writes to the RP2350's cache maintenance window.
    #[serde(skip_serializing_if = "is_zero")]
    pub maintenance: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
    line_bytes: u32,
    miss: u32,
    /// Per set, `ways` line numbers by physical way; u32::MAX is an
    /// empty (invalid) way.
    tags: Vec<u32>,
    /// Per set, its ways' numbers, most recently used first.
    order: Vec<u8>,
    /// The RP2350's QMI (None: the RP2040's SSI, a fixed line read).
    qmi: Option<rp2350::Qmi>,
    pub stats: XipStats,
}

const EMPTY: u32 = u32::MAX;

impl XipState {
    pub fn new(spec: &XipSpec) -> XipState {
        let ways = spec.ways as usize;
        XipState {
            ctrl: spec.reset,
            ways,
            sets: spec.sets,
            line_bytes: spec.line_bytes,
            miss: spec.miss_cycles,
            tags: vec![EMPTY; spec.sets as usize * ways],
            // way 0 least recently used: the first fill of a set goes there
            order: (0..spec.sets as usize)
                .flat_map(|_| (0..ways as u8).rev().collect::<Vec<_>>())
                .collect(),
            qmi: spec.rp2350.as_ref().map(|r| rp2350::Qmi::new(r.qmi)),
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

    /// The firmware writes the RP2350's XIP_CTRL: the bit the model does
    /// not have is refused, named.
    pub fn write_ctrl_rp2350(&mut self, value: u32) -> Result<(), &'static str> {
        self.ctrl = rp2350::write_ctrl(value)?;
        Ok(())
    }

    /// The firmware writes FLUSH: bit 0 empties the tag memory.
    pub fn write_flush(&mut self, value: u32) {
        if value & 1 != 0 {
            self.tags.fill(EMPTY);
            self.stats.flushes += 1;
        }
    }

    /// A write into the RP2350's maintenance window at `offset`.
    pub fn maintain(&mut self, offset: u64) -> Result<(), String> {
        match rp2350::decode(offset, self.line_bytes, self.sets, self.ways as u32)? {
            rp2350::Maintenance::InvalidateSetWay { set, way } => {
                self.tags[set as usize * self.ways + way as usize] = EMPTY;
            }
            rp2350::Maintenance::InvalidateLine(line) => {
                let set = self.set_of(line);
                let ways = &mut self.tags[set * self.ways..(set + 1) * self.ways];
                if let Some(t) = ways.iter_mut().find(|t| **t == line) {
                    *t = EMPTY;
                }
            }
            rp2350::Maintenance::Clean => {}
        }
        self.stats.maintenance += 1;
        Ok(())
    }

    /// `way` of `set` becomes its most recently used.
    fn touch(&mut self, set: usize, way: u8) {
        let order = &mut self.order[set * self.ways..(set + 1) * self.ways];
        let i = order.iter().position(|w| *w == way).unwrap_or(0);
        order[..=i].rotate_right(1);
    }

    /// The set of `line` (the sets are a power of two).
    fn set_of(&self, line: u32) -> usize {
        (line & (self.sets - 1)) as usize
    }

    /// Looks `line` up; a hit becomes the set's most recently used.
    fn hit(&mut self, line: u32) -> bool {
        let set = self.set_of(line);
        let base = set * self.ways;
        // the common case, a hit in the most recently used way: no reorder
        if self.tags[base + self.order[base] as usize] == line {
            return true;
        }
        let ways = &self.tags[base..base + self.ways];
        match ways.iter().position(|t| *t == line) {
            Some(way) => {
                self.touch(set, way as u8);
                true
            }
            None => false,
        }
    }

    /// Puts `line` in its set as the most recently used: in its way when
    /// present, else in the least recently used invalid way, else in the
    /// least recently used way.
    fn fill(&mut self, line: u32) {
        let set = self.set_of(line);
        let base = set * self.ways;
        let order = &self.order[base..base + self.ways];
        let tags = &self.tags[base..base + self.ways];
        let way = tags
            .iter()
            .position(|t| *t == line)
            .map(|w| w as u8)
            .or_else(|| {
                order
                    .iter()
                    .rev()
                    .copied()
                    .find(|w| tags[*w as usize] == EMPTY)
            })
            .unwrap_or(order[self.ways - 1]);
        self.tags[base + way as usize] = line;
        self.touch(set, way);
    }

    /// Whether `alias` looks up and fills, with the cache's enable (bit 0
    /// of XIP_CTRL on both: EN, EN_SECURE).
    fn policy(&self, alias: Alias) -> (bool, bool) {
        if self.ctrl & CTRL_EN == 0 {
            (false, false)
        } else {
            alias.checks_and_allocates()
        }
    }

    /// One access to `line` through `alias`: returns whether it hit and
    /// its stall.
    fn access(&mut self, line: u32, alias: Alias) -> (bool, u32) {
        let (check, allocate) = self.policy(alias);
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
        self.count_data(hit, stall);
        stall
    }

    fn count_data(&mut self, hit: bool, stall: u32) {
        if hit {
            self.stats.data_hits += 1;
        } else {
            self.stats.data_misses += 1;
        }
        self.stats.data_stall += u64::from(stall);
    }

    /// An RP2350 access of `bytes` at flash offset `offset` through
    /// `alias` at cycle `now`: whether it hit and its stall. A cached one
    /// fills its line (a 64-bit transfer), any other is a transfer of its
    /// own size (the RP2350's windows look up exactly when they fill).
    fn access_qmi(&mut self, alias: Alias, offset: u64, bytes: u64, now: u64) -> (bool, u32) {
        if self.policy(alias).0 {
            return self.fill_qmi((offset / u64::from(self.line_bytes)) as u32, now);
        }
        match self.qmi.as_mut() {
            Some(qmi) => (false, qmi.transfer(offset, bytes, now)),
            None => (false, self.miss),
        }
    }

    /// A cached RP2350 access to `line` at cycle `now`: a hit, or its
    /// line filled by a 64-bit transfer.
    fn fill_qmi(&mut self, line: u32, now: u64) -> (bool, u32) {
        if self.hit(line) {
            return (true, 0);
        }
        let Some(qmi) = self.qmi.as_mut() else {
            return (false, self.miss);
        };
        let line_bytes = u64::from(self.line_bytes);
        let stall = qmi.transfer(u64::from(line) * line_bytes, line_bytes, now);
        self.fill(line);
        (false, stall)
    }

    /// An RP2350 block executes from a window of `alias` at cycle `now`:
    /// through the cache its `lines`, else its fetch `words` (flash
    /// offsets of `word_bytes` each). Returns the stall.
    pub fn fetch_block_qmi(
        &mut self,
        alias: Alias,
        lines: &[u32],
        words: &[u32],
        word_bytes: u32,
        now: u64,
    ) -> u32 {
        let cached = self.policy(alias).1;
        let (units, bytes) = if cached {
            (lines, self.line_bytes)
        } else {
            (words, word_bytes)
        };
        let mut stall = 0;
        for &unit in units {
            let (hit, s) = if cached {
                self.fill_qmi(unit, now + u64::from(stall))
            } else {
                let offset = u64::from(unit) * u64::from(bytes);
                self.access_qmi(alias, offset, u64::from(bytes), now + u64::from(stall))
            };
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

    /// An RP2350 data read of `bytes` at flash offset `offset` through
    /// `alias` at cycle `now`: returns its stall.
    pub fn read_data_qmi(&mut self, alias: Alias, offset: u64, bytes: u64, now: u64) -> u32 {
        let (hit, stall) = self.access_qmi(alias, offset, bytes, now);
        self.count_data(hit, stall);
        stall
    }
}

pub mod rp2350;
pub mod run;

#[cfg(test)]
mod tests;

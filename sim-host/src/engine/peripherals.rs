//! Vendor peripherals, which sim-host does not model. By default an access
//! to one is a fault that names it (`model::peripherals`); with
//! `--peripherals ignore` their pages are mapped as device memory whose
//! reads return the SVD's reset value of the register (0 where none is
//! known) and whose writes are dropped, each access counted per
//! peripheral, so that start-up code that configures clocks and GPIO runs.
//! A status bit that never becomes ready then loops forever: the register
//! read last, how often in a row, and the bits the loop tests name it when
//! a limit ends the run.

use super::api::{uc, MachineError, PeripheralAccesses};
use super::mmio::placed_access;
use super::registers::arch_reg;
use super::state::{stop_with, Counts, Peripherals, Poll, Uc};
use super::stop::fault_at;
use crate::model::peripherals::{polled_bits, FieldBits, PeripheralMap, RegisterName};
use crate::model::target::{Arch, Target};

/// Unicorn maps whole pages (4 KiB on both architectures here).
const PAGE: u64 = 0x1000;
/// ARM's Private Peripheral Bus (the SCS, the DWT): never a vendor's.
const ARM_PPB: std::ops::Range<u64> = 0xE000_0000..0xE010_0000;
/// Reads of one register in a row, with nothing else ignored in between,
/// that make a poll.
const POLL_READS: u64 = 64;
/// A poll is still going on if its register was read this recently.
const POLL_RECENT_CYCLES: u64 = 100_000;
/// Fields a poll warning lists when it cannot tell which the loop tests.
const LISTED_FIELDS: usize = 12;

/// The run's peripheral state for `map`.
pub(super) fn state(map: PeripheralMap, ignored: bool) -> Peripherals {
    Peripherals {
        ignored,
        counts: vec![Counts::default(); map.peripherals.len()],
        map,
        poll: Poll::default(),
    }
}

impl Peripherals {
    /// The accesses answered per peripheral (those with any).
    pub(super) fn accesses(&self) -> Vec<PeripheralAccesses> {
        self.map
            .peripherals
            .iter()
            .zip(&self.counts)
            .filter(|(_, c)| c.reads + c.writes > 0)
            .map(|(m, c)| PeripheralAccesses {
                name: m.name.clone(),
                reads: c.reads,
                writes: c.writes,
                reads_without_reset_value: c.unknown,
            })
            .collect()
    }

    /// What a run ended by a limit at cycle `now` was doing, if it was
    /// polling a peripheral register.
    pub(super) fn polling(&self, now: u64) -> Option<String> {
        let poll = self.poll;
        if poll.reads < POLL_READS || now.saturating_sub(poll.at_cycle) > POLL_RECENT_CYCLES {
            return None;
        }
        let at = self.map.find(poll.addr)?;
        let value = if poll.known {
            format!(
                "{:#x} each time (its SVD reset value: --peripherals ignore drops writes)",
                poll.value
            )
        } else if poll.value != 0 {
            format!(
                "{:#x} each time (--peripherals ignore: the SVD gives part of it no reset \
                 value, read as 0)",
                poll.value
            )
        } else {
            "0 each time (--peripherals ignore: no reset value known)".into()
        };
        let offset = poll.addr - at.peripheral.start;
        let bits = at.register.map_or_else(
            || tested_text(poll.tested, &[]),
            |r| register_bits_text(r, offset, poll.tested),
        );
        Some(format!(
            "the guest was polling {} ({:#010x}): read {} times in a row, {value}{bits}: a \
             status bit that never becomes ready",
            at.name(),
            poll.addr,
            poll.reads
        ))
    }
}

/// What a poll warning says of register `r`'s bits: those the loop tests
/// (`tested`, bits of a load at `offset` in the peripheral), named by
/// field; else the fields the SVD gives it.
fn register_bits_text(r: &RegisterName, offset: u64, tested: Option<u64>) -> String {
    let shift = 8 * offset.saturating_sub(r.offset);
    let tested = tested.map(|bits| bits.checked_shl(shift as u32).unwrap_or(0));
    if tested.is_some() || r.fields.is_empty() {
        return tested_text(tested, &r.fields);
    }
    let mut names: Vec<String> = r
        .fields
        .iter()
        .take(LISTED_FIELDS)
        .map(|f| f.describe())
        .collect();
    if r.fields.len() > LISTED_FIELDS {
        names.push(format!("and {} more", r.fields.len() - LISTED_FIELDS));
    }
    format!(
        "; fields: {} (which the loop tests was not recognised)",
        names.join(", ")
    )
}

/// The bits the loop tests (register bits), by the `fields` that hold
/// them.
fn tested_text(tested: Option<u64>, fields: &[FieldBits]) -> String {
    let Some(mut bits) = tested else {
        return String::new();
    };
    let mut holding: Vec<&FieldBits> = fields.iter().filter(|f| f.mask() & bits != 0).collect();
    holding.sort_by_key(|f| f.lsb);
    let mut parts: Vec<String> = holding.iter().map(|f| f.describe()).collect();
    for f in holding {
        bits &= !f.mask();
    }
    let loose: Vec<String> = (0..64)
        .filter(|i| (bits >> i) & 1 == 1)
        .map(|i| i.to_string())
        .collect();
    match loose.len() {
        0 => {}
        1 => parts.push(format!("bit {}", loose[0])),
        _ => parts.push(format!("bits {}", loose.join(", "))),
    }
    format!("; the loop tests {}", parts.join(", "))
}

/// With `--peripherals ignore`: maps the pages of every peripheral that
/// no memory region (nor, on ARM, the PPB) holds.
pub(super) fn map_ignored(emu: &mut Uc<'static>, target: &Target) -> Result<(), MachineError> {
    for (start, end) in spans(&emu.get_data().peripherals.map, target) {
        let read = move |uc: &mut Uc<'_>, offset: u64, size: usize| -> u64 {
            access(uc, start + offset, size, false)
        };
        let write = move |uc: &mut Uc<'_>, offset: u64, size: usize, _value: u64| {
            access(uc, start + offset, size, true);
        };
        uc(
            "map the peripherals answered by their reset values (--peripherals ignore)",
            emu.mmio_map(start, end - start, Some(read), Some(write)),
        )?;
    }
    Ok(())
}

/// The page spans to map: each peripheral's pages, less those of memory
/// regions and the PPB, merged where they touch.
fn spans(map: &PeripheralMap, target: &Target) -> Vec<(u64, u64)> {
    // RISC-V's machine timer answers its pages (`machine_timer`)
    let timer_pages = target.machine_timer().map(|t| t.pages());
    // the flash accelerator answers FLASH_ACR's page (`flash`)
    let flash_page = target.flash.as_ref().map(|f| f.control & !(PAGE - 1));
    // the XIP cache answers XIP_CTRL's page (`xip`)
    let xip_page = target.xip.as_ref().map(|x| x.control & !(PAGE - 1));
    // the clock tree's and UARTs' pages (`devices`)
    let device_pages = crate::host::devices::pages(target);
    let taken = |page: u64| {
        target
            .regions
            .iter()
            .any(|r| page < r.end() && r.start < page + PAGE)
            || (target.arch == Arch::Arm && ARM_PPB.contains(&page))
            || timer_pages.as_ref().is_some_and(|p| p.contains(&page))
            || flash_page == Some(page)
            || xip_page == Some(page)
            || device_pages.contains(&page)
    };
    let mut pages: Vec<u64> = map
        .peripherals
        .iter()
        .flat_map(|p| (p.start / PAGE..p.end.div_ceil(PAGE)).map(|n| n * PAGE))
        .filter(|page| !taken(*page))
        .collect();
    pages.sort_unstable();
    pages.dedup();
    let mut spans: Vec<(u64, u64)> = Vec::new();
    for page in pages {
        match spans.last_mut() {
            Some((_, end)) if *end == page => *end += PAGE,
            _ => spans.push((page, page + PAGE)),
        }
    }
    spans
}

/// One access answered: counted for its peripheral, a read returning the
/// register's reset value (`PeripheralMap::reset_read`), or a fault where
/// the mapped page holds none (the rest of a page a peripheral starts
/// in). Not placed at its instruction (decoding the block at every access
/// would make a polling loop crawl): a poll's time is its block's, and
/// its block is decoded once, when the reads in a row make it a poll.
pub(super) fn access(uc: &mut Uc<'_>, addr: u64, size: usize, write: bool) -> u64 {
    let st = uc.get_data_mut();
    let now = st.clock.cycles;
    let p = &mut st.peripherals;
    let Some(index) = p
        .map
        .peripherals
        .iter()
        .position(|m| (m.start..m.end).contains(&addr))
    else {
        let verb = if write { "write to" } else { "read of" };
        let kind = format!(
            "{verb} unmapped memory ({size} bytes) next to a peripheral, outside every \
             peripheral's range"
        );
        let pc = placed_access(uc, addr).pc;
        let stop = fault_at(uc, pc, kind, Some(addr));
        stop_with(uc, stop);
        return 0;
    };
    let count = &mut p.counts[index];
    if write {
        count.writes += 1;
        p.poll.reads = 0;
        return 0;
    }
    let read = p.map.reset_read(index, addr, size);
    count.reads += 1;
    count.unknown += u64::from(!read.known);
    if p.poll.addr == addr && p.poll.reads > 0 {
        p.poll.reads += 1;
    } else {
        p.poll = Poll {
            addr,
            reads: 1,
            ..Poll::default()
        };
    }
    (p.poll.at_cycle, p.poll.value, p.poll.known) = (now, read.value, read.known);
    if p.poll.reads == POLL_READS {
        let tested = tested_bits(uc, addr);
        uc.get_data_mut().peripherals.poll.tested = tested;
    }
    read.value
}

/// The bits of the value read at `addr` that the running block tests
/// (`model::peripherals::polled_bits`), from its instructions as decoded
/// now: the loading one found as `engine::mmio` places device accesses.
fn tested_bits(uc: &mut Uc<'_>, addr: u64) -> Option<u64> {
    // a failure to place is no counter read at its block's end here
    let unplaced = uc.get_data().mmio.unplaced;
    let pc = placed_access(uc, addr).pc;
    let st = uc.get_data_mut();
    if st.mmio.unplaced != unplaced {
        st.mmio.unplaced = unplaced;
        return None;
    }
    let start = st.clock.block_start;
    let end = u64::from(st.cache.peek(start as u32)?.fallthrough);
    let mut code = vec![0u8; end.checked_sub(start)? as usize];
    uc.mem_read(start, &mut code).ok()?;
    let st = uc.get_data();
    let insns = st.decoder.decode(&code, start, false).ok()?;
    let load = insns.iter().position(|i| i.addr == pc)?;
    let texts: Vec<(String, String)> = insns
        .iter()
        .map(|i| {
            let at = &code[(i.addr - start) as usize..];
            let text = st.decoder.disassemble_one(at, i.addr).unwrap_or_default();
            let (m, ops) = text.split_once(' ').unwrap_or((&text, ""));
            (m.to_owned(), ops.trim().to_owned())
        })
        .collect();
    let arch = st.arch;
    let at_load = |n: u8| {
        let id = arch_reg(arch, u32::from(n))?;
        uc.reg_read(id).ok()
    };
    polled_bits(arch, &texts, load, &at_load)
}

/// An access to a page the host models beside its registers (`beside`
/// says where, unless the board's map names the address): a peripheral
/// answered with `--peripherals ignore`, else a fault that names it.
pub(super) fn beside_modelled(
    uc: &mut Uc<'_>,
    addr: u64,
    size: usize,
    write: bool,
    beside: &str,
) -> u64 {
    if uc.get_data().peripherals.ignored {
        return access(uc, addr, size, write);
    }
    let verb = if write { "write" } else { "read" };
    let place = (uc.get_data().peripherals.map.describe(addr)).unwrap_or_else(|| beside.to_owned());
    let kind = format!("{verb} ({size} bytes) {place},");
    let pc = placed_access(uc, addr).pc;
    let stop = fault_at(uc, pc, kind, Some(addr));
    stop_with(uc, stop);
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::peripherals::MappedPeripheral;

    fn peripheral(name: &str, start: u64, end: u64) -> MappedPeripheral {
        MappedPeripheral {
            name: name.into(),
            start,
            end,
            source: "test".into(),
            registers: Vec::new(),
        }
    }

    #[test]
    fn spans_skip_memory_and_merge_neighbours() {
        let target = crate::model::target::builtin("cortex-m4").unwrap();
        let map = PeripheralMap {
            peripherals: vec![
                peripheral("A", 0x4000_0000, 0x4000_0010),
                peripheral("B", 0x4000_1800, 0x4000_2004),
                peripheral("RAM", 0x2000_0000, 0x2000_1000),
                peripheral("PPB", 0xE000_E000, 0xE000_F000),
            ],
        };
        assert_eq!(spans(&map, &target), [(0x4000_0000, 0x4000_3000)]);
    }

    fn register(fields: &[(&str, u32, u32)]) -> RegisterName {
        RegisterName {
            offset: 4,
            size: 4,
            name: "CR".into(),
            fields: fields
                .iter()
                .map(|(name, lsb, width)| FieldBits {
                    name: (*name).into(),
                    lsb: *lsb,
                    width: *width,
                })
                .collect(),
            ..RegisterName::default()
        }
    }

    #[test]
    fn a_poll_names_the_fields_its_loop_tests() {
        let cr = register(&[("HSION", 0, 1), ("HSERDY", 17, 1), ("PLLN", 6, 9)]);
        let text = |offset, tested| register_bits_text(&cr, offset, tested);
        assert_eq!(text(4, Some(1 << 17)), "; the loop tests HSERDY (bit 17)");
        // a byte load of the register's third byte: its bit 1 is bit 17
        assert_eq!(text(6, Some(1 << 1)), "; the loop tests HSERDY (bit 17)");
        assert_eq!(
            text(4, Some(1 << 17 | 1 << 7 | 1 << 31 | 1 << 30)),
            "; the loop tests PLLN (bits 6-14), HSERDY (bit 17), bits 30, 31"
        );
        // not recognised: the fields the SVD gives
        assert_eq!(
            text(4, None),
            "; fields: HSION (bit 0), HSERDY (bit 17), PLLN (bits 6-14) (which the loop \
             tests was not recognised)"
        );
        // no fields: the bits, or nothing
        let bare = register(&[]);
        assert_eq!(
            register_bits_text(&bare, 4, Some(4)),
            "; the loop tests bit 2"
        );
        assert_eq!(register_bits_text(&bare, 4, None), "");
        let many: Vec<(String, u32, u32)> = (0..20).map(|i| (format!("F{i}"), i, 1)).collect();
        let many: Vec<(&str, u32, u32)> =
            many.iter().map(|(n, l, w)| (n.as_str(), *l, *w)).collect();
        let listed = register_bits_text(&register(&many), 4, None);
        assert!(listed.contains("F11 (bit 11), and 8 more"), "{listed}");
    }
}

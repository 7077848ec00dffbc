//! Vendor peripherals, which sim-host does not model. By default an access
//! to one is a fault that names it (`model::peripherals`); with
//! `--peripherals ignore` their pages are mapped as device memory that
//! reads 0 and drops writes, each access counted per peripheral, so that
//! start-up code that configures clocks and GPIO runs. A status bit that
//! never becomes ready then loops forever: the register read last, and
//! how often in a row, names it when a limit ends the run.

use super::api::{uc, MachineError};
use super::mmio::placed_access;
use super::state::{stop_with, Peripherals, Poll, Uc};
use super::stop::fault_at;
use crate::model::peripherals::PeripheralMap;
use crate::model::target::{Arch, Target};

/// Unicorn maps whole pages (4 KiB on both architectures here).
const PAGE: u64 = 0x1000;
/// ARM's Private Peripheral Bus (the SCS, the DWT): never a vendor's.
const ARM_PPB: std::ops::Range<u64> = 0xE000_0000..0xE010_0000;
/// The run's peripheral state for `map`.
pub(super) fn state(map: PeripheralMap, ignored: bool) -> Peripherals {
    Peripherals {
        ignored,
        counts: vec![(0, 0); map.peripherals.len()],
        map,
        poll: Poll::default(),
    }
}

/// With `--peripherals ignore`: maps the pages of every peripheral that
/// no memory region (nor, on ARM, the PPB) holds.
pub(super) fn map_ignored(emu: &mut Uc<'static>, target: &Target) -> Result<(), MachineError> {
    for (start, end) in spans(&emu.get_data().peripherals.map, target) {
        let read = move |uc: &mut Uc<'_>, offset: u64, size: usize| -> u64 {
            access(uc, start + offset, size, false);
            0
        };
        let write = move |uc: &mut Uc<'_>, offset: u64, size: usize, _value: u64| {
            access(uc, start + offset, size, true);
        };
        uc(
            "map the peripherals read as 0 (--peripherals ignore)",
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

/// One access answered: counted for its peripheral, or a fault where the
/// mapped page holds none (the rest of a page a peripheral starts in).
/// Not placed at its instruction (decoding the block at every access
/// would make a polling loop crawl): a poll's time is its block's.
pub(super) fn access(uc: &mut Uc<'_>, addr: u64, size: usize, write: bool) {
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
        return stop_with(uc, stop);
    };
    let count = &mut p.counts[index];
    if write {
        count.1 += 1;
        p.poll.reads = 0;
    } else {
        count.0 += 1;
        if p.poll.addr == addr && p.poll.reads > 0 {
            p.poll.reads += 1;
        } else {
            p.poll = Poll {
                addr,
                reads: 1,
                at_cycle: 0,
            };
        }
        p.poll.at_cycle = now;
    }
}

/// An access to a page the host models beside its registers (`beside`
/// says where, unless the board's map names the address): a peripheral
/// read as 0 with `--peripherals ignore`, else a fault that names it.
pub(super) fn beside_modelled(
    uc: &mut Uc<'_>,
    addr: u64,
    size: usize,
    write: bool,
    beside: &str,
) -> u64 {
    if uc.get_data().peripherals.ignored {
        access(uc, addr, size, write);
        return 0;
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
}

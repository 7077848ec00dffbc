//! Guest memory: the target's regions mapped, the TLB filled so stores to
//! RAM stay on QEMU's fast path, code pages watched for rewrites, invalid
//! accesses recorded, and semihosting's view of memory.

use super::api::{uc, MachineError};
use super::state::Uc;
use crate::host::semihost::{GuestMemory, MemoryFault};
use crate::model::target::Target;
use unicorn_engine::unicorn_const::{uc_error, HookType, MemType, Prot};

/// Guest memory through Unicorn, for semihosting.
pub(super) struct UcMemory<'a, 'b>(pub(super) &'a mut Uc<'b>);

impl GuestMemory for UcMemory<'_, '_> {
    fn read(&self, addr: u32, buf: &mut [u8]) -> Result<(), MemoryFault> {
        self.0
            .mem_read(u64::from(addr), buf)
            .map_err(|_| MemoryFault {
                addr,
                len: buf.len() as u32,
            })
    }
    /// Semihosting writes only where the guest itself could store: not
    /// into code or read-only data, not into a stack guard page (Unicorn's
    /// `mem_write` ignores protections, so they are checked here).
    fn write(&mut self, addr: u32, data: &[u8]) -> Result<(), MemoryFault> {
        let fault = MemoryFault {
            addr,
            len: data.len() as u32,
        };
        if !writable(self.0, u64::from(addr), data.len() as u64) {
            return Err(fault);
        }
        self.0.mem_write(u64::from(addr), data).map_err(|_| fault)
    }
}

/// Whether `[addr, addr + len)` lies in one of the target's memory
/// regions (RAM or flash, never a device or the System Control Space)
/// that the core can write (`write`) or read: where an exception frame
/// may be stacked or unstacked.
pub(super) fn in_target_memory(uc: &Uc<'_>, addr: u64, len: u64, write: bool) -> bool {
    uc.get_data()
        .target
        .regions
        .iter()
        .any(|r| r.contains(addr, len) && if write { r.access.write } else { r.access.read })
}

/// Whether `[addr, addr + len)` lies in mapped, writable memory.
pub(super) fn writable(uc: &Uc<'_>, addr: u64, len: u64) -> bool {
    let Ok(regions) = uc.mem_regions() else {
        return false;
    };
    let end = addr.saturating_add(len);
    let mut at = addr;
    while at < end {
        let covering = regions
            .iter()
            .find(|r| r.begin <= at && at <= r.end && r.perms & Prot::WRITE.0 != 0);
        match covering {
            Some(r) if r.end == u64::MAX => return true,
            Some(r) => at = r.end + 1,
            None => return false,
        }
    }
    true
}

pub(super) fn prot(region: &crate::model::target::Region) -> Prot {
    let mut p = Prot::NONE;
    if region.access.read {
        p |= Prot::READ;
    }
    if region.access.write {
        p |= Prot::WRITE;
    }
    if region.access.execute {
        p |= Prot::EXEC;
    }
    p
}

/// Maps the target's regions and sets up how Unicorn fills its TLB, so
/// that ordinary data stores to RAM take QEMU's fast path (issue 19;
/// BENCHMARKS.md, "The store path").
///
/// Why stores were slow: the bundled QEMU stubs out dirty-memory tracking
/// (`cpu_physical_memory_is_clean` always answers "clean"), so every TLB
/// entry of a writable RAM page is filled with `TLB_NOTDIRTY` and every
/// store to it goes through `store_helper` → `notdirty_write` (two
/// `address_space_translate` region lookups, `tb_invalidate_phys_page_fast`).
/// `notdirty_write` clears the flag only when the entry is not executable
/// (`addr_code == -1`) and no memory hook covers the address. With the CPU's
/// own TLB fill every RAM page is executable (the ARMv7-M default memory map
/// and RISC-V M-mode allow execution everywhere), so the flag was never
/// cleared.
///
/// The fix keeps the regions' permissions and replaces the TLB fill
/// (`TlbType::VIRTUAL` and a fill hook, identity-mapped): a data access to
/// a writable page that has never been fetched from gets a read/write
/// entry without execute, so after its first store the page's stores are
/// fast. The first instruction fetch from a writable page marks it as code
/// for the rest of the run and flushes the TLB; from then on every entry of
/// that page is executable, so stores to it always take the slow path that
/// invalidates translated code (self-modifying code stays correct,
/// `tests/tests/smc.rs`). Unicorn still checks the regions' permissions on
/// every fill, so faults are unchanged. A memory hook covering an address
/// keeps its stores slow: [`fault_hook_ranges`] leaves writable RAM out of
/// the fault hook.
pub(super) fn map_memory(emu: &mut Uc<'_>, target: &Target) -> Result<(), MachineError> {
    for region in &target.regions {
        uc(
            &format!("map region {}", region.name),
            emu.mem_map(region.start, region.size, prot(region)),
        )?;
    }
    let writable: Vec<(u64, u64)> = target
        .regions
        .iter()
        .filter(|r| r.access.write)
        .map(|r| (r.start, r.end()))
        .collect();
    // target pages (1 KiB on ARM, 4 KiB on RISC-V) of writable regions that
    // have held code
    let mut code_pages = rustc_hash::FxHashSet::<u64>::default();
    let page_size = u64::from(uc("page size", emu.ctl_get_page_size())?);
    uc(
        "TLB mode",
        emu.ctl_set_tlb_type(unicorn_engine::TlbType::VIRTUAL),
    )?;
    uc(
        "TLB fill hook",
        emu.add_tlb_hook(1, 0, move |uc: &mut Uc<'_>, page, kind| {
            let in_writable = writable.iter().any(|&(s, e)| (s..e).contains(&page));
            let executable = if kind == MemType::FETCH {
                if in_writable && code_pages.insert(page) {
                    watch_code_page(uc, page & !(page_size - 1), page_size);
                    // entries filled while the page held only data must go
                    let _ = uc.ctl_flush_tlb();
                }
                true
            } else {
                !in_writable || code_pages.contains(&page)
            };
            Some(unicorn_engine::TlbEntry {
                paddr: page,
                perms: if executable {
                    Prot::ALL
                } else {
                    Prot::READ | Prot::WRITE
                },
            })
        }),
    )?;
    Ok(())
}

/// Stores to a page of RAM that holds code forget the prices of the blocks
/// they overwrite (Unicorn re-translates the code itself). Such stores are
/// on QEMU's slow path anyway ([`map_memory`]), so the hook adds little.
#[cold]
#[inline(never)]
pub(super) fn watch_code_page(uc: &mut Uc<'_>, page: u64, page_size: u64) {
    let forget = |uc: &mut Uc<'_>, _: MemType, addr: u64, size: usize, _: i64| {
        uc.get_data_mut()
            .forget_code(addr, addr.saturating_add(size as u64));
        true
    };
    let _ = uc.add_mem_hook(HookType::MEM_WRITE, page, page + page_size - 1, forget);
}

/// The Coprocessor Access Control Register (Armv7-M ARM B3.2.20, at the
/// same address on Armv8-M), which the C runtime of a hard-float build
/// (picolibc's crt0.c) sets to enable the FPU before `main`.
pub(crate) const CPACR: u64 = 0xE000_ED88;

/// The address ranges (inclusive) the memory fault hook covers: everything
/// but the writable regions, whose stores a covering hook would keep on
/// the slow path (see [`map_memory`]). Writable regions are RAM, mapped
/// whole, so an access there faults only on a thread's guard page, which
/// gets a hook of its own ([`add_fault_hook`] in `allocate_stack`).
pub(super) fn fault_hook_ranges(target: &Target) -> Vec<(u64, u64)> {
    let mut holes: Vec<(u64, u64)> = target
        .regions
        .iter()
        .filter(|r| r.access.write)
        .map(|r| (r.start, r.end()))
        .collect();
    holes.sort_unstable();
    let mut ranges = Vec::new();
    let mut next = 0u64;
    for (start, end) in holes {
        if start > next {
            ranges.push((next, start - 1));
        }
        next = next.max(end);
    }
    ranges.push((next, u64::MAX));
    ranges
}

/// Records an invalid access (unmapped, or against a region's permissions)
/// in `first..=last` for the fault report.
pub(super) fn add_fault_hook(uc: &mut Uc<'_>, first: u64, last: u64) -> Result<(), uc_error> {
    uc.add_mem_hook(
        HookType::MEM_INVALID,
        first,
        last,
        |uc: &mut Uc<'_>, kind, addr, size, _| {
            let pc = uc.pc_read().unwrap_or(0);
            uc.get_data_mut().end.bad_access = Some((kind, addr, size, pc));
            false
        },
    )
    .map(|_| ())
}

#[cfg(test)]
mod memory_tests {
    use super::fault_hook_ranges;
    use crate::model::target;

    #[test]
    fn the_fault_hook_covers_everything_but_writable_regions() {
        for name in target::builtin_names() {
            let t = target::builtin(&name).unwrap();
            let ranges = fault_hook_ranges(&t);
            let covered = |a: u64| ranges.iter().any(|&(s, e)| (s..=e).contains(&a));
            for r in &t.regions {
                let probes = [r.start, r.start + r.size / 2, r.end() - 1];
                for a in probes {
                    assert_eq!(covered(a), !r.access.write, "{name} {} {a:#x}", r.name);
                }
                assert!(
                    r.start == 0 || covered(r.start - 1),
                    "{name} below {}",
                    r.name
                );
                assert!(covered(r.end()), "{name} above {}", r.name);
            }
            assert!(covered(u64::MAX), "{name}");
        }
    }
}

//! The engine as the plugins' current guest: registers and memory read
//! straight from Unicorn's C engine while an ARP call is handled, counters
//! from the ARP host (the host API of `sim_host_plugin.h`).

use super::registers::arch_reg;
use crate::host::counters::Counters;
use crate::host::plugin::{with_guest, GuestAccess};
use crate::model::target::Arch;
use std::rc::Rc;

/// The machine's guest: registers and memory straight from Unicorn's C
/// engine, counters from the ARP host's [`Counters`].
struct UcGuest {
    /// Valid while [`with_machine_guest`] runs: this value lives only in
    /// the slot, which is restored before that function returns.
    handle: *mut unicorn_engine::unicorn_const::uc_engine,
    arch: Arch,
    clock_hz: u64,
    counters: Rc<Counters>,
}

impl UcGuest {
    /// Unicorn's id of architectural register `n`.
    fn register_id(&self, n: u32) -> Option<i32> {
        arch_reg(self.arch, n)
    }
}

impl GuestAccess for UcGuest {
    fn cycles(&self) -> u64 {
        self.counters.cycles.get()
    }
    fn instructions(&self) -> u64 {
        self.counters.instructions.get()
    }
    fn clock_hz(&self) -> u64 {
        self.clock_hz
    }
    fn register(&self, n: u32) -> Option<u64> {
        use unicorn_engine::unicorn_const::{uc_error, uc_reg_read};
        let id = self.register_id(n)?;
        let mut value = 0u64;
        // SAFETY: `handle` is the live engine (see the field); the
        // registers mapped above are at most 64 bits wide.
        let err = unsafe { uc_reg_read(self.handle, id, (&raw mut value).cast()) };
        (err == uc_error::OK).then_some(value)
    }
    fn read_memory(&self, addr: u64, buf: &mut [u8]) -> bool {
        use unicorn_engine::unicorn_const::{uc_error, uc_mem_read};
        // SAFETY: `handle` is the live engine; `buf` is writable for its
        // length.
        let err =
            unsafe { uc_mem_read(self.handle, addr, buf.as_mut_ptr().cast(), buf.len() as u64) };
        err == uc_error::OK
    }
}

/// Machine-side glue: runs `f` on the engine's user data with the engine
/// as the current guest, so plugin callbacks run by `f` (through the ARP
/// host) can read its registers, memory and `counters`.
///
/// Registers and memory are read through the raw engine handle, never
/// through the Rust `Unicorn` value, so they do not alias the `&mut D`
/// that `f` holds.
pub(super) fn with_machine_guest<D, R>(
    uc: &mut unicorn_engine::Unicorn<'_, D>,
    arch: Arch,
    clock_hz: u64,
    counters: Rc<Counters>,
    f: impl FnOnce(&mut D) -> R,
) -> R {
    let guest = Rc::new(UcGuest {
        handle: uc.get_handle(),
        arch,
        clock_hz,
        counters,
    });
    with_guest(guest, || f(uc.get_data_mut()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::plugin::current_guest;

    #[test]
    fn machine_guest_reads_unicorn_registers_memory_and_counters() {
        use unicorn_engine::unicorn_const::{Arch as UcArch, Mode as UcMode, Prot};
        use unicorn_engine::{RegisterARM, Unicorn};
        let mut uc = Unicorn::new_with_data(UcArch::ARM, UcMode::THUMB, 5u32).unwrap();
        uc.mem_map(0x2000_0000, 0x1000, Prot::ALL).unwrap();
        uc.mem_write(0x2000_0010, &[1, 2, 3, 4]).unwrap();
        uc.reg_write(RegisterARM::R3, 0xdead).unwrap();
        uc.reg_write(RegisterARM::SP, 0x2000_0800).unwrap();
        let counters = Rc::new(Counters::default());
        counters.cycles.set(42);
        counters.instructions.set(17);
        let seen = with_machine_guest(&mut uc, Arch::Arm, 25_000_000, counters, |data| {
            *data += 1;
            let g = current_guest().expect("a guest inside");
            let mut buf = [0u8; 4];
            let mapped = g.read_memory(0x2000_0010, &mut buf);
            let unmapped = g.read_memory(0x1000, &mut [0u8; 4]);
            (
                g.register(3),
                g.register(13),
                g.register(16),
                mapped.then_some(buf),
                unmapped,
                g.cycles(),
                g.instructions(),
                g.clock_hz(),
            )
        });
        assert_eq!(
            seen,
            (
                Some(0xdead),
                Some(0x2000_0800),
                None,
                Some([1, 2, 3, 4]),
                false,
                42,
                17,
                25_000_000
            )
        );
        assert_eq!(*uc.get_data(), 6);
        assert!(current_guest().is_none(), "the slot is cleared afterwards");
    }
}

//! A cortex-m-rt firmware written as embedded Rust users write it, for
//! every Cortex-M core: the cortex-m crate's DWT cycle counter (unlocked
//! first, as the STM32F7 needs: `DWT::unlock` is the usual first DWT call)
//! where the core has one (not ARMv6-M), a SysTick `#[exception]` handler
//! counting ticks, `wfi` in a loop waiting for them, `hprintln!` and
//! panic-semihosting.
//!
//! Four rounds, each an ARP kernel (section 1, loop index = the round),
//! wait until the tick count reaches 1, 2, 4 and 8. Inside each, the cycle
//! counter is read first and last: the test compares that span with the
//! section's cycles as sim-host records them. Every round runs the same
//! code (`measure_round`, never inlined).
#![no_std]
#![no_main]

use core::sync::atomic::{AtomicU32, Ordering};
use cortex_m::asm::wfi;
use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::Peripherals;
use cortex_m_rt::{entry, exception};
use cortex_m_semihosting::{debug, hprintln};
use panic_semihosting as _;

/// SysTick's reload value: an interrupt every RELOAD + 1 core cycles.
const RELOAD: u32 = 19_999;
/// The tick count each round waits for.
const ROUNDS: [u32; 4] = [1, 2, 4, 8];

/// SysTick interrupts taken (written by the handler only).
static TICKS: AtomicU32 = AtomicU32::new(0);

#[exception]
fn SysTick() {
    TICKS.store(TICKS.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

/// Sleeps until the handler has counted `ticks`, however many times the
/// core wakes up before that.
fn wait_for(ticks: u32) {
    while TICKS.load(Ordering::Relaxed) < ticks {
        wfi();
    }
}

/// The DWT cycle counter, where the core has one.
#[cfg(not(armv6m))]
mod counter {
    use cortex_m::peripheral::{DCB, DWT};

    pub fn enable(dcb: &mut DCB, dwt: &mut DWT) {
        dcb.enable_trace();
        DWT::unlock();
        dwt.enable_cycle_counter();
    }

    pub fn read() -> u32 {
        DWT::cycle_count()
    }
}

/// ARMv6-M has no cycle counter.
#[cfg(armv6m)]
mod counter {
    pub fn read() -> u32 {
        0
    }
}

/// One round: kernel 1 with loop index `round`, waiting until the tick
/// count reaches `until`; the cycle counter's span inside it.
#[inline(never)]
fn measure_round(round: usize, until: u32) -> u32 {
    arp_guest::kernel(1, 1, round as i32, || {
        let start = counter::read();
        wait_for(until);
        counter::read().wrapping_sub(start)
    })
}

#[entry]
fn main() -> ! {
    #[allow(unused_mut)] // ARMv6-M uses only the SysTick
    let mut p = Peripherals::take().unwrap();
    #[cfg(not(armv6m))]
    {
        counter::enable(&mut p.DCB, &mut p.DWT);
        hprintln!("DWT_LSR {:#x}", p.DWT.lsr.read());
    }
    arp_guest::start(1, 1, arp_guest::Mode::RecordAll);
    let mut syst = p.SYST;
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(RELOAD);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
    let mut spans = [0u32; ROUNDS.len()];
    for (round, &until) in ROUNDS.iter().enumerate() {
        spans[round] = measure_round(round, until);
    }
    syst.disable_interrupt();
    syst.disable_counter();
    arp_guest::finish();
    hprintln!("ticks {}", TICKS.load(Ordering::Relaxed));
    for (round, span) in spans.iter().enumerate() {
        if cfg!(armv6m) {
            hprintln!("round {} until tick {}", round, ROUNDS[round]);
        } else {
            hprintln!("round {} until tick {}: {} cycles", round, ROUNDS[round], span);
        }
    }
    debug::exit(debug::EXIT_SUCCESS);
    loop {}
}

//! The DWT cycle counter enabled without `DWT::unlock()`, as code written
//! for a Cortex-M3 or M4 does it. A Cortex-M7's DWT is locked at reset:
//! it ignores the enable, and the counter stays at 0 (sim-host says so
//! once, in the run's warnings).
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use panic_semihosting as _;

#[entry]
fn main() -> ! {
    #[cfg(not(armv6m))]
    {
        use cortex_m::peripheral::{Peripherals, DWT};
        let mut p = Peripherals::take().unwrap();
        p.DCB.enable_trace();
        p.DWT.enable_cycle_counter();
        let start = DWT::cycle_count();
        cortex_m::asm::delay(1000);
        let end = DWT::cycle_count();
        hprintln!("cycle counter from {} to {}", start, end);
    }
    debug::exit(debug::EXIT_SUCCESS);
    loop {}
}

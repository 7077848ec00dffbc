//! A firmware that panics: panic-semihosting prints the panic message on
//! the host's stdout and exits with EXIT_FAILURE.
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use panic_semihosting as _;

#[entry]
fn main() -> ! {
    hprintln!("about to panic");
    let limit = core::hint::black_box(3u32);
    panic!("the limit was {}", limit);
}

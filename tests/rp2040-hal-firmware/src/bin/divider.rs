//! The SIO hardware divider's timing (RP2040 datasheet 2.3.1.5): a
//! division started by a write to DIV_UDIVISOR, CSR.READY polled until
//! set, SysTick's current value read before and after. The poll starts
//! after K no-ops, or after pico-sdk's 8-cycle delay (four `b` to the
//! next instruction); the test derives each span by hand
//! (tests/tests/rp2040_hal.rs). Each case runs three times and the last
//! is printed: the first fills the XIP cache.
#![no_std]
#![no_main]

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m_semihosting::{debug, hprintln};
use panic_semihosting as _;
use rp2040_hal as hal;

#[link_section = ".boot2"]
#[used]
pub static BOOT2: [u8; 256] = rp2040_boot2::BOOT_LOADER_W25Q080;

/// One measurement: 1,000,003 / 7 with the instructions `$delay`
/// between the divisor's write and the first poll of DIV_CSR. Returns
/// (SysTick cycles between its two reads, quotient, remainder).
macro_rules! measure {
    ($($delay:literal)*) => {{
        let (start, end, quotient, remainder): (u32, u32, u32, u32);
        unsafe {
            core::arch::asm!(
                "str r2, [r0, #0x60]",   // DIV_UDIVIDEND
                "ldr r4, [r1]",          // SYST_CVR: the start
                "str r3, [r0, #0x64]",   // DIV_UDIVISOR: the division starts
                $( $delay, )*
                "2:",
                "ldr r5, [r0, #0x78]",   // DIV_CSR
                "lsrs r5, r5, #1",       // READY into C
                "bcc 2b",
                "ldr r5, [r1]",          // SYST_CVR: the end
                "ldr r3, [r0, #0x74]",   // DIV_REMAINDER
                "ldr r2, [r0, #0x70]",   // DIV_QUOTIENT, last
                in("r0") 0xd000_0000u32,
                in("r1") 0xe000_e018u32,
                inout("r2") 1_000_003u32 => quotient,
                inout("r3") 7u32 => remainder,
                out("r4") start,
                out("r5") end,
                options(nostack),
            );
        }
        (start.wrapping_sub(end) & 0x00ff_ffff, quotient, remainder)
    }};
}

/// K = 6 no-ops.
#[inline(never)]
fn six_nops() -> (u32, u32, u32) {
    measure!("nop" "nop" "nop" "nop" "nop" "nop")
}

/// K = 7 no-ops.
#[inline(never)]
fn seven_nops() -> (u32, u32, u32) {
    measure!("nop" "nop" "nop" "nop" "nop" "nop" "nop")
}

/// The delay pico-sdk's divider.S and rp2040-hal's intrinsics use: four
/// branches to the next instruction, 2 cycles each.
#[inline(never)]
fn four_branches() -> (u32, u32, u32) {
    measure!("b 3f" "3:" "b 3f" "3:" "b 3f" "3:" "b 3f" "3:")
}

#[hal::entry]
fn main() -> ! {
    let mut core = cortex_m::Peripherals::take().unwrap();
    core.SYST.set_clock_source(SystClkSource::Core);
    core.SYST.set_reload(0x00ff_ffff);
    core.SYST.clear_current();
    core.SYST.enable_counter();

    let mut last = [(0, 0, 0); 3];
    for _ in 0..core::hint::black_box(3) {
        last = [six_nops(), seven_nops(), four_branches()];
    }
    for (delay, (cycles, q, r)) in ["6 nops", "7 nops", "4 branches"].into_iter().zip(last) {
        hprintln!(
            "{}: {} cycles, quotient {} remainder {}",
            delay,
            cycles,
            q,
            r
        );
    }
    debug::exit(debug::EXIT_SUCCESS);
    loop {}
}

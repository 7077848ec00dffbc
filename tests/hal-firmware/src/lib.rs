//! What both firmwares do once their clocks are set: USART2 on PA2 (its
//! alternate function 7, as stm32f4xx-hal maps it) at 115200 baud through
//! `Serial::tx`, one line with `writeln!` naming the clocks the HAL
//! computed, a wait for the last frame to leave (`flush`: USART_SR.TC),
//! and the run's end through semihosting.
#![no_std]

use core::fmt::Write;
use cortex_m_semihosting::debug;
use stm32f4xx_hal::{pac, prelude::*, rcc::Rcc, serial::Serial};


/// Prints the line and ends the run.
pub fn report(gpioa: pac::GPIOA, usart2: pac::USART2, mut rcc: Rcc) -> ! {
    let gpioa = gpioa.split(&mut rcc);
    let mut tx = Serial::tx(usart2, gpioa.pa2, 115_200.bps(), &mut rcc).unwrap();
    let clocks = rcc.clocks;
    writeln!(
        tx,
        "stm32f4xx-hal: SYSCLK {} Hz, HCLK {} Hz, PCLK1 {} Hz, PCLK2 {} Hz",
        clocks.sysclk().raw(),
        clocks.hclk().raw(),
        clocks.pclk1().raw(),
        clocks.pclk2().raw()
    )
    .unwrap();
    stm32f4xx_hal::block!(embedded_hal_nb::serial::Write::flush(&mut tx)).unwrap();
    debug::exit(debug::EXIT_SUCCESS);
    loop {}
}

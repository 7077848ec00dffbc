//! stm32f4xx-hal's RCC `freeze` from the 16 MHz HSI alone to a 168 MHz
//! SYSCLK (no HSE: the PLL's input is the HSI), then the same line on
//! USART2 (`hal_firmware::report`).
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use panic_semihosting as _;
use stm32f4xx_hal::{pac, prelude::*, rcc::Config};

#[entry]
fn main() -> ! {
    let dp = pac::Peripherals::take().unwrap();
    let rcc = dp.RCC.freeze(Config::hsi().sysclk(168.MHz()));
    hal_firmware::report(dp.GPIOA, dp.USART2, rcc)
}

//! stm32f4xx-hal's RCC `freeze` from the board's 8 MHz HSE to a 168 MHz
//! SYSCLK (the HAL picks the PLL's M, N, P and Q, raises FLASH_ACR's
//! LATENCY, waits for HSERDY and PLLRDY and switches SW), then a line on
//! USART2 (`hal_firmware::report`).
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use panic_semihosting as _;
use stm32f4xx_hal::{pac, prelude::*, rcc::Config};

#[entry]
fn main() -> ! {
    let dp = pac::Peripherals::take().unwrap();
    let rcc = dp.RCC.freeze(Config::hse(8.MHz()).sysclk(168.MHz()));
    hal_firmware::report(dp.GPIOA, dp.USART2, rcc)
}

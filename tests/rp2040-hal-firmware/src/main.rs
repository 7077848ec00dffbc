//! rp2040-hal's clock set-up and UART as its users write them (the HAL's
//! uart example): `init_clocks_and_plls` from the Pico's 12 MHz crystal
//! (XOSC, PLL_SYS to 125 MHz, PLL_USB to 48 MHz, clk_ref and clk_sys
//! switched over), `Sio::new`, `Pins::new`, UART0 on GPIO0 (TX) and GPIO1
//! (RX) at 115200 8N1 through `UartPeripheral`, then lines naming the
//! clocks the HAL reports and divisions done at run time: the HAL's
//! intrinsics route 32-bit `/` and `%` through the SIO's hardware
//! divider. The run ends through semihosting once the UART has sent the
//! last frame.
#![no_std]
#![no_main]

use core::fmt::Write;
use cortex_m_semihosting::debug;
use embedded_hal::digital::OutputPin;
use fugit::RateExtU32;
use panic_semihosting as _;
use rp2040_hal::{
    self as hal,
    clocks::Clock,
    pac,
    uart::{DataBits, StopBits, UartConfig, UartPeripheral},
};

/// The second-stage boot for the Pico's W25Q080-class flash, where the
/// boot ROM reads it (memory.x's BOOT2).
#[link_section = ".boot2"]
#[used]
pub static BOOT2: [u8; 256] = rp2040_boot2::BOOT_LOADER_W25Q080;

/// The Pico's crystal.
const XTAL_FREQ_HZ: u32 = 12_000_000;

#[hal::entry]
fn main() -> ! {
    let mut pac = pac::Peripherals::take().unwrap();
    let mut watchdog = hal::Watchdog::new(pac.WATCHDOG);
    let clocks = hal::clocks::init_clocks_and_plls(
        XTAL_FREQ_HZ,
        pac.XOSC,
        pac.CLOCKS,
        pac.PLL_SYS,
        pac.PLL_USB,
        &mut pac.RESETS,
        &mut watchdog,
    )
    .ok()
    .unwrap();

    let sio = hal::Sio::new(pac.SIO);
    let pins = hal::gpio::Pins::new(
        pac.IO_BANK0,
        pac.PADS_BANK0,
        sio.gpio_bank0,
        &mut pac.RESETS,
    );
    // the Pico's LED, on as firmware shows it is alive
    let mut led = pins.gpio25.into_push_pull_output();
    led.set_high().unwrap();

    let uart_pins = (pins.gpio0.into_function(), pins.gpio1.into_function());
    let mut uart = UartPeripheral::new(pac.UART0, uart_pins, &mut pac.RESETS)
        .enable(
            UartConfig::new(115_200.Hz(), DataBits::Eight, None, StopBits::One),
            clocks.peripheral_clock.freq(),
        )
        .unwrap();

    writeln!(
        uart,
        "rp2040-hal: clk_sys {} Hz, clk_peri {} Hz, clk_usb {} Hz",
        clocks.system_clock.freq().to_Hz(),
        clocks.peripheral_clock.freq().to_Hz(),
        clocks.usb_clock.freq().to_Hz()
    )
    .unwrap();
    // operands the compiler cannot fold: the division happens at run time
    let (n, d) = core::hint::black_box((1_000_003u32, 7u32));
    let (sn, sd) = core::hint::black_box((-1_000_003i32, 7i32));
    writeln!(uart, "{n} / {d} = {} remainder {}", n / d, n % d).unwrap();
    writeln!(uart, "{sn} / {sd} = {} remainder {}", sn / sd, sn % sd).unwrap();
    let per_frame = clocks.system_clock.freq().to_Hz() / 11_520;
    writeln!(uart, "clk_sys cycles per 10-bit frame: {per_frame}").unwrap();

    // the last frame out of the shift register, then the end
    while uart.uart_is_busy() {}
    debug::exit(debug::EXIT_SUCCESS);
    loop {}
}

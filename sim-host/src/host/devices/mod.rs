//! Vendor blocks the host answers (issue 40): a board's clock tree (an
//! STM32's RCC and PWR, an RP2040's RESETS, XOSC, PLLs and CLOCKS) and
//! its UARTs, as the target file lists them (`[[devices]]`). Pure: no
//! Unicorn; `engine::devices` maps their pages and carries out what they
//! ask for (bytes to the console, warnings at the instruction, the core
//! clock changed).
//!
//! Every access is to a 32-bit word of a device's block (its address
//! aligned to 4): a narrower write carries a byte mask, a narrower read
//! takes its bytes from the word.
//! An offset the device does not model is a [`Refusal`] naming the
//! register, never a silent 0.

pub mod device;
pub mod registers;
pub mod rp2040_clocks;
pub mod rp2040_io;
pub mod rp2040_sio;
pub mod rp2350_clocks;
pub mod rp2_common;
pub mod stm32_gpio;
pub mod stm32_rcc;
pub mod uart;

pub use device::{lane, ClockTree, ClockView, Device, Effects, FixedClocks, Now, Refusal};

use std::ops::Range;

/// The clock tree a `[clocks]` table describes.
pub fn clock_tree(spec: &crate::model::devices::ClocksSpec) -> Box<dyn ClockTree> {
    use crate::model::devices::ClockKind;
    use stm32_rcc::{Family, Stm32Params, Stm32Rcc};
    let family = match (spec.kind, spec.rp2) {
        (ClockKind::Rp2040, Some(blocks)) => {
            return Box::new(rp2040_clocks::Rp2040Clocks::new(blocks));
        }
        (ClockKind::Rp2350, Some(blocks)) => {
            return Box::new(rp2350_clocks::Rp2350Clocks::new(blocks, spec.ticks));
        }
        (ClockKind::Stm32f7, _) => Family::F7,
        _ => Family::F4,
    };
    Box::new(Stm32Rcc::new(Stm32Params {
        family,
        rcc: spec.rcc,
        pwr: spec.pwr,
        hse_hz: spec.hse_hz,
    }))
}

/// The 4 KiB pages a target's clock tree, UARTs and GPIO ports are in,
/// ascending.
pub fn pages(target: &crate::model::target::Target) -> Vec<u64> {
    const PAGE: u64 = 0x1000;
    let mut blocks: Vec<Range<u64>> = target
        .clocks
        .as_ref()
        .map(|c| clock_tree(c).blocks())
        .unwrap_or_default();
    blocks.extend(
        target
            .uarts
            .iter()
            .map(|u| u.base..u.base + u.kind.block_bytes()),
    );
    blocks.extend((target.gpios.iter()).map(|g| g.base..g.base + g.kind.block_bytes()));
    let mut pages: Vec<u64> = blocks
        .iter()
        .flat_map(|b| (b.start / PAGE..b.end.div_ceil(PAGE)).map(|n| n * PAGE))
        .collect();
    pages.sort_unstable();
    pages.dedup();
    pages
}

/// The block a `[[gpio]]` entry describes: an STM32 port, or the
/// RP2040's SIO, IO_BANK0 or PADS_BANK0.
pub fn gpio(spec: &crate::model::devices::GpioSpec) -> Box<dyn Device> {
    use crate::model::devices::GpioKind;
    match spec.kind {
        GpioKind::Stm32f4 => stm32_gpio::build(spec),
        GpioKind::Rp2040Sio => rp2040_sio::build(spec),
        GpioKind::Rp2040IoBank0 | GpioKind::Rp2040PadsBank0 => rp2040_io::build(spec),
    }
}

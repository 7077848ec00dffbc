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

pub mod registers;
pub mod stm32_gpio;
pub mod stm32_rcc;
pub mod uart;

use std::ops::Range;

/// When an access happens.
#[derive(Debug, Clone, Copy, Default)]
pub struct Now {
    /// The core's cycle count at the accessing instruction.
    pub cycles: u64,
    /// Simulated time then (`model::clocks::ClockTimeline`).
    pub picos: u128,
}

/// What an access asks of the run beyond its answer.
#[derive(Debug, Default)]
pub struct Effects {
    /// Bytes a UART transmitted, for the console.
    pub console: Vec<u8>,
    /// Warnings, each citing the rule broken (the engine adds where).
    pub warnings: Vec<String>,
}

/// An access a device will not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

/// What a device sees of the board's clocks (the clock tree, if the
/// board has one; else every clock runs, at the core's frequency).
pub trait ClockView {
    /// A named clock's frequency ("pclk1", "clk_peri"), if it runs.
    fn clock_hz(&self, name: &str) -> Option<u64>;
    /// Bit `bit` of the clock tree's register at `addr`, if modelled.
    fn bit(&self, addr: u64, bit: u8) -> Option<bool>;
}

/// A register block answered by the host.
pub trait Device {
    /// The block's name ("RCC", "USART2").
    fn name(&self) -> &str;
    /// The address ranges it answers (a clock tree may have several
    /// blocks: RCC and PWR).
    fn blocks(&self) -> Vec<Range<u64>>;
    /// A read of the word at `addr` (aligned to 4).
    fn read(
        &mut self,
        addr: u64,
        now: Now,
        clocks: &dyn ClockView,
        fx: &mut Effects,
    ) -> Result<u32, Refusal>;
    /// A write of `value` to the bytes of the word at `addr` that `mask`
    /// selects.
    fn write(
        &mut self,
        addr: u64,
        value: u32,
        mask: u32,
        now: Now,
        clocks: &dyn ClockView,
        fx: &mut Effects,
    ) -> Result<(), Refusal>;
    /// Lines for the report (a UART's baud rate and bytes sent).
    fn summary(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A board's clock tree: a device that also says what the core runs at.
pub trait ClockTree: Device + ClockView {
    /// The core clock now (SYSCLK after the AHB prescaler, clk_sys).
    fn core_hz(&self) -> u64;
    /// What it runs from, for the report.
    fn core_source(&self) -> String;
    /// Makes any switch that became due by `now` (a switch asked for
    /// while its source was not ready happens when it is): returns the
    /// time it happened, if one did.
    fn settle(&mut self, now: Now) -> Option<u128>;
}

/// A board without a clock tree: every clock runs at the core's.
pub struct FixedClocks(pub u64);

impl ClockView for FixedClocks {
    fn clock_hz(&self, _name: &str) -> Option<u64> {
        Some(self.0)
    }
    fn bit(&self, _addr: u64, _bit: u8) -> Option<bool> {
        None
    }
}

/// The clock tree a `[clocks]` table describes.
pub fn clock_tree(spec: &crate::model::devices::ClocksSpec) -> Box<dyn ClockTree> {
    use crate::model::devices::ClockKind;
    use stm32_rcc::{Family, Stm32Params, Stm32Rcc};
    let family = match spec.kind {
        ClockKind::Stm32f4 => Family::F4,
        ClockKind::Stm32f7 => Family::F7,
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
    blocks.extend((target.gpios.iter()).map(|g| g.base..g.base + stm32_gpio::BLOCK_BYTES));
    let mut pages: Vec<u64> = blocks
        .iter()
        .flat_map(|b| (b.start / PAGE..b.end.div_ceil(PAGE)).map(|n| n * PAGE))
        .collect();
    pages.sort_unstable();
    pages.dedup();
    pages
}

/// The width of an access in bytes → the mask of its bytes within the
/// word, and the shift of its value.
pub fn lane(addr: u64, size: usize) -> (u32, u32) {
    let shift = ((addr & 3) * 8) as u32;
    let mask = match size {
        1 => 0xff,
        2 => 0xffff,
        _ => u32::MAX,
    };
    (mask << shift, shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_accesses_take_their_lane_of_the_word() {
        assert_eq!(lane(0x4000_0000, 4), (u32::MAX, 0));
        assert_eq!(lane(0x4000_0001, 1), (0xff00, 8));
        assert_eq!(lane(0x4000_0002, 2), (0xffff_0000, 16));
    }
}

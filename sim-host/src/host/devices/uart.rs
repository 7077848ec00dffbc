//! UARTs to the console (issue 40): ARM's CMSDK APB UART (MPS2), the
//! STM32F4 and STM32F7 USARTs and ARM's PL011 (RP2040, RP2350). A byte
//! the firmware transmits goes to the run's stdout at once; the status
//! bits say what the silicon's would, from the line's timing: each frame
//! takes its bits at the baud rate the firmware programmed (start bit,
//! data bits, parity, stop bits), the transmit holding register or FIFO
//! fills and drains on the simulated clock, so a firmware that polls
//! TXE, TXFULL or TXFF waits as long as on silicon.
//!
//! Reception is not modelled: the receive side reads empty. A UART whose
//! clock is off, or that is held in reset, ignores the access with a
//! warning citing its gate; a byte written while the transmitter is
//! disabled or full is lost with a warning, as on silicon.

use super::device::{ClockView, Device, Effects, Now, Refusal};
use super::registers::{held as reg, RegisterFile, RegisterSpec};
use crate::model::devices::{UartKind, UartSpec};
use std::collections::VecDeque;
use std::ops::Range;

const PICOS_PER_SECOND: u128 = 1_000_000_000_000;

/// The UART a `[[uart]]` entry describes.
pub fn build(spec: &UartSpec) -> Box<dyn Device> {
    let (specs, depth): (&'static [RegisterSpec], usize) = match spec.kind {
        UartKind::Cmsdk => (CMSDK, 1),
        UartKind::Stm32f4Usart => (STM32F4, 1),
        UartKind::Stm32f7Usart => (STM32F7, 1),
        // the FIFO when LCR_H.FEN is set (DDI 0183G 2.4.2: 32 deep)
        UartKind::Pl011 => (PL011, 32),
    };
    Box::new(Uart {
        spec: spec.clone(),
        regs: RegisterFile::new(&spec.name, spec.base, specs),
        line: VecDeque::new(),
        fifo_depth: depth,
        sent: 0,
        lost: 0,
        warned: [false; 4],
        baud: None,
    })
}

/// Why a warning was given (each given once per UART).
#[derive(Clone, Copy)]
enum Once {
    Gate = 0,
    Disabled = 1,
    Overrun = 2,
    NoBaud = 3,
}

struct Uart {
    spec: UartSpec,
    regs: RegisterFile,
    /// When each frame queued (being shifted out, then waiting) ends.
    line: VecDeque<u128>,
    fifo_depth: usize,
    sent: u64,
    lost: u64,
    warned: [bool; 4],
    /// The baud rate last used, and the divisor's text.
    baud: Option<(u64, String)>,
}

impl Uart {
    fn warn(&mut self, why: Once, fx: &mut Effects, message: String) {
        if !std::mem::replace(&mut self.warned[why as usize], true) {
            fx.warnings.push(format!("{}: {message}", self.spec.name));
        }
    }

    /// The clock-tree conditions that do not hold, as a warning's text.
    fn gate_failure(&self, clocks: &dyn ClockView) -> Option<String> {
        self.spec.gates.iter().find_map(|g| {
            let value = clocks.bit(g.register, g.bit)?;
            (value != g.set).then(|| {
                format!(
                    "accessed while bit {} of {:#010x} is {} ({}); the access is ignored",
                    g.bit,
                    g.register,
                    u8::from(value),
                    g.cite
                )
            })
        })
    }

    /// Frames whose last bit has gone by `now` leave the line.
    fn drain(&mut self, now: Now) {
        while self.line.front().is_some_and(|end| *end <= now.picos) {
            self.line.pop_front();
        }
    }

    /// Frames queued behind the one being shifted out.
    fn waiting(&self) -> usize {
        self.line.len().saturating_sub(1)
    }

    fn depth(&self) -> usize {
        match self.spec.kind {
            UartKind::Pl011 if self.regs.get(PL011_LCR_H).unwrap_or(0) & (1 << 4) == 0 => 1,
            _ => self.fifo_depth,
        }
    }

    /// The firmware writes a byte to transmit.
    fn transmit(&mut self, byte: u8, now: Now, clocks: &dyn ClockView, fx: &mut Effects) {
        if let Some(rule) = self.transmitter_off() {
            self.lost += 1;
            return self.warn(
                Once::Disabled,
                fx,
                format!("a byte written while {rule} is lost"),
            );
        }
        if self.waiting() >= self.depth() {
            self.lost += 1;
            return self.warn(
                Once::Overrun,
                fx,
                format!(
                    "a byte written while the transmit buffer is full ({}) is lost",
                    self.full_flag()
                ),
            );
        }
        let frame = self.frame_picos(clocks, fx);
        let start = self.line.back().copied().unwrap_or(0).max(now.picos);
        self.line.push_back(start + frame);
        self.sent += 1;
        fx.console.push(byte);
    }

    /// The enable bit that is off, if one is.
    fn transmitter_off(&self) -> Option<&'static str> {
        let r = |o| self.regs.get(o).unwrap_or(0);
        match self.spec.kind {
            UartKind::Cmsdk => (r(CMSDK_CTRL) & 1 == 0).then_some("CTRL.TXEN is 0 (DDI 0479C 4.3)"),
            UartKind::Stm32f4Usart => (r(F4_CR1) & (1 << 13 | 1 << 3) != (1 << 13 | 1 << 3))
                .then_some("USART_CR1.UE or TE is 0 (RM0090 30.6.4)"),
            UartKind::Stm32f7Usart => (r(F7_CR1) & (1 | 1 << 3) != (1 | 1 << 3))
                .then_some("USART_CR1.UE or TE is 0 (RM0385 34.8.1)"),
            UartKind::Pl011 => (r(PL011_CR) & (1 | 1 << 8) != (1 | 1 << 8))
                .then_some("UARTCR.UARTEN or TXE is 0 (DDI 0183G 3.3.8)"),
        }
    }

    fn full_flag(&self) -> &'static str {
        match self.spec.kind {
            UartKind::Cmsdk => "STATE.TXFULL",
            UartKind::Stm32f4Usart | UartKind::Stm32f7Usart => "TXE = 0",
            UartKind::Pl011 => "UARTFR.TXFF",
        }
    }

    /// One frame's duration at the programmed baud rate (0, with a
    /// warning, when no rate is programmed).
    fn frame_picos(&mut self, clocks: &dyn ClockView, fx: &mut Effects) -> u128 {
        let Some(clock) = clocks.clock_hz(&self.spec.clock) else {
            self.warn(
                Once::NoBaud,
                fx,
                format!("its clock {} does not run", self.spec.clock),
            );
            return 0;
        };
        let (bits_x2, baud_x64, divisor) = self.framing(clock);
        if baud_x64 == 0 {
            self.warn(
                Once::NoBaud,
                fx,
                format!("no baud rate is programmed ({divisor}): its frames take no time"),
            );
            return 0;
        }
        self.baud = Some(((baud_x64 / 64) as u64, divisor));
        // bits / baud seconds, with bits in halves and the baud rate x 64
        u128::from(bits_x2) * 32 * PICOS_PER_SECOND / baud_x64
    }

    /// (frame bits x 2, baud rate x 64, the divisor as firmware set it).
    fn framing(&self, clock: u64) -> (u32, u128, String) {
        let r = |o| self.regs.get(o).unwrap_or(0);
        let clock = u128::from(clock);
        match self.spec.kind {
            UartKind::Cmsdk => {
                // DDI 0479C 4.3: baud = PCLK / BAUDDIV, at least 16; 8N1
                let div = r(CMSDK_BAUDDIV);
                let baud = if div >= 16 {
                    clock * 64 / u128::from(div)
                } else {
                    0
                };
                (20, baud, format!("BAUDDIV {div}"))
            }
            UartKind::Stm32f4Usart => {
                let (cr1, brr) = (r(F4_CR1), r(F4_BRR));
                let data = if cr1 & (1 << 12) != 0 { 9 } else { 8 };
                let stop = stop_bits_x2(r(F4_CR2));
                stm32_framing(clock, brr, cr1 & (1 << 15) != 0, 2 + 2 * data + stop)
            }
            UartKind::Stm32f7Usart => {
                let (cr1, brr) = (r(F7_CR1), r(F7_BRR));
                let data = match (cr1 >> 28 & 1, cr1 >> 12 & 1) {
                    (0, 1) => 9,
                    (1, 0) => 7,
                    _ => 8,
                };
                let stop = stop_bits_x2(r(F7_CR2));
                stm32_framing(clock, brr, cr1 & (1 << 15) != 0, 2 + 2 * data + stop)
            }
            UartKind::Pl011 => {
                // DDI 0183G 3.3.6: divisor = UARTCLK / (16 x baud), IBRD.FBRD/64
                let (ibrd, fbrd, lcr) = (r(PL011_IBRD), r(PL011_FBRD) & 0x3f, r(PL011_LCR_H));
                let div_x64 = u128::from(ibrd) * 64 + u128::from(fbrd);
                let baud = if ibrd == 0 {
                    0
                } else {
                    clock * 64 * 64 / (16 * div_x64)
                };
                let data = 5 + (lcr >> 5 & 3);
                let parity = lcr >> 1 & 1;
                let stop = 1 + (lcr >> 3 & 1);
                let bits = 1 + data + parity + stop;
                (2 * bits, baud, format!("IBRD {ibrd}, FBRD {fbrd}"))
            }
        }
    }
}

/// CR2.STOP (RM0090 30.6.5, RM0385 34.8.2): 00 1, 01 0.5, 10 2, 11 1.5.
fn stop_bits_x2(cr2: u32) -> u32 {
    [2, 1, 4, 3][(cr2 >> 12 & 3) as usize]
}

/// RM0090 30.3.4 / RM0385 34.5.4: with OVER8 = 0 the baud rate is
/// fCK / BRR; with OVER8 = 1, fCK x 2 / USARTDIV, USARTDIV's low nibble
/// BRR[2:0] shifted left once.
fn stm32_framing(clock: u128, brr: u32, over8: bool, bits_x2: u32) -> (u32, u128, String) {
    let div = if over8 {
        u128::from((brr & 0xfff0) | ((brr & 7) << 1))
    } else {
        u128::from(brr & 0xffff)
    };
    let baud = match (div, over8) {
        (0, _) => 0,
        (d, false) => clock * 64 / d,
        (d, true) => clock * 2 * 64 / d,
    };
    (bits_x2, baud, format!("BRR {brr:#x}"))
}

impl Device for Uart {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn blocks(&self) -> Vec<Range<u64>> {
        let block = self.spec.base..self.spec.base + self.spec.kind.block_bytes();
        std::iter::once(block).collect()
    }

    fn read(
        &mut self,
        addr: u64,
        now: Now,
        clocks: &dyn ClockView,
        fx: &mut Effects,
    ) -> Result<u32, Refusal> {
        let offset = (addr - self.spec.base) as u32;
        if let Some(failure) = self.gate_failure(clocks) {
            self.warn(Once::Gate, fx, failure);
            return Ok(0);
        }
        self.drain(now);
        let value = self.regs.read(offset)?;
        Ok(self.status(offset).unwrap_or(value))
    }

    fn write(
        &mut self,
        addr: u64,
        value: u32,
        mask: u32,
        now: Now,
        clocks: &dyn ClockView,
        fx: &mut Effects,
    ) -> Result<(), Refusal> {
        let offset = (addr - self.spec.base) as u32;
        if let Some(failure) = self.gate_failure(clocks) {
            self.warn(Once::Gate, fx, failure);
            return Ok(());
        }
        self.drain(now);
        if offset == self.data_register() {
            self.regs.read(offset)?;
            self.transmit(value as u8, now, clocks, fx);
            return Ok(());
        }
        self.regs.write(offset, value, mask)?;
        if self.is_baud_register(offset) {
            // shown in the report with the rate it gives
            self.frame_picos(clocks, &mut Effects::default());
        }
        Ok(())
    }

    fn summary(&self) -> Vec<String> {
        if self.sent == 0 && self.lost == 0 && self.baud.is_none() {
            return Vec::new();
        }
        let rate = match &self.baud {
            Some((baud, divisor)) => format!(" at {baud} baud ({divisor})"),
            None => String::new(),
        };
        let lost = match self.lost {
            0 => String::new(),
            n => format!(", {n} lost"),
        };
        vec![format!("{} bytes sent{rate}{lost}", self.sent)]
    }
}

impl Uart {
    fn data_register(&self) -> u32 {
        match self.spec.kind {
            UartKind::Cmsdk => CMSDK_DATA,
            UartKind::Stm32f4Usart => F4_DR,
            UartKind::Stm32f7Usart => F7_TDR,
            UartKind::Pl011 => PL011_DR,
        }
    }

    fn is_baud_register(&self, offset: u32) -> bool {
        match self.spec.kind {
            UartKind::Cmsdk => offset == CMSDK_BAUDDIV,
            UartKind::Stm32f4Usart => offset == F4_BRR,
            UartKind::Stm32f7Usart => offset == F7_BRR,
            UartKind::Pl011 => {
                offset == PL011_IBRD || offset == PL011_FBRD || offset == PL011_LCR_H
            }
        }
    }

    /// A status register's value from the line, if `offset` is one.
    fn status(&self, offset: u32) -> Option<u32> {
        let (waiting, busy) = (self.waiting(), !self.line.is_empty());
        let full = waiting >= self.depth();
        match (self.spec.kind, offset) {
            // DDI 0479C 4.3: STATE bit 0 TX buffer full
            (UartKind::Cmsdk, CMSDK_STATE) => Some(u32::from(full)),
            // RM0090 30.6.1: SR bit 7 TXE, bit 6 TC
            (UartKind::Stm32f4Usart, F4_SR) => Some(stm32_txe_tc(waiting, busy)),
            // RM0385 34.8.8: ISR bit 7 TXE, 6 TC, 21 TEACK, 22 REACK
            (UartKind::Stm32f7Usart, F7_ISR) => {
                let cr1 = self.regs.get(F7_CR1).unwrap_or(0);
                let ue = cr1 & 1;
                let acks = (ue & (cr1 >> 3)) << 21 | (ue & (cr1 >> 2)) << 22;
                Some(stm32_txe_tc(waiting, busy) | (acks & (3 << 21)))
            }
            // DDI 0183G 3.3.3: FR bit 7 TXFE, 5 TXFF, 4 RXFE, 3 BUSY
            (UartKind::Pl011, PL011_FR) => Some(
                u32::from(waiting == 0) << 7 | u32::from(full) << 5 | 1 << 4 | u32::from(busy) << 3,
            ),
            (UartKind::Stm32f4Usart, F4_DR) | (UartKind::Pl011, PL011_DR) => Some(0),
            _ => None,
        }
    }
}

fn stm32_txe_tc(waiting: usize, busy: bool) -> u32 {
    u32::from(waiting == 0) << 7 | u32::from(!busy) << 6
}

const CMSDK_DATA: u32 = 0x00;
const CMSDK_STATE: u32 = 0x04;
const CMSDK_CTRL: u32 = 0x08;
const CMSDK_BAUDDIV: u32 = 0x10;
/// ARM DDI 0479C (Cortex-M System Design Kit TRM) 4.3, Table 4-5.
const CMSDK: &[RegisterSpec] = &[
    reg(CMSDK_DATA, "DATA", 0),
    reg(CMSDK_STATE, "STATE", 0),
    reg(CMSDK_CTRL, "CTRL", 0),
    reg(0x0c, "INTSTATUS", 0),
    reg(CMSDK_BAUDDIV, "BAUDDIV", 0),
    reg(0xfd0, "PID4", 0x04),
    reg(0xfe0, "PID0", 0x21),
    reg(0xfe4, "PID1", 0xb8),
    reg(0xfe8, "PID2", 0x1b),
    reg(0xfec, "PID3", 0x00),
    reg(0xff0, "CID0", 0x0d),
    reg(0xff4, "CID1", 0xf0),
    reg(0xff8, "CID2", 0x05),
    reg(0xffc, "CID3", 0xb1),
];

const F4_SR: u32 = 0x00;
const F4_DR: u32 = 0x04;
const F4_BRR: u32 = 0x08;
const F4_CR1: u32 = 0x0c;
const F4_CR2: u32 = 0x10;
/// RM0090 30.6 (USART register map, Table 149): SR resets to 0x00C0.
const STM32F4: &[RegisterSpec] = &[
    reg(F4_SR, "USART_SR", 0x00c0),
    reg(F4_DR, "USART_DR", 0),
    reg(F4_BRR, "USART_BRR", 0),
    reg(F4_CR1, "USART_CR1", 0),
    reg(F4_CR2, "USART_CR2", 0),
    reg(0x14, "USART_CR3", 0),
    reg(0x18, "USART_GTPR", 0),
];

const F7_CR1: u32 = 0x00;
const F7_CR2: u32 = 0x04;
const F7_BRR: u32 = 0x0c;
const F7_ISR: u32 = 0x1c;
const F7_TDR: u32 = 0x28;
/// RM0385 34.8 (USART register map, Table 219).
const STM32F7: &[RegisterSpec] = &[
    reg(F7_CR1, "USART_CR1", 0),
    reg(F7_CR2, "USART_CR2", 0),
    reg(0x08, "USART_CR3", 0),
    reg(F7_BRR, "USART_BRR", 0),
    reg(0x10, "USART_GTPR", 0),
    reg(0x14, "USART_RTOR", 0),
    reg(0x18, "USART_RQR", 0),
    reg(F7_ISR, "USART_ISR", 0x0200_00c0),
    reg(0x20, "USART_ICR", 0),
    reg(0x24, "USART_RDR", 0),
    reg(F7_TDR, "USART_TDR", 0),
];

const PL011_DR: u32 = 0x000;
const PL011_FR: u32 = 0x018;
const PL011_IBRD: u32 = 0x024;
const PL011_FBRD: u32 = 0x028;
const PL011_LCR_H: u32 = 0x02c;
const PL011_CR: u32 = 0x030;
/// ARM DDI 0183G (PrimeCell UART PL011 TRM r1p5) 3.2, Table 3-1: FR
/// resets to 0b1001_0000 (TXFE, RXFE), CR to 0x0300 (TXE, RXE), IFLS to
/// 0x12; the identification registers of r1p5.
const PL011: &[RegisterSpec] = &[
    reg(PL011_DR, "UARTDR", 0),
    reg(0x004, "UARTRSR", 0),
    reg(PL011_FR, "UARTFR", 0x90),
    reg(0x020, "UARTILPR", 0),
    reg(PL011_IBRD, "UARTIBRD", 0),
    reg(PL011_FBRD, "UARTFBRD", 0),
    reg(PL011_LCR_H, "UARTLCR_H", 0),
    reg(PL011_CR, "UARTCR", 0x0300),
    reg(0x034, "UARTIFLS", 0x12),
    reg(0x038, "UARTIMSC", 0),
    reg(0x03c, "UARTRIS", 0),
    reg(0x040, "UARTMIS", 0),
    reg(0x044, "UARTICR", 0),
    reg(0x048, "UARTDMACR", 0),
    reg(0xfe0, "UARTPeriphID0", 0x11),
    reg(0xfe4, "UARTPeriphID1", 0x10),
    reg(0xfe8, "UARTPeriphID2", 0x34),
    reg(0xfec, "UARTPeriphID3", 0x00),
    reg(0xff0, "UARTPCellID0", 0x0d),
    reg(0xff4, "UARTPCellID1", 0xf0),
    reg(0xff8, "UARTPCellID2", 0x05),
    reg(0xffc, "UARTPCellID3", 0xb1),
];

#[cfg(test)]
mod tests {
    use super::super::device::FixedClocks;
    use super::*;

    fn uart(kind: UartKind) -> Box<dyn Device> {
        build(&UartSpec {
            kind,
            name: "U".into(),
            base: 0x4000_4000,
            clock: "pclk".into(),
            gates: Vec::new(),
        })
    }

    fn at(picos: u128) -> Now {
        Now { cycles: 0, picos }
    }

    fn w(u: &mut dyn Device, offset: u64, value: u32, picos: u128, fx: &mut Effects) {
        u.write(
            0x4000_4000 + offset,
            value,
            u32::MAX,
            at(picos),
            &FixedClocks(42_000_000),
            fx,
        )
        .unwrap();
    }

    fn r(u: &mut dyn Device, offset: u64, picos: u128) -> u32 {
        let mut fx = Effects::default();
        u.read(
            0x4000_4000 + offset,
            at(picos),
            &FixedClocks(42_000_000),
            &mut fx,
        )
        .unwrap()
    }

    /// 115200 baud from PCLK1 42 MHz: BRR = 42e6 / 115200 = 364.58 ->
    /// 0x16d (364.5625 as 12.4); baud = 42e6 / 365 = 115068 (whole
    /// numbers: x64 / 64), so a 10-bit frame takes 10 / 115068.49 s =
    /// 86,904,761 ps (42e6 x 64 / 365 = 7,364,383 baud x 64; 20 x 32 x
    /// 1e12 / 7,364,383 = 86,904,765 ps, truncated).
    #[test]
    fn an_stm32f4_usart_sends_and_its_flags_follow_the_line() {
        let mut u = uart(UartKind::Stm32f4Usart);
        let mut fx = Effects::default();
        assert_eq!(r(&mut *u, 0, 0) & 0xc0, 0xc0, "TXE and TC at reset");
        w(&mut *u, 0x08, 0x16d, 0, &mut fx);
        w(&mut *u, 0x0c, 1 << 13 | 1 << 3, 0, &mut fx);
        w(&mut *u, 0x04, u32::from(b'A'), 0, &mut fx);
        assert_eq!(fx.console, b"A");
        let frame = 20 * 32 * PICOS_PER_SECOND / (42_000_000 * 64 / 365);
        // shifting out: TXE set (the holding register is empty), TC clear
        assert_eq!(r(&mut *u, 0, 1) & 0xc0, 0x80);
        w(&mut *u, 0x04, u32::from(b'B'), 1, &mut fx);
        assert_eq!(r(&mut *u, 0, 2) & 0xc0, 0x00, "B waits: TXE clear");
        assert_eq!(r(&mut *u, 0, frame) & 0xc0, 0x80, "A done, B shifting");
        assert_eq!(r(&mut *u, 0, 2 * frame) & 0xc0, 0xc0, "both done");
        assert!(fx.warnings.is_empty(), "{:?}", fx.warnings);
        assert_eq!(fx.console, b"AB");
    }

    #[test]
    fn a_byte_written_with_the_transmitter_off_is_lost_with_a_warning() {
        let mut u = uart(UartKind::Stm32f4Usart);
        let mut fx = Effects::default();
        w(&mut *u, 0x04, u32::from(b'A'), 0, &mut fx);
        assert!(fx.console.is_empty());
        assert!(
            fx.warnings[0].contains("RM0090 30.6.4"),
            "{:?}",
            fx.warnings
        );
    }

    #[test]
    fn a_pl011_fills_its_fifo_then_reports_txff() {
        let mut u = uart(UartKind::Pl011);
        let mut fx = Effects::default();
        // 115200 from 42 MHz: 42e6 / (16 x 115200) = 22.786 -> IBRD 22, FBRD 50
        w(&mut *u, 0x24, 22, 0, &mut fx);
        w(&mut *u, 0x28, 50, 0, &mut fx);
        w(&mut *u, 0x2c, 3 << 5 | 1 << 4, 0, &mut fx); // 8 bits, FIFO on
        w(&mut *u, 0x30, 1 | 1 << 8, 0, &mut fx);
        for b in 0..33u8 {
            w(&mut *u, 0x00, u32::from(b'a' + b % 26), 0, &mut fx);
        }
        assert_eq!(fx.console.len(), 33, "one shifting and 32 in the FIFO");
        let fr = r(&mut *u, 0x18, 0);
        assert_eq!(
            fr & (1 << 5 | 1 << 3 | 1 << 7),
            1 << 5 | 1 << 3,
            "TXFF, BUSY"
        );
        w(&mut *u, 0x00, u32::from(b'!'), 0, &mut fx);
        assert!(fx.warnings[0].contains("TXFF"), "{:?}", fx.warnings);
        assert_eq!(fx.console.len(), 33);
    }

    #[test]
    fn a_cmsdk_uart_reports_its_buffer_full_until_the_frame_is_out() {
        let mut u = uart(UartKind::Cmsdk);
        let mut fx = Effects::default();
        w(&mut *u, 0x10, 16, 0, &mut fx);
        w(&mut *u, 0x08, 1, 0, &mut fx);
        w(&mut *u, 0x00, u32::from(b'x'), 0, &mut fx);
        w(&mut *u, 0x00, u32::from(b'y'), 0, &mut fx);
        assert_eq!(r(&mut *u, 0x04, 0) & 1, 1, "y waits: TX buffer full");
        // 10 bits at 42e6 / 16 baud: 10 x 16 / 42e6 s = 3,809,523 ps
        assert_eq!(r(&mut *u, 0x04, 3_809_524) & 1, 0);
        assert_eq!(fx.console, b"xy");
    }

    #[test]
    fn an_unknown_register_is_refused_by_name() {
        let mut u = uart(UartKind::Pl011);
        let mut fx = Effects::default();
        let err = u
            .read(0x4000_4000 + 0x100, at(0), &FixedClocks(1), &mut fx)
            .unwrap_err();
        assert!(err.0.contains("U offset 0x100"), "{err:?}");
    }
}

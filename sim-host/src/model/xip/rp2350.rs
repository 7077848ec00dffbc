//! What the RP2350's XIP cache (kind `rp2350-xip`) adds to the shared
//! cache mechanics of `model::xip`: its XIP_CTRL bits, the cache
//! maintenance window, and the QMI's serial transfers with chaining.
//!
//! The rules, each from the RP2350 datasheet (RP-008373, as stored) as
//! the target file cites it:
//! - the windows are decoded on address bits 27:26: 0x10 cached, 0x14
//!   uncached, 0x18 cache maintenance (writes), 0x1c uncached and
//!   untranslated (4.4.1). The uncached windows never query the cache
//!   (XIP_CTRL.EN_SECURE description); the model neither looks up nor
//!   fills for them;
//! - the guest runs in machine mode, whose accesses are Secure: EN_SECURE
//!   switches the cache; with it clear, cached-window accesses "ignore the
//!   cache contents, and always access the QSPI interface" (the model:
//!   neither look-up nor fill);
//! - a line fill is a 64-bit QMI transfer, an uncached access one of its
//!   own size: 8, 16 or 32 bits (4.4.2). An instruction fetch that does
//!   not use the cache is taken as one 32-bit transfer per aligned word
//!   (`fetch_bytes`: Hazard3's fetch width, the target file cites it);
//! - a transfer costs `clkdiv x (head + bits / data_lines)` system clocks,
//!   `head` being the address, suffix and dummy clocks of the read format
//!   the boot code leaves (the target file derives it). A transfer that
//!   follows the previous one's last address, within the chip select's
//!   cooldown after it, is chained: only its data clocks (12.14.2.1,
//!   M0_TIMING.COOLDOWN), unless the previous one ended at a page break
//!   (M0_TIMING.PAGEBREAK: the chip select is released there). The time since the previous transfer is measured
//!   on the run's clock when each block is charged, the block's own cycles
//!   included; within a block the lines follow each other without a gap.
//!   Chip-select set-up, hold and the RX delay are not counted. These
//!   readings are the model's, not datasheet figures;
//! - maintenance: a write into the 0x18 window selects the operation by
//!   its address's 3 LSBs (4.4.1.1): invalidate by set/way (0x0; bit 13
//!   selects the way, bits 12:3 the set) and by address (0x2) are modelled;
//!   clean (0x1, 0x3) does nothing, as no line is ever dirty (the flash's
//!   windows are read only: a store stops the run, where the silicon
//!   downgrades it to a read that allocates, CTRL.WRITABLE_M0); pin (0x7)
//!   and the reserved codes stop the run, named;
//! - the datasheet's eviction is random (4.4.1.3); the model replaces the
//!   least recently used way of a set, preferring an invalid way, so that
//!   runs are identical (the model's choice, said in the target file).

/// XIP_CTRL bits (pico-sdk src/rp2350/hardware_regs/include/hardware/regs/xip.h).
pub const CTRL_EN_SECURE: u32 = 1 << 0;
pub const CTRL_POWER_DOWN: u32 = 1 << 3;
/// The bits XIP_CTRL holds (XIP_CTRL_BITS 0xffb).
pub const CTRL_BITS: u32 = 0xffb;
/// XIP_CTRL_EN_NONSECURE: the two enables POWER_DOWN clears.
const CTRL_ENABLES: u32 = 0b11;
/// The bits whose effect the model does not have: setting one stops the
/// run naming it (the others act on Non-secure accesses only, which a
/// machine-mode guest never makes, and are kept as written).
pub const CTRL_REFUSED: [(u32, &str); 5] = [
    (1 << 4, "NO_UNCACHED_SEC"),
    (1 << 6, "NO_UNTRANSLATED_SEC"),
    (1 << 9, "SPLIT_WAYS"),
    (1 << 10, "WRITABLE_M0"),
    (1 << 11, "WRITABLE_M1"),
];
/// STAT as the model reads it: FIFO_EMPTY (the streaming FIFO is never
/// used; XIP_STAT_RESET 0x2).
pub const STAT_VALUE: u32 = 0b010;
pub const STAT_OFFSET: u64 = 8;
/// The maintenance window's size: one 26-bit XIP address space.
pub const MAINTENANCE_BYTES: u64 = 1 << 26;

/// What the RP2350's kind adds to a validated `[xip]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Rp2350Spec {
    /// The cache maintenance window's address.
    pub maintenance: u64,
    /// The bytes of one instruction fetch that does not use the cache.
    pub fetch_bytes: u32,
    pub qmi: QmiTiming,
}

/// The QMI's read transfers, as the boot code sets them up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QmiTiming {
    pub clkdiv: u64,
    /// SCK cycles before the data: address, suffix, dummy.
    pub head: u64,
    pub data_lines: u64,
    /// System clocks the chip select stays asserted after a transfer.
    pub cooldown: u64,
    /// A burst ends at a multiple of this many bytes (0: never).
    pub pagebreak: u64,
}

/// The QMI's state: where and when the last transfer ended.
#[derive(Debug, Clone)]
pub struct Qmi {
    timing: QmiTiming,
    next: u64,
    idle_at: u64,
}

impl Qmi {
    pub fn new(timing: QmiTiming) -> Qmi {
        Qmi {
            timing,
            next: u64::MAX,
            idle_at: 0,
        }
    }

    /// A read of `bytes` at flash offset `offset`, starting at cycle
    /// `now`: its stall.
    pub fn transfer(&mut self, offset: u64, bytes: u64, now: u64) -> u32 {
        let t = &self.timing;
        let page_ended = t.pagebreak != 0 && self.next % t.pagebreak == 0;
        let chained =
            offset == self.next && !page_ended && now.saturating_sub(self.idle_at) <= t.cooldown;
        let head = if chained { 0 } else { t.head };
        let stall = t.clkdiv * (head + bytes * 8 / t.data_lines);
        self.next = offset + bytes;
        self.idle_at = now + stall;
        stall as u32
    }
}

/// A write to XIP_CTRL: the value kept, or the refused bit's name.
pub fn write_ctrl(value: u32) -> Result<u32, &'static str> {
    if let Some((_, name)) = CTRL_REFUSED.iter().find(|(bit, _)| value & bit != 0) {
        return Err(name);
    }
    let mut v = value & CTRL_BITS;
    if v & CTRL_POWER_DOWN != 0 {
        v &= !CTRL_ENABLES;
    }
    Ok(v)
}

/// A maintenance write at `offset` into the window, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Maintenance {
    /// Invalidate the line in `way` of `set`.
    InvalidateSetWay { set: u32, way: u32 },
    /// Invalidate flash line `line` if the cache holds it.
    InvalidateLine(u32),
    /// Clean: no line is ever dirty.
    Clean,
}

/// Decodes a maintenance write (datasheet 4.4.1.1): the refusal names
/// what the model does not have.
pub fn decode(offset: u64, line_bytes: u32, sets: u32, ways: u32) -> Result<Maintenance, String> {
    let line = offset / u64::from(line_bytes);
    match offset & 7 {
        0 => Ok(Maintenance::InvalidateSetWay {
            set: (line % u64::from(sets)) as u32,
            way: ((line / u64::from(sets)) % u64::from(ways)) as u32,
        }),
        1 | 3 => Ok(Maintenance::Clean),
        2 => Ok(Maintenance::InvalidateLine(line as u32)),
        7 => Err("pin (operation 0x7: pinned lines, cache-as-SRAM) is not modelled".into()),
        op => Err(format!("operation {op:#x} is reserved (datasheet 4.4.1.1)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// boot2_w25q080.S's: SCK = clk_sys / 2, 6 + 2 + 4 SCK before quad
    /// data, no page break.
    fn qmi() -> Qmi {
        Qmi::new(QmiTiming {
            clkdiv: 2,
            head: 12,
            data_lines: 4,
            cooldown: 65,
            pagebreak: 0,
        })
    }

    #[test]
    fn a_page_break_ends_the_burst() {
        let mut q = Qmi::new(QmiTiming {
            clkdiv: 3,
            head: 20,
            data_lines: 4,
            cooldown: 66,
            pagebreak: 1024,
        });
        // the line before the boundary: new (3 x 36), then chained (3 x 16)
        assert_eq!(q.transfer(1008, 8, 0), 108);
        assert_eq!(q.transfer(1016, 8, 108), 48);
        // it reached 1024: the next, though sequential, is new
        assert_eq!(q.transfer(1024, 8, 156), 108);
    }

    #[test]
    fn sequential_transfers_within_the_cooldown_chain() {
        let mut q = qmi();
        // a line: 2 x (12 + 16) = 56; the next line at once: 2 x 16
        assert_eq!(q.transfer(0, 8, 0), 56);
        assert_eq!(q.transfer(8, 8, 56), 32);
        // not sequential: a new transfer
        assert_eq!(q.transfer(32, 8, 88), 56);
        // sequential, but after the cooldown (65 cycles after 144)
        assert_eq!(q.transfer(40, 4, 144 + 66), 2 * (12 + 8));
        // a byte: 2 data clocks
        assert_eq!(q.transfer(44, 1, 250), 4);
    }

    #[test]
    fn ctrl_writes_keep_refuse_and_power_down() {
        assert_eq!(write_ctrl(0x83), Ok(0x83));
        assert_eq!(write_ctrl(0x83 | CTRL_POWER_DOWN), Ok(0x88));
        assert_eq!(write_ctrl(1 << 9), Err("SPLIT_WAYS"));
        assert_eq!(write_ctrl(1 << 10), Err("WRITABLE_M0"));
        assert_eq!(write_ctrl(0xffff_f000), Ok(0), "reserved bits dropped");
    }

    #[test]
    fn maintenance_addresses_decode_as_the_datasheet_says() {
        let d = |offset| decode(offset, 8, 1024, 2);
        // bit 13 the way, bits 12:3 the set
        assert_eq!(
            d(0x2000 | (5 << 3)),
            Ok(Maintenance::InvalidateSetWay { set: 5, way: 1 })
        );
        assert_eq!(d(0x1238 | 2), Ok(Maintenance::InvalidateLine(0x247)));
        assert_eq!(d(1), Ok(Maintenance::Clean));
        assert_eq!(d(3), Ok(Maintenance::Clean));
        assert!(d(7).unwrap_err().contains("pin"));
        assert!(d(5).unwrap_err().contains("reserved"));
    }
}

//! The instructions that put a core to sleep or wake it (ARMv7-M B1.5.18
//! "Wait For Event and Send Event", B1.5.19 "Wait For Interrupt"; the
//! RISC-V privileged specification 3.3.3 "Wait for Interrupt"), found in
//! a block's code when it is priced: WFI and WFE end a block in the
//! translation, and the core sleeps after them until something wakes it.

use super::target::Arch;

/// How a block's last instruction puts the core to sleep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sleep {
    /// WFI: until an exception (an interrupt) would preempt, ignoring
    /// PRIMASK (B1.5.19); RISC-V: until an interrupt is pending and
    /// enabled in `mie`, whatever `mstatus.MIE` (3.3.3).
    Interrupt,
    /// WFE: as WFI, or at once when the event register is set (B1.5.18).
    Event,
}

/// What the power instructions of a block ask: the sleep its last
/// instruction starts, and whether it executes SEV (which sets the event
/// register WFE consumes). Also whether its last instruction is RISC-V's
/// `mret` (3.3.2), after which a trap handler has returned (the RTOS
/// accounting's task switches: `engine::tasks`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PowerHints {
    pub sleep: Option<Sleep>,
    pub sends_event: bool,
    pub trap_return: bool,
}

/// RISC-V's `mret` (privileged spec 3.3.2).
const MRET: u32 = 0x3020_0073;

/// The hint one instruction's bytes encode (Thumb: WFI 0xBF30, WFE
/// 0xBF20, SEV 0xBF40 and their 32-bit forms 0xF3AF 0x8003/2/4, ARMv7-M
/// A7.7; RISC-V: WFI 0x10500073).
fn hint(arch: Arch, bytes: &[u8]) -> Option<(Option<Sleep>, bool)> {
    let half = |i: usize| {
        bytes
            .get(2 * i..2 * i + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    match arch {
        Arch::Arm => match (half(0)?, half(1)) {
            (0xBF30, _) | (0xF3AF, Some(0x8003)) => Some((Some(Sleep::Interrupt), false)),
            (0xBF20, _) | (0xF3AF, Some(0x8002)) => Some((Some(Sleep::Event), false)),
            (0xBF40, _) | (0xF3AF, Some(0x8004)) => Some((None, true)),
            _ => None,
        },
        Arch::Riscv => {
            let word = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
            (word == 0x1050_0073).then_some((Some(Sleep::Interrupt), false))
        }
    }
}

/// The hints of a block whose instructions are at `spans` (address,
/// size) of `code`, which starts at `start`.
pub fn block_hints(arch: Arch, code: &[u8], start: u64, spans: &[(u64, u8)]) -> PowerHints {
    let mut hints = PowerHints::default();
    for (i, (addr, size)) in spans.iter().enumerate() {
        let from = (addr - start) as usize;
        let Some(bytes) = code.get(from..from + usize::from(*size)) else {
            continue;
        };
        let last = i + 1 == spans.len();
        if arch == Arch::Riscv && bytes == MRET.to_le_bytes() {
            hints.trap_return = last;
        }
        let Some((sleep, sev)) = hint(arch, bytes) else {
            continue;
        };
        hints.sends_event |= sev;
        if last {
            hints.sleep = sleep;
        }
    }
    hints
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_encodings_of_the_manuals_are_found() {
        let wfi16 = [0x30, 0xbf];
        let wfe32 = [0xaf, 0xf3, 0x02, 0x80];
        let sev_then_wfe = [0x40, 0xbf, 0x20, 0xbf];
        assert_eq!(
            block_hints(Arch::Arm, &wfi16, 0x100, &[(0x100, 2)]).sleep,
            Some(Sleep::Interrupt)
        );
        assert_eq!(
            block_hints(Arch::Arm, &wfe32, 0x100, &[(0x100, 4)]).sleep,
            Some(Sleep::Event)
        );
        let both = block_hints(Arch::Arm, &sev_then_wfe, 0, &[(0, 2), (2, 2)]);
        assert_eq!(
            both,
            PowerHints {
                sleep: Some(Sleep::Event),
                sends_event: true,
                trap_return: false
            }
        );
        // a WFI that is not last does not end the block: no sleep after it
        let nop = [0x30, 0xbf, 0x00, 0xbf];
        assert_eq!(
            block_hints(Arch::Arm, &nop, 0, &[(0, 2), (2, 2)]).sleep,
            None
        );
        let wfi = 0x1050_0073u32.to_le_bytes();
        assert_eq!(
            block_hints(Arch::Riscv, &wfi, 0, &[(0, 4)]).sleep,
            Some(Sleep::Interrupt)
        );
        assert_eq!(
            block_hints(Arch::Arm, &[0, 0], 0, &[(0, 2)]),
            PowerHints::default()
        );
        let mret = 0x3020_0073u32.to_le_bytes();
        assert!(block_hints(Arch::Riscv, &mret, 0, &[(0, 4)]).trap_return);
    }
}

//! Which bits of a peripheral register a polling loop waits on, from the
//! loop's instructions as capstone prints them: the test that follows the
//! load (`tst r3, #0x20000`, `ands`, `lsls` then `bmi`, `ubfx`, RISC-V's
//! `andi`, `slli` then `bltz`), the loaded value followed through shifts
//! and copies. A mask in a register (Thumb-1's `tst r2, r3`, often set
//! before the loop's block) is the register's value at the load, unless
//! the block writes it after the load. Anything it does not recognise
//! gives `None`: the warning then lists the register's fields instead of
//! guessing.

use crate::model::decode::register_number;
use crate::model::target::Arch;
use std::collections::{HashMap, HashSet};

/// Loads of several registers.
const SEVERAL: [&str; 3] = ["ldm", "pop", "ldrd"];

/// The loaded value's bits a register holds: its bit `i` is the loaded
/// value's bit `i + shift`, for the loaded bits in `present`.
#[derive(Debug, Clone, Copy)]
struct Tracked {
    shift: i64,
    present: u64,
}

impl Tracked {
    /// The loaded value's bits behind the register's bits `mask`.
    fn loaded(&self, mask: u64) -> u64 {
        let mut out = 0;
        for i in (0..32).filter(|i| (mask >> i) & 1 == 1) {
            let j = i + self.shift;
            if (0..64).contains(&j) && (self.present >> j) & 1 == 1 {
                out |= 1 << j;
            }
        }
        out
    }

    fn shifted(&self, by: i64) -> Tracked {
        Tracked {
            shift: self.shift + by,
            present: self.present,
        }
    }
}

/// What the last flag-setting instruction on the loaded value left: its
/// result (Z and N) and the loaded bit the carry holds.
#[derive(Debug, Clone, Copy)]
struct Flags {
    result: Tracked,
    carry: Option<u64>,
}

/// The loop's state from the load on.
struct Walk<'a> {
    arch: Arch,
    live: HashMap<String, Tracked>,
    /// Registers set to a constant after the load (`movs r1, #2`, `li`).
    consts: HashMap<String, u64>,
    /// Registers written after the load (their value at it is stale).
    written: HashSet<String>,
    /// A core register's value at the load, by number.
    at_load: &'a dyn Fn(u8) -> Option<u64>,
    flags: Option<Flags>,
}

/// The bits of the value loaded by instruction `load` of `insns` (a
/// polling block as (mnemonic, operands) pairs) that the block tests, as
/// a mask of the loaded value (bit 0: the loaded address's bit 0).
/// `at_load` gives a core register's value as the load runs.
pub fn polled_bits(
    arch: Arch,
    insns: &[(String, String)],
    load: usize,
    at_load: &dyn Fn(u8) -> Option<u64>,
) -> Option<u64> {
    let (mnemonic, operands) = insns.get(load)?;
    // a load of several registers: which one holds the word is not followed
    if SEVERAL.iter().any(|m| mnemonic.starts_with(m)) {
        return None;
    }
    let ops = operands_of(operands);
    let destination = ops.first()?.clone();
    let mut walk = Walk {
        arch,
        live: HashMap::new(),
        consts: HashMap::new(),
        written: HashSet::from([destination.clone()]),
        at_load,
        flags: None,
    };
    let present = loaded_width(base(mnemonic));
    walk.live.insert(destination, Tracked { shift: 0, present });
    for (m, o) in &insns[load + 1..] {
        let ops = operands_of(o);
        if let Some(found) = walk.step(base(m), &ops) {
            return (found != 0).then_some(found);
        }
        if walk.live.is_empty() {
            return None;
        }
    }
    None
}

/// A mnemonic without its width qualifier (`tst.w`, `c.andi`).
fn base(mnemonic: &str) -> &str {
    let m = mnemonic.strip_prefix("c.").unwrap_or(mnemonic);
    m.strip_suffix(".w")
        .or_else(|| m.strip_suffix(".n"))
        .unwrap_or(m)
}

/// The bits a load of this kind brings (byte, halfword, word).
fn loaded_width(mnemonic: &str) -> u64 {
    match mnemonic {
        "ldrb" | "ldrsb" | "lb" | "lbu" => 0xff,
        "ldrh" | "ldrsh" | "lh" | "lhu" => 0xffff,
        _ => 0xffff_ffff,
    }
}

/// Operands split at the top-level commas (`r3, [r2, #4]`).
fn operands_of(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut current) = (0i32, String::new());
    for c in text.chars() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(current.trim().to_owned());
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        out.push(current.trim().to_owned());
    }
    out
}

/// An immediate operand (`#0x20000`, `#2`, `-1`, `0x80`), as 32 bits.
fn immediate(op: &str) -> Option<u64> {
    let text = op.strip_prefix('#').unwrap_or(op);
    let (negative, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text),
    };
    let value = match digits.strip_prefix("0x") {
        Some(hex) => i64::from_str_radix(hex, 16).ok()?,
        None => digits.parse::<i64>().ok()?,
    };
    let value = if negative { -value } else { value };
    Some(value as u64 & 0xffff_ffff)
}

/// A mask of the low `width` bits from `lsb`.
fn bit_range(lsb: u64, width: u64) -> u64 {
    let ones = 1u64.checked_shl(width as u32).map_or(u64::MAX, |b| b - 1);
    ones.checked_shl(lsb as u32).unwrap_or(0)
}

impl Walk<'_> {
    /// A constant operand: an immediate, a register set to one after the
    /// load, or one the block has not written since the load.
    fn constant(&self, op: &str) -> Option<u64> {
        if let Some(v) = immediate(op).or_else(|| self.consts.get(op).copied()) {
            return Some(v);
        }
        if self.written.contains(op) {
            return None;
        }
        let n = register_number(self.arch, op)?;
        (self.at_load)(n).map(|v| v & 0xffff_ffff)
    }

    fn note_constant(&mut self, m: &str, ops: &[String]) {
        let Some(dest) = ops.first().filter(|_| writes_first(m)) else {
            return;
        };
        let value = match (m, ops.len()) {
            ("mov" | "movs" | "movw" | "li", 2) => immediate(&ops[1]),
            ("lui", 2) => immediate(&ops[1]).map(|v| (v << 12) & 0xffff_ffff),
            _ => None,
        };
        self.written.insert(dest.clone());
        match value {
            Some(v) => {
                self.consts.insert(dest.clone(), v);
            }
            None => {
                self.consts.remove(dest);
            }
        }
    }

    /// One instruction after the load: `Some(bits)` when it is the test.
    fn step(&mut self, m: &str, ops: &[String]) -> Option<u64> {
        match self.arch {
            Arch::Arm => self.arm(m, ops),
            Arch::Riscv => self.riscv(m, ops),
        }
    }

    /// The two source operands of `op d, a, b` or Thumb's `op d, b` (d is
    /// also the first source).
    fn sources(ops: &[String]) -> Option<(&str, &str)> {
        match ops {
            [_, a, b] => Some((a, b)),
            [d, b] => Some((d, b)),
            _ => None,
        }
    }

    /// `a AND b` where one side holds the loaded value and the other a
    /// constant: the bits tested.
    fn masked(&self, a: &str, b: &str) -> Option<u64> {
        let (value, mask) = match (self.live.get(a), self.live.get(b)) {
            (Some(t), None) => (t, self.constant(b)?),
            (None, Some(t)) => (t, self.constant(a)?),
            _ => return None,
        };
        Some(value.loaded(mask))
    }

    fn arm(&mut self, m: &str, ops: &[String]) -> Option<u64> {
        let all = 0xffff_ffff;
        match m {
            "tst" | "and" | "ands" | "bic" | "bics" => {
                let (a, b) = Self::sources(ops)?;
                if let Some(bits) = self.masked(a, b) {
                    return Some(bits);
                }
            }
            "ubfx" | "sbfx" if ops.len() == 4 => {
                if let Some(t) = self.live.get(&ops[1]) {
                    let lsb = immediate(&ops[2])?;
                    let width = immediate(&ops[3])?;
                    return Some(t.loaded(bit_range(lsb, width)));
                }
            }
            "lsl" | "lsls" | "lsr" | "lsrs" => {
                let (a, b) = Self::sources(ops)?;
                if let (Some(t), Some(k)) = (self.live.get(a).copied(), immediate(b)) {
                    let k = k as i64;
                    let left = m.starts_with("lsl");
                    let (out, carry) = if left {
                        (t.shifted(-k), 32 - k)
                    } else {
                        (t.shifted(k), k - 1)
                    };
                    self.set(&ops[0], Some(out));
                    if m.ends_with('s') {
                        let carry = (k > 0).then(|| t.loaded(1 << carry.clamp(0, 31)));
                        self.flags = Some(Flags { result: out, carry });
                    }
                    return None;
                }
            }
            "mov" | "movs" if ops.len() == 2 => {
                let copied = self.live.get(&ops[1]).copied();
                if let (Some(t), true) = (copied, m == "movs") {
                    self.flags = Some(Flags {
                        result: t,
                        carry: None,
                    });
                }
                self.set(&ops[0], copied);
                self.note_constant(m, ops);
                return None;
            }
            "cmp" | "cmn" | "teq" => {
                if let Some(t) = ops.first().and_then(|r| self.live.get(r)) {
                    return Some(t.loaded(all));
                }
            }
            "cbz" | "cbnz" => {
                if let Some(t) = ops.first().and_then(|r| self.live.get(r)) {
                    return Some(t.loaded(all));
                }
            }
            _ if is_arm_branch(m) => return self.branch_on_flags(&m[1..]),
            _ => {}
        }
        self.written(m, ops);
        None
    }

    /// A conditional branch on the flags the loaded value set.
    fn branch_on_flags(&self, condition: &str) -> Option<u64> {
        let flags = self.flags?;
        match condition {
            "mi" | "pl" => Some(flags.result.loaded(1 << 31)),
            "eq" | "ne" => Some(flags.result.loaded(0xffff_ffff)),
            "cs" | "cc" | "hs" | "lo" => flags.carry,
            _ => None,
        }
    }

    fn riscv(&mut self, m: &str, ops: &[String]) -> Option<u64> {
        let all = 0xffff_ffff;
        let first = ops.first().and_then(|r| self.live.get(r)).copied();
        match m {
            "andi" | "and" => {
                let (a, b) = Self::sources(ops)?;
                if let Some(bits) = self.masked(a, b) {
                    return Some(bits);
                }
            }
            "slli" | "srli" | "srai" => {
                let (a, b) = Self::sources(ops)?;
                if let (Some(t), Some(k)) = (self.live.get(a).copied(), immediate(b)) {
                    let k = k as i64;
                    let by = if m == "slli" { -k } else { k };
                    self.set(&ops[0], Some(t.shifted(by)));
                    return None;
                }
            }
            "mv" if ops.len() == 2 => {
                let copied = self.live.get(&ops[1]).copied();
                self.set(&ops[0], copied);
                return None;
            }
            "bltz" | "bgez" => return first.map(|t| t.loaded(1 << 31)),
            "beqz" | "bnez" | "blez" | "bgtz" | "seqz" | "snez" => {
                return first.map(|t| t.loaded(all))
            }
            "beq" | "bne" | "blt" | "bge" | "bltu" | "bgeu" => {
                let second = ops.get(1).and_then(|r| self.live.get(r)).copied();
                return first.or(second).map(|t| t.loaded(all));
            }
            _ => {}
        }
        self.written(m, ops);
        None
    }

    /// Register `dest` now holds `value` (or no longer the loaded value).
    fn set(&mut self, dest: &str, value: Option<Tracked>) {
        self.written.insert(dest.to_owned());
        self.consts.remove(dest);
        match value {
            Some(t) => {
                self.live.insert(dest.to_owned(), t);
            }
            None => {
                self.live.remove(dest);
            }
        }
    }

    /// Any other instruction: its destination no longer holds the loaded
    /// value, and a flag-setting one replaces the flags.
    fn written(&mut self, m: &str, ops: &[String]) {
        if let (true, Some(dest)) = (writes_first(m), ops.first()) {
            self.live.remove(dest);
            self.consts.remove(dest);
            self.written.insert(dest.clone());
        }
        let sets_flags = self.arch == Arch::Arm
            && (m.ends_with('s') || matches!(m, "cmp" | "cmn" | "tst" | "teq"))
            && !is_arm_branch(m);
        if sets_flags {
            self.flags = None;
        }
    }
}

/// Whether the instruction writes its first operand (not a store, a
/// compare or a branch).
fn writes_first(m: &str) -> bool {
    !matches!(
        m,
        "sw" | "sb" | "sh" | "cmp" | "cmn" | "tst" | "teq" | "b" | "cbz" | "cbnz"
    ) && !m.starts_with("st")
        && !m.starts_with("it")
        && !is_arm_branch(m)
}

/// `b<cond>` (not `b`, `bl`, `bx`, `blx`, `bic`).
fn is_arm_branch(m: &str) -> bool {
    const CONDITIONS: [&str; 14] = [
        "eq", "ne", "cs", "cc", "hs", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt",
    ];
    m.strip_prefix('b')
        .is_some_and(|c| CONDITIONS.contains(&c) || c == "gt" || c == "le")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(lines: &[&str]) -> Vec<(String, String)> {
        lines
            .iter()
            .map(|l| {
                let (m, o) = l.split_once(' ').unwrap_or((l, ""));
                (m.to_owned(), o.to_owned())
            })
            .collect()
    }

    fn bits(arch: Arch, lines: &[&str], load: usize) -> Option<u64> {
        // r1 (x11, a1) holds 0x40 as the load runs, no other is known
        let at_load = |n: u8| (n == 1 || n == 11).then_some(0x40);
        polled_bits(arch, &block(lines), load, &at_load)
    }

    #[test]
    fn thumb2_tests_by_tst_and_ubfx_and_shifts() {
        let arm = Arch::Arm;
        // while (!(RCC->CR & RCC_CR_HSERDY)) (bit 17)
        let tst = ["ldr r3, [r2]", "tst.w r3, #0x20000", "beq #0x100"];
        assert_eq!(bits(arm, &tst, 0), Some(1 << 17));
        let ands = [
            "ldr.w r3, [r2, #4]",
            "ands r3, r3, #2",
            "cmp r3, #0",
            "beq #0x100",
        ];
        assert_eq!(bits(arm, &ands, 0), Some(2));
        let ubfx = [
            "ldr r3, [r2]",
            "ubfx r3, r3, #0x19, #1",
            "cmp r3, #0",
            "beq #0",
        ];
        assert_eq!(bits(arm, &ubfx, 0), Some(1 << 25));
        // GCC's test of bit 25 by a shift into N: lsls #6, bpl
        let lsls = ["ldr r3, [r2]", "lsls r3, r3, #6", "bpl #0x100"];
        assert_eq!(bits(arm, &lsls, 0), Some(1 << 25));
        // into the carry: lsls #15 then bcc tests bit 17
        let carry = ["ldr r3, [r2]", "lsls r3, r3, #0xf", "bcc #0x100"];
        assert_eq!(bits(arm, &carry, 0), Some(1 << 17));
        let lsrs = ["ldr r3, [r2]", "lsrs r3, r3, #2", "bcc #0x100"];
        assert_eq!(bits(arm, &lsrs, 0), Some(1 << 1));
        // SWS (bits 2-3) compared whole after a shift and a mask
        let sws = [
            "ldr r3, [r2, #8]",
            "lsrs r3, r3, #2",
            "and r3, r3, #3",
            "cmp r3, #2",
            "bne #0",
        ];
        assert_eq!(bits(arm, &sws, 0), Some(0b1100));
    }

    #[test]
    fn thumb1_masks_in_registers_and_whole_compares() {
        let arm = Arch::Arm;
        // the mask set before the loop's block: its value at the load
        let tst = ["ldr r3, [r1]", "tst r2, r3", "beq #0"];
        assert_eq!(bits(arm, &tst, 0), None, "r2 unknown");
        let tst = ["ldr r3, [r2]", "tst r1, r3", "beq #0"];
        assert_eq!(bits(arm, &tst, 0), Some(0x40));
        // a mask set in the block after the load
        let tst = ["ldr r3, [r2]", "movs r1, #0x80", "tst r3, r1", "beq #0"];
        assert_eq!(bits(arm, &tst, 0), Some(0x80));
        let ands = ["ldr r3, [r2]", "movs r1, #2", "ands r1, r3", "beq #0"];
        assert_eq!(bits(arm, &ands, 0), Some(2));
        // a byte load compared whole
        let cmp = ["ldrb r3, [r2, #1]", "cmp r3, #5", "bne #0"];
        assert_eq!(bits(arm, &cmp, 0), Some(0xff));
        let cbz = ["ldr r3, [r2]", "cbz r3, #0"];
        assert_eq!(bits(arm, &cbz, 0), Some(0xffff_ffff));
    }

    #[test]
    fn riscv_tests_by_andi_and_sign() {
        let rv = Arch::Riscv;
        let andi = ["lw a5, 0x18(a4)", "andi a5, a5, 0x80", "beqz a5, -8"];
        assert_eq!(bits(rv, &andi, 0), Some(0x80));
        let compressed = ["c.lw a5, 0x18(a4)", "c.andi a5, 0x80", "c.beqz a5, -8"];
        assert_eq!(bits(rv, &compressed, 0), Some(0x80));
        let sign = ["lw a5, 0(a4)", "slli a5, a5, 0x18", "bgez a5, -8"];
        assert_eq!(bits(rv, &sign, 0), Some(1 << 7));
        // a mask register's value at the load (a1 is x11)
        let and = ["lw a5, 0(a4)", "and a5, a5, a1", "beqz a5, -8"];
        assert_eq!(bits(rv, &and, 0), Some(0x40));
    }

    #[test]
    fn an_unknown_test_is_none() {
        let arm = Arch::Arm;
        // the loaded register overwritten before any test
        let lost = ["ldr r3, [r2]", "adds r3, r3, r1", "beq #0"];
        assert_eq!(bits(arm, &lost, 0), None);
        // a mask register the block overwrites after the load with what
        // it cannot follow
        let unknown = ["ldr r3, [r2]", "adds r1, r1, r4", "tst r3, r1", "beq #0"];
        assert_eq!(bits(arm, &unknown, 0), None);
        // a test of bits a byte load does not bring
        let outside = ["ldrb r3, [r2]", "tst.w r3, #0x100", "beq #0"];
        assert_eq!(bits(arm, &outside, 0), None);
        assert_eq!(bits(arm, &[], 0), None);
        let ldm = ["ldm r2, {r3, r4}", "tst.w r3, #0x20000", "beq #0"];
        assert_eq!(bits(arm, &ldm, 0), None);
    }
}

//! Decoding machine code into the cycle model's [`Insn`]s with capstone.
//!
//! Classification is by capstone instruction id and operands, never by
//! capstone's instruction groups: Capstone 5 tags neither `pop {.., pc}` nor
//! PC-writing loads as jumps on ARM, and tags every RISC-V `jal`/`jalr` as a
//! call, even `j` and `ret` (see ARCHITECTURE.md, "Cycle model").

use crate::model::cycles::{arm_s, DynamicOperands, Insn, RegMask, ARM_FLAGS, ARM_FPSCR};
use crate::model::predictor::BranchKind;
use crate::model::target::{Arch, InsnClass};
use capstone::arch::arm::{ArmCC, ArmInsn, ArmOperandType, ArmShift};
use capstone::arch::riscv::{RiscVInsn, RiscVOperand};
use capstone::arch::{
    self, ArchDetail, ArchOperand, BuildsCapstone, BuildsCapstoneExtraMode, DetailsArchInsn,
};
use capstone::{Capstone, RegAccessType, RegId};
use std::collections::HashMap;

#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("capstone: {0}")]
    Capstone(#[from] capstone::Error),
}

/// A decoder for one architecture, with capstone's register ids mapped to
/// architectural register numbers.
pub struct Decoder {
    arch: Arch,
    cs: Capstone,
    reg_numbers: HashMap<u16, u8>,
    /// Every register capstone names, as a mask: core registers, and on
    /// Arm the floating-point registers (s<n> one bit, d<n> two).
    reg_masks: HashMap<u16, RegMask>,
}

const ARM_PC: u8 = 15;

/// Architectural number of a register by capstone's name for it.
/// A decimal or `0x` hexadecimal immediate of capstone's text.
fn parse_immediate(text: &str) -> Option<i64> {
    match text.strip_prefix("0x") {
        Some(hex) => i64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

pub fn register_number(arch: Arch, name: &str) -> Option<u8> {
    match arch {
        Arch::Arm => match name {
            "sb" => Some(9),
            "sl" => Some(10),
            "fp" => Some(11),
            "ip" => Some(12),
            "sp" => Some(13),
            "lr" => Some(14),
            "pc" => Some(15),
            _ => name.strip_prefix('r')?.parse().ok().filter(|n| *n < 16),
        },
        Arch::Riscv => {
            const ABI: [&str; 32] = [
                "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2",
                "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9",
                "s10", "s11", "t3", "t4", "t5", "t6",
            ];
            if name == "fp" {
                return Some(8);
            }
            ABI.iter()
                .position(|n| *n == name)
                .map(|i| i as u8)
                .or_else(|| name.strip_prefix('x')?.parse().ok().filter(|n| *n < 32))
        }
    }
}

/// The mask of an Arm floating-point register by capstone's name
/// (`s0`..`s31`, `d0`..`d15`).
fn fp_register_mask(name: &str) -> Option<RegMask> {
    let (kind, n) = name.split_at(1);
    let n: u32 = n.parse().ok()?;
    match kind {
        "s" if n < 32 => Some(arm_s(n)),
        "d" if n < 16 => Some(arm_s(2 * n) | arm_s(2 * n + 1)),
        _ => None,
    }
}

/// A capstone instance with details for `arch`: Thumb with M-profile, or
/// RV32 with compressed instructions.
pub fn capstone_for(arch: Arch) -> Result<Capstone, capstone::Error> {
    match arch {
        Arch::Arm => Capstone::new()
            .arm()
            .mode(arch::arm::ArchMode::Thumb)
            .extra_mode(std::iter::once(arch::arm::ArchExtraMode::MClass))
            .detail(true)
            .build(),
        Arch::Riscv => Capstone::new()
            .riscv()
            .mode(arch::riscv::ArchMode::RiscV32)
            .extra_mode(std::iter::once(arch::riscv::ArchExtraMode::RiscVC))
            .detail(true)
            .build(),
    }
}

impl Decoder {
    pub fn new(arch: Arch) -> Result<Decoder, DecodeError> {
        let cs = capstone_for(arch)?;
        let mut reg_numbers = HashMap::new();
        let mut reg_masks = HashMap::new();
        for id in 1..400u16 {
            if let Some(name) = cs.reg_name(RegId(id)) {
                if let Some(n) = register_number(arch, &name) {
                    reg_numbers.insert(id, n);
                    reg_masks.insert(id, 1 << n);
                } else if let Some(m) = (arch == Arch::Arm)
                    .then(|| fp_register_mask(&name))
                    .flatten()
                {
                    reg_masks.insert(id, m);
                }
            }
        }
        Ok(Decoder {
            arch,
            cs,
            reg_numbers,
            reg_masks,
        })
    }

    fn reg(&self, id: RegId) -> Option<u8> {
        self.reg_numbers.get(&id.0).copied()
    }

    /// A core register's bit, or a floating-point register's bits.
    fn mask(&self, id: RegId) -> RegMask {
        self.reg_masks.get(&id.0).copied().unwrap_or(0)
    }

    /// Whether capstone's register `id` is a core register.
    fn is_core(&self, id: RegId) -> bool {
        self.reg_numbers.contains_key(&id.0)
    }

    /// Decodes instructions from `code` (at address `addr`) until `max_bytes`
    /// are covered, the code ends, or an instruction cannot be decoded.
    /// With `stop_at_branch`, decoding also ends after the first instruction
    /// that changes control flow.
    pub fn decode(
        &self,
        code: &[u8],
        addr: u64,
        stop_at_branch: bool,
    ) -> Result<Vec<Insn>, DecodeError> {
        let mut out = Vec::new();
        let mut offset = 0usize;
        while offset < code.len() {
            let insns = self
                .cs
                .disasm_count(&code[offset..], addr + offset as u64, 1)?;
            let Some(raw) = insns.iter().next() else {
                break;
            };
            let insn = match self.arch {
                Arch::Arm => self.classify_arm(raw)?,
                Arch::Riscv => self.classify_riscv(raw)?,
            };
            offset += insn.size as usize;
            let ends = is_control_flow(insn.class);
            out.push(insn);
            if ends && stop_at_branch {
                break;
            }
        }
        Ok(out)
    }

    /// How the instruction at the start of `code` (at `addr`) forms its
    /// data address, if it accesses memory: base register plus
    /// displacement, plus a shifted index register. A post-indexed access
    /// addresses its base as it is (capstone gives it a zero displacement).
    pub fn data_address(&self, code: &[u8], addr: u64) -> Option<(AddressForm, u8)> {
        let insns = self.cs.disasm_count(code, addr, 1).ok()?;
        let raw = insns.iter().next()?;
        let detail = self.cs.insn_detail(raw).ok()?;
        let form = match detail.arch_detail() {
            ArchDetail::ArmDetail(arm) => arm.operands().find_map(|op| match op.op_type {
                ArmOperandType::Mem(m) => Some(AddressForm {
                    base: self.reg(m.base())?,
                    index: self.reg(m.index()).map(|i| {
                        let shift = match op.shift {
                            capstone::arch::arm::ArmShift::Lsl(n) => n,
                            _ => 0,
                        };
                        (i, shift, op.subtracted || m.scale() < 0)
                    }),
                    disp: i64::from(m.disp()),
                }),
                _ => None,
            }),
            ArchDetail::RiscVDetail(rv) => rv
                .operands()
                .find_map(|op| match op {
                    RiscVOperand::Mem(m) => Some(AddressForm {
                        base: self.reg(m.base())?,
                        index: None,
                        disp: m.disp(),
                    }),
                    _ => None,
                })
                // capstone gives compressed loads and stores no memory
                // operand: their text has it, `imm(reg)`
                .or_else(|| self.riscv_address_text(raw.op_str().unwrap_or(""))),
            _ => None,
        }?;
        Some((form, raw.len() as u8))
    }

    /// The `disp(reg)` address of a RISC-V load's or store's operands.
    fn riscv_address_text(&self, operands: &str) -> Option<AddressForm> {
        let (disp, rest) = operands.rsplit_once(", ")?.1.split_once('(')?;
        let name = rest.strip_suffix(')')?;
        let disp = match disp.trim().strip_prefix('-') {
            Some(d) => -parse_immediate(d)?,
            None => parse_immediate(disp.trim())?,
        };
        Some(AddressForm {
            base: register_number(Arch::Riscv, name)?,
            index: None,
            disp,
        })
    }

    /// The mnemonic of the instruction at `addr` (`vdiv.f32`), for messages.
    pub fn mnemonic(&self, code: &[u8], addr: u64) -> Option<String> {
        let insns = self.cs.disasm_count(code, addr, 1).ok()?;
        let insn = insns.iter().next()?;
        insn.mnemonic().map(str::to_owned)
    }

    /// Mnemonic and operands of the instruction at `addr`, for messages.
    pub fn disassemble_one(&self, code: &[u8], addr: u64) -> Option<String> {
        let insns = self.cs.disasm_count(code, addr, 1).ok()?;
        let insn = insns.iter().next()?;
        Some(format!(
            "{} {}",
            insn.mnemonic().unwrap_or("?"),
            insn.op_str().unwrap_or("")
        ))
    }

    fn classify_arm(&self, raw: &capstone::Insn) -> Result<Insn, DecodeError> {
        let detail = self.cs.insn_detail(raw)?;
        let arch_detail = detail.arch_detail();
        let arm = arch_detail.arm().expect("ARM decoder gives ARM details");
        let id = raw.id().0;
        let mut ops = self.arm_operands(raw, arm, id);
        for r in detail.regs_read() {
            ops.reads |= self.mask(*r);
        }
        for r in detail.regs_write() {
            ops.writes |= self.mask(*r);
        }
        if id == ArmInsn::ARM_INS_MOVT as u32 {
            // MOVT keeps the bottom half of its register: counted as a
            // write only, so it pairs with the MOVW before it (Cortex-M7)
            ops.reads &= !ops.writes;
        }
        let conditional = !matches!(arm.cc(), ArmCC::ARM_CC_AL | ArmCC::ARM_CC_INVALID);
        let mut kind = arm_class(id, conditional, arm.writeback(), &mut ops);
        let mut late_reads = 0;
        if kind.class == InsnClass::Unclassified {
            if let Some(fp) = self.fp_kind(raw, arm, id) {
                ops.reads = fp.reads;
                ops.writes = fp.writes;
                ops.address_regs = fp.address_regs;
                late_reads = fp.accumulator;
                kind = ArmKind {
                    class: fp.class,
                    transfers: fp.words,
                    pipelinable: fp.class == InsnClass::FpLoad,
                    dynamic: None,
                };
            }
        } else if let Some(acc) = integer_accumulator(id, &ops.operand_regs) {
            late_reads = acc;
        }
        // a store's data is read after its address
        if matches!(
            kind.class,
            InsnClass::Store
                | InsnClass::StoreMultiple
                | InsnClass::FpStore
                | InsnClass::FpStoreMultiple
        ) {
            late_reads |= ops.reads & !ops.address_regs & !ARM_FLAGS;
        }
        // the flags: conditional instructions (and IT) read them; compares
        // and flag-setting instructions write them
        if conditional || kind.class == InsnClass::It {
            ops.reads |= ARM_FLAGS;
        }
        if arm.update_flags() || is_compare(id) {
            ops.writes |= ARM_FLAGS;
        }
        let class = kind.class;
        let size = raw.len() as u8;
        Ok(Insn {
            addr: raw.address(),
            size,
            class,
            transfers: kind.transfers,
            reads: ops.reads,
            writes: ops.writes,
            address_regs: ops.address_regs,
            pipelinable: kind.pipelinable,
            register_offset: ops.register_offset
                && matches!(class, InsnClass::Load | InsnClass::Store),
            literal: ops
                .literal
                .filter(|_| matches!(class, InsnClass::Load | InsnClass::FpLoad)),
            dynamic: kind.dynamic,
            late_reads,
            shifted: ops.shifted && matches!(class, InsnClass::Alu),
            bitfield: is_bitfield(id),
            subword: is_subword_load(id),
            branch: arm_branch_kind(class, ops.reads, ops.writes, ops.address_regs),
            jumps_to_next: class == InsnClass::Branch
                && arm.operands().any(|op| {
                    matches!(op.op_type, ArmOperandType::Imm(to)
                        if to as u32 as u64 == raw.address() + u64::from(size))
                }),
        })
    }

    /// What an ARM instruction's operands read, write and address.
    fn arm_operands(
        &self,
        raw: &capstone::Insn,
        arm: &capstone::arch::arm::ArmInsnDetail<'_>,
        id: u32,
    ) -> ArmOperands {
        let mut ops = ArmOperands::default();
        let mut first_reg = true;
        // MOVW, MOVT, ADDW, SUBW take a plain 16- or 12-bit immediate
        let plain_immediate = matches!(raw.mnemonic(), Some("movw" | "movt" | "addw" | "subw"));
        for op in arm.operands() {
            if !matches!(op.shift, ArmShift::Invalid) && !is_shift_instruction(id) {
                ops.shifted = true;
            }
            match op.op_type {
                ArmOperandType::Imm(v) if !plain_immediate && !simple_immediate(id, v) => {
                    ops.shifted = true
                }
                ArmOperandType::Reg(r) => {
                    let n = self.reg(r);
                    // The first register operand is the destination of data
                    // processing and loads; stores and compares only read.
                    if first_reg && !is_store_or_compare(id) {
                        ops.writes |= self.mask(r);
                    } else {
                        ops.reads |= self.mask(r);
                    }
                    if let Some(n) = n {
                        ops.operand_regs.push(n);
                        ops.reg_list.push(n);
                    }
                    first_reg = false;
                }
                ArmOperandType::Mem(m) => {
                    let base = self.mask(m.base());
                    let index = self.mask(m.index());
                    ops.address_regs |= base | index;
                    ops.reads |= base | index;
                    ops.base_reg = base;
                    ops.register_offset = index != 0;
                    if base == 1 << ARM_PC {
                        // LDR Rt, [PC, #imm]: Align(PC, 4) + imm, PC = address + 4
                        let pc = (raw.address() + 4) & !3;
                        ops.literal = Some(pc.wrapping_add_signed(i64::from(m.disp())));
                    }
                }
                _ => {}
            }
        }
        ops
    }

    fn classify_riscv(&self, raw: &capstone::Insn) -> Result<Insn, DecodeError> {
        use RiscVInsn::*;
        let detail = self.cs.insn_detail(raw)?;
        let arch_detail = detail.arch_detail();
        let id = raw.id().0;
        let is = |insn: RiscVInsn| id == insn as u32;
        let mut regs: Vec<u8> = Vec::new();
        let mut address_regs: RegMask = 0;
        for op in arch_detail.operands() {
            if let ArchOperand::RiscVOperand(op) = op {
                match op {
                    RiscVOperand::Reg(r) => regs.extend(self.reg(r)),
                    RiscVOperand::Mem(m) => {
                        if let Some(n) = self.reg(m.base()) {
                            address_regs |= 1 << n;
                            regs.push(n);
                        }
                    }
                    _ => {}
                }
            }
        }
        let mask = |rs: &[u8]| rs.iter().fold(0u64, |m, r| m | 1 << r) & !1; // x0 is no register
        let mut dynamic = None;
        let mut branch = BranchKind::None;
        // rd (bits 11:7) and rs1 (bits 19:15) from the encoding: capstone
        // prints `j`, `jal` and `ret` without them
        let bytes = raw.bytes();
        let word = bytes
            .iter()
            .take(4)
            .rev()
            .fold(0u32, |w, b| w << 8 | u32::from(*b));
        let (rd, rs1) = (word >> 7 & 0x1f, word >> 15 & 0x1f);
        let links = |r: u32| r == 1 || r == 5; // ra, t0 (the psABI's link registers)
        let class = if is(RISCV_INS_JAL) || is(RISCV_INS_C_J) || is(RISCV_INS_C_JAL) {
            // `c.j` links nothing, `c.jal` links ra
            if is(RISCV_INS_C_JAL) || (is(RISCV_INS_JAL) && rd != 0) {
                branch = BranchKind::Call;
                InsnClass::Call
            } else {
                branch = BranchKind::Jump;
                InsnClass::Branch
            }
        } else if is(RISCV_INS_JALR) || is(RISCV_INS_C_JR) || is(RISCV_INS_C_JALR) {
            // c.jr / c.jalr hold rs1 in bits 11:7
            let (rd, rs1) = match () {
                _ if is(RISCV_INS_C_JR) => (0, rd),
                _ if is(RISCV_INS_C_JALR) => (1, rd),
                _ => (rd, rs1),
            };
            branch = if links(rd) {
                BranchKind::IndirectCall
            } else if rd == 0 && links(rs1) {
                BranchKind::Return
            } else {
                BranchKind::Indirect
            };
            InsnClass::BranchIndirect
        } else if [
            RISCV_INS_BEQ,
            RISCV_INS_BNE,
            RISCV_INS_BLT,
            RISCV_INS_BGE,
            RISCV_INS_BLTU,
            RISCV_INS_BGEU,
            RISCV_INS_C_BEQZ,
            RISCV_INS_C_BNEZ,
        ]
        .iter()
        .any(|i| is(*i))
        {
            branch = BranchKind::Conditional;
            InsnClass::BranchCond
        } else if is(RISCV_INS_DIV) || is(RISCV_INS_DIVU) || is(RISCV_INS_REM) || is(RISCV_INS_REMU)
        {
            dynamic = two_operands(&regs, 1, is(RISCV_INS_DIV) || is(RISCV_INS_REM));
            InsnClass::Div
        } else {
            riscv_plain_class(id, raw.mnemonic().unwrap_or(""))
        };
        // Stores, branches and indirect jumps read every register operand;
        // everything else writes its first and reads the rest.
        let (reads, writes) = match class {
            InsnClass::Store | InsnClass::BranchCond | InsnClass::BranchIndirect => {
                (mask(&regs), 0)
            }
            _ => match regs.split_first() {
                // the compressed two-address forms (c.add rd, rs2 is
                // add rd, rd, rs2) read their destination too
                Some((rd, _)) if TWO_ADDRESS.iter().any(|i| is(*i)) => {
                    (mask(&regs), mask(std::slice::from_ref(rd)))
                }
                Some((rd, rest)) => (mask(rest), mask(std::slice::from_ref(rd))),
                None => (0, 0),
            },
        };
        let pipelinable = matches!(class, InsnClass::Load | InsnClass::Store);
        let subword = [RISCV_INS_LB, RISCV_INS_LBU, RISCV_INS_LH, RISCV_INS_LHU]
            .iter()
            .any(|i| is(*i));
        Ok(Insn {
            addr: raw.address(),
            size: raw.len() as u8,
            class,
            transfers: 0,
            reads,
            writes,
            address_regs,
            pipelinable,
            register_offset: false,
            literal: None,
            dynamic,
            late_reads: if class == InsnClass::Store {
                reads & !address_regs
            } else {
                0
            },
            shifted: false,
            bitfield: false,
            subword,
            branch,
            jumps_to_next: false,
        })
    }
}

/// RVC instructions whose destination is also a source (RISC-V
/// unprivileged spec, chapter "C" Standard Extension: c.add expands to
/// add rd, rd, rs2; c.addi to addi rd, rd, imm; and so on). Capstone lists
/// their register once.
const TWO_ADDRESS: [RiscVInsn; 11] = [
    RiscVInsn::RISCV_INS_C_ADD,
    RiscVInsn::RISCV_INS_C_ADDI,
    RiscVInsn::RISCV_INS_C_ADDI16SP,
    RiscVInsn::RISCV_INS_C_SUB,
    RiscVInsn::RISCV_INS_C_AND,
    RiscVInsn::RISCV_INS_C_ANDI,
    RiscVInsn::RISCV_INS_C_OR,
    RiscVInsn::RISCV_INS_C_XOR,
    RiscVInsn::RISCV_INS_C_SLLI,
    RiscVInsn::RISCV_INS_C_SRLI,
    RiscVInsn::RISCV_INS_C_SRAI,
];

/// RV32I and C data processing (priced as `alu`).
fn is_riscv_alu(id: u32) -> bool {
    use RiscVInsn::*;
    [
        RISCV_INS_ADD,
        RISCV_INS_ADDI,
        RISCV_INS_SUB,
        RISCV_INS_LUI,
        RISCV_INS_AUIPC,
        RISCV_INS_AND,
        RISCV_INS_ANDI,
        RISCV_INS_OR,
        RISCV_INS_ORI,
        RISCV_INS_XOR,
        RISCV_INS_XORI,
        RISCV_INS_SLL,
        RISCV_INS_SLLI,
        RISCV_INS_SRL,
        RISCV_INS_SRLI,
        RISCV_INS_SRA,
        RISCV_INS_SRAI,
        RISCV_INS_SLT,
        RISCV_INS_SLTI,
        RISCV_INS_SLTU,
        RISCV_INS_SLTIU,
        RISCV_INS_C_ADD,
        RISCV_INS_C_ADDI,
        RISCV_INS_C_ADDI16SP,
        RISCV_INS_C_ADDI4SPN,
        RISCV_INS_C_LI,
        RISCV_INS_C_LUI,
        RISCV_INS_C_MV,
        RISCV_INS_C_SUB,
        RISCV_INS_C_AND,
        RISCV_INS_C_ANDI,
        RISCV_INS_C_OR,
        RISCV_INS_C_XOR,
        RISCV_INS_C_SLLI,
        RISCV_INS_C_SRLI,
        RISCV_INS_C_SRAI,
        RISCV_INS_C_NOP,
    ]
    .iter()
    .any(|i| *i as u32 == id)
}

/// The source operands of a multiply or divide: the registers at `first`
/// and `first + 1` of its register operands.
fn two_operands(regs: &[u8], first: usize, signed: bool) -> Option<DynamicOperands> {
    Some(DynamicOperands {
        a: *regs.get(first)?,
        b: *regs.get(first + 1)?,
        signed,
    })
}

fn is_control_flow(class: InsnClass) -> bool {
    matches!(
        class,
        InsnClass::Branch
            | InsnClass::BranchCond
            | InsnClass::Call
            | InsnClass::BranchIndirect
            | InsnClass::TableBranch
            | InsnClass::PopPc
    )
}

/// The class of a RISC-V instruction that is no jump, branch or divide:
/// loads (LR and the AMOs included), stores (SC included), multiplies,
/// fences, system instructions, the ALU, or unclassified.
fn riscv_plain_class(id: u32, mnemonic: &str) -> InsnClass {
    use RiscVInsn::*;
    let is = |insn: RiscVInsn| id == insn as u32;
    if [
        RISCV_INS_LB,
        RISCV_INS_LBU,
        RISCV_INS_LH,
        RISCV_INS_LHU,
        RISCV_INS_LW,
        RISCV_INS_C_LW,
        RISCV_INS_C_LWSP,
        RISCV_INS_LR_W,
        RISCV_INS_LR_W_AQ,
        RISCV_INS_LR_W_RL,
        RISCV_INS_LR_W_AQ_RL,
    ]
    .iter()
    .any(|i| is(*i))
        || is_riscv_amo(mnemonic)
    {
        InsnClass::Load
    } else if [
        RISCV_INS_SB,
        RISCV_INS_SH,
        RISCV_INS_SW,
        RISCV_INS_C_SW,
        RISCV_INS_C_SWSP,
        RISCV_INS_SC_W,
        RISCV_INS_SC_W_AQ,
        RISCV_INS_SC_W_RL,
        RISCV_INS_SC_W_AQ_RL,
    ]
    .iter()
    .any(|i| is(*i))
    {
        InsnClass::Store
    } else if is(RISCV_INS_MUL) {
        InsnClass::Mul
    } else if is(RISCV_INS_MULH) || is(RISCV_INS_MULHSU) || is(RISCV_INS_MULHU) {
        InsnClass::MulLong
    } else if is(RISCV_INS_FENCE) || is(RISCV_INS_FENCE_I) || is(RISCV_INS_FENCE_TSO) {
        InsnClass::Barrier
    } else if [
        RISCV_INS_CSRRC,
        RISCV_INS_CSRRCI,
        RISCV_INS_CSRRS,
        RISCV_INS_CSRRSI,
        RISCV_INS_CSRRW,
        RISCV_INS_CSRRWI,
        RISCV_INS_ECALL,
        RISCV_INS_EBREAK,
        RISCV_INS_C_EBREAK,
        RISCV_INS_MRET,
        RISCV_INS_WFI,
        RISCV_INS_UNIMP,
        RISCV_INS_C_UNIMP,
    ]
    .iter()
    .any(|i| is(*i))
    {
        InsnClass::System
    } else if is_riscv_alu(id) {
        InsnClass::Alu
    } else {
        // F, D, RV64-only and privileged instructions no table prices
        InsnClass::Unclassified
    }
}

fn is_riscv_amo(mnemonic: &str) -> bool {
    mnemonic.starts_with("amo")
}

fn is_load(id: u32) -> bool {
    use ArmInsn::*;
    [
        ARM_INS_LDR,
        ARM_INS_LDRB,
        ARM_INS_LDRH,
        ARM_INS_LDRSB,
        ARM_INS_LDRSH,
        ARM_INS_LDRT,
        ARM_INS_LDRBT,
        ARM_INS_LDRHT,
        ARM_INS_LDRSBT,
        ARM_INS_LDRSHT,
        ARM_INS_LDREX,
        ARM_INS_LDREXB,
        ARM_INS_LDREXH,
        ARM_INS_LDA,
        ARM_INS_LDAB,
        ARM_INS_LDAH,
        ARM_INS_LDAEX,
        ARM_INS_LDAEXB,
        ARM_INS_LDAEXH,
    ]
    .iter()
    .any(|i| *i as u32 == id)
}

/// Byte and halfword loads.
fn is_subword_load(id: u32) -> bool {
    use ArmInsn::*;
    [
        ARM_INS_LDRB,
        ARM_INS_LDRH,
        ARM_INS_LDRSB,
        ARM_INS_LDRSH,
        ARM_INS_LDRBT,
        ARM_INS_LDRHT,
        ARM_INS_LDRSBT,
        ARM_INS_LDRSHT,
        ARM_INS_LDREXB,
        ARM_INS_LDREXH,
        ARM_INS_LDAB,
        ARM_INS_LDAH,
        ARM_INS_LDAEXB,
        ARM_INS_LDAEXH,
    ]
    .iter()
    .any(|i| *i as u32 == id)
}

fn is_store(id: u32) -> bool {
    use ArmInsn::*;
    [
        ARM_INS_STR,
        ARM_INS_STRB,
        ARM_INS_STRH,
        ARM_INS_STRT,
        ARM_INS_STRBT,
        ARM_INS_STRHT,
        ARM_INS_STREX,
        ARM_INS_STREXB,
        ARM_INS_STREXH,
        ARM_INS_STL,
        ARM_INS_STLB,
        ARM_INS_STLH,
        ARM_INS_STLEX,
        ARM_INS_STLEXB,
        ARM_INS_STLEXH,
    ]
    .iter()
    .any(|i| *i as u32 == id)
}

/// How a load or store forms its address: `base + disp`, plus
/// `index << shift` (subtracted when the flag is set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressForm {
    pub base: u8,
    pub index: Option<(u8, u32, bool)>,
    pub disp: i64,
}

impl AddressForm {
    /// The address with the registers' values `reg(n)`.
    pub fn evaluate(&self, reg: impl Fn(u8) -> u64) -> u64 {
        let mut a = reg(self.base).wrapping_add_signed(self.disp);
        if let Some((i, shift, subtract)) = self.index {
            let offset = reg(i) << shift;
            a = if subtract {
                a.wrapping_sub(offset)
            } else {
                a.wrapping_add(offset)
            };
        }
        a & 0xFFFF_FFFF
    }
}

/// The registers an ARM instruction's operands read, write and address.
#[derive(Default)]
struct ArmOperands {
    reads: RegMask,
    writes: RegMask,
    address_regs: RegMask,
    base_reg: RegMask,
    register_offset: bool,
    literal: Option<u64>,
    /// Every register operand, in order (a register list's, too).
    reg_list: Vec<u8>,
    operand_regs: Vec<u8>,
    /// An operand shifted before the ALU: a shifted register, or an
    /// immediate that is an 8-bit value shifted (Cortex-M7's shifter).
    shifted: bool,
}

/// An ARM instruction's class and what its cycle-table row needs.
struct ArmKind {
    class: InsnClass,
    transfers: u8,
    pipelinable: bool,
    dynamic: Option<DynamicOperands>,
}

/// The class of ARM instruction `id`; a written-back base joins
/// `ops.writes` (the cycle model's load-use check sees it there).
fn arm_class(id: u32, conditional: bool, writeback: bool, ops: &mut ArmOperands) -> ArmKind {
    use ArmInsn::*;
    let is = |insn: ArmInsn| id == insn as u32;
    let reg_list = &ops.reg_list;
    let operand_regs = &ops.operand_regs;
    let list_has_pc = reg_list.contains(&ARM_PC);
    let mut transfers = 0u8;
    let mut pipelinable = false;
    let mut dynamic = None;
    let class = if is(ARM_INS_B) {
        if conditional {
            InsnClass::BranchCond
        } else {
            InsnClass::Branch
        }
    } else if is(ARM_INS_CBZ) || is(ARM_INS_CBNZ) {
        InsnClass::BranchCond
    } else if is(ARM_INS_BL) {
        InsnClass::Call
    } else if is(ARM_INS_BLX) || is(ARM_INS_BX) || is(ARM_INS_BXNS) || is(ARM_INS_BLXNS) {
        InsnClass::BranchIndirect
    } else if is(ARM_INS_TBB) || is(ARM_INS_TBH) {
        InsnClass::TableBranch
    } else if is(ARM_INS_POP) || is(ARM_INS_LDM) || is(ARM_INS_LDMDB) {
        // For LDM the first register is the base, the rest the list.
        let list = if is(ARM_INS_POP) {
            &reg_list[..]
        } else {
            reg_list.get(1..).unwrap_or(&[])
        };
        let count = list.len() as u8;
        if list_has_pc {
            transfers = count - 1;
            InsnClass::PopPc
        } else {
            transfers = count;
            InsnClass::LoadMultiple
        }
    } else if is(ARM_INS_PUSH) {
        transfers = reg_list.len() as u8;
        InsnClass::StoreMultiple
    } else if is(ARM_INS_STM) || is(ARM_INS_STMDB) {
        transfers = reg_list.len().saturating_sub(1) as u8;
        InsnClass::StoreMultiple
    } else if is(ARM_INS_LDRD) || is(ARM_INS_LDREXD) {
        // 3.3.2: "LDRD and STRD cannot be pipelined ... requires three cycles"
        transfers = 2;
        InsnClass::LoadMultiple
    } else if is(ARM_INS_STRD) || is(ARM_INS_STREXD) {
        transfers = 2;
        InsnClass::StoreMultiple
    } else if is_load(id) {
        if ops.writes & (1 << ARM_PC) != 0 {
            // LDR PC: a load and a pipeline reload (3.3.2)
            InsnClass::PopPc
        } else {
            // 3.3.2: "if the next instruction is an LDR or STR, and the
            // destination of the first LDR is not used to compute the
            // address for the next instruction" - writeback does not stop
            // pipelining; a written-back base counts as a destination
            // (the cycle model's dependency check sees it in `writes`).
            pipelinable = true;
            if writeback {
                ops.writes |= ops.base_reg;
            }
            InsnClass::Load
        }
    } else if is_store(id) {
        // "STR can only be pipelined when it follows an LDR, but nothing
        // can be pipelined after the store" (3.3.2): the cycle model
        // pipelines only after a Load, so a store is never a first.
        pipelinable = true;
        if writeback {
            ops.writes |= ops.base_reg;
        }
        InsnClass::Store
    } else if is(ARM_INS_MUL) {
        InsnClass::Mul
    } else if is(ARM_INS_MLA) || is(ARM_INS_MLS) {
        InsnClass::Mla
    } else if is(ARM_INS_UMULL) || is(ARM_INS_SMULL) {
        dynamic = two_operands(operand_regs, 2, is(ARM_INS_SMULL));
        InsnClass::MulLong
    } else if is(ARM_INS_UMLAL) || is(ARM_INS_SMLAL) || is(ARM_INS_UMAAL) {
        dynamic = two_operands(operand_regs, 2, is(ARM_INS_SMLAL));
        InsnClass::MlaLong
    } else if is(ARM_INS_SDIV) || is(ARM_INS_UDIV) {
        dynamic = two_operands(operand_regs, 1, is(ARM_INS_SDIV));
        InsnClass::Div
    } else if is(ARM_INS_IT) {
        InsnClass::It
    } else if is(ARM_INS_NOP)
        || is(ARM_INS_HINT)
        || is(ARM_INS_YIELD)
        || is(ARM_INS_SEV)
        || is(ARM_INS_WFE)
        || is(ARM_INS_WFI)
    {
        InsnClass::Nop
    } else if is(ARM_INS_DMB) || is(ARM_INS_DSB) || is(ARM_INS_ISB) {
        InsnClass::Barrier
    } else if is_hint(id) {
        InsnClass::Nop
    } else if is_system(id) {
        InsnClass::System
    } else if let Some(class) = dsp_class(id) {
        class
    } else if is_alu(id) {
        if ops.writes & (1 << ARM_PC) != 0 {
            // MOV PC, Rm / ADD PC, Rm
            InsnClass::BranchIndirect
        } else {
            InsnClass::Alu
        }
    } else {
        // floating point (classified from its operands by the caller), or
        // an instruction no class prices: coprocessor, A-profile, NEON
        InsnClass::Unclassified
    };
    ArmKind {
        class,
        transfers,
        pipelinable,
        dynamic,
    }
}

/// Instructions whose register operands are all sources.
fn is_store_or_compare(id: u32) -> bool {
    use ArmInsn::*;
    is_store(id)
        || [
            ARM_INS_CMP,
            ARM_INS_CMN,
            ARM_INS_TST,
            ARM_INS_TEQ,
            ARM_INS_PUSH,
            ARM_INS_STM,
            ARM_INS_STMDB,
            ARM_INS_STRD,
            ARM_INS_CBZ,
            ARM_INS_CBNZ,
            ARM_INS_BX,
            ARM_INS_BLX,
            ARM_INS_TBB,
            ARM_INS_TBH,
            ARM_INS_MSR,
        ]
        .iter()
        .any(|i| *i as u32 == id)
}

/// Compares: they write the flags and no register.
fn is_compare(id: u32) -> bool {
    use ArmInsn::*;
    [ARM_INS_CMP, ARM_INS_CMN, ARM_INS_TST, ARM_INS_TEQ]
        .iter()
        .any(|i| *i as u32 == id)
}

/// Data processing priced as `alu`: arithmetic, logical, moves, shifts,
/// compares, bit-field, extend, reverse, CLZ, address generation.
fn is_alu(id: u32) -> bool {
    use ArmInsn::*;
    [
        ARM_INS_ADC,
        ARM_INS_ADD,
        ARM_INS_ADDW,
        ARM_INS_ADR,
        ARM_INS_AND,
        ARM_INS_ASR,
        ARM_INS_BFC,
        ARM_INS_BFI,
        ARM_INS_BIC,
        ARM_INS_CLZ,
        ARM_INS_CMN,
        ARM_INS_CMP,
        ARM_INS_EOR,
        ARM_INS_LSL,
        ARM_INS_LSR,
        ARM_INS_MOV,
        ARM_INS_MOVS,
        ARM_INS_MOVT,
        ARM_INS_MOVW,
        ARM_INS_MVN,
        ARM_INS_NEG,
        ARM_INS_ORN,
        ARM_INS_ORR,
        ARM_INS_RBIT,
        ARM_INS_REV,
        ARM_INS_REV16,
        ARM_INS_REVSH,
        ARM_INS_ROR,
        ARM_INS_RRX,
        ARM_INS_RSB,
        ARM_INS_SBC,
        ARM_INS_SBFX,
        ARM_INS_SUB,
        ARM_INS_SUBS,
        ARM_INS_SUBW,
        ARM_INS_SXTB,
        ARM_INS_SXTH,
        ARM_INS_TEQ,
        ARM_INS_TST,
        ARM_INS_UBFX,
        ARM_INS_UXTB,
        ARM_INS_UXTH,
    ]
    .iter()
    .any(|i| *i as u32 == id)
}

/// Bit-field, extend, reverse and CLZ: `alu` instructions that Cortex-M7
/// issues on its DSP/bit-field datapath (one a cycle, first of a pair).
fn is_bitfield(id: u32) -> bool {
    use ArmInsn::*;
    [
        ARM_INS_BFC,
        ARM_INS_BFI,
        ARM_INS_CLZ,
        ARM_INS_RBIT,
        ARM_INS_REV,
        ARM_INS_REV16,
        ARM_INS_REVSH,
        ARM_INS_SBFX,
        ARM_INS_SXTB,
        ARM_INS_SXTH,
        ARM_INS_UBFX,
        ARM_INS_UXTB,
        ARM_INS_UXTH,
    ]
    .iter()
    .any(|i| *i as u32 == id)
        || dsp_class(id) == Some(InsnClass::Dsp)
        || dsp_class(id) == Some(InsnClass::Saturate)
}

/// Shifts by an amount (LSL, LSR, ASR, ROR, RRX): their own shift is not an
/// operand shifted before the ALU.
fn is_shift_instruction(id: u32) -> bool {
    use ArmInsn::*;
    [
        ARM_INS_LSL,
        ARM_INS_LSR,
        ARM_INS_ASR,
        ARM_INS_ROR,
        ARM_INS_RRX,
    ]
    .iter()
    .any(|i| *i as u32 == id)
}

/// An immediate that needs no shifter: 0..255, or one of Thumb-2's
/// replicated byte patterns (0x00XY00XY, 0xXY00XY00, 0xXYXYXYXY); anything
/// else is an 8-bit value rotated into place (ARMv7-M ARM A5.3.2). (The
/// plain 12- and 16-bit immediates of ADDW, SUBW, MOVW and MOVT are told
/// apart by their mnemonic.)
fn simple_immediate(id: u32, value: i32) -> bool {
    if !is_alu(id) {
        return true;
    }
    let v = value as u32;
    let b = v & 0xff;
    v <= 0xff || v == b * 0x0001_0001 || v == (b << 8) * 0x0001_0001 || v == b * 0x0101_0101
}

/// NOP, hints and preloads.
fn is_hint(id: u32) -> bool {
    use ArmInsn::*;
    [
        ARM_INS_NOP,
        ARM_INS_HINT,
        ARM_INS_YIELD,
        ARM_INS_SEV,
        ARM_INS_WFE,
        ARM_INS_WFI,
        ARM_INS_DBG,
        ARM_INS_CSDB,
        ARM_INS_PLD,
        ARM_INS_PLDW,
        ARM_INS_PLI,
    ]
    .iter()
    .any(|i| *i as u32 == id)
}

/// System instructions: special registers, exceptions, exclusive-monitor
/// clear, and the Armv8-M security instructions.
fn is_system(id: u32) -> bool {
    use ArmInsn::*;
    [
        ARM_INS_MRS,
        ARM_INS_MSR,
        ARM_INS_CPS,
        ARM_INS_SVC,
        ARM_INS_BKPT,
        ARM_INS_UDF,
        ARM_INS_CLREX,
        ARM_INS_SG,
        ARM_INS_TT,
        ARM_INS_TTT,
        ARM_INS_TTA,
        ARM_INS_TTAT,
        ARM_INS_VLLDM,
        ARM_INS_VLSTM,
    ]
    .iter()
    .any(|i| *i as u32 == id)
}

/// The class of a DSP-extension instruction (or SSAT/USAT), if it is one.
fn dsp_class(id: u32) -> Option<InsnClass> {
    use ArmInsn::*;
    let any = |list: &[ArmInsn]| list.iter().any(|i| *i as u32 == id);
    if any(&[
        ARM_INS_SMULBB,
        ARM_INS_SMULBT,
        ARM_INS_SMULTB,
        ARM_INS_SMULTT,
        ARM_INS_SMULWB,
        ARM_INS_SMULWT,
        ARM_INS_SMUAD,
        ARM_INS_SMUADX,
        ARM_INS_SMUSD,
        ARM_INS_SMUSDX,
        ARM_INS_SMMUL,
        ARM_INS_SMMULR,
    ]) {
        Some(InsnClass::DspMul)
    } else if any(&[
        ARM_INS_SMLABB,
        ARM_INS_SMLABT,
        ARM_INS_SMLATB,
        ARM_INS_SMLATT,
        ARM_INS_SMLAWB,
        ARM_INS_SMLAWT,
        ARM_INS_SMLAD,
        ARM_INS_SMLADX,
        ARM_INS_SMLSD,
        ARM_INS_SMLSDX,
        ARM_INS_SMMLA,
        ARM_INS_SMMLAR,
        ARM_INS_SMMLS,
        ARM_INS_SMMLSR,
    ]) {
        Some(InsnClass::DspMla)
    } else if any(&[
        ARM_INS_SMLALBB,
        ARM_INS_SMLALBT,
        ARM_INS_SMLALTB,
        ARM_INS_SMLALTT,
        ARM_INS_SMLALD,
        ARM_INS_SMLALDX,
        ARM_INS_SMLSLD,
        ARM_INS_SMLSLDX,
    ]) {
        Some(InsnClass::DspMlaLong)
    } else if any(&[ARM_INS_SSAT, ARM_INS_USAT]) {
        Some(InsnClass::Saturate)
    } else if any(&[
        ARM_INS_PKHBT,
        ARM_INS_PKHTB,
        ARM_INS_QADD,
        ARM_INS_QSUB,
        ARM_INS_QDADD,
        ARM_INS_QDSUB,
        ARM_INS_QADD16,
        ARM_INS_QADD8,
        ARM_INS_QASX,
        ARM_INS_QSAX,
        ARM_INS_QSUB16,
        ARM_INS_QSUB8,
        ARM_INS_SADD16,
        ARM_INS_SADD8,
        ARM_INS_SASX,
        ARM_INS_SSAX,
        ARM_INS_SSUB16,
        ARM_INS_SSUB8,
        ARM_INS_SHADD16,
        ARM_INS_SHADD8,
        ARM_INS_SHASX,
        ARM_INS_SHSAX,
        ARM_INS_SHSUB16,
        ARM_INS_SHSUB8,
        ARM_INS_UADD16,
        ARM_INS_UADD8,
        ARM_INS_UASX,
        ARM_INS_USAX,
        ARM_INS_USUB16,
        ARM_INS_USUB8,
        ARM_INS_UHADD16,
        ARM_INS_UHADD8,
        ARM_INS_UHASX,
        ARM_INS_UHSAX,
        ARM_INS_UHSUB16,
        ARM_INS_UHSUB8,
        ARM_INS_UQADD16,
        ARM_INS_UQADD8,
        ARM_INS_UQASX,
        ARM_INS_UQSAX,
        ARM_INS_UQSUB16,
        ARM_INS_UQSUB8,
        ARM_INS_SEL,
        ARM_INS_USAD8,
        ARM_INS_USADA8,
        ARM_INS_SSAT16,
        ARM_INS_USAT16,
        ARM_INS_SXTAB,
        ARM_INS_SXTAB16,
        ARM_INS_SXTAH,
        ARM_INS_SXTB16,
        ARM_INS_UXTAB,
        ARM_INS_UXTAB16,
        ARM_INS_UXTAH,
        ARM_INS_UXTB16,
    ]) {
        Some(InsnClass::Dsp)
    } else {
        None
    }
}

/// The accumulator a multiply-accumulate reads (its last register
/// operand; for a 64-bit accumulator its two destination registers).
fn integer_accumulator(id: u32, regs: &[u8]) -> Option<RegMask> {
    use ArmInsn::*;
    let any = |list: &[ArmInsn]| list.iter().any(|i| *i as u32 == id);
    if any(&[ARM_INS_MLA, ARM_INS_MLS]) || dsp_class(id) == Some(InsnClass::DspMla) {
        regs.get(3).map(|r| 1 << r)
    } else if any(&[ARM_INS_UMLAL, ARM_INS_SMLAL, ARM_INS_UMAAL])
        || dsp_class(id) == Some(InsnClass::DspMlaLong)
    {
        Some(regs.get(..2)?.iter().fold(0, |m, r| m | 1 << r))
    } else {
        None
    }
}

/// What the predictor sees of an Arm control-flow instruction: a load of
/// PC from the stack (POP, LDR PC, [SP], #4) and BX LR return.
fn arm_branch_kind(
    class: InsnClass,
    reads: RegMask,
    writes: RegMask,
    address_regs: RegMask,
) -> BranchKind {
    const LR: RegMask = 1 << 14;
    const SP: RegMask = 1 << 13;
    match class {
        InsnClass::BranchCond => BranchKind::Conditional,
        InsnClass::Branch => BranchKind::Jump,
        InsnClass::Call => BranchKind::Call,
        InsnClass::PopPc if address_regs & !SP == 0 && reads & SP != 0 => BranchKind::Return,
        InsnClass::PopPc => BranchKind::Indirect,
        InsnClass::TableBranch => BranchKind::Indirect,
        InsnClass::BranchIndirect if writes & LR != 0 => BranchKind::IndirectCall,
        InsnClass::BranchIndirect if reads & LR != 0 => BranchKind::Return,
        InsnClass::BranchIndirect => BranchKind::Indirect,
        _ => BranchKind::None,
    }
}

/// A floating-point instruction's class, registers and words.
struct FpKind {
    class: InsnClass,
    reads: RegMask,
    writes: RegMask,
    address_regs: RegMask,
    accumulator: RegMask,
    /// Words a load or store transfers (a double is two).
    words: u8,
}

/// The class of an FPv4/FPv5 data-processing instruction (arithmetic,
/// compare, convert, select, constant), `double` when it names a D
/// register; a compare writes FPSCR into `writes`. `None` for the moves,
/// transfers, loads and stores (`Decoder::fp_kind`).
fn fp_arith_class(id: u32, double: bool, writes: &mut RegMask) -> Option<InsnClass> {
    use ArmInsn::*;
    use InsnClass::*;
    let is = |insn: ArmInsn| id == insn as u32;
    let any = |list: &[ArmInsn]| list.iter().any(|i| *i as u32 == id);
    let precision = |single: InsnClass, dbl: InsnClass| if double { dbl } else { single };
    Some(
        if any(&[ARM_INS_VADD, ARM_INS_VSUB, ARM_INS_FADDS, ARM_INS_FSUBS]) {
            precision(FpAdd, FpAddD)
        } else if any(&[ARM_INS_FADDD, ARM_INS_FSUBD]) {
            FpAddD
        } else if any(&[ARM_INS_VMUL, ARM_INS_VNMUL]) {
            precision(FpMul, FpMulD)
        } else if any(&[ARM_INS_VMLA, ARM_INS_VMLS, ARM_INS_VNMLA, ARM_INS_VNMLS]) {
            precision(FpMac, FpMacD)
        } else if any(&[ARM_INS_VFMA, ARM_INS_VFMS, ARM_INS_VFNMA, ARM_INS_VFNMS]) {
            precision(FpFma, FpFmaD)
        } else if is(ARM_INS_VDIV) {
            precision(FpDiv, FpDivD)
        } else if is(ARM_INS_VSQRT) {
            precision(FpSqrt, FpSqrtD)
        } else if any(&[ARM_INS_VABS, ARM_INS_VNEG]) {
            precision(FpAbs, FpAluD)
        } else if any(&[ARM_INS_VCMP, ARM_INS_VCMPE, ARM_INS_FCMPZS]) {
            *writes |= ARM_FPSCR;
            precision(FpCmp, FpAluD)
        } else if is(ARM_INS_FCMPZD) {
            *writes |= ARM_FPSCR;
            FpAluD
        } else if any(&[
            ARM_INS_VCVT,
            ARM_INS_VCVTA,
            ARM_INS_VCVTB,
            ARM_INS_VCVTM,
            ARM_INS_VCVTN,
            ARM_INS_VCVTP,
            ARM_INS_VCVTR,
            ARM_INS_VCVTT,
            ARM_INS_VRINTA,
            ARM_INS_VRINTM,
            ARM_INS_VRINTN,
            ARM_INS_VRINTP,
            ARM_INS_VRINTR,
            ARM_INS_VRINTX,
            ARM_INS_VRINTZ,
        ]) {
            precision(FpCvt, FpAluD)
        } else if any(&[
            ARM_INS_VSELEQ,
            ARM_INS_VSELGE,
            ARM_INS_VSELGT,
            ARM_INS_VSELVS,
            ARM_INS_VMAXNM,
            ARM_INS_VMINNM,
        ]) {
            precision(FpSelect, FpAluD)
        } else if is(ARM_INS_FCONSTS) {
            FpMove
        } else if is(ARM_INS_FCONSTD) {
            FpAluD
        } else {
            return None;
        },
    )
}

impl Decoder {
    /// A floating-point (FPv4/FPv5) instruction, classified from its id and
    /// operands; `None` for anything else (NEON, coprocessor, A-profile).
    fn fp_kind(
        &self,
        raw: &capstone::Insn,
        arm: &capstone::arch::arm::ArmInsnDetail<'_>,
        id: u32,
    ) -> Option<FpKind> {
        use ArmInsn::*;
        use InsnClass::*;
        let is = |insn: ArmInsn| id == insn as u32;
        let any = |list: &[ArmInsn]| list.iter().any(|i| *i as u32 == id);
        let mut k = FpKind {
            class: Unclassified,
            reads: 0,
            writes: 0,
            address_regs: 0,
            accumulator: 0,
            words: 0,
        };
        let (mut core, mut fp, mut double, mut words) = (0u8, 0u8, false, 0u8);
        let mut first = true;
        for op in arm.operands() {
            match op.op_type {
                ArmOperandType::Reg(r) => {
                    let m = self.mask(r);
                    let name = self.cs.reg_name(r).unwrap_or_default();
                    if name.starts_with('q') {
                        return None; // NEON
                    }
                    if self.is_core(r) {
                        core += 1;
                    } else if m != 0 {
                        fp += 1;
                        double |= name.starts_with('d');
                        words += m.count_ones() as u8;
                    }
                    match op.access {
                        Some(RegAccessType::WriteOnly) => k.writes |= m,
                        Some(RegAccessType::ReadWrite) => {
                            k.reads |= m;
                            k.writes |= m;
                            if first {
                                k.accumulator = m;
                            }
                        }
                        _ => k.reads |= m,
                    }
                    first = false;
                }
                ArmOperandType::Mem(mem) => {
                    let base = self.mask(mem.base());
                    k.address_regs |= base;
                    k.reads |= base;
                }
                _ => {}
            }
        }
        let precision = |single: InsnClass, dbl: InsnClass| if double { dbl } else { single };
        k.class = if let Some(class) = fp_arith_class(id, double, &mut k.writes) {
            class
        } else if any(&[ARM_INS_FMDHR, ARM_INS_FMDLR]) {
            // half of a double: no whole float moves (`per_register` 0)
            FpTransfer
        } else if is(ARM_INS_VMOV) {
            match core {
                0 => precision(FpMove, FpAluD),
                1 => {
                    // one float (N = 1), or half of a double (N = 0)
                    k.words = u8::from(!double);
                    FpTransfer
                }
                _ => FpTransfer2,
            }
        } else if any(&[ARM_INS_VMRS, ARM_INS_FMSTAT]) {
            k.reads |= ARM_FPSCR;
            if is(ARM_INS_FMSTAT) {
                k.writes |= ARM_FLAGS;
            }
            FpStatus
        } else if is(ARM_INS_VMSR) {
            k.writes |= ARM_FPSCR;
            FpStatus
        } else if is(ARM_INS_VLDR) {
            k.words = words;
            FpLoad
        } else if is(ARM_INS_VSTR) {
            k.words = words;
            FpStore
        } else if any(&[
            ARM_INS_VLDMIA,
            ARM_INS_VLDMDB,
            ARM_INS_VPOP,
            ARM_INS_FLDMIAX,
            ARM_INS_FLDMDBX,
        ]) {
            self.fp_multiple(arm, is(ARM_INS_VPOP), &mut k, true);
            FpLoadMultiple
        } else if any(&[
            ARM_INS_VSTMIA,
            ARM_INS_VSTMDB,
            ARM_INS_VPUSH,
            ARM_INS_FSTMIAX,
            ARM_INS_FSTMDBX,
        ]) {
            self.fp_multiple(arm, is(ARM_INS_VPUSH), &mut k, false);
            FpStoreMultiple
        } else {
            return None;
        };
        let _ = (raw, fp);
        if matches!(k.class, FpAdd | FpMul | FpAbs | FpAluD | FpAddD | FpMulD)
            && !matches!(
                arm.vector_data(),
                capstone::arch::arm::ArmVectorData::ARM_VECTORDATA_F32
                    | capstone::arch::arm::ArmVectorData::ARM_VECTORDATA_F64
                    | capstone::arch::arm::ArmVectorData::ARM_VECTORDATA_INVALID
            )
            && !is(ARM_INS_VCVT)
        {
            return None; // an integer NEON operation
        }
        if !matches!(k.class, FpMac | FpFma | FpMacD | FpFmaD) {
            k.accumulator = 0;
        }
        Some(k)
    }

    /// A load or store multiple of floating-point registers: the list is
    /// written (loads) or read (stores), the base (SP for VPUSH, VPOP)
    /// addressed and, with writeback, written.
    fn fp_multiple(
        &self,
        arm: &capstone::arch::arm::ArmInsnDetail<'_>,
        stack: bool,
        k: &mut FpKind,
        load: bool,
    ) {
        let (mut list, mut base) = (0, 0);
        for (i, op) in arm.operands().enumerate() {
            if let ArmOperandType::Reg(r) = op.op_type {
                if i == 0 && !stack && self.is_core(r) {
                    base = self.mask(r);
                } else {
                    list |= self.mask(r);
                }
            }
        }
        if stack {
            base = 1 << 13;
        }
        k.words = list.count_ones() as u8;
        k.address_regs = base;
        k.reads = base;
        k.writes = 0;
        if stack || arm.writeback() {
            k.writes |= base;
        }
        if load {
            k.writes |= list;
        } else {
            k.reads |= list;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(bytes: &[u8]) -> Vec<Insn> {
        Decoder::new(Arch::Arm)
            .unwrap()
            .decode(bytes, 0x1000, false)
            .unwrap()
    }

    fn riscv(bytes: &[u8]) -> Vec<Insn> {
        Decoder::new(Arch::Riscv)
            .unwrap()
            .decode(bytes, 0x1000, false)
            .unwrap()
    }

    #[test]
    fn compressed_two_address_forms_read_their_destination() {
        // lw t4, 0(t3) ; c.add t4, t5 ; c.addi t2, -1 ; c.mv a0, a1
        let insns = riscv(&[0x83, 0x2e, 0x0e, 0x00, 0xfa, 0x9e, 0xfd, 0x13, 0x2e, 0x85]);
        let (t2, t4, t5, a0, a1) = (1 << 7, 1 << 29, 1 << 30, 1 << 10, 1 << 11);
        assert_eq!((insns[1].reads, insns[1].writes), (t4 | t5, t4), "c.add");
        assert_eq!((insns[2].reads, insns[2].writes), (t2, t2), "c.addi");
        // c.mv is add rd, x0, rs2: its destination is not read
        assert_eq!((insns[3].reads, insns[3].writes), (a1, a0), "c.mv");
    }

    /// pico-sdk's divider delay, `b 1f; 1:`, is a B to the next
    /// instruction; `b .` (to itself) and a BNE to the next are not.
    #[test]
    fn a_b_to_the_next_instruction_is_marked() {
        let code = [
            0xff, 0xe7, // b 0x1002 (the next instruction)
            0xfe, 0xe7, // b . (0x1002)
            0xff, 0xd1, // bne 0x1006 (the next instruction)
        ];
        let insns = arm(&code);
        let marked: Vec<bool> = insns.iter().map(|i| i.jumps_to_next).collect();
        assert_eq!(marked, [true, false, false]);
        assert_eq!(insns[0].class, InsnClass::Branch);
    }

    #[test]
    fn thumb_classes() {
        // adds r0, #1 ; ldr r1, [r2] ; str r1, [r3, #4] ; bne . ; bl ; bx lr ; pop {r4, pc}
        let code = [
            0x01, 0x30, // adds r0, #1
            0x11, 0x68, // ldr r1, [r2]
            0x59, 0x60, // str r1, [r3, #4]
            0xfe, 0xd1, // bne .
            0x00, 0xf0, 0x00, 0xf8, // bl
            0x70, 0x47, // bx lr
            0x10, 0xbd, // pop {r4, pc}
        ];
        let insns = arm(&code);
        let classes: Vec<InsnClass> = insns.iter().map(|i| i.class).collect();
        use InsnClass::*;
        assert_eq!(
            classes,
            [Alu, Load, Store, BranchCond, Call, BranchIndirect, PopPc]
        );
        assert_eq!(insns[0].writes & 1, 1, "adds writes r0");
        assert_eq!(insns[1].writes, 1 << 1, "ldr writes r1");
        assert_eq!(insns[1].address_regs, 1 << 2);
        assert_eq!(insns[2].address_regs, 1 << 3);
        assert_eq!(insns[2].writes & (1 << 1), 0, "str does not write r1");
        assert_eq!(
            insns[6].transfers, 1,
            "pop {{r4, pc}} transfers r4 besides pc"
        );
        assert_eq!(insns[4].size, 4);
    }

    #[test]
    fn thumb_divide_and_multiply() {
        // udiv r0, r1, r2 ; umull r0, r1, r2, r3 ; mul r0, r1, r0
        let code = [
            0xb1, 0xfb, 0xf2, 0xf0, // udiv r0, r1, r2
            0xa2, 0xfb, 0x03, 0x01, // umull r0, r1, r2, r3
            0x48, 0x43, // muls r0, r1
        ];
        let insns = arm(&code);
        assert_eq!(insns[0].class, InsnClass::Div);
        assert_eq!(
            insns[0].dynamic,
            Some(DynamicOperands {
                a: 1,
                b: 2,
                signed: false
            })
        );
        assert_eq!(insns[1].class, InsnClass::MulLong);
        assert_eq!(insns[1].dynamic.map(|d| (d.a, d.b)), Some((2, 3)));
        assert_eq!(insns[2].class, InsnClass::Mul);
    }

    #[test]
    fn thumb_addressing_details() {
        let code = [
            0x02, 0x48, // ldr r0, [pc, #8]
            0x88, 0x50, // str r0, [r1, r2]
            0x57, 0xf8, 0x04, 0x4b, // ldr r4, [r7], #4
        ];
        let insns = arm(&code);
        // Align(0x1000 + 4, 4) + 8
        assert_eq!(insns[0].literal, Some(0x100c));
        assert!(!insns[0].register_offset);
        assert_eq!(insns[1].class, InsnClass::Store);
        assert!(insns[1].register_offset);
        assert_eq!(insns[1].literal, None);
        assert_eq!(insns[2].class, InsnClass::Load);
        assert!(insns[2].pipelinable, "writeback does not stop pipelining");
        assert_eq!(
            insns[2].writes,
            (1 << 4) | (1 << 7),
            "the base is written back"
        );
    }

    #[test]
    fn riscv_classes() {
        // addi a0,a0,1 ; lw a5,0(a0) ; sw a5,4(a1) ; bnez a5 ; j ; jal ra ; ret ; divu a0,a1,a2
        let code = [
            0x13, 0x05, 0x15, 0x00, // addi a0, a0, 1
            0x83, 0x27, 0x05, 0x00, // lw a5, 0(a0)
            0x23, 0xa2, 0xf5, 0x00, // sw a5, 4(a1)
            0x63, 0x94, 0x07, 0x00, // bnez a5, +8
            0x6f, 0x00, 0x00, 0x00, // j .
            0xef, 0x00, 0x00, 0x00, // jal ra, .
            0x82, 0x80, // ret (c.jr ra)
            0x33, 0xd5, 0xc5, 0x02, // divu a0, a1, a2
        ];
        let insns = riscv(&code);
        use InsnClass::*;
        let classes: Vec<InsnClass> = insns.iter().map(|i| i.class).collect();
        assert_eq!(
            classes,
            [
                Alu,
                Load,
                Store,
                BranchCond,
                Branch,
                Call,
                BranchIndirect,
                Div
            ]
        );
        assert_eq!(insns[1].writes, 1 << 15, "lw writes a5 (x15)");
        assert_eq!(insns[1].address_regs, 1 << 10);
        assert_eq!(insns[2].reads, (1 << 15) | (1 << 11));
        assert_eq!(insns[3].reads, 1 << 15);
        assert_eq!(insns[6].size, 2);
        assert_eq!(insns[7].dynamic.map(|d| (d.a, d.b)), Some((11, 12)));
    }

    /// FPv4/FPv5 and DSP instructions (assembled with arm-none-eabi-as
    /// -march=armv8-m.main+dsp+fp.dp): each has its own class.
    const FP_AND_DSP: [u8; 0x124] = [
        0x30, 0xee, 0x81, 0x0a, 0x30, 0xee, 0xc1, 0x0a, 0x20, 0xee, 0x81, 0x0a, 0x20, 0xee, 0xc1,
        0x0a, 0x00, 0xee, 0x81, 0x0a, 0x00, 0xee, 0xc1, 0x0a, 0x10, 0xee, 0xc1, 0x0a, 0xa0, 0xee,
        0x81, 0x0a, 0x90, 0xee, 0x81, 0x0a, 0x80, 0xee, 0x81, 0x0a, 0xb1, 0xee, 0xe0, 0x0a, 0xb0,
        0xee, 0xe0, 0x0a, 0xb1, 0xee, 0x60, 0x0a, 0xb4, 0xee, 0x60, 0x0a, 0xb5, 0xee, 0xc0, 0x0a,
        0xbd, 0xee, 0xe0, 0x0a, 0xb8, 0xee, 0x60, 0x0a, 0xba, 0xee, 0xc8, 0x0a, 0xb2, 0xee, 0x60,
        0x0a, 0xb7, 0xee, 0xe0, 0x0a, 0xb8, 0xfe, 0x60, 0x0a, 0x00, 0xfe, 0x81, 0x0a, 0x80, 0xfe,
        0x81, 0x0a, 0xb7, 0xee, 0x00, 0x0a, 0xb0, 0xee, 0x60, 0x0a, 0x10, 0xee, 0x90, 0x0a, 0x00,
        0xee, 0x90, 0x0a, 0x51, 0xec, 0x12, 0x0b, 0x41, 0xec, 0x12, 0x0b, 0x41, 0xec, 0x11, 0x0a,
        0x51, 0xec, 0x11, 0x0a, 0x31, 0xee, 0x10, 0x0b, 0x01, 0xee, 0x10, 0x0b, 0xf1, 0xee, 0x10,
        0x0a, 0xf1, 0xee, 0x10, 0xfa, 0xe1, 0xee, 0x10, 0x0a, 0x90, 0xed, 0x01, 0x0a, 0x90, 0xed,
        0x02, 0x1b, 0x80, 0xed, 0x01, 0x0a, 0x80, 0xed, 0x00, 0x1b, 0xb0, 0xec, 0x04, 0x0a, 0x90,
        0xec, 0x04, 0x0b, 0x2d, 0xed, 0x04, 0x8b, 0x2d, 0xed, 0x02, 0x8a, 0xbd, 0xec, 0x02, 0x8b,
        0x31, 0xee, 0x02, 0x0b, 0x21, 0xee, 0x02, 0x0b, 0xa1, 0xee, 0x02, 0x0b, 0x01, 0xee, 0x02,
        0x0b, 0x81, 0xee, 0x02, 0x0b, 0xb1, 0xee, 0xc1, 0x0b, 0xb0, 0xee, 0xc1, 0x0b, 0xb4, 0xee,
        0x41, 0x0b, 0xb0, 0xee, 0x41, 0x0b, 0xb7, 0xee, 0x00, 0x0b, 0x9f, 0xed, 0x02, 0x0a, 0x21,
        0xfb, 0x02, 0x30, 0xc2, 0xfb, 0xc3, 0x01, 0x91, 0xfa, 0x12, 0xf0, 0x81, 0xfa, 0x42, 0xf0,
        0x01, 0xf3, 0x07, 0x00, 0xa1, 0xf3, 0x08, 0x00, 0xc1, 0xea, 0x02, 0x40, 0x41, 0xfa, 0x82,
        0xf0, 0x3f, 0xfa, 0x81, 0xf0, 0xa1, 0xfa, 0x82, 0xf0, 0x71, 0xfb, 0x02, 0x30, 0x51, 0xfb,
        0x02, 0xf0, 0x11, 0xfb, 0x02, 0xf0, 0x31, 0xfb, 0x02, 0x30, 0x82, 0xfa, 0x81, 0xf0, 0xbf,
        0xf3, 0x2f, 0x8f, 0x90, 0xf8, 0x00, 0xf0,
    ];

    #[test]
    fn floating_point_and_dsp_instructions_have_classes_of_their_own() {
        use InsnClass::*;
        let insns = arm(&FP_AND_DSP);
        let classes: Vec<InsnClass> = insns.iter().map(|i| i.class).collect();
        #[rustfmt::skip]
        let expected = [
            // vadd vsub vmul vnmul vmla vmls vnmla vfma vfnms vdiv vsqrt
            FpAdd, FpAdd, FpMul, FpMul, FpMac, FpMac, FpMac, FpFma, FpFma, FpDiv, FpSqrt,
            // vabs vneg vcmp vcmpe, vcvt x4, vcvt.f64.f32, vrinta, vseleq, vmaxnm
            FpAbs, FpAbs, FpCmp, FpCmp, FpCvt, FpCvt, FpCvt, FpCvt, FpAluD, FpCvt, FpSelect, FpSelect,
            // vmov #imm, vmov s,s, vmov r,s, vmov s,r, four two-word vmovs, two half-double vmovs
            FpMove, FpMove, FpTransfer, FpTransfer, FpTransfer2, FpTransfer2, FpTransfer2,
            FpTransfer2, FpTransfer, FpTransfer,
            // vmrs x2, vmsr, vldr s/d, vstr s/d, vldm x2, vpush x2, vpop
            FpStatus, FpStatus, FpStatus, FpLoad, FpLoad, FpStore, FpStore, FpLoadMultiple,
            FpLoadMultiple, FpStoreMultiple, FpStoreMultiple, FpLoadMultiple,
            // the double-precision forms
            FpAddD, FpMulD, FpFmaD, FpMacD, FpDivD, FpSqrtD, FpAluD, FpAluD, FpAluD, FpAluD,
            // vldr [pc]
            FpLoad,
            // smlad smlald qadd16 uadd8 ssat usat16 pkhbt sxtab uxtb16 sel usada8
            DspMla, DspMlaLong, Dsp, Dsp, Saturate, Dsp, Dsp, Dsp, Dsp, Dsp, Dsp,
            // smmul smulbb smlawb qadd clrex pld
            DspMul, DspMul, DspMla, Dsp, System, Nop,
        ];
        assert_eq!(classes, expected);
        let s = |n: u32| arm_s(n);
        // vmla.f32 s0, s1, s2: reads its accumulator late
        assert_eq!(insns[4].late_reads, s(0));
        assert_eq!(insns[4].writes, s(0));
        assert_eq!(insns[4].reads, s(0) | s(1) | s(2));
        // vmov r0, s1: one float (N = 1); vmov.32 r0, d1[1]: half a double
        assert_eq!(insns[25].transfers, 1);
        assert_eq!(insns[31].transfers, 0);
        // vldr s0 / d1: one and two words; vldmia r0!, {s0-s3}: four, base written
        assert_eq!((insns[36].transfers, insns[37].transfers), (1, 2));
        assert_eq!(insns[40].transfers, 4);
        assert_eq!(insns[40].writes, 1 | s(0) | s(1) | s(2) | s(3));
        // vpush {d8-d9}: four words read, SP written
        assert_eq!(insns[42].transfers, 4);
        assert_eq!(insns[42].reads & (s(16) | s(19)), s(16) | s(19));
        assert_eq!(insns[42].writes, 1 << 13);
        // vldr s0, [pc, #8]: a literal
        assert_eq!(insns[55].literal, Some((0x10dc + 4 + 8) & !3));
        // smlad r0, r1, r2, r3: r3 is the accumulator
        assert_eq!(insns[56].late_reads, 1 << 3);
    }

    #[test]
    fn instructions_without_a_class_are_unclassified() {
        // mcr p15, 0, r0, c7, c5, 4 (a coprocessor write); a NEON vadd.i32 q0, q1, q2
        let code = [0x07, 0xee, 0x95, 0x0f, 0x22, 0xef, 0x44, 0x08];
        let insns = arm(&code);
        assert!(!insns.is_empty());
        assert!(
            insns.iter().all(|i| i.class == InsnClass::Unclassified),
            "{insns:?}"
        );
    }

    #[test]
    fn flags_and_shifted_operands_are_seen() {
        // adds r0, #1 ; add.w r0, r1, r2, lsl #3 ; add.w r0, r1, #0x1fc0 ;
        // eor.w r0, r1, #0x1b1b1b1b ; bne
        let code = [
            0x01, 0x30, 0x01, 0xeb, 0xc2, 0x00, 0x01, 0xf5, 0xfe, 0x50, 0x81, 0xf0, 0x1b, 0x30,
            0xfe, 0xd1,
        ];
        let insns = arm(&code);
        assert_ne!(insns[0].writes & ARM_FLAGS, 0);
        assert!(!insns[0].shifted);
        assert!(insns[1].shifted, "a shifted register");
        assert!(insns[2].shifted, "a rotated immediate");
        assert!(!insns[3].shifted, "a replicated byte pattern");
        assert_ne!(insns[4].reads & ARM_FLAGS, 0);
        assert_eq!(insns[4].branch, BranchKind::Conditional);
    }

    #[test]
    fn riscv_returns_calls_and_jumps_are_told_apart() {
        // jal ra ; j ; ret (c.jr ra) ; jalr ra, a5 (call) ; jr a5 ; lbu a0, 0(a1)
        let code = [
            0xef, 0x00, 0x00, 0x00, 0x6f, 0x00, 0x00, 0x00, 0x82, 0x80, 0xe7, 0x80, 0x07, 0x00,
            0x67, 0x80, 0x07, 0x00, 0x03, 0xc5, 0x05, 0x00,
        ];
        let kinds: Vec<BranchKind> = riscv(&code).iter().map(|i| i.branch).collect();
        use BranchKind::*;
        assert_eq!(
            kinds,
            [Call, Jump, Return, IndirectCall, Indirect, BranchKind::None]
        );
        assert!(riscv(&code)[5].subword);
    }

    #[test]
    fn decoding_stops_after_a_branch_when_asked() {
        let code = [0x01, 0x30, 0xfe, 0xd1, 0x01, 0x30];
        let d = Decoder::new(Arch::Arm).unwrap();
        assert_eq!(d.decode(&code, 0, true).unwrap().len(), 2);
        assert_eq!(d.decode(&code, 0, false).unwrap().len(), 3);
    }
}

//! Decoding machine code into the cycle model's [`Insn`]s with capstone.
//!
//! Classification is by capstone instruction id and operands, never by
//! capstone's instruction groups: Capstone 5 tags neither `pop {.., pc}` nor
//! PC-writing loads as jumps on ARM, and tags every RISC-V `jal`/`jalr` as a
//! call, even `j` and `ret` (see ARCHITECTURE.md, "Cycle model").

use crate::model::cycles::{DynamicOperands, Insn, RegMask};
use crate::model::target::{Arch, InsnClass};
use capstone::arch::arm::{ArmCC, ArmInsn, ArmOperandType};
use capstone::arch::riscv::{RiscVInsn, RiscVOperand};
use capstone::arch::{
    self, ArchDetail, ArchOperand, BuildsCapstone, BuildsCapstoneExtraMode, DetailsArchInsn,
};
use capstone::{Capstone, RegId};
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

fn register_number(arch: Arch, name: &str) -> Option<u8> {
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
        for id in 1..400u16 {
            if let Some(name) = cs.reg_name(RegId(id)) {
                if let Some(n) = register_number(arch, &name) {
                    reg_numbers.insert(id, n);
                }
            }
        }
        Ok(Decoder {
            arch,
            cs,
            reg_numbers,
        })
    }

    fn reg(&self, id: RegId) -> Option<u8> {
        self.reg_numbers.get(&id.0).copied()
    }

    fn mask(&self, id: RegId) -> RegMask {
        self.reg(id).map_or(0, |n| 1 << n)
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
        let conditional = !matches!(arm.cc(), ArmCC::ARM_CC_AL | ArmCC::ARM_CC_INVALID);
        let kind = arm_class(id, conditional, arm.writeback(), &mut ops);
        let class = kind.class;
        Ok(Insn {
            addr: raw.address(),
            size: raw.len() as u8,
            class,
            transfers: kind.transfers,
            reads: ops.reads,
            writes: ops.writes,
            address_regs: ops.address_regs,
            pipelinable: kind.pipelinable,
            register_offset: ops.register_offset
                && matches!(class, InsnClass::Load | InsnClass::Store),
            literal: ops.literal.filter(|_| class == InsnClass::Load),
            dynamic: kind.dynamic,
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
        for op in arm.operands() {
            match op.op_type {
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
        let class = if is(RISCV_INS_JAL) || is(RISCV_INS_C_J) || is(RISCV_INS_C_JAL) {
            // capstone prints `j` and `jal` without rd, so read rd (bits
            // 11:7) from the encoding; `c.j` links nothing, `c.jal` links ra.
            let bytes = raw.bytes();
            let jal_rd = (u32::from(bytes[1]) << 8 | u32::from(bytes[0])) >> 7 & 0x1f;
            let links = is(RISCV_INS_C_JAL) || (is(RISCV_INS_JAL) && jal_rd != 0);
            if links {
                InsnClass::Call
            } else {
                InsnClass::Branch
            }
        } else if is(RISCV_INS_JALR) || is(RISCV_INS_C_JR) || is(RISCV_INS_C_JALR) {
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
            InsnClass::BranchCond
        } else if [
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
            || is_riscv_amo(raw.mnemonic().unwrap_or(""))
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
        } else if is(RISCV_INS_DIV) || is(RISCV_INS_DIVU) || is(RISCV_INS_REM) || is(RISCV_INS_REMU)
        {
            dynamic = two_operands(&regs, 1, is(RISCV_INS_DIV) || is(RISCV_INS_REM));
            InsnClass::Div
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
        } else {
            InsnClass::Alu
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
    } else if is(ARM_INS_MRS)
        || is(ARM_INS_MSR)
        || is(ARM_INS_CPS)
        || is(ARM_INS_SVC)
        || is(ARM_INS_BKPT)
        || is(ARM_INS_UDF)
    {
        InsnClass::System
    } else if is_dsp_multiply(id) {
        InsnClass::Mul
    } else if ops.writes & (1 << ARM_PC) != 0 {
        // MOV PC, Rm / ADD PC, Rm
        InsnClass::BranchIndirect
    } else {
        InsnClass::Alu
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

fn is_dsp_multiply(id: u32) -> bool {
    use ArmInsn::*;
    [
        ARM_INS_SMULBB,
        ARM_INS_SMULBT,
        ARM_INS_SMULTB,
        ARM_INS_SMULTT,
        ARM_INS_SMULWB,
        ARM_INS_SMULWT,
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
        ARM_INS_SMUAD,
        ARM_INS_SMUADX,
        ARM_INS_SMUSD,
        ARM_INS_SMUSDX,
        ARM_INS_SMMUL,
        ARM_INS_SMMULR,
        ARM_INS_SMMLA,
        ARM_INS_SMMLAR,
        ARM_INS_SMMLS,
        ARM_INS_SMMLSR,
        ARM_INS_SMLALBB,
        ARM_INS_SMLALBT,
        ARM_INS_SMLALTB,
        ARM_INS_SMLALTT,
        ARM_INS_SMLALD,
        ARM_INS_SMLALDX,
        ARM_INS_SMLSLD,
        ARM_INS_SMLSLDX,
    ]
    .iter()
    .any(|i| *i as u32 == id)
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

    #[test]
    fn decoding_stops_after_a_branch_when_asked() {
        let code = [0x01, 0x30, 0xfe, 0xd1, 0x01, 0x30];
        let d = Decoder::new(Arch::Arm).unwrap();
        assert_eq!(d.decode(&code, 0, true).unwrap().len(), 2);
        assert_eq!(d.decode(&code, 0, false).unwrap().len(), 3);
    }
}

//! Control-flow graphs of guest functions, recovered from the machine code.
//!
//! Decoding is recursive descent from the function's entry (not a linear
//! sweep): Thumb functions keep literal pools inside their symbol's range,
//! and decoding those as instructions would invent blocks. Classes come from
//! [`crate::model::decode::Decoder`] (the machine's own classification); branch
//! targets and immediates, which `cycles::Insn` does not carry, come from a
//! capstone instance of this module (ARM) or from the encoding (RISC-V).
//!
//! Blocks end after every control-flow instruction, calls included, as
//! Unicorn's translation blocks do; so every translation block the machine
//! reports starts at a block start of this graph or in code outside it.

use crate::image::elf::{Function, GuestImage};
use crate::model::decode::Decoder;
use crate::model::target::{Arch, InsnClass};
use capstone::arch::arm::{ArmCC, ArmOperandType};
use capstone::arch::DetailsArchInsn;
use capstone::Capstone;
use std::collections::{BTreeMap, BTreeSet};

use super::error::SirGenError;

/// How an instruction passes control on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// To the next instruction.
    Next,
    /// Unconditionally to a known address (may be another function: a tail call).
    Jump(u64),
    /// To a known address or the next instruction.
    CondJump(u64),
    /// A call with link; `None` for an indirect call. Returns to the next instruction.
    Call(Option<u64>),
    /// A return, or an indirect jump whose targets are unknown (tables too).
    Leave,
}

/// One decoded instruction of the graph.
#[derive(Debug, Clone)]
pub struct CfgInsn {
    pub addr: u64,
    pub size: u8,
    pub class: InsnClass,
    pub flow: Flow,
    /// Conditionally executed (ARM IT block): also falls through.
    pub conditional: bool,
    /// Writes the second argument register (r1 / a1).
    pub writes_arg1: bool,
    /// The immediate it moves into the second argument register.
    pub arg1_immediate: Option<i64>,
    pub is_memory: bool,
}

impl CfgInsn {
    pub fn next(&self) -> u64 {
        self.addr + u64::from(self.size)
    }

    fn ends_block(&self) -> bool {
        self.flow != Flow::Next
    }
}

/// A basic block: straight-line instructions ending at a control transfer or
/// before a branch target.
#[derive(Debug, Clone)]
pub struct Block {
    pub start: u64,
    /// Address after the last instruction.
    pub end: u64,
    /// Indices into [`FunctionCfg::insns`].
    pub insns: std::ops::Range<usize>,
    /// Successor block starts inside the function.
    pub succs: Vec<u64>,
}

/// The graph of one function.
#[derive(Debug, Clone)]
pub struct FunctionCfg {
    pub addr: u64,
    pub end: u64,
    /// Reachable instructions in address order.
    pub insns: Vec<CfgInsn>,
    /// Blocks by start address.
    pub blocks: BTreeMap<u64, Block>,
}

impl FunctionCfg {
    pub fn block_insns(&self, block: &Block) -> &[CfgInsn] {
        &self.insns[block.insns.clone()]
    }

    /// The last instruction of `block`.
    pub fn last(&self, block: &Block) -> &CfgInsn {
        &self.insns[block.insns.end - 1]
    }
}

/// Decodes one instruction into a [`CfgInsn`].
pub struct InsnDecoder {
    arch: Arch,
    decoder: Decoder,
    cs: Capstone,
}

impl std::fmt::Debug for InsnDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InsnDecoder")
            .field("arch", &self.arch)
            .finish()
    }
}

const ARM_R1: u64 = 1 << 1;
const RISCV_A1: u64 = 1 << 11;

impl InsnDecoder {
    pub fn new(arch: Arch) -> Result<InsnDecoder, SirGenError> {
        let decoder = Decoder::new(arch).map_err(|e| SirGenError::Decode(e.to_string()))?;
        let cs = crate::model::decode::capstone_for(arch)
            .map_err(|e| SirGenError::Decode(e.to_string()))?;
        Ok(InsnDecoder { arch, decoder, cs })
    }

    /// Decodes the instruction at the start of `code` (address `addr`);
    /// `None` if the bytes are no instruction.
    pub fn decode(&self, code: &[u8], addr: u64) -> Option<CfgInsn> {
        let code = &code[..code.len().min(4)];
        let insn = self
            .decoder
            .decode(code, addr, true)
            .ok()?
            .into_iter()
            .next()?;
        let mut out = CfgInsn {
            addr,
            size: insn.size,
            class: insn.class,
            flow: Flow::Next,
            conditional: false,
            writes_arg1: false,
            arg1_immediate: None,
            is_memory: matches!(
                insn.class,
                InsnClass::Load
                    | InsnClass::Store
                    | InsnClass::LoadMultiple
                    | InsnClass::StoreMultiple
            ),
        };
        let raw = &code[..usize::from(insn.size).min(code.len())];
        match self.arch {
            Arch::Arm => {
                out.writes_arg1 = insn.writes & ARM_R1 != 0;
                self.arm_details(raw, &mut out);
            }
            Arch::Riscv => {
                out.writes_arg1 = insn.writes & RISCV_A1 != 0;
                riscv_details(raw, &mut out);
            }
        }
        Some(out)
    }

    fn arm_details(&self, raw: &[u8], out: &mut CfgInsn) {
        let Ok(insns) = self.cs.disasm_count(raw, out.addr, 1) else {
            return;
        };
        let Some(cs_insn) = insns.iter().next() else {
            return;
        };
        let Ok(detail) = self.cs.insn_detail(cs_insn) else {
            return;
        };
        let arch_detail = detail.arch_detail();
        let Some(arm) = arch_detail.arm() else {
            return;
        };
        let ops: Vec<ArmOperandType> = arm.operands().map(|o| o.op_type).collect();
        let imm = ops.iter().rev().find_map(|o| match o {
            ArmOperandType::Imm(v) => Some(i64::from(*v) & 0xffff_ffff),
            _ => None,
        });
        let mnemonic = cs_insn.mnemonic().unwrap_or("");
        let op_str = cs_insn.op_str().unwrap_or("");
        let conditional = !matches!(arm.cc(), ArmCC::ARM_CC_AL | ArmCC::ARM_CC_INVALID);
        out.flow = match out.class {
            InsnClass::Branch => imm.map_or(Flow::Leave, |t| Flow::Jump(t as u64)),
            InsnClass::BranchCond => imm.map_or(Flow::Leave, |t| Flow::CondJump(t as u64)),
            InsnClass::Call => Flow::Call(imm.map(|t| t as u64)),
            // blx rN calls; bx lr / bx rN / mov pc leave.
            InsnClass::BranchIndirect if mnemonic.starts_with("blx") => Flow::Call(None),
            InsnClass::BranchIndirect | InsnClass::TableBranch | InsnClass::PopPc => Flow::Leave,
            _ => Flow::Next,
        };
        // A conditional B<cc> is already CondJump; other conditional
        // transfers (in an IT block) also fall through.
        out.conditional = conditional && out.class != InsnClass::BranchCond;
        // `movs r1, #imm` / `mov.w r1, #imm` / `movw r1, #imm`
        if out.writes_arg1 && mnemonic.starts_with("mov") && !mnemonic.starts_with("movt") {
            if let [ArmOperandType::Reg(_), ArmOperandType::Imm(v)] = ops.as_slice() {
                if op_str.starts_with("r1,") {
                    out.arg1_immediate = Some(i64::from(*v));
                }
            }
        }
    }

    /// Decodes the reachable code of `function` into blocks.
    pub fn function_cfg(&self, image: &GuestImage, function: &Function) -> FunctionCfg {
        let start = function.addr;
        let end = function.addr + function.size.max(1);
        let mut insns: BTreeMap<u64, CfgInsn> = BTreeMap::new();
        let mut leaders: BTreeSet<u64> = BTreeSet::from([start]);
        let mut work = vec![start];
        while let Some(mut pc) = work.pop() {
            // Decode straight-line code from `pc` until a transfer or known code.
            while pc >= start && pc < end && !insns.contains_key(&pc) {
                let avail = (end - pc).min(4) as usize;
                let Some(code) = image.bytes_at(pc, avail) else {
                    break;
                };
                let Some(insn) = self.decode(code, pc) else {
                    break;
                };
                let next = insn.next();
                let flow = insn.flow;
                let conditional = insn.conditional;
                insns.insert(pc, insn);
                match flow {
                    Flow::Next => {
                        pc = next;
                        continue;
                    }
                    Flow::Jump(t) | Flow::CondJump(t) => {
                        if t >= start && t < end {
                            leaders.insert(t);
                            work.push(t);
                        }
                    }
                    Flow::Call(_) | Flow::Leave => {}
                }
                let falls = matches!(flow, Flow::CondJump(_) | Flow::Call(_)) || conditional;
                if falls && next < end {
                    leaders.insert(next);
                    work.push(next);
                }
                break;
            }
        }
        let insns: Vec<CfgInsn> = insns.into_values().collect();
        let mut blocks = BTreeMap::new();
        let mut i = 0;
        while i < insns.len() {
            let first = i;
            loop {
                let insn = &insns[i];
                i += 1;
                let contiguous = insns.get(i).is_some_and(|n| n.addr == insn.next());
                if insn.ends_block() || !contiguous || leaders.contains(&insns[i].addr) {
                    break;
                }
            }
            let last = &insns[i - 1];
            let mut succs = Vec::new();
            let falls = match last.flow {
                Flow::Next => true,
                Flow::Jump(t) => {
                    succs.push(t);
                    last.conditional
                }
                Flow::CondJump(t) => {
                    succs.push(t);
                    true
                }
                Flow::Call(_) => true,
                Flow::Leave => last.conditional,
            };
            if falls {
                succs.push(last.next());
            }
            succs.retain(|s| {
                *s >= start && *s < end && insns.binary_search_by_key(s, |i| i.addr).is_ok()
            });
            succs.dedup();
            let start_addr = insns[first].addr;
            blocks.insert(
                start_addr,
                Block {
                    start: start_addr,
                    end: last.next(),
                    insns: first..i,
                    succs,
                },
            );
        }
        FunctionCfg {
            addr: start,
            end,
            insns,
            blocks,
        }
    }
}

fn sext(value: u32, bits: u32) -> i64 {
    let shift = 32 - bits;
    i64::from(((value << shift) as i32) >> shift)
}

/// Targets, calls and `li a1, imm` from the RISC-V encoding (RV32IC): the
/// encoding is unambiguous where capstone's operand conventions vary.
fn riscv_details(raw: &[u8], out: &mut CfgInsn) {
    let pc = out.addr;
    let target = |offset: i64| (pc as i64).wrapping_add(offset) as u64 & 0xffff_ffff;
    if raw.len() >= 4 && out.size == 4 {
        let w = u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]);
        let opcode = w & 0x7f;
        let rd = (w >> 7) & 0x1f;
        let rs1 = (w >> 15) & 0x1f;
        match opcode {
            0x6f => {
                // JAL: imm[20|10:1|11|19:12]
                let imm = ((w >> 31) & 1) << 20
                    | ((w >> 21) & 0x3ff) << 1
                    | ((w >> 20) & 1) << 11
                    | ((w >> 12) & 0xff) << 12;
                let t = target(sext(imm, 21));
                out.flow = if rd == 0 {
                    Flow::Jump(t)
                } else {
                    Flow::Call(Some(t))
                };
            }
            0x67 => {
                // JALR: a call if it links, else a return or indirect jump.
                out.flow = if rd != 0 {
                    Flow::Call(None)
                } else {
                    Flow::Leave
                };
            }
            0x63 => {
                // B-type: imm[12|10:5] rs2 rs1 funct3 imm[4:1|11]
                let imm = ((w >> 31) & 1) << 12
                    | ((w >> 25) & 0x3f) << 5
                    | ((w >> 8) & 0xf) << 1
                    | ((w >> 7) & 1) << 11;
                out.flow = Flow::CondJump(target(sext(imm, 13)));
            }
            0x13 if (w >> 12) & 7 == 0 && rs1 == 0 && rd == 11 => {
                // addi a1, zero, imm (li a1, imm)
                out.arg1_immediate = Some(sext(w >> 20, 12));
            }
            _ => {}
        }
    } else if raw.len() >= 2 && out.size == 2 {
        let h = u32::from(u16::from_le_bytes([raw[0], raw[1]]));
        let quadrant = h & 3;
        let funct3 = h >> 13;
        match (quadrant, funct3) {
            (1, 0b101) | (1, 0b001) => {
                // C.J / C.JAL: offset[11|4|9:8|10|6|7|3:1|5]
                let imm = ((h >> 12) & 1) << 11
                    | ((h >> 11) & 1) << 4
                    | ((h >> 9) & 3) << 8
                    | ((h >> 8) & 1) << 10
                    | ((h >> 7) & 1) << 6
                    | ((h >> 6) & 1) << 7
                    | ((h >> 3) & 7) << 1
                    | ((h >> 2) & 1) << 5;
                let t = target(sext(imm, 12));
                out.flow = if funct3 == 0b101 {
                    Flow::Jump(t)
                } else {
                    Flow::Call(Some(t))
                };
            }
            (1, 0b110) | (1, 0b111) => {
                // C.BEQZ / C.BNEZ: offset[8|4:3] rs1' offset[7:6|2:1|5]
                let imm = ((h >> 12) & 1) << 8
                    | ((h >> 10) & 3) << 3
                    | ((h >> 5) & 3) << 6
                    | ((h >> 3) & 3) << 1
                    | ((h >> 2) & 1) << 5;
                out.flow = Flow::CondJump(target(sext(imm, 9)));
            }
            (1, 0b010) if (h >> 7) & 0x1f == 11 => {
                // C.LI a1, imm[5|4:0]
                let imm = ((h >> 12) & 1) << 5 | ((h >> 2) & 0x1f);
                out.arg1_immediate = Some(sext(imm, 6));
            }
            (2, 0b100) if (h >> 2) & 0x1f == 0 && (h >> 7) & 0x1f != 0 => {
                // C.JR (bit 12 clear) / C.JALR (bit 12 set)
                let link = (h >> 12) & 1 == 1;
                out.flow = if link { Flow::Call(None) } else { Flow::Leave };
            }
            _ => {}
        }
    }
}

/// The immediate loaded into the second argument register before the call
/// at index `call` of `insns` (the section id of an `arp_enter*` call):
/// scans back over straight-line code until an instruction writes the
/// register. `None` if another instruction writes it first or control flow
/// intervenes.
pub fn arg1_before(insns: &[CfgInsn], call: usize) -> Option<i64> {
    let mut i = call;
    let mut steps = 0;
    while i > 0 && steps < 16 {
        i -= 1;
        steps += 1;
        let insn = &insns[i];
        if insn.flow != Flow::Next || insn.next() != insns[i + 1].addr {
            return None;
        }
        if insn.arg1_immediate.is_some() {
            return insn.arg1_immediate;
        }
        if insn.writes_arg1 {
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm_insns(code: &[u8], addr: u64) -> Vec<CfgInsn> {
        let d = InsnDecoder::new(Arch::Arm).unwrap();
        let mut out = Vec::new();
        let mut off = 0;
        while off < code.len() {
            let i = d.decode(&code[off..], addr + off as u64).unwrap();
            off += usize::from(i.size);
            out.push(i);
        }
        out
    }

    #[test]
    fn thumb_targets_and_section_ids() {
        // 0x1000: movs r1, #2 ; movs r0, #1 ; bl 0x1010 ; bne 0x1000 ; bx lr
        let code = [
            0x02, 0x21, // movs r1, #2
            0x01, 0x20, // movs r0, #1
            0x00, 0xf0, 0x04, 0xf8, // bl 0x1010
            0xfa, 0xd1, // bne 0x1000
            0x70, 0x47, // bx lr
        ];
        let insns = arm_insns(&code, 0x1000);
        assert_eq!(insns[0].arg1_immediate, Some(2));
        assert!(insns[0].writes_arg1);
        assert_eq!(insns[1].arg1_immediate, None);
        assert_eq!(insns[2].flow, Flow::Call(Some(0x1010)));
        assert_eq!(insns[3].flow, Flow::CondJump(0x1000));
        assert_eq!(insns[4].flow, Flow::Leave);
        assert_eq!(arg1_before(&insns, 2), Some(2));
    }

    #[test]
    fn a_register_move_into_r1_hides_the_section_id() {
        // movs r1, #2 ; mov r1, r3 ; bl
        let code = [0x02, 0x21, 0x19, 0x46, 0x00, 0xf0, 0x04, 0xf8];
        let insns = arm_insns(&code, 0x1000);
        assert!(insns[1].writes_arg1);
        assert_eq!(arg1_before(&insns, 2), None);
    }

    #[test]
    fn riscv_targets_from_the_encoding() {
        let d = InsnDecoder::new(Arch::Riscv).unwrap();
        // bnez a5, +8 (beq-type at 0x100)
        let i = d.decode(&[0x63, 0x94, 0x07, 0x00], 0x100).unwrap();
        assert_eq!(i.flow, Flow::CondJump(0x108));
        // jal ra, -16
        let i = d.decode(&[0xef, 0xf0, 0x1f, 0xff], 0x100).unwrap();
        assert_eq!(i.flow, Flow::Call(Some(0xf0)));
        // j . (jal x0, 0)
        let i = d.decode(&[0x6f, 0x00, 0x00, 0x00], 0x100).unwrap();
        assert_eq!(i.flow, Flow::Jump(0x100));
        // ret (c.jr ra)
        let i = d.decode(&[0x82, 0x80], 0x100).unwrap();
        assert_eq!(i.flow, Flow::Leave);
        // c.li a1, 5
        let i = d.decode(&[0x95, 0x45], 0x100).unwrap();
        assert_eq!(i.arg1_immediate, Some(5));
        // li a1, 100 (addi a1, zero, 100)
        let i = d.decode(&[0x93, 0x05, 0x40, 0x06], 0x100).unwrap();
        assert_eq!(i.arg1_immediate, Some(100));
        // c.j -4 at 0x104 -> 0x100
        let i = d.decode(&[0xf5, 0xbf], 0x104).unwrap();
        assert_eq!(i.flow, Flow::Jump(0x100));
        // c.beqz a5, +12 at 0x100
        let i = d.decode(&[0x91, 0xc7], 0x100).unwrap();
        assert_eq!(i.flow, Flow::CondJump(0x10c));
    }
}

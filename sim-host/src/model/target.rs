//! Target descriptions: one TOML file per core in `targets/`.
//!
//! A target file says everything sim-host and the guest build need to know
//! about a core: architecture, the Unicorn CPU model, clock, memory map, how
//! guests are compiled for it, and the cycle table the cycle model prices
//! instructions with. The serde structs below are the file format (with
//! `deny_unknown_fields`, so a typo is an error, not a silently ignored
//! setting); [`Target::load`] converts them into the validated [`Target`].
//!
//! Invariants of a loaded [`Target`]:
//! - memory regions are non-empty, 4 KiB aligned in start and size (Unicorn
//!   maps whole pages), and do not overlap;
//! - no two ranges a run maps overlap: regions, the PPB on ARM, the machine
//!   timer's pages, FLASH_ACR's and XIP_CTRL's pages, the XIP maintenance
//!   window ([`check_mapped_ranges`]), so Unicorn never refuses a mapping;
//! - the cycle table has every instruction class the architecture needs
//!   ([`InsnClass::required_for`]), each entry with a citation;
//! - clock and default core count are positive.

use crate::model::limits::MAX_CORES;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Unicorn maps memory in pages of this size.
pub const PAGE_SIZE: u64 = 4096;

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Syntax { file: PathBuf, message: String },
    #[error("{file}: field `{field}`: {message}")]
    Invalid {
        file: PathBuf,
        field: String,
        message: String,
    },
    #[error("unknown target `{name}`; known targets: {known} (a target file of your own: --target-file PATH.toml, or a folder of them in SIM_HOST_TARGET_PATH)")]
    Unknown { name: String, known: String },
}

pub use crate::model::isa::Arch;

/// What a memory region is; decides default access and how the report names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RegionKind {
    Flash,
    Rom,
    Ram,
}

/// Read / write / execute permissions of a region, written like `"rwx"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Access {
    pub read: bool,
    pub write: bool,
    pub execute: bool,
}

impl Access {
    fn parse(text: &str) -> Option<Access> {
        let mut access = Access::default();
        for c in text.chars() {
            let flag = match c {
                'r' => &mut access.read,
                'w' => &mut access.write,
                'x' => &mut access.execute,
                _ => return None,
            };
            if *flag {
                return None;
            }
            *flag = true;
        }
        Some(access)
    }
}

impl fmt::Display for Access {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let flag = |on: bool, c: char| if on { c } else { '-' };
        write!(
            f,
            "{}{}{}",
            flag(self.read, 'r'),
            flag(self.write, 'w'),
            flag(self.execute, 'x')
        )
    }
}

/// Declares [`InsnClass`] once: each class with its documentation, its
/// name in target files, whether a cycle table for Arm and for RISC-V
/// must price it, and the execution unit it uses (a `busy` row occupies
/// that unit; a dual-issue pair may not use a unit more often than the
/// target's `[cycles.issue.units]` allow).
macro_rules! insn_classes {
    ($($(#[doc = $doc:literal])* $class:ident = $name:literal, arm: $arm:literal, riscv: $riscv:literal, unit: $unit:ident;)*) => {
        /// The instruction classes of the cycle table. The decoder maps every
        /// instruction to one of these ([`InsnClass::Unclassified`] when it
        /// knows no class for it: such an instruction is never priced).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
        pub enum InsnClass {
            $($(#[doc = $doc])* #[serde(rename = $name)] $class,)*
            /// An instruction the decoder knows no class for (a coprocessor
            /// or A-profile instruction, NEON): no cycle table prices it.
            #[serde(skip)]
            Unclassified,
        }

        impl InsnClass {
            /// Every class a cycle table can price.
            pub const ALL: &'static [InsnClass] = &[$(InsnClass::$class),*];

            /// The class's name in target files.
            pub fn name(self) -> &'static str {
                match self {
                    $(InsnClass::$class => $name,)*
                    InsnClass::Unclassified => "unclassified",
                }
            }

            /// Whether every cycle table for `arch` must price the class.
            fn required_on(self, arch: Arch) -> bool {
                match (self, arch) {
                    $((InsnClass::$class, Arch::Arm) => $arm,
                      (InsnClass::$class, Arch::Riscv) => $riscv,)*
                    (InsnClass::Unclassified, _) => false,
                }
            }

            /// The execution unit the class uses.
            pub fn unit(self) -> Unit {
                match self {
                    $(InsnClass::$class => Unit::$unit,)*
                    InsnClass::Unclassified => Unit::Alu,
                }
            }
        }
    };
}

insn_classes! {
    /// Data processing: add, sub, logical, shifts, moves, compares, extends,
    /// bit-field, reverse, count leading zeros, address generation, LUI/AUIPC.
    Alu = "alu", arm: true, riscv: true, unit: Alu;
    /// 32x32 -> 32 multiply (MUL, MULS; RISC-V MUL).
    Mul = "mul", arm: true, riscv: true, unit: Mac;
    /// Multiply-accumulate 32-bit (MLA, MLS).
    Mla = "mla", arm: false, riscv: false, unit: Mac;
    /// 32x32 -> 64 multiply (UMULL, SMULL; RISC-V MULH, MULHU, MULHSU).
    MulLong = "mul_long", arm: false, riscv: true, unit: Mac;
    /// 64-bit multiply-accumulate (UMLAL, SMLAL, UMAAL).
    MlaLong = "mla_long", arm: false, riscv: false, unit: Mac;
    /// Integer divide and remainder (SDIV, UDIV; RISC-V DIV, DIVU, REM, REMU).
    Div = "div", arm: false, riscv: true, unit: Mac;
    /// DSP extension multiplies with a 32-bit result: halfword and word
    /// by halfword (SMULxy, SMULWy), dual (SMUAD, SMUSD), most significant
    /// word (SMMUL).
    DspMul = "dsp_mul", arm: false, riscv: false, unit: Mac;
    /// DSP extension multiply-accumulates with a 32-bit accumulator
    /// (SMLAxy, SMLAWy, SMLAD, SMLSD, SMMLA, SMMLS).
    DspMla = "dsp_mla", arm: false, riscv: false, unit: Mac;
    /// DSP extension multiply-accumulates with a 64-bit accumulator
    /// (SMLALxy, SMLALD, SMLSLD).
    DspMlaLong = "dsp_mla_long", arm: false, riscv: false, unit: Mac;
    /// DSP extension, not multiplying: parallel (SIMD) add and subtract
    /// (SADD16, UADD8, QADD16, SHSUB8 ...), saturating add and subtract
    /// (QADD, QDSUB ...), SEL, USAD8, USADA8, pack (PKHBT, PKHTB), extend
    /// with add and dual extends (SXTAB, UXTAB16, SXTB16 ...), SSAT16, USAT16.
    Dsp = "dsp", arm: false, riscv: false, unit: Alu;
    /// Saturate (SSAT, USAT; ARMv7-M).
    Saturate = "saturate", arm: false, riscv: false, unit: Alu;
    /// Single load (LDR, LDRB, LDRH, LDRSB, LDRSH, LDRD counts as two).
    Load = "load", arm: true, riscv: true, unit: Load;
    /// Single store (STR, STRB, STRH).
    Store = "store", arm: true, riscv: true, unit: Store;
    /// Load multiple / POP without PC: cost `cycles + per_register * N`.
    LoadMultiple = "load_multiple", arm: true, riscv: false, unit: Load;
    /// Store multiple / PUSH: cost `cycles + per_register * N`.
    StoreMultiple = "store_multiple", arm: true, riscv: false, unit: Store;
    /// Direct unconditional branch (B, RISC-V JAL x0).
    Branch = "branch", arm: true, riscv: true, unit: Branch;
    /// Conditional branch (B<cond>, CBZ, CBNZ, RISC-V Bxx).
    BranchCond = "branch_cond", arm: true, riscv: true, unit: Branch;
    /// Call with link (BL, RISC-V JAL ra).
    Call = "call", arm: true, riscv: true, unit: Branch;
    /// Indirect branch or call (BX, BLX, MOV PC, RISC-V JALR).
    BranchIndirect = "branch_indirect", arm: true, riscv: true, unit: Branch;
    /// Table branch (TBB, TBH).
    TableBranch = "table_branch", arm: false, riscv: false, unit: Load;
    /// POP or LDM that loads PC: `cycles + per_register * N` plus refill.
    PopPc = "pop_pc", arm: true, riscv: false, unit: Load;
    /// IT instruction.
    It = "it", arm: false, riscv: false, unit: Branch;
    /// NOP and hints (YIELD, SEV, WFE, WFI, DBG, CSDB), preloads (PLD, PLI).
    Nop = "nop", arm: true, riscv: false, unit: Alu;
    /// Barriers (DMB, DSB, ISB; RISC-V FENCE).
    Barrier = "barrier", arm: true, riscv: true, unit: System;
    /// System: MRS, MSR, CPS, SVC, BKPT, UDF, CLREX, the Armv8-M security
    /// instructions (SG, TT, VLLDM, VLSTM); RISC-V CSR access, ECALL,
    /// EBREAK, MRET, WFI.
    System = "system", arm: true, riscv: true, unit: System;
    /// Floating-point add and subtract, single precision (VADD.F32, VSUB.F32).
    FpAdd = "fp_add", arm: false, riscv: false, unit: Fpu;
    /// Floating-point multiply, single precision (VMUL.F32, VNMUL.F32).
    FpMul = "fp_mul", arm: false, riscv: false, unit: Fpu;
    /// Chained multiply-accumulate, single precision (VMLA, VMLS, VNMLA, VNMLS .F32).
    FpMac = "fp_mac", arm: false, riscv: false, unit: Fpu;
    /// Fused multiply-accumulate, single precision (VFMA, VFMS, VFNMA, VFNMS .F32).
    FpFma = "fp_fma", arm: false, riscv: false, unit: Fpu;
    /// Floating-point divide, single precision (VDIV.F32).
    FpDiv = "fp_div", arm: false, riscv: false, unit: Fpu;
    /// Floating-point square root, single precision (VSQRT.F32).
    FpSqrt = "fp_sqrt", arm: false, riscv: false, unit: Fpu;
    /// Conversions and roundings of single-precision values (VCVT between
    /// float, integer, fixed point and half precision; VRINT).
    FpCvt = "fp_cvt", arm: false, riscv: false, unit: Fpu;
    /// Absolute value and negation, single precision (VABS.F32, VNEG.F32).
    FpAbs = "fp_abs", arm: false, riscv: false, unit: Fpu;
    /// Compare, single precision (VCMP.F32, VCMPE.F32).
    FpCmp = "fp_cmp", arm: false, riscv: false, unit: Fpu;
    /// Select, maximum and minimum number (VSEL, VMAXNM, VMINNM .F32; FPv5).
    FpSelect = "fp_select", arm: false, riscv: false, unit: Fpu;
    /// Move between floating-point registers or of an immediate (VMOV.F32).
    FpMove = "fp_move", arm: false, riscv: false, unit: Fpu;
    /// Move of one word between a core and a floating-point register
    /// (VMOV Rt, Sn; VMOV Sn, Rt; VMOV Rt, Dn[x]; VMOV Dn[x], Rt).
    FpTransfer = "fp_transfer", arm: false, riscv: false, unit: Fpu;
    /// Move of two words between two core registers and two single or one
    /// double floating-point register (VMOV Rt, Rt2, Dm ...).
    FpTransfer2 = "fp_transfer2", arm: false, riscv: false, unit: Fpu;
    /// Floating-point status and control register access (VMRS, VMSR).
    FpStatus = "fp_status", arm: false, riscv: false, unit: Fpu;
    /// Floating-point single load (VLDR): cost `cycles + per_register * N`,
    /// N its words (1 for .32, 2 for .64).
    FpLoad = "fp_load", arm: false, riscv: false, unit: Load;
    /// Floating-point single store (VSTR), N words as for `fp_load`.
    FpStore = "fp_store", arm: false, riscv: false, unit: Store;
    /// Floating-point load multiple (VLDM, VPOP), N the words transferred.
    FpLoadMultiple = "fp_load_multiple", arm: false, riscv: false, unit: Load;
    /// Floating-point store multiple (VSTM, VPUSH), N the words transferred.
    FpStoreMultiple = "fp_store_multiple", arm: false, riscv: false, unit: Store;
    /// Double-precision add and subtract (VADD.F64, VSUB.F64).
    FpAddD = "fp_add_d", arm: false, riscv: false, unit: Fpu;
    /// Double-precision multiply (VMUL.F64, VNMUL.F64).
    FpMulD = "fp_mul_d", arm: false, riscv: false, unit: Fpu;
    /// Double-precision chained multiply-accumulate (VMLA.F64 ...).
    FpMacD = "fp_mac_d", arm: false, riscv: false, unit: Fpu;
    /// Double-precision fused multiply-accumulate (VFMA.F64 ...).
    FpFmaD = "fp_fma_d", arm: false, riscv: false, unit: Fpu;
    /// Double-precision divide (VDIV.F64).
    FpDivD = "fp_div_d", arm: false, riscv: false, unit: Fpu;
    /// Double-precision square root (VSQRT.F64).
    FpSqrtD = "fp_sqrt_d", arm: false, riscv: false, unit: Fpu;
    /// Other double-precision operations: absolute value, negation,
    /// compare, moves, conversions with a double operand, select, round.
    FpAluD = "fp_alu_d", arm: false, riscv: false, unit: Fpu;
}

impl InsnClass {
    /// Whether the class is a floating-point one.
    pub fn is_fp(self) -> bool {
        self.name().starts_with("fp_")
    }

    /// The instructions a `busy` instruction of this class holds back: the
    /// floating-point ones for a floating-point class, the multiplies and
    /// divides for a multiplier's.
    pub fn busy_family(self) -> Option<usize> {
        if self.is_fp() {
            Some(0)
        } else if self.unit() == Unit::Mac {
            Some(1)
        } else {
            None
        }
    }
}

/// The execution units a class can use: a `busy` row keeps its class's
/// unit from the next instruction of that unit; a dual-issue pair uses
/// each unit at most as often as `[cycles.issue.units]` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Alu,
    /// The shifter of an operand shifted before the ALU (Cortex-M7).
    Shift,
    Mac,
    Load,
    Store,
    Branch,
    Fpu,
    /// The DSP/bit-field datapath (Cortex-M7: one such instruction a cycle).
    Simd,
    /// The floating-point register file's ports (Cortex-M7).
    FpPort,
    System,
}

impl Unit {
    pub const COUNT: usize = 10;

    pub fn index(self) -> usize {
        self as usize
    }
}

impl InsnClass {
    /// The classes a cycle table for `arch` must price.
    pub fn required_for(arch: Arch) -> impl Iterator<Item = InsnClass> {
        InsnClass::ALL
            .iter()
            .copied()
            .filter(move |c| c.required_on(arch))
    }
}

/// How a data-dependent instruction's cost is computed at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DynamicCost {
    /// Divider with early termination: the cost grows with the number of
    /// quotient bits, from `cycles` to `max_cycles` (see `cycles.rs`).
    DivideEarlyTermination,
    /// Long multiply with early termination on small operands (Cortex-M3).
    MultiplyEarlyTermination,
    /// A divider producing one quotient bit a cycle with early out
    /// (SiFive E31: "1-bit per cycle hardware divide", 2 to 33 cycles).
    DivideBitSerial,
}

/// One row of the cycle table.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassCost {
    /// Cycles when executed on its own (for branches: when not taken).
    pub cycles: u32,
    /// Extra cycles when a branch of this class is taken (pipeline refill).
    pub taken: u32,
    /// Extra cycles per register transferred (LDM/STM/PUSH/POP).
    pub per_register: u32,
    /// Registers transferred per `per_register` cycles (Cortex-M7 moves
    /// two a cycle: `per_register * ceil(N / 2)`); 1 when absent.
    pub registers_per_cycle: u32,
    /// Cost when it directly follows a load or store it can pipeline with
    /// (Cortex-M3/M4 back-to-back loads); `None` when the core does not.
    pub pipelined: Option<u32>,
    /// Extra cycles when the next instruction reads the loaded register
    /// (a load-use bubble, RISC-V Hazard3).
    pub load_use: u32,
    /// Extra cycles when a load or store's address registers were written
    /// by the directly preceding data-processing instruction (Cortex-M3/M4:
    /// "there is no forwarding path for this scenario").
    pub address_dependency: u32,
    /// Extra cycles of a store whose address has a register offset
    /// (`STR Rt, [Rn, Rm]`) unless it pipelines after a load (Cortex-M3/M4
    /// 3.3.2: "other instructions cannot be pipelined after STR with
    /// register offset"). 0 when the file does not say.
    pub register_offset: u32,
    /// Extra cycles of a single store (immediate offset) directly followed
    /// by a load (Cortex-M3/M4 on silicon: "stores cannot be pipelined with
    /// following load instructions (adds extra cycle to store)"). 0 when
    /// the file does not say.
    pub before_load: u32,
    /// Extra cycles of a PC-relative load (`LDR Rt, [PC, #imm]`) whose
    /// literal lies in the memory region the code is fetched from
    /// (Cortex-M3/M4 3.3.2: "might add a cycle because of contention with
    /// the fetch unit"). 0 when the file does not say.
    pub literal_contention: u32,
    /// Cost of an IT instruction directly after a 16-bit instruction of the
    /// same block (IT folding); `None` when the core does not fold.
    pub folded: Option<u32>,
    /// Upper bound of a data-dependent cost, with the rule that computes it.
    pub dynamic: Option<(DynamicCost, u32)>,
    /// Cycles from the instruction's issue until a following instruction
    /// can use its result; `None`: when it has finished issuing (no
    /// instruction ever waits for it).
    pub latency: Option<u32>,
    /// The latency of a byte or halfword load (LDRB, LDRH, LDRSB, LDRSH;
    /// LB, LBU, LH, LHU), when it differs from a word load's.
    pub subword_latency: Option<u32>,
    /// The latency when an operand is shifted before the ALU (a shifted
    /// register or a rotated immediate), when it differs.
    pub shifted_latency: Option<u32>,
    /// Extra cycles when the instruction sets the flags (Cortex-M33 MULS).
    pub flags_extra: u32,
    /// Its late operands (a multiply-accumulate's accumulator, a store's
    /// data: `Insn::late_reads`) are read this many cycles after it
    /// issues, so it waits that much less for them.
    pub late_operand: u32,
    /// Cycles the class's execution unit stays busy from the instruction's
    /// issue (it does not hold the instructions of other units: they
    /// complete out of order); `None`: as long as it issues.
    pub busy: Option<u32>,
    /// Where it may issue in a dual-issue pair (targets with
    /// `[cycles.issue] width = 2`).
    pub slot: Slot,
    /// The execution units it uses in its issue cycle (default: its
    /// class's unit).
    pub units: Vec<Unit>,
    /// The vendor document and table the numbers come from.
    pub cite: String,
}

/// Where an instruction may issue in a dual-issue pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Slot {
    /// Older or younger.
    #[default]
    Any,
    /// Only as the older (first) of a pair.
    First,
    /// Only as the younger (second) of a pair.
    Second,
    /// Never paired.
    Alone,
}

/// How many instructions issue in a cycle, and which pairs may
/// (`[cycles.issue]`; absent: one at a time).
#[derive(Debug, Clone, PartialEq)]
pub struct IssueModel {
    /// 1 or 2.
    pub width: u32,
    /// How often each unit may be used in one cycle, by [`Unit::index`].
    pub units: [u32; Unit::COUNT],
    /// Only two 16-bit instructions pair (Cortex-M33's limited dual issue).
    pub narrow_only: bool,
    /// A conditional branch that pairs with the instruction that set its
    /// flags cannot when it is taken: the taken branch costs this much
    /// more (Cortex-M33).
    pub flag_pair_taken: u32,
    /// Bit-field, extend, reverse, CLZ and DSP instructions issue only as
    /// the first of a pair and use the `simd` unit (Cortex-M7).
    pub bitfield_first: bool,
    /// For this many cycles after a single-precision multiply-accumulate
    /// (VMLA, VFMA and their negated forms) issues, a floating-point load,
    /// store or move (VLDR, VSTR, any VMOV) cannot issue as the younger
    /// of a pair (Cortex-M7, measured on silicon); 0: no such rule.
    pub fp_mac_shadow: u32,
    pub cite: String,
}

impl Default for IssueModel {
    fn default() -> Self {
        IssueModel {
            width: 1,
            units: [u32::MAX; Unit::COUNT],
            narrow_only: false,
            flag_pair_taken: 0,
            bitfield_first: false,
            fp_mac_shadow: 0,
            cite: String::new(),
        }
    }
}

/// A memory region of the target's map.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    pub name: String,
    pub kind: RegionKind,
    pub start: u64,
    pub size: u64,
    pub access: Access,
    /// Extra cycles per instruction-fetch access (one access per 32-bit word).
    pub wait_states: u32,
}

impl Region {
    pub fn end(&self) -> u64 {
        self.start + self.size
    }

    pub fn contains(&self, start: u64, len: u64) -> bool {
        start >= self.start && start.saturating_add(len) <= self.end()
    }
}

/// How the project builds guests for this core (used by guest-shim/build.py).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuestBuild {
    pub cc: String,
    pub cflags: Vec<String>,
    pub ldscript: PathBuf,
    /// `qemu-system-*` program and machine that run the same ELF, if any.
    #[serde(default)]
    pub qemu: Option<QemuReference>,
    /// The Rust target triple of this core (`sim-host new --lang rust`).
    #[serde(default)]
    pub rust_target: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QemuReference {
    pub program: String,
    pub machine: String,
    #[serde(default)]
    pub cpu: Option<String>,
}

/// A validated target description.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    pub description: String,
    pub arch: Arch,
    /// Unicorn CPU model name, e.g. `cortex-m4` or `rv32`.
    pub cpu: String,
    pub clock_hz: u64,
    pub cores: u32,
    pub regions: Vec<Region>,
    pub guest: GuestBuild,
    /// The document the cycle table as a whole comes from.
    pub cycle_reference: String,
    /// Extra cycles when a taken branch lands on a 32-bit instruction that
    /// is not word aligned (two fetches are needed).
    pub misaligned_target: u32,
    pub classes: BTreeMap<InsnClass, ClassCost>,
    /// The board around the core (`[system]`): System Control Space
    /// facts, peripheral ranges, the RISC-V machine timer.
    pub system: System,
    /// Issue width and pairing rules (one at a time unless the file says).
    pub issue: IssueModel,
    /// The branch predictor, if the core has one the model follows.
    pub predictor: Option<PredictorSpec>,
    /// What code the core runs: checked against an ELF's build attributes.
    pub isa: crate::model::isa::Isa,
    /// The flash accelerator in front of a flash region (`[flash]`), if
    /// the file describes one (`model::memsys`).
    pub flash: Option<crate::model::memsys::FlashSpec>,
    /// The Cortex-M7's L1 caches and TCMs (`[l1cache]`), if the file
    /// describes them (`model::l1cache`).
    pub l1cache: Option<crate::model::l1cache::L1Spec>,
    /// The RP2040's XIP cache in front of its QSPI flash (`[xip]`,
    /// `model::xip`), if the file describes one.
    pub xip: Option<crate::model::xip::XipSpec>,
    /// The clock tree the host answers (`[clocks]`, `model::devices`), if
    /// the board's firmware sets its own clock.
    pub clocks: Option<crate::model::devices::ClocksSpec>,
    /// The UARTs the host answers (`[[uart]]`): their bytes go to the
    /// console.
    pub uarts: Vec<crate::model::devices::UartSpec>,
    /// The GPIO ports the host answers (`[[gpio]]`).
    pub gpios: Vec<crate::model::devices::GpioSpec>,
    /// The peripheral bit-band region and its alias (`bit_band`), if the
    /// core has one: the engine maps the alias of the modelled blocks.
    pub bit_band: Option<crate::model::devices::BitBandSpec>,
    /// The file it was loaded from.
    pub file: PathBuf,
}

/// The board's blocks the host answers (`model::devices`): `[clocks]`,
/// the UARTs, the GPIO ports and the bit-band alias, validated.
#[allow(clippy::type_complexity)]
fn parse_devices(
    clocks: Option<crate::model::devices::ClocksFile>,
    uart: Vec<crate::model::devices::UartFile>,
    gpio: Vec<crate::model::devices::GpioFile>,
    bit_band: Option<crate::model::devices::BitBandFile>,
    clock_hz: u64,
) -> Result<
    (
        Option<crate::model::devices::ClocksSpec>,
        Vec<crate::model::devices::UartSpec>,
        Vec<crate::model::devices::GpioSpec>,
        Option<crate::model::devices::BitBandSpec>,
    ),
    (String, String),
> {
    use crate::model::devices as d;
    let clocks = clocks
        .map(|c| d::validate_clocks(c, clock_hz))
        .transpose()?;
    let uarts = d::validate_uarts(uart)?;
    let gpios = d::validate_gpios(gpio, &uarts)?;
    let bit_band = bit_band.map(d::validate_bit_band).transpose()?;
    Ok((clocks, uarts, gpios, bit_band))
}

/// The regions as the memory-system models check them: name, start, end.
fn named_regions(regions: &[Region]) -> Vec<(String, u64, u64)> {
    regions
        .iter()
        .map(|r| (r.name.clone(), r.start, r.end()))
        .collect()
}

// ---- file format -------------------------------------------------------

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetFile {
    name: String,
    description: String,
    arch: Arch,
    cpu: String,
    clock_hz: u64,
    #[serde(default = "one")]
    cores: u32,
    memory: Vec<RegionFile>,
    guest: GuestBuild,
    #[serde(default)]
    isa: Option<crate::model::isa::IsaFile>,
    cycles: CycleTableFile,
    #[serde(default)]
    system: SystemFile,
    #[serde(default)]
    flash: Option<crate::model::memsys::FlashFile>,
    #[serde(default)]
    l1cache: Option<crate::model::l1cache::L1CacheFile>,
    xip: Option<crate::model::xip::XipFile>,
    #[serde(default)]
    clocks: Option<crate::model::devices::ClocksFile>,
    #[serde(default)]
    uart: Vec<crate::model::devices::UartFile>,
    #[serde(default)]
    gpio: Vec<crate::model::devices::GpioFile>,
    #[serde(default)]
    bit_band: Option<crate::model::devices::BitBandFile>,
}

fn one() -> u32 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RegionFile {
    name: String,
    kind: RegionKind,
    start: u64,
    size: u64,
    access: String,
    #[serde(default)]
    wait_states: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CycleTableFile {
    reference: String,
    #[serde(default)]
    misaligned_target: u32,
    class: BTreeMap<InsnClass, ClassCostFile>,
    #[serde(default)]
    issue: Option<IssueFile>,
    #[serde(default)]
    predictor: Option<PredictorFile>,
    /// Build options of the core that change rows (`NAME:option=value`).
    #[serde(default)]
    options: BTreeMap<String, OptionFile>,
}

/// A build option of a core (`[cycles.options.NAME]`): each value sets
/// the cycles of some rows; `default` is used unless the target is named
/// `TARGET:NAME=VALUE`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OptionFile {
    default: String,
    values: BTreeMap<String, BTreeMap<InsnClass, u32>>,
    cite: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct IssueFile {
    width: u32,
    #[serde(default)]
    units: BTreeMap<Unit, u32>,
    #[serde(default)]
    narrow_only: bool,
    #[serde(default)]
    flag_pair_taken: u32,
    #[serde(default)]
    bitfield_first: bool,
    #[serde(default)]
    fp_mac_shadow: u32,
    cite: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassCostFile {
    cycles: u32,
    #[serde(default)]
    taken: u32,
    #[serde(default)]
    per_register: u32,
    #[serde(default = "one")]
    registers_per_cycle: u32,
    #[serde(default)]
    pipelined: Option<u32>,
    #[serde(default)]
    load_use: u32,
    #[serde(default)]
    address_dependency: u32,
    #[serde(default)]
    register_offset: u32,
    #[serde(default)]
    before_load: u32,
    #[serde(default)]
    literal_contention: u32,
    #[serde(default)]
    folded: Option<u32>,
    #[serde(default)]
    dynamic: Option<DynamicCost>,
    #[serde(default)]
    max_cycles: Option<u32>,
    #[serde(default)]
    latency: Option<u32>,
    #[serde(default)]
    subword_latency: Option<u32>,
    #[serde(default)]
    shifted_latency: Option<u32>,
    #[serde(default)]
    flags_extra: u32,
    #[serde(default)]
    late_operand: u32,
    #[serde(default)]
    busy: Option<u32>,
    #[serde(default)]
    slot: Slot,
    #[serde(default)]
    units: Option<Vec<Unit>>,
    cite: String,
}

impl Target {
    /// Loads and validates a target file.
    pub fn load(path: &Path) -> Result<Target, TargetError> {
        Target::load_with(path, &[])
    }

    /// [`Target::load`] with options (`("multiplier", "small")`).
    pub fn load_with(path: &Path, options: &[(String, String)]) -> Result<Target, TargetError> {
        let cap = crate::model::limits::MAX_TARGET_FILE_BYTES;
        let text = arpsim::input::read_to_string(path, cap).map_err(|source| TargetError::Io {
            file: path.to_owned(),
            source,
        })?;
        Target::parse_with(&text, path, options)
    }

    /// Parses and validates target-file text; `file` names it in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Target, TargetError> {
        Target::parse_with(text, file, &[])
    }

    /// [`Target::parse`] with the core's build options set (each
    /// `(name, value)` of its `[cycles.options]`; the others take their
    /// defaults).
    pub fn parse_with(
        text: &str,
        file: &Path,
        options: &[(String, String)],
    ) -> Result<Target, TargetError> {
        let raw: TargetFile = toml::from_str(text).map_err(|e| TargetError::Syntax {
            file: file.to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        let invalid = |field: &str, message: String| TargetError::Invalid {
            file: file.to_owned(),
            field: field.to_owned(),
            message,
        };
        if raw.clock_hz == 0 {
            return Err(invalid("clock_hz", "must be positive".into()));
        }
        if raw.cores == 0 || raw.cores as usize > MAX_CORES {
            return Err(invalid(
                "cores",
                format!("{}: must be 1 to {MAX_CORES}", raw.cores),
            ));
        }
        if raw.cycles.misaligned_target > MAX_CLASS_CYCLES {
            return Err(invalid(
                "cycles.misaligned_target",
                format!(
                    "{} cycles: at most {MAX_CLASS_CYCLES}, as for every cycle-table number",
                    raw.cycles.misaligned_target
                ),
            ));
        }
        let regions = parse_regions(raw.memory).map_err(|(f, m)| invalid(&f, m))?;
        let (clocks, uarts, gpios, bit_band) =
            parse_devices(raw.clocks, raw.uart, raw.gpio, raw.bit_band, raw.clock_hz)
                .map_err(|(f, m)| invalid(&f, m))?;
        // the flash's wait-state table must cover every clock the part runs at
        let max_hz = clocks.as_ref().map_or(raw.clock_hz, |c| c.max_hz);
        let flash = match raw.flash {
            None => None,
            Some(f) => {
                let named: Vec<(String, u64, u64)> = regions
                    .iter()
                    .map(|r| (r.name.clone(), r.start, r.end()))
                    .collect();
                Some(
                    crate::model::memsys::validate(f, &named, raw.clock_hz, max_hz)
                        .map_err(|(f, m)| invalid(&f, m))?,
                )
            }
        };
        let l1cache = match raw.l1cache {
            None => None,
            Some(_) if raw.cpu != "cortex-m7" => {
                return Err(invalid(
                    "l1cache.kind",
                    format!("the Cortex-M7's caches on a `{}` core", raw.cpu),
                ))
            }
            // the F7's ART reads the flash through the ITCM interface,
            // which the L1 caches never see: the two price disjoint ranges
            Some(_)
                if flash
                    .as_ref()
                    .is_some_and(|f| f.kind != crate::model::memsys::FlashKind::Stm32f7Art) =>
            {
                return Err(invalid(
                    "l1cache",
                    "a target has an stm32f4-art [flash] or [l1cache], not both".into(),
                ))
            }
            Some(c) => {
                let named: Vec<(String, u64, u64)> = regions
                    .iter()
                    .map(|r| (r.name.clone(), r.start, r.end()))
                    .collect();
                Some(crate::model::l1cache::validate(c, &named).map_err(|(f, m)| invalid(&f, m))?)
            }
        };
        if let (Some(f), Some(c)) = (&flash, &l1cache) {
            let cached = (f.start..f.end).step_by(0x1000).any(|a| {
                c.range_of(a)
                    .is_some_and(|r| r.policy != crate::model::l1cache::Policy::Tcm)
            });
            if cached {
                return Err(invalid(
                    "flash.region",
                    format!(
                        "`{}` is in a cached [l1cache] range: the ART's flash is read through \
                         the ITCM interface, which the L1 caches do not see (give it a \
                         policy = \"tcm\" range)",
                        f.region
                    ),
                ));
            }
        }
        let xip = raw
            .xip
            .map(|x| crate::model::xip::validate(x, &named_regions(&regions)))
            .transpose()
            .map_err(|(f, m)| invalid(&f, m))?;
        let system = raw
            .system
            .validate(&raw.cpu)
            .and_then(|s| check_board(s, &regions))
            .map_err(|(f, m)| invalid(&f, m))?;
        let mut classes =
            parse_classes(raw.cycles.class, raw.arch).map_err(|(f, m)| invalid(&f, m))?;
        apply_options(&mut classes, &raw.cycles.options, options)
            .map_err(|(f, m)| invalid(&f, m))?;
        let issue = parse_issue(raw.cycles.issue).map_err(|(f, m)| invalid(&f, m))?;
        let predictor = parse_predictor(raw.cycles.predictor).map_err(|(f, m)| invalid(&f, m))?;
        let isa = crate::model::isa::Isa::from_file(raw.isa, raw.arch, &raw.cpu)
            .map_err(|(f, m)| invalid(&f, m))?;
        let mut system = system;
        if let (Some(core), crate::model::isa::Isa::Arm { fpu, .. }) = (&mut system.core, &isa) {
            // the FPU's System Control Space registers (CPACR's CP10/CP11,
            // FPCCR, FPCAR, FPDSCR) exist when the core has one
            core.fpu = *fpu != crate::model::isa::Fpu::None;
        }
        let target = Target {
            name: raw.name,
            description: raw.description,
            arch: raw.arch,
            cpu: raw.cpu,
            clock_hz: raw.clock_hz,
            cores: raw.cores,
            regions,
            guest: raw.guest,
            cycle_reference: raw.cycles.reference,
            misaligned_target: raw.cycles.misaligned_target,
            classes,
            system,
            issue,
            predictor,
            isa,
            flash,
            l1cache,
            xip,
            clocks,
            uarts,
            gpios,
            bit_band,
            file: file.to_owned(),
        };
        check_mapped_ranges(&target).map_err(|(f, m)| invalid(&f, m))?;
        Ok(target)
    }

    /// The cycle-table row of a class, if the table prices it. There is no
    /// fallback: an instruction whose class has no row is never priced
    /// (the run stops, or with `--allow-unpriced` counts it as unpriced).
    pub fn row(&self, class: InsnClass) -> Option<&ClassCost> {
        self.classes.get(&class)
    }

    /// The row of a class a table must price (`alu` and the others of
    /// [`InsnClass::required_for`]).
    pub fn required_row(&self, class: InsnClass) -> &ClassCost {
        self.row(class)
            .expect("validated: a target prices every required class")
    }

    /// The board's RISC-V machine timer (a Cortex-M target's `[system]`
    /// never has one in effect).
    pub fn machine_timer(&self) -> Option<&MachineTimer> {
        self.system
            .machine_timer
            .as_ref()
            .filter(|_| self.arch == Arch::Riscv)
    }

    /// The region holding `[addr, addr+len)`, if one does.
    pub fn region_of(&self, addr: u64, len: u64) -> Option<&Region> {
        self.regions.iter().find(|r| r.contains(addr, len))
    }

    /// The memory map as a short multi-line text, for messages.
    pub fn memory_map(&self) -> String {
        self.regions
            .iter()
            .map(|r| {
                format!(
                    "  {:<10} {:<5} {:#010x}..{:#010x} {:>6} KiB {} {} wait state(s)",
                    r.name,
                    format!("{:?}", r.kind).to_lowercase(),
                    r.start,
                    r.end(),
                    r.size / 1024,
                    r.access,
                    r.wait_states
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

pub use crate::model::limits::MAX_CLASS_CYCLES;

/// Every number of a cycle-table row within `0..=MAX_CLASS_CYCLES`, so a
/// typo cannot wrap the block arithmetic into *fewer* cycles.
fn check_cost_range(c: &ClassCostFile, field: &str) -> Result<(), (String, String)> {
    let numbers = [
        ("cycles", Some(c.cycles)),
        ("taken", Some(c.taken)),
        ("per_register", Some(c.per_register)),
        ("pipelined", c.pipelined),
        ("load_use", Some(c.load_use)),
        ("address_dependency", Some(c.address_dependency)),
        ("register_offset", Some(c.register_offset)),
        ("before_load", Some(c.before_load)),
        ("literal_contention", Some(c.literal_contention)),
        ("folded", c.folded),
        ("max_cycles", c.max_cycles),
        ("latency", c.latency),
        ("late_operand", Some(c.late_operand)),
        ("subword_latency", c.subword_latency),
        ("shifted_latency", c.shifted_latency),
        ("flags_extra", Some(c.flags_extra)),
        ("busy", c.busy),
    ];
    for (name, value) in numbers {
        if let Some(v) = value.filter(|v| *v > MAX_CLASS_CYCLES) {
            return Err((
                format!("{field}.{name}"),
                format!("{v} cycles: at most {MAX_CLASS_CYCLES} per instruction"),
            ));
        }
    }
    Ok(())
}

/// A field of a target file and what is wrong with it.
type FieldError = (String, String);

/// The most regions a memory map may have: far more than any
/// microcontroller's, few enough that Unicorn maps them quickly (its
/// `mem_map` takes super-linear time: 1,000 regions 0.9 s, 20,000 693 s).
pub const MAX_REGIONS: usize = 256;

/// The memory map: every region checked (permissions, page alignment, the
/// 32-bit space), none overlapping another, sorted by address.
fn parse_regions(memory: Vec<RegionFile>) -> Result<Vec<Region>, FieldError> {
    if memory.len() > MAX_REGIONS {
        return Err((
            "memory".into(),
            format!("{} regions: at most {MAX_REGIONS}", memory.len()),
        ));
    }
    let mut regions = Vec::with_capacity(memory.len());
    for (i, r) in memory.into_iter().enumerate() {
        regions.push(parse_region(i, r)?);
    }
    if regions.is_empty() {
        return Err(("memory".into(), "a target needs at least one region".into()));
    }
    for (i, a) in regions.iter().enumerate() {
        for b in &regions[i + 1..] {
            if a.start < b.end() && b.start < a.end() {
                return Err((
                    "memory".into(),
                    format!(
                        "regions `{}` ({:#010x}..{:#010x}) and `{}` ({:#010x}..{:#010x}) overlap",
                        a.name,
                        a.start,
                        a.end(),
                        b.name,
                        b.start,
                        b.end()
                    ),
                ));
            }
        }
    }
    regions.sort_by_key(|r| r.start);
    Ok(regions)
}

/// Region `i` of the memory map, checked.
fn parse_region(i: usize, r: RegionFile) -> Result<Region, FieldError> {
    let field = |name: &str| format!("memory[{i}].{name}");
    let access = Access::parse(&r.access).ok_or_else(|| {
        (
            field("access"),
            format!(
                "`{}` is not a permission set such as \"rx\" or \"rw\"",
                r.access
            ),
        )
    })?;
    if r.size == 0 {
        return Err((field("size"), "must be positive".into()));
    }
    if r.wait_states > MAX_CLASS_CYCLES {
        return Err((
            field("wait_states"),
            format!(
                "{} cycles per fetch: at most {MAX_CLASS_CYCLES}, as for every cycle-table number",
                r.wait_states
            ),
        ));
    }
    if r.start % PAGE_SIZE != 0 {
        return Err((
            field("start"),
            format!("{:#x} is not aligned to Unicorn's 4 KiB pages", r.start),
        ));
    }
    if r.size % PAGE_SIZE != 0 {
        return Err((
            field("size"),
            format!("{:#x} is not a multiple of Unicorn's 4 KiB pages", r.size),
        ));
    }
    if r.start.checked_add(r.size).is_none_or(|end| end > 1 << 32) {
        return Err((
            field("size"),
            format!(
                "region {:#x}+{:#x} runs past the 32-bit address space",
                r.start, r.size
            ),
        ));
    }
    Ok(Region {
        name: r.name,
        kind: r.kind,
        start: r.start,
        size: r.size,
        access,
        wait_states: r.wait_states,
    })
}

/// The cycle table: every row in range and cited, every class `arch`
/// needs priced.
fn parse_classes(
    rows: BTreeMap<InsnClass, ClassCostFile>,
    arch: Arch,
) -> Result<BTreeMap<InsnClass, ClassCost>, FieldError> {
    let mut classes = BTreeMap::new();
    for (class, c) in rows {
        let cost = parse_class_cost(&format!("cycles.class.{}", class.name()), class, c)?;
        classes.insert(class, cost);
    }
    let missing: Vec<&str> = InsnClass::required_for(arch)
        .filter(|c| !classes.contains_key(c))
        .map(|c| c.name())
        .collect();
    if !missing.is_empty() {
        return Err((
            "cycles.class".into(),
            format!(
                "missing instruction class(es) for {arch}: {}",
                missing.join(", ")
            ),
        ));
    }
    Ok(classes)
}

/// One row of the cycle table (`field` names it), checked.
fn parse_class_cost(
    field: &str,
    class: InsnClass,
    c: ClassCostFile,
) -> Result<ClassCost, FieldError> {
    check_cost_range(&c, field)?;
    if !(1..=8).contains(&c.registers_per_cycle) {
        return Err((
            format!("{field}.registers_per_cycle"),
            format!("{}: 1 to 8", c.registers_per_cycle),
        ));
    }
    if c.cite.trim().is_empty() {
        return Err((
            format!("{field}.cite"),
            "every cycle-table entry cites its source".into(),
        ));
    }
    let dynamic = match (c.dynamic, c.max_cycles) {
        (None, None) => None,
        (Some(rule), Some(max)) if max >= c.cycles => Some((rule, max)),
        (Some(_), Some(max)) => {
            return Err((
                format!("{field}.max_cycles"),
                format!("{max} is below `cycles` = {}", c.cycles),
            ))
        }
        (Some(_), None) => {
            return Err((
                format!("{field}.max_cycles"),
                "a dynamic cost needs `max_cycles`".into(),
            ))
        }
        (None, Some(_)) => {
            return Err((
                format!("{field}.dynamic"),
                "`max_cycles` needs a `dynamic` rule".into(),
            ))
        }
    };
    Ok(ClassCost {
        cycles: c.cycles,
        taken: c.taken,
        per_register: c.per_register,
        registers_per_cycle: c.registers_per_cycle,
        pipelined: c.pipelined,
        load_use: c.load_use,
        address_dependency: c.address_dependency,
        register_offset: c.register_offset,
        before_load: c.before_load,
        literal_contention: c.literal_contention,
        folded: c.folded,
        dynamic,
        latency: c.latency,
        subword_latency: c.subword_latency,
        shifted_latency: c.shifted_latency,
        flags_extra: c.flags_extra,
        late_operand: c.late_operand,
        busy: c.busy,
        slot: c.slot,
        units: c.units.unwrap_or_else(|| vec![class.unit()]),
        cite: c.cite,
    })
}

/// ARM's Private Peripheral Bus (ARMv7-M ARM B3.1, the System Control
/// Space and the DWT among its blocks): the core's own, so no other range
/// of a target may lie in it.
pub const ARM_PPB: std::ops::Range<u64> = 0xE000_0000..0xE010_0000;

/// A range a run maps: the field that puts it there, what it is, where.
struct Mapped {
    field: String,
    what: String,
    range: std::ops::Range<u64>,
}

/// Every range a run of `target` maps: the memory regions, the core's
/// own space (the PPB on ARM), the machine timer's pages, FLASH_ACR's and
/// XIP_CTRL's pages, the XIP maintenance window.
fn mapped_ranges(target: &Target) -> Vec<Mapped> {
    let page_of = |addr: u64| (addr & !(PAGE_SIZE - 1))..(addr & !(PAGE_SIZE - 1)) + PAGE_SIZE;
    let mut out = Vec::new();
    if target.arch == Arch::Arm {
        out.push(Mapped {
            field: "arch".into(),
            what: "the core's Private Peripheral Bus (its System Control Space and DWT)".into(),
            range: ARM_PPB,
        });
    }
    out.extend(target.regions.iter().map(|r| Mapped {
        field: "memory".into(),
        what: format!("memory region `{}`", r.name),
        range: r.start..r.end(),
    }));
    let mut add = |field: &str, what: &str, range| {
        out.push(Mapped {
            field: field.into(),
            what: what.into(),
            range,
        })
    };
    if let Some(t) = target.machine_timer() {
        add(
            "system.machine_timer.base",
            "the machine timer's pages",
            t.pages(),
        );
    }
    if let Some(f) = &target.flash {
        add("flash.control", "FLASH_ACR's page", page_of(f.control));
    }
    if let Some(x) = &target.xip {
        add("xip.control", "XIP_CTRL's page", page_of(x.control));
        if let Some(r) = &x.rp2350 {
            let window =
                r.maintenance..r.maintenance + crate::model::xip::rp2350::MAINTENANCE_BYTES;
            add(
                "xip.maintenance",
                "the XIP cache maintenance window",
                window,
            );
        }
    }
    out
}

/// No two ranges a run maps overlap (issue 43, M10): Unicorn would refuse
/// the second mapping; the file is refused instead, both fields named.
fn check_mapped_ranges(target: &Target) -> Result<(), FieldError> {
    let ranges = mapped_ranges(target);
    for (i, a) in ranges.iter().enumerate() {
        for b in &ranges[..i] {
            if a.range.start < b.range.end && b.range.start < a.range.end {
                return Err((
                    a.field.clone(),
                    format!(
                        "{} {:#010x}..{:#010x} overlaps {} {:#010x}..{:#010x} (field `{}`)",
                        a.what,
                        a.range.start,
                        a.range.end,
                        b.what,
                        b.range.start,
                        b.range.end,
                        b.field
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The peripheral ranges must not cover memory (an access there is RAM's).
fn check_board(system: System, regions: &[Region]) -> Result<System, FieldError> {
    for (i, p) in system.peripherals.iter().enumerate() {
        if let Some(r) = regions
            .iter()
            .find(|r| p.start < r.end() && r.start < p.end())
        {
            return Err((
                format!("system.peripherals[{i}].start"),
                format!("`{}` overlaps memory region `{}`", p.name, r.name),
            ));
        }
    }
    Ok(system)
}

/// Sets the rows a core's build options change: the value asked for in
/// `chosen`, else each option's default.
fn apply_options(
    classes: &mut BTreeMap<InsnClass, ClassCost>,
    options: &BTreeMap<String, OptionFile>,
    chosen: &[(String, String)],
) -> Result<(), FieldError> {
    for (name, _) in chosen {
        if !options.contains_key(name) {
            let known: Vec<&str> = options.keys().map(String::as_str).collect();
            return Err((
                "cycles.options".into(),
                format!(
                    "no option `{name}` (this core's options: {})",
                    if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        }
    }
    for (name, option) in options {
        let field = format!("cycles.options.{name}");
        if option.cite.trim().is_empty() {
            return Err((format!("{field}.cite"), "an option cites its source".into()));
        }
        let value = chosen
            .iter()
            .find(|(n, _)| n == name)
            .map_or(option.default.as_str(), |(_, v)| v.as_str());
        let Some(rows) = option.values.get(value) else {
            let known: Vec<&str> = option.values.keys().map(String::as_str).collect();
            return Err((
                field,
                format!("no value `{value}` (one of {})", known.join(", ")),
            ));
        };
        for (class, cycles) in rows {
            let row = classes.get_mut(class).ok_or_else(|| {
                (
                    format!("{field}.values.{value}"),
                    format!(
                        "sets class `{}`, which the table has no row for",
                        class.name()
                    ),
                )
            })?;
            if *cycles > MAX_CLASS_CYCLES {
                return Err((
                    format!("{field}.values.{value}"),
                    format!("{cycles} cycles: at most {MAX_CLASS_CYCLES}"),
                ));
            }
            row.cycles = *cycles;
            row.cite = format!("{} [option {name} = {value}: {}]", row.cite, option.cite);
        }
    }
    Ok(())
}

/// `[cycles.issue]`: the issue width (1 or 2) and the units' capacities.
fn parse_issue(file: Option<IssueFile>) -> Result<IssueModel, FieldError> {
    let Some(f) = file else {
        return Ok(IssueModel::default());
    };
    if !(1..=2).contains(&f.width) {
        return Err((
            "cycles.issue.width".into(),
            format!("{}: the model issues 1 or 2 instructions a cycle", f.width),
        ));
    }
    if f.cite.trim().is_empty() {
        return Err((
            "cycles.issue.cite".into(),
            "the issue rules cite their source".into(),
        ));
    }
    if f.fp_mac_shadow > MAX_CLASS_CYCLES {
        return Err((
            "cycles.issue.fp_mac_shadow".into(),
            format!("{} cycles: at most {MAX_CLASS_CYCLES}", f.fp_mac_shadow),
        ));
    }
    let mut units = [u32::MAX; Unit::COUNT];
    for (unit, n) in f.units {
        units[unit.index()] = n;
    }
    Ok(IssueModel {
        width: f.width,
        units,
        narrow_only: f.narrow_only,
        flag_pair_taken: f.flag_pair_taken,
        bitfield_first: f.bitfield_first,
        fp_mac_shadow: f.fp_mac_shadow,
        cite: f.cite,
    })
}

pub mod catalog;
mod predictor;
mod system;
use catalog::{find, names, Source};
use predictor::{parse_predictor, PredictorFile};
pub use predictor::{FlagForwarding, Organisation, PredictorSpec};
use system::SystemFile;
pub use system::{MachineTimer, Peripheral, System, TimerKind, TrapFacts, TrapValue};

/// Names of the built-in targets (and the user's, see [`names`]), sorted.
pub fn builtin_names() -> Vec<String> {
    names()
}

/// Loads a target by name, from the search path or the built-ins.
pub fn builtin(name: &str) -> Result<Target, TargetError> {
    load_by_name(name).map(|(t, _)| t)
}

/// Loads a target by name, with its source. A name may carry the core's
/// build options: `cortex-m0plus:multiplier=small` (comma-separated).
pub fn load_by_name(full_name: &str) -> Result<(Target, Source), TargetError> {
    let (name, options) = split_options(full_name);
    let (text, source) = find(name).ok_or_else(|| TargetError::Unknown {
        name: name.to_owned(),
        known: names().join(", "),
    })?;
    let file = match &source {
        Source::BuiltIn => PathBuf::from(format!("<built-in>/{name}.toml")),
        Source::File(p) => p.clone(),
    };
    let mut target = Target::parse_with(&text, &file, &options)?;
    if target.name != name {
        return Err(TargetError::Invalid {
            file,
            field: "name".into(),
            message: format!(
                "`{}` differs from the file's name `{name}`: a target is looked up by its file name",
                target.name
            ),
        });
    }
    if !options.is_empty() {
        target.name = full_name.to_owned();
    }
    Ok((target, source))
}

/// `NAME:K=V,K=V` into the name and its options.
fn split_options(full_name: &str) -> (&str, Vec<(String, String)>) {
    let Some((name, rest)) = full_name.split_once(':') else {
        return (full_name, Vec::new());
    };
    let options = rest
        .split(',')
        .filter(|o| !o.is_empty())
        .map(|o| match o.split_once('=') {
            Some((k, v)) => (k.trim().to_owned(), v.trim().to_owned()),
            None => (o.trim().to_owned(), String::new()),
        })
        .collect();
    (name, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_target_is_valid_and_named_like_its_file() {
        for (name, _) in catalog::BUILTIN {
            let (t, source) = load_by_name(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&t.name, name);
            // unless a user folder shadows it in this environment
            if std::env::var_os(catalog::PATH_VARIABLE).is_none() {
                assert_eq!(source, catalog::Source::BuiltIn);
            }
        }
    }

    const MINIMAL: &str = r#"
name = "t"
description = "test core"
arch = "riscv"
cpu = "rv32"
clock_hz = 1000
memory = [
  { name = "rom", kind = "flash", start = 0x0, size = 0x1000, access = "rx" },
  { name = "ram", kind = "ram", start = 0x2000, size = 0x1000, access = "rw" },
]
[guest]
cc = "cc"
cflags = []
ldscript = "x.ld"
[cycles]
reference = "test"
[cycles.class]
alu = { cycles = 1, cite = "t" }
mul = { cycles = 1, cite = "t" }
mul_long = { cycles = 1, cite = "t" }
div = { cycles = 2, dynamic = "divide_early_termination", max_cycles = 34, cite = "t" }
load = { cycles = 2, cite = "t" }
store = { cycles = 1, cite = "t" }
branch = { cycles = 1, taken = 1, cite = "t" }
branch_cond = { cycles = 1, taken = 2, cite = "t" }
call = { cycles = 2, cite = "t" }
branch_indirect = { cycles = 2, cite = "t" }
barrier = { cycles = 1, cite = "t" }
system = { cycles = 1, cite = "t" }
"#;

    fn parse(text: &str) -> Result<Target, TargetError> {
        Target::parse(text, Path::new("test.toml"))
    }

    #[test]
    fn minimal_target_loads() {
        let t = parse(MINIMAL).unwrap();
        assert_eq!(t.regions.len(), 2);
        assert_eq!(t.required_row(InsnClass::BranchCond).taken, 2);
        // no fallback: a class without a row has no price
        assert!(t.row(InsnClass::Nop).is_none());
        assert!(t.row(InsnClass::FpDiv).is_none());
        assert_eq!(
            t.required_row(InsnClass::Div).dynamic,
            Some((DynamicCost::DivideEarlyTermination, 34))
        );
    }

    #[test]
    fn unknown_field_is_named_with_file() {
        let text = MINIMAL.replace("clock_hz = 1000", "clock_hz = 1000\nclock_mhz = 1");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.starts_with("test.toml:"), "{err}");
        assert!(err.contains("clock_mhz"), "{err}");
    }

    #[test]
    fn missing_field_is_named() {
        let text = MINIMAL.replace("clock_hz = 1000\n", "");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("clock_hz"), "{err}");
    }

    #[test]
    fn bad_number_is_reported() {
        let text = MINIMAL.replace("clock_hz = 1000", "clock_hz = \"fast\"");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("clock_hz") || err.contains("line 6"), "{err}");
    }

    #[test]
    fn overlapping_regions_are_named() {
        let text = MINIMAL.replace("start = 0x2000", "start = 0x0");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("`rom`") && err.contains("`ram`"), "{err}");
        assert!(err.contains("field `memory`"), "{err}");
    }

    #[test]
    fn misaligned_region_is_refused() {
        let text = MINIMAL.replace("start = 0x2000", "start = 0x2100");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("memory[1].start"), "{err}");
        assert!(err.contains("4 KiB"), "{err}");
    }

    #[test]
    fn missing_class_is_named() {
        let text = MINIMAL.replace("div = { cycles = 2, dynamic = \"divide_early_termination\", max_cycles = 34, cite = \"t\" }\n", "");
        let err = parse(&text).unwrap_err().to_string();
        assert!(
            err.contains("missing instruction class") && err.contains("div"),
            "{err}"
        );
    }

    #[test]
    fn unknown_class_is_refused() {
        let text = MINIMAL.replace("system = {", "sytem = {");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("sytem"), "{err}");
    }

    #[test]
    fn a_cost_that_would_wrap_the_block_arithmetic_is_refused() {
        // 4294967295 once yielded *fewer* cycles than the stock table
        let text = MINIMAL.replace("alu = { cycles = 1,", "alu = { cycles = 4294967295,");
        assert_ne!(text, MINIMAL);
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("cycles.class.alu.cycles"), "{err}");
        assert!(err.contains("at most 10000"), "{err}");
        let text = MINIMAL.replace("taken = 1,", "taken = 20000,");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains(".taken"), "{err}");
    }

    /// RISC-V's `[system]` trap facts and machine timer: read, and each
    /// missing or wrong fact named.
    #[test]
    fn riscv_trap_facts_and_the_machine_timer_are_read_and_checked() {
        const SYSTEM: &str = "\n[system]\n\
            trap_entry = { value = 4, cite = \"t\" }\n\
            interrupt_entry = { value = 5, cite = \"t\" }\n\
            mtval = { value = \"informative\", cite = \"t\" }\n\
            machine_timer = { kind = \"sifive-clint\", base = 0x02000000, tick_hz = 32768, cite = \"t\" }\n";
        let text = format!("{MINIMAL}{SYSTEM}");
        let t = parse(&text).unwrap();
        let traps = t.system.traps.as_ref().unwrap();
        assert_eq!(traps.entry.cycles, 4);
        assert_eq!(traps.interrupt_entry.as_ref().unwrap().cycles, 5);
        assert_eq!(traps.mtval, TrapValue::Informative);
        let timer = t.machine_timer().unwrap();
        assert_eq!(timer.kind, TimerKind::SifiveClint);
        assert_eq!(timer.pages(), 0x0200_0000..0x0200_c000);
        assert!(timer
            .describe()
            .contains("mtime at 0x0200bff8 counts 32768 Hz"));
        for (change, field) in [
            (("kind = \"sifive-clint\", ", ""), "kind"),
            (("sifive-clint", "sifive-plic"), "sifive-plic"),
            (
                ("base = 0x02000000", "base = 0x02000004"),
                "system.machine_timer",
            ),
            (("interrupt_entry", "interupt_entry"), "interupt_entry"),
            (("interrupt_entry = { value = 5", "x = { value = 5"), "x"),
            (
                ("mtval = { value = \"informative\", cite = \"t\" }\n", ""),
                "system.mtval",
            ),
            (("value = \"informative\"", "value = \"some\""), "some"),
            (
                ("trap_entry = { value = 4", "trap_entry = { value = 0"),
                "system.trap_entry.value",
            ),
        ] {
            let bad = text.replace(change.0, change.1);
            assert_ne!(bad, text, "{change:?}");
            let err = parse(&bad).unwrap_err().to_string();
            assert!(err.contains(field), "{change:?}: {err}");
        }
        // a timer needs the interrupt's entry cost
        let bad = text.replace("interrupt_entry = { value = 5, cite = \"t\" }\n", "");
        let err = parse(&bad).unwrap_err().to_string();
        assert!(err.contains("system.interrupt_entry"), "{err}");
        // no trap facts at all: none, and no timer
        let t = parse(MINIMAL).unwrap();
        assert!(t.system.traps.is_none() && t.machine_timer().is_none());
        // a Cortex-M core takes exceptions its own way
        let (m4, _) = catalog::find("cortex-m4").unwrap();
        let bad = m4.replace(
            "[system]\n",
            "[system]\ntrap_entry = { value = 3, cite = \"t\" }\n",
        );
        assert_ne!(bad, m4);
        let err = parse(&bad).unwrap_err().to_string();
        assert!(err.contains("system.trap_entry"), "{err}");
    }

    /// Issue 43, M10: every range a run maps apart from the others, the
    /// file refused naming both fields and ranges (before: Unicorn's "MAP"
    /// error when the engine was set up).
    #[test]
    fn ranges_a_run_maps_overlapping_are_refused_naming_both() {
        let text_of = |name: &str| catalog::BUILTIN.iter().find(|(n, _)| *n == name).unwrap().1;
        let cases = [
            // FLASH_ACR in the SCS; a region in the PPB
            (
                "stm32f407",
                "value = 0x40023C00",
                "value = 0xE000ED00",
                "flash.control",
                "Private Peripheral Bus",
            ),
            (
                "cortex-m4",
                "start = 0x20000000",
                "start = 0xE0000000",
                "memory",
                "Private Peripheral Bus",
            ),
            // the CLINT in SRAM, the SIO timer in the XIP flash
            (
                "sifive-e31",
                "base = 0x02000000",
                "base = 0x20000000",
                "system.machine_timer.base",
                "sram",
            ),
            (
                "rp2350",
                "base = 0xd00001a4",
                "base = 0x100001a4",
                "system.machine_timer.base",
                "`xip`",
            ),
            // XIP_CTRL's page on the machine timer's
            (
                "rp2350",
                "value = 0x400c8000",
                "value = 0xd0000000",
                "xip.control",
                "machine timer",
            ),
        ];
        for (name, from, to, field, other) in cases {
            let text = text_of(name);
            assert!(text.contains(from), "{name}: {from}");
            let e = parse(&text.replacen(from, to, 1)).unwrap_err().to_string();
            assert!(e.contains(&format!("field `{field}`: ")), "{name}: {e}");
            assert!(e.contains(other) && e.contains("overlaps"), "{name}: {e}");
        }
    }

    #[test]
    fn the_stm32f407_flash_accelerator_is_read_and_checked() {
        let t = builtin("stm32f407").unwrap();
        let f = t.flash.as_ref().unwrap();
        // RM0090 Table 10 at 2.7-3.6 V: HCLK <= 30 MHz (the 16 MHz HSI at
        // reset) 0 wait states; 150 < HCLK <= 168 MHz (the clock tree's
        // maximum) 5
        assert_eq!(f.required_wait_states, 0);
        let table = &f.wait_state_table;
        let at = |hz| crate::model::memsys::required_wait_states(table, hz, 7);
        assert_eq!(at(168_000_000), Ok(5));
        assert_eq!(
            t.clocks.as_ref().map(|c| (c.reset_hz, c.max_hz)),
            Some((16_000_000, 168_000_000))
        );
        assert_eq!((f.line_bytes, f.icache_lines, f.dcache_lines), (16, 64, 8));
        assert_eq!((f.control, f.reset, f.start), (0x4002_3C00, 0, 0x0800_0000));
        // every target without `[flash]` has none: priced as before
        for name in builtin_names()
            .iter()
            .filter(|n| !["stm32f407", "stm32f746"].contains(&n.as_str()))
        {
            assert!(builtin(name).unwrap().flash.is_none(), "{name}");
        }
        let text = catalog::BUILTIN
            .iter()
            .find(|(n, _)| *n == "stm32f407")
            .unwrap()
            .1;
        for (from, to, field) in [
            ("region = \"flash\"", "region = \"nowhere\"", "flash.region"),
            (", [168_000_000, 5]]", "]", "flash.wait_states.table"),
            (
                "value = 0x40023C00",
                "value = 0x08000000",
                "flash.control.value",
            ),
            ("value = 16,", "value = 12,", "flash.line_bytes.value"),
            ("value = 64,", "value = 4096,", "flash.icache_lines.value"),
            ("kind = \"stm32f4-art\"", "kind = \"art\"", "flash.kind"),
        ] {
            let bad = text.replace(from, to);
            assert_ne!(bad, text, "{from}");
            let err = Target::parse(&bad, Path::new("f4.toml"))
                .unwrap_err()
                .to_string();
            assert!(err.contains("f4.toml") && err.contains(field), "{err}");
        }
    }

    #[test]
    fn the_stm32f746_caches_are_read_and_checked() {
        use crate::model::l1cache::{Geometry, Policy};
        let t = builtin("stm32f746").unwrap();
        let c = t.l1cache.as_ref().unwrap();
        // 4 KiB each: 64 sets x 2 ways, 32 sets x 4 ways of 32-byte lines
        assert_eq!(c.icache, Geometry { sets: 64, ways: 2 });
        assert_eq!(c.dcache, Geometry { sets: 32, ways: 4 });
        let policy = |a: u64| c.range_of(a).map(|r| (r.policy, r.latency));
        assert_eq!(policy(0x100), Some((Policy::Tcm, 0)));
        assert_eq!(policy(0x0800_0000), Some((Policy::WriteThrough, 7)));
        assert_eq!(policy(0x2000_FFFC), Some((Policy::Tcm, 0)));
        assert_eq!(policy(0x2001_0000), Some((Policy::WriteBack, 2)));
        for name in builtin_names().iter().filter(|n| *n != "stm32f746") {
            assert!(builtin(name).unwrap().l1cache.is_none(), "{name}");
        }
        let text = catalog::BUILTIN
            .iter()
            .find(|(n, _)| *n == "stm32f746")
            .unwrap()
            .1;
        for (from, to, field) in [
            ("kind = \"cortex-m7\"", "kind = \"m7\"", "l1cache.kind"),
            (
                "size = 4096, ways = 2",
                "size = 4000, ways = 2",
                "l1cache.icache",
            ),
            (
                "size = 4096, ways = 4",
                "size = 4096, ways = 9",
                "l1cache.dcache",
            ),
            ("value = 32,", "value = 24,", "l1cache.line_bytes.value"),
            (
                "policy = \"write-back\"",
                "policy = \"wb\"",
                "l1cache.ranges[3].policy",
            ),
            (
                "size = 0x40000, policy",
                "size = 0x50000, policy",
                "l1cache.ranges[3].start",
            ),
            (
                "policy = \"tcm\", cite",
                "policy = \"tcm\", latency = 1, cite",
                "l1cache.ranges[0].latency",
            ),
            ("cpu = \"cortex-m7\"", "cpu = \"cortex-m4\"", "l1cache.kind"),
        ] {
            let bad = text.replacen(from, to, 1);
            assert_ne!(bad, text, "{from}");
            let err = Target::parse(&bad, Path::new("f7.toml"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("f7.toml") && err.contains(field),
                "{field}: {err}"
            );
        }
    }

    #[test]
    fn the_stm32f746_art_is_read_and_checked() {
        use crate::model::memsys::FlashKind;
        let t = builtin("stm32f746").unwrap();
        let f = t.flash.as_ref().unwrap();
        // RM0385 Table 5 at 2.7-3.6 V: the 16 MHz HSI at reset needs none;
        // 210 < HCLK <= 216 MHz (the clock tree's maximum) 7 wait states
        assert_eq!(f.kind, FlashKind::Stm32f7Art);
        assert_eq!(f.required_wait_states, 0);
        let at = |hz| crate::model::memsys::required_wait_states(&f.wait_state_table, hz, 15);
        assert_eq!(at(216_000_000), Ok(7));
        assert_eq!((f.line_bytes, f.icache_lines, f.dcache_lines), (32, 64, 0));
        assert_eq!((f.start, f.end), (0x0020_0000, 0x0030_0000));
        assert_eq!(f.mirror, Some(("flash".to_owned(), 0x0800_0000)));
        assert!(t.l1cache.is_some(), "the ART and the L1 caches together");
        let text = catalog::BUILTIN
            .iter()
            .find(|(n, _)| *n == "stm32f746")
            .unwrap()
            .1;
        for (from, to, field) in [
            ("mirror = \"flash\"\n", "", "flash.mirror"),
            ("mirror = \"flash\"", "mirror = \"ram\"", "flash.mirror"),
            (
                "mirror = \"flash\"",
                "mirror = \"flash_itcm\"",
                "flash.mirror",
            ),
            (
                "mirror = \"flash\"",
                "mirror = \"flash\"\ndcache_lines = { value = 8, cite = \"x\" }",
                "flash.dcache_lines",
            ),
            // the ART's flash in a cached L1 range
            (
                "start = 0x00200000, size = 0x100000, policy = \"tcm\"",
                "start = 0x00200000, size = 0x100000, policy = \"write-through\", latency = 7",
                "flash.region",
            ),
            // 8 wait states fit the F7's 4-bit LATENCY: a table needing 16 does not
            (
                "[216_000_000, 7]]",
                "[216_000_000, 16]]",
                "flash.wait_states.table",
            ),
            (
                "value = 0, cite = \"RM0385 3.7.1",
                "value = 0x400, cite = \"RM0385 3.7.1",
                "flash.reset.value",
            ),
        ] {
            let bad = text.replacen(from, to, 1);
            assert_ne!(bad, text, "{from}");
            let err = Target::parse(&bad, Path::new("f7.toml"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("f7.toml") && err.contains(field),
                "{field}: {err}"
            );
        }
        // the F4's kind still refuses a mirror and needs its data cache
        let f4 = catalog::BUILTIN
            .iter()
            .find(|(n, _)| *n == "stm32f407")
            .unwrap()
            .1;
        for (from, to, field) in [
            (
                "region = \"flash\"",
                "region = \"flash\"\nmirror = \"ccm\"",
                "flash.mirror",
            ),
            ("dcache_lines = ", "", "flash.dcache_lines"),
        ] {
            // `to` empty: the whole line of `from` goes
            let bad = if to.is_empty() {
                let at = f4.find(from).unwrap();
                let end = at + f4[at..].find('\n').unwrap() + 1;
                format!("{}{}", &f4[..at], &f4[end..])
            } else {
                f4.replacen(from, to, 1)
            };
            let err = Target::parse(&bad, Path::new("f4.toml"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(field), "{field}: {err}");
        }
    }

    #[test]
    fn fields_beside_the_class_rows_have_the_same_cap() {
        // issue 30, N01: 65536 was truncated to 16 bits (priced like 0),
        // 4294967295 wait states wrapped in 32-bit arithmetic
        let text = MINIMAL.replace(
            "reference = \"test\"",
            "reference = \"test\"\nmisaligned_target = 65536",
        );
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("cycles.misaligned_target"), "{err}");
        assert!(err.contains("at most 10000"), "{err}");
        let text = MINIMAL.replace(
            "access = \"rx\" }",
            "access = \"rx\", wait_states = 4294967295 }",
        );
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("memory[0].wait_states"), "{err}");
        assert!(err.contains("at most 10000"), "{err}");
        // at the cap, a block's price cannot wrap
        let text = MINIMAL.replace(
            "access = \"rx\" }",
            "access = \"rx\", wait_states = 10000 }",
        );
        assert_eq!(parse(&text).unwrap().regions[0].wait_states, 10_000);
    }

    #[test]
    fn a_memory_map_has_at_most_max_regions() {
        // issue 30, N08: Unicorn maps regions in super-linear time (20,000
        // took 693 s); the count is checked before anything else about them
        let many: String = (0..=MAX_REGIONS as u64)
            .map(|i| {
                format!(
                    "  {{ name = \"r{i}\", kind = \"ram\", start = {:#x}, size = 0x1000, access = \"rw\" }},\n",
                    0x10_0000 + i * 0x1000
                )
            })
            .collect();
        let text = MINIMAL.replace("memory = [\n", &format!("memory = [\n{many}"));
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("field `memory`"), "{err}");
        assert!(
            err.contains(&format!(
                "{} regions: at most {MAX_REGIONS}",
                MAX_REGIONS + 3
            )),
            "{err}"
        );
    }

    #[test]
    fn bad_access_is_named() {
        let text = MINIMAL.replace("access = \"rw\"", "access = \"rwq\"");
        let err = parse(&text).unwrap_err().to_string();
        assert!(err.contains("memory[1].access"), "{err}");
    }

    #[test]
    fn every_builtin_target_loads() {
        let names = builtin_names();
        for required in ["cortex-m0", "cortex-m3", "cortex-m4", "rv32imac"] {
            assert!(names.iter().any(|n| n == required), "missing {required}");
        }
        for name in names {
            let t = builtin(&name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(t.name, name, "file name and `name` field differ");
            for (class, cost) in &t.classes {
                assert!(!cost.cite.is_empty(), "{name}: {class:?} has no citation");
            }
        }
    }
}

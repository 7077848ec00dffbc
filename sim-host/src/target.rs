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
//! - the cycle table has every instruction class the architecture needs
//!   ([`InsnClass::required_for`]), each entry with a citation;
//! - clock and default core count are positive.

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

/// Instruction set family of a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arch {
    /// ARMv6-M / ARMv7-M / ARMv7E-M: Thumb only, M-profile.
    Arm,
    /// RV32 with the C extension.
    Riscv,
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Arch::Arm => "arm",
            Arch::Riscv => "riscv",
        })
    }
}

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

/// The instruction classes of the cycle table. The decoder maps every
/// instruction to one of these; the table gives its cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InsnClass {
    /// Data processing: add, sub, logical, shifts, moves, compares, extends,
    /// bit-field, address generation, LUI/AUIPC.
    Alu,
    /// 32x32 -> 32 multiply (MUL, MULS; RISC-V MUL).
    Mul,
    /// Multiply-accumulate 32-bit (MLA, MLS).
    Mla,
    /// 32x32 -> 64 multiply (UMULL, SMULL; RISC-V MULH, MULHU, MULHSU).
    MulLong,
    /// 64-bit multiply-accumulate (UMLAL, SMLAL).
    MlaLong,
    /// Integer divide and remainder (SDIV, UDIV; RISC-V DIV, DIVU, REM, REMU).
    Div,
    /// Single load (LDR, LDRB, LDRH, LDRSB, LDRSH, LDRD counts as two).
    Load,
    /// Single store (STR, STRB, STRH).
    Store,
    /// Load multiple / POP without PC: cost `cycles + per_register * N`.
    LoadMultiple,
    /// Store multiple / PUSH: cost `cycles + per_register * N`.
    StoreMultiple,
    /// Direct unconditional branch (B, RISC-V JAL x0).
    Branch,
    /// Conditional branch (B<cond>, CBZ, CBNZ, RISC-V Bxx).
    BranchCond,
    /// Call with link (BL, RISC-V JAL ra).
    Call,
    /// Indirect branch or call (BX, BLX, MOV PC, RISC-V JALR).
    BranchIndirect,
    /// Table branch (TBB, TBH).
    TableBranch,
    /// POP or LDM that loads PC: `cycles + per_register * N` plus refill.
    PopPc,
    /// IT instruction.
    It,
    /// NOP, hints.
    Nop,
    /// Barriers (DMB, DSB, ISB; RISC-V FENCE).
    Barrier,
    /// System: MRS, MSR, CPS, SVC, BKPT; RISC-V CSR access, ECALL, EBREAK.
    System,
}

impl InsnClass {
    pub const ALL: [InsnClass; 20] = [
        InsnClass::Alu,
        InsnClass::Mul,
        InsnClass::Mla,
        InsnClass::MulLong,
        InsnClass::MlaLong,
        InsnClass::Div,
        InsnClass::Load,
        InsnClass::Store,
        InsnClass::LoadMultiple,
        InsnClass::StoreMultiple,
        InsnClass::Branch,
        InsnClass::BranchCond,
        InsnClass::Call,
        InsnClass::BranchIndirect,
        InsnClass::TableBranch,
        InsnClass::PopPc,
        InsnClass::It,
        InsnClass::Nop,
        InsnClass::Barrier,
        InsnClass::System,
    ];

    /// The classes a cycle table for `arch` must price.
    pub fn required_for(arch: Arch) -> &'static [InsnClass] {
        use InsnClass::*;
        match arch {
            Arch::Arm => &[
                Alu,
                Mul,
                Load,
                Store,
                LoadMultiple,
                StoreMultiple,
                Branch,
                BranchCond,
                Call,
                BranchIndirect,
                PopPc,
                Nop,
                Barrier,
                System,
            ],
            Arch::Riscv => &[
                Alu,
                Mul,
                MulLong,
                Div,
                Load,
                Store,
                Branch,
                BranchCond,
                Call,
                BranchIndirect,
                Barrier,
                System,
            ],
        }
    }

    pub fn name(self) -> &'static str {
        use InsnClass::*;
        match self {
            Alu => "alu",
            Mul => "mul",
            Mla => "mla",
            MulLong => "mul_long",
            MlaLong => "mla_long",
            Div => "div",
            Load => "load",
            Store => "store",
            LoadMultiple => "load_multiple",
            StoreMultiple => "store_multiple",
            Branch => "branch",
            BranchCond => "branch_cond",
            Call => "call",
            BranchIndirect => "branch_indirect",
            TableBranch => "table_branch",
            PopPc => "pop_pc",
            It => "it",
            Nop => "nop",
            Barrier => "barrier",
            System => "system",
        }
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
    /// The vendor document and table the numbers come from.
    pub cite: String,
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
    /// The file it was loaded from.
    pub file: PathBuf,
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
    cycles: CycleTableFile,
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
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassCostFile {
    cycles: u32,
    #[serde(default)]
    taken: u32,
    #[serde(default)]
    per_register: u32,
    #[serde(default)]
    pipelined: Option<u32>,
    #[serde(default)]
    load_use: u32,
    #[serde(default)]
    address_dependency: u32,
    #[serde(default)]
    register_offset: u32,
    #[serde(default)]
    literal_contention: u32,
    #[serde(default)]
    folded: Option<u32>,
    #[serde(default)]
    dynamic: Option<DynamicCost>,
    #[serde(default)]
    max_cycles: Option<u32>,
    cite: String,
}

impl Target {
    /// Loads and validates a target file.
    pub fn load(path: &Path) -> Result<Target, TargetError> {
        let text = std::fs::read_to_string(path).map_err(|source| TargetError::Io {
            file: path.to_owned(),
            source,
        })?;
        Target::parse(&text, path)
    }

    /// Parses and validates target-file text; `file` names it in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Target, TargetError> {
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
        if raw.cores == 0 || raw.cores as usize > crate::machine::MAX_CORES {
            return Err(invalid(
                "cores",
                format!("{}: must be 1 to {}", raw.cores, crate::machine::MAX_CORES),
            ));
        }
        let mut regions = Vec::with_capacity(raw.memory.len());
        for (i, r) in raw.memory.into_iter().enumerate() {
            let field = |name: &str| format!("memory[{i}].{name}");
            let access = Access::parse(&r.access).ok_or_else(|| {
                invalid(
                    &field("access"),
                    format!(
                        "`{}` is not a permission set such as \"rx\" or \"rw\"",
                        r.access
                    ),
                )
            })?;
            if r.size == 0 {
                return Err(invalid(&field("size"), "must be positive".into()));
            }
            if r.start % PAGE_SIZE != 0 {
                return Err(invalid(
                    &field("start"),
                    format!("{:#x} is not aligned to Unicorn's 4 KiB pages", r.start),
                ));
            }
            if r.size % PAGE_SIZE != 0 {
                return Err(invalid(
                    &field("size"),
                    format!("{:#x} is not a multiple of Unicorn's 4 KiB pages", r.size),
                ));
            }
            if r.start.checked_add(r.size).is_none_or(|end| end > 1 << 32) {
                return Err(invalid(
                    &field("size"),
                    format!(
                        "region {:#x}+{:#x} runs past the 32-bit address space",
                        r.start, r.size
                    ),
                ));
            }
            regions.push(Region {
                name: r.name,
                kind: r.kind,
                start: r.start,
                size: r.size,
                access,
                wait_states: r.wait_states,
            });
        }
        if regions.is_empty() {
            return Err(invalid(
                "memory",
                "a target needs at least one region".into(),
            ));
        }
        for (i, a) in regions.iter().enumerate() {
            for b in &regions[i + 1..] {
                if a.start < b.end() && b.start < a.end() {
                    return Err(invalid(
                        "memory",
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

        let mut classes = BTreeMap::new();
        for (class, c) in raw.cycles.class {
            let field = format!("cycles.class.{}", class.name());
            check_cost_range(&c, &field).map_err(|(f, m)| invalid(&f, m))?;
            if c.cite.trim().is_empty() {
                return Err(invalid(
                    &format!("{field}.cite"),
                    "every cycle-table entry cites its source".into(),
                ));
            }
            let dynamic = match (c.dynamic, c.max_cycles) {
                (None, None) => None,
                (Some(rule), Some(max)) if max >= c.cycles => Some((rule, max)),
                (Some(_), Some(max)) => {
                    return Err(invalid(
                        &format!("{field}.max_cycles"),
                        format!("{max} is below `cycles` = {}", c.cycles),
                    ))
                }
                (Some(_), None) => {
                    return Err(invalid(
                        &format!("{field}.max_cycles"),
                        "a dynamic cost needs `max_cycles`".into(),
                    ))
                }
                (None, Some(_)) => {
                    return Err(invalid(
                        &format!("{field}.dynamic"),
                        "`max_cycles` needs a `dynamic` rule".into(),
                    ))
                }
            };
            classes.insert(
                class,
                ClassCost {
                    cycles: c.cycles,
                    taken: c.taken,
                    per_register: c.per_register,
                    pipelined: c.pipelined,
                    load_use: c.load_use,
                    address_dependency: c.address_dependency,
                    register_offset: c.register_offset,
                    literal_contention: c.literal_contention,
                    folded: c.folded,
                    dynamic,
                    cite: c.cite,
                },
            );
        }
        let missing: Vec<&str> = InsnClass::required_for(raw.arch)
            .iter()
            .filter(|c| !classes.contains_key(c))
            .map(|c| c.name())
            .collect();
        if !missing.is_empty() {
            return Err(invalid(
                "cycles.class",
                format!(
                    "missing instruction class(es) for {}: {}",
                    raw.arch,
                    missing.join(", ")
                ),
            ));
        }
        Ok(Target {
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
            file: file.to_owned(),
        })
    }

    /// Cost of a class; classes a table may omit fall back to related ones.
    pub fn cost(&self, class: InsnClass) -> &ClassCost {
        use InsnClass::*;
        let fallback: &[InsnClass] = match class {
            Mla => &[Mul],
            MulLong | MlaLong => &[Mul],
            Div => &[Mul],
            TableBranch | PopPc => &[BranchIndirect],
            It | Nop => &[Alu],
            LoadMultiple => &[Load],
            StoreMultiple => &[Store],
            _ => &[],
        };
        std::iter::once(&class)
            .chain(fallback)
            .find_map(|c| self.classes.get(c))
            .or_else(|| self.classes.get(&Alu))
            .expect("validated: a target always prices `alu`")
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

/// The most cycles one cycle-table number may say: far beyond any real
/// instruction (a divide takes at most tens), small enough that a block of
/// thousands of instructions cannot overflow its 32-bit price.
pub const MAX_CLASS_CYCLES: u32 = 10_000;

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
        ("literal_contention", Some(c.literal_contention)),
        ("folded", c.folded),
        ("max_cycles", c.max_cycles),
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

pub mod catalog;
pub use catalog::{builtin, builtin_names};

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(t.cost(InsnClass::BranchCond).taken, 2);
        // fallbacks: no `nop` in the table, priced as alu
        assert_eq!(t.cost(InsnClass::Nop).cycles, 1);
        assert_eq!(
            t.cost(InsnClass::Div).dynamic,
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

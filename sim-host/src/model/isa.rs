//! What code a core runs (a target file's `[isa]` table), and what code an
//! ELF needs (its build attributes, read by `image::attributes`): a run
//! of an ELF built for another core is refused before it starts, because
//! it would be priced with the wrong core's timing (or fault half way).
//!
//! Arm: the architecture (ARMv6-M, ARMv7-M, ARMv7E-M, ARMv8-M baseline
//! and mainline), the DSP extension, and the floating-point unit
//! (FPv4-SP-D16, FPv5-SP-D16, FPv5-D16), as the ELF's `.ARM.attributes`
//! record them (Arm IHI 0045, "Addenda to, and Errata in, the ABI for the
//! Arm Architecture", section 2.5: Tag_CPU_arch, Tag_CPU_arch_profile,
//! Tag_FP_arch, Tag_ABI_HardFP_use, Tag_ABI_VFP_args, Tag_DSP_extension,
//! Tag_MVE_arch). RISC-V: the ISA string of `.riscv.attributes`
//! (Tag_RISCV_arch, RISC-V ELF psABI "RISC-V attributes").

use serde::Deserialize;
use std::collections::BTreeSet;
use std::fmt;

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

/// The M-profile architectures, oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ArmArch {
    V6M,
    V7M,
    V7EM,
    V8MBase,
    V8MMain,
}

impl ArmArch {
    fn parse(text: &str) -> Option<ArmArch> {
        Some(match text.to_ascii_lowercase().as_str() {
            "v6-m" | "armv6-m" | "v6s-m" => ArmArch::V6M,
            "v7-m" | "armv7-m" => ArmArch::V7M,
            "v7e-m" | "armv7e-m" => ArmArch::V7EM,
            "v8-m.base" | "armv8-m.base" => ArmArch::V8MBase,
            "v8-m.main" | "armv8-m.main" => ArmArch::V8MMain,
            _ => return None,
        })
    }

    /// Whether a core of this architecture runs code built for `code`.
    fn runs(self, code: ArmArch) -> bool {
        use ArmArch::*;
        match self {
            V6M => code == V6M,
            V7M => matches!(code, V6M | V7M),
            V7EM => matches!(code, V6M | V7M | V7EM),
            V8MBase => matches!(code, V6M | V8MBase),
            V8MMain => true,
        }
    }
}

impl fmt::Display for ArmArch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ArmArch::V6M => "Armv6-M",
            ArmArch::V7M => "Armv7-M",
            ArmArch::V7EM => "Armv7E-M",
            ArmArch::V8MBase => "Armv8-M baseline",
            ArmArch::V8MMain => "Armv8-M mainline",
        })
    }
}

/// The floating-point unit of an M-profile core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fpu {
    None,
    /// FPv4-SP-D16 (Cortex-M4F): single precision.
    Fpv4Sp,
    /// FPv5-SP-D16 (Cortex-M33, M7 single): single precision, Armv8 additions.
    Fpv5Sp,
    /// FPv5-D16 (Cortex-M7 double): single and double precision.
    Fpv5Dp,
}

impl Fpu {
    fn parse(text: &str) -> Option<Fpu> {
        Some(match text {
            "none" => Fpu::None,
            "fpv4-sp-d16" => Fpu::Fpv4Sp,
            "fpv5-sp-d16" => Fpu::Fpv5Sp,
            "fpv5-d16" => Fpu::Fpv5Dp,
            _ => return None,
        })
    }
}

impl fmt::Display for Fpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fpu::None => "no FPU",
            Fpu::Fpv4Sp => "FPv4-SP-D16",
            Fpu::Fpv5Sp => "FPv5-SP-D16",
            Fpu::Fpv5Dp => "FPv5-D16 (double precision)",
        })
    }
}

/// A target file's `[isa]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IsaFile {
    /// Arm: `v6-M`, `v7-M`, `v7E-M`, `v8-M.base`, `v8-M.main`; RISC-V an
    /// ISA string such as `rv32imac_zicsr_zifencei`.
    pub arch: String,
    /// Arm: `none`, `fpv4-sp-d16`, `fpv5-sp-d16`, `fpv5-d16`.
    #[serde(default)]
    pub fpu: Option<String>,
    /// Arm: the DSP extension (always part of Armv7E-M).
    #[serde(default)]
    pub dsp: Option<bool>,
}

/// What code a core runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Isa {
    Arm {
        arch: ArmArch,
        fpu: Fpu,
        dsp: bool,
    },
    Riscv {
        xlen: u32,
        extensions: BTreeSet<String>,
    },
}

/// What an ELF needs, from its build attributes (an attribute the ELF
/// does not record needs nothing).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ArmNeeds {
    /// Tag_CPU_arch and Tag_CPU_arch_profile as recorded.
    pub cpu_arch: Option<u64>,
    pub profile: Option<u64>,
    /// Tag_FP_arch.
    pub fp_arch: Option<u64>,
    /// Tag_ABI_HardFP_use.
    pub hard_fp_use: Option<u64>,
    /// Tag_ABI_VFP_args: 1 means floating-point arguments in VFP registers.
    pub vfp_args: Option<u64>,
    /// Tag_DSP_extension (Armv8-M).
    pub dsp_extension: Option<u64>,
    /// Tag_MVE_arch (Armv8.1-M Helium).
    pub mve: Option<u64>,
}

/// What an ELF needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Needs {
    Arm(ArmNeeds),
    /// The ISA string of Tag_RISCV_arch.
    Riscv(String),
}

impl Isa {
    /// Whether this is an Arm core with an FPU.
    pub fn has_fpu(&self) -> bool {
        matches!(self, Isa::Arm { fpu, .. } if *fpu != Fpu::None)
    }

    /// The `[isa]` table, or for a file without one the ISA of its CPU
    /// model (a core without an FPU unless the file says otherwise).
    pub fn from_file(
        file: Option<IsaFile>,
        arch: Arch,
        cpu: &str,
    ) -> Result<Isa, (String, String)> {
        let field = |f: &str| format!("isa.{f}");
        match (arch, file) {
            (Arch::Arm, Some(f)) => {
                let a = ArmArch::parse(&f.arch).ok_or_else(|| {
                    (
                        field("arch"),
                        format!(
                            "`{}`: expected v6-M, v7-M, v7E-M, v8-M.base or v8-M.main",
                            f.arch
                        ),
                    )
                })?;
                let fpu = match f.fpu.as_deref() {
                    None => Fpu::None,
                    Some(text) => Fpu::parse(text).ok_or_else(|| {
                        (
                            field("fpu"),
                            format!(
                                "`{text}`: expected none, fpv4-sp-d16, fpv5-sp-d16 or fpv5-d16"
                            ),
                        )
                    })?,
                };
                Ok(Isa::Arm {
                    arch: a,
                    fpu,
                    dsp: f.dsp.unwrap_or(a == ArmArch::V7EM),
                })
            }
            (Arch::Riscv, Some(f)) => Isa::riscv(&f.arch).ok_or_else(|| {
                (
                    field("arch"),
                    format!(
                        "`{}`: expected an RV32 ISA string such as rv32imac_zicsr",
                        f.arch
                    ),
                )
            }),
            (Arch::Arm, None) => Ok(match cpu {
                "cortex-m0" => Isa::Arm {
                    arch: ArmArch::V6M,
                    fpu: Fpu::None,
                    dsp: false,
                },
                "cortex-m3" => Isa::Arm {
                    arch: ArmArch::V7M,
                    fpu: Fpu::None,
                    dsp: false,
                },
                "cortex-m33" => Isa::Arm {
                    arch: ArmArch::V8MMain,
                    fpu: Fpu::None,
                    dsp: true,
                },
                _ => Isa::Arm {
                    arch: ArmArch::V7EM,
                    fpu: Fpu::None,
                    dsp: true,
                },
            }),
            (Arch::Riscv, None) => Ok(Isa::riscv("rv32imac_zicsr_zifencei").expect("valid")),
        }
    }

    fn riscv(text: &str) -> Option<Isa> {
        let (xlen, extensions) = riscv_extensions(text)?;
        Some(Isa::Riscv { xlen, extensions })
    }

    /// Whether this core runs code that needs `needs`; the reason if not.
    pub fn check(&self, needs: &Needs) -> Result<(), String> {
        match (self, needs) {
            (Isa::Arm { arch, fpu, dsp }, Needs::Arm(n)) => check_arm(*arch, *fpu, *dsp, n),
            (Isa::Riscv { xlen, extensions }, Needs::Riscv(text)) => {
                check_riscv(*xlen, extensions, text)
            }
            _ => Err("it is for another architecture".into()),
        }
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Isa::Arm { arch, fpu, dsp } => {
                write!(f, "{arch}")?;
                if *dsp && *arch != ArmArch::V7EM {
                    write!(f, " with DSP")?;
                }
                write!(f, ", {fpu}")
            }
            Isa::Riscv { xlen, extensions } => {
                write!(f, "RV{xlen} ")?;
                let letters: String = extensions
                    .iter()
                    .filter(|e| e.len() == 1)
                    .map(String::as_str)
                    .collect();
                write!(f, "{letters}")?;
                for e in extensions.iter().filter(|e| e.len() > 1) {
                    write!(f, "_{e}")?;
                }
                Ok(())
            }
        }
    }
}

/// The architecture an ELF's Tag_CPU_arch (with its profile) names, if it
/// is an M-profile one.
fn arm_arch_of(tag: u64, profile: Option<u64>) -> Result<ArmArch, String> {
    Ok(match tag {
        11 | 12 => ArmArch::V6M,
        10 if matches!(profile, Some(0x4d) | None | Some(0)) => ArmArch::V7M,
        13 => ArmArch::V7EM,
        16 => ArmArch::V8MBase,
        17 => ArmArch::V8MMain,
        21 => return Err("it is built for Armv8.1-M mainline (Cortex-M55/M85), which no target here runs".into()),
        _ => {
            return Err(format!(
                "it is built for an A- or R-profile or classic Arm architecture (Tag_CPU_arch {tag}), not a Cortex-M core"
            ))
        }
    })
}

fn check_arm(arch: ArmArch, fpu: Fpu, dsp: bool, n: &ArmNeeds) -> Result<(), String> {
    if let Some(tag) = n.cpu_arch {
        let code = arm_arch_of(tag, n.profile)?;
        if !arch.runs(code) {
            return Err(format!(
                "it is built for {code} (Tag_CPU_arch), the core runs {arch}"
            ));
        }
        if code == ArmArch::V7EM && !dsp {
            return Err(format!(
                "it is built for {code}, which has the DSP extension; the core has none"
            ));
        }
    }
    if n.dsp_extension.unwrap_or(0) != 0 && !dsp {
        return Err("it uses the DSP extension (Tag_DSP_extension); the core has none".into());
    }
    if n.mve.unwrap_or(0) != 0 {
        return Err("it uses the M-profile vector extension (Helium, Tag_MVE_arch), which no target here has".into());
    }
    let fp_arch = n.fp_arch.unwrap_or(0);
    let hard_args = n.vfp_args == Some(1);
    if fp_arch == 0 && !hard_args {
        return Ok(());
    }
    if fpu == Fpu::None {
        let why = if hard_args {
            "it passes floating-point arguments in FPU registers (Tag_ABI_VFP_args: hard-float)"
        } else {
            "it uses FPU instructions (Tag_FP_arch)"
        };
        return Err(format!("{why}; the core has no FPU"));
    }
    // Tag_ABI_HardFP_use 1 is "single precision only"; 0 means as much as
    // Tag_FP_arch allows, which is double precision for every VFP.
    let double = fp_arch >= 2 && n.hard_fp_use.unwrap_or(0) != 1;
    let armv8_fp = fp_arch >= 7;
    if double && fpu != Fpu::Fpv5Dp {
        return Err(format!(
            "it uses double-precision FPU instructions (Tag_FP_arch {fp_arch}, Tag_ABI_HardFP_use {}); the core's FPU is {fpu}",
            n.hard_fp_use.unwrap_or(0)
        ));
    }
    if armv8_fp && fpu == Fpu::Fpv4Sp {
        return Err(format!(
            "it uses the Armv8 FPU (FPv5, Tag_FP_arch {fp_arch}); the core's FPU is {fpu}"
        ));
    }
    Ok(())
}

/// The extensions of an RV32/RV64 ISA string, versions dropped, `g`
/// expanded, and the sub-extensions a letter comprises made explicit, as
/// newer toolchains record them (rustc 1.8x writes
/// `rv32i2p1_m2p0_a2p1_c2p0_zmmul1p0_zaamo1p0_zalrsc1p0_zca1p0`): Zmmul by
/// M; Zaamo and Zalrsc by A ("the A extension comprises Zaamo and
/// Zalrsc", RISC-V unprivileged ISA 20240411, chapter 13); Zca by C, with
/// Zcf on RV32 when F is there and Zcd when D is ("Zc*" chapter 28: C
/// implies Zca, plus Zcf if F is specified (RV32 only), plus Zcd if D).
fn riscv_extensions(text: &str) -> Option<(u32, BTreeSet<String>)> {
    let lower = text.to_ascii_lowercase();
    let (xlen, rest) = if let Some(r) = lower.strip_prefix("rv32") {
        (32, r)
    } else if let Some(r) = lower.strip_prefix("rv64") {
        (64, r)
    } else {
        return None;
    };
    let mut parts = rest.split('_');
    let singles = parts.next()?;
    let mut set = BTreeSet::new();
    let mut chars = singles.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_ascii_alphabetic() {
            return None;
        }
        // a version: digits, optionally `p` and digits
        while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            chars.next();
        }
        if chars.peek() == Some(&'p') {
            chars.next();
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
        }
        if c == 'g' {
            for e in ["i", "m", "a", "f", "d", "zicsr", "zifencei"] {
                set.insert(e.to_owned());
            }
        } else {
            set.insert(c.to_string());
        }
    }
    for multi in parts.filter(|p| !p.is_empty()) {
        let name = multi.trim_end_matches(|c: char| c.is_ascii_digit() || c == 'p');
        if name.is_empty() {
            return None;
        }
        set.insert(name.to_owned());
    }
    if set.contains("m") {
        set.insert("zmmul".into());
    }
    if set.contains("a") {
        set.insert("zaamo".into());
        set.insert("zalrsc".into());
    }
    if set.contains("c") {
        set.insert("zca".into());
        if set.contains("f") && xlen == 32 {
            set.insert("zcf".into());
        }
        if set.contains("d") {
            set.insert("zcd".into());
        }
    }
    Some((xlen, set))
}

fn check_riscv(xlen: u32, core: &BTreeSet<String>, needs: &str) -> Result<(), String> {
    let Some((code_xlen, code)) = riscv_extensions(needs) else {
        return Err(format!("its Tag_RISCV_arch `{needs}` is not an ISA string"));
    };
    if code_xlen != xlen {
        return Err(format!(
            "it is built for RV{code_xlen}, the core is RV{xlen}"
        ));
    }
    let missing: Vec<&str> = code
        .iter()
        .filter(|e| !core.contains(*e))
        .map(String::as_str)
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "it is built for {needs} (Tag_RISCV_arch), which needs extension(s) {} the core lacks",
            missing.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(arch: &str, fpu: &str, dsp: Option<bool>) -> Isa {
        Isa::from_file(
            Some(IsaFile {
                arch: arch.into(),
                fpu: Some(fpu.into()),
                dsp,
            }),
            Arch::Arm,
            "x",
        )
        .unwrap()
    }

    fn needs(cpu_arch: u64, fp_arch: u64, hard_fp_use: Option<u64>, vfp_args: u64) -> Needs {
        Needs::Arm(ArmNeeds {
            cpu_arch: Some(cpu_arch),
            profile: Some(0x4d),
            fp_arch: Some(fp_arch),
            hard_fp_use,
            vfp_args: Some(vfp_args),
            ..Default::default()
        })
    }

    #[test]
    fn arm_architectures_nest() {
        let m4 = arm("v7E-M", "none", None);
        let m33 = arm("v8-M.main", "fpv5-sp-d16", Some(true));
        let m0 = arm("v6-M", "none", None);
        // v6-M code runs everywhere; v8-M mainline only on the M33
        assert!(m0.check(&needs(12, 0, None, 0)).is_ok());
        assert!(m4.check(&needs(12, 0, None, 0)).is_ok());
        let err = m4.check(&needs(17, 0, None, 0)).unwrap_err();
        assert!(err.contains("Armv8-M mainline"), "{err}");
        assert!(m33.check(&needs(17, 0, None, 0)).is_ok());
        assert!(m33.check(&needs(13, 0, None, 0)).is_ok());
        assert!(m0.check(&needs(10, 0, None, 0)).is_err());
    }

    #[test]
    fn floating_point_needs_the_right_fpu() {
        let m4 = arm("v7E-M", "none", None);
        let m4f = arm("v7E-M", "fpv4-sp-d16", None);
        let m7 = arm("v7E-M", "fpv5-d16", None);
        // gcc -mfpu=fpv4-sp-d16 -mfloat-abi=hard: VFPv4-D16, SP only, VFP args
        let hard_sp = needs(13, 6, Some(1), 1);
        let err = m4.check(&hard_sp).unwrap_err();
        assert!(err.contains("no FPU"), "{err}");
        assert!(m4f.check(&hard_sp).is_ok());
        assert!(m7.check(&hard_sp).is_ok());
        // fpv5-d16: double precision, Armv8 FP
        let dp = needs(13, 8, None, 1);
        assert!(m4f.check(&dp).unwrap_err().contains("double"));
        assert!(m7.check(&dp).is_ok());
        // soft float runs on an FPU core
        assert!(m4f.check(&needs(13, 0, None, 0)).is_ok());
    }

    #[test]
    fn riscv_strings_are_compared_by_extension() {
        let core = Isa::riscv("rv32imac_zicsr_zifencei").unwrap();
        let ok = Needs::Riscv("rv32i2p1_m2p0_a2p1_c2p0_zicsr2p0_zmmul1p0".into());
        assert!(core.check(&ok).is_ok());
        let float = Needs::Riscv("rv32i2p1_m2p0_a2p1_f2p2_c2p0".into());
        let err = core.check(&float).unwrap_err();
        assert!(err.contains(" f"), "{err}");
        let wide = Needs::Riscv("rv64imac".into());
        assert!(core.check(&wide).unwrap_err().contains("RV64"));
        // what rustc writes for riscv32imac-unknown-none-elf: A and C's
        // sub-extensions spelled out; the core's A and C have them
        let rust =
            Needs::Riscv("rv32i2p1_m2p0_a2p1_c2p0_zmmul1p0_zaamo1p0_zalrsc1p0_zca1p0".into());
        assert!(core.check(&rust).is_ok(), "{:?}", core.check(&rust));
        // Zcb is not implied by C
        let zcb = Needs::Riscv("rv32imac_zca_zcb".into());
        assert!(core.check(&zcb).unwrap_err().contains("zcb"));
    }
}

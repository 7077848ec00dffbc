//! An ELF's build attributes (`.ARM.attributes`, `.riscv.attributes`):
//! what code it needs, checked against the target before a run so that an
//! ELF built for another core is never priced with the wrong core's timing
//! (`--force-target` runs it anyway).
//!
//! The section format (Arm IHI 0045 "Addenda to, and Errata in, the ABI
//! for the Arm Architecture", 2.2; the RISC-V ELF psABI uses the same):
//! `'A'`, then subsections of (u32 length, vendor name NUL, then
//! sub-subsections of (tag ULEB128, u32 length, attributes)); an attribute
//! is a tag (ULEB128) and a ULEB128 or NUL-terminated string value. The
//! value's kind is the tag's: for Arm, string tags are 4, 5, 32 (ULEB then
//! string), 65, 67, and above 32 the odd ones; for RISC-V the odd tags.
//! Only file-scope (tag 1) attributes are read.

use crate::model::isa::{ArmNeeds, Needs};
use crate::model::target::{self, Arch, Target};
use goblin::elf::Elf;

/// Why an ELF does not run on a target, and which target it does run on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: built for another core: {reason}; target `{target}` is {isa}: {advice}")]
pub struct Mismatch {
    pub file: String,
    pub reason: String,
    pub target: String,
    pub isa: String,
    pub advice: String,
}

/// What the ELF in `bytes` needs, from its attributes section (`None`
/// when it has none: then there is nothing to check).
pub fn needs(elf: &Elf<'_>, bytes: &[u8], arch: Arch) -> Option<Needs> {
    let name = match arch {
        Arch::Arm => ".ARM.attributes",
        Arch::Riscv => ".riscv.attributes",
    };
    let section = elf
        .section_headers
        .iter()
        .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(name))?;
    let start = usize::try_from(section.sh_offset).ok()?;
    let end = start.checked_add(usize::try_from(section.sh_size).ok()?)?;
    let attributes = file_attributes(bytes.get(start..end)?, arch)?;
    Some(match arch {
        Arch::Arm => {
            let number = |tag: u64| {
                attributes.iter().find_map(|(t, v)| match v {
                    Value::Number(n) if *t == tag => Some(*n),
                    _ => None,
                })
            };
            Needs::Arm(ArmNeeds {
                cpu_arch: number(6),
                profile: number(7),
                fp_arch: number(10),
                hard_fp_use: number(27),
                vfp_args: number(28),
                dsp_extension: number(46),
                mve: number(48),
            })
        }
        Arch::Riscv => Needs::Riscv(attributes.iter().find_map(|(t, v)| match v {
            Value::Text(s) if *t == 5 => Some(s.clone()),
            _ => None,
        })?),
    })
}

/// A value of an attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Value {
    Number(u64),
    Text(String),
}

/// The file-scope attributes of an attributes section (the first vendor
/// subsection, `aeabi` or `riscv`); `None` for a section that is not in
/// the format.
fn file_attributes(data: &[u8], arch: Arch) -> Option<Vec<(u64, Value)>> {
    let mut r = Reader { data, at: 0 };
    if r.byte()? != b'A' {
        return None;
    }
    let sub_len = r.u32()? as usize;
    let sub_end = (r.at - 4).checked_add(sub_len)?.min(data.len());
    let vendor = r.text()?;
    if !matches!(vendor.as_str(), "aeabi" | "riscv") {
        return None;
    }
    let mut out = Vec::new();
    while r.at < sub_end {
        let scope_start = r.at;
        let scope = r.uleb()?;
        let len = r.u32()? as usize;
        let scope_end = scope_start.checked_add(len)?.min(sub_end);
        if scope != 1 || len == 0 {
            r.at = scope_end.max(r.at);
            if len == 0 {
                break;
            }
            continue;
        }
        let mut a = Reader {
            data: data.get(..scope_end)?,
            at: r.at,
        };
        while a.at < scope_end {
            let tag = a.uleb()?;
            let value = match (arch, tag) {
                (Arch::Arm, 4 | 5 | 65 | 67) => Value::Text(a.text()?),
                (Arch::Arm, 32) => {
                    let n = a.uleb()?;
                    let _ = a.text()?;
                    Value::Number(n)
                }
                (Arch::Arm, t) if t > 32 && t % 2 == 1 => Value::Text(a.text()?),
                (Arch::Riscv, t) if t % 2 == 1 => Value::Text(a.text()?),
                _ => Value::Number(a.uleb()?),
            };
            out.push((tag, value));
        }
        r.at = scope_end;
    }
    Some(out)
}

/// A cursor over an attributes section; every read is bounds-checked.
struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.data.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn u32(&mut self) -> Option<u32> {
        let bytes = self.data.get(self.at..self.at.checked_add(4)?)?;
        self.at += 4;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    }

    fn uleb(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn text(&mut self) -> Option<String> {
        let rest = self.data.get(self.at..)?;
        let len = rest.iter().position(|b| *b == 0)?;
        self.at += len + 1;
        Some(String::from_utf8_lossy(&rest[..len]).into_owned())
    }
}

/// The order suggestions are looked for in: the smallest core that runs
/// the code.
const PREFERENCE: &[&str] = &[
    "cortex-m0",
    "cortex-m0plus",
    "cortex-m3",
    "cortex-m4",
    "cortex-m4f",
    "cortex-m33",
    "cortex-m7",
    "rv32imac",
    "sifive-e31",
];

/// Checks an ELF's build attributes (`needs`, of `file`) against
/// `target`; on a mismatch names a target (built-in or the user's) that
/// runs the ELF.
pub fn check(
    needs: Option<&Needs>,
    file: &std::path::Path,
    target: &Target,
) -> Result<(), Mismatch> {
    let Some(needs) = needs else {
        return Ok(());
    };
    let Err(reason) = target.isa.check(needs) else {
        return Ok(());
    };
    let mut names = target::catalog::names();
    names.sort_by_key(|n| {
        PREFERENCE
            .iter()
            .position(|p| p == n)
            .unwrap_or(PREFERENCE.len())
    });
    let runs_it = names.into_iter().find(|n| {
        target::builtin(n).is_ok_and(|t| t.arch == target.arch && t.isa.check(needs).is_ok())
    });
    let advice = match runs_it {
        Some(name) => format!(
            "try --target {name} (or --force-target to run it on `{}` anyway)",
            target.name
        ),
        None => format!(
            "no known target runs it (sim-host targets); --force-target runs it on `{}` anyway",
            target.name
        ),
    };
    Err(Mismatch {
        file: file.display().to_string(),
        reason,
        target: target.name.clone(),
        isa: target.isa.to_string(),
        advice,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `.ARM.attributes` section with the file-scope attributes `body`.
    fn arm_section(body: &[u8]) -> Vec<u8> {
        let mut scope = vec![1u8];
        scope.extend_from_slice(&(5 + body.len() as u32).to_le_bytes());
        scope.extend_from_slice(body);
        let mut sub = Vec::new();
        sub.extend_from_slice(&(4 + 6 + scope.len() as u32).to_le_bytes());
        sub.extend_from_slice(b"aeabi\0");
        sub.extend_from_slice(&scope);
        let mut section = vec![b'A'];
        section.extend_from_slice(&sub);
        section
    }

    #[test]
    fn arm_attributes_are_read_with_strings_skipped() {
        // Tag_CPU_name "7E-M", Tag_CPU_arch 13, Tag_CPU_arch_profile 'M',
        // Tag_FP_arch 6, Tag_ABI_HardFP_use 1, Tag_ABI_VFP_args 1,
        // Tag_conformance "2.09" (67)
        let body = [
            5, b'7', b'E', b'-', b'M', 0, 6, 13, 7, 0x4d, 10, 6, 27, 1, 28, 1, 67, b'2', 0,
        ];
        let attrs = file_attributes(&arm_section(&body), Arch::Arm).unwrap();
        assert!(attrs.contains(&(6, Value::Number(13))));
        assert!(attrs.contains(&(28, Value::Number(1))));
        assert!(attrs.contains(&(5, Value::Text("7E-M".into()))));
        assert!(attrs.contains(&(67, Value::Text("2".into()))));
    }

    #[test]
    fn truncated_or_foreign_sections_read_as_nothing() {
        let section = arm_section(&[6, 13, 10, 6]);
        for len in 0..section.len() {
            // never panics; a cut section gives nothing or a prefix
            let _ = file_attributes(&section[..len], Arch::Arm);
        }
        assert_eq!(file_attributes(b"B\x05\0\0\0", Arch::Arm), None);
        // a ULEB that never ends
        let mut endless = arm_section(&[]);
        endless.extend_from_slice(&[0xff; 20]);
        let _ = file_attributes(&endless, Arch::Arm);
    }
}

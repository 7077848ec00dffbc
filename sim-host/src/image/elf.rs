//! Guest ELF loading with goblin: loadable segments, entry point, machine,
//! and the function symbols the report, the interception of ARP entry
//! points and fault messages need.
//!
//! Invariants of a [`GuestImage`]:
//! - it is a 32-bit little-endian ELF of the target's architecture;
//! - every `PT_LOAD` segment lies inside one of the target's memory regions,
//!   at its load (physical) address: start-up code copies `.data` to its
//!   run address as on hardware;
//! - `functions` is sorted by address.

use crate::model::target::{Arch, Target};
use goblin::elf::{header, program_header, Elf};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: not a valid ELF file: {message}")]
    Parse { file: PathBuf, message: String },
    #[error("{file}: {message}")]
    Unsupported { file: PathBuf, message: String },
    #[error("{file}: is an ELF for {found}, but target `{target}` is {expected}: {advice}")]
    WrongMachine {
        file: PathBuf,
        found: String,
        target: String,
        expected: Arch,
        /// Which target to use instead, or how to build for this one.
        advice: String,
    },
    #[error(
        "{file}: segment {index} ({start:#010x}..{end:#010x}, {size} bytes) is outside every memory region of target `{target}`:\n{map}"
    )]
    SegmentOutsideMemory {
        file: PathBuf,
        index: usize,
        start: u64,
        end: u64,
        size: u64,
        target: String,
        map: String,
    },
}

/// A loadable segment: bytes to place at `load_addr`, zero-filled to `mem_size`.
#[derive(Debug, Clone)]
pub struct Segment {
    pub index: usize,
    pub load_addr: u64,
    pub data: Vec<u8>,
    pub mem_size: u64,
    pub executable: bool,
}

/// A symbol's name as a person reads it: Rust names demangled without
/// their hash (`rdemo::fir_block`, not `_ZN5rdemo9fir_block17h…E`); C
/// names as they are (so the ARP entry points keep their names).
pub fn readable_name(symbol: &str) -> String {
    match rustc_demangle::try_demangle(symbol) {
        Ok(d) => format!("{d:#}"),
        Err(_) => symbol.to_owned(),
    }
}

/// A function symbol.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// Address of the first instruction (Thumb bit cleared).
    pub addr: u64,
    pub size: u64,
    pub name: String,
}

#[derive(Debug, Clone)]
pub struct GuestImage {
    pub file: PathBuf,
    pub arch: Arch,
    pub entry: u64,
    pub segments: Vec<Segment>,
    pub functions: Vec<Function>,
    /// Every named symbol (functions and objects) with its value.
    pub symbols: Vec<(String, u64)>,
    /// What code it needs, from its build attributes (`image::attributes`).
    pub needs: Option<crate::model::isa::Needs>,
    /// The section names of its `.arp_names` (`image::arp_names`).
    pub arp_names: super::arp_names::GivenNames,
}

fn machine_name(machine: u16) -> String {
    match machine {
        header::EM_ARM => "ARM".into(),
        header::EM_RISCV => "RISC-V".into(),
        header::EM_X86_64 => "x86-64".into(),
        header::EM_386 => "x86".into(),
        header::EM_AARCH64 => "AArch64".into(),
        other => format!("machine {other}"),
    }
}

/// The built-in target an ARM ELF was compiled for, from its
/// Tag_CPU_name in `.ARM.attributes` (ARM IHI 0045, "Addenda to the ABI"):
/// gcc records `-mcpu`'s name in an object and the architecture
/// (`6S-M`, `7-M`, `7E-M`) in a linked executable.
fn cpu_name(elf: &Elf<'_>, bytes: &[u8]) -> Option<String> {
    let name = arm_cpu_tag(elf, bytes)?.to_lowercase();
    let target = match name.as_str() {
        "6-m" | "6s-m" => "cortex-m0",
        "7-m" => "cortex-m3",
        "7e-m" => "cortex-m4",
        other => other,
    };
    Some(target.to_owned())
}

/// The first NUL-terminated string after a Tag_CPU_name (5) byte in
/// `.ARM.attributes`.
fn arm_cpu_tag(elf: &Elf<'_>, bytes: &[u8]) -> Option<String> {
    let section = elf
        .section_headers
        .iter()
        .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".ARM.attributes"))?;
    let start = usize::try_from(section.sh_offset).ok()?;
    let data = bytes.get(start..start.checked_add(section.sh_size as usize)?)?;
    // Skip the header ('A', length, "aeabi\0", tag 1, length) to the tags.
    let tags = data.windows(6).position(|w| w == b"aeabi\0")? + 6 + 5;
    let at = tags + data.get(tags..)?.iter().position(|b| *b == 5)? + 1;
    let end = at + data.get(at..)?.iter().position(|b| *b == 0)?;
    let name = std::str::from_utf8(&data[at..end]).ok()?;
    (!name.is_empty() && name.len() < 32).then(|| name.to_owned())
}

/// "try --target X" for an ELF of `arch`: the built-in target of the CPU
/// it was compiled for if there is one, else every target of the arch.
fn suggest_targets(arch: Arch, cpu: Option<&str>) -> String {
    let candidates: Vec<String> = crate::model::target::catalog::names()
        .into_iter()
        .filter(|n| crate::model::target::builtin(n).is_ok_and(|t| t.arch == arch))
        .collect();
    let chosen: Vec<&String> = match cpu {
        Some(cpu) if candidates.iter().any(|n| n == cpu) => {
            candidates.iter().filter(|n| *n == cpu).collect()
        }
        _ => candidates.iter().collect(),
    };
    match chosen.as_slice() {
        [] => format!("no known target runs {arch} code (sim-host targets)"),
        [one] => format!("this is {} code: try --target {one}", describe(arch, cpu)),
        many => format!(
            "this is {} code: try --target with one of {}",
            describe(arch, cpu),
            many.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn describe(arch: Arch, cpu: Option<&str>) -> String {
    let family = match arch {
        Arch::Arm => "ARM",
        Arch::Riscv => "RISC-V",
    };
    match cpu {
        Some(cpu) => format!("{family} ({cpu})"),
        None => family.to_owned(),
    }
}

/// Why the ELF library refused a file, in this project's words (its own
/// messages, like "type is too big (4) for 0", tell a user nothing).
pub fn parse_failure(e: &goblin::error::Error, len: usize) -> String {
    use goblin::error::Error;
    match e {
        Error::BadMagic(_) => {
            "it does not start with the ELF magic number (0x7f 'E' 'L' 'F')".into()
        }
        Error::Malformed(m) if m == "Too small" => {
            format!("it is {len} bytes long, shorter than an ELF header")
        }
        Error::Malformed(m)
            if m.contains("class") || m.contains("endian") || m.contains("DATA") =>
        {
            "its identification bytes name no ELF class or byte order".into()
        }
        Error::Scroll(_) | Error::BufferTooShort(..) => {
            format!("a header or table it declares lies beyond the end of the file ({len} bytes)")
        }
        Error::IO(io) => format!("it cannot be read: {io}"),
        _ => "its headers are inconsistent (a size, count or offset does not fit the file)".into(),
    }
}

/// The bytes of the ELF at `path`, refused past `limits::MAX_ELF_BYTES`
/// (an endless file, such as a device node, is never read to its end).
fn read_capped(path: &Path) -> Result<Vec<u8>, ElfError> {
    arpsim::input::read(path, crate::model::limits::MAX_ELF_BYTES).map_err(|source| ElfError::Io {
        file: path.to_owned(),
        source,
    })
}

impl GuestImage {
    /// Loads `path` and checks it against `target`.
    pub fn load(path: &Path, target: &Target) -> Result<GuestImage, ElfError> {
        GuestImage::parse(&read_capped(path)?, path, target)
    }

    pub fn parse(bytes: &[u8], path: &Path, target: &Target) -> Result<GuestImage, ElfError> {
        GuestImage::parse_for(bytes, path, Some(target))
    }

    /// Loads `path` to look at its code and symbols only (the names of
    /// its ARP sections, for the `arp` tools' `--elf`): its segments are
    /// not checked against any target's memory map.
    pub fn inspect(path: &Path) -> Result<GuestImage, ElfError> {
        GuestImage::parse_for(&read_capped(path)?, path, None)
    }

    fn parse_for(
        bytes: &[u8],
        path: &Path,
        target: Option<&Target>,
    ) -> Result<GuestImage, ElfError> {
        let file = path.to_owned();
        let elf = Elf::parse(bytes).map_err(|e| ElfError::Parse {
            file: file.clone(),
            message: parse_failure(&e, bytes.len()),
        })?;
        if elf.is_64 || !elf.little_endian {
            return Err(ElfError::Unsupported {
                file,
                message: "only 32-bit little-endian ELF files run on the supported cores".into(),
            });
        }
        let arch = match (elf.header.e_machine, target) {
            (header::EM_ARM, _) => Arch::Arm,
            (header::EM_RISCV, _) => Arch::Riscv,
            (other, None) => {
                return Err(ElfError::Unsupported {
                    file,
                    message: format!("is an ELF for {}, not ARM or RISC-V", machine_name(other)),
                })
            }
            (other, Some(target)) => {
                return Err(ElfError::WrongMachine {
                    file,
                    found: machine_name(other),
                    target: target.name.clone(),
                    expected: target.arch,
                    advice: format!("build it with the target's compiler ({})", target.guest.cc),
                })
            }
        };
        if let Some(target) = target.filter(|t| t.arch != arch) {
            return Err(ElfError::WrongMachine {
                file,
                found: machine_name(elf.header.e_machine),
                target: target.name.clone(),
                expected: target.arch,
                advice: suggest_targets(arch, cpu_name(&elf, bytes).as_deref()),
            });
        }
        let mut segments = Vec::new();
        for (index, ph) in elf.program_headers.iter().enumerate() {
            if ph.p_type != program_header::PT_LOAD || ph.p_memsz == 0 {
                continue;
            }
            let start = ph.p_offset as usize;
            let end = start
                .checked_add(ph.p_filesz as usize)
                .filter(|e| *e <= bytes.len());
            let Some(end) = end else {
                return Err(ElfError::Parse {
                    file,
                    message: format!("segment {index} runs past the end of the file"),
                });
            };
            // Only the file-backed part must lie in memory for loading; the
            // zero-filled rest (.bss) must too, or start-up code faults.
            let load_addr = ph.p_paddr;
            let size = ph.p_filesz.max(if ph.p_paddr == ph.p_vaddr {
                ph.p_memsz
            } else {
                0
            });
            if let Some(target) = target.filter(|t| t.region_of(load_addr, size.max(1)).is_none()) {
                return Err(ElfError::SegmentOutsideMemory {
                    file,
                    index,
                    start: load_addr,
                    end: load_addr + size,
                    size,
                    target: target.name.clone(),
                    map: target.memory_map(),
                });
            }
            segments.push(Segment {
                index,
                load_addr,
                data: bytes[start..end].to_vec(),
                mem_size: size,
                executable: ph.is_executable(),
            });
        }
        if segments.is_empty() {
            return Err(ElfError::Unsupported {
                file,
                message: "has no loadable segment".into(),
            });
        }
        let mut functions = Vec::new();
        let mut symbols = Vec::new();
        for sym in elf.syms.iter() {
            let Some(name) = elf.strtab.get_at(sym.st_name) else {
                continue;
            };
            if name.is_empty() || name.starts_with('$') {
                continue;
            }
            symbols.push((name.to_owned(), sym.st_value));
            if sym.is_function() {
                functions.push(Function {
                    addr: sym.st_value & !1,
                    size: sym.st_size,
                    name: readable_name(name),
                });
            }
        }
        functions.sort_by(|a, b| a.addr.cmp(&b.addr).then(a.name.cmp(&b.name)));
        functions.dedup_by(|b, a| a.addr == b.addr);
        Ok(GuestImage {
            file,
            arch,
            entry: elf.entry,
            segments,
            functions,
            symbols,
            needs: super::attributes::needs(&elf, bytes, arch),
            arp_names: super::arp_names::read(&elf, bytes),
        })
    }

    /// The function symbol named `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The value of the symbol named `name`.
    pub fn symbol(&self, name: &str) -> Option<u64> {
        self.symbols
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    /// The function containing `addr`, if a symbol covers it. A symbol
    /// without a size (assembly) extends to the next function.
    pub fn function_at(&self, addr: u64) -> Option<&Function> {
        let i = self.functions.partition_point(|f| f.addr <= addr);
        let f = self.functions.get(i.checked_sub(1)?)?;
        let end = if f.size > 0 {
            f.addr + f.size
        } else {
            self.functions.get(i).map_or(f.addr + 1, |next| next.addr)
        };
        (addr < end).then_some(f)
    }

    /// `function+0xoffset` for `addr`, or the bare address.
    pub fn describe(&self, addr: u64) -> String {
        match self.function_at(addr) {
            Some(f) if addr == f.addr => format!("{} ({addr:#010x})", f.name),
            Some(f) => format!("{}+{:#x} ({addr:#010x})", f.name, addr - f.addr),
            None => format!("{addr:#010x}"),
        }
    }

    /// Bytes of the image at `addr` (from the loaded segments), for
    /// decoding code without running the machine.
    pub fn bytes_at(&self, addr: u64, len: usize) -> Option<&[u8]> {
        self.segments.iter().find_map(|s| {
            let offset = addr.checked_sub(s.load_addr)? as usize;
            s.data.get(offset..offset.checked_add(len)?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(name: &str) -> Target {
        crate::model::target::builtin(name).unwrap()
    }

    #[test]
    fn garbage_is_a_parse_error_naming_the_file() {
        let err = GuestImage::parse(
            b"not an elf at all",
            Path::new("x.elf"),
            &target("cortex-m4"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("x.elf: not a valid ELF"), "{err}");
    }

    #[test]
    fn a_broken_elf_is_described_in_our_words() {
        let t = target("cortex-m4");
        let host = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let cases: [(&[u8], &str); 3] = [
            (b"not an elf at all", "magic number"),
            (b"\x7fELF\x01\x01", "shorter than an ELF header"),
            (&host[..200], "beyond the end of the file"),
        ];
        for (bytes, said) in cases {
            let err = GuestImage::parse(bytes, Path::new("g.elf"), &t)
                .unwrap_err()
                .to_string();
            assert!(err.starts_with("g.elf: "), "{err}");
            assert!(err.contains(said), "{err}");
            for library_words in ["Malformed", "too big", "bad offset", "Invalid magic"] {
                assert!(!err.contains(library_words), "{err}");
            }
        }
    }

    #[test]
    fn host_binary_is_refused_with_the_machine_named() {
        let host = std::env::current_exe().unwrap();
        let err = GuestImage::load(&host, &target("cortex-m4"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("32-bit") || err.contains("x86-64"), "{err}");
    }
}

//! The guest SDK the binary carries, so a user's own project can build
//! guests without this repository: the ARP header and `simthread.h`, the
//! entry-point stubs' source, the linker scripts of the memory maps, the
//! C interface of callback plugins (`sim_host_plugin.h`), the
//! Rust wrapper crate, and per target a Makefile fragment and a CMake
//! toolchain file whose flags come from the target file itself (one copy
//! of the flags: the target's `[guest]` table).
//!
//! Layout (mirrors `guest-shim/`, so the Rust crate finds `../../src`):
//!
//! ```text
//! include/atomium_rp.h, include/simthread.h
//! include/arp_memory.h             ARP_ITCM_CODE, ARP_DTCM_DATA, ARP_CCM_DATA
//! include/sim_host_plugin.h        the callback plugins' C interface (`run --plugin`)
//! src/arp_stubs.c, src/simthread_stubs.c
//! ld/<map>.ld                      one per memory map
//! rust/arp-guest/                  safe Rust wrappers (builds the stubs with `cc`)
//! targets/<target>.toml            the target descriptions
//! make/<target>.mk                 CC, SDK_CFLAGS, SDK_LDFLAGS, SDK_STUB_*
//! cmake/<target>.cmake             a CMake toolchain file
//! ```

use crate::model::target::{catalog, Arch, Target};
use std::hash::{Hash, Hasher};
use std::io;
use std::path::{Path, PathBuf};

/// Flags every guest is built with, whatever the core (the same as
/// `guest-shim/build.py`'s COMMON_CFLAGS): picolibc with semihosting.
pub const COMMON_CFLAGS: &[&str] = &[
    "-O2",
    "-g",
    "-std=gnu11",
    "-Wall",
    "-Wno-unused-label",
    "--specs=picolibc.specs",
    "--oslib=semihost",
    "--crt0=semihost",
];

/// Flags of the stubs' compilation: one address per entry point.
pub const STUB_CFLAGS: &[&str] = &["-fno-ipa-icf", "-Wno-ignored-qualifiers"];

const STATIC_FILES: &[(&str, &str)] = &[
    (
        "include/atomium_rp.h",
        include_str!("../../../guest-shim/include/atomium_rp.h"),
    ),
    (
        "include/simthread.h",
        include_str!("../../../guest-shim/include/simthread.h"),
    ),
    (
        "include/arp_memory.h",
        include_str!("../../../guest-shim/include/arp_memory.h"),
    ),
    (
        "include/sim_host_plugin.h",
        include_str!("../../include/sim_host_plugin.h"),
    ),
    (
        "src/arp_stubs.c",
        include_str!("../../../guest-shim/src/arp_stubs.c"),
    ),
    (
        "src/simthread_stubs.c",
        include_str!("../../../guest-shim/src/simthread_stubs.c"),
    ),
    ("ld/mps2.ld", include_str!("../../../guest-shim/ld/mps2.ld")),
    (
        "ld/mps2-an505.ld",
        include_str!("../../../guest-shim/ld/mps2-an505.ld"),
    ),
    (
        "ld/rp2040.ld",
        include_str!("../../../guest-shim/ld/rp2040.ld"),
    ),
    (
        "ld/rp2350.ld",
        include_str!("../../../guest-shim/ld/rp2350.ld"),
    ),
    (
        "ld/stm32f407.ld",
        include_str!("../../../guest-shim/ld/stm32f407.ld"),
    ),
    (
        "ld/stm32f746.ld",
        include_str!("../../../guest-shim/ld/stm32f746.ld"),
    ),
    (
        "ld/rv32-mcu.ld",
        include_str!("../../../guest-shim/ld/rv32-mcu.ld"),
    ),
    (
        "rust/arp-guest/Cargo.toml",
        include_str!("../../../guest-shim/rust/arp-guest/Cargo.toml"),
    ),
    (
        "rust/arp-guest/build.rs",
        include_str!("../../../guest-shim/rust/arp-guest/build.rs"),
    ),
    (
        "rust/arp-guest/src/lib.rs",
        include_str!("../../../guest-shim/rust/arp-guest/src/lib.rs"),
    ),
];

/// Every file of the SDK, as (relative path, contents).
pub fn files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = STATIC_FILES
        .iter()
        .map(|(p, c)| ((*p).to_owned(), (*c).to_owned()))
        .collect();
    for (name, text) in catalog::BUILTIN {
        files.push((format!("targets/{name}.toml"), (*text).to_owned()));
        if let Ok(target) = crate::model::target::builtin(name) {
            files.push((format!("make/{name}.mk"), make_fragment(&target)));
            files.push((format!("cmake/{name}.cmake"), cmake_toolchain(&target)));
        }
    }
    files
}

/// The SDK's linker script for a target: its `ldscript`'s file name.
pub fn ldscript(target: &Target) -> String {
    target
        .guest
        .ldscript
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

/// Flags at the end of the link command that pick the C library's
/// multilib whatever `-march` the user compiled with. RISC-V gcc (12)
/// matches a multilib by the exact `-march` string: `rv32imac_zicsr` (which
/// code reading CSRs needs without `-misa-spec=2.2`) matches none and falls
/// back to the default rv64 library ("file in wrong format"). The target's
/// own `-march`, reduced to its single-letter extensions, and `-mabi` name
/// the library (`rv32imac/ilp32`); the objects keep the ISA they were
/// compiled with. Arm picks its multilib from `-mcpu`, `-mfpu` and
/// `-mfloat-abi` (the target's hard-float flags give `v7e-m+fp/hard`,
/// `v7e-m+dp/hard`, `v8-m.main+fp/hard`): nothing to add.
pub fn multilib_flags(t: &Target) -> Vec<String> {
    if t.arch != Arch::Riscv {
        return Vec::new();
    }
    t.guest
        .cflags
        .iter()
        .filter_map(|f| {
            if let Some(march) = f.strip_prefix("-march=") {
                let base = march.split('_').next().unwrap_or(march);
                Some(format!("-march={base}"))
            } else if f.starts_with("-mabi=") {
                Some(f.clone())
            } else {
                None
            }
        })
        .collect()
}

fn make_fragment(t: &Target) -> String {
    format!(
        "# sim-host SDK: building guests for `{name}` ({description}).\n\
         # Generated by sim-host {version} from its target file: do not edit;\n\
         # `sim-host targets --show {name}` prints the description.\n\
         SIM_HOST_SDK ?= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)\n\
         SIM_HOST_TARGET := {name}\n\
         CC := {cc}\n\
         SDK_CFLAGS := {target_flags} {common} -I$(SIM_HOST_SDK)/include\n\
         SDK_LDFLAGS := -T$(SIM_HOST_SDK)/ld/{ld}{multilib}\n\
         SDK_STUB_SOURCES := $(SIM_HOST_SDK)/src/arp_stubs.c $(SIM_HOST_SDK)/src/simthread_stubs.c\n\
         SDK_STUB_CFLAGS := {stub}\n",
        name = t.name,
        description = t.description,
        version = env!("CARGO_PKG_VERSION"),
        cc = t.guest.cc,
        target_flags = t.guest.cflags.join(" "),
        common = COMMON_CFLAGS.join(" "),
        ld = ldscript(t),
        multilib = multilib_flags(t)
            .iter()
            .map(|f| format!(" {f}"))
            .collect::<String>(),
        stub = STUB_CFLAGS.join(" "),
    )
}

fn cmake_toolchain(t: &Target) -> String {
    let processor = match t.arch {
        Arch::Arm => "arm",
        Arch::Riscv => "riscv32",
    };
    format!(
        "# sim-host SDK: CMake toolchain for `{name}` ({description}).\n\
         # Generated by sim-host {version} from its target file: do not edit.\n\
         # cmake -DCMAKE_TOOLCHAIN_FILE=<sdk>/cmake/{name}.cmake ...\n\
         # then add ${{SIM_HOST_STUB_SOURCES}} to an instrumented executable.\n\
         set(CMAKE_SYSTEM_NAME Generic)\n\
         set(CMAKE_SYSTEM_PROCESSOR {processor})\n\
         set(CMAKE_C_COMPILER {cc})\n\
         set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)\n\
         get_filename_component(SIM_HOST_SDK \"${{CMAKE_CURRENT_LIST_DIR}}/..\" ABSOLUTE)\n\
         set(SIM_HOST_TARGET {name})\n\
         set(CMAKE_C_FLAGS_INIT \"{target_flags} {common} -I${{SIM_HOST_SDK}}/include\")\n\
         set(CMAKE_EXE_LINKER_FLAGS_INIT \"-T${{SIM_HOST_SDK}}/ld/{ld}{multilib}\")\n\
         set(SIM_HOST_STUB_SOURCES ${{SIM_HOST_SDK}}/src/arp_stubs.c ${{SIM_HOST_SDK}}/src/simthread_stubs.c)\n\
         set_source_files_properties(${{SIM_HOST_STUB_SOURCES}} PROPERTIES COMPILE_OPTIONS \"{stub_list}\")\n",
        name = t.name,
        description = t.description,
        version = env!("CARGO_PKG_VERSION"),
        cc = t.guest.cc,
        target_flags = t.guest.cflags.join(" "),
        common = COMMON_CFLAGS.join(" "),
        ld = ldscript(t),
        multilib = multilib_flags(t)
            .iter()
            .map(|f| format!(" {f}"))
            .collect::<String>(),
        stub_list = STUB_CFLAGS.join(";"),
    )
}

/// What [`install`] did to files that were already in the folder.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Installed {
    /// SDK files that were there with other contents and were replaced
    /// (only with `force`): the caller says so.
    pub replaced: Vec<PathBuf>,
}

/// Writes the SDK into `dir` (created if needed), every file through
/// `arpsim::output` (never over a device or through a link's name).
///
/// A folder that holds anything but this very SDK (a file of another
/// name, or an SDK file whose contents differ, such as a user's edited
/// `include/atomium_rp.h`) is refused unless `force`; with `force`, every
/// differing file that is replaced is listed in the answer, never replaced
/// silently (issue 30, N19). Installing again into a folder that holds
/// exactly this SDK changes nothing and is not refused.
pub fn install(dir: &Path, force: bool) -> io::Result<Installed> {
    let files = files();
    let mut differing = Vec::new();
    if !force {
        if let Some(foreign) = first_foreign_entry(dir, &files, &mut differing)? {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "{} is not empty: {} {}; give --force to write the SDK into it anyway (each file that differs is replaced and named)",
                    dir.display(),
                    foreign.display(),
                    if differing.is_empty() {
                        "is not a file of the SDK"
                    } else {
                        "differs from the SDK's"
                    }
                ),
            ));
        }
    }
    let mut installed = Installed::default();
    for (relative, contents) in &files {
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        match differs(&path, contents)? {
            Some(false) => continue,
            Some(true) => installed.replaced.push(path.clone()),
            None => {}
        }
        arpsim::output::write(&path, contents)?;
    }
    Ok(installed)
}

/// Whether the file at `path` holds other bytes than `contents` (`None`:
/// there is none). Anything but a regular file differs.
fn differs(path: &Path, contents: &str) -> io::Result<Option<bool>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !meta.is_file() || meta.len() != contents.len() as u64 {
        return Ok(Some(true));
    }
    Ok(Some(std::fs::read(path)? != contents.as_bytes()))
}

/// The first entry under `dir` that is not a file of this SDK with the
/// same contents (nor a folder on the way to one); `None` for a missing or
/// empty folder or one holding exactly (part of) this SDK. A differing
/// SDK file is also pushed on `differing`.
fn first_foreign_entry(
    dir: &Path,
    files: &[(String, String)],
    differing: &mut Vec<PathBuf>,
) -> io::Result<Option<PathBuf>> {
    fn walk(
        root: &Path,
        relative: &Path,
        files: &[(String, String)],
        differing: &mut Vec<PathBuf>,
    ) -> io::Result<Option<PathBuf>> {
        let entries = match std::fs::read_dir(root.join(relative)) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound && relative.as_os_str().is_empty() => {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let rel = relative.join(entry.file_name());
            let kind = entry.file_type()?;
            if kind.is_dir() && files.iter().any(|(p, _)| Path::new(p).starts_with(&rel)) {
                if let Some(found) = walk(root, &rel, files, differing)? {
                    return Ok(Some(found));
                }
                continue;
            }
            match files.iter().find(|(p, _)| Path::new(p) == rel) {
                Some((_, contents)) if kind.is_file() => {
                    if differs(&root.join(&rel), contents)? == Some(true) {
                        differing.push(rel.clone());
                        return Ok(Some(rel));
                    }
                }
                _ => return Ok(Some(rel)),
            }
        }
        Ok(None)
    }
    if !std::fs::symlink_metadata(dir).map_or(true, |m| m.is_dir()) {
        return Ok(Some(dir.to_path_buf()));
    }
    walk(dir, Path::new(""), files, differing)
}

/// A name that changes whenever the SDK's content does, so binaries of
/// different versions never share (or half-overwrite) one folder.
fn fingerprint() -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    files().hash(&mut h);
    format!("{}-{:016x}", env!("CARGO_PKG_VERSION"), h.finish())
}

/// Where this binary keeps its SDK: `$SIM_HOST_SDK_DIR`, else
/// `$XDG_DATA_HOME/sim-host/sdk-<version>-<hash>`, else
/// `~/.local/share/sim-host/sdk-<version>-<hash>`.
pub fn default_dir() -> io::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("SIM_HOST_SDK_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".local/share")))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "neither XDG_DATA_HOME nor HOME is set: give a folder with `sim-host sdk install DIR`",
            )
        })?;
    Ok(data.join("sim-host").join(format!("sdk-{}", fingerprint())))
}

/// The default SDK folder, installed first if it is not complete.
pub fn ensure_default() -> io::Result<PathBuf> {
    let dir = default_dir()?;
    let marker = dir.join(".complete");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(&fingerprint()) {
        // the binary's own folder (named by its contents): an interrupted
        // install is completed, whatever it left
        install(&dir, true)?;
        arpsim::output::write(&marker, fingerprint())?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_gets_a_fragment_and_a_toolchain_with_its_own_flags() {
        let files = files();
        for (name, _) in catalog::BUILTIN {
            let target = crate::model::target::builtin(name).unwrap();
            let mk = &files
                .iter()
                .find(|(p, _)| *p == format!("make/{name}.mk"))
                .unwrap()
                .1;
            let cmake = &files
                .iter()
                .find(|(p, _)| *p == format!("cmake/{name}.cmake"))
                .unwrap()
                .1;
            for flag in &target.guest.cflags {
                assert!(
                    mk.contains(flag.as_str()) && cmake.contains(flag.as_str()),
                    "{flag}"
                );
            }
            assert!(mk.contains(&format!("CC := {}", target.guest.cc)));
            let ldflags = mk.lines().find(|l| l.starts_with("SDK_LDFLAGS")).unwrap();
            for flag in multilib_flags(&target) {
                assert!(ldflags.contains(&flag), "{name}: {ldflags}");
            }
            let ld = format!("ld/{}", ldscript(&target));
            assert!(files.iter().any(|(p, _)| *p == ld), "{ld} is shipped");
        }
    }

    /// A RISC-V link names the multilib by the base ISA and ABI; an Arm
    /// one needs nothing beyond the target's -mcpu/-mfpu/-mfloat-abi.
    #[test]
    fn riscv_links_name_their_multilib() {
        for name in ["rv32imac", "sifive-e31"] {
            let t = crate::model::target::builtin(name).unwrap();
            assert_eq!(multilib_flags(&t), ["-march=rv32imac", "-mabi=ilp32"]);
        }
        for name in ["cortex-m4f", "cortex-m7", "cortex-m33", "cortex-m0plus"] {
            let t = crate::model::target::builtin(name).unwrap();
            assert!(multilib_flags(&t).is_empty(), "{name}");
        }
    }

    #[test]
    fn install_writes_every_file_and_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(install(dir.path(), false).unwrap(), Installed::default());
        assert_eq!(install(dir.path(), false).unwrap(), Installed::default());
        for (relative, contents) in files() {
            assert_eq!(
                std::fs::read_to_string(dir.path().join(&relative)).unwrap(),
                contents
            );
        }
    }

    /// issue 30, N19: a user's own files are never overwritten silently.
    #[test]
    fn install_refuses_a_folder_with_other_files_unless_forced_and_names_what_it_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("sdk");
        // a folder with a file of the user's: refused, the file kept
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("notes.txt"), "mine").unwrap();
        let e = install(&root, false).unwrap_err().to_string();
        assert!(e.contains("is not empty") && e.contains("notes.txt"), "{e}");
        assert!(e.contains("--force"), "{e}");
        assert!(!root.join("include").exists(), "nothing written");
        // forced: written, the user's file kept, nothing replaced
        assert_eq!(install(&root, true).unwrap(), Installed::default());
        assert_eq!(
            std::fs::read_to_string(root.join("notes.txt")).unwrap(),
            "mine"
        );
        // an edited SDK file: refused, then replaced and named
        let header = root.join("include/atomium_rp.h");
        std::fs::write(&header, "/* my edits */\n").unwrap();
        std::fs::remove_file(root.join("notes.txt")).unwrap();
        let e = install(&root, false).unwrap_err().to_string();
        assert!(e.contains("atomium_rp.h") && e.contains("differs"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&header).unwrap(),
            "/* my edits */\n"
        );
        let done = install(&root, true).unwrap();
        assert_eq!(done.replaced, std::slice::from_ref(&header));
        assert_ne!(
            std::fs::read_to_string(&header).unwrap(),
            "/* my edits */\n"
        );
        // a file given as the folder is refused too
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(install(&file, false).is_err());
    }
}

//! Every input sim-host reads, mutated at random: target files, guest
//! ELFs, semihosting requests against guest memory, suite manifests. Each
//! must give a result or an error that names where it comes from, never a
//! panic. `make test` runs a bounded number of cases (seconds);
//! `make fuzz-long` runs many more (PROPTEST_CASES).

use proptest::prelude::*;
use sim_host::host::sandbox::Sandbox;
use sim_host::host::semihost::{self, Console, GuestMemory, MemoryFault, Semihost};
use sim_host::image::elf::GuestImage;
use sim_host::model::target::{self, Target};
use sim_host::tools::suite::Manifest;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A text with one of: a line removed, a line replaced by junk, a cut, or
/// bytes overwritten.
fn mutate(text: &str, kind: u8, at: usize, junk: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let line = at % lines.len().max(1);
    match kind % 4 {
        0 => lines
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != line)
            .map(|(_, l)| *l)
            .collect::<Vec<_>>()
            .join("\n"),
        1 => {
            let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
            if let Some(target) = l.get_mut(line) {
                // keep the key, replace the value: reaches the validation
                *target = match target.split_once('=') {
                    Some((key, _)) => format!("{key}= {junk}"),
                    None => junk.to_owned(),
                };
            }
            l.join("\n")
        }
        2 => text.chars().take(at % (text.len() + 1)).collect(),
        _ => {
            let mut chars: Vec<char> = text.chars().collect();
            for (i, c) in junk.chars().enumerate() {
                let n = chars.len().max(1);
                if let Some(slot) = chars.get_mut((at + i * 7) % n) {
                    *slot = c;
                }
            }
            chars.into_iter().collect()
        }
    }
}

fn junk() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("-1".to_owned()),
        Just("nan".to_owned()),
        Just("1e999".to_owned()),
        Just("4294967296".to_owned()),
        Just("18446744073709551615".to_owned()),
        Just("\"\"".to_owned()),
        Just("[".to_owned()),
        Just("{ a = 1 }".to_owned()),
        "[ -~]{0,12}",
    ]
}

fn builtin_text(name: &str) -> String {
    target::catalog::find(name).unwrap().0
}

proptest! {
    #![proptest_config(cases(64))]

    #[test]
    fn target_files_give_a_target_or_an_error_naming_the_file(
        which in 0usize..4, kind in 0u8..4, at in 0usize..4000, junk in junk()
    ) {
        let names = target::catalog::BUILTIN;
        let name = names[which % names.len()].0;
        let text = mutate(&builtin_text(name), kind, at, &junk);
        let file = Path::new("/fuzz/mutated.toml");
        if let Err(e) = Target::parse(&text, file) {
            let message = e.to_string();
            prop_assert!(message.contains("mutated.toml"), "{message}");
            prop_assert!(message.len() < 2000, "an unbounded message: {} bytes", message.len());
        }
    }

    #[test]
    fn suite_manifests_give_entries_or_an_error_naming_the_file(
        kind in 0u8..4, at in 0usize..600, junk in junk()
    ) {
        let valid = "[[entry]]\nname = \"a\"\nelf = \"a.elf\"\ntarget = \"cortex-m4\"\n\
                     cores = 2\ntimeout = 5.0\nmax_cycles = 1000\nmode = \"record_all\"\n\
                     args = [\"x\"]\nexit_code = 0\n";
        let text = mutate(valid, kind, at, &junk);
        if let Err(e) = Manifest::parse(&text, Path::new("/fuzz/m.toml")) {
            prop_assert!(e.to_string().contains("m.toml"), "{e}");
        }
    }
}

/// The cortex-m4 filter guest's bytes, read once.
fn guest_elf() -> (Vec<u8>, Target) {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    let bytes = BYTES.get_or_init(|| {
        let path = e2e_guest("cortex-m4", "filter");
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    });
    (bytes.clone(), target::builtin("cortex-m4").unwrap())
}

/// A guest of `guest-shim/examples`, built on demand (build.py skips
/// up-to-date ones) into `target/guests`, where `make guests` and the
/// end-to-end tests put them.
fn e2e_guest(target: &str, name: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let guests = root.join("target/guests");
    let status = std::process::Command::new("python3")
        .arg(root.join("guest-shim/build.py"))
        .arg("--out")
        .arg(&guests)
        .args(["--target", target, "--example", name])
        .status()
        .expect("python3 runs guest-shim/build.py");
    assert!(
        status.success(),
        "building the {target} guest {name} failed: it needs the cross compilers \
         (scripts/bootstrap.sh installs them)"
    );
    let path = guests.join(target).join(format!("{name}.elf"));
    assert!(path.exists(), "{} was not built", path.display());
    path
}

proptest! {
    #![proptest_config(cases(48))]

    #[test]
    fn guest_elfs_load_or_give_an_error_naming_the_file(
        cut in prop::option::of(0usize..200_000),
        flips in prop::collection::vec((0usize..200_000, any::<u8>()), 0..16),
        header_flips in prop::collection::vec((0usize..64, any::<u8>()), 0..4),
    ) {
        let (mut bytes, target) = guest_elf();
        for (at, b) in flips.iter().chain(&header_flips) {
            let n = bytes.len();
            bytes[at % n] = *b;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut % (bytes.len() + 1));
        }
        let file = Path::new("/fuzz/mutated.elf");
        if let Err(e) = GuestImage::parse(&bytes, file, &target) {
            prop_assert!(e.to_string().contains("mutated.elf"), "{e}");
        }
    }
}

/// Guest memory: `data` at 0x1000, nothing else mapped.
struct Memory(Vec<u8>);

impl GuestMemory for Memory {
    fn read(&self, addr: u32, buf: &mut [u8]) -> Result<(), MemoryFault> {
        let fault = MemoryFault {
            addr,
            len: buf.len() as u32,
        };
        let start = (addr as usize).checked_sub(0x1000).ok_or(fault)?;
        let src = self.0.get(start..start + buf.len()).ok_or(fault)?;
        buf.copy_from_slice(src);
        Ok(())
    }
    fn write(&mut self, addr: u32, data: &[u8]) -> Result<(), MemoryFault> {
        let fault = MemoryFault {
            addr,
            len: data.len() as u32,
        };
        let start = (addr as usize).checked_sub(0x1000).ok_or(fault)?;
        let dst = self.0.get_mut(start..start + data.len()).ok_or(fault)?;
        dst.copy_from_slice(data);
        Ok(())
    }
}

#[derive(Default)]
struct Silent;

impl Console for Silent {
    fn stdout(&mut self, _: &[u8]) {}
    fn stderr(&mut self, _: &[u8]) {}
    fn read_byte(&mut self) -> Option<u8> {
        None
    }
}

proptest! {
    #![proptest_config(cases(512))]

    #[test]
    fn semihosting_requests_are_served_or_fault_at_a_named_address(
        calls in prop::collection::vec(
            (0u32..0x40, 0x0ff0u32..0x1400, prop::collection::vec(any::<u8>(), 0..64)),
            1..12,
        )
    ) {
        let root = tempfile::tempdir().unwrap();
        let mut sh = Semihost::new(
            Sandbox::new(Some(root.path())).unwrap(),
            "prog".into(),
            1_000_000,
            [0; 4],
        );
        let mut mem = Memory(vec![0; 0x200]);
        for (op, param, bytes) in calls {
            // the guest's parameter block and strings: random words
            for (i, b) in bytes.iter().enumerate() {
                let n = mem.0.len();
                mem.0[(i * 13 + *b as usize) % n] = *b;
            }
            let request = match semihost::decode(op, param, &mem) {
                Ok(r) => r,
                Err(fault) => {
                    prop_assert!(fault.to_string().contains("0x"), "{fault}");
                    continue;
                }
            };
            let now = sim_host::host::devices::Now {
                cycles: 1234,
                picos: 1234,
            };
            match sh.handle(request, now, &mut mem, &mut Silent) {
                Ok(_) => {}
                Err(fault) => prop_assert!(fault.to_string().contains("0x"), "{fault}"),
            }
        }
        // nothing was created outside the root
        drop(sh);
    }
}

/// The built-in cortex-m4 target with its `memory = [...]` replaced by `n`
/// regions of 4 KiB, one after another.
fn target_with_regions(n: usize) -> String {
    let text = builtin_text("cortex-m4");
    let start = text.find("memory = [").expect("a memory array");
    let end = start + text[start..].find("\n]\n").expect("its end") + 3;
    let mut regions = String::from("memory = [\n");
    for i in 0..n {
        regions.push_str(&format!(
            "  {{ name = \"r{i}\", kind = \"ram\", start = {:#x}, size = 0x1000, access = \"rwx\", wait_states = 0 }},\n",
            0x2000_0000u64 + i as u64 * 0x1000
        ));
    }
    regions.push_str("]\n");
    format!("{}{regions}{}", &text[..start], &text[end..])
}

/// The golden suite result (schema 3), read once.
fn golden_result() -> &'static serde_json::Value {
    static RESULT: OnceLock<serde_json::Value> = OnceLock::new();
    RESULT.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/golden/suite.json");
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    })
}

// Issue 30, item 6: the audit's hostile shapes, a few cases each by
// default (`make fuzz-long` runs many).
proptest! {
    #![proptest_config(cases(12))]

    /// Many memory regions: up to the cap a target, above it refused
    /// (naming the file and the cap) before anything is mapped.
    #[test]
    fn many_memory_regions_are_taken_up_to_the_cap_and_refused_above(n in 0usize..700) {
        let text = target_with_regions(n);
        let result = Target::parse(&text, Path::new("/fuzz/regions.toml"));
        if n > target::MAX_REGIONS {
            let e = result.expect_err("more regions than the cap").to_string();
            prop_assert!(e.contains("regions.toml"), "{e}");
            prop_assert!(e.contains("at most 256"), "{e}");
        } else if let Err(e) = result {
            prop_assert!(e.to_string().contains("regions.toml"), "{e}");
        }
    }

    /// Forged shard files for `suite merge`: any index and count, up to
    /// usize::MAX, load as a shard or are refused naming the file. A shard
    /// merged twice is refused (the merge contract: every entry exactly
    /// once), naming the shard and its file, and what else is missing is
    /// listed in a bounded number of lines.
    #[test]
    fn forged_shards_are_refused_or_merged_in_bounded_lines(
        index in prop_oneof![Just(0usize), Just(1usize), any::<usize>()],
        count in prop_oneof![Just(1usize), Just(usize::MAX), any::<usize>()],
        plan in "[0-9a-f]{0,64}",
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut forged = golden_result().clone();
        forged["shard"] = serde_json::json!({ "index": index, "count": count, "plan": plan });
        let file = dir.path().join("shard.json");
        std::fs::write(&file, serde_json::to_string(&forged).unwrap()).unwrap();
        match sim_host::tools::suite::merge::load(&file) {
            Err(e) => prop_assert!(e.to_string().contains("shard.json"), "{e}"),
            Ok(part) => {
                let again = sim_host::tools::suite::merge::load(&file).unwrap();
                let shard = format!("shard {index}/{count}: given 2 times");
                match sim_host::tools::suite::merge::merge(vec![part, again]) {
                    Ok(_) => prop_assert!(false, "{shard}, and merged"),
                    Err(sim_host::tools::suite::merge::MergeError::Incomplete(lines)) => {
                        prop_assert!(lines.len() < 64, "{} lines", lines.len());
                        let bytes: usize = lines.iter().map(String::len).sum();
                        prop_assert!(bytes < 64 * 1024, "{bytes} bytes of problems");
                        let named = lines
                            .iter()
                            .any(|l| l.starts_with(&shard) && l.contains("shard.json"));
                        prop_assert!(named, "no `{shard}` naming shard.json in {lines:?}");
                    }
                    Err(sim_host::tools::suite::merge::MergeError::Invalid(e)) => {
                        prop_assert!(false, "{shard}, refused for another reason: {e}");
                    }
                }
            }
        }
    }
}

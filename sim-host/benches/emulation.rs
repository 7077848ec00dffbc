//! Emulation speed (issue 4 benchmark): the same guest ELF, in one run, by
//!
//! 1. bare Unicorn: no counting, no interception (semihosting only);
//! 2. sim-host: cycle counting with cached block prices and ARP
//!    `record_all` streamed to a file;
//! 3. a per-instruction code hook adding each instruction's cost (the
//!    method Unicorn-based simulators commonly use);
//!
//! and, for reference, the wall time of `qemu-system-arm -M mps2-an386
//! -semihosting` on the same ELF (which counts nothing).
//!
//!     python3 guest-shim/build.py && cargo bench -p sim-host --bench emulation [-- REPEATS]
//!
//! The guest is `filter-bench` (the filter example with 40 images, about
//! 108 million instructions, 32,160 kernel samples) on cortex-m4. Each
//! variant runs REPEATS times (default 5); the best and median host times
//! are printed, and MIPS = guest instructions / best time.

use sim_host::arp_host::ArpOptions;
use sim_host::elf::GuestImage;
use sim_host::machine::{self, Counting, RunOptions, Stop};
use sim_host::target;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn main() {
    let repeats: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let elf = root.join("target/guests/cortex-m4/filter-bench.elf");
    assert!(
        elf.exists(),
        "{} missing: run `python3 guest-shim/build.py` first",
        elf.display()
    );
    let t = target::builtin("cortex-m4").unwrap();
    let image = GuestImage::load(&elf, &t).unwrap();
    let dir = std::env::temp_dir().join(format!("emulation-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let mut instructions = 0;
    let mut rows = Vec::new();
    for (name, counting) in [
        ("bare unicorn (no hooks)", Counting::Off),
        ("sim-host: block prices + record_all", Counting::Blocks),
        ("per-instruction code hook", Counting::PerInstruction),
    ] {
        let mut times = Vec::new();
        let mut cycles = 0;
        for _ in 0..repeats {
            let options = RunOptions {
                counting,
                arp: ArpOptions {
                    file: Some(dir.join("data.arp")),
                    mode: Some(arpsim::types::Mode::RecordAll),
                    ..Default::default()
                },
                ..Default::default()
            };
            let start = Instant::now();
            let outcome = machine::run(image.clone(), t.clone(), options).unwrap();
            times.push(start.elapsed());
            assert_eq!(outcome.stop, Stop::Exit(0), "{name}");
            if counting == Counting::Blocks {
                instructions = outcome.instructions;
            }
            cycles = outcome.cycles;
        }
        times.sort();
        rows.push((name, times[0], times[times.len() / 2], cycles));
    }

    let qemu = Command::new("qemu-system-arm")
        .arg("--version")
        .output()
        .is_ok()
        .then(|| {
            let mut times: Vec<Duration> = (0..repeats)
                .map(|_| {
                    let start = Instant::now();
                    let out = Command::new("qemu-system-arm")
                        .args(["-M", "mps2-an386", "-cpu", "cortex-m4", "-display", "none"])
                        .args(["-serial", "none", "-monitor", "none"])
                        .args(["-chardev", "file,id=semi,path=/dev/null"])
                        .args([
                            "-semihosting-config",
                            "enable=on,target=native,chardev=semi",
                        ])
                        .arg("-kernel")
                        .arg(&elf)
                        .output()
                        .unwrap();
                    assert!(out.status.success());
                    start.elapsed()
                })
                .collect();
            times.sort();
            (times[0], times[times.len() / 2])
        });

    println!(
        "guest: {} ({} instructions), {} repeats",
        elf.display(),
        instructions,
        repeats
    );
    println!(
        "{:<40} {:>10} {:>10} {:>8} {:>14}",
        "variant", "best s", "median s", "MIPS", "cycles"
    );
    for (name, best, median, cycles) in &rows {
        println!(
            "{:<40} {:>10.3} {:>10.3} {:>8.1} {:>14}",
            name,
            best.as_secs_f64(),
            median.as_secs_f64(),
            instructions as f64 / best.as_secs_f64() / 1e6,
            cycles
        );
    }
    let bare = rows[0].1.as_secs_f64();
    let ours = rows[1].1.as_secs_f64();
    let per_insn = rows[2].1.as_secs_f64();
    println!(
        "sim-host speed: {:.2} x bare unicorn (target >= 0.5), {:.2} x per-instruction hook (target >= 4)",
        bare / ours,
        per_insn / ours
    );
    if let Some((best, median)) = qemu {
        println!(
            "{:<40} {:>10.3} {:>10.3}   (wall time, counts nothing)",
            "qemu-system-arm -M mps2-an386",
            best.as_secs_f64(),
            median.as_secs_f64()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

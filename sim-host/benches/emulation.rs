//! Emulation speed, one harness and one table (issues 19 and 31;
//! BENCHMARKS.md, "Emulation harness" and "Long runs").
//!
//!     python3 guest-shim/build.py
//!     cargo bench -p sim-host --bench emulation
//!
//! Three guests of one target — `filter` (memory-heavy), the `statemachine`
//! tokenizer (branch-dense) and `arpcalls` (ARP enter/leave pairs) — and,
//! on a target whose guests use the FPU (cortex-m4f), the float guest
//! `dsp` (its float FIR and biquad repeated), in their `-long` builds
//! (1,600 images, 15,000 passes, 80,000,000 pairs, 100,000 repeats: long
//! enough that qemu takes over 2 s and its start-up is a small share; the
//! shorter `-bench` builds with `EMULATION_LENGTH=bench`), each run by:
//!
//! - `bare unicorn`: the crate's own loader and engine set-up
//!   (`engine::run` with `Counting::Off`): the regions mapped, the
//!   segments written, one `emu_start`; no block, code or memory hook. The
//!   guests print and exit through semihosting, so the only hook is the one
//!   that serves it (the interrupt hook on ARM, a code hook on the
//!   semihosting `ebreak` sites on RISC-V), which runs only at those calls.
//!   ARP stubs are not intercepted: the guest executes their bodies;
//! - `sim-host record_average` and `sim-host record_all`: cycle counting
//!   charged by the translated code (ARCHITECTURE.md decision 2), ARP
//!   intercepted, data.arp written to a temporary folder;
//! - `sim-host record_average (hook path)`: the same, every block charged
//!   by the block hook (`ChargePath::Hook`, the path before issue 31);
//! - `per-instruction hook`: a code hook on every instruction adding its
//!   cost (`Counting::PerInstruction`, ARP record_average), the method
//!   Unicorn-based simulators commonly use. At about 12 MIPS a `-long`
//!   guest would take minutes per round, so with `-long` this variant runs
//!   the guest's `-bench` build and its row gives that run's time scaled
//!   to the long build's instructions at the rate it measured (start-up +
//!   (time - start-up) x long instructions / bench instructions), said so
//!   under the table;
//! - `qemu` and `qemu -icount shift=0`: the target's reference machine
//!   (`[guest] qemu` of its target file: `qemu-system-arm -M mps2-an386` for
//!   cortex-m4), wall time of the whole process (start-up included),
//!   counting nothing. Skipped, with a message, when the target names no
//!   machine or the program is not installed.
//!
//! Each variant's start-up alone is measured every round on
//! `statemachine-startup` (one pass), and the table gives MIPS over the
//! wall time and "steady MIPS" over the wall time less that start-up.
//!
//! With `arpcalls`, the harness also runs its `-DARP_NONE` build
//! (`arpcalls-long-none`, the same loop without ARP calls) under sim-host
//! each round and prints the host time of one enter/leave pair: the
//! median of a sim-host variant minus the median of the loop alone,
//! divided by the pairs the guest reports.
//!
//! Rounds are interleaved (every guest and variant once per round, then the
//! next round) and the median of the rounds is reported. MIPS is the guest
//! instruction count of the sim-host run (the work of the program; bare
//! Unicorn and qemu also execute the ARP stub bodies) divided by the median
//! host time. Environment: `EMULATION_ROUNDS` (default 3),
//! `EMULATION_TARGET` (default cortex-m4), `EMULATION_LENGTH` (`long`, the
//! default, or `bench`), `EMULATION_GUESTS` (a comma-separated subset of
//! the guests' base names), `EMULATION_VARIANTS` (a comma-separated subset
//! of the variant names above, e.g. `bare unicorn,sim-host record_all`).

use arpsim::types::Mode;
use sim_host::engine::{self, ChargePath, Counting, RunOptions, Stop};
use sim_host::host::arp_host::ArpOptions;
use sim_host::image::elf::GuestImage;
use sim_host::model::target::{self, Target};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The guests, each built as `<name><length>.elf` (`-long` by default,
/// `EMULATION_LENGTH=bench` for the short builds).
const GUESTS: [(&str, &str); 4] = [
    ("filter", "memory-heavy"),
    ("statemachine", "branch-dense"),
    ("arpcalls", "ARP-call-dense"),
    (FLOAT_GUEST, "float"),
];

/// The float guest, run by default only on a target whose guests are
/// built for the FPU (`-mfloat-abi=hard`): elsewhere it would measure the
/// soft-float library.
const FLOAT_GUEST: &str = "dsp";

/// A guest that does next to nothing: each variant's start-up alone.
const STARTUP_GUEST: &str = "statemachine-startup";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    Bare,
    Average,
    AverageHook,
    All,
    PerInstruction,
    Qemu,
    QemuIcount,
}

const VARIANTS: [(Variant, &str); 7] = [
    (Variant::Bare, "bare unicorn"),
    (Variant::Average, "sim-host record_average"),
    (Variant::AverageHook, "sim-host record_average (hook path)"),
    (Variant::All, "sim-host record_all"),
    (Variant::PerInstruction, "per-instruction hook"),
    (Variant::Qemu, "qemu"),
    (Variant::QemuIcount, "qemu -icount shift=0"),
];

fn env_list(name: &str) -> Option<Vec<String>> {
    std::env::var(name)
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect())
}

/// One run of `variant` on `elf`: host time and, for sim-host, the guest
/// instructions counted.
fn run_once(
    variant: Variant,
    elf: &Path,
    image: &GuestImage,
    target: &Target,
    dir: &Path,
) -> (Duration, Option<u64>) {
    let (elapsed, instructions, _) = run_with_console(variant, elf, image, target, dir);
    (elapsed, instructions)
}

/// [`run_once`], with the guest's console output (empty for qemu).
fn run_with_console(
    variant: Variant,
    elf: &Path,
    image: &GuestImage,
    target: &Target,
    dir: &Path,
) -> (Duration, Option<u64>, Vec<u8>) {
    let (counting, mode, charge) = match variant {
        Variant::Bare => (Counting::Off, Mode::RecordAverage, ChargePath::Translation),
        Variant::Average => (
            Counting::Blocks,
            Mode::RecordAverage,
            ChargePath::Translation,
        ),
        Variant::AverageHook => (Counting::Blocks, Mode::RecordAverage, ChargePath::Hook),
        Variant::All => (Counting::Blocks, Mode::RecordAll, ChargePath::Translation),
        Variant::PerInstruction => (
            Counting::PerInstruction,
            Mode::RecordAverage,
            ChargePath::Hook,
        ),
        Variant::Qemu | Variant::QemuIcount => {
            let q = target.guest.qemu.as_ref().expect("checked before");
            let mut cmd = Command::new(&q.program);
            cmd.args(["-M", &q.machine, "-display", "none"])
                .args(["-serial", "none", "-monitor", "none"])
                .args(["-chardev", "file,id=semi,path=/dev/null"])
                .args([
                    "-semihosting-config",
                    "enable=on,target=native,chardev=semi",
                ]);
            if let Some(cpu) = &q.cpu {
                cmd.args(["-cpu", cpu]);
            }
            if variant == Variant::QemuIcount {
                cmd.args(["-icount", "shift=0"]);
            }
            cmd.arg("-kernel").arg(elf);
            let start = Instant::now();
            let out = cmd.output().expect("qemu starts");
            let elapsed = start.elapsed();
            assert!(
                out.status.success(),
                "{} on {}: {}",
                q.program,
                elf.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            return (elapsed, None, Vec::new());
        }
    };
    let options = RunOptions {
        counting,
        charge: Some(charge),
        arp: ArpOptions {
            file: Some(dir.join("data.arp")),
            mode: Some(mode),
            ..Default::default()
        },
        ..Default::default()
    };
    // the last run's data.arp goes first, outside the timing: replacing a
    // record_all file of the long guests (gigabytes) made the next run's
    // start-up look like 0.4 s
    let _ = std::fs::remove_file(dir.join("data.arp"));
    let start = Instant::now();
    let outcome = engine::run(image.clone(), target.clone(), options).unwrap();
    let elapsed = start.elapsed();
    assert_eq!(outcome.stop, Stop::Exit(0), "{}", elf.display());
    (
        elapsed,
        (counting != Counting::Off).then_some(outcome.instructions),
        outcome.console,
    )
}

/// The loop of `arpcalls-bench` without its ARP calls, and how many pairs
/// the loop makes (the guest prints it), for the cost of one pair.
struct PairCost {
    none: GuestImage,
    none_elf: PathBuf,
    pairs: Option<u64>,
    times: Vec<Duration>,
}

impl PairCost {
    /// For `arpcalls-bench`, when its `-none` build is in `guests_dir` too.
    fn new(guests_dir: &Path, length: &str, target: &Target) -> Option<Self> {
        let none_elf = guests_dir.join(format!("arpcalls{length}-none.elf"));
        let none = GuestImage::load(&none_elf, target).ok()?;
        Some(PairCost {
            none,
            none_elf,
            pairs: None,
            times: Vec::new(),
        })
    }

    fn run_loop(&mut self, target: &Target, dir: &Path) {
        let (time, _, console) =
            run_with_console(Variant::Average, &self.none_elf, &self.none, target, dir);
        self.times.push(time);
        let text = String::from_utf8_lossy(&console);
        self.pairs = text
            .lines()
            .find_map(|l| l.strip_suffix(" pairs")?.trim().parse().ok());
    }

    /// One line per sim-host variant: the host time of one pair.
    fn print(&mut self, medians: &[f64], variants: &[(Variant, &str)]) {
        let Some(pairs) = self.pairs else {
            println!("\nARP pair cost skipped: arpcalls-bench-none printed no `N pairs` line");
            return;
        };
        let alone = median(&mut self.times).as_secs_f64();
        println!(
            "\nARP enter/leave pair in sim-host ({} pairs; the loop alone, `-DARP_NONE`: {alone:.3} s):",
            pairs
        );
        for (v, (variant, name)) in variants.iter().enumerate() {
            if matches!(
                variant,
                Variant::Average | Variant::AverageHook | Variant::All
            ) {
                let ns = (medians[v] - alone) / pairs as f64 * 1e9;
                println!("- {name}: {ns:.0} ns per pair");
            }
        }
    }
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// The variants `EMULATION_VARIANTS` selects, without qemu's when the
/// target names no qemu machine or qemu is not installed.
fn selected_variants(t: &Target, target_name: &str) -> Vec<(Variant, &'static str)> {
    let wanted = env_list("EMULATION_VARIANTS");
    let mut variants: Vec<(Variant, &str)> = VARIANTS
        .into_iter()
        .filter(|(_, name)| wanted.as_ref().is_none_or(|w| w.iter().any(|n| n == name)))
        .collect();
    let qemu_ok = match &t.guest.qemu {
        None => {
            println!("qemu skipped: target {target_name} names no qemu machine ([guest] qemu)");
            false
        }
        Some(q) if Command::new(&q.program).arg("--version").output().is_err() => {
            println!("qemu skipped: {} is not installed", q.program);
            false
        }
        Some(_) => true,
    };
    if !qemu_ok {
        variants.retain(|(v, _)| !matches!(v, Variant::Qemu | Variant::QemuIcount));
    }
    variants
}

/// One guest of the table: its build of the chosen length, and the
/// shorter `-bench` build the per-instruction hook runs when that length is
/// `-long`.
struct Guest {
    name: String,
    kind: &'static str,
    elf: PathBuf,
    image: GuestImage,
    short: Option<(PathBuf, GuestImage)>,
}

impl Guest {
    /// The build `variant` runs.
    fn build_for(&self, variant: Variant) -> (&Path, &GuestImage) {
        match (&self.short, variant) {
            (Some((elf, image)), Variant::PerInstruction) => (elf, image),
            _ => (&self.elf, &self.image),
        }
    }
}

fn hard_float(t: &Target) -> bool {
    t.guest.cflags.iter().any(|f| f == "-mfloat-abi=hard")
}

/// The guests `EMULATION_GUESTS` selects (by base name), of the length
/// chosen, that are built.
fn selected_guests(guests_dir: &Path, length: &str, t: &Target) -> Vec<Guest> {
    let wanted = env_list("EMULATION_GUESTS");
    let mut guests = Vec::new();
    for (base, kind) in GUESTS {
        let chosen = match &wanted {
            Some(w) => w.iter().any(|n| n == base),
            None => base != FLOAT_GUEST || hard_float(t),
        };
        if !chosen {
            continue;
        }
        let name = format!("{base}{length}");
        let elf = guests_dir.join(format!("{name}.elf"));
        if !elf.exists() {
            println!(
                "{name} skipped: {} missing (run `python3 guest-shim/build.py`)",
                elf.display()
            );
            continue;
        }
        let image = GuestImage::load(&elf, t).unwrap();
        let short_elf = guests_dir.join(format!("{base}-bench.elf"));
        let short = (length == "-long")
            .then(|| GuestImage::load(&short_elf, t).ok())
            .flatten()
            .map(|image| (short_elf, image));
        guests.push(Guest {
            name,
            kind,
            elf,
            image,
            short,
        });
    }
    guests
}

/// Host times of every guest and variant, and of each variant's start-up
/// (the trivial guest), in interleaved rounds.
struct Measures {
    /// times[guest][variant][round]
    times: Vec<Vec<Vec<Duration>>>,
    /// startup[variant][round]
    startup: Vec<Vec<Duration>>,
    /// instructions[guest][variant]: counted by the sim-host variants
    instructions: Vec<Vec<Option<u64>>>,
}

fn measure(
    rounds: usize,
    guests: &[Guest],
    variants: &[(Variant, &str)],
    startup: Option<&(PathBuf, GuestImage)>,
    t: &Target,
    dir: &Path,
    pair_cost: &mut Option<PairCost>,
) -> Measures {
    let mut m = Measures {
        times: vec![vec![Vec::new(); variants.len()]; guests.len()],
        startup: vec![Vec::new(); variants.len()],
        instructions: vec![vec![None; variants.len()]; guests.len()],
    };
    let started = Instant::now();
    for round in 0..rounds {
        for (g, guest) in guests.iter().enumerate() {
            for (v, (variant, _)) in variants.iter().enumerate() {
                let (elf, image) = guest.build_for(*variant);
                let (time, count) = run_once(*variant, elf, image, t, dir);
                m.times[g][v].push(time);
                if count.is_some() {
                    m.instructions[g][v] = count;
                }
            }
        }
        for (v, (variant, _)) in variants.iter().enumerate() {
            if let Some((elf, image)) = startup {
                m.startup[v].push(run_once(*variant, elf, image, t, dir).0);
            }
        }
        if let Some(p) = pair_cost.as_mut() {
            p.run_loop(t, dir);
        }
        eprintln!(
            "round {}/{rounds} done ({:.0} s)",
            round + 1,
            started.elapsed().as_secs_f64()
        );
    }
    m
}

fn main() {
    // `-- N` (the earlier harness's argument) or EMULATION_ROUNDS
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .or_else(|| {
            std::env::var("EMULATION_ROUNDS")
                .ok()
                .and_then(|r| r.parse().ok())
        })
        .unwrap_or(3)
        .max(1);
    let target_name = std::env::var("EMULATION_TARGET").unwrap_or_else(|_| "cortex-m4".into());
    let length = format!(
        "-{}",
        std::env::var("EMULATION_LENGTH").unwrap_or_else(|_| "long".into())
    );
    let t = target::builtin(&target_name).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let guests_dir = root.join("target/guests").join(&target_name);
    let variants = selected_variants(&t, &target_name);
    let guests = selected_guests(&guests_dir, &length, &t);
    let startup_elf = guests_dir.join(format!("{STARTUP_GUEST}.elf"));
    let startup = GuestImage::load(&startup_elf, &t)
        .ok()
        .map(|image| (startup_elf, image));
    if startup.is_none() {
        println!("start-up not measured: {STARTUP_GUEST}.elf missing");
    }
    let dir = std::env::temp_dir().join(format!("emulation-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let measures_sim_host = variants
        .iter()
        .any(|(v, _)| matches!(v, Variant::Average | Variant::AverageHook | Variant::All));
    let arpcalls = guests.iter().position(|g| g.name.starts_with("arpcalls"));
    let mut pair_cost = match arpcalls {
        Some(_) if measures_sim_host => PairCost::new(&guests_dir, &length, &t),
        _ => None,
    };

    let load_before = load_average();
    let mut m = measure(
        rounds,
        &guests,
        &variants,
        startup.as_ref(),
        &t,
        &dir,
        &mut pair_cost,
    );
    let _ = std::fs::remove_dir_all(&dir);

    println!(
        "target {target_name}; median of {rounds} interleaved rounds; load average {load_before} before, {} after",
        load_average()
    );
    let startups: Vec<f64> = m
        .startup
        .iter_mut()
        .map(|t| {
            if t.is_empty() {
                0.0
            } else {
                median(t).as_secs_f64()
            }
        })
        .collect();
    let arpcalls_medians = print_table(&mut m, &guests, &variants, &startups, arpcalls);
    if let Some(p) = pair_cost.as_mut() {
        p.print(&arpcalls_medians, &variants);
    }
}

/// The table: wall time, start-up, MIPS over wall time and over wall time
/// less start-up (steady state), and the ratios of wall times. Returns the
/// medians of the arpcalls guest.
fn print_table(
    m: &mut Measures,
    guests: &[Guest],
    variants: &[(Variant, &str)],
    startups: &[f64],
    arpcalls: Option<usize>,
) -> Vec<f64> {
    println!(
        "| guest | variant | median s | start-up s | MIPS | steady MIPS | x qemu | x qemu -icount | x bare unicorn |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let index = |want: Variant| variants.iter().position(|(v, _)| *v == want);
    let mut arpcalls_medians = Vec::new();
    let mut scaled_notes = Vec::new();
    for (g, guest) in guests.iter().enumerate() {
        // the guest's work: what the sim-host variants counted on this build
        let work = variants
            .iter()
            .zip(&m.instructions[g])
            .find_map(|((v, _), n)| n.filter(|_| guest.build_for(*v).0 == guest.elf));
        let mut medians: Vec<f64> = m.times[g]
            .iter_mut()
            .map(|t| median(t).as_secs_f64())
            .collect();
        for (v, (variant, name)) in variants.iter().enumerate() {
            let (elf, _) = guest.build_for(*variant);
            let (Some(long), Some(short)) = (work, m.instructions[g][v]) else {
                continue;
            };
            if elf != guest.elf {
                let measured = medians[v];
                medians[v] = startups[v] + (measured - startups[v]) * long as f64 / short as f64;
                scaled_notes.push(format!(
                    "{} / {name}: run on {} ({short} instructions, median {measured:.3} s), time scaled to {long} instructions",
                    guest.name,
                    elf.file_name().unwrap_or_default().to_string_lossy(),
                ));
            }
        }
        let ratio = |v: usize, base: Option<usize>| {
            base.map_or("—".to_owned(), |b| {
                format!("{:.2}", medians[b] / medians[v])
            })
        };
        for (v, (_, vname)) in variants.iter().enumerate() {
            let mips = |secs: f64| {
                work.map_or("—".to_owned(), |n| {
                    format!("{:.0}", n as f64 / secs / 1e6)
                })
            };
            println!(
                "| {} ({}) | {vname} | {:.3} | {:.3} | {} | {} | {} | {} | {} |",
                guest.name,
                guest.kind,
                medians[v],
                startups[v],
                mips(medians[v]),
                mips(medians[v] - startups[v]),
                ratio(v, index(Variant::Qemu)),
                ratio(v, index(Variant::QemuIcount)),
                ratio(v, index(Variant::Bare)),
            );
        }
        if let Some(n) = work {
            println!("|  | ({n} guest instructions) | | | | | | | |");
        }
        if Some(g) == arpcalls {
            arpcalls_medians = medians;
        }
    }
    for note in scaled_notes {
        println!("- scaled: {note}");
    }
    arpcalls_medians
}

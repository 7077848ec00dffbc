//! `sim-host targets`: the known targets (built-in and the user's), their
//! memory maps and clocks; `--show NAME` prints one as TOML to copy.

use anyhow::Result;
use sim_host::model::target::{self, catalog, Target};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Validate and show this target file instead of the known ones.
    #[arg(long, conflicts_with = "show")]
    target_file: Option<PathBuf>,
    /// Print this target's description file (TOML), to copy and modify
    /// for a core of your own (then --target-file, or SIM_HOST_TARGET_PATH).
    #[arg(long, value_name = "NAME")]
    show: Option<String>,
}

/// The exception model's figures for `t` and their sources, as comment
/// lines after the target file's text (`--show`): they are the core's
/// facts (`model::cores`, a `[system]` table overriding them), not the
/// file's own lines.
fn core_facts_comment(t: &Target) -> String {
    let Some(core) = &t.system.core else {
        return String::new();
    };
    let mut lines = vec![
        "# The core's exception model (sim-host's model::cores, [system] overrides):".to_owned(),
    ];
    let mut fact = |what: &str, c: &sim_host::model::cores::Cited| {
        lines.push(format!("# - {what}: {} cycles; {}", c.cycles, c.cite));
    };
    fact("exception entry", &core.entry);
    fact("exception return", &core.exit);
    fact("tail-chaining", &core.tail_chain);
    if core.fpu {
        fact(
            "FP context stacked at entry (LSPEN clear)",
            &core.fp_stacking,
        );
        fact("lazy FP preservation (LSPEN set)", &core.lazy_fp_push);
        fact("FP context unstacked at return", &core.fp_unstacking);
    }
    lines.join("\n")
}

pub fn run(args: Args) -> Result<()> {
    if let Some(name) = &args.show {
        let (text, _) = catalog::find(name).ok_or_else(|| target::TargetError::Unknown {
            name: name.clone(),
            known: catalog::names().join(", "),
        })?;
        sim_host::show_raw!("{text}");
        if let Ok((t, _)) = target::load_by_name(name) {
            sim_host::show_raw!("{}\n", core_facts_comment(&t));
        }
        return Ok(());
    }
    let targets: Vec<(Target, catalog::Source)> = match args.target_file {
        Some(path) => vec![(Target::load(&path)?, catalog::Source::File(path))],
        None => catalog::names()
            .iter()
            .map(|name| target::load_by_name(name))
            .collect::<Result<_, _>>()?,
    };
    for (t, source) in targets {
        sim_host::show!(
            "{:<10} {} ({}, {} MHz, {} core{}) [{source}]",
            t.name,
            t.description,
            t.arch,
            t.clock_hz as f64 / 1e6,
            t.cores,
            if t.cores == 1 { "" } else { "s" }
        );
        sim_host::show!("{}", t.memory_map());
        let timer = t.machine_timer();
        for p in &t.system.peripherals {
            let holds_timer = timer.is_some_and(|m| p.start <= m.base && m.base < p.end());
            sim_host::show!(
                "  {:<10} {:#010x}..{:#010x} not modelled{}: named in faults, read as 0 by --peripherals ignore",
                p.name,
                p.start,
                p.end(),
                if holds_timer { " but for its machine timer" } else { "" }
            );
        }
        if let Some(core) = &t.system.core {
            sim_host::show!(
                "  core: CPUID {:#010x}, exception entry {} cycles, return {}, tail-chaining {}",
                core.cpuid,
                core.entry.cycles,
                core.exit.cycles,
                core.tail_chain.cycles
            );
            if core.fpu {
                sim_host::show!(
                    "  FP context on exceptions: +{} cycles stacked at entry (FPCCR.LSPEN clear), \
                     or +{} at the handler's first FP instruction (lazy, LSPEN set, the reset \
                     value); +{} unstacked at return",
                    core.fp_stacking.cycles,
                    core.lazy_fp_push.cycles,
                    core.fp_unstacking.cycles
                );
            }
        }
        if let Some(traps) = &t.system.traps {
            let interrupts = traps
                .interrupt_entry
                .as_ref()
                .map_or(String::new(), |c| format!(", an interrupt in {}", c.cycles));
            sim_host::show!(
                "  traps: ecall, ebreak, illegal instructions, misaligned LR and AMOs enter mtvec's handler in {} cycles{interrupts}; mtval {}",
                traps.entry.cycles,
                match traps.mtval {
                    target::TrapValue::Zero => "always 0",
                    target::TrapValue::Informative => "the address or instruction",
                }
            );
        }
        if let Some(m) = timer {
            sim_host::show!("  machine timer: {}", m.describe());
        }
        if let Some(c) = &t.clocks {
            let crystal = c.rp2.map_or(c.hse_hz, |b| b.xosc_hz);
            sim_host::show!(
                "  clock tree ({:?}): {} MHz at the start, up to {} MHz as the firmware sets it; crystal {} MHz",
                c.kind,
                c.reset_hz as f64 / 1e6,
                c.max_hz as f64 / 1e6,
                crystal as f64 / 1e6
            );
        }
        for u in &t.uarts {
            sim_host::show!(
                "  {:<10} {:#010x} {:?} UART to the console (clock {})",
                u.name,
                u.base,
                u.kind,
                u.clock
            );
        }
        for g in &t.gpios {
            sim_host::show!("  {:<10} {:#010x} {:?} GPIO block", g.name, g.base, g.kind);
        }
        if let Some(x) = &t.xip {
            sim_host::show!(
                "  XIP cache in front of `{}`: {} KiB, {} ways, {}-byte lines, a line read from the flash {} cycles",
                x.region,
                x.sets * x.ways * x.line_bytes / 1024,
                x.ways,
                x.line_bytes,
                x.miss_cycles
            );
        }
        sim_host::show!("  cycle table: {}", t.cycle_reference);
        sim_host::show!();
    }
    Ok(())
}

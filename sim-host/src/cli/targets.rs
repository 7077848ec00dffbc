//! `sim-host targets`: the built-in targets, their memory maps and clocks.

use anyhow::Result;
use sim_host::target::{self, Target};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Validate and show this target file instead of the built-in ones.
    #[arg(long)]
    target_file: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let targets: Vec<Target> = match args.target_file {
        Some(path) => vec![Target::load(&path)?],
        None => target::builtin_names()
            .iter()
            .map(|name| target::builtin(name))
            .collect::<Result<_, _>>()?,
    };
    for t in targets {
        sim_host::show!(
            "{:<10} {} ({}, {} MHz, {} core{})",
            t.name,
            t.description,
            t.arch,
            t.clock_hz as f64 / 1e6,
            t.cores,
            if t.cores == 1 { "" } else { "s" }
        );
        sim_host::show!("{}", t.memory_map());
        sim_host::show!("  cycle table: {}", t.cycle_reference);
        sim_host::show!();
    }
    Ok(())
}

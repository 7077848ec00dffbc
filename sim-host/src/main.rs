//! The `sim-host` command line: a thin layer over the library.

use anyhow::Result;
use clap::{Parser, Subcommand};

mod cli;

#[derive(Parser)]
#[command(
    name = "sim-host",
    version,
    about = "Cycle-counting simulator for ARP-instrumented microcontroller programs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the built-in targets with their memory maps and clocks.
    Targets(cli::targets::Args),
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Targets(args) => cli::targets::run(args),
    }
}

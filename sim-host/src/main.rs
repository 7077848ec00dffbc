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
    /// Run a guest ELF, print its output and report the cost of its sections.
    Run(Box<cli::run::Args>),
    /// List the built-in targets with their memory maps and clocks.
    Targets(cli::targets::Args),
    /// Look into and convert data.arp files.
    Arp(cli::arp::Args),
    /// Generate the SIR (program structure) of a guest ELF.
    Sir(cli::sir::Args),
    /// Run the entries of a suite manifest in parallel and report them together.
    Suite(cli::suite::Args),
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = dispatch(cli) {
        eprintln!("sim-host: {}", cli::error_text(&e));
        std::process::exit(1);
    }
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(args) => {
            let status = cli::run::run(*args)?;
            std::process::exit(status);
        }
        Command::Targets(args) => cli::targets::run(args),
        Command::Arp(args) => cli::arp::run(args),
        Command::Sir(args) => cli::sir::run(args),
        Command::Suite(args) => {
            let status = cli::suite::run(args)?;
            std::process::exit(status);
        }
    }
}

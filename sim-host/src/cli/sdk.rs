//! `sim-host sdk`: the guest SDK this binary carries (header, stubs,
//! linker scripts, Rust crate, a Makefile fragment and a CMake toolchain
//! file per target).

use anyhow::{Context, Result};
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(arg_required_else_help = true, args_conflicts_with_subcommands = true)]
pub struct Args {
    /// Print the folder of this binary's SDK (installed there first if
    /// needed: $SIM_HOST_SDK_DIR, else $XDG_DATA_HOME/sim-host/, else
    /// ~/.local/share/sim-host/).
    #[arg(long)]
    print_path: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Write the SDK into DIR. A DIR that holds anything but this SDK
    /// (other files, or SDK files that differ) is refused.
    Install {
        dir: PathBuf,
        /// Write into a DIR that holds other files; each file that differs
        /// from the SDK's is replaced and named.
        #[arg(long)]
        force: bool,
    },
}

pub fn run(args: Args) -> Result<()> {
    let command = if args.print_path { None } else { args.command };
    match command {
        None => {
            let dir = sim_host::tools::sdk::ensure_default().context("installing the guest SDK")?;
            sim_host::show!("{}", dir.display());
        }
        Some(Command::Install { dir, force }) => {
            let done = sim_host::tools::sdk::install(&dir, force)
                .with_context(|| format!("installing the guest SDK into {}", dir.display()))?;
            for path in &done.replaced {
                sim_host::say!(
                    "sim-host: replaced {} (it differed from the SDK's)",
                    path.display()
                );
            }
            sim_host::say!("sim-host: guest SDK written to {}", dir.display());
        }
    }
    Ok(())
}

//! `sim-host sir generate ELF [--target NAME] [--dialect apart|periscope] -o OUT`:
//! the SIR of a guest ELF (units, loops, calls, ARP sections with source
//! positions), without running it. `sim-host run --profile` writes the same
//! SIR annotated with measurements.

use anyhow::{Context, Result};
use sim_host::elf::GuestImage;
use sim_host::sirgen::{self, Dialect};
use sim_host::target::{self, Target};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(clap::Subcommand)]
pub enum Command {
    /// Write the SIR (program structure) of a guest ELF.
    Generate(GenerateArgs),
}

/// The SIR dialect to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DialectArg {
    /// APART SIR (DTD, no namespace).
    Apart,
    /// Periscope SIR (XML Schema, namespace http://www.lrr.in.tum.de/Periscope).
    Periscope,
}

impl From<DialectArg> for Dialect {
    fn from(d: DialectArg) -> Dialect {
        match d {
            DialectArg::Apart => Dialect::Apart,
            DialectArg::Periscope => Dialect::Periscope,
        }
    }
}

#[derive(clap::Args)]
pub struct GenerateArgs {
    /// The guest ELF (with -g for source positions).
    pub elf: PathBuf,
    /// Built-in target (see `sim-host targets`).
    #[arg(long, default_value = "cortex-m4", conflicts_with = "target_file")]
    pub target: String,
    /// A target description file instead of a built-in target.
    #[arg(long)]
    pub target_file: Option<PathBuf>,
    /// SIR dialect.
    #[arg(long, value_enum, default_value = "apart")]
    pub dialect: DialectArg,
    /// Where to write the SIR (`-` for standard output).
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        Command::Generate(args) => generate(args),
    }
}

fn generate(args: GenerateArgs) -> Result<()> {
    let target = match &args.target_file {
        Some(path) => Target::load(path)?,
        None => target::builtin(&args.target)?,
    };
    let bytes =
        std::fs::read(&args.elf).with_context(|| format!("reading {}", args.elf.display()))?;
    let image = GuestImage::parse(&bytes, &args.elf, &target)?;
    let generated = sirgen::generate(&image, &bytes, &target, args.dialect.into())
        .with_context(|| format!("generating the SIR of {}", args.elf.display()))?;
    for w in &generated.warnings {
        sim_host::say!("sim-host: warning: {w}");
    }
    let mut out = Vec::new();
    generated.write(&mut out)?;
    arpsim::output::write(&args.output, out)
        .with_context(|| format!("writing {}", args.output.display()))?;
    Ok(())
}

//! `sim-host new NAME --target T [--lang c|rust]`: a guest project of your
//! own that builds and runs in the simulator with one command each.

use anyhow::{Context, Result};
use sim_host::tools::scaffold::{self, Lang};
use std::path::PathBuf;

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum LangArg {
    C,
    Rust,
}

#[derive(clap::Args)]
pub struct Args {
    /// The project's name (and folder).
    name: String,
    /// The core it runs on (`sim-host targets`).
    #[arg(long, default_value = "cortex-m4")]
    target: String,
    /// C (a Makefile over the SDK) or Rust (cargo, with sim-host as runner).
    #[arg(long, value_enum, default_value = "c")]
    lang: LangArg,
    /// Where to create it (default: the current folder).
    #[arg(long, default_value = ".")]
    dir: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let target = sim_host::model::target::builtin(&args.target)?;
    // a C project's Makefile reads the SDK from its default folder
    sim_host::tools::sdk::ensure_default().context("installing the guest SDK")?;
    let lang = match args.lang {
        LangArg::C => Lang::C,
        LangArg::Rust => Lang::Rust,
    };
    let dir = scaffold::create(&args.dir, &args.name, &target, lang, "sim-host")?;
    let how = match lang {
        Lang::C => "make run",
        Lang::Rust => "cargo run",
    };
    sim_host::say!(
        "sim-host: created {} for {}; `cd {} && {how}` builds it and runs it in the simulator",
        dir.display(),
        target.name,
        dir.display()
    );
    Ok(())
}

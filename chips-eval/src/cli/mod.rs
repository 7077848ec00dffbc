//! Command-line interface (the run-time functions of Table 1).

mod calibrate;
mod check;
mod run;
mod vars;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "chips-eval",
    version,
    about = "Evaluate CHIP3S performance models against TOML hardware models"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Evaluate the application for every combination of set values (LaRun).
    Run(run::RunArgs),
    /// List the application's interface variables (LaVarList).
    Vars(vars::VarsArgs),
    /// Parse and check a model without evaluating it.
    Check(check::CheckArgs),
    /// Calibrate a hardware model from recorded data.arp runs.
    Calibrate(calibrate::CalibrateArgs),
}

/// Options shared by the subcommands that load a model.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// The application object's file (APP.la).
    pub app: PathBuf,
    /// Directory searched for included objects (NAME.la); repeatable.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Extra vector type definitions (vctdef syntax); repeatable.
    #[arg(long = "vectors", value_name = "FILE.vct")]
    pub vectors: Vec<PathBuf>,
}

impl ModelArgs {
    pub fn load_options(&self) -> chips_eval::LoadOptions {
        chips_eval::LoadOptions {
            search_path: self.include.clone(),
            vector_files: self.vectors.clone(),
        }
    }
}

pub fn dispatch(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(a) => run::execute(a),
        Command::Vars(a) => vars::execute(a),
        Command::Check(a) => check::execute(a),
        Command::Calibrate(a) => calibrate::execute(a),
    }
}

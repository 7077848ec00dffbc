//! `chips-eval check`: parse and check only.

use crate::cli::args::ModelArgs;
use chips_eval::{HardwareModel, Program};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Also check hardware parameter and device names against this model.
    #[arg(long, value_name = "HW.toml")]
    pub hardware: Option<PathBuf>,
}

pub fn execute(a: CheckArgs) -> anyhow::Result<()> {
    let hw = a.hardware.as_deref().map(HardwareModel::load).transpose()?;
    let prog = Program::load(&a.model.app, &a.model.load_options(), hw.as_ref())?;
    println!(
        "ok: {} objects",
        prog.objects.iter().filter(|o| o.ast.is_some()).count()
    );
    Ok(())
}

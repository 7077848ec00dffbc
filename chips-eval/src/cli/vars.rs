//! `chips-eval vars`: LaVarList.

use crate::cli::args::ModelArgs;
use chips_eval::Program;
use clap::Args;

#[derive(Debug, Args)]
pub struct VarsArgs {
    #[command(flatten)]
    pub model: ModelArgs,
}

pub fn execute(a: VarsArgs) -> anyhow::Result<()> {
    let prog = Program::load(&a.model.app, &a.model.load_options(), None)?;
    print!("{}", chips_eval::output::render_vars(&prog));
    Ok(())
}

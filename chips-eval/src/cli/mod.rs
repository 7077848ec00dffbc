//! Command-line interface (the run-time functions of Table 1).

mod args;
mod calibrate;
mod check;
mod merge;
mod run;
mod vars;

use clap::{Parser, Subcommand};

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
    /// Merge the outputs of `run --shard K/N` into the whole sweep's output.
    Merge(merge::MergeArgs),
}

/// Exit status of `merge` when points are missing or duplicated (as
/// `sim-host suite merge`).
pub const EXIT_INCOMPLETE: u8 = 124;

/// The exit status for an error: [`EXIT_INCOMPLETE`] for an incomplete
/// merge, else 1.
pub fn exit_status(e: &anyhow::Error) -> u8 {
    match e.downcast_ref::<chips_eval::merge::MergeError>() {
        Some(chips_eval::merge::MergeError::Incomplete(_)) => EXIT_INCOMPLETE,
        _ => 1,
    }
}

/// The error and its causes on one line, each cause once
/// (`arpsim::error::causes_once`, as sim-host prints them).
pub fn error_text(e: &anyhow::Error) -> String {
    arpsim::error::causes_once(e.as_ref())
}

pub fn dispatch(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(a) => run::execute(a),
        Command::Vars(a) => vars::execute(a),
        Command::Check(a) => check::execute(a),
        Command::Calibrate(a) => calibrate::execute(a),
        Command::Merge(a) => merge::execute(a),
    }
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[test]
    fn causes_are_kept_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let quoted = anyhow::Error::new(io).context("x.la: cannot read: no such file");
        assert_eq!(error_text(&quoted), "x.la: cannot read: no such file");
        let io = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "permission denied");
        let wrapped = anyhow::Error::new(io).context("writing p.svg");
        assert_eq!(error_text(&wrapped), "writing p.svg: permission denied");
    }
}

//! `chips-eval`: evaluate CHIP3S performance models. The logic lives in
//! the library; each subcommand is one file under `cli/`.

#![forbid(unsafe_code)]

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = cli::Cli::parse();
    match cli::dispatch(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", cli::error_text(&e));
            std::process::ExitCode::from(cli::exit_status(&e))
        }
    }
}

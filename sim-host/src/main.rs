//! The `sim-host` command line: a thin layer over the library.

#![forbid(unsafe_code)]

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
    /// Look into, compare and convert data.arp files.
    Arp(cli::arp::Args),
    /// Generate the SIR (program structure) of a guest ELF.
    Sir(cli::sir::Args),
    /// Run the entries of a suite manifest in parallel and report them together.
    Suite(Box<cli::suite::Args>),
    /// The guest SDK: headers, stubs, linker scripts, Makefile fragments,
    /// CMake toolchain files, the Rust crate.
    Sdk(cli::sdk::Args),
    /// Create a guest project (C or Rust) that builds and runs in the
    /// simulator with one command.
    New(cli::new::Args),
}

fn main() {
    let cli = Cli::parse();
    if let Err(e) = dispatch(cli) {
        sim_host::say!("sim-host: {}", cli::error_text(&e));
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
        Command::Arp(args) => {
            let status = cli::arp::run(args)?;
            if status != 0 {
                std::process::exit(status);
            }
            Ok(())
        }
        Command::Sir(args) => cli::sir::run(args),
        Command::Sdk(args) => cli::sdk::run(args),
        Command::New(args) => cli::new::run(args),
        Command::Suite(args) => {
            let status = cli::suite::run(*args)?;
            std::process::exit(status);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::Parser;
    use proptest::prelude::*;

    const OPTIONS: &[&str] = &[
        "--timeout",
        "--cores",
        "--thread-stack",
        "--max-cycles",
        "--mode",
        "--arp-format",
        "--measure",
        "--trace-limit",
        "--target",
        "-o",
        "--playback",
        "--plugin",
    ];

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("-1".to_owned()),
            Just("0".to_owned()),
            Just("nan".to_owned()),
            Just("inf".to_owned()),
            Just("1e30".to_owned()),
            Just("4294967296".to_owned()),
            Just("18446744073709551616".to_owned()),
            Just(String::new()),
            Just("record_all".to_owned()),
            Just("cycles,joules".to_owned()),
            "[ -~]{0,10}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Any argument vector parses or is a usage error (exit 2) whose
        /// message names what was wrong; no value makes clap panic.
        #[test]
        fn run_arguments_parse_or_are_usage_errors(
            pairs in prop::collection::vec((0usize..OPTIONS.len(), value()), 0..6)
        ) {
            let mut argv = vec!["sim-host".to_owned(), "run".to_owned(), "g.elf".to_owned()];
            for (option, value) in &pairs {
                argv.push(format!("{}={value}", OPTIONS[*option]));
            }
            match Cli::try_parse_from(&argv) {
                Ok(_) => {}
                Err(e) => {
                    prop_assert_eq!(e.exit_code(), 2, "{}", e);
                    let text = e.to_string();
                    prop_assert!(text.contains("error:"), "{}", text);
                }
            }
        }
    }

    #[test]
    fn the_command_line_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    /// Every help text speaks to an installed user: it names no file of
    /// this repository's sources (an installed sim-host has none of them).
    #[test]
    fn help_texts_name_no_source_file() {
        use clap::CommandFactory;
        fn walk(cmd: &mut clap::Command, path: String, found: &mut Vec<String>) {
            let help = cmd.render_long_help().to_string();
            for word in help.split(|c: char| c.is_whitespace() || "(),;`'\"".contains(c)) {
                let source = [".rs", ".py", ".c", "src/", "guest-shim/", "tests/", "docs/"]
                    .iter()
                    .any(|s| {
                        word.ends_with(s) || word.contains(&format!("/{s}")) || word.starts_with(s)
                    })
                    || word.contains("ARCHITECTURE")
                    || word.contains("README");
                if source {
                    found.push(format!("`sim-host {path} --help`: {word}"));
                }
            }
            let names: Vec<String> = cmd
                .get_subcommands()
                .map(|c| c.get_name().to_owned())
                .collect();
            for name in names {
                let sub = cmd.find_subcommand_mut(&name).expect("listed");
                walk(sub, format!("{path} {name}").trim().to_owned(), found);
            }
        }
        let mut found = Vec::new();
        walk(&mut Cli::command(), String::new(), &mut found);
        assert!(found.is_empty(), "{}", found.join("\n"));
    }

    #[test]
    fn values_out_of_range_are_refused_by_the_parser() {
        for bad in [
            "--timeout=-1",
            "--timeout=nan",
            "--timeout=1e30",
            "--cores=0",
            "--cores=4294967296",
            "--thread-stack=0",
            "--mode=bogus",
        ] {
            let err = Cli::try_parse_from(["sim-host", "run", "g.elf", bad])
                .err()
                .unwrap_or_else(|| panic!("{bad} was accepted"));
            assert_eq!(err.exit_code(), 2);
        }
        assert!(Cli::try_parse_from(["sim-host", "run", "g.elf", "--timeout=2.5"]).is_ok());
    }
}

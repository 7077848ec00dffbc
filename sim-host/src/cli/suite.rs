//! `sim-host suite`: run the entries of a manifest in parallel and report
//! them together.
//!
//! Exit status: 0 when every entry passed, 1 when any failed, 125 when the
//! manifest or an output path is unusable (the message names the entry and
//! field).

use anyhow::Result;
use sim_host::suite::{self, Manifest};
use std::io::IsTerminal;
use std::path::PathBuf;

pub const EXIT_FAILED: i32 = 1;
pub const EXIT_SETUP: i32 = 125;

#[derive(clap::Args)]
pub struct Args {
    /// The suite manifest (TOML, `[[entry]]` tables; see sim-host/src/suite.rs).
    pub manifest: PathBuf,
    /// Entries run at once (default: the host's cores).
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Also write the combined report as JSON.
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Also write the combined report as CSV.
    #[arg(long, value_name = "OUT")]
    pub csv: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<i32> {
    let manifest = match Manifest::load(&args.manifest) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("sim-host: {e}");
            return Ok(EXIT_SETUP);
        }
    };
    if args.jobs == Some(0) {
        eprintln!("sim-host: --jobs 0: at least one entry must run at a time");
        return Ok(EXIT_SETUP);
    }
    // Created before the run: an unwritable path fails in a second, not
    // after the whole suite.
    let mut outputs = Vec::new();
    for (path, json) in [(&args.json, true), (&args.csv, false)] {
        if let Some(path) = path {
            match suite::create_output(path) {
                Ok(f) => outputs.push((f, path.clone(), json)),
                Err(e) => {
                    eprintln!("sim-host: {e}");
                    return Ok(EXIT_SETUP);
                }
            }
        }
    }
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let tty = std::io::stderr().is_terminal();
    let progress = |done: usize, total: usize, r: &suite::EntryResult| {
        if tty {
            let status = if r.passed { "ok" } else { "FAIL" };
            eprint!("\r\x1b[K[{done}/{total}] {} {status}", r.name);
            if done == total {
                eprintln!();
            }
        }
    };
    let report = suite::run(&manifest, jobs, &progress);
    print!("{}", report.to_text());
    for (file, path, json) in outputs {
        let text = if json {
            report.to_json()
        } else {
            report.to_csv()
        };
        if let Err(e) = suite::write_output(file, &path, &text) {
            eprintln!("sim-host: {e}");
            return Ok(EXIT_SETUP);
        }
    }
    Ok(if report.all_passed() { 0 } else { EXIT_FAILED })
}

//! `sim-host suite`: run the entries of a manifest in parallel and report
//! them together.
//!
//! Exit status: 0 when every entry passed, 1 when any failed, 125 when the
//! manifest or an output path is unusable (the message names the entry and
//! field), 129 / 130 / 143 when SIGHUP / SIGINT / SIGTERM stopped it (the
//! results so far are written, with `interrupted_by` set).

use anyhow::Result;
use sim_host::signals;
use sim_host::suite::{self, Manifest};
use sim_host::{say, say_raw, show_raw};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

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
            say!("sim-host: {e}");
            return Ok(EXIT_SETUP);
        }
    };
    if args.jobs == Some(0) {
        say!("sim-host: --jobs 0: at least one entry must run at a time");
        return Ok(EXIT_SETUP);
    }
    // Checked before the run: an unwritable path fails in a second, not
    // after the whole suite; written atomically at the end.
    let outputs: Vec<(&str, &Path)> = [("--json", &args.json), ("--csv", &args.csv)]
        .into_iter()
        .filter_map(|(option, path)| path.as_deref().map(|p| (option, p)))
        .collect();
    if let Err(e) = arpsim::output::preflight(&outputs) {
        say!("sim-host: {e}");
        return Ok(EXIT_SETUP);
    }
    let stop = match signals::install() {
        Ok(stop) => stop,
        Err(e) => {
            say!("sim-host: cannot install the signal handlers: {e}");
            return Ok(EXIT_SETUP);
        }
    };
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let tty = std::io::stderr().is_terminal();
    let progress = |done: usize, total: usize, r: &suite::EntryResult| {
        if tty {
            let status = if r.passed { "ok" } else { "FAIL" };
            say_raw!("\r\x1b[K[{done}/{total}] {} {status}", r.name);
            if done == total {
                say!();
            }
        }
    };
    let report = suite::run(&manifest, jobs, &stop, &progress);
    show_raw!("{}", report.to_text());
    for (option, path) in outputs {
        let text = if option == "--json" {
            report.to_json()
        } else {
            report.to_csv()
        };
        if let Err(e) = suite::write_output(path, &text) {
            say!("sim-host: {e}");
            return Ok(EXIT_SETUP);
        }
    }
    if let Some(signal) = stop.signal() {
        say!("sim-host: suite interrupted by {}", signals::name(signal));
        return Ok(signals::exit_status(signal));
    }
    Ok(if report.all_passed() { 0 } else { EXIT_FAILED })
}

//! `sim-host suite`: run the entries of a manifest in parallel and report
//! them together; `--list` shows the expanded entries, `--shard K/N` runs
//! one part of them, `suite merge` puts the parts' results back together
//! (docs/scale-out.md).
//!
//! Exit status of a run: 0 when every entry passed, 1 when any failed, 3
//! when every entry passed but a cycle gate failed (a section over its
//! `budget`, or grown past `--tolerance` of `--baseline`), 125 when the
//! manifest, `--balance-from`, `--baseline` or an output path is unusable
//! (the message names the file, entry and field), 129 / 130 / 143 when
//! SIGHUP / SIGINT / SIGTERM stopped it (the results so far are written,
//! with `interrupted_by` set), 2 for a usage error (`--shard 0/4`).
//!
//! Exit status of `suite merge`: 0 when the merged result is complete and
//! every entry passed, 1 when complete with failed entries, 3 when its
//! cycle gates failed (as for a run), 124 when entries are missing or
//! duplicated (a shard missing, given twice or interrupted; nothing is
//! written), 125 when a file is unreadable, not a result, or of another
//! manifest or split, or an output is unusable.
//!
//! The gate options (`--baseline`, `--tolerance`, `--write-baseline`,
//! `--junit`, `--summary-md`) are the same for a run and a merge; they read
//! the results in hand and never run an entry again.
//!
//! `merge` is a subcommand: a manifest file named `merge` is given as
//! `./merge`.

use anyhow::Result;
use sim_host::host::signals;
use sim_host::model::exit;
use sim_host::tools::suite::baseline::{Baseline, Comparison};
use sim_host::tools::suite::merge::{self, MergeError};
use sim_host::tools::suite::{self, junit, shard, summary};
use sim_host::tools::suite::{EntryFiles, Manifest, RunPlan, Shard, SuiteReport};
use sim_host::{say, say_raw, show_raw};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What `sim-host suite --help` adds after the options: the manifest and
/// the exit statuses, for an installed user.
const SUITE_HELP: &str = "\
The manifest is TOML, one [[entry]] table per run:

  [[entry]]
  name = \"fir\"                      # unique; default: the ELF's file stem
  elf = \"build/fir.elf\"             # relative to the manifest's folder
  target = \"cortex-m4\"              # a built-in target (sim-host targets)
  args = [\"1024\"]                   # the guest's arguments
  expected_output = \"fir.out\"       # its output must equal this file
  exit_code = 0                     # the exit status it must end with
  cores = 2                         # optional: simulated cores
  mode = \"record_average\"           # optional: the ARP mode
  max_cycles = 100000000            # optional: a cycle limit
  timeout = 60.0                    # optional: seconds of host time
  clock_hz = 168000000              # optional: the clock of the time columns (default: the target's)
  budget = { ato_kernel_fir = 20000, \"8/1\" = { mean_cycles = 4500, instructions = 90000 } }

  [[entry]]                         # one entry per combination:
  elf = \"build/{target}/fir.elf\"
  matrix = { target = [\"cortex-m0\", \"rv32imac\"], args = [[\"1024\"], [\"4096\"]], cores = [1, 2] }

clock_hz changes no cycle count: the sim time, and the time columns of
--long-csv, are the cycles at that clock, to compare parts at their own
clocks (a matrix may list several: matrix = { clock_hz = [25000000, 168000000] }).

A budget key is a section's name as the report shows it (its ato_kernel*/
ato_profile* label, else the function (file:line) of its enter call) or its
trace of section ids (\"8/1\"); a number limits its total cycles, a table its
cycles, mean_cycles (per call) and instructions. --baseline compares every
entry's sections with an earlier result; a section fails when its total
cycles grew past --tolerance (default 0%).

Exit status: 0 all passed; 1 an entry failed; 3 every entry passed but a
cycle gate failed (a budget, or the baseline); 125 the manifest, an input
or an output is unusable; 129/130/143 stopped by SIGHUP/SIGINT/SIGTERM
(the results so far are written); 2 a usage error.";

#[derive(clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_long_help = SUITE_HELP
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The suite manifest (TOML, [[entry]] tables: see --help).
    #[arg(required = true)]
    pub manifest: Option<PathBuf>,
    /// Entries run at once (default: the host's cores).
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Also write the combined report as JSON (with --list: the list;
    /// without OUT: to standard output).
    #[arg(long, value_name = "OUT", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<PathBuf>,
    /// Also write the combined report as CSV.
    #[arg(long, value_name = "OUT")]
    pub csv: Option<PathBuf>,
    /// Also write it as a long CSV: a row per entry and section (count,
    /// inclusive and self cycles, mean, min, max, time at the clock).
    #[arg(long, value_name = "OUT")]
    pub long_csv: Option<PathBuf>,
    /// Print the expanded entries (of the shard, with --shard) and run none.
    #[arg(long)]
    pub list: bool,
    /// Run only the K-th of N balanced shards of the entries (1 <= K <= N).
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// Balance the shards by the entries' cycles in this earlier result.
    #[arg(long, value_name = "RESULT.json")]
    pub balance_from: Option<PathBuf>,
    /// Write the result (result.json, or shard-K-of-N.json) and each
    /// entry's data.arp and report (entries/NAME.arp, entries/NAME.json)
    /// into this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub gate: GateArgs,
}

/// Cycle gates and the files CI systems read (a run and a merge alike).
#[derive(clap::Args)]
pub struct GateArgs {
    /// Compare each entry's sections with an earlier result (a suite result
    /// JSON or a file --write-baseline wrote); a section whose total cycles
    /// grew past --tolerance fails the gate (exit 3). Sections and entries
    /// that appeared or vanished are listed.
    #[arg(long, value_name = "OLD.json")]
    pub baseline: Option<PathBuf>,
    /// How much a section may grow past the baseline, in percent (default
    /// 0%: the simulation is deterministic).
    #[arg(long, value_name = "PCT", value_parser = parse_percent, requires = "baseline")]
    pub tolerance: Option<f64>,
    /// When everything passed (entries, budgets, baseline), write these
    /// results as the next baseline (no host times: fit to commit).
    #[arg(long, value_name = "NEW.json")]
    pub write_baseline: Option<PathBuf>,
    /// Write a JUnit XML report: a test case per entry and per budgeted
    /// section, failures with the numbers.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary (a GitHub step summary, a merge-request
    /// comment): the changed sections with before, after and change.
    #[arg(long, value_name = "FILE")]
    pub summary_md: Option<PathBuf>,
}

fn parse_percent(text: &str) -> Result<f64, String> {
    sim_host::tools::gate::parse_percent(text)
}

impl GateArgs {
    /// The files the gates write, with their options.
    fn outputs(&self) -> Vec<(&'static str, &Path)> {
        [
            ("--write-baseline", self.write_baseline.as_deref()),
            ("--junit", self.junit.as_deref()),
            ("--summary-md", self.summary_md.as_deref()),
        ]
        .into_iter()
        .filter_map(|(o, p)| p.map(|p| (o, p)))
        .collect()
    }

    /// The file the gates read, with its option.
    fn inputs(&self) -> Vec<(String, PathBuf)> {
        self.baseline
            .iter()
            .map(|p| ("--baseline".to_owned(), p.clone()))
            .collect()
    }

    /// The baseline, read before anything runs.
    fn load(&self) -> Result<Option<Baseline>, String> {
        self.baseline
            .as_deref()
            .map(|p| Baseline::load(p).map_err(|e| format!("--baseline {e}")))
            .transpose()
    }

    /// After a run or merge: the comparison shown, the JUnit and Markdown
    /// files and (if everything passed) the next baseline written; the
    /// exit status.
    fn finish(
        &self,
        report: &SuiteReport,
        baseline: Option<&Baseline>,
        to_stdout: bool,
    ) -> Result<i32, String> {
        let comparison = baseline
            .zip(self.baseline.as_deref())
            .map(|(b, file)| Comparison::of(report, b, file, self.tolerance.unwrap_or(0.0)));
        if let Some(c) = &comparison {
            if to_stdout {
                say_raw!("{}", c.to_text());
            } else {
                show_raw!("{}", c.to_text());
            }
        }
        if let Some(path) = &self.junit {
            let xml = junit::xml(
                report,
                comparison.as_ref(),
                SystemTime::now(),
                &junit::hostname(),
            );
            suite::write_output(path, &xml).map_err(|e| e.to_string())?;
        }
        if let Some(path) = &self.summary_md {
            let md = summary::markdown(report, comparison.as_ref());
            suite::write_output(path, &md).map_err(|e| e.to_string())?;
        }
        let status = if !report.all_passed() {
            exit::SUITE_FAILED
        } else if !report.budgets_held() || comparison.as_ref().is_some_and(|c| !c.passed()) {
            exit::GATE_FAILED
        } else {
            0
        };
        if let Some(path) = &self.write_baseline {
            if status == 0 && report.interrupted_by.is_none() {
                let text = Baseline::of(report).to_json();
                suite::write_output(path, &text).map_err(|e| e.to_string())?;
                say!(
                    "sim-host: the next baseline is written to {}",
                    path.display()
                );
            } else {
                say!(
                    "sim-host: --write-baseline {}: not written, the suite did not pass",
                    path.display()
                );
            }
        }
        Ok(status)
    }
}

#[derive(clap::Subcommand)]
pub enum Command {
    /// Merge shards' results into the whole manifest's result.
    Merge(MergeArgs),
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The shards' result files (shard-K-of-N.json).
    #[arg(required = true, value_name = "RESULT")]
    pub results: Vec<PathBuf>,
    /// Write the merged result (JSON) here.
    #[arg(short = 'o', long = "output", value_name = "ALL.json")]
    pub output: Option<PathBuf>,
    /// Also write it as CSV.
    #[arg(long, value_name = "OUT")]
    pub csv: Option<PathBuf>,
    /// Also write it as a long CSV (a row per entry and section).
    #[arg(long, value_name = "OUT")]
    pub long_csv: Option<PathBuf>,
    #[command(flatten)]
    pub gate: GateArgs,
}

fn parse_shard(text: &str) -> Result<Shard, String> {
    text.parse()
}

pub fn run(args: Args) -> Result<i32> {
    if let Some(Command::Merge(m)) = args.command {
        return Ok(run_merge(&m));
    }
    Ok(run_manifest(&args).unwrap_or_else(|message| {
        say!("sim-host: {message}");
        exit::SETUP
    }))
}

/// The manifest's entries (or a shard of them): run, or listed. An `Err`
/// is a setup error's message.
fn run_manifest(args: &Args) -> Result<i32, String> {
    let path = args.manifest.as_deref().ok_or("no manifest given")?;
    let manifest = Manifest::load(path).map_err(|e| e.to_string())?;
    if args.jobs == Some(0) {
        return Err("--jobs 0: at least one entry must run at a time".into());
    }
    let recorded = match &args.balance_from {
        Some(p) => shard::recorded_cycles(p).map_err(|e| format!("--balance-from {e}"))?,
        None => Default::default(),
    };
    let costs = shard::costs(&manifest, &recorded);
    let mut plan = match args.shard {
        Some(s) => RunPlan::shard(s, &costs),
        None => RunPlan::whole(&manifest),
    };
    if args.list {
        return list(args, &manifest, &plan, &costs);
    }
    if args.shard.is_some() && args.gate.write_baseline.is_some() {
        return Err(
            "--write-baseline with --shard: write the baseline from `suite merge` of every shard"
                .into(),
        );
    }
    let baseline = args.gate.load()?;
    let outputs = Outputs::prepare(args, &manifest, &mut plan)?;
    let stop =
        signals::install().map_err(|e| format!("cannot install the signal handlers: {e}"))?;
    let report = suite::run_plan(&manifest, &plan, jobs(args), &stop, &progress(jobs(args)));
    if !outputs.to_stdout() {
        show_raw!("{}", report.to_text());
    }
    outputs.write(&report)?;
    let status = args
        .gate
        .finish(&report, baseline.as_ref(), outputs.to_stdout())?;
    if let Some(signal) = stop.signal() {
        say!("sim-host: suite interrupted by {}", signals::name(signal));
        return Ok(exit::for_signal(signal));
    }
    Ok(status)
}

fn jobs(args: &Args) -> usize {
    args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    })
}

/// On a terminal, a line that says how far the suite is: entries done,
/// running and failed, and the last one to finish.
fn progress(jobs: usize) -> impl Fn(usize, usize, &suite::EntryResult) + Sync {
    let tty = std::io::stderr().is_terminal();
    let failed = std::sync::atomic::AtomicUsize::new(0);
    move |done, total, r| {
        if !r.passed {
            failed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        if tty {
            say_raw!("\r\x1b[K{}", progress_line(done, total, jobs, &failed, r));
            if done == total {
                say!();
            }
        }
    }
}

fn progress_line(
    done: usize,
    total: usize,
    jobs: usize,
    failed: &std::sync::atomic::AtomicUsize,
    last: &suite::EntryResult,
) -> String {
    let running = jobs.max(1).min(total - done);
    let failed = failed.load(std::sync::atomic::Ordering::Relaxed);
    let status = if last.passed { "ok" } else { "FAIL" };
    format!(
        "[{done}/{total} done, {running} running, {failed} failed] {} {status}",
        last.name
    )
}

/// `--list`: the selected entries, as text or (`--json`) JSON.
fn list(args: &Args, manifest: &Manifest, plan: &RunPlan, costs: &[u64]) -> Result<i32, String> {
    let entries = plan
        .selected
        .iter()
        .map(|&i| {
            let e = &manifest.entries[i];
            shard::ListedEntry {
                index: e.index,
                name: e.name.clone(),
                elf: e.elf.display().to_string(),
                target: e.target.clone(),
                args: e.args.clone(),
                cores: e.cores,
                mode: e.mode.map(|m| m.name().to_owned()),
                max_cycles: e.max_cycles,
                cost: costs[i],
                shard: plan.shard.as_ref().map(|s| s.index),
            }
        })
        .collect();
    let listing = shard::Listing {
        manifest: manifest.file.display().to_string(),
        manifest_hash: manifest.hash.clone(),
        shard: plan.shard.clone(),
        entries,
    };
    match &args.json {
        Some(path) => {
            arpsim::output::check_files(&[("--json", path)], &run_inputs(args, manifest))?;
            suite::write_output(path, &listing.to_json()).map_err(|e| e.to_string())?;
        }
        None => show_raw!("{}", listing.to_text()),
    }
    Ok(0)
}

/// Every file a run (or `--list`) reads: the manifest's, `--baseline` and
/// `--balance-from`.
fn run_inputs(args: &Args, manifest: &Manifest) -> Vec<(String, PathBuf)> {
    let mut inputs = manifest.inputs();
    inputs.extend(args.gate.inputs());
    if let Some(p) = &args.balance_from {
        inputs.push(("--balance-from".to_owned(), p.clone()));
    }
    inputs
}

/// The files a run writes, checked before it starts.
struct Outputs {
    /// (option, path)
    files: Vec<(&'static str, PathBuf)>,
}

/// The text an output option asks for: JSON (`--json`, `--out`, `-o`),
/// CSV (`--csv`) or the long CSV (`--long-csv`).
fn report_text(option: &str, report: &SuiteReport) -> String {
    match option {
        "--csv" => report.to_csv(),
        "--long-csv" => suite::long_csv(report),
        _ => report.to_json(),
    }
}

impl Outputs {
    /// Checks every output against each other and every input (and
    /// creates `--out DIR/entries`); entries' files are kept in `--out
    /// DIR/entries` from then on.
    fn prepare(args: &Args, manifest: &Manifest, plan: &mut RunPlan) -> Result<Outputs, String> {
        let mut files = Vec::new();
        for (option, path) in [
            ("--json", &args.json),
            ("--csv", &args.csv),
            ("--long-csv", &args.long_csv),
        ] {
            files.extend(path.iter().map(|p| (option, p.clone())));
        }
        if let Some(dir) = &args.out {
            let entries = dir.join("entries");
            std::fs::create_dir_all(&entries).map_err(|e| {
                format!(
                    "--out {}: cannot create {}: {e}",
                    dir.display(),
                    entries.display()
                )
            })?;
            files.push(("--out", dir.join(shard::result_file_name(args.shard))));
        }
        let mut checked: Vec<(&str, &Path)> =
            files.iter().map(|(o, p)| (*o, p.as_path())).collect();
        checked.extend(args.gate.outputs());
        let kept = args.out.as_ref().map(|dir| dir.join("entries"));
        let entry_files = kept
            .as_deref()
            .map_or_else(Vec::new, |d| entry_files(manifest, plan, d));
        checked.extend(entry_files.iter().map(|p| ("--out", p.as_path())));
        arpsim::output::check_files(&checked, &run_inputs(args, manifest))?;
        plan.keep_in = kept;
        Ok(Outputs { files })
    }

    fn to_stdout(&self) -> bool {
        self.files.iter().any(|(_, p)| p.as_os_str() == "-")
    }

    fn write(&self, report: &SuiteReport) -> Result<(), String> {
        for (option, path) in &self.files {
            let text = report_text(option, report);
            suite::write_output(path, &text).map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// Each selected entry's data.arp and report in `dir` (`--out
/// DIR/entries`): outputs checked with the others.
fn entry_files(manifest: &Manifest, plan: &RunPlan, dir: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for &i in &plan.selected {
        let files = EntryFiles::kept(&manifest.entries[i], dir);
        paths.push(files.arp);
        paths.extend(files.report);
    }
    paths
}

/// `suite merge`.
fn run_merge(args: &MergeArgs) -> i32 {
    let mut outputs: Vec<(&str, &Path)> = Vec::new();
    if let Some(p) = &args.output {
        outputs.push(("-o", p));
    }
    if let Some(p) = &args.csv {
        outputs.push(("--csv", p));
    }
    if let Some(p) = &args.long_csv {
        outputs.push(("--long-csv", p));
    }
    let mut checked = outputs.clone();
    checked.extend(args.gate.outputs());
    let mut inputs: Vec<(String, PathBuf)> = args
        .results
        .iter()
        .map(|p| ("result file".to_owned(), p.clone()))
        .collect();
    inputs.extend(args.gate.inputs());
    if let Err(e) = arpsim::output::check_files(&checked, &inputs) {
        say!("sim-host: suite merge: {e}");
        return exit::SETUP;
    }
    let baseline = match args.gate.load() {
        Ok(b) => b,
        Err(e) => {
            say!("sim-host: suite merge: {e}");
            return exit::SETUP;
        }
    };
    let mut parts = Vec::new();
    for path in &args.results {
        match merge::load(path) {
            Ok(p) => parts.push(p),
            Err(e) => {
                say!("sim-host: suite merge: {e}");
                return exit::SETUP;
            }
        }
    }
    let report = match merge::merge(parts) {
        Ok(r) => r,
        Err(MergeError::Invalid(e)) => {
            say!("sim-host: suite merge: {e}");
            return exit::SETUP;
        }
        Err(MergeError::Incomplete(problems)) => {
            say!("sim-host: suite merge: incomplete, nothing written:");
            for p in problems {
                say!("  {p}");
            }
            return exit::VERIFICATION;
        }
    };
    let status = write_merged(&report, &outputs);
    if status == exit::SETUP {
        return status;
    }
    let to_stdout = outputs.iter().any(|(_, p)| p.as_os_str() == "-");
    args.gate
        .finish(&report, baseline.as_ref(), to_stdout)
        .unwrap_or_else(|e| {
            say!("sim-host: suite merge: {e}");
            exit::SETUP
        })
}

fn write_merged(report: &SuiteReport, outputs: &[(&str, &Path)]) -> i32 {
    if !outputs.iter().any(|(_, p)| p.as_os_str() == "-") {
        show_raw!("{}", report.to_text());
    }
    for (option, path) in outputs {
        let text = report_text(option, report);
        if let Err(e) = suite::write_output(path, &text) {
            say!("sim-host: suite merge: {e}");
            return exit::SETUP;
        }
    }
    if report.all_passed() {
        0
    } else {
        exit::SUITE_FAILED
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_counts_done_running_and_failed() {
        let failed = std::sync::atomic::AtomicUsize::new(1);
        let last = suite::EntryResult {
            name: "filter-cortex-m4".into(),
            passed: false,
            ..suite::EntryResult::default()
        };
        assert_eq!(
            progress_line(3, 10, 2, &failed, &last),
            "[3/10 done, 2 running, 1 failed] filter-cortex-m4 FAIL"
        );
        assert!(progress_line(9, 10, 4, &failed, &last).contains("1 running"));
    }
}

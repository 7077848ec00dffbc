//! Running a suite: each entry a [`session`] run in a host thread of
//! this process, in parallel on the host's cores, judged against what the
//! manifest expects.

use super::manifest::{file_stem, Entry, Manifest};
use super::result::{EntryResult, SectionResult, SuiteReport};
use super::shard::{self, Shard, ShardInfo};
use crate::engine::{RunOptions, RunOutcome, Stop};
use crate::host::arp_host::ArpOptions;
use crate::host::expected::ExpectedOutput;
use crate::host::signals::StopRequest;
use crate::observe::report::Report;
use crate::tools::session::{self, RunSpec, TargetSource};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// An entry's exit status: the run's, with nothing to verify beyond what
/// [`judge`] checks.
pub(super) fn exit_code(stop: &Stop) -> i32 {
    session::exit_status(stop, true)
}

pub(super) fn failed(entry: &Entry, why: String) -> EntryResult {
    EntryResult {
        name: entry.name.clone(),
        elf: entry.elf.display().to_string(),
        target: entry.target.clone(),
        cores: entry.cores,
        passed: false,
        failures: vec![why],
        stop: "not_run".into(),
        exit_code: None,
        expected_exit_code: entry.exit_code,
        cycles: 0,
        instructions: 0,
        simulated_seconds: 0.0,
        clock_hz: entry.clock_hz,
        host_seconds: 0.0,
        sections: Vec::new(),
        budgets: Vec::new(),
    }
}

/// Where an entry's files go.
#[derive(Debug, Clone)]
pub struct EntryFiles {
    /// Its data.arp.
    pub arp: PathBuf,
    /// Its report (JSON, as `sim-host run --json` writes it), if kept.
    pub report: Option<PathBuf>,
}

impl EntryFiles {
    /// In a scratch folder shared by the entries running side by side.
    pub fn scratch(entry: &Entry, scratch: &Path) -> EntryFiles {
        EntryFiles {
            arp: scratch.join(format!("{}-{}.arp", entry.index, file_stem(&entry.name))),
            report: None,
        }
    }

    /// Under stable names in `dir` (`--out DIR/entries`).
    pub fn kept(entry: &Entry, dir: &Path) -> EntryFiles {
        let stem = file_stem(&entry.name);
        EntryFiles {
            arp: dir.join(format!("{stem}.arp")),
            report: Some(dir.join(format!("{stem}.json"))),
        }
    }
}

/// Runs one entry; `scratch` is a folder for its data.arp; `stop` ends it
/// at its next block boundary.
pub fn run_entry(entry: &Entry, scratch: &Path, stop: &StopRequest) -> EntryResult {
    run_entry_into(entry, &EntryFiles::scratch(entry, scratch), stop)
}

/// The run an entry asks for, writing its data.arp where `files` says.
pub(super) fn entry_spec(entry: &Entry, files: &EntryFiles, stop: &StopRequest) -> RunSpec {
    let mut spec = RunSpec::new(
        entry.elf.clone(),
        TargetSource::Builtin(entry.target.clone()),
    );
    spec.guest_args = entry.args.clone();
    spec.engine = RunOptions {
        max_cycles: entry.max_cycles,
        timeout: entry.timeout,
        // entries run side by side: each keeps its own data.arp
        arp: ArpOptions {
            mode: entry.mode,
            file: Some(files.arp.clone()),
            ..Default::default()
        },
        cores: entry.cores,
        interrupt: Some(stop.flag()),
        // compared while the guest writes it
        expect_output: entry
            .expected_output
            .as_deref()
            .map(|bytes| ExpectedOutput::Bytes(bytes.into())),
        ..Default::default()
    };
    spec
}

/// Runs one entry, writing its data.arp (and report) where `files` says.
pub fn run_entry_into(entry: &Entry, files: &EntryFiles, stop: &StopRequest) -> EntryResult {
    let spec = entry_spec(entry, files, stop);
    let prepared = match session::prepare_unchecked(&spec) {
        Ok(p) => p,
        Err(e) => return failed(entry, e.to_string()),
    };
    let finished = match session::execute(&spec, prepared) {
        Ok(f) => f,
        Err(e) => return failed(entry, e.to_string()),
    };
    let (outcome, report) = (&finished.outcome, finished.report);
    let mut failures = judge(entry, outcome, &report);
    if let Some(path) = &files.report {
        if let Err(e) = session::write_report(path, &report) {
            failures.push(format!("cannot write {}: {e}", path.display()));
        }
    }
    let times = EntryTimes::of(entry, &report);
    let sections: Vec<SectionResult> = report
        .sections
        .into_iter()
        .map(SectionResult::from)
        .collect();
    EntryResult {
        name: entry.name.clone(),
        elf: entry.elf.display().to_string(),
        target: entry.target.clone(),
        cores: entry.cores,
        passed: failures.is_empty(),
        failures,
        stop: report.stop.reason.to_owned(),
        exit_code: Some(exit_code(&outcome.stop)),
        expected_exit_code: entry.exit_code,
        cycles: report.totals.cycles,
        instructions: report.totals.instructions,
        simulated_seconds: times.seconds,
        clock_hz: times.clock_hz,
        host_seconds: report.totals.host_seconds,
        budgets: judge_budgets(entry, &sections),
        sections,
    }
}

/// The clock an entry's times are at, and its run's seconds there.
struct EntryTimes {
    clock_hz: Option<u64>,
    seconds: f64,
}

impl EntryTimes {
    /// At the manifest's `clock_hz`, if it gives one; else the run's own
    /// (the target's clock, following the run's clock changes: then no
    /// single clock applies to a section's cycles).
    fn of(entry: &Entry, report: &Report) -> EntryTimes {
        match entry.clock_hz {
            Some(hz) => EntryTimes {
                clock_hz: Some(hz),
                seconds: report.totals.cycles as f64 / hz as f64,
            },
            None => EntryTimes {
                clock_hz: report.clock_changes.is_empty().then_some(report.clock_hz),
                seconds: report.totals.simulated_seconds,
            },
        }
    }
}

/// The entry's budgets judged against its sections.
fn judge_budgets(entry: &Entry, sections: &[SectionResult]) -> Vec<super::budget::BudgetResult> {
    let traced: Vec<super::budget::Traced> = sections
        .iter()
        .map(|s| super::budget::Traced {
            path: &s.path,
            name: s.names.last().map(String::as_str),
            count: s.count,
            cycles: s.total_cycles,
            instructions: s.total_instructions,
        })
        .collect();
    super::budget::judge(&entry.budgets, &traced)
}

/// Why a finished run did not pass (empty when it did).
pub(super) fn judge(entry: &Entry, outcome: &RunOutcome, report: &Report) -> Vec<String> {
    let code = exit_code(&outcome.stop);
    let mut failures = Vec::new();
    if code != entry.exit_code {
        let how = match &outcome.stop {
            Stop::Exit(_) => String::new(),
            Stop::Fault(f) => format!(" (fault: {})", f.kind),
            _ => report
                .stop
                .message
                .as_ref()
                .map_or_else(String::new, |m| format!(" ({m})")),
        };
        failures.push(format!(
            "exit status {code}{how}, expected {}",
            entry.exit_code
        ));
    }
    if let Some(check) = outcome.output_check.as_ref().filter(|c| !c.matches) {
        failures.push(format!(
            "output differs from expected_output ({} bytes, expected {})",
            check.output_bytes, check.expected
        ));
    }
    if let Some(p) = &report.playback {
        if !p.exact {
            failures.push("playback did not play every sample exactly once".into());
        }
    }
    failures
}

pub(super) fn not_run_because(stop: &StopRequest) -> String {
    match stop.signal() {
        Some(s) => format!(
            "not run: the suite was interrupted by {}",
            crate::host::signals::name(s)
        ),
        None => "did not run".into(),
    }
}

/// Which entries to run and where their files go.
#[derive(Debug, Clone, Default)]
pub struct RunPlan {
    /// Positions in `Manifest::entries` (from 0), in manifest order.
    pub selected: Vec<usize>,
    pub shard: Option<ShardInfo>,
    /// Keep each entry's data.arp and report here (`--out DIR/entries`).
    pub keep_in: Option<PathBuf>,
}

impl RunPlan {
    /// Every entry, files in a scratch folder.
    pub fn whole(manifest: &Manifest) -> RunPlan {
        RunPlan {
            selected: (0..manifest.entries.len()).collect(),
            ..Default::default()
        }
    }

    /// The entries of `shard`, split by `costs` (see [`shard`]).
    pub fn shard(shard: Shard, costs: &[u64]) -> RunPlan {
        // a count beyond usize leaves every shard past the entries empty
        let (index, count) = (
            usize::try_from(shard.index).unwrap_or(usize::MAX),
            usize::try_from(shard.count).unwrap_or(usize::MAX),
        );
        let plan = shard::plan(costs, count);
        RunPlan {
            selected: (0..plan.len()).filter(|&i| plan[i] == index).collect(),
            shard: Some(ShardInfo {
                index,
                count,
                plan: shard::plan_hash(&plan, count),
            }),
            keep_in: None,
        }
    }
}

/// Runs every entry on `jobs` host threads (at least 1); `progress` is
/// called after each entry with (done, total, the entry's result).
/// A stop request ends the running entries at their next block boundary
/// and starts no more.
pub fn run(
    manifest: &Manifest,
    jobs: usize,
    stop: &StopRequest,
    progress: &(dyn Fn(usize, usize, &EntryResult) + Sync),
) -> SuiteReport {
    run_plan(manifest, &RunPlan::whole(manifest), jobs, stop, progress)
}

/// Like [`run`], for the entries `plan` selects.
pub fn run_plan(
    manifest: &Manifest,
    plan: &RunPlan,
    jobs: usize,
    stop: &StopRequest,
    progress: &(dyn Fn(usize, usize, &EntryResult) + Sync),
) -> SuiteReport {
    let started = Instant::now();
    // Entries' data.arp files live here until the suite ends (unless kept);
    // registered so that an exit on a second signal removes it too.
    let scratch_dir = tempfile::Builder::new().prefix("sim-host-suite-").tempdir();
    let scratch = scratch_dir
        .as_ref()
        .map_or_else(|_| std::env::temp_dir(), |d| d.path().to_path_buf());
    arpsim::output::register_temporary(&scratch);
    let files = |entry: &Entry| match (&plan.keep_in, &scratch_dir) {
        (Some(dir), _) => Ok(EntryFiles::kept(entry, dir)),
        (None, Ok(_)) => Ok(EntryFiles::scratch(entry, &scratch)),
        (None, Err(_)) => Err(format!("cannot create {}", scratch.display())),
    };
    let results = run_entries(manifest, plan, jobs, stop, progress, &files);
    arpsim::output::unregister_temporary(&scratch);
    drop(scratch_dir);
    let entries: Vec<EntryResult> = results
        .into_iter()
        .zip(&plan.selected)
        .map(|(r, &i)| r.unwrap_or_else(|| failed(&manifest.entries[i], not_run_because(stop))))
        .collect();
    let mut report = SuiteReport::new(manifest, plan.shard.clone(), entries);
    report.host.seconds = started.elapsed().as_secs_f64();
    report.interrupted_by = stop.signal().map(crate::host::signals::name);
    report
}

pub(super) type FilesOf<'a> = dyn Fn(&Entry) -> Result<EntryFiles, String> + Sync + 'a;

/// The selected entries' results (`None`: not started), on `jobs` threads.
pub(super) fn run_entries(
    manifest: &Manifest,
    plan: &RunPlan,
    jobs: usize,
    stop: &StopRequest,
    progress: &(dyn Fn(usize, usize, &EntryResult) + Sync),
    files: &FilesOf,
) -> Vec<Option<EntryResult>> {
    let total = plan.selected.len();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<EntryResult>>> = Mutex::new((0..total).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, total.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(entry) = plan.selected.get(i).and_then(|&p| manifest.entries.get(p))
                else {
                    break;
                };
                if stop.signal().is_some() {
                    break;
                }
                let result = match files(entry) {
                    Ok(f) => run_caught(entry, &f, stop),
                    Err(why) => failed(entry, why),
                };
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                progress(n, total, &result);
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(result);
                }
            });
        }
    });
    results.into_inner().unwrap_or_else(|p| p.into_inner())
}

/// Runs an entry; a panic fails only this entry.
pub(super) fn run_caught(entry: &Entry, files: &EntryFiles, stop: &StopRequest) -> EntryResult {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_entry_into(entry, files, stop)
    }))
    .unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        failed(entry, format!("sim-host panicked: {what}"))
    })
}

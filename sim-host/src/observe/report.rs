//! The end-of-run report: a table per section trace and the run's totals,
//! as text for people and as JSON for tools.
//!
//! The JSON document is versioned (`schema_version`); fields are only ever
//! added, so readers of an older version keep working. Schema (version 4):
//!
//! ```text
//! {
//!   "schema_version": 4,
//!   "elf": string, "target": string, "clock_hz": integer,
//!   "stop": { "reason": "exit"|"fault"|"cycle_limit"|"timeout"|"interrupted"|"arp_error"
//!                       |"internal_error"|"unsupported"|"system_reset"|"unpriced",
//!             "exit_status"?: integer, "message"?: string },
//!   "totals": { "instructions": integer, "cycles": integer, "cpi": number,
//!               "simulated_seconds": number, "host_seconds": number, "mips": number },
//!   "sections": [ { "path": [sid...], "functions": [name|null...],
//!                   "sources": [{"function", "file", "line"}...],
//!                   "names": [string...],
//!                   "kind": "plain"|"kernel"|"profiled",
//!                   "count": integer, "total_cycles": integer, "mean_cycles": number,
//!                   "min_cycles": integer, "max_cycles": integer, "total_instructions": integer,
//!                   "own_cycles": integer, "self_cycles": integer, "share": number,
//!                   "inclusive_share": number,
//!                   "others"?: [ { "context": string, "cycles": integer } ],
//!                   "memory"?: { "fetch_stall": integer, "data_stall": integer,
//!                                "fetch_hits": integer, "fetch_misses": integer,
//!                                "data_hits": integer, "data_misses": integer } } ],
//!   "arp_file": null | { "path": string, "records": integer, "partial": bool },
//!   "warnings": [string],
//!   "unpriced"?: [ { "mnemonic": string, "class": string, "executions": integer } ],
//!   "threads_created": integer,
//!   "cores": [ { "busy_cycles": integer, "waiting_cycles": integer, "threads": [integer],
//!                "threads_run": integer } ],
//!   "playback": null | { "recorded": integer, "played_once": integer, "missing": integer,
//!                        "duplicated": integer, "unexpected": integer, "exact": bool,
//!                        "findings": [string] },
//!   "prediction": null | { "parallel_cycles": integer, "sequential_cycles": integer|null,
//!                          "parallel_section_cycles": integer|null, "speedup": number|null,
//!                          "measured_cycles": integer|null, "difference_percent": number|null },
//!   "peripherals"?: [ { "name": string, "reads": integer, "writes": integer,
//!                       "reads_without_reset_value": integer } ],
//!   "flash"?: { "region": string, "control": integer, "required_wait_states": integer,
//!               "fetch_stall": integer, "data_stall": integer, "icache_hits": integer,
//!               "icache_misses": integer, "prefetched": integer, "dcache_hits": integer,
//!               "dcache_misses": integer, "blocks_below_required_latency": integer },
//!   "l1cache"?: { "ccr_ic": bool, "ccr_dc": bool, "fetch_stall": integer,
//!                 "data_stall": integer, "icache_hits": integer, "icache_misses": integer,
//!                 "uncached_fetches": integer, "dcache_hits": integer,
//!                 "dcache_misses": integer, "uncached_reads": integer, "write_backs": integer },
//!   "core_events"?: { "exceptions_taken": integer, "tail_chains": integer,
//!                     "lazy_fp_preservations": integer, "sleeps": integer,
//!                     "sleep_cycles": integer },
//!   "tasks"?: [ { "name": string, "kind": "main"|"task"|"handler"|"others",
//!                 "cycles": integer, "share": number, "switches": integer } ],
//!   "clock_changes"?: [ { "cycle": integer, "seconds": number, "pc": integer, "at": string,
//!                         "from_hz": integer, "to_hz": integer, "source": string } ],
//!   "uarts"?: [string]
//! }
//! ```
//!
//! Version 4 (issue 39) added who ran on the core: `tasks` (main, each
//! exception handler, each RTOS task: their cycles sum to the run's),
//! per section `own_cycles` (the cycles of the task that entered it while
//! it was open), `self_cycles` (own cycles less those of the sections
//! nested in it) and `others` (who else ran meanwhile); `share` is now
//! `self_cycles` over the run's cycles, so no cycle is in two rows and
//! the shares never sum past 1 (it was `total_cycles` over the run's,
//! which counted nested sections and every task that ran meanwhile
//! again), and `inclusive_share` is `own_cycles` over the run's (a
//! section with the sections nested in it, without the other tasks). The
//! text table shows both, as "incl." and "self". `core_events` counts exceptions, lazy FP preservations and
//! WFI/WFE sleeps.
//!
//! Version 2 added `sections[].names`: each section's name, as
//! `observe::section_names` gives it (its `ato_kernel*` / `ato_profile*`
//! label, else `function (file:line)` of its enter call).
//!
//! `sections[].memory` (added in version 3, present only on a target with
//! a memory-system model such as `stm32f407`'s flash accelerator) is what
//! the memory system did between each sample's enter and leave, summed
//! (`model::memory_counters`; issue 27).
//!
//! Version 3 lists at most the first 64 threads of a core in
//! `cores[].threads` (in order of first run) and counts them all in
//! `cores[].threads_run`: the whole list grew with every thread a run ever
//! made (issue 30, N24). A reader of version 2 sees the same list for up
//! to 64 threads per core.

use crate::engine::{PeripheralAccesses, RunOutcome, Stop};
use crate::host::arp_host::TraceStats;
use crate::host::threads::Core;
use crate::image::elf::GuestImage;
use serde::Serialize;
use std::fmt::Write as _;

pub const SCHEMA_VERSION: u32 = 4;

#[derive(Debug, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub elf: String,
    pub target: String,
    pub clock_hz: u64,
    pub stop: StopJson,
    pub totals: Totals,
    pub sections: Vec<SectionRow>,
    pub arp_file: Option<ArpFileJson>,
    pub warnings: Vec<String>,
    /// With `--allow-unpriced`: executions of instructions the cycle table
    /// does not price, by mnemonic (absent when there were none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpriced: Vec<crate::engine::UnpricedCount>,
    pub threads_created: usize,
    pub cores: Vec<Core>,
    pub playback: Option<PlaybackJson>,
    pub prediction: Option<Prediction>,
    /// The peripheral accesses `--peripherals ignore` answered (absent
    /// when there were none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub peripherals: Vec<PeripheralAccesses>,
    /// The flash accelerator's counts (absent on targets without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flash: Option<crate::engine::FlashReport>,
    /// The Cortex-M7 L1 caches' counts (absent on targets without them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l1cache: Option<crate::engine::L1CacheReport>,
    /// The XIP cache's counts (absent on targets without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xip: Option<crate::engine::XipReport>,
    /// Exceptions taken, lazy FP preservations, sleeps (absent when none).
    #[serde(skip_serializing_if = "crate::engine::CoreEvents::is_empty")]
    pub core_events: crate::engine::CoreEvents,
    /// Who ran on the core: main, each handler and RTOS task (absent when
    /// only main ran); their cycles sum to the run's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<TaskRow>,
    /// Each change of the core clock a clock tree made (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clock_changes: Vec<ClockChangeJson>,
    /// What each UART did (absent on boards without one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uarts: Vec<String>,
}

/// One change of the core clock.
#[derive(Debug, Serialize)]
pub struct ClockChangeJson {
    pub cycle: u64,
    /// Simulated seconds when it happened.
    pub seconds: f64,
    pub pc: u64,
    /// The function and source line of the instruction that made it.
    pub at: String,
    pub from_hz: u64,
    pub to_hz: u64,
    pub source: String,
}

fn clock_changes(outcome: &RunOutcome) -> Vec<ClockChangeJson> {
    let changes = outcome.clock.changes();
    let places = crate::image::symbols::locate_all(
        &outcome.image,
        &changes.iter().map(|c| c.pc).collect::<Vec<_>>(),
    );
    let at = |pc: u64| {
        let line = places.get(&pc).and_then(|l| l.file_line());
        let place = outcome.image.describe(pc);
        line.map_or_else(|| place.clone(), |l| format!("{place} {l}"))
    };
    changes
        .iter()
        .map(|c| ClockChangeJson {
            cycle: c.cycle,
            seconds: outcome.clock.seconds_at(c.cycle),
            pc: c.pc,
            at: at(c.pc),
            from_hz: c.from_hz,
            to_hz: c.to_hz,
            source: c.source.clone(),
        })
        .collect()
}

fn clock_changes_text(changes: &[ClockChangeJson]) -> String {
    use crate::model::clocks::format_hz;
    let mut out = String::new();
    if changes.is_empty() {
        return out;
    }
    let _ = writeln!(out, "core clock changes:");
    for c in changes {
        let _ = writeln!(
            out,
            "  cycle {} ({:.6} s) at {}: {} -> {}, {}",
            c.cycle,
            c.seconds,
            c.at,
            format_hz(c.from_hz),
            format_hz(c.to_hz),
            c.source
        );
    }
    out
}

#[derive(Debug, Serialize)]
pub struct PlaybackJson {
    pub recorded: u64,
    pub played_once: u64,
    pub missing: u64,
    pub duplicated: u64,
    pub unexpected: u64,
    pub exact: bool,
    pub findings: Vec<String>,
}

/// The parallel-time prediction of a playback run.
#[derive(Debug, Serialize)]
pub struct Prediction {
    /// The latest core clock at exit.
    pub parallel_cycles: u64,
    /// The recording's total: the samples of its outermost measured sections.
    pub sequential_cycles: Option<u64>,
    /// The same sections' total in this (parallel) run.
    pub parallel_section_cycles: Option<u64>,
    /// sequential_cycles / parallel_section_cycles.
    pub speedup: Option<f64>,
    /// The same program's time measured (recorded) on the same cores, from `--compare`.
    pub measured_cycles: Option<u64>,
    pub difference_percent: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct StopJson {
    pub reason: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Totals {
    pub instructions: u64,
    pub cycles: u64,
    pub cpi: f64,
    pub simulated_seconds: f64,
    pub host_seconds: f64,
    pub mips: f64,
}

#[derive(Debug, Serialize)]
pub struct SectionRow {
    pub path: Vec<u16>,
    pub functions: Vec<Option<String>>,
    /// Where each section's enter call is: function (demangled, the
    /// innermost inlined one), source file and line.
    pub sources: Vec<crate::image::symbols::SourceLocation>,
    /// Each section's name (`observe::section_names`): its label, else
    /// where it is entered.
    pub names: Vec<String>,
    pub kind: &'static str,
    pub count: u64,
    pub total_cycles: u64,
    pub mean_cycles: f64,
    pub min_cycles: u64,
    pub max_cycles: u64,
    pub total_instructions: u64,
    /// The cycles of the task (or handler) that entered each sample while
    /// it was open: `total_cycles` less what other tasks and handlers ran
    /// meanwhile (the same when nothing else ran).
    pub own_cycles: u64,
    /// `own_cycles` less those of the sections nested in it.
    pub self_cycles: u64,
    /// `self_cycles` as a fraction of the program's cycles: no cycle is in
    /// two rows' shares, so they never sum past 1.
    pub share: f64,
    /// `own_cycles` as a fraction of the program's cycles: with the
    /// sections nested in it (a row and its children overlap), without
    /// what other tasks ran.
    pub inclusive_share: f64,
    /// Who else ran while it was open (tasks, handlers), costliest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<OtherRun>,
    /// The memory system's stalls, hits and misses in the section's
    /// samples, on a target with a memory-system model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::model::memory_counters::MemoryCounters>,
}

/// A context that ran while a section was open.
#[derive(Debug, Clone, Serialize)]
pub struct OtherRun {
    pub context: String,
    pub cycles: u64,
}

/// One context of the run (`host::tasks`): main, a handler or a task.
#[derive(Debug, Clone, Serialize)]
pub struct TaskRow {
    pub name: String,
    pub kind: crate::host::tasks::ContextKind,
    pub cycles: u64,
    pub share: f64,
    pub switches: u64,
}

#[derive(Debug, Serialize)]
pub struct ArpFileJson {
    pub path: String,
    pub records: u64,
    pub partial: bool,
}

impl Report {
    pub fn new(outcome: &RunOutcome, elf: &str, target: &str, clock_hz: u64) -> Report {
        let (reason, exit_status, message) = match &outcome.stop {
            Stop::Exit(s) => ("exit", Some(*s), None),
            Stop::Fault(f) => ("fault", None, Some(f.to_string())),
            Stop::CycleLimit(n) => (
                "cycle_limit",
                None,
                Some(format!("stopped after {n} cycles")),
            ),
            Stop::Timeout(t) => (
                "timeout",
                None,
                Some(format!("stopped after {:.1} s", t.as_secs_f64())),
            ),
            Stop::Interrupted(signal) => (
                "interrupted",
                None,
                Some(crate::host::signals::stop_cause(*signal)),
            ),
            Stop::Arp(m) => ("arp_error", None, Some(m.clone())),
            Stop::Internal(m) => ("internal_error", None, Some(m.clone())),
            Stop::Unsupported(f) => ("unsupported", None, Some(f.to_string())),
            Stop::SystemReset => (
                "system_reset",
                None,
                Some("the guest asked for a system reset (AIRCR.SYSRESETREQ)".to_owned()),
            ),
            Stop::Unpriced(u) => ("unpriced", None, Some(u.to_string())),
        };
        let host_seconds = outcome.host_time.as_secs_f64();
        let cycles = outcome.cycles;
        let (sections, naming) =
            named_section_rows(&outcome.sections, &outcome.image, cycles, &outcome.tasks);
        Report {
            schema_version: SCHEMA_VERSION,
            elf: elf.to_owned(),
            target: target.to_owned(),
            clock_hz,
            stop: StopJson {
                reason,
                exit_status,
                message,
            },
            totals: Totals {
                instructions: outcome.instructions,
                cycles,
                cpi: cycles as f64 / outcome.instructions.max(1) as f64,
                simulated_seconds: outcome.clock.seconds_at(cycles),
                host_seconds,
                mips: outcome.instructions as f64 / host_seconds.max(1e-9) / 1e6,
            },
            sections,
            arp_file: outcome
                .arp_file
                .as_ref()
                .map(|(p, records, partial)| ArpFileJson {
                    path: p.display().to_string(),
                    records: *records,
                    partial: *partial,
                }),
            warnings: outcome.warnings.iter().cloned().chain(naming).collect(),
            unpriced: outcome.unpriced.clone(),
            threads_created: outcome.threads_created,
            peripherals: outcome.peripheral_accesses.clone(),
            flash: outcome.flash.clone(),
            l1cache: outcome.l1cache.clone(),
            xip: outcome.xip.clone(),
            core_events: outcome.core_events,
            tasks: task_rows(&outcome.tasks, cycles),
            cores: outcome.cores.clone(),
            playback: outcome.playback.as_ref().map(|p| PlaybackJson {
                recorded: p.recorded,
                played_once: p.played_once,
                missing: p.missing_total,
                duplicated: p.duplicated_total,
                unexpected: p.unexpected_total,
                exact: p.is_exact(),
                findings: playback_findings(p),
            }),
            prediction: None,
            clock_changes: clock_changes(outcome),
            uarts: outcome.uarts.clone(),
        }
    }

    /// The section table whose self column sums to 100 % of the cycles
    /// the cores ran (`observe::shares`), or the plain one when the
    /// sections' self cycles exceed them.
    fn shares_table(&self) -> String {
        let busy: u64 = self.cores.iter().map(|c| c.busy_cycles).sum();
        let base = if busy > 0 { busy } else { self.totals.cycles };
        let cores = self.cores.iter().filter(|c| c.busy_cycles > 0).count();
        let plain = sections_table(&self.sections);
        let own: Vec<u64> = self.sections.iter().map(|r| r.self_cycles).collect();
        crate::observe::shares::table(&plain, &own, base, cores).unwrap_or(plain)
    }

    /// The report as a table for a terminal.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        if !self.sections.is_empty() {
            out.push_str(&self.shares_table());
            out.push_str(&others_text(&self.sections));
            out.push('\n');
            let memory = memory_table(&self.sections);
            if !memory.is_empty() {
                out.push_str(&memory);
                out.push('\n');
            }
        }
        let t = &self.totals;
        let clock = match self.clock_changes.len() {
            0 => format!("at {} MHz", self.clock_hz as f64 / 1e6),
            n => format!(
                "from {} MHz at the start through {n} clock change(s)",
                self.clock_hz as f64 / 1e6
            ),
        };
        let _ = writeln!(
            out,
            "{} instructions, {} cycles, CPI {:.3}, {:.6} s {clock}",
            t.instructions, t.cycles, t.cpi, t.simulated_seconds,
        );
        let _ = writeln!(out, "host time {:.3} s, {:.1} MIPS", t.host_seconds, t.mips);
        if let Some(f) = &self.arp_file {
            let _ = writeln!(
                out,
                "{} records written to {}{}",
                f.records,
                f.path,
                if f.partial { " (partial)" } else { "" }
            );
        }
        if self.threads_created > 0 || self.cores.len() > 1 {
            let _ = writeln!(
                out,
                "{} thread(s) created on {} core(s); parallel time {} cycles",
                self.threads_created,
                self.cores.len(),
                self.totals.cycles
            );
            for (i, c) in self.cores.iter().enumerate() {
                let more = c.threads_run.saturating_sub(c.threads.len() as u64);
                let _ = writeln!(
                    out,
                    "  core {i}: busy {:>12} cycles, waiting {:>12} cycles, threads {:?}{}",
                    c.busy_cycles,
                    c.waiting_cycles,
                    c.threads,
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                );
            }
        }
        out.push_str(&self.playback_text());
        if let Some(p) = &self.prediction {
            let _ = write!(out, "predicted parallel time {} cycles", p.parallel_cycles);
            if p.parallel_section_cycles == Some(0) {
                out.push_str("\n  no recorded section was played: no speedup to report");
            } else if let (Some(seq), Some(par), Some(speedup)) =
                (p.sequential_cycles, p.parallel_section_cycles, p.speedup)
            {
                let _ = write!(
                    out,
                    "\n  the recorded sections: {seq} cycles sequential, {par} predicted in parallel: speedup {speedup:.2}"
                );
            }
            out.push('\n');
            if let (Some(m), Some(d)) = (p.measured_cycles, p.difference_percent) {
                let _ = writeln!(
                    out,
                    "measured on the same cores (recorded run): {m} cycles; prediction differs by {d:+.2}%"
                );
            }
        }
        out.push_str(&clock_changes_text(&self.clock_changes));
        for u in &self.uarts {
            let _ = writeln!(out, "uart {u}");
        }
        out.push_str(&self.peripherals_text());
        out.push_str(&self.flash_text());
        out.push_str(&self.l1cache.as_ref().map_or_else(String::new, l1cache_text));
        out.push_str(&self.xip.as_ref().map_or_else(String::new, xip_text));
        out.push_str(&core_events_text(&self.core_events));
        if !self.tasks.is_empty() {
            out.push_str(&tasks_table(&self.tasks));
        }
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        out
    }

    fn flash_text(&self) -> String {
        self.flash.as_ref().map_or_else(String::new, flash_text)
    }

    /// The accesses `--peripherals ignore` answered, per peripheral.
    fn peripherals_text(&self) -> String {
        let mut out = String::new();
        if self.peripherals.is_empty() {
            return out;
        }
        out.push_str(
            "peripheral accesses (--peripherals ignore: a read returns the SVD's reset value, \
             0 where none is known; writes are dropped):\n",
        );
        for p in &self.peripherals {
            let _ = writeln!(
                out,
                "  {:<24} {:>10} reads {:>10} writes {:>10} without a reset value",
                p.name, p.reads, p.writes, p.reads_without_reset_value
            );
        }
        out
    }

    /// The playback verification verdict and its findings (empty when the
    /// run was not a playback).
    pub fn playback_text(&self) -> String {
        let mut out = String::new();
        if let Some(p) = &self.playback {
            let _ = writeln!(
                out,
                "playback: {} of {} recorded samples played exactly once; {} missing, {} duplicated, {} unexpected: {}",
                p.played_once,
                p.recorded,
                p.missing,
                p.duplicated,
                p.unexpected,
                if p.exact { "VERIFIED" } else { "FAILED" }
            );
            if p.played_once == 0 && p.recorded > 0 {
                out.push_str("  no recorded section was played\n");
            }
            for f in &p.findings {
                let _ = writeln!(out, "  {f}");
            }
        }
        out
    }

    /// Adds the prediction of a playback run: the recording's outermost
    /// measured sections (`recorded`: their paths and total), the same
    /// sections' time in this run, and, from another report, the measured
    /// parallel time.
    pub fn predict(
        &mut self,
        recorded: Option<(Vec<Vec<u16>>, u64)>,
        measured_cycles: Option<u64>,
    ) {
        let parallel = self.totals.cycles;
        let (sequential_cycles, parallel_section_cycles) = match recorded {
            None => (None, None),
            Some((paths, total)) => {
                let here: u64 = self
                    .sections
                    .iter()
                    .filter(|s| paths.contains(&s.path))
                    .map(|s| s.total_cycles)
                    .sum();
                (Some(total), Some(here))
            }
        };
        self.prediction = Some(Prediction {
            parallel_cycles: parallel,
            sequential_cycles,
            parallel_section_cycles,
            // Nothing played: there is no parallel time to compare with.
            speedup: sequential_cycles
                .zip(parallel_section_cycles.filter(|p| *p > 0))
                .map(|(s, p)| s as f64 / p as f64),
            measured_cycles,
            difference_percent: measured_cycles
                .map(|m| (parallel as f64 - m as f64) / m.max(1) as f64 * 100.0),
        });
    }
}

/// The report's rows for `traces`, located in `image`'s source; `cycles`
/// is the program's total, for each row's share; `contexts` name who else
/// ran (`RunOutcome::tasks`).
pub fn section_rows(
    traces: &[TraceStats],
    image: &GuestImage,
    cycles: u64,
    contexts: &[crate::host::tasks::ContextStats],
) -> Vec<SectionRow> {
    named_section_rows(traces, image, cycles, contexts).0
}

/// [`section_rows`], and the warnings of naming them
/// (`section_names::Naming::warnings`).
pub fn named_section_rows(
    traces: &[TraceStats],
    image: &GuestImage,
    cycles: u64,
    contexts: &[crate::host::tasks::ContextStats],
) -> (Vec<SectionRow>, Vec<String>) {
    use crate::observe::section_names::{at_sites, Site};
    let sites_of = |t: &TraceStats| -> Vec<Site> {
        t.sites
            .iter()
            .zip(&t.path)
            .map(|(&addr, &sid)| Site {
                addr,
                sid: Some(sid),
            })
            .collect()
    };
    let sites: Vec<Site> = traces.iter().flat_map(sites_of).collect();
    let named = at_sites(image, &sites);
    let rows = traces
        .iter()
        .map(|t| SectionRow {
            path: t.path.clone(),
            functions: t.functions.clone(),
            sources: sites_of(t)
                .into_iter()
                .filter_map(|s| Some(named.get(s)?.location))
                .collect(),
            names: sites_of(t)
                .into_iter()
                .map(|s| {
                    named.get(s).map_or_else(
                        || format!("section {}", s.sid.unwrap_or_default()),
                        |n| n.text(),
                    )
                })
                .collect(),
            kind: t.kind,
            count: t.count,
            total_cycles: t.total_cycles,
            mean_cycles: t.total_cycles as f64 / t.count.max(1) as f64,
            min_cycles: if t.count == 0 { 0 } else { t.min_cycles },
            max_cycles: t.max_cycles,
            total_instructions: t.total_instructions,
            own_cycles: t.own_cycles,
            self_cycles: t.self_cycles,
            share: t.self_cycles as f64 / cycles.max(1) as f64,
            inclusive_share: t.own_cycles as f64 / cycles.max(1) as f64,
            others: t
                .others
                .iter()
                .map(|(id, ran)| OtherRun {
                    context: contexts
                        .get(usize::from(*id))
                        .map_or_else(|| format!("context {id}"), |c| c.name.clone()),
                    cycles: *ran,
                })
                .collect(),
            memory: t.memory,
        })
        .collect();
    (rows, named.warnings)
}

/// The run's contexts as rows: each one's cycles and share of the run.
pub fn task_rows(contexts: &[crate::host::tasks::ContextStats], cycles: u64) -> Vec<TaskRow> {
    contexts
        .iter()
        .map(|c| TaskRow {
            name: c.name.clone(),
            kind: c.kind,
            cycles: c.cycles,
            share: c.cycles as f64 / cycles.max(1) as f64,
            switches: c.switches,
        })
        .collect()
}

/// The contexts table: who ran, how long, how often switched to.
fn tasks_table(rows: &[TaskRow]) -> String {
    let mut out = String::new();
    let width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0).max(7);
    let _ = writeln!(
        out,
        "{:<width$}  {:<8} {:>14} {:>7} {:>9}",
        "context", "kind", "cycles", "share", "switches"
    );
    for r in rows {
        let kind = match r.kind {
            crate::host::tasks::ContextKind::Main => "main",
            crate::host::tasks::ContextKind::Task => "task",
            crate::host::tasks::ContextKind::Handler => "handler",
            crate::host::tasks::ContextKind::Others => "tasks",
        };
        let _ = writeln!(
            out,
            "{:<width$}  {:<8} {:>14} {:>6.2}% {:>9}",
            r.name,
            kind,
            r.cycles,
            r.share * 100.0,
            r.switches
        );
    }
    out
}

/// For each section others ran in: its own task's cycles and who else ran
/// (after a blank line: the table's rows end there).
fn others_text(rows: &[SectionRow]) -> String {
    let mut out = String::new();
    if rows.iter().any(|r| !r.others.is_empty()) {
        out.push_str("\nwhile a section was open, others ran:\n");
    }
    for row in rows.iter().filter(|r| !r.others.is_empty()) {
        let others: Vec<String> = row
            .others
            .iter()
            .take(4)
            .map(|o| format!("{} {}", o.context, o.cycles))
            .collect();
        let more = row.others.len().saturating_sub(4);
        let _ = writeln!(
            out,
            "  {}: own task {} of {} cycles; also ran: {}{}",
            section_label(row),
            row.own_cycles,
            row.total_cycles,
            others.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    out
}

/// The memory system's share of each section, as the report prints it
/// (empty on a target without a memory-system model).
pub fn memory_table(rows: &[SectionRow]) -> String {
    let mut out = String::new();
    let with: Vec<(String, crate::model::memory_counters::MemoryCounters)> = rows
        .iter()
        .filter_map(|r| Some((section_label(r), r.memory?)))
        .collect();
    if with.is_empty() {
        return out;
    }
    let width = with.iter().map(|(l, _)| l.len()).max().unwrap_or(0).max(12);
    let _ = writeln!(
        out,
        "{:<width$}  {:>12} {:>12} {:>10} {:>10} {:>10} {:>10}",
        "memory system", "fetch stall", "data stall", "I hits", "I misses", "D hits", "D misses"
    );
    for (label, m) in &with {
        let _ = writeln!(
            out,
            "{:<width$}  {:>12} {:>12} {:>10} {:>10} {:>10} {:>10}",
            label,
            m.fetch_stall,
            m.data_stall,
            m.fetch_hits,
            m.fetch_misses,
            m.data_hits,
            m.data_misses
        );
    }
    out
}

/// The section table as the report prints it.
pub fn sections_table(rows: &[SectionRow]) -> String {
    let mut out = String::new();
    let paths: Vec<String> = rows.iter().map(section_label).collect();
    let width = paths.iter().map(String::len).max().unwrap_or(0).max(12);
    let _ = writeln!(
        out,
        "{:<width$}  {:<8} {:>8} {:>14} {:>12} {:>10} {:>10} {:>7} {:>7}",
        "section trace", "kind", "count", "total cycles", "mean", "min", "max", "incl.", "self"
    );
    for (row, path) in rows.iter().zip(&paths) {
        let _ = writeln!(
            out,
            "{:<width$}  {:<8} {:>8} {:>14} {:>12.1} {:>10} {:>10} {:>6.2}% {:>6.2}%",
            path,
            row.kind,
            row.count,
            row.total_cycles,
            row.mean_cycles,
            row.min_cycles,
            row.max_cycles,
            row.inclusive_share * 100.0,
            row.share * 100.0
        );
    }
    out
}

/// A trace as the table shows it: the section ids, outermost first, then
/// the innermost section's name (`8 > 7 > 1 ato_kernel_filter_line_hor`,
/// `8 main (filter.c:128)`).
fn section_label(s: &SectionRow) -> String {
    let chain: Vec<String> = s.path.iter().map(u16::to_string).collect();
    let last = s.path.len().saturating_sub(1);
    let place = match (s.names.get(last), s.functions.get(last)) {
        (Some(name), _) => name.clone(),
        (None, Some(Some(f))) => f.clone(),
        _ => String::new(),
    };
    format!("{} {place}", chain.join(" > "))
        .trim_end()
        .to_owned()
}

/// The grouped findings, and a note where the report lists only the first
/// tuples of a kind (its memory is bounded; the counts are exact).
fn playback_findings(p: &arpsim::playback::PlaybackReport) -> Vec<String> {
    let mut findings = crate::observe::verify::summarize(p);
    for (kind, listed, total) in [
        ("missing", p.missing.len(), p.missing_total),
        ("duplicated", p.duplicated.len(), p.duplicated_total),
        ("unexpected", p.unexpected.len(), p.unexpected_total),
    ] {
        if (listed as u64) < total {
            findings.push(format!(
                "(the findings above cover the first {listed} of {total} {kind} tuples)"
            ));
        }
    }
    findings
}

/// The outermost measured sections of a recording (traces no other
/// recorded trace encloses, so nested profiled and kernel sections are not
/// counted twice): their paths and the total of their samples.
pub fn recorded_total(stats: &[arpsim::tools::TraceStats]) -> (Vec<Vec<u16>>, u64) {
    let paths: Vec<Vec<u16>> = stats.iter().map(|t| t.path.clone()).collect();
    let outermost: Vec<&arpsim::tools::TraceStats> = stats
        .iter()
        .filter(|t| {
            !paths
                .iter()
                .any(|p| p.len() < t.path.len() && t.path.starts_with(p))
        })
        .collect();
    let total = outermost
        .iter()
        .filter_map(|t| t.sets.first())
        .map(|s| s.total as u64)
        .sum();
    (outermost.iter().map(|t| t.path.clone()).collect(), total)
}

/// The L1 caches' stalls, hits, misses and write-backs (the report's,
/// and GDB's `monitor cache`).
pub fn l1cache_text(c: &crate::engine::L1CacheReport) -> String {
    let s = &c.stats;
    let on = |b: bool| if b { "on" } else { "off" };
    format!(
        "L1 caches (I-cache {}, D-cache {} at the end): fetch stalls {} cycles, data stalls {} cycles\n  \
         instruction lines: {} cache hits, {} misses, {} uncached fetches; data: {} cache hits, \
         {} misses, {} uncached reads, {} dirty lines written back\n",
        on(c.ccr_ic),
        on(c.ccr_dc),
        s.fetch_stall,
        s.data_stall,
        s.icache_hits,
        s.icache_misses,
        s.uncached_fetches,
        s.dcache_hits,
        s.dcache_misses,
        s.uncached_reads,
        s.write_backs
    )
}

/// The flash accelerator's stalls, hits and misses (the report's, and
/// GDB's `monitor cache`).
pub fn flash_text(f: &crate::engine::FlashReport) -> String {
    let mut out = String::new();
    let s = &f.stats;
    let _ = writeln!(
        out,
        "flash `{}` (FLASH_ACR {:#06x} last written): fetch stalls {} cycles, data stalls {} cycles",
        f.region, f.control, s.fetch_stall, s.data_stall
    );
    let _ = writeln!(
        out,
        "  instruction lines: {} cache hits, {} prefetched, {} read on a miss; data lines: {} cache hits, {} read",
        s.icache_hits, s.prefetched, s.icache_misses, s.dcache_hits, s.dcache_misses
    );
    if s.blocks_below_required_latency > 0 {
        let _ = writeln!(
            out,
            "warning: {} blocks ran from the flash with FLASH_ACR.LATENCY below the wait states \
             the clock in force required ({} at the end of the run): the silicon would misread \
             them; the counts charge the LATENCY set",
            s.blocks_below_required_latency, f.required_wait_states
        );
    }
    out
}

/// The XIP cache's stalls, hits and misses (the report's, and GDB's
/// `monitor cache`).
/// Exceptions, lazy FP preservations and sleeps, when there were any.
fn core_events_text(e: &crate::engine::CoreEvents) -> String {
    let mut out = String::new();
    if e.exceptions_taken > 0 {
        let _ = write!(
            out,
            "exceptions: {} taken ({} tail-chained)",
            e.exceptions_taken, e.tail_chains
        );
        if e.lazy_fp_preservations > 0 {
            let _ = write!(out, ", {} lazy FP preservations", e.lazy_fp_preservations);
        }
        out.push('\n');
    }
    if e.sleeps > 0 {
        let _ = writeln!(
            out,
            "asleep (WFI/WFE): {} cycles in {} sleeps, counted in the cycles above",
            e.sleep_cycles, e.sleeps
        );
    }
    out
}

pub fn xip_text(x: &crate::engine::XipReport) -> String {
    let s = &x.stats;
    format!(
        "XIP cache of `{}` (XIP_CTRL {:#x} last written, a line read {} cycles): \
         fetch stalls {} cycles, data stalls {} cycles\n  \
         instruction lines: {} cache hits, {} read from the flash; \
         data reads: {} cache hits, {} read from the flash; {} flushes\n",
        x.region,
        x.control,
        x.miss_cycles,
        s.fetch_stall,
        s.data_stall,
        s.fetch_hits,
        s.fetch_misses,
        s.data_hits,
        s.data_misses,
        s.flushes
    ) + &maintenance_text(s.maintenance)
}

/// The RP2350's maintenance writes, when the run made any.
fn maintenance_text(n: u64) -> String {
    if n == 0 {
        String::new()
    } else {
        format!("  cache maintenance writes: {n}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::memory_counters::MemoryCounters;

    fn row(sid: u16, memory: Option<MemoryCounters>) -> SectionRow {
        SectionRow {
            path: vec![sid],
            functions: vec![None],
            sources: Vec::new(),
            names: vec![format!("kernel{sid}")],
            kind: "kernel",
            count: 1,
            total_cycles: 10,
            mean_cycles: 10.0,
            min_cycles: 10,
            max_cycles: 10,
            total_instructions: 5,
            own_cycles: 10,
            self_cycles: 10,
            share: 1.0,
            inclusive_share: 1.0,
            others: Vec::new(),
            memory,
        }
    }

    /// issue 45: the printed self column, with the rest outside any
    /// section, sums to 100.00 % exactly (thirds of the run: plain
    /// rounding printed 33.33 three times, 99.99 %); and without room for
    /// a rest (self cycles past the base) the plain table is kept.
    #[test]
    fn the_self_column_sums_to_100_percent_with_the_rest() {
        let mut rows = vec![row(1, None), row(2, None)];
        rows[0].self_cycles = 1;
        rows[1].self_cycles = 1;
        let plain = sections_table(&rows);
        let text = crate::observe::shares::table(&plain, &[1, 1], 3, 1).unwrap();
        let percents: Vec<f64> = text
            .lines()
            .skip(1)
            .filter_map(|l| l.strip_suffix('%')?.rsplit(' ').next()?.parse().ok())
            .collect();
        assert_eq!(percents, [33.34, 33.33, 33.33], "{text}");
        assert!(text.contains("(outside any section)"), "{text}");
        assert!(text.contains("as a share of the run's 3 cycles"), "{text}");
        assert_eq!(crate::observe::shares::table(&plain, &[1, 1], 1, 1), None);
    }

    #[test]
    fn the_memory_table_lists_each_section_with_a_model_and_is_absent_without() {
        assert_eq!(memory_table(&[row(1, None)]), "");
        let m = MemoryCounters {
            fetch_stall: 25,
            data_stall: 20,
            fetch_hits: 3,
            fetch_misses: 5,
            data_hits: 7,
            data_misses: 4,
        };
        let table = memory_table(&[row(1, None), row(2, Some(m))]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 2, "{table}");
        let numbers: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(numbers, ["2", "kernel2", "25", "20", "3", "5", "7", "4"]);
        let json = serde_json::to_value(row(2, Some(m))).unwrap();
        assert_eq!(json["memory"]["data_misses"], 4);
        assert!(serde_json::to_value(row(1, None))
            .unwrap()
            .get("memory")
            .is_none());
    }
}

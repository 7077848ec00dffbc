//! `sim-host run`: run a guest ELF, print its output, report its costs.
//!
//! Exit status: the guest's own exit status when it exits; otherwise
//! 120 guest fault, 121 fatal ARP error, 122 `--max-cycles` reached,
//! 123 `--timeout` reached, 124 verification failed (playback did not play
//! every recorded sample exactly once, or the output differs from
//! `--expect-output`), 130 interrupted (Ctrl-C), 125 the run could not
//! start (bad ELF, target or option; the message says which).

use anyhow::{bail, Context, Result};
use arpsim::types::{FileFormat, Mode};
use sim_host::arp_host::{ArpOptions, Measure};
use sim_host::callgrind::CallgrindCollector;
use sim_host::elf::GuestImage;
use sim_host::machine::{self, Observer, RunOptions, Stop};
use sim_host::report::Report;
use sim_host::target::{self, Target};
use sim_host::trace_events;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub const EXIT_FAULT: i32 = 120;
pub const EXIT_ARP_ERROR: i32 = 121;
pub const EXIT_CYCLE_LIMIT: i32 = 122;
pub const EXIT_TIMEOUT: i32 = 123;
pub const EXIT_VERIFICATION: i32 = 124;
pub const EXIT_SETUP: i32 = 125;
pub const EXIT_INTERRUPTED: i32 = 130;

#[derive(clap::Args)]
pub struct Args {
    /// The guest ELF (built for the target, with -DARP_SIM to record). As
    /// a cargo runner (`sim-host run [OPTIONS] -- ELF ARGS...`) it may come
    /// first after `--` instead.
    pub elf: Option<PathBuf>,
    /// Built-in target (see `sim-host targets`).
    #[arg(long, default_value = "cortex-m4", conflicts_with = "target_file")]
    pub target: String,
    /// A target description file instead of a built-in target.
    #[arg(long)]
    pub target_file: Option<PathBuf>,
    /// Stop after this many cycles (a partial data.arp is written).
    #[arg(long)]
    pub max_cycles: Option<u64>,
    /// Stop after this many seconds of host time.
    #[arg(long)]
    pub timeout: Option<f64>,
    /// The only host directory the guest may open files in.
    #[arg(long)]
    pub fs_root: Option<PathBuf>,
    /// ARP mode, overriding the guest's arpsim_start argument:
    /// record_average, record_all, record_histogram, playback.
    #[arg(long)]
    pub mode: Option<String>,
    /// Where to write data.arp (default: the guest's arp_set_file_name, else data.arp).
    #[arg(short = 'o', long = "arp-file")]
    pub arp_file: Option<PathBuf>,
    /// data.arp format: ascii or binary.
    #[arg(long)]
    pub arp_format: Option<String>,
    /// gzip data.arp.
    #[arg(long)]
    pub gzip: bool,
    /// Callback sets, in order: cycles, instructions.
    #[arg(long, value_delimiter = ',', default_value = "cycles")]
    pub measure: Vec<String>,
    /// Play this recording back (implies --mode playback).
    #[arg(long)]
    pub playback: Option<PathBuf>,
    /// Simulated cores (default: the target's).
    #[arg(long)]
    pub cores: Option<usize>,
    /// Stack size in bytes of each thread the guest creates.
    #[arg(long, default_value_t = 8 * 1024)]
    pub thread_stack: u64,
    /// The guest's output must equal this file's content.
    #[arg(long)]
    pub expect_output: Option<PathBuf>,
    /// A report (--report-json) of the same program recorded on the same
    /// cores: the playback report compares its predicted time with it.
    #[arg(long)]
    pub compare: Option<PathBuf>,
    /// Also write the report as JSON (schema in sim-host/src/report.rs).
    #[arg(long)]
    pub report_json: Option<PathBuf>,
    /// Do not print the report table.
    #[arg(short, long)]
    pub quiet: bool,
    /// Write the guest's SIR annotated with the measured profile (APART
    /// dialect): cycles, instructions and counts per unit, loop and section,
    /// loop trip counts.
    #[arg(long, value_name = "PROFILE.sir")]
    pub profile: Option<PathBuf>,
    /// With --profile: also record loads and stores (address ranges and
    /// strides per loop; slower).
    #[arg(long, requires = "profile")]
    pub profile_memory: bool,
    /// Load a callback plugin (sim-host/include/sim_host_plugin.h): a shared
    /// library and, after the first `:`, the text passed to its init.
    /// Repeatable; its sets are recorded in data.arp after the host's.
    #[arg(long = "plugin", value_name = "PATH.so[:ARGS]")]
    pub plugins: Vec<sim_host::plugin::PluginSpec>,
    /// Write a function-level profile in the callgrind format (KCachegrind,
    /// QCachegrind, callgrind_annotate): cycles and instructions per
    /// function, with call edges.
    #[arg(long, value_name = "FILE")]
    pub callgrind: Option<PathBuf>,
    /// Write the section timeline as Chrome trace-event JSON (Perfetto,
    /// chrome://tracing), in simulated time.
    #[arg(long, value_name = "FILE")]
    pub trace_events: Option<PathBuf>,
    /// With --trace-events: keep at most this many section events (the
    /// file notes how many were dropped).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1_000_000,
        requires = "trace_events"
    )]
    pub trace_limit: usize,
    /// Arguments for the guest (SYS_GET_CMDLINE), after `--` (the ELF first
    /// when it was not given before the `--`).
    #[arg(last = true)]
    pub guest_args: Vec<String>,
}

fn parse_mode(s: &str) -> Result<Mode> {
    Ok(match s {
        "record_average" | "average" => Mode::RecordAverage,
        "record_all" | "all" => Mode::RecordAll,
        "record_histogram" | "histogram" => Mode::RecordHistogram,
        "playback" => Mode::Playback,
        other => bail!(
            "--mode {other}: expected record_average, record_all, record_histogram or playback"
        ),
    })
}

fn load_target(args: &Args) -> Result<Target> {
    Ok(match &args.target_file {
        Some(path) => Target::load(path)?,
        None => target::builtin(&args.target)?,
    })
}

/// Runs the guest; returns the process exit status.
pub fn run(mut args: Args) -> Result<i32> {
    // The cargo-runner form: `sim-host run --target T -- ELF ARGS...`.
    let elf = match args.elf.take() {
        Some(elf) => elf,
        None if !args.guest_args.is_empty() => PathBuf::from(args.guest_args.remove(0)),
        None => {
            eprintln!(
                "sim-host: no ELF given: sim-host run [OPTIONS] ELF [-- ARGS...], \
                 or as a cargo runner: sim-host run [OPTIONS] -- ELF [ARGS...]"
            );
            return Ok(EXIT_SETUP);
        }
    };
    type Profiler = Option<sim_host::profile::Profiler>;
    type Callgrind = Option<Rc<RefCell<CallgrindCollector>>>;
    let setup = || -> Result<(Target, GuestImage, RunOptions, Profiler, Callgrind)> {
        let target = load_target(&args)?;
        let image = GuestImage::load(&elf, &target)?;
        let profiler = args
            .profile
            .as_ref()
            .map(|_| {
                sim_host::profile::Profiler::new(
                    &image,
                    &target,
                    sim_host::sirgen::Dialect::Apart,
                    args.profile_memory,
                )
            })
            .transpose()?;
        let callgrind = match &args.callgrind {
            None => None,
            Some(_) => Some(Rc::new(RefCell::new(CallgrindCollector::new(&image)?))),
        };
        let mut observers: Vec<Observer> = profiler.iter().map(|p| p.observer()).collect();
        if let Some(c) = &callgrind {
            observers.push(c.clone());
        }
        let measures = args
            .measure
            .iter()
            .map(|m| m.parse::<Measure>().map_err(anyhow::Error::msg))
            .collect::<Result<Vec<_>>>()
            .context("--measure")?;
        let format = match args.arp_format.as_deref() {
            None => None,
            Some("ascii") => Some(FileFormat::Ascii),
            Some("binary") => Some(FileFormat::Binary),
            Some(other) => bail!("--arp-format {other}: expected ascii or binary"),
        };
        if let Some(p) = &args.playback {
            if !p.exists() {
                bail!("--playback {}: no such file", p.display());
            }
        }
        let interrupt = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&interrupt);
        // A second Ctrl-C kills the process the usual way.
        let _ = ctrlc::set_handler(move || {
            if flag.swap(true, Ordering::SeqCst) {
                std::process::exit(EXIT_INTERRUPTED);
            }
        });
        let program = elf
            .file_name()
            .map_or("guest".into(), |n| n.to_string_lossy().into_owned());
        let cmdline = std::iter::once(program)
            .chain(args.guest_args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        let options = RunOptions {
            max_cycles: args.max_cycles,
            timeout: args.timeout.map(Duration::from_secs_f64),
            fs_root: args.fs_root.clone(),
            cmdline,
            echo: true,
            interrupt: Some(interrupt),
            arp: ArpOptions {
                mode: args.mode.as_deref().map(parse_mode).transpose()?,
                file: args.arp_file.clone(),
                format,
                gzip: args.gzip,
                measures,
                playback: args.playback.clone(),
                trace_events: args.trace_events.as_ref().map(|_| args.trace_limit),
                plugins: sim_host::plugin::Plugin::load_all(&args.plugins, target.clock_hz)?,
            },
            observers,
            counting: Default::default(),
            cores: args.cores,
            thread_stack: Some(args.thread_stack),
        };
        if args.cores == Some(0) {
            bail!("--cores 0: a machine needs at least one core");
        }
        Ok((target, image, options, profiler, callgrind))
    };
    let (target, image, options, profiler, callgrind) = match setup() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sim-host: {}", super::error_text(&e));
            return Ok(EXIT_SETUP);
        }
    };
    let expected_output = match &args.expect_output {
        None => None,
        Some(p) => match std::fs::read(p) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                eprintln!("sim-host: --expect-output {}: {e}", p.display());
                return Ok(EXIT_SETUP);
            }
        },
    };
    let measured = match &args.compare {
        None => None,
        Some(p) => match measured_cycles(p) {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("sim-host: --compare {}: {e:#}", p.display());
                return Ok(EXIT_SETUP);
            }
        },
    };
    let (name, clock) = (target.name.clone(), target.clock_hz);
    let outcome = machine::run(image, target, options)?;
    if let (Some(p), Some(path)) = (&profiler, &args.profile) {
        p.write(path)
            .with_context(|| format!("writing the profile {}", path.display()))?;
    }
    if let (Some(c), Some(path)) = (&callgrind, &args.callgrind) {
        c.borrow().write(path)?;
    }
    if let Some(path) = &args.trace_events {
        let options = trace_events::TraceOptions {
            clock_hz: clock,
            names: trace_events::names_from_sections(&outcome.sections),
            dropped: outcome.section_events_dropped,
            limit: Some(args.trace_limit),
        };
        trace_events::write(path, &outcome.section_events, &options)?;
        if outcome.section_events_dropped > 0 {
            eprintln!(
                "sim-host: --trace-events: {} section events beyond --trace-limit {} were dropped",
                outcome.section_events_dropped, args.trace_limit
            );
        }
    }
    let mut report = Report::new(&outcome, &elf.display().to_string(), &name, clock);
    if let Some(recording) = &args.playback {
        let sequential = arpsim::tools::stats(recording)
            .ok()
            .map(|stats| sim_host::report::recorded_total(&stats));
        report.predict(sequential, measured);
    } else if measured.is_some() {
        report.predict(None, measured);
    }
    let mut verified = report.playback.as_ref().is_none_or(|p| p.exact);
    if let Some(expected) = &expected_output {
        if &outcome.console != expected {
            verified = false;
            report.warnings.push(format!(
                "the guest's output ({} bytes) differs from --expect-output ({} bytes){}",
                outcome.console.len(),
                expected.len(),
                first_difference(&outcome.console, expected)
            ));
        }
    }
    match &outcome.stop {
        Stop::Exit(_) => {}
        Stop::Fault(f) => eprintln!("sim-host: guest fault: {f}"),
        other => eprintln!(
            "sim-host: {}",
            report
                .stop
                .message
                .clone()
                .unwrap_or_else(|| format!("{other:?}"))
        ),
    }
    if let Some(e) = &outcome.arp_error {
        eprintln!("sim-host: writing data.arp failed: {e}");
    }
    if !args.quiet {
        eprint!("\n{}", report.to_text());
    } else {
        // the verdict is the point of a playback run: always shown
        eprint!("{}", report.playback_text());
    }
    if let Some(path) = &args.report_json {
        let json = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, json + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(match outcome.stop {
        Stop::Exit(0) if !verified => EXIT_VERIFICATION,
        Stop::Exit(status) => status,
        Stop::Fault(_) => EXIT_FAULT,
        Stop::Arp(_) => EXIT_ARP_ERROR,
        Stop::CycleLimit(_) => EXIT_CYCLE_LIMIT,
        Stop::Timeout(_) => EXIT_TIMEOUT,
        Stop::Interrupted => EXIT_INTERRUPTED,
    })
}

/// The measured (parallel) cycles of another run's JSON report.
fn measured_cycles(path: &std::path::Path) -> Result<u64> {
    let text = std::fs::read_to_string(path)?;
    let json: serde_json::Value = serde_json::from_str(&text).context("not a JSON report")?;
    json["totals"]["cycles"]
        .as_u64()
        .context("no field totals.cycles: not a sim-host report (--report-json)")
}

/// Where two outputs first differ, as ": line N" (1-based).
fn first_difference(got: &[u8], expected: &[u8]) -> String {
    let at = got
        .iter()
        .zip(expected)
        .position(|(a, b)| a != b)
        .unwrap_or(got.len().min(expected.len()));
    let line = 1 + got[..at].iter().filter(|b| **b == b'\n').count();
    format!(": first difference on line {line}")
}

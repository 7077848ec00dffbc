//! `sim-host run`: run a guest ELF, print its output, report its costs.
//!
//! Exit status: the guest's own exit status when it exits (modulo 256, as
//! for any process: the report's `stop` field tells a guest exit from the
//! tool's own statuses); otherwise 120 guest fault, 121 fatal ARP error (or
//! data.arp or another result could not be written, or was asked for with
//! `-o` but the guest never started recording), 122 `--max-cycles`
//! reached, 123 `--timeout` reached, 124 verification failed (playback did
//! not play every recorded sample exactly once, or the output differs
//! from `--expect-output`), 125 the run could not start (bad ELF, target,
//! option or output path; the message says which), 2 a usage error (an
//! option's value), 129 / 130 / 143 stopped by SIGHUP / SIGINT / SIGTERM,
//! 137 ended by gdb's `kill` (`--gdb`).

use anyhow::{bail, Context, Result};
use arpsim::types::{FileFormat, Mode};
use sim_host::arp_host::{ArpOptions, Measure};
use sim_host::callgrind::CallgrindCollector;
use sim_host::elf::GuestImage;
use sim_host::machine::{self, Observer, RunOptions, RunOutcome, Stop};
use sim_host::report::Report;
use sim_host::signals::{self, StopRequest};
use sim_host::target::{self, Target};
use sim_host::{say, say_raw, trace_events};
use std::cell::RefCell;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

pub const EXIT_FAULT: i32 = 120;
pub const EXIT_ARP_ERROR: i32 = 121;
pub const EXIT_CYCLE_LIMIT: i32 = 122;
pub const EXIT_TIMEOUT: i32 = 123;
pub const EXIT_VERIFICATION: i32 = 124;
pub const EXIT_SETUP: i32 = 125;

/// ARP modes (manual 6.2), as `--mode` takes them.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum ModeArg {
    #[value(alias = "average")]
    RecordAverage,
    #[value(alias = "all")]
    RecordAll,
    #[value(alias = "histogram")]
    RecordHistogram,
    Playback,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::RecordAverage => Mode::RecordAverage,
            ModeArg::RecordAll => Mode::RecordAll,
            ModeArg::RecordHistogram => Mode::RecordHistogram,
            ModeArg::Playback => Mode::Playback,
        }
    }
}

/// data.arp formats, as `--arp-format` takes them.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum FormatArg {
    Ascii,
    Binary,
}

impl From<FormatArg> for FileFormat {
    fn from(f: FormatArg) -> FileFormat {
        match f {
            FormatArg::Ascii => FileFormat::Ascii,
            FormatArg::Binary => FileFormat::Binary,
        }
    }
}

fn parse_timeout(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("`{text}`: expected a number of seconds"))?;
    machine::timeout_from_seconds(seconds)
}

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
    /// Stop after this many seconds of host time (more than 0, at most 30 days).
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout)]
    pub timeout: Option<Duration>,
    /// The only host directory the guest may open files in (it must exist).
    #[arg(long)]
    pub fs_root: Option<PathBuf>,
    /// Let the guest's arp_set_file_name name a file outside --fs-root
    /// (relative to the working directory).
    #[arg(long)]
    pub allow_guest_file_name: bool,
    /// ARP mode, overriding the guest's arpsim_start argument.
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Where to write data.arp (default: the guest's arp_set_file_name, else
    /// data.arp); `-` is standard output.
    #[arg(short = 'o', long = "arp-file")]
    pub arp_file: Option<PathBuf>,
    /// data.arp format.
    #[arg(long, value_enum)]
    pub arp_format: Option<FormatArg>,
    /// gzip data.arp.
    #[arg(long)]
    pub gzip: bool,
    /// Callback sets, in order: cycles, instructions.
    #[arg(long, value_delimiter = ',', default_value = "cycles")]
    pub measure: Vec<Measure>,
    /// Play this recording back (implies --mode playback).
    #[arg(long)]
    pub playback: Option<PathBuf>,
    /// Simulated cores (default: the target's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=machine::MAX_CORES as i64))]
    pub cores: Option<u32>,
    /// Stack size in bytes of each thread the guest creates.
    #[arg(
        long,
        default_value_t = 8 * 1024,
        value_parser = clap::value_parser!(u64)
            .range(machine::MIN_THREAD_STACK..=machine::MAX_THREAD_STACK)
    )]
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
    /// Show a live status line (cycles, instructions, MIPS, section, time)
    /// even when stderr is not a terminal; on a terminal it is shown anyway.
    #[arg(long, conflicts_with = "no_progress")]
    pub progress: bool,
    /// Never show the live status line.
    #[arg(long)]
    pub no_progress: bool,
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
    /// Wait for GDB on this TCP port (on 127.0.0.1) or ADDRESS:PORT before
    /// the first instruction (`target remote :PORT`); without a value,
    /// 127.0.0.1:3333 (then put `--gdb` after the ELF). Debugging costs no
    /// simulated cycle: the counts and data.arp are those of a plain run.
    /// Each guest thread is a GDB thread; `monitor help` lists the
    /// simulator's commands. One client at a time; if it disconnects or
    /// sends garbage, the run goes on without it.
    #[arg(
        long,
        value_name = "[ADDR:]PORT",
        value_parser = sim_host::gdb::parse_address,
        num_args = 0..=1,
        default_missing_value = "3333",
        conflicts_with = "timeout"
    )]
    pub gdb: Option<std::net::SocketAddr>,
    /// With --gdb: start at once; the guest stops for GDB when it connects.
    #[arg(long, requires = "gdb")]
    pub gdb_no_wait: bool,
    /// Arguments for the guest (SYS_GET_CMDLINE), after `--` (the ELF first
    /// when it was not given before the `--`).
    #[arg(last = true)]
    pub guest_args: Vec<String>,
}

impl Args {
    /// Every file the run will write, with the option that names it.
    fn outputs(&self) -> Vec<(&'static str, &Path)> {
        [
            ("-o", &self.arp_file),
            ("--report-json", &self.report_json),
            ("--profile", &self.profile),
            ("--callgrind", &self.callgrind),
            ("--trace-events", &self.trace_events),
        ]
        .into_iter()
        .filter_map(|(option, path)| path.as_deref().map(|p| (option, p)))
        .collect()
    }
}

fn load_target(args: &Args) -> Result<Target> {
    Ok(match &args.target_file {
        Some(path) => Target::load(path)?,
        None => target::builtin(&args.target)?,
    })
}

/// What the run needs, prepared before the first instruction.
struct Prepared {
    target: Target,
    image: GuestImage,
    options: RunOptions,
    profiler: Option<sim_host::profile::Profiler>,
    callgrind: Option<Rc<RefCell<CallgrindCollector>>>,
    expected_output: Option<Vec<u8>>,
    measured: Option<u64>,
    /// Drawn while the guest runs; erased when dropped.
    progress: Option<sim_host::progress::Progress>,
}

/// The ELF: before `--`, or first after it (the cargo-runner form
/// `sim-host run --target T -- ELF ARGS...`).
fn take_elf(args: &mut Args) -> Option<PathBuf> {
    match args.elf.take() {
        Some(elf) => Some(elf),
        None if !args.guest_args.is_empty() => Some(PathBuf::from(args.guest_args.remove(0))),
        None => None,
    }
}

/// Runs the guest; returns the process exit status.
pub fn run(mut args: Args) -> Result<i32> {
    let Some(elf) = take_elf(&mut args) else {
        say!(
            "sim-host: no ELF given: sim-host run [OPTIONS] ELF [-- ARGS...], \
             or as a cargo runner: sim-host run [OPTIONS] -- ELF [ARGS...]"
        );
        return Ok(EXIT_SETUP);
    };
    let stop = match signals::install() {
        Ok(stop) => stop,
        Err(e) => {
            say!("sim-host: cannot install the signal handlers: {e}");
            return Ok(EXIT_SETUP);
        }
    };
    let prepared = match prepare(&args, &elf, &stop) {
        Ok(p) => p,
        Err(e) => {
            say!("sim-host: {}", super::error_text(&e));
            return Ok(EXIT_SETUP);
        }
    };
    let Prepared {
        target,
        image,
        mut options,
        profiler,
        callgrind,
        expected_output,
        measured,
        progress,
    } = prepared;
    let (name, clock) = (target.name.clone(), target.clock_hz);
    if let Some(address) = args.gdb {
        match link_to_gdb(address, args.gdb_no_wait, &stop) {
            Ok(Some(link)) => {
                options.debugger = Some(sim_host::gdb::debugger(target.arch, link));
            }
            Ok(None) => {
                let signal = stop.signal().unwrap_or(0);
                say!(
                    "sim-host: stopped by {} while waiting for GDB",
                    signals::name(signal)
                );
                return Ok(signals::exit_status(signal));
            }
            Err(e) => {
                say!("sim-host: --gdb {address}: {e}");
                return Ok(EXIT_SETUP);
            }
        }
    }
    let outcome = machine::run(image, target, options);
    drop(progress);
    let outcome = match outcome {
        Ok(o) => o,
        Err(e @ machine::MachineError::Setup { .. })
        | Err(e @ machine::MachineError::UnknownCpu { .. }) => {
            say!("sim-host: {e}");
            return Ok(EXIT_SETUP);
        }
        Err(e) => return Err(e.into()),
    };
    let mut report = Report::new(&outcome, &elf.display().to_string(), &name, clock);
    let mut failed_outputs = write_profiles(&args, &outcome, &report, profiler, callgrind);
    let verified = verify(
        &args,
        &outcome,
        &mut report,
        expected_output.as_deref(),
        measured,
    );
    let no_recording = tell_how_it_ended(&args, &outcome, &report);
    if !args.quiet {
        say_raw!("\n{}", report.to_text());
    } else {
        // the verdict is the point of a playback run: always shown
        say_raw!("{}", report.playback_text());
    }
    if let Some(path) = &args.report_json {
        let json = serde_json::to_string_pretty(&report)? + "\n";
        if let Err(e) = arpsim::output::write(path, json) {
            say!("sim-host: writing {}: {e}", path.display());
            failed_outputs = true;
        }
    }
    let status = exit_status(&outcome.stop, verified);
    Ok(match status {
        // A run that went well but lost a result still failed.
        0 if failed_outputs || no_recording => EXIT_ARP_ERROR,
        s => s,
    })
}

/// Checks every option and output, loads the target and the ELF: all that
/// can fail before the guest runs.
fn prepare(args: &Args, elf: &Path, stop: &StopRequest) -> Result<Prepared> {
    arpsim::output::preflight(&args.outputs()).map_err(anyhow::Error::msg)?;
    if let Some(root) = &args.fs_root {
        if !root.is_dir() {
            bail!("--fs-root {}: no such directory", root.display());
        }
    }
    if let Some(p) = &args.playback {
        if !p.is_file() {
            bail!(
                "--playback {}: no such file (a recorded data.arp)",
                p.display()
            );
        }
    }
    let target = load_target(args)?;
    let image = GuestImage::load(elf, &target)?;
    if args.arp_file.is_some() && !sim_host::arp_host::can_record(&image) {
        bail!(
            "-o {}: {} has no ARP entry points (arpsim_start, arp_enter, ...): it is stripped \
             or was built without guest-shim's stubs, so it cannot record data.arp",
            args.arp_file.as_deref().unwrap_or(Path::new("")).display(),
            elf.display()
        );
    }
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
    let expected_output = args
        .expect_output
        .as_ref()
        .map(|p| std::fs::read(p).with_context(|| format!("--expect-output {}", p.display())))
        .transpose()?;
    let measured = args
        .compare
        .as_ref()
        .map(|p| measured_cycles(p).with_context(|| format!("--compare {}", p.display())))
        .transpose()?;
    let show_progress = !args.no_progress && (args.progress || std::io::stderr().is_terminal());
    let progress = show_progress.then(|| sim_host::progress::Progress::start(target.clock_hz));
    let options = RunOptions {
        progress: progress.as_ref().map(|p| p.shared()),
        max_cycles: args.max_cycles,
        timeout: args.timeout,
        fs_root: args.fs_root.clone(),
        cmdline: guest_cmdline(elf, &args.guest_args),
        echo: true,
        interrupt: Some(stop.flag()),
        arp: ArpOptions {
            mode: args.mode.map(Mode::from),
            file: args.arp_file.clone(),
            format: args.arp_format.map(FileFormat::from),
            gzip: args.gzip,
            measures: args.measure.clone(),
            playback: args.playback.clone(),
            trace_events: args.trace_events.as_ref().map(|_| args.trace_limit),
            plugins: sim_host::plugin::Plugin::load_all(&args.plugins, target.clock_hz)?,
            allow_guest_file_name: args.allow_guest_file_name,
            fs_root: args.fs_root.clone(),
        },
        observers,
        counting: Default::default(),
        cores: args.cores.map(|c| c as usize),
        thread_stack: Some(args.thread_stack),
        debugger: None,
    };
    Ok(Prepared {
        target,
        image,
        options,
        profiler,
        callgrind,
        expected_output,
        measured,
        progress,
    })
}

/// Listens on `address` and waits for gdb (unless `no_wait`); `None` if a
/// stop signal came first.
fn link_to_gdb(
    address: std::net::SocketAddr,
    no_wait: bool,
    stop: &StopRequest,
) -> std::io::Result<Option<sim_host::gdb::GdbLink>> {
    let listener = std::net::TcpListener::bind(address)?;
    let how = format!("gdb-multiarch ELF -ex 'target remote {address}'");
    if no_wait {
        say!("sim-host: GDB may connect on {address} ({how})");
        return Ok(Some(sim_host::gdb::GdbLink::Later(listener)));
    }
    say!("sim-host: waiting for GDB on {address} ({how})");
    let stream = sim_host::gdb::accept(&listener, stop)?;
    Ok(stream.map(sim_host::gdb::GdbLink::Connected))
}

/// SYS_GET_CMDLINE's text: the program's file name and its arguments.
fn guest_cmdline(elf: &Path, args: &[String]) -> String {
    let program = elf
        .file_name()
        .map_or("guest".into(), |n| n.to_string_lossy().into_owned());
    std::iter::once(program)
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes the profile, callgrind and trace-event files; returns whether
/// one of them failed (each failure is reported).
fn write_profiles(
    args: &Args,
    outcome: &RunOutcome,
    report: &Report,
    profiler: Option<sim_host::profile::Profiler>,
    callgrind: Option<Rc<RefCell<CallgrindCollector>>>,
) -> bool {
    let mut failed = false;
    let mut check = |what: &str, path: &Path, result: Result<()>| {
        if let Err(e) = result {
            say!(
                "sim-host: writing the {what} {}: {}",
                path.display(),
                super::error_text(&e)
            );
            failed = true;
        }
    };
    if let (Some(p), Some(path)) = (&profiler, &args.profile) {
        check("profile", path, p.write(path).map_err(Into::into));
    }
    if let (Some(c), Some(path)) = (&callgrind, &args.callgrind) {
        check(
            "callgrind profile",
            path,
            c.borrow().write(path).map_err(Into::into),
        );
    }
    if let Some(path) = &args.trace_events {
        let options = trace_events::TraceOptions {
            clock_hz: report.clock_hz,
            // named from the report: its sources are located already
            names: trace_events::names_from_sections(&report.sections),
            dropped: outcome.section_events_dropped,
            limit: Some(args.trace_limit),
        };
        let result = trace_events::write(path, &outcome.section_events, &options);
        check("trace events", path, result.map_err(Into::into));
        if outcome.section_events_dropped > 0 {
            say!(
                "sim-host: --trace-events: {} section events beyond --trace-limit {} were dropped",
                outcome.section_events_dropped,
                args.trace_limit
            );
        }
    }
    failed
}

/// Adds the playback prediction and the output check to the report;
/// returns whether everything that was to be verified was.
fn verify(
    args: &Args,
    outcome: &RunOutcome,
    report: &mut Report,
    expected_output: Option<&[u8]>,
    measured: Option<u64>,
) -> bool {
    if let Some(recording) = &args.playback {
        let sequential = arpsim::tools::stats(recording)
            .ok()
            .map(|stats| sim_host::report::recorded_total(&stats));
        report.predict(sequential, measured);
    } else if measured.is_some() {
        report.predict(None, measured);
    }
    let mut verified = report.playback.as_ref().is_none_or(|p| p.exact);
    if let Some(expected) = expected_output {
        if outcome.console != expected {
            verified = false;
            report.warnings.push(format!(
                "the guest's output ({} bytes) differs from --expect-output ({} bytes){}",
                outcome.console.len(),
                expected.len(),
                first_difference(&outcome.console, expected)
            ));
        }
    }
    verified
}

/// Says why the run stopped when it was not the guest's own exit, and what
/// became of data.arp; returns whether a data.arp asked for with `-o` was
/// never started.
fn tell_how_it_ended(args: &Args, outcome: &RunOutcome, report: &Report) -> bool {
    match &outcome.stop {
        Stop::Exit(_) => {}
        Stop::Fault(f) => say!("sim-host: guest fault: {f}"),
        _ => say!(
            "sim-host: {}",
            report.stop.message.as_deref().unwrap_or(report.stop.reason)
        ),
    }
    if let Some(e) = &outcome.arp_error {
        say!("sim-host: writing data.arp failed: {e}");
    }
    let never_started = args.arp_file.is_some()
        && outcome.arp_file.is_none()
        && outcome.arp_error.is_none()
        && matches!(outcome.stop, Stop::Exit(_));
    if never_started {
        say!(
            "sim-host: -o {}: the guest never called arpsim_start (or arp_start), so nothing was recorded",
            args.arp_file.as_deref().unwrap_or(Path::new("")).display()
        );
    }
    never_started
}

fn exit_status(stop: &Stop, verified: bool) -> i32 {
    match *stop {
        Stop::Exit(0) if !verified => EXIT_VERIFICATION,
        Stop::Exit(status) => status,
        Stop::Fault(_) => EXIT_FAULT,
        Stop::Arp(_) => EXIT_ARP_ERROR,
        Stop::CycleLimit(_) => EXIT_CYCLE_LIMIT,
        Stop::Timeout(_) => EXIT_TIMEOUT,
        Stop::Interrupted(signal) => signals::exit_status(signal),
    }
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

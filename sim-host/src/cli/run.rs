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
//! option or output path; an ELF built for another core; the message says
//! which) or met an instruction the target's cycle table does not price
//! (unless `--allow-unpriced`), 2 a usage error (an
//! option's value), 129 / 130 / 143 stopped by SIGHUP / SIGINT / SIGTERM,
//! 137 ended by gdb's `kill` (`--gdb`).

use anyhow::Result;
use arpsim::types::{FileFormat, Mode};
use sim_host::engine::{MachineError, PeripheralOptions, RunOptions, Stop};
use sim_host::host::arp_host::ArpOptions;
use sim_host::host::counters::Measure;
use sim_host::host::signals::{self, StopRequest};
use sim_host::model::exit;
use sim_host::model::limits::{MAX_CORES, MAX_THREAD_STACK, MIN_THREAD_STACK};
use sim_host::tools::session::{self, Finished, Outputs, RunSpec, TargetSource};
use sim_host::{say, say_raw};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// ARP modes (manual 6.2) as `--mode` takes them: arpsim's names, and
/// their short forms without `record_`.
fn mode_parser() -> impl clap::builder::TypedValueParser<Value = Mode> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = Mode::ALL.map(|m| {
        let short = m.name().strip_prefix("record_");
        PossibleValue::new(m.name()).aliases(short)
    });
    PossibleValuesParser::new(values)
        .map(|name| Mode::from_name(&name).expect("one of the possible values"))
}

/// data.arp formats as `--arp-format` takes them (arpsim's names).
fn format_parser() -> impl clap::builder::TypedValueParser<Value = FileFormat> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(FileFormat::ALL.map(FileFormat::name))
        .map(|name| FileFormat::from_name(&name).expect("one of the possible values"))
}

fn parse_timeout(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("`{text}`: expected a number of seconds"))?;
    sim_host::model::limits::timeout_from_seconds(seconds)
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
    /// Run the ELF even if its build attributes (architecture, FPU,
    /// float ABI; RISC-V ISA string) say it was built for another core.
    #[arg(long)]
    pub force_target: bool,
    /// Count instructions the target's cycle table does not price (each as
    /// an `alu` instruction, with a warning naming them) instead of
    /// stopping the run at the first one (exit status 125).
    #[arg(long)]
    pub allow_unpriced: bool,
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
    #[arg(long, value_parser = mode_parser())]
    pub mode: Option<Mode>,
    /// Where to write data.arp (default: the guest's arp_set_file_name, else
    /// data.arp); `-` is standard output.
    #[arg(short = 'o', long = "arp-file")]
    pub arp_file: Option<PathBuf>,
    /// data.arp format.
    #[arg(long, value_parser = format_parser())]
    pub arp_format: Option<FileFormat>,
    /// gzip data.arp.
    #[arg(long)]
    pub gzip: bool,
    /// Callback sets, in order: cycles, instructions.
    #[arg(long, value_delimiter = ',', default_value = "cycles")]
    pub measure: Vec<Measure>,
    /// Play this recording back (implies --mode playback; it writes no
    /// data.arp, so -o is refused).
    #[arg(long)]
    pub playback: Option<PathBuf>,
    /// Simulated cores (default: the target's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_CORES as i64))]
    pub cores: Option<u32>,
    /// Stack size in bytes of each thread the guest creates.
    #[arg(
        long,
        default_value_t = 8 * 1024,
        value_parser = clap::value_parser!(u64)
            .range(MIN_THREAD_STACK..=MAX_THREAD_STACK)
    )]
    pub thread_stack: u64,
    /// The guest's output must equal this file's content.
    #[arg(long)]
    pub expect_output: Option<PathBuf>,
    /// A report (--report-json) of the same program recorded on the same
    /// cores: the playback report compares its predicted time with it.
    #[arg(long)]
    pub compare: Option<PathBuf>,
    /// Also write the report as JSON: its fields (schema_version 4) are the
    /// table's and the run's (totals, stop, sections with their names,
    /// cores, playback); later versions only add fields.
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
    /// Load a callback plugin (its C interface: include/sim_host_plugin.h
    /// of the SDK, `sim-host sdk --print-path`): a shared library and,
    /// after the first `:`, the text passed to its init.
    /// Repeatable; its sets are recorded in data.arp after the host's.
    #[arg(long = "plugin", value_name = "PATH.so[:ARGS]")]
    pub plugins: Vec<sim_host::host::plugin::PluginSpec>,
    /// Write a function-level profile in the callgrind format (KCachegrind,
    /// QCachegrind, callgrind_annotate): cycles and instructions per
    /// function and per ARP section (named after its label, else its
    /// function and line), with call edges.
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
        value_parser = sim_host::tools::gdb::parse_address,
        num_args = 0..=1,
        default_missing_value = "3333"
    )]
    pub gdb: Option<std::net::SocketAddr>,
    /// A CMSIS-SVD file of the part: an access to one of its peripherals
    /// (which sim-host does not model) names the peripheral and register.
    #[arg(long, value_name = "FILE")]
    pub svd: Option<PathBuf>,
    /// What an access to a vendor peripheral (the target's board ranges,
    /// the --svd file's peripherals) does: `fault` ends the run naming it;
    /// `ignore` reads 0 and drops writes, and the report counts them per
    /// peripheral (start-up code that configures clocks and GPIO).
    #[arg(long, value_enum, default_value = "fault")]
    pub peripherals: PeripheralMode,
    /// With --gdb: start at once; the guest stops for GDB when it connects.
    #[arg(long, requires = "gdb")]
    pub gdb_no_wait: bool,
    /// Arguments for the guest (SYS_GET_CMDLINE), after `--` (the ELF first
    /// when it was not given before the `--`).
    #[arg(last = true)]
    pub guest_args: Vec<String>,
}

impl Args {
    /// The run these arguments ask for, of `elf`.
    fn spec(&self, elf: PathBuf, stop: &StopRequest) -> RunSpec {
        let target = match &self.target_file {
            Some(path) => TargetSource::File(path.clone()),
            None => TargetSource::Builtin(self.target.clone()),
        };
        let engine = RunOptions {
            max_cycles: self.max_cycles,
            timeout: self.timeout,
            fs_root: self.fs_root.clone(),
            echo: true,
            interrupt: Some(stop.flag()),
            arp: ArpOptions {
                mode: self.mode,
                file: self.arp_file.clone(),
                format: self.arp_format,
                gzip: self.gzip,
                measures: self.measure.clone(),
                playback: self.playback.clone(),
                allow_guest_file_name: self.allow_guest_file_name,
                fs_root: self.fs_root.clone(),
                ..Default::default()
            },
            cores: self.cores.map(|c| c as usize),
            thread_stack: Some(self.thread_stack),
            peripherals: PeripheralOptions {
                ignore: self.peripherals == PeripheralMode::Ignore,
                ..Default::default()
            },
            allow_unpriced: self.allow_unpriced,
            ..Default::default()
        };
        RunSpec {
            guest_args: self.guest_args.clone(),
            engine,
            plugins: self.plugins.clone(),
            outputs: Outputs {
                report_json: self.report_json.clone(),
                profile: self.profile.clone(),
                profile_memory: self.profile_memory,
                callgrind: self.callgrind.clone(),
                trace_events: self.trace_events.clone(),
                trace_limit: self.trace_limit,
            },
            expect_output: self.expect_output.clone(),
            compare: self.compare.clone(),
            svd: self.svd.clone(),
            progress: !self.no_progress && (self.progress || std::io::stderr().is_terminal()),
            force_target: self.force_target,
            ..RunSpec::new(elf, target)
        }
    }
}

/// `--peripherals`: what an access to a vendor peripheral does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PeripheralMode {
    Fault,
    Ignore,
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
        return Ok(exit::SETUP);
    };
    let stop = match signals::install() {
        Ok(stop) => stop,
        Err(e) => {
            say!("sim-host: cannot install the signal handlers: {e}");
            return Ok(exit::SETUP);
        }
    };
    let spec = args.spec(elf, &stop);
    let mut prepared = match session::prepare(&spec) {
        Ok(p) => p,
        Err(e) => {
            say!("sim-host: {}", super::error_text(&e));
            return Ok(exit::SETUP);
        }
    };
    for note in &prepared.notes {
        say!("sim-host: note: {note}");
    }
    if let Some(address) = args.gdb {
        match link_to_gdb(address, args.gdb_no_wait, &stop) {
            Ok(Some(link)) => {
                let arch = prepared.target.arch;
                let fpu = prepared.target.isa.has_fpu();
                prepared.options.debugger = Some(sim_host::tools::gdb::debugger(arch, fpu, link));
            }
            Ok(None) => {
                let signal = stop.signal().unwrap_or(0);
                say!(
                    "sim-host: stopped by {} while waiting for GDB",
                    signals::name(signal)
                );
                return Ok(exit::for_signal(signal));
            }
            Err(e) => {
                say!("sim-host: --gdb {address}: {e}");
                return Ok(exit::SETUP);
            }
        }
    }
    if args.gdb.is_none() {
        // an output that is a FIFO no process reads gives up at the
        // time-out (with gdb the time-out leaves out the debugger's time)
        let deadline = args.timeout.map(|t| std::time::Instant::now() + t);
        arpsim::output::set_wait_deadline(deadline);
    }
    let finished = match session::execute(&spec, prepared) {
        Ok(f) => f,
        Err(e @ MachineError::Setup { .. }) | Err(e @ MachineError::UnknownCpu { .. }) => {
            say!("sim-host: {e}");
            return Ok(exit::SETUP);
        }
        Err(e) => return Err(e.into()),
    };
    tell(&spec, &finished, args.quiet);
    Ok(finished.exit_status())
}

/// Listens on `address` and waits for gdb (unless `no_wait`); `None` if a
/// stop signal came first.
fn link_to_gdb(
    address: std::net::SocketAddr,
    no_wait: bool,
    stop: &StopRequest,
) -> std::io::Result<Option<sim_host::tools::gdb::GdbLink>> {
    let listener = std::net::TcpListener::bind(address)?;
    let how = format!("gdb-multiarch ELF -ex 'target remote {address}'");
    if no_wait {
        say!("sim-host: GDB may connect on {address} ({how})");
        return Ok(Some(sim_host::tools::gdb::GdbLink::Later(listener)));
    }
    say!("sim-host: waiting for GDB on {address} ({how})");
    let stream = sim_host::tools::gdb::accept(&listener, stop)?;
    Ok(stream.map(sim_host::tools::gdb::GdbLink::Connected))
}

/// Prints what became of the outputs, why the run stopped when it was not
/// the guest's own exit, and the report.
fn tell(spec: &RunSpec, finished: &Finished, quiet: bool) {
    for message in &finished.output_errors {
        say!("sim-host: {message}");
    }
    let outcome = &finished.outcome;
    if spec.outputs.trace_events.is_some() && outcome.section_events_dropped > 0 {
        say!(
            "sim-host: --trace-events: {} section events beyond --trace-limit {} were dropped",
            outcome.section_events_dropped,
            spec.outputs.trace_limit
        );
    }
    tell_how_it_ended(spec, finished);
    if !quiet {
        say_raw!("\n{}", finished.report.to_text());
    } else {
        // the verdict is the point of a playback run: always shown
        say_raw!("{}", finished.report.playback_text());
    }
    if let Some(message) = &finished.report_error {
        say!("sim-host: {message}");
    }
}

/// Says why the run stopped when it was not the guest's own exit, and what
/// became of data.arp.
fn tell_how_it_ended(spec: &RunSpec, finished: &Finished) {
    let (outcome, report) = (&finished.outcome, &finished.report);
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
    if finished.never_recorded {
        let file = spec.engine.arp.file.as_deref().unwrap_or(Path::new(""));
        say!(
            "sim-host: -o {}: the guest never called arpsim_start (or arp_start), so nothing was recorded",
            file.display()
        );
    }
}

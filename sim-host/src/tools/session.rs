//! One run with its outputs: the library's single entry point for a run,
//! shared by `sim-host run`, each entry of a suite and a run under a
//! debugger. It checks and loads everything that can fail before the guest
//! runs ([`prepare`]), runs it, writes the profiles and the JSON report,
//! verifies what was asked to be verified, and maps how the run ended to
//! the process's exit status ([`exit_status`], the one such mapping).
//! Printing is the caller's: nothing here writes to the terminal.

use crate::engine::{self, MachineError, Observer, RunOptions, RunOutcome, Stop};
use crate::host::expected::{ExpectedOutput, OutputCheck};
use crate::host::plugin::{Plugin, PluginSpec};
use crate::host::progress::Progress;
use crate::image::elf::{ElfError, GuestImage};
use crate::model::target::{self, Target};
use crate::model::{exit, svd};
use crate::observe::callgrind::CallgrindCollector;
use crate::observe::profile::Profiler;
use crate::observe::report::{self, Report};
use crate::observe::sirgen::Dialect;
use crate::observe::trace_events;
use anyhow::{bail, Context, Result};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Where the target description comes from.
#[derive(Debug, Clone)]
pub enum TargetSource {
    /// A built-in target (`--target`), by name.
    Builtin(String),
    /// A target file (`--target-file`).
    File(PathBuf),
}

impl TargetSource {
    pub fn load(&self) -> Result<Target> {
        Ok(match self {
            TargetSource::File(path) => Target::load(path)?,
            TargetSource::Builtin(name) => target::builtin(name)?,
        })
    }
}

/// The files a run writes besides data.arp (`engine.arp.file`).
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// The report as JSON.
    pub report_json: Option<PathBuf>,
    /// The guest's SIR annotated with the measured profile, and whether
    /// loads and stores are recorded too.
    pub profile: Option<PathBuf>,
    pub profile_memory: bool,
    /// A function-level profile in the callgrind format.
    pub callgrind: Option<PathBuf>,
    /// The section timeline as trace-event JSON, and at most how many
    /// section events it keeps.
    pub trace_events: Option<PathBuf>,
    pub trace_limit: usize,
}

impl Outputs {
    /// Every file the run will write, with the option that names it.
    pub fn named<'a>(&'a self, arp_file: Option<&'a Path>) -> Vec<(&'static str, &'a Path)> {
        [
            ("-o", arp_file),
            ("--report-json", self.report_json.as_deref()),
            ("--profile", self.profile.as_deref()),
            ("--callgrind", self.callgrind.as_deref()),
            ("--trace-events", self.trace_events.as_deref()),
        ]
        .into_iter()
        .filter_map(|(option, path)| path.map(|p| (option, p)))
        .collect()
    }
}

/// Everything a run is asked to do.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub elf: PathBuf,
    pub target: TargetSource,
    /// The guest's arguments (SYS_GET_CMDLINE gives the ELF's file name
    /// followed by these).
    pub guest_args: Vec<String>,
    /// The engine's options; `cmdline`, `observers`, `progress` and the
    /// ARP plugins are filled in by [`prepare`].
    pub engine: RunOptions,
    /// Callback plugins to load (`--plugin`).
    pub plugins: Vec<PluginSpec>,
    pub outputs: Outputs,
    /// The guest's output must equal this file's content.
    pub expect_output: Option<PathBuf>,
    /// Another run's JSON report: the playback prediction is compared with
    /// its measured cycles.
    pub compare: Option<PathBuf>,
    /// Show the live status line while the guest runs.
    pub progress: bool,
    /// A CMSIS-SVD file naming the part's peripherals (`--svd`).
    pub svd: Option<PathBuf>,
    /// Run the ELF even when its build attributes say it is for another
    /// core than the target.
    pub force_target: bool,
}

impl RunSpec {
    /// A run of `elf` on `target` with the engine's defaults and no
    /// outputs besides what `engine` says.
    /// Every file the run reads, by option (no output may be one).
    pub fn inputs(&self) -> Vec<(&'static str, &Path)> {
        let mut inputs = vec![("ELF", self.elf.as_path())];
        if let TargetSource::File(p) = &self.target {
            inputs.push(("--target-file", p));
        }
        for (option, path) in [
            ("--expect-output", &self.expect_output),
            ("--compare", &self.compare),
            ("--playback", &self.engine.arp.playback),
            ("--svd", &self.svd),
        ] {
            if let Some(p) = path {
                inputs.push((option, p));
            }
        }
        for plugin in &self.plugins {
            inputs.push(("--plugin", &plugin.path));
        }
        inputs
    }

    pub fn new(elf: PathBuf, target: TargetSource) -> RunSpec {
        RunSpec {
            elf,
            target,
            guest_args: Vec::new(),
            engine: RunOptions::default(),
            plugins: Vec::new(),
            outputs: Outputs::default(),
            expect_output: None,
            compare: None,
            progress: false,
            svd: None,
            force_target: false,
        }
    }
}

/// A run ready to start: everything that could fail before the guest runs
/// has been checked. The options may still be changed (a debugger).
pub struct Prepared {
    pub target: Target,
    pub image: GuestImage,
    pub options: RunOptions,
    profiler: Option<Profiler>,
    callgrind: Option<Rc<RefCell<CallgrindCollector>>>,
    measured: Option<u64>,
    /// Drawn while the guest runs; erased when dropped.
    progress: Option<Progress>,
    /// What the caller should tell the user before the run (an option
    /// that has nothing to act on, for instance).
    pub notes: Vec<String>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("target", &self.target.name)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// A finished run: its outcome and report, and what went wrong around it.
#[derive(Debug)]
pub struct Finished {
    pub outcome: RunOutcome,
    pub report: Report,
    /// Playback played every sample exactly once and the output was as
    /// expected (when either was asked for).
    pub verified: bool,
    /// Profile, callgrind and trace-event files that could not be
    /// written, each as a message.
    pub output_errors: Vec<String>,
    /// Why the JSON report could not be written.
    pub report_error: Option<String>,
    /// `-o` was given but the guest never started recording.
    pub never_recorded: bool,
}

impl Finished {
    /// Whether a file asked for could not be written.
    pub fn lost_an_output(&self) -> bool {
        !self.output_errors.is_empty() || self.report_error.is_some()
    }

    /// The process's exit status for this run.
    pub fn exit_status(&self) -> i32 {
        match exit_status(&self.outcome.stop, self.verified) {
            // A run that went well but lost a result still failed.
            0 if self.lost_an_output() || self.never_recorded => exit::ARP_ERROR,
            s => s,
        }
    }
}

/// The exit status of a run that stopped with `stop`; a clean exit whose
/// verification failed is [`exit::VERIFICATION`].
pub fn exit_status(stop: &Stop, verified: bool) -> i32 {
    match *stop {
        Stop::Exit(0) if !verified => exit::VERIFICATION,
        Stop::Exit(status) => status,
        Stop::Fault(_) => exit::FAULT,
        Stop::Arp(_) => exit::ARP_ERROR,
        Stop::Internal(_) => exit::INTERNAL,
        Stop::Unsupported(_) => exit::UNSUPPORTED,
        Stop::SystemReset => exit::SYSTEM_RESET,
        Stop::Unpriced(_) => exit::SETUP,
        Stop::CycleLimit(_) => exit::CYCLE_LIMIT,
        Stop::Timeout(_) => exit::TIMEOUT,
        Stop::Interrupted(signal) => exit::for_signal(signal),
    }
}

/// Checks every option and output, loads the target and the ELF, the
/// plugins and the observers: all that can fail before the guest runs.
pub fn prepare(spec: &RunSpec) -> Result<Prepared> {
    let arp = &spec.engine.arp;
    let outputs = spec.outputs.named(arp.file.as_deref());
    arpsim::output::check_files(&outputs, &spec.inputs()).map_err(anyhow::Error::msg)?;
    check_inputs(spec)?;
    let (target, image) = load_guest(spec)?;
    if arp.file.is_some() && !crate::host::arp_host::can_record(&image) {
        bail!(
            "-o {}: {} has no ARP entry points (arpsim_start, arp_enter, ...): it is stripped \
             or was built without guest-shim's stubs, so it cannot record data.arp",
            arp.file.as_deref().unwrap_or(Path::new("")).display(),
            spec.elf.display()
        );
    }
    load_the_rest(spec, target, image)
}

/// [`prepare`] for a run whose outputs are its caller's own files (a
/// suite's entries): their folders are not probed, and a guest that
/// cannot record is run all the same.
pub fn prepare_unchecked(spec: &RunSpec) -> Result<Prepared> {
    let (target, image) = load_guest(spec)?;
    load_the_rest(spec, target, image)
}

fn load_guest(spec: &RunSpec) -> Result<(Target, GuestImage)> {
    let target = spec.target.load()?;
    let image = match GuestImage::load(&spec.elf, &target) {
        Ok(image) => image,
        Err(e @ ElfError::SegmentOutsideMemory { .. }) if !spec.force_target => {
            return Err(wrong_core_first(spec, &target, e))
        }
        Err(e) => return Err(e.into()),
    };
    if !spec.force_target {
        crate::image::attributes::check(image.needs.as_ref(), &spec.elf, &target)?;
    }
    Ok((target, image))
}

/// An ELF that does not load on `target`: when it was built for another
/// core (its build attributes), that is the error, naming the
/// architecture and a target that runs it, and the load error only
/// follows (issue 45: an M4 ELF on cortex-m0plus said only that a segment
/// lay outside the memory map, when the map was the wrong core's).
fn wrong_core_first(spec: &RunSpec, target: &Target, load_error: ElfError) -> anyhow::Error {
    let needs = GuestImage::inspect(&spec.elf).ok().and_then(|i| i.needs);
    match crate::image::attributes::check(needs.as_ref(), &spec.elf, target) {
        Err(mismatch) => anyhow::anyhow!(
            "{mismatch} (nor does it load on `{}`'s memory map: {load_error})",
            target.name
        ),
        Ok(()) => load_error.into(),
    }
}

/// The observers, expected output, compared report, status line and
/// plugins, and the engine's options completed.
fn load_the_rest(spec: &RunSpec, target: Target, image: GuestImage) -> Result<Prepared> {
    let outputs = &spec.outputs;
    let profiler = outputs
        .profile
        .as_ref()
        .map(|_| Profiler::new(&image, &target, Dialect::Apart, outputs.profile_memory))
        .transpose()?;
    let callgrind = match &outputs.callgrind {
        None => None,
        Some(_) => Some(Rc::new(RefCell::new(CallgrindCollector::new(&image)?))),
    };
    // compared while the guest writes (never held): opened here once so
    // a missing file stops the run before it starts
    let expected = spec.expect_output.as_ref().map(|p| {
        let expected = ExpectedOutput::File(p.clone());
        OutputCheck::open(&expected)
            .map(|_| expected)
            .with_context(|| format!("--expect-output {}", p.display()))
    });
    let expected = expected.transpose()?;
    let measured = spec
        .compare
        .as_ref()
        .map(|p| measured_cycles(p).with_context(|| format!("--compare {}", p.display())))
        .transpose()?;
    let progress = spec.progress.then(|| Progress::start(target.clock_hz));
    let mut options = spec.engine.clone();
    options.progress = progress.as_ref().map(|p| p.shared());
    options.cmdline = guest_cmdline(&spec.elf, &spec.guest_args);
    options.arp.trace_events = outputs.trace_events.as_ref().map(|_| outputs.trace_limit);
    options.arp.plugins = Plugin::load_all(&spec.plugins, target.clock_hz)?;
    check_callback_sets(&options)?;
    options.observers = observers(&profiler, &callgrind);
    if let Some(path) = &spec.svd {
        options.peripherals.svd = svd::load(path).context("--svd")?;
    }
    // issue 39: one script passes the same flags to every core, and a core
    // without peripheral ranges (cortex-m33) simply has nothing to ignore
    let mut notes = Vec::new();
    if options.peripherals.ignore
        && target.system.peripherals.is_empty()
        && options.peripherals.svd.is_empty()
    {
        notes.push(format!(
            "--peripherals ignore: target `{}` lists no peripheral range (its [system] \
             peripherals) and no --svd file names any: there is nothing to ignore, and \
             every access outside its memory faults as without the option",
            target.name
        ));
    }
    if expected.is_some() {
        options.expect_output = expected;
    }
    Ok(Prepared {
        target,
        image,
        options,
        profiler,
        callgrind,
        measured,
        progress,
        notes,
    })
}

/// The host's callback sets (`--measure`, cycles by default) and the
/// plugins' fit in a data.arp (issue 30, N07: 256 once wrote a corrupt
/// binary file).
fn check_callback_sets(options: &RunOptions) -> Result<()> {
    let own = options.arp.measures.len().max(1);
    let plugins: usize = options
        .arp
        .plugins
        .iter()
        .map(|p| p.data_types().len())
        .sum();
    let max = arpsim::types::MAX_CALLBACK_SETS;
    if own + plugins > max {
        bail!(
            "{own} callback set(s) of --measure and {plugins} of --plugin: at most {max} in all, \
             the most a data.arp holds (arpsim/FORMAT.md)"
        );
    }
    Ok(())
}

/// The inputs that must exist before anything is loaded.
fn check_inputs(spec: &RunSpec) -> Result<()> {
    if let Some(root) = &spec.engine.fs_root {
        if !root.is_dir() {
            bail!("--fs-root {}: no such directory", root.display());
        }
    }
    if let Some(p) = &spec.engine.arp.playback {
        // issue 30, N21: the run verified the playback, then exited 121
        // saying the guest never called arpsim_start
        if let Some(file) = &spec.engine.arp.file {
            bail!(
                "-o {}: a playback run writes no data.arp (it verifies the guest against --playback {}); leave -o out",
                file.display(),
                p.display()
            );
        }
        if !p.is_file() {
            bail!(
                "--playback {}: no such file (a recorded data.arp)",
                p.display()
            );
        }
    }
    Ok(())
}

fn observers(
    profiler: &Option<Profiler>,
    callgrind: &Option<Rc<RefCell<CallgrindCollector>>>,
) -> Vec<Observer> {
    let mut observers: Vec<Observer> = profiler.iter().map(|p| p.observer()).collect();
    if let Some(c) = callgrind {
        observers.push(c.clone());
    }
    observers
}

/// SYS_GET_CMDLINE's text: the program's file name and its arguments.
pub fn guest_cmdline(elf: &Path, args: &[String]) -> String {
    let program = elf
        .file_name()
        .map_or("guest".into(), |n| n.to_string_lossy().into_owned());
    std::iter::once(program)
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs a prepared guest to its end, writes its outputs and verifies it.
/// An error only when the engine could not be set up (see
/// [`MachineError`]); a run that starts always finishes.
pub fn execute(spec: &RunSpec, prepared: Prepared) -> Result<Finished, MachineError> {
    let Prepared {
        target,
        image,
        options,
        profiler,
        callgrind,
        measured,
        progress,
        notes: _,
    } = prepared;
    let (name, clock) = (target.name.clone(), target.clock_hz);
    let outcome = engine::run(image, target, options);
    drop(progress);
    let outcome = outcome?;
    let mut report = Report::new(&outcome, &spec.elf.display().to_string(), &name, clock);
    let output_errors = write_profiles(&spec.outputs, &outcome, &report, profiler, callgrind);
    let verified = verify(spec, &outcome, &mut report, measured);
    let never_recorded = spec.engine.arp.file.is_some()
        && outcome.arp_file.is_none()
        && outcome.arp_error.is_none()
        && matches!(outcome.stop, Stop::Exit(_));
    let report_error = spec.outputs.report_json.as_ref().and_then(|path| {
        write_report(path, &report)
            .err()
            .map(|e| format!("writing {}: {e}", path.display()))
    });
    Ok(Finished {
        outcome,
        report,
        verified,
        output_errors,
        report_error,
        never_recorded,
    })
}

/// The report as JSON (the `--report-json` format), atomically.
pub fn write_report(path: &Path, report: &Report) -> std::io::Result<()> {
    let json = serde_json::to_string_pretty(report).map_err(std::io::Error::other)? + "\n";
    arpsim::output::write(path, json)
}

/// Writes the profile, callgrind and trace-event files; returns a message
/// for each that failed.
fn write_profiles(
    outputs: &Outputs,
    outcome: &RunOutcome,
    report: &Report,
    profiler: Option<Profiler>,
    callgrind: Option<Rc<RefCell<CallgrindCollector>>>,
) -> Vec<String> {
    let mut failed = Vec::new();
    let mut check = |what: &str, path: &Path, result: Result<()>| {
        if let Err(e) = result {
            let cause = arpsim::error::causes_once(e.as_ref());
            failed.push(format!("writing the {what} {}: {cause}", path.display()));
        }
    };
    if let (Some(p), Some(path)) = (&profiler, &outputs.profile) {
        check("profile", path, p.write(path).map_err(Into::into));
    }
    if let (Some(c), Some(path)) = (&callgrind, &outputs.callgrind) {
        let result = c.borrow().write(path);
        check("callgrind profile", path, result.map_err(Into::into));
    }
    if let Some(path) = &outputs.trace_events {
        let options = trace_events::TraceOptions {
            clock_hz: report.clock_hz,
            // named from the report: its sources are located already
            names: trace_events::names_from_sections(&report.sections),
            dropped: outcome.section_events_dropped,
            limit: Some(outputs.trace_limit),
            contexts: outcome.tasks.iter().map(|t| t.name.clone()).collect(),
            timeline: (!outcome.clock.changes().is_empty()).then(|| outcome.clock.clone()),
        };
        let result = trace_events::write(path, &outcome.section_events, &options);
        check("trace events", path, result.map_err(Into::into));
    }
    failed
}

/// Adds the playback prediction and the output check to the report;
/// returns whether everything that was to be verified was.
fn verify(
    spec: &RunSpec,
    outcome: &RunOutcome,
    report: &mut Report,
    measured: Option<u64>,
) -> bool {
    // a stopped run is not read the recording again: that read could be
    // as long as the load the stop cut short (issue 30, N09)
    let cut_short = matches!(outcome.stop, Stop::Interrupted(_) | Stop::Timeout(_));
    if let Some(recording) = spec.engine.arp.playback.as_ref().filter(|_| !cut_short) {
        let sequential = arpsim::tools::stats(recording)
            .ok()
            .map(|stats| report::recorded_total(&stats));
        report.predict(sequential, measured);
    } else if measured.is_some() {
        report.predict(None, measured);
    }
    let mut verified = report.playback.as_ref().is_none_or(|p| p.exact);
    if let Some(check) = outcome.output_check.as_ref().filter(|c| !c.matches) {
        verified = false;
        report.warnings.push(format!(
            "the guest's output ({} bytes) differs from --expect-output ({}){}",
            check.output_bytes,
            check.expected,
            check
                .first_difference_line
                .map_or_else(String::new, |l| format!(": first difference on line {l}"))
        ));
    }
    verified
}

/// The measured (parallel) cycles of another run's JSON report.
fn measured_cycles(path: &Path) -> Result<u64> {
    let text = arpsim::input::read_to_string(path, crate::model::limits::MAX_REPORT_BYTES)?;
    let json: serde_json::Value = serde_json::from_str(&text).context("not a JSON report")?;
    json["totals"]["cycles"]
        .as_u64()
        .context("no field totals.cycles: not a sim-host report (--report-json)")
}

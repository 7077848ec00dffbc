//! `sim-host arp dump|stats|plot|diff|convert|export-extrap`: look into,
//! compare and convert data.arp files (a thin layer over `arpsim::tools`).
//!
//! A data.arp holds section ids only (the ARP manual's format, kept byte
//! for byte); `--elf PROG.elf` names them from the program's code as every
//! other output does (`observe::section_names`: the `ato_kernel*` /
//! `ato_profile*` label, else the enter call's `function (file:line)`).
//!
//! `arp diff` exits 0, or 3 (`exit::GATE_FAILED`) when `--fail-over PCT`
//! is given and a section's total grew by more than PCT percent; an
//! unreadable file is an error (status 1, like the other `arp` commands).
//!
//! Standard output carries only data (the dump, the table, a converted
//! file written to `-`); status lines go to standard error. A reader that
//! closes standard output early (`sim-host arp dump data.arp | head`) has
//! all it wanted: the command then ends quietly with status 0.

use anyhow::{bail, Context, Result};
use arpsim::tools::{self, ConvertOptions};
use arpsim::types::{FileFormat, Mode};
use sim_host::image::elf::GuestImage;
use sim_host::model::exit;
use sim_host::say;
use sim_host::tools::gate;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

/// How the `arp` tools name sections.
#[derive(clap::Args)]
struct Names {
    /// Name the sections from this program (the ELF that wrote the file):
    /// its ato_kernel*/ato_profile* labels, else function (file:line) of
    /// the enter call; a data.arp itself holds only section ids.
    #[arg(long, value_name = "PROG.elf")]
    elf: Option<PathBuf>,
}

impl Names {
    /// The names by section id (none without `--elf`).
    fn load(&self) -> Result<BTreeMap<u16, String>> {
        name_map(self.elf.as_deref())
    }
}

fn name_map(elf: Option<&Path>) -> Result<BTreeMap<u16, String>> {
    let Some(elf) = elf else {
        return Ok(BTreeMap::new());
    };
    let image = GuestImage::inspect(elf).with_context(|| format!("--elf {}", elf.display()))?;
    let named = sim_host::observe::section_names::by_sid(&image);
    for w in &named.warnings {
        say!("sim-host: --elf {}: warning: {w}", elf.display());
    }
    Ok(named.names)
}

#[derive(clap::Subcommand)]
enum Command {
    /// Print every record as a readable table.
    Dump {
        file: PathBuf,
        #[command(flatten)]
        names: Names,
    },
    /// Per trace: count, mean, min, max, total.
    Stats {
        file: PathBuf,
        #[command(flatten)]
        names: Names,
    },
    /// Compare two runs section by section: count, mean and total (or,
    /// with --self, self cycles) of each, the change and its percentage,
    /// the largest change first; sections that appeared or vanished too.
    /// Each run is a data.arp (kernel and profiled sections) or a run
    /// report (`run --report-json`: every section, plain ones too).
    Diff(DiffArgs),
    /// Write measurements in Extra-P's JSON Lines input format, one line
    /// per run, call path and metric.
    ExportExtrap(ExportExtrapArgs),
    /// Convert between formats and modes (record_all -> record_average or
    /// record_histogram; the reverse is refused).
    Convert(ConvertArgs),
    /// Plot the cost of each section over its samples (record_all), or
    /// its histogram (record_histogram's log2 bins; --histogram: bins
    /// fitted to a record_all file's samples) as SVG or PNG; a section has
    /// the same colour in every plot.
    Plot(PlotArgs),
}

#[derive(clap::Args)]
struct ExportExtrapArgs {
    /// Runs as PARAM=VALUE[,PARAM=VALUE...]:FILE, e.g. n=1024:run.arp.
    #[arg(required = true)]
    runs: Vec<String>,
    /// Output file (JSON Lines; `-` for standard output).
    #[arg(short, long)]
    output: PathBuf,
    /// Section names from a SIR (`sim-host sir generate`).
    #[arg(long)]
    sir: Option<PathBuf>,
    /// Section names as NAME=SID.
    #[arg(long)]
    section: Vec<String>,
    /// Metric name of the values (default: cycles).
    #[arg(long, default_value = "cycles")]
    metric: String,
    /// Also write metric `executions`.
    #[arg(long)]
    counts: bool,
}

#[derive(clap::Args)]
struct DiffArgs {
    /// The earlier data.arp (the baseline), or run report.
    #[arg(value_name = "BASE.arp|BASE.json")]
    base: PathBuf,
    /// The later data.arp (or run report).
    #[arg(value_name = "NEW.arp|NEW.json")]
    new: PathBuf,
    #[command(flatten)]
    names: Names,
    /// Name BASE.arp's sections from this program (default: --elf's).
    #[arg(long, value_name = "PROG.elf")]
    base_elf: Option<PathBuf>,
    /// Exit with status 3 when a section's total grew by more than PCT
    /// percent of its base (0% fails on any growth; the simulation is
    /// deterministic).
    #[arg(long, value_name = "PCT", value_parser = parse_percent)]
    fail_over: Option<f64>,
    /// Write the comparison as JSON, to OUT or (without OUT) to standard
    /// output instead of the table.
    #[arg(long, value_name = "OUT", num_args = 0..=1, default_missing_value = "-")]
    json: Option<PathBuf>,
    /// Compare each section's self cycles (without the sections nested in
    /// it) instead of its total.
    #[arg(long = "self")]
    self_cycles: bool,
}

fn parse_percent(text: &str) -> std::result::Result<f64, String> {
    sim_host::tools::gate::parse_percent(text)
}

#[derive(clap::Args)]
struct ConvertArgs {
    input: PathBuf,
    /// The converted file (`-` for standard output).
    output: PathBuf,
    /// ascii or binary.
    #[arg(long, default_value = "ascii")]
    format: String,
    /// gzip the output.
    #[arg(long)]
    gzip: bool,
    /// Switch the data to this mode while converting.
    #[arg(long)]
    mode: Option<String>,
}

/// Runs an `arp` command; its exit status.
pub fn run(args: Args) -> Result<i32> {
    if let Command::Diff(args) = &args.command {
        return quiet_when_stdout_closed(diff(args).map(Some)).map(|s| s.unwrap_or(0));
    }
    let result = match args.command {
        Command::Dump { file, names } => {
            let names = names.load()?;
            print_to_stdout(|out| tools::dump_named(&file, &names, out))
        }
        Command::Stats { file, names } => {
            let names = names.load()?;
            let stats = tools::stats(&file)?;
            print_to_stdout(|out| tools::write_stats_named(&stats, &names, out))
        }
        Command::ExportExtrap(args) => export_extrap(args),
        Command::Convert(args) => convert(&args),
        Command::Plot(args) => plot_sections(&args),
        Command::Diff(_) => unreachable!("handled above"),
    };
    quiet_when_stdout_closed(result).map(|()| 0)
}

/// What `arp diff` compares of `file`: a run report's sections (named
/// by the report), or a data.arp's traces (named from `names`); their
/// totals, or with `self_cycles` their self cycles. The flag: whether
/// `file` is a data.arp.
fn diff_measures(
    file: &Path,
    names: &BTreeMap<u16, String>,
    self_cycles: bool,
) -> Result<(Vec<gate::Measured>, bool)> {
    use sim_host::tools::diff_source;
    let mut start = [0u8; 64];
    let read = std::fs::File::open(file)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut start))
        .with_context(|| format!("reading {}", file.display()))?;
    if diff_source::is_json(&start[..read]) {
        let cap = sim_host::model::limits::MAX_SUITE_FILE_BYTES;
        let text = arpsim::input::read_to_string(file, cap)
            .with_context(|| format!("reading {}", file.display()))?;
        let sections = diff_source::from_report(&text, file, self_cycles);
        return Ok((sections.map_err(anyhow::Error::msg)?, false));
    }
    let traces = measures(file, names)?;
    let traces = if self_cycles {
        diff_source::self_of_traces(&traces)
    } else {
        traces
    };
    Ok((traces, true))
}

/// Each trace's count and the total of the first callback set (cycles, as
/// sim-host records them), named from `names`.
fn measures(file: &Path, names: &BTreeMap<u16, String>) -> Result<Vec<gate::Measured>> {
    let stats = tools::stats(file)?;
    if stats.iter().any(|t| t.sets.is_empty()) {
        bail!(
            "{}: a record_histogram file holds no totals to compare (record with record_all or record_average)",
            file.display()
        );
    }
    Ok(stats
        .into_iter()
        .map(|t| {
            let count = u64::try_from(t.count).unwrap_or(u64::MAX);
            let total = t.sets.first().map_or(0.0, |s| s.total);
            let name = t.path.last().and_then(|sid| names.get(sid)).cloned();
            (t.path, name, gate::Measure::new(count, total))
        })
        .collect())
}

/// `sim-host arp diff`: the table (or JSON) and the gate's status.
fn diff(args: &DiffArgs) -> Result<i32> {
    if let Some(out) = &args.json {
        let mut inputs = vec![
            ("BASE.arp", args.base.as_path()),
            ("NEW.arp", args.new.as_path()),
        ];
        inputs.extend(args.names.elf.as_deref().map(|p| ("--elf", p)));
        inputs.extend(args.base_elf.as_deref().map(|p| ("--base-elf", p)));
        arpsim::output::check_files(&[("--json", out.as_path())], &inputs)
            .map_err(anyhow::Error::msg)?;
    }
    let new_names = args.names.load()?;
    let base_names = match &args.base_elf {
        Some(elf) => name_map(Some(elf))?,
        None => new_names.clone(),
    };
    let (base, base_arp) = diff_measures(&args.base, &base_names, args.self_cycles)?;
    let (new, new_arp) = diff_measures(&args.new, &new_names, args.self_cycles)?;
    if base_arp || new_arp {
        say!(
            "sim-host: note: a data.arp holds the kernel and profiled sections only; \
             compare the runs' reports (run --report-json) to see plain sections too"
        );
    }
    let figure = if args.self_cycles {
        "self cycles"
    } else {
        "total cycles"
    };
    let changes = gate::compare(&base, &new);
    let over: Vec<&gate::Change> = args
        .fail_over
        .map(|limit| changes.iter().filter(|c| c.over(limit)).collect())
        .unwrap_or_default();
    match &args.json {
        Some(out) => {
            let doc = gate::DiffJson {
                base: args.base.display().to_string(),
                new: args.new.display().to_string(),
                fail_over_percent: args.fail_over,
                compared: args.self_cycles.then_some("self_cycles"),
                failed: !over.is_empty(),
                sections: changes
                    .iter()
                    .map(|c| gate::ChangeJson::of(c, args.fail_over))
                    .collect(),
            };
            let text = serde_json::to_string_pretty(&doc)? + "\n";
            arpsim::output::write(out, text)
                .with_context(|| format!("writing {}", out.display()))?;
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(gate::table_of(&changes, args.fail_over, figure).as_bytes())
                .and_then(|()| out.flush())
                .context("writing standard output")?;
        }
    }
    if let Some(limit) = args.fail_over {
        for c in &over {
            sim_host::say!(
                "sim-host: section {} grew past {limit}%: {}",
                c.label(),
                // "cycles" as before issue 45; "self cycles" with --self
                c.numbers(if args.self_cycles {
                    "self cycles"
                } else {
                    "cycles"
                })
            );
        }
        if !over.is_empty() {
            return Ok(exit::GATE_FAILED);
        }
    }
    Ok(0)
}

#[derive(clap::Args)]
pub struct PlotArgs {
    /// The data.arp to draw.
    file: PathBuf,
    /// The legend names each line after its section (see `--elf`).
    #[command(flatten)]
    names: Names,
    /// The picture: FILE.svg or FILE.png.
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    /// Pixels, WIDTHxHEIGHT.
    #[arg(long, value_parser = parse_size)]
    size: Option<(u32, u32)>,
    /// A log scale on the y axis.
    #[arg(long)]
    log_y: bool,
    /// Of a record_all file: each section's samples per bin, in bins
    /// fitted to the data (Freedman–Diaconis, whole cycles).
    #[arg(long)]
    histogram: bool,
}

fn parse_size(text: &str) -> std::result::Result<(u32, u32), String> {
    let (w, h) = text
        .split_once('x')
        .ok_or_else(|| format!("`{text}`: expected WIDTHxHEIGHT, e.g. 900x560"))?;
    let number = |s: &str| {
        s.parse::<u32>()
            .map_err(|_| format!("`{text}`: not WIDTHxHEIGHT"))
    };
    let (w, h) = (number(w)?, number(h)?);
    let (min, max) = (plot::MIN_SIZE, plot::MAX_SIZE);
    if (min.0..=max.0).contains(&w) && (min.1..=max.1).contains(&h) {
        Ok((w, h))
    } else {
        Err(format!(
            "{w}x{h}: from {}x{} to {}x{}",
            min.0, min.1, max.0, max.1
        ))
    }
}

/// `sim-host arp plot`: written through `arpsim::output`, checked first.
fn plot_sections(args: &PlotArgs) -> Result<()> {
    let mut inputs = vec![("FILE", args.file.as_path())];
    inputs.extend(args.names.elf.as_deref().map(|p| ("--elf", p)));
    arpsim::output::check_files(&[("-o", args.output.as_path())], &inputs)
        .map_err(anyhow::Error::msg)?;
    let names = args.names.load()?;
    let mut opts = plot::PlotOptions::new(&format!("sections of {}", args.file.display()));
    if let Some((w, h)) = args.size {
        (opts.width, opts.height) = (w, h);
    }
    // a column of samples per pixel of width
    let chart = if args.histogram {
        sim_host::observe::sample_histogram::chart(&args.file, &names)?
    } else {
        sim_host::observe::section_plot::chart_named(&args.file, opts.width as usize, &names)?
    };
    opts.log_y = args.log_y;
    // a kernel has the same colour in every plot (issue 45)
    opts.styles_by_label = true;
    let ext = args
        .output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let bytes = match ext.as_deref() {
        Some("svg") => plot::svg(&chart, &opts)?.into_bytes(),
        Some("png") => {
            let png = plot::png(&chart, &opts)?;
            if png.missing_fonts {
                sim_host::say!("sim-host: warning: no system font found: the PNG has no labels");
            }
            png.data
        }
        _ => anyhow::bail!("-o {}: a .svg or .png file name", args.output.display()),
    };
    arpsim::output::write(&args.output, bytes)
        .with_context(|| format!("writing {}", args.output.display()))?;
    sim_host::say!("sim-host: {} written", args.output.display());
    Ok(())
}

/// Runs `print` on a buffered standard output and flushes it.
fn print_to_stdout(print: impl FnOnce(&mut dyn Write) -> arpsim::error::Result<()>) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    print(&mut out)?;
    out.flush().context("writing standard output")?;
    Ok(())
}

/// A broken pipe means the reader of our output (`| head`) stopped
/// reading: not an error of ours, so the command ends with status 0 and
/// prints nothing more.
fn quiet_when_stdout_closed<T: Default>(result: Result<T>) -> Result<T> {
    match result {
        Err(e) if is_broken_pipe(&e) => Ok(T::default()),
        other => other,
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn export_extrap(args: ExportExtrapArgs) -> Result<()> {
    use arpsim::measure::RunSpec;
    let runs = args
        .runs
        .iter()
        .map(|r| RunSpec::parse(r))
        .collect::<Result<Vec<_>, _>>()?;
    let mut inputs: Vec<(&str, &std::path::Path)> =
        runs.iter().map(|r| ("a run", r.path.as_path())).collect();
    inputs.extend(args.sir.as_deref().map(|p| ("--sir", p)));
    arpsim::output::check_files(&[("--output", &args.output)], &inputs)
        .map_err(anyhow::Error::msg)?;
    let names = section_names(args.sir.as_deref(), &args.section)?;
    let options = arpsim::extrap::ExportOptions {
        metric: args.metric,
        value_set: 0,
        counts: args.counts,
    };
    let mut text = Vec::new();
    let lines = arpsim::extrap::export(&runs, &names, &options, &mut text)?;
    arpsim::output::write(&args.output, text)
        .with_context(|| format!("writing {}", args.output.display()))?;
    sim_host::say!("{lines} lines written to {}", args.output.display());
    Ok(())
}

/// Section names from `--sir FILE` and `--section NAME=SID`.
fn section_names(sir: Option<&Path>, specs: &[String]) -> Result<arpsim::measure::SectionNames> {
    let mut names = arpsim::measure::SectionNames::default();
    if let Some(path) = sir {
        let file =
            std::fs::File::open(path).with_context(|| format!("--sir {}", path.display()))?;
        let file = arpsim::input::Capped::new(file, sim_host::model::limits::MAX_SIR_BYTES);
        let parsed = sir::parse(std::io::BufReader::new(file), &sir::ParseOptions::default())
            .map_err(|e| anyhow::anyhow!("{}:{e}", path.display()))?;
        let found = sir::arp::section_names(parsed.document)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        for (sid, name) in found {
            names.add(sid, &name, &path.display().to_string())?;
        }
    }
    for spec in specs {
        names.add_spec(spec)?;
    }
    Ok(names)
}

fn convert(args: &ConvertArgs) -> Result<()> {
    let options = ConvertOptions {
        format: file_format(&args.format)?,
        gzip: args.gzip,
        mode: args.mode.as_deref().map(mode).transpose()?,
    };
    arpsim::output::check_files(&[("OUTPUT", &args.output)], &[("INPUT", &args.input)])
        .map_err(anyhow::Error::msg)?;
    let records = tools::convert(&args.input, &args.output, &options)?;
    sim_host::say!("{records} records written to {}", args.output.display());
    Ok(())
}

fn file_format(name: &str) -> Result<FileFormat> {
    name.parse::<FileFormat>()
        .map_err(|e| anyhow::anyhow!("--format {e}"))
}

/// A recording mode (`arp convert` cannot convert to playback).
fn mode(name: &str) -> Result<Mode> {
    match Mode::from_name(name).filter(|m| Mode::RECORDING.contains(m)) {
        Some(m) => Ok(m),
        None => bail!(
            "--mode {name}: expected {}",
            Mode::expected(&Mode::RECORDING)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_broken_pipe_is_quiet() {
        let pipe = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        let wrapped = anyhow::Error::new(pipe).context("writing -");
        assert!(quiet_when_stdout_closed::<()>(Err(wrapped)).is_ok());
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert!(quiet_when_stdout_closed::<()>(Err(anyhow::Error::new(denied))).is_err());
    }
}

//! `chips-eval run`: LaRun with LaVarSet/LaVarClear, LaOutScr, LaOutAscii,
//! LaOutGraph, bottleneck analysis and tracing.

use super::ModelArgs;
use anyhow::Context;
use chips_eval::output::{self, Format, PointWriter};
use chips_eval::runtime::PointResult;
use chips_eval::{Breakdown, HardwareModel, Limits, Program, RunOptions, RunResults, Setting};
use clap::{Args, ValueEnum};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Table,
    Csv,
    Json,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Hardware model (TOML).
    #[arg(long, value_name = "HW.toml")]
    pub hardware: PathBuf,
    /// VAR=VALUE, VAR=A..B[:STEP], VAR=A..B:*FACTOR or VAR=v1,v2,...; repeatable.
    #[arg(long = "set", value_name = "VAR=VALUES")]
    pub set: Vec<String>,
    /// Output format of the results.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    /// Write the results to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Draw time against the first swept variable (SVG, or PNG for a .png name).
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    pub plot: Option<PathBuf>,
    /// Rank where the time goes by object, procedure, resource and device.
    #[arg(long)]
    pub breakdown: bool,
    /// Show procedure calls, option values and step times.
    #[arg(long)]
    pub trace: bool,
    /// Statements one evaluation may execute.
    #[arg(long, default_value_t = Limits::default().step_budget)]
    pub step_budget: u64,
    /// Deepest nesting of calls.
    #[arg(long, default_value_t = Limits::default().max_depth)]
    pub max_depth: usize,
    /// Most points a sweep may have (the product of the --set sizes),
    /// checked before anything is evaluated.
    #[arg(long, default_value_t = chips_eval::runtime::DEFAULT_MAX_POINTS)]
    pub max_points: u64,
}

pub fn execute(a: RunArgs) -> anyhow::Result<()> {
    // Every output is checked before the model is even loaded.
    let outputs: Vec<(&str, &Path)> = [("-o", &a.output), ("--plot", &a.plot)]
        .into_iter()
        .filter_map(|(option, p)| p.as_deref().map(|p| (option, p)))
        .collect();
    arpsim::output::preflight(&outputs).map_err(anyhow::Error::msg)?;
    let hw = HardwareModel::load(&a.hardware)?;
    let prog = Program::load(&a.model.app, &a.model.load_options(), Some(&hw))?;
    let settings = a
        .set
        .iter()
        .map(|s| Setting::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    // Before the output file is created or anything is evaluated.
    chips_eval::runtime::sweep_size(&settings, a.max_points)?;
    let opts = RunOptions {
        limits: Limits {
            step_budget: a.step_budget,
            max_depth: a.max_depth,
        },
        trace: a.trace,
        max_points: a.max_points,
    };
    let (total, plotted) = write_points(&a, &prog, &hw, &settings, opts)?;
    if a.breakdown {
        println!("{}", output::render_breakdown_total(&total));
    }
    if let Some(path) = &a.plot {
        let results = RunResults {
            variables: settings.iter().map(|s| s.name.clone()).collect(),
            points: plotted,
        };
        write_plot(
            path,
            &results,
            &format!("{} on {}", prog.object(prog.app).name, hw.name),
        )?;
    }
    Ok(())
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Table => Format::Table,
            FormatArg::Csv => Format::Csv,
            FormatArg::Json => Format::Json,
        }
    }
}

/// Evaluates every point and writes it to the output as it comes; returns
/// the breakdown summed over the points and, for `--plot`, the points
/// without their traces and breakdowns. `-o FILE` goes through
/// `arpsim::output`: written beside and renamed when the run succeeds (a
/// failed run leaves the previous file), or in place for a device or FIFO.
fn write_points(
    a: &RunArgs,
    prog: &Program,
    hw: &HardwareModel,
    settings: &[Setting],
    opts: RunOptions,
) -> anyhow::Result<(Breakdown, Vec<PointResult>)> {
    let Some(path) = a.output.as_deref() else {
        let stdout = BufWriter::new(std::io::stdout().lock());
        return Ok(stream_points(a, stdout, None, prog, hw, settings, opts)?.0);
    };
    let out =
        arpsim::output::Output::create(path).with_context(|| format!("-o {}", path.display()))?;
    let (result, out) =
        stream_points(a, BufWriter::new(out), Some(path), prog, hw, settings, opts)?;
    let out = out
        .into_inner()
        .map_err(|e| output_error(Some(path), e.into_error()))?;
    out.commit().map_err(|e| output_error(Some(path), e))?;
    Ok(result)
}

type Streamed<W> = ((Breakdown, Vec<PointResult>), W);

fn stream_points<W: Write>(
    a: &RunArgs,
    sink: W,
    out: Option<&Path>,
    prog: &Program,
    hw: &HardwareModel,
    settings: &[Setting],
    opts: RunOptions,
) -> anyhow::Result<Streamed<W>> {
    let variables: Vec<String> = settings.iter().map(|s| s.name.clone()).collect();
    let mut writer = PointWriter::new(sink, a.format.into(), &variables);
    writer.begin().map_err(|e| output_error(out, e))?;
    let mut total = Breakdown::default();
    let mut plotted = Vec::new();
    chips_eval::runtime::run_each(prog, hw, settings, opts, |mut p| {
        for line in &p.printed {
            eprintln!("print: {line}");
        }
        if a.trace {
            eprint!("{}", output::render_point_trace(&p));
        }
        writer.point(&p).map_err(|e| output_error(out, e))?;
        if a.breakdown {
            total.merge(&p.breakdown);
        }
        if a.plot.is_some() {
            // The plot needs every point's settings and time, nothing more.
            p.breakdown = Breakdown::default();
            p.trace = Vec::new();
            p.printed = Vec::new();
            plotted.push(p);
        }
        Ok(())
    })?;
    let sink = writer.finish().map_err(|e| output_error(out, e))?;
    Ok(((total, plotted), sink))
}

fn output_error(path: Option<&Path>, source: std::io::Error) -> chips_eval::Error {
    chips_eval::Error::Io {
        path: path.map_or_else(|| "standard output".into(), |p| p.display().to_string()),
        error: source,
    }
}

fn write_plot(path: &Path, results: &RunResults, title: &str) -> anyhow::Result<()> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let data = match ext.as_deref() {
        Some("svg") => chips_eval::plot::svg(results, title)?.into_bytes(),
        Some("png") => {
            let png = chips_eval::plot::png(results, title)?;
            if png.missing_fonts {
                eprintln!(
                    "warning: --plot {}: no system font found, so the PNG has no labels; \
                     install one (e.g. Debian package fonts-dejavu-core)",
                    path.display()
                );
            }
            png.data
        }
        _ => anyhow::bail!(
            "--plot {}: only SVG and PNG output are supported (use a .svg or .png file name)",
            path.display()
        ),
    };
    arpsim::output::write(path, data).with_context(|| format!("writing {}", path.display()))
}

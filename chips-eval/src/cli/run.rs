//! `chips-eval run`: LaRun with LaVarSet/LaVarClear, LaOutScr, LaOutAscii,
//! LaOutGraph, bottleneck analysis and tracing.

use crate::cli::args::{FormatArg, ModelArgs};
use anyhow::Context;
use chips_eval::output::{self, PointWriter, ShardHeader, POINT_INDEX};
use chips_eval::plot::{PlotOptions, MAX_SIZE, MIN_SIZE};
use chips_eval::runtime::PointResult;
use chips_eval::shard::Shard;
use chips_eval::{Breakdown, HardwareModel, Limits, Program, RunOptions, RunResults, Setting};
use clap::Args;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

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
    /// Plot the time on a log scale (ticks at powers of 10); every time must be above 0.
    #[arg(long, requires = "plot")]
    pub log_y: bool,
    /// The plot's size in pixels, from 200x150 to 8000x8000.
    #[arg(long, value_name = "WxH", requires = "plot", value_parser = parse_size,
          default_value = "720x480")]
    pub size: PlotSize,
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
    /// Evaluate only the K-th of N shards of the sweep (points K-1, K-1+N,
    /// K-1+2N, ...), for `chips-eval merge`; needs --format csv or json.
    #[arg(long, value_name = "K/N", value_parser = parse_shard, conflicts_with = "plot")]
    pub shard: Option<Shard>,
}

fn parse_shard(text: &str) -> Result<Shard, String> {
    text.parse()
}

/// What a run evaluates.
struct Sweep<'a> {
    prog: &'a Program,
    hw: &'a HardwareModel,
    settings: &'a [Setting],
    opts: RunOptions,
    /// `--shard`: the part evaluated and what its output says about it.
    shard: Option<ShardHeader>,
}

pub fn execute(a: RunArgs) -> anyhow::Result<()> {
    // Every output is checked before the model is even loaded.
    let outputs: Vec<(&str, &Path)> = [("-o", &a.output), ("--plot", &a.plot)]
        .into_iter()
        .filter_map(|(option, p)| p.as_deref().map(|p| (option, p)))
        .collect();
    let mut inputs = vec![
        ("--hardware", a.hardware.as_path()),
        ("APP", a.model.app.as_path()),
    ];
    inputs.extend(a.model.vectors.iter().map(|v| ("--vectors", v.as_path())));
    arpsim::output::check_files(&outputs, &inputs).map_err(anyhow::Error::msg)?;
    let hw = HardwareModel::load(&a.hardware)?;
    let prog = Program::load(&a.model.app, &a.model.load_options(), Some(&hw))?;
    // the objects found through -I are known now, before anything is written
    let objects = chips_eval::shard::model_files(&prog, &a.model.vectors);
    arpsim::output::check_files(&outputs, &objects).map_err(anyhow::Error::msg)?;
    let settings = a
        .set
        .iter()
        .map(|s| Setting::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    // Before the output file is created or anything is evaluated.
    let total_points = chips_eval::sweep::sweep_size(&settings, a.max_points)?;
    let shard = match a.shard {
        Some(shard) => Some(shard_header(&a, &prog, &settings, shard, total_points)?),
        None => None,
    };
    let opts = RunOptions {
        limits: Limits {
            step_budget: a.step_budget,
            max_depth: a.max_depth,
        },
        trace: a.trace,
        max_points: a.max_points,
    };
    let sweep = Sweep {
        prog: &prog,
        hw: &hw,
        settings: &settings,
        opts,
        shard,
    };
    let (total, plotted) = write_points(&a, &sweep)?;
    if a.breakdown {
        println!("{}", output::render_breakdown_total(&total));
    }
    if let Some(path) = &a.plot {
        let results = RunResults {
            variables: settings.iter().map(|s| s.name.clone()).collect(),
            points: plotted,
        };
        let opts = PlotOptions {
            title: format!("{} on {}", prog.object(prog.app).name, hw.name),
            width: a.size.width,
            height: a.size.height,
            log_y: a.log_y,
            ..PlotOptions::new("")
        };
        write_plot(path, &results, &opts)?;
    }
    Ok(())
}

/// What a shard's output records so `merge` can check and order it.
fn shard_header(
    a: &RunArgs,
    prog: &Program,
    settings: &[Setting],
    shard: Shard,
    total_points: u64,
) -> anyhow::Result<ShardHeader> {
    if matches!(a.format, FormatArg::Table) {
        anyhow::bail!("--shard {shard}: use --format csv or json (a table cannot be merged)");
    }
    if let Some(s) = settings.iter().find(|s| s.name == POINT_INDEX) {
        anyhow::bail!(
            "--shard {shard}: a swept variable is named `{}`, the column that numbers a shard's points",
            s.name
        );
    }
    let files = chips_eval::shard::model_files(prog, &a.model.vectors);
    Ok(ShardHeader {
        sweep: chips_eval::shard::sweep_hash(&files, &a.hardware, settings)?,
        shard,
        total_points,
    })
}

/// Evaluates every point and writes it to the output as it comes; returns
/// the breakdown summed over the points and, for `--plot`, the points
/// without their traces and breakdowns. `-o FILE` goes through
/// `arpsim::output`: written beside and renamed when the run succeeds (a
/// failed run leaves the previous file), or in place for a device or FIFO.
fn write_points(a: &RunArgs, sweep: &Sweep) -> anyhow::Result<(Breakdown, Vec<PointResult>)> {
    let Some(path) = a.output.as_deref() else {
        let stdout = BufWriter::new(std::io::stdout().lock());
        return Ok(stream_points(a, stdout, None, sweep)?.0);
    };
    let out =
        arpsim::output::Output::create(path).with_context(|| format!("-o {}", path.display()))?;
    let (result, out) = stream_points(a, BufWriter::new(out), Some(path), sweep)?;
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
    sweep: &Sweep,
) -> anyhow::Result<Streamed<W>> {
    let variables: Vec<String> = sweep.settings.iter().map(|s| s.name.clone()).collect();
    let mut writer = PointWriter::new(sink, a.format.into(), &variables);
    if let Some(header) = &sweep.shard {
        writer = writer.for_shard(header.clone());
    }
    writer.begin().map_err(|e| output_error(out, e))?;
    let mut total = Breakdown::default();
    let mut plotted = Vec::new();
    let part = sweep.shard.as_ref().map_or(Shard::WHOLE, |h| h.shard);
    let (prog, hw, settings) = (sweep.prog, sweep.hw, sweep.settings);
    chips_eval::runtime::run_shard(prog, hw, settings, sweep.opts, part, |index, mut p| {
        for line in &p.printed {
            eprintln!("print: {line}");
        }
        if a.trace {
            eprint!("{}", output::render_point_trace(&p));
        }
        let written = match sweep.shard {
            Some(_) => writer.indexed_point(index, &p),
            None => writer.point(&p),
        };
        written.map_err(|e| output_error(out, e))?;
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

fn write_plot(path: &Path, results: &RunResults, opts: &PlotOptions) -> anyhow::Result<()> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let data = match ext.as_deref() {
        Some("svg") => chips_eval::plot::svg(results, opts)?.into_bytes(),
        Some("png") => {
            let png = chips_eval::plot::png(results, opts)?;
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

/// `--size WxH` in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlotSize {
    pub width: u32,
    pub height: u32,
}

/// Parses `WxH` and checks it lies between [`MIN_SIZE`] and [`MAX_SIZE`]
/// (clap turns an error into a usage error, exit status 2).
fn parse_size(text: &str) -> Result<PlotSize, String> {
    let usage = || format!("`{text}`: expected WIDTHxHEIGHT in pixels, e.g. 1200x800");
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(usage)?;
    let width: u32 = w.trim().parse().map_err(|_| usage())?;
    let height: u32 = h.trim().parse().map_err(|_| usage())?;
    let (min, max) = (MIN_SIZE, MAX_SIZE);
    if !(min.0..=max.0).contains(&width) || !(min.1..=max.1).contains(&height) {
        return Err(format!(
            "`{text}`: the width must be {}..{} and the height {}..{} pixels",
            min.0, max.0, min.1, max.1
        ));
    }
    Ok(PlotSize { width, height })
}

//! `chips-eval run`: LaRun with LaVarSet/LaVarClear, LaOutScr, LaOutAscii,
//! LaOutGraph, bottleneck analysis and tracing.

use super::ModelArgs;
use anyhow::Context;
use chips_eval::output::{self, Format};
use chips_eval::{HardwareModel, Limits, Program, RunOptions, Setting};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

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
}

pub fn execute(a: RunArgs) -> anyhow::Result<()> {
    let hw = HardwareModel::load(&a.hardware)?;
    let prog = Program::load(&a.model.app, &a.model.load_options(), Some(&hw))?;
    let settings = a
        .set
        .iter()
        .map(|s| Setting::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let opts = RunOptions {
        limits: Limits {
            step_budget: a.step_budget,
            max_depth: a.max_depth,
        },
        trace: a.trace,
    };
    let results = chips_eval::run(&prog, &hw, &settings, opts)?;
    for p in &results.points {
        for line in &p.printed {
            eprintln!("print: {line}");
        }
    }
    if a.trace {
        eprint!("{}", output::render_trace(&results));
    }
    let format = match a.format {
        FormatArg::Table => Format::Table,
        FormatArg::Csv => Format::Csv,
        FormatArg::Json => Format::Json,
    };
    let text = output::render(&results, format);
    match &a.output {
        Some(path) => {
            std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?
        }
        None => print!("{text}"),
    }
    if a.breakdown {
        println!("{}", output::render_breakdown(&results));
    }
    if let Some(path) = &a.plot {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        let title = format!("{} on {}", prog.object(prog.app).name, hw.name);
        let data = match ext.as_deref() {
            Some("svg") => chips_eval::plot::svg(&results, &title)?.into_bytes(),
            Some("png") => {
                let png = chips_eval::plot::png(&results, &title)?;
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
        std::fs::write(path, data).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

//! `sim-host arp dump|stats|convert`: look into and convert data.arp files
//! (a thin layer over `arpsim::tools`).

use anyhow::{bail, Context, Result};
use arpsim::tools::{self, ConvertOptions};
use arpsim::types::{FileFormat, Mode};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Print every record as a readable table.
    Dump { file: PathBuf },
    /// Per trace: count, mean, min, max, total.
    Stats { file: PathBuf },
    /// Write measurements in Extra-P's JSON Lines input format, one line
    /// per run, call path and metric.
    ExportExtrap {
        /// Runs as PARAM=VALUE[,PARAM=VALUE...]:FILE, e.g. n=1024:run.arp.
        #[arg(required = true)]
        runs: Vec<String>,
        /// Output file (JSON Lines).
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
    },
    /// Convert between formats and modes (record_all -> record_average or
    /// record_histogram; the reverse is refused).
    Convert {
        input: PathBuf,
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
    },
}

pub fn run(args: Args) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.command {
        Command::Dump { file } => tools::dump(&file, &mut out)?,
        Command::Stats { file } => {
            let stats = tools::stats(&file)?;
            tools::write_stats(&stats, &mut out)?;
        }
        Command::ExportExtrap {
            runs,
            output,
            sir,
            section,
            metric,
            counts,
        } => {
            use arpsim::measure::{RunSpec, SectionNames};
            let runs = runs
                .iter()
                .map(|r| RunSpec::parse(r))
                .collect::<Result<Vec<_>, _>>()?;
            let mut names = SectionNames::default();
            if let Some(path) = &sir {
                let file = std::fs::File::open(path)
                    .with_context(|| format!("--sir {}", path.display()))?;
                let parsed =
                    sir::parse(std::io::BufReader::new(file), &sir::ParseOptions::default())
                        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                let found = sir::arp::section_names(parsed.document)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                for (sid, name) in found {
                    names.add(sid, &name, &path.display().to_string())?;
                }
            }
            for spec in &section {
                names.add_spec(spec)?;
            }
            let options = arpsim::extrap::ExportOptions {
                metric,
                value_set: 0,
                counts,
            };
            let mut text = Vec::new();
            let lines = arpsim::extrap::export(&runs, &names, &options, &mut text)?;
            arpsim::output::write(&output, text)
                .with_context(|| format!("writing {}", output.display()))?;
            writeln!(out, "{lines} lines written to {}", output.display())?;
        }
        Command::Convert {
            input,
            output,
            format,
            gzip,
            mode,
        } => {
            let format = match format.as_str() {
                "ascii" => FileFormat::Ascii,
                "binary" => FileFormat::Binary,
                other => bail!("--format {other}: expected ascii or binary"),
            };
            let mode = match mode.as_deref() {
                None => None,
                Some("record_average") => Some(Mode::RecordAverage),
                Some("record_histogram") => Some(Mode::RecordHistogram),
                Some("record_all") => Some(Mode::RecordAll),
                Some(other) => {
                    bail!("--mode {other}: expected record_average, record_histogram or record_all")
                }
            };
            let records = tools::convert(&input, &output, &ConvertOptions { format, gzip, mode })?;
            writeln!(out, "{records} records written to {}", output.display())?;
        }
    }
    Ok(())
}

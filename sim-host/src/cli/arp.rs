//! `sim-host arp dump|stats|convert`: look into and convert data.arp files
//! (a thin layer over `arpsim::tools`).

use anyhow::{bail, Result};
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

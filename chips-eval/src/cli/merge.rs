//! `chips-eval merge`: shard outputs of `run --shard K/N` back into the
//! output of the whole sweep. Exit status: 0 when merged, 124 when points
//! are missing or duplicated (a shard missing, given twice or cut short;
//! nothing is written), 1 when a file is unreadable, not a shard output,
//! of another sweep, or the output cannot be written.

use crate::cli::args::FormatArg;
use anyhow::Context;
use chips_eval::merge::{self, Merged};
use clap::Args;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The shards' outputs (CSV or JSON written with `run --shard K/N`).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write the merged output here instead of standard output.
    #[arg(long, short = 'o', value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// The merged output's format: that of the shards (the default), as
    /// only their own text reproduces a whole run byte for byte.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
}

pub fn execute(a: MergeArgs) -> anyhow::Result<()> {
    if let Some(path) = &a.output {
        let inputs: Vec<(&str, &Path)> = a.files.iter().map(|f| ("FILE", f.as_path())).collect();
        arpsim::output::check_files(&[("-o", path.as_path())], &inputs)
            .map_err(anyhow::Error::msg)?;
    }
    if matches!(a.format, Some(FormatArg::Table)) {
        anyhow::bail!("--format table: shards are CSV or JSON, and so is their merge");
    }
    let parts = a
        .files
        .iter()
        .map(|f| merge::read(f))
        .collect::<Result<Vec<_>, _>>()?;
    let merged = merge::merge(parts, a.format.map(Into::into))?;
    match &a.output {
        Some(path) => write_file(path, &merged),
        None => {
            let out = merged.write(BufWriter::new(std::io::stdout().lock()))?;
            out.into_inner()
                .map_err(|e| e.into_error())?
                .flush()
                .context("writing standard output")
        }
    }
}

/// Through `arpsim::output`: the file appears complete or not at all.
fn write_file(path: &Path, merged: &Merged) -> anyhow::Result<()> {
    let context = || format!("-o {}", path.display());
    let out = arpsim::output::Output::create(path).with_context(context)?;
    let out = merged.write(BufWriter::new(out)).with_context(context)?;
    let out = out
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(context)?;
    out.commit().with_context(context)
}

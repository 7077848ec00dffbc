//! Options that several subcommands share.

use chips_eval::output::Format;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Options shared by the subcommands that load a model.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// The application object's file (APP.la).
    pub app: PathBuf,
    /// Directory searched for included objects (NAME.la); repeatable.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Extra vector type definitions (vctdef syntax); repeatable.
    #[arg(long = "vectors", value_name = "FILE.vct")]
    pub vectors: Vec<PathBuf>,
}

impl ModelArgs {
    pub fn load_options(&self) -> chips_eval::LoadOptions {
        chips_eval::LoadOptions {
            search_path: self.include.clone(),
            vector_files: self.vectors.clone(),
        }
    }
}

/// `--format` of `run` and `merge`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Table,
    Csv,
    Json,
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

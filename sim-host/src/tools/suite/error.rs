//! What goes wrong with manifests and result files, and reading and
//! writing them.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("{file}: cannot read: {source}")]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Syntax { file: PathBuf, message: String },
    #[error("{file}: entry {index} ({name}): {message}")]
    Entry {
        file: PathBuf,
        index: usize,
        name: String,
        message: String,
    },
    #[error("{file}: entry {index} ({name}): field `{field}`: {message}")]
    Field {
        file: PathBuf,
        index: usize,
        name: String,
        field: &'static str,
        message: String,
    },
    #[error("{file}: no entries (expected [[entry]] tables)")]
    Empty { file: PathBuf },
    #[error("{file}: cannot write: {source}")]
    Write {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: not a suite result: {message}")]
    Corrupt { file: PathBuf, message: String },
    #[error("{file}: {message}")]
    Mismatch { file: PathBuf, message: String },
}

/// The text of a manifest or result file, or the error naming it.
pub(super) fn read_text(path: &Path) -> Result<String, SuiteError> {
    let cap = crate::model::limits::MAX_SUITE_FILE_BYTES;
    arpsim::input::read_to_string(path, cap).map_err(|source| SuiteError::Read {
        file: path.to_owned(),
        source,
    })
}

/// A result file at `path` that is not what `sim-host suite` writes.
pub(super) fn corrupt(path: &Path, message: String) -> SuiteError {
    SuiteError::Corrupt {
        file: path.to_owned(),
        message,
    }
}

/// Writes a report file (atomically, never over a device: see
/// `arpsim::output`).
pub fn write_output(path: &Path, text: &str) -> Result<(), SuiteError> {
    arpsim::output::write(path, text).map_err(|source| SuiteError::Write {
        file: path.to_owned(),
        source,
    })
}

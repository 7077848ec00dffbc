//! The library's error type.

use crate::diagnostic::{Diagnostics, Span};
use crate::hardware::HardwareError;
use std::fmt;

/// A failure while evaluating a model, located in the source where known.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalError {
    pub file: String,
    pub span: Span,
    pub message: String,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.file.is_empty() {
            write!(f, "evaluation error: {}", self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: evaluation error: {}",
                self.file, self.span.line, self.span.col, self.message
            )
        }
    }
}

impl std::error::Error for EvalError {}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Lexer, parser or checker diagnostics (several per run).
    #[error("{0}")]
    Diagnostics(Diagnostics),
    #[error(transparent)]
    Hardware(#[from] HardwareError),
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// A malformed run-time request (`--set`, output format).
    #[error("{0}")]
    Usage(String),
    /// Not `source`: a source would be printed again as the cause
    /// (`app.la: No such file: No such file`).
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
}

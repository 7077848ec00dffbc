//! Typed errors. Every error carries the manual's severity (`arp_error_t`,
//! manual 6.1.1) so that the C library can hand it to the error callback.

use crate::types::{Sid, Tid};
use std::fmt;

/// The manual's error types (`arp_error_t`, manual 6.1.1), in code order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Severity {
    Warning = 0,
    Fatal = 1,
    NonFatal = 2,
    Syntax = 3,
    Io = 4,
}

// `quote` lives in the leaf module `text` (the types quote input too, and
// they must not depend on the errors); kept here under its old path for
// the crates that name `arpsim::error::quote`.
pub use crate::text::{quote, QUOTE_CHARS};

/// An error and its causes on one line for a person, `top: cause: cause`,
/// each cause once: a cause whose text the message already holds is left
/// out (messages often quote their source, and `{:#}` would print it
/// twice). The binaries print every error through this.
pub fn causes_once(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut cause = Some(error);
    while let Some(e) = cause {
        let part = e.to_string();
        if !text.contains(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
        cause = e.source();
    }
    text
}

/// Where in a `data.arp` file a format error was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// ASCII format: 1-based line, and 1-based column when known (0 = none).
    Line { line: u64, column: u32 },
    /// Binary format: byte offset in the (decompressed) stream.
    Offset(u64),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Location::Line { line, column: 0 } => write!(f, "line {line}"),
            Location::Line { line, column } => write!(f, "line {line}, column {column}"),
            Location::Offset(o) => write!(f, "byte offset {o}"),
        }
    }
}

/// A malformed or truncated `data.arp` file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {reason}")]
pub struct FormatError {
    pub location: Location,
    pub reason: String,
}

impl FormatError {
    pub fn at_line(line: u64, column: u32, reason: impl Into<String>) -> Self {
        FormatError {
            location: Location::Line { line, column },
            reason: reason.into(),
        }
    }
    pub fn at_offset(offset: u64, reason: impl Into<String>) -> Self {
        FormatError {
            location: Location::Offset(offset),
            reason: reason.into(),
        }
    }
}

/// [`ArpError::NotStarted`], made only when it is the answer: an
/// `ok_or(ArpError::NotStarted)` builds the error on every call and then
/// drops it, an out-of-line drop of the whole enum per ARP call.
pub(crate) fn not_started() -> ArpError {
    ArpError::NotStarted
}

/// Every error of the crate.
#[derive(Debug, thiserror::Error)]
pub enum ArpError {
    #[error("arp_start has not been called")]
    NotStarted,
    #[error("arp_start was already called")]
    AlreadyStarted,
    #[error("{what} must be called before arp_start")]
    AfterStart { what: &'static str },
    #[error("thread id {tid} is above the maximum thread id {max} given to arp_start")]
    TidOutOfRange { tid: Tid, max: Tid },
    #[error("section id {sid} is above the maximum section id {max} given to arp_start")]
    SidOutOfRange { sid: Sid, max: Sid },
    #[error("thread {tid}: kernel section {inner} entered inside kernel section {outer}; kernel sections must not be nested (manual 2.1)")]
    KernelNested { tid: Tid, outer: Sid, inner: Sid },
    #[error("thread {tid}: leave of section {left} does not match the innermost entered section {innermost}")]
    LeaveMismatch { tid: Tid, left: Sid, innermost: Sid },
    #[error(
        "thread {tid}: leave of {kind} section {sid} but it was entered as a {entered} section"
    )]
    LeaveKindMismatch {
        tid: Tid,
        sid: Sid,
        kind: &'static str,
        entered: &'static str,
    },
    #[error("thread {tid}: leave of section {sid} without a matching enter")]
    LeaveWithoutEnter { tid: Tid, sid: Sid },
    #[error("arp_finish with sections still open: {open}")]
    OpenSectionsAtFinish { open: String },
    #[error("thread {tid} joined with sections still open: {open}")]
    OpenSectionsAtJoin { tid: Tid, open: String },
    #[error("arp_spawned: thread {child} already exists")]
    ThreadExists { child: Tid },
    #[error("arp_join: thread {tid} was never spawned")]
    JoinUnknownThread { tid: Tid },
    #[error("playback: thread {tid}: no recorded sample for section {sid} at trace {path}")]
    NoRecordedSample { tid: Tid, sid: Sid, path: String },
    #[error("playback needs {needed} callback set(s) of types {needed_types}, the recording has {found_types}")]
    CallbackMismatch {
        needed: usize,
        needed_types: String,
        found_types: String,
    },
    #[error(
        "thread {tid}: section {sid} would make more than {cap} distinct section paths \
         (traces); a run keeps the statistics of at most that many"
    )]
    TooManyPaths { tid: Tid, sid: Sid, cap: usize },
    #[error("no callback set was added before arp_start")]
    NoCallbacks,
    #[error("cannot switch from {from} to {to}: the individual samples are not in the data (manual 6.4)")]
    SwitchRefused {
        from: &'static str,
        to: &'static str,
    },
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {source}")]
    Format {
        path: String,
        #[source]
        source: FormatError,
    },
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{count} thread(s) still running at arp_finish (manual 3.4.2)")]
    TrailingThreads { count: usize },
    #[error("playback: {0}")]
    PlaybackInexact(String),
    /// A long wait or load given up for a stop signal or a time-out; the
    /// caller reports the stop, not this error.
    #[error("stopped: {0}")]
    Stopped(String),
    /// A panic caught at the C boundary (libarp): a bug of the library,
    /// never of the caller.
    #[error("internal error of the ARP library (a bug; please report it): {0}")]
    Internal(String),
}

impl ArpError {
    /// The manual's error type for this error (manual 6.1.1).
    pub fn severity(&self) -> Severity {
        use ArpError::*;
        match self {
            TrailingThreads { .. } | PlaybackInexact(_) => Severity::Warning,
            Format { .. } => Severity::Syntax,
            Io { .. } => Severity::Io,
            NoRecordedSample { .. }
            | OpenSectionsAtFinish { .. }
            | OpenSectionsAtJoin { .. }
            | SwitchRefused { .. } => Severity::NonFatal,
            _ => Severity::Fatal,
        }
    }

    pub(crate) fn io(path: impl Into<String>, source: std::io::Error) -> Self {
        ArpError::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result type of the crate.
pub type Result<T, E = ArpError> = std::result::Result<T, E>;

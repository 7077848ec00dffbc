//! Stopping cleanly on SIGINT, SIGTERM and SIGHUP.
//!
//! The first signal asks every run that watches the [`StopRequest`] to
//! stop at its next block boundary; the run then writes its report and a
//! data.arp marked partial, and the process exits with 128 + the signal's
//! number (130, 143, 129). A second signal exits at once, after removing
//! every temporary output file (`arpsim::output::remove_temporaries`), so
//! a user who insists is obeyed and still left with no debris.
//!
//! Handlers are installed even when the signal was inherited as ignored
//! (a background job's SIGINT): a run must always be stoppable.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

pub use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};

/// The signals that stop a run.
pub const STOP_SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// Shared by the signal thread and every run: 0 until a stop signal
/// arrives, then that signal's number.
#[derive(Clone, Debug, Default)]
pub struct StopRequest(Arc<AtomicI32>);

impl StopRequest {
    /// A request no signal sets (tests set it by hand).
    pub fn new() -> StopRequest {
        StopRequest::default()
    }

    /// The signal that asked to stop, if one did.
    pub fn signal(&self) -> Option<i32> {
        // Negative values are the debugger's interrupt requests, not signals.
        match self.0.load(Ordering::Relaxed) {
            s if s > 0 => Some(s),
            _ => None,
        }
    }

    /// Asks to stop as if `signal` had arrived; returns the signal of an
    /// earlier request, which stays the one the run reports.
    pub fn request(&self, signal: i32) -> Option<i32> {
        let mut current = self.0.load(Ordering::SeqCst);
        loop {
            if current > 0 {
                return Some(current);
            }
            // 0, or a debugger's pending interrupt: the signal takes over.
            match self
                .0
                .compare_exchange(current, signal, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return None,
                Err(now) => current = now,
            }
        }
    }

    /// The flag the machine polls at block boundaries.
    pub fn flag(&self) -> Arc<AtomicI32> {
        Arc::clone(&self.0)
    }
}

/// The name of a stop signal, for messages.
pub fn name(signal: i32) -> String {
    match signal {
        SIGINT => "SIGINT (Ctrl-C)".into(),
        SIGTERM => "SIGTERM".into(),
        SIGHUP => "SIGHUP".into(),
        other => format!("signal {other}"),
    }
}

/// Why a run stopped by `signal` stopped, for its report: gdb's `kill`
/// ends the run as if by SIGKILL (exit 137), which no process receives as
/// a signal it can handle, so 9 is the debugger (it was reported as
/// "interrupted by signal 9"; issue 30, N06).
pub fn stop_cause(signal: i32) -> String {
    if signal == crate::model::exit::KILLED_BY_DEBUGGER {
        "killed by the debugger (gdb's `kill`)".into()
    } else {
        format!("interrupted by {}", name(signal))
    }
}

/// Installs the handlers and returns the request they set. Called once per
/// process by the commands that run guests.
pub fn install() -> std::io::Result<StopRequest> {
    let request = StopRequest::new();
    let mut signals = signal_hook::iterator::Signals::new(STOP_SIGNALS)?;
    let seen = request.clone();
    std::thread::Builder::new()
        .name("stop-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                // a wait for a FIFO's reader gives up, so the run can stop
                arpsim::output::cancel_waits();
                if let Some(first) = seen.request(signal) {
                    arpsim::output::remove_temporaries();
                    std::process::exit(crate::model::exit::for_signal(first));
                }
            }
        })?;
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// issue 30, N06: gdb's `kill` was "interrupted by signal 9".
    #[test]
    fn a_debugger_kill_is_named_as_such() {
        let kill = crate::model::exit::KILLED_BY_DEBUGGER;
        assert_eq!(stop_cause(kill), "killed by the debugger (gdb's `kill`)");
        assert_eq!(stop_cause(SIGTERM), "interrupted by SIGTERM");
    }

    #[test]
    fn the_first_signal_is_remembered_and_a_second_is_seen_as_such() {
        let r = StopRequest::new();
        assert_eq!(r.signal(), None);
        assert_eq!(r.request(SIGTERM), None);
        assert_eq!(r.signal(), Some(SIGTERM));
        assert_eq!(r.request(SIGINT), Some(SIGTERM));
        assert_eq!(r.signal(), Some(SIGTERM), "the first signal is kept");
        // a debugger's pending interrupt (-1) is not a signal and gives way
        let r = StopRequest::new();
        r.flag().store(-1, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(r.signal(), None);
        assert_eq!(r.request(SIGINT), None);
        assert_eq!(r.signal(), Some(SIGINT));
        assert!(name(SIGINT).contains("Ctrl-C"));
    }
}

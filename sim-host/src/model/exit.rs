//! The exit statuses of `sim-host run`, of each entry of a suite, of a
//! suite and of its cycle gates: the one place they are written. A guest's own exit status is passed on as
//! it is (reduced modulo 256 by the operating system, so it can collide
//! with these: the JSON report's `stop.reason` tells them apart).

/// sim-host itself failed during the run (a bug; the message says where).
pub const INTERNAL: i32 = 119;
/// A suite ran, and an entry did not pass.
pub const SUITE_FAILED: i32 = 1;
/// A usage error: an option's value (clap's own status).
pub const USAGE: i32 = 2;
/// A cycle gate failed, everything else passed: a section grew past the
/// tolerance (`suite --baseline`, `arp diff --fail-over`) or a suite
/// entry's section went over its `budget`.
pub const GATE_FAILED: i32 = 3;
/// The guest faulted (memory, undefined instruction, deadlock ...).
pub const FAULT: i32 = 120;
/// A fatal ARP error, a result file that could not be written, or `-o`
/// given for a guest that never started recording.
pub const ARP_ERROR: i32 = 121;
/// `--max-cycles` was reached.
pub const CYCLE_LIMIT: i32 = 122;
/// `--timeout` was reached.
pub const TIMEOUT: i32 = 123;
/// Verification failed: playback did not play every recorded sample
/// exactly once, or the output differs from `--expect-output` (for a
/// suite: not every entry ran).
pub const VERIFICATION: i32 = 124;
/// The run could not start: a bad ELF, target, option or output path, an
/// ELF whose build attributes are another core's (`--force-target`); or it
/// met an instruction the target's cycle table does not price (never
/// priced silently; `--allow-unpriced` counts it instead).
pub const SETUP: i32 = 125;
/// The guest needs what sim-host does not model (a System Control Space
/// register, an instruction without a price): the same status as a run
/// that could not start, for the same reason (the model lacks something).
pub const UNSUPPORTED: i32 = 125;
/// The guest asked for a system reset (AIRCR.SYSRESETREQ); the run ends
/// there, with its results so far.
pub const SYSTEM_RESET: i32 = 118;
/// The signal a debugger's `kill` ends a run with (SIGKILL: status 137).
pub const KILLED_BY_DEBUGGER: i32 = 9;

/// The status of a process stopped by `signal` (128 + its number, as a
/// shell reports it).
pub fn for_signal(signal: i32) -> i32 {
    128 + signal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_give_the_shells_statuses() {
        assert_eq!(for_signal(15), 143);
        assert_eq!(for_signal(1), 129);
        assert_eq!(for_signal(KILLED_BY_DEBUGGER), 137);
    }
}

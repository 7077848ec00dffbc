//! The bounds of what a run may ask for, checked before anything is
//! allocated (the target file's `cores`, `--cores`, `--thread-stack`,
//! `--timeout`).

use std::time::Duration;

/// The most simulated cores a run may have: far beyond any
/// microcontroller, small enough that the scheduler's tables stay small.
pub const MAX_CORES: usize = 1024;

/// The most cycles one cycle-table number may say: far beyond any real
/// instruction (a divide takes at most tens), small enough that a block of
/// thousands of instructions cannot overflow its 32-bit price.
pub const MAX_CLASS_CYCLES: u32 = 10_000;

/// Bounds of a guest thread's stack (`--thread-stack`), in bytes.
pub const MIN_THREAD_STACK: u64 = 256;

pub const MAX_THREAD_STACK: u64 = 16 << 20;

/// Size caps of the inputs read whole (issue 30, N18), checked while
/// reading (`arpsim::input`): an endless device stops at the cap.
pub const MAX_ELF_BYTES: u64 = 512 * arpsim::input::MIB;
/// A target file (`--target-file`).
pub const MAX_TARGET_FILE_BYTES: u64 = arpsim::input::MIB;
/// A JSON report read back (`--compare`).
pub const MAX_REPORT_BYTES: u64 = 64 * arpsim::input::MIB;
/// A suite manifest, a suite result (`suite merge`, `--balance-from`) or an
/// entry's expected output.
pub const MAX_SUITE_FILE_BYTES: u64 = 256 * arpsim::input::MIB;
/// A SIR document (`sir validate`, `sir convert`, ...).
pub const MAX_SIR_BYTES: u64 = 256 * arpsim::input::MIB;
/// A CMSIS-SVD file (`--svd`): the largest vendor files (STM32H7) are
/// tens of MiB.
pub const MAX_SVD_BYTES: u64 = 256 * arpsim::input::MIB;

/// The deepest element nesting of a CMSIS-SVD file (the `<device>` is
/// depth 1), checked by a streaming scan before anything recursive runs
/// (issue 43, M02): real files nest about 12 deep (device, peripherals,
/// peripheral, registers, a few clusters, register, fields, field,
/// enumerated values); svd-parser, its expansion and the drop of what they
/// build recurse once per level.
pub const MAX_SVD_DEPTH: usize = 64;

/// The most elements (peripherals, clusters, registers, fields) an SVD
/// file may describe once its `<dim>` arrays are expanded, nested arrays
/// multiplied and `derivedFrom` copies counted (issue 43, M03), checked
/// before anything is expanded. The RP2040's SVD (pico-sdk, 2.6 MB) has
/// 6,296 of them and the STM32H743's (cmsis-svd, 3.9 MB) about as many
/// per MB; the cap is some 40 times the largest such file. A file at the
/// cap (one array of 499,999 registers) loads with a peak of about 300 MB.
pub const MAX_SVD_ELEMENTS: usize = 500_000;

/// The longest `--timeout` (30 days): beyond it a timeout means nothing
/// and `Duration` arithmetic would overflow.
pub const MAX_TIMEOUT_SECONDS: f64 = 30.0 * 24.0 * 3600.0;

/// A timeout given in seconds, checked: finite, positive, at most
/// [`MAX_TIMEOUT_SECONDS`].
pub fn timeout_from_seconds(seconds: f64) -> Result<Duration, String> {
    if seconds.is_finite() && seconds > 0.0 && seconds <= MAX_TIMEOUT_SECONDS {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(format!(
            "{seconds}: expected seconds, more than 0 and at most {MAX_TIMEOUT_SECONDS} (30 days)"
        ))
    }
}

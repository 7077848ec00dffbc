//! What a run is asked and what it gives back: its errors, observers,
//! counting methods, stop reasons and outcome. The bottom of the engine:
//! nothing here knows Unicorn's state.

use crate::host::arp_host::TraceStats;
use crate::host::threads;
use crate::image::elf::GuestImage;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;
use unicorn_engine::unicorn_const::uc_error;

/// Why a run could not be set up (a run that starts always ends with a
/// [`Stop`]).
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    #[error("unicorn: {what}: {error:?}")]
    Unicorn { what: String, error: uc_error },
    #[error("target `{target}`: unknown CPU model `{cpu}` for Unicorn")]
    UnknownCpu { target: String, cpu: String },
    #[error(transparent)]
    Decode(#[from] crate::model::decode::DecodeError),
    /// A setting the run cannot start with: a resource request out of
    /// range (cores, thread stack size), an unusable `--fs-root`.
    #[error("{what}: {message}")]
    Setup { what: String, message: String },
}

pub(super) fn uc<T>(what: &str, r: Result<T, uc_error>) -> Result<T, MachineError> {
    r.map_err(|error| MachineError::Unicorn {
        what: what.to_owned(),
        error,
    })
}

/// Observes execution for profiles (SIR annotation, callgrind, traces).
/// Installed only when a profile is asked for: it costs a call per
/// executed block (and per memory access with [`wants_memory`]).
///
/// [`wants_memory`]: ExecutionObserver::wants_memory
pub trait ExecutionObserver {
    /// A block of `instructions` instructions starting at `addr` executes;
    /// the core's cycle count goes from `cycles_before` to `cycles_after`
    /// (including a taken-branch penalty for entering it).
    fn block(&mut self, addr: u64, instructions: u32, cycles_before: u64, cycles_after: u64);
    /// On a target with a memory-system model, before each block: what it
    /// did since the previous block (its stall cycles are among the cycles
    /// `block` is told of; a data access's is charged while its block
    /// runs, so it comes with the next).
    fn memory_system(&mut self, _since_last: crate::model::memory_counters::MemoryCounters) {}
    /// A load or store by the instruction at `pc` (only if `wants_memory`).
    fn memory(&mut self, _pc: u64, _addr: u64, _size: usize, _write: bool) {}
    /// Whether to observe loads and stores (slow: a hook per access).
    fn wants_memory(&self) -> bool {
        false
    }
    /// Guest thread `thread` (0 = main) runs next, from cycle `clock` of
    /// its own clock; the blocks that follow are its.
    fn thread(&mut self, _thread: u32, _clock: u64) {}
    /// Guest thread `thread` ended and never runs again: forget its state.
    fn thread_ended(&mut self, _thread: u32) {}
    /// A Cortex-M exception was entered or returned from: the blocks that
    /// follow an entry are its handler's (called like a function from the
    /// code it interrupted, the entry latency in the handler's first
    /// block), those after the return the interrupted code's again.
    fn exception(&mut self, _event: ExceptionEvent) {}
    /// The run starts again from its first instruction (a debugger's
    /// `monitor reset`): forget everything observed.
    fn reset(&mut self);
}

/// What an [`ExecutionObserver`] is told about exceptions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExceptionEvent {
    /// A handler starts; the interrupted code resumes at `return_to` (a
    /// tail-chained handler is a return and an entry with the same
    /// `return_to`).
    Entered { return_to: u64 },
    /// The innermost handler returned.
    Returned,
}

/// How cycles are counted. Only `Blocks` is the product; the others exist
/// to measure it against (BENCHMARKS.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Counting {
    /// Cached block prices charged by a block hook (DESIGN.md decision 2).
    #[default]
    Blocks,
    /// A code hook on every instruction adding that instruction's cost:
    /// the method Unicorn-based simulators commonly use.
    PerInstruction,
    /// Nothing counted and nothing intercepted: bare Unicorn (plus
    /// semihosting, so the guest can print and exit).
    Off,
}

/// A shared observer: the caller keeps a clone to read it after the run.
pub type Observer = Rc<std::cell::RefCell<dyn ExecutionObserver>>;

/// Why a run stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The guest exited through semihosting with this status.
    Exit(i32),
    Fault(Fault),
    CycleLimit(u64),
    Timeout(Duration),
    /// A stop signal (SIGINT, SIGTERM, SIGHUP) with this number arrived.
    Interrupted(i32),
    /// The ARP engine reported a fatal error.
    Arp(String),
    /// sim-host itself failed inside the run (a bug, caught where it
    /// happened): the message says where.
    Internal(String),
    /// The guest needs what sim-host does not model (a System Control
    /// Space register, a feature of one): where, and what.
    Unsupported(Fault),
    /// The guest asked for a system reset (AIRCR.SYSRESETREQ).
    SystemReset,
    /// An instruction the target's cycle table has no row for was about to
    /// run (never priced silently; `--allow-unpriced` counts it instead).
    Unpriced(UnpricedStop),
}

/// The first unpriced instruction of a run that stopped for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnpricedStop {
    /// The instruction with its operands (`vdiv.f32 s0, s0, s1`).
    pub instruction: String,
    pub mnemonic: String,
    pub class: crate::model::target::InsnClass,
    /// `function+offset (address)` and the source line where known.
    pub location: String,
    pub target: String,
}

impl std::fmt::Display for UnpricedStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::model::target::InsnClass;
        write!(
            f,
            "unpriced instruction `{}` at {}: ",
            self.instruction, self.location
        )?;
        if self.class == InsnClass::Unclassified {
            write!(
                f,
                "the cycle model has no class for `{}` (no cycle table prices it)",
                self.mnemonic
            )?;
        } else {
            write!(
                f,
                "target `{}`'s cycle table has no row for class `{}`, which `{}` belongs to \
                 (a core without this unit, or a table without that row: use a target that has \
                 it, add the row with its source to a target file of your own, or \
                 --allow-unpriced to count such instructions as a warning)",
                self.target,
                self.class.name(),
                self.mnemonic
            )?;
        }
        Ok(())
    }
}

/// How often an unpriced mnemonic executed (`--allow-unpriced`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UnpricedCount {
    pub mnemonic: String,
    /// The class the table has no row for (`unclassified`: none at all).
    pub class: &'static str,
    pub executions: u64,
}

/// What went wrong in the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub kind: String,
    /// The data address of a memory fault.
    pub address: Option<u64>,
    pub pc: u64,
    /// `pc` as `function+offset (address)`.
    pub location: String,
    pub instruction: Option<String>,
    /// The last taken branches, oldest first, as `from -> to`.
    pub branches: Vec<String>,
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some(a) = self.address {
            write!(f, " at address {a:#010x}")?;
        }
        write!(f, "\n  pc: {}", self.location)?;
        if let Some(i) = &self.instruction {
            write!(f, ": {i}")?;
        }
        if !self.branches.is_empty() {
            write!(f, "\n  last taken branches (oldest first):")?;
            for b in &self.branches {
                write!(f, "\n    {b}")?;
            }
        }
        Ok(())
    }
}

/// The result of a run.
#[derive(Debug)]
pub struct RunOutcome {
    pub stop: Stop,
    pub cycles: u64,
    pub instructions: u64,
    pub host_time: Duration,
    /// The beginning of the guest's output (at most
    /// [`crate::host::semihost::CONSOLE_KEPT`] bytes).
    pub console: Vec<u8>,
    /// Bytes the guest wrote to its output.
    pub console_bytes: u64,
    /// The output compared with `RunOptions::expect_output`.
    pub output_check: Option<crate::host::expected::OutputVerdict>,
    pub sections: Vec<TraceStats>,
    /// The `data.arp` written: path, records, partial.
    pub arp_file: Option<(PathBuf, u64, bool)>,
    pub arp_error: Option<String>,
    pub warnings: Vec<String>,
    /// Instructions executed without a price (`--allow-unpriced`), by
    /// mnemonic; each was counted as an `alu` instruction.
    pub unpriced: Vec<UnpricedCount>,
    /// Per simulated core: busy and waiting cycles of its threads.
    pub cores: Vec<threads::Core>,
    /// Threads the guest created (besides main).
    pub threads_created: usize,
    /// Playback verification, in playback mode.
    pub playback: Option<arpsim::playback::PlaybackReport>,
    /// The section timeline (with `ArpOptions::trace_events`).
    pub section_events: Vec<crate::host::arp_host::SectionEvent>,
    pub section_events_dropped: u64,
    /// The guest that ran (for source locations in reports).
    pub image: Rc<GuestImage>,
    /// The peripheral accesses `--peripherals ignore` answered.
    pub peripheral_accesses: Vec<PeripheralAccesses>,
    /// What the flash accelerator did, when the target has one.
    pub flash: Option<FlashReport>,
    /// What the Cortex-M7's L1 caches did, when the target has them.
    pub l1cache: Option<L1CacheReport>,
    /// What the XIP cache did, when the target has one.
    pub xip: Option<crate::model::xip::run::XipReport>,
    /// Exceptions taken, lazy FP preservations and sleeps (WFI, WFE).
    pub core_events: CoreEvents,
    /// Who ran on the core: main, each handler, each RTOS task, with
    /// their cycles (which sum to `cycles`); empty when only main ran.
    pub tasks: Vec<crate::host::tasks::ContextStats>,
    /// The core clock over the run: the target's, or what the board's
    /// clock tree made it (each change, and time at any cycle).
    pub clock: crate::model::clocks::ClockTimeline,
    /// What the board's UARTs did, one line each ("USART2: 42 bytes sent
    /// at 115200 baud (BRR 0x16d)").
    pub uarts: Vec<String>,
}

/// What the core's own exception and power machinery did in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CoreEvents {
    /// Exceptions entered, tail-chained ones included.
    pub exceptions_taken: u64,
    pub tail_chains: u64,
    /// FP contexts stacked lazily, at a handler's first FP instruction.
    pub lazy_fp_preservations: u64,
    /// WFI and WFE sleeps, and the cycles spent asleep (counted in the
    /// run's cycles and in every section open during them).
    pub sleeps: u64,
    pub sleep_cycles: u64,
}

impl CoreEvents {
    pub fn is_empty(&self) -> bool {
        *self == CoreEvents::default()
    }
}

/// The L1 caches' counts in a run (`model::l1cache`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct L1CacheReport {
    /// CCR.IC and CCR.DC at the end of the run.
    pub ccr_ic: bool,
    pub ccr_dc: bool,
    #[serde(flatten)]
    pub stats: crate::model::l1cache::L1Stats,
}

/// The flash accelerator's counts in a run (`model::memsys`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FlashReport {
    pub region: String,
    /// FLASH_ACR at the end of the run.
    pub control: u32,
    /// The wait states the target's table requires at its clock.
    pub required_wait_states: u32,
    #[serde(flatten)]
    pub stats: crate::model::memsys::FlashStats,
}

/// The accesses to one peripheral `--peripherals ignore` answered: reads
/// (with the SVD's reset value, else 0) and dropped writes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PeripheralAccesses {
    pub name: String,
    pub reads: u64,
    pub writes: u64,
    /// Reads with a bit no reset value was known for (read as 0).
    pub reads_without_reset_value: u64,
}

/// A panic's message, when it carries text.
pub(super) fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

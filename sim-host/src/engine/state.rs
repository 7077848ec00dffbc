//! The state every hook shares (Unicorn's user data), one sub-structure
//! per concern, and the engine handle type.

use super::api::ExceptionEvent;
use super::api::Stop;
use super::blocks::BlockCache;
use super::trail::BlockTrail;
use crate::host::arp_host::{ArpHost, TraceStats};
use crate::host::progress::{ProgressShared, Snapshot};
use crate::host::scs::Scs;
use crate::host::semihost::{HostConsole, Semihost};
use crate::host::tasks::ContextId;
use crate::host::threads::{Scheduler, ThreadId};
use crate::image::elf::GuestImage;
use crate::image::rtos::FreeRtosLayout;
use crate::model::decode::Decoder;
use crate::model::peripherals::PeripheralMap;
use crate::model::target::{Arch, InsnClass, Target};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::AtomicI32;
use std::sync::Arc;
use std::time::Duration;
use unicorn_engine::unicorn_const::MemType;
use unicorn_engine::Unicorn;

/// Everything the hooks share, stored in Unicorn's user data: one
/// sub-structure per concern.
pub(super) struct State {
    pub(super) arch: Arch,
    pub(super) target: Rc<Target>,
    pub(super) image: Rc<GuestImage>,
    pub(super) decoder: Decoder,
    pub(super) cache: BlockCache,
    pub(super) clock: Clock,
    pub(super) limits: Limits,
    pub(super) trail: BlockTrail,
    pub(super) io: GuestIo,
    pub(super) arp: ArpHost,
    pub(super) threads: Threads,
    pub(super) end: Ending,
    pub(super) debug: DebugMarks,
    /// The System Control Space of a Cortex-M core (`None` on RISC-V).
    pub(super) system: Option<Box<CoreSystem>>,
    /// What RISC-V's `mcycle` and `minstret` were set to.
    pub(super) counter_offsets: CounterOffsets,
    /// Where in the running block the host's device registers were last
    /// accessed.
    pub(super) mmio: MmioCursor,
    /// The vendor peripherals: their map and, with `--peripherals
    /// ignore`, the accesses answered.
    pub(super) peripherals: Peripherals,
    /// The RISC-V machine timer of the board, when it has one.
    pub(super) machine_timer: Option<Box<TimerState>>,
    /// The RISC-V interrupt whose handler runs, if one does (`traps`).
    pub(super) riscv_interrupted: Option<Interrupted>,
    /// A RISC-V EBREAK was taken as a trap: the `emu_start` it ends goes
    /// on (`resume::start`).
    pub(super) ebreak_taken: bool,
    /// The core's branch predictor, when its target file models one.
    pub(super) predictor: Option<crate::model::predictor::Predictor>,
    /// The guest's call registers in place, once the interception is
    /// installed (`gpr::CallRegisters`).
    pub(super) call_registers: Option<super::gpr::CallRegisters>,
    /// The flash accelerator, when the target file describes one.
    pub(super) flash: Option<Box<FlashModel>>,
    /// The memory-system totals observers have been told of.
    pub(super) memory_observed: crate::model::memory_counters::MemoryCounters,
    /// The Cortex-M7's L1 caches, when the target file describes them.
    pub(super) l1cache: Option<Box<L1Model>>,
    /// The XIP cache, when the target file describes one.
    pub(super) xip: Option<Box<crate::model::xip::run::XipModel>>,
    pub(super) unpriced: UnpricedLog,
    /// WFI and WFE: a sleep asked for, and the sleeps so far.
    pub(super) power: Power,
    /// Which task runs (the RTOS-aware accounting; its clock is in
    /// `arp.counters.tasks`).
    pub(super) tasks: TaskTracker,
    /// The board's clock tree and UARTs (`engine::devices`), if its
    /// target file lists any.
    pub(super) devices: Option<Box<DeviceRun>>,
    /// The core clock over the run: the target's clock, or what its
    /// clock tree makes it.
    pub(super) core_clock: crate::model::clocks::ClockTimeline,
}

/// What WFI and WFE (`engine::sleep`) asked for and what sleeping cost.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Power {
    /// The block that ran ended with WFI or WFE: the core sleeps at the
    /// next block boundary until something wakes it.
    pub(super) asleep: Option<crate::model::power::Sleep>,
    /// Where the WFI or WFE is (for a stop that names it).
    pub(super) asleep_at: u64,
    /// Cycles spent asleep, and how many sleeps.
    pub(super) sleep_cycles: u64,
    pub(super) sleeps: u64,
}

/// The board's clock tree and UARTs in a run (`engine::devices`).
pub(super) struct DeviceRun {
    pub(super) tree: Option<Box<dyn crate::host::devices::ClockTree>>,
    /// The UARTs, then the GPIO ports.
    pub(super) uarts: Vec<Box<dyn crate::host::devices::Device>>,
    /// Every block's address range and who answers it, listed once when
    /// the run starts (an access looks its block up here).
    pub(super) owners: Vec<(std::ops::Range<u64>, DeviceOwner)>,
}

/// Which of a run's blocks answers an address.
#[derive(Debug, Clone, Copy)]
pub(super) enum DeviceOwner {
    Tree,
    Uart(usize),
}

impl DeviceRun {
    /// Who answers `addr`, if a block of the run holds it.
    pub(super) fn owner(&self, addr: u64) -> Option<DeviceOwner> {
        (self.owners.iter())
            .find(|(range, _)| range.contains(&addr))
            .map(|(_, owner)| *owner)
    }

    /// What the report says of the blocks: each UART's lines.
    pub(super) fn summaries(&self) -> Vec<String> {
        self.uarts
            .iter()
            .flat_map(|u| {
                u.summary()
                    .into_iter()
                    .map(|l| format!("{}: {l}", u.name()))
            })
            .collect()
    }
}

/// The accelerator of a run: its description, state, and the lines of
/// every block priced in its flash.
#[derive(Debug)]
pub(super) struct FlashModel {
    pub(super) spec: crate::model::memsys::FlashSpec,
    pub(super) state: crate::model::memsys::FlashState,
    /// Per block start: its flash lines in order, each with the cycles
    /// its instructions take.
    pub(super) blocks: rustc_hash::FxHashMap<u32, Box<[(u32, u32)]>>,
}

impl FlashModel {
    /// Its counts so far.
    pub(super) fn report(&self) -> super::api::FlashReport {
        super::api::FlashReport {
            region: self.spec.region.clone(),
            control: self.state.acr(),
            required_wait_states: self.state.required(),
            stats: self.state.stats,
        }
    }
}

/// The Cortex-M7 L1 caches of a run (`engine::l1cache`), and the lines
/// and granules of every block priced in a range that is not TCM.
#[derive(Debug)]
pub(super) struct L1Model {
    pub(super) state: crate::model::l1cache::L1State,
    /// By block start (a fast hash: looked up at every executed block).
    pub(super) blocks: rustc_hash::FxHashMap<u32, BlockLines>,
}

/// A block's cache lines and 64-bit fetch granules, in order.
#[derive(Debug)]
pub(super) struct BlockLines {
    pub(super) lines: Box<[u32]>,
    pub(super) granules: Box<[u32]>,
}

impl L1Model {
    /// Its counts so far.
    pub(super) fn report(&self) -> super::api::L1CacheReport {
        use crate::model::l1cache::{CCR_DC, CCR_IC};
        super::api::L1CacheReport {
            ccr_ic: self.state.ccr_bits() & CCR_IC != 0,
            ccr_dc: self.state.ccr_bits() & CCR_DC != 0,
            stats: self.state.stats,
        }
    }
}

/// The RISC-V machine timer of the board.
#[derive(Debug)]
pub(super) struct TimerState {
    pub(super) device: crate::host::mtimer::MachineTimer,
    /// Its registers' base address (the SIO's MTIME_CTRL, the CLINT's
    /// msip).
    pub(super) base: u64,
}

/// A RISC-V interrupt being handled: the block it was taken in front of
/// and the block-to-block state of the code it interrupted (what entering
/// that block costs: the fall-through address, the taken-branch extra,
/// the branch the predictor is to resolve), which that block pays when
/// the handler returns to it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Interrupted {
    pub(super) return_to: u64,
    pub(super) fallthrough: u64,
    pub(super) taken_extra: u32,
    pub(super) last_insn: u64,
    pub(super) branch: u8,
}

/// The instruction that made the last access to a device register the
/// host answers (the System Control Space, the machine timer, ignored
/// peripherals): the next access of the same block execution is made by a
/// later instruction.
#[derive(Debug, Default)]
pub(super) struct MmioCursor {
    /// The block execution (its start and the instruction count after it
    /// was charged) and the instruction after the last access.
    pub(super) last: Option<((u64, u64), u64)>,
    /// Accesses that could not be placed in their block (their counters
    /// are those of the block's end).
    pub(super) unplaced: u64,
    /// An access placed already (its instruction and the cycle count
    /// there), whose accesses to its target take its place (a bit-band
    /// alias word's read-modify-write, `engine::devices`).
    pub(super) placed: Option<(u64, u64)>,
}

/// The vendor peripherals of a run and the accesses `--peripherals ignore`
/// answered.
#[derive(Debug, Default)]
pub(super) struct Peripherals {
    pub(super) map: PeripheralMap,
    /// `--peripherals ignore`: accesses answered and counted.
    pub(super) ignored: bool,
    /// Per peripheral of the map.
    pub(super) counts: Vec<Counts>,
    /// The register read last, how many times in a row, and when.
    pub(super) poll: Poll,
}

/// The accesses answered for one peripheral.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Counts {
    pub(super) reads: u64,
    pub(super) writes: u64,
    /// Reads with a bit no reset value was known for.
    pub(super) unknown: u64,
}

/// The register a guest may be polling.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Poll {
    pub(super) addr: u64,
    pub(super) reads: u64,
    pub(super) at_cycle: u64,
    /// What the last read returned, and whether all of it was known.
    pub(super) value: u64,
    pub(super) known: bool,
    /// The loaded value's bits the loop tests (from its block, decoded
    /// once when the reads make a poll), `None` if not recognised.
    pub(super) tested: Option<u64>,
}

/// Blocks with instructions the cycle table does not price, and how
/// often each ran (`--allow-unpriced`).
#[derive(Debug, Default)]
pub(super) struct UnpricedLog {
    pub(super) allow: bool,
    /// By block address: its unpriced instructions (mnemonic, class) and
    /// how often it ran.
    pub(super) blocks: HashMap<u32, (Vec<(String, InsnClass)>, u64)>,
}

/// The running thread's counters and what the cycle model carries from
/// one block to the next.
#[derive(Debug, Default)]
pub(super) struct Clock {
    pub(super) cycles: u64,
    pub(super) instructions: u64,
    /// Where the last block falls through to (`u64::MAX`: nowhere).
    pub(super) prev_fallthrough: u64,
    /// What entering a block other than that costs (a taken branch).
    pub(super) prev_taken_extra: u32,
    /// The last block's last instruction (the branch's address).
    pub(super) prev_last_insn: u64,
    /// What the branch predictor is to resolve at the next block (a
    /// `predictor::BranchKind`; 0: nothing).
    pub(super) prev_branch: u8,
    /// The running thread's clock after the last observed block.
    pub(super) observed: u64,
    /// The start of the block being executed (charged when it started):
    /// what an instruction inside it has cost so far is computed from it.
    pub(super) block_start: u64,
}

/// When the block hook leaves its fast path, and what it then polls.
#[derive(Debug)]
pub(super) struct Limits {
    pub(super) max_cycles: u64,
    /// The cycle count at which the block hook leaves its fast path: the
    /// slice's end or, sooner, the next poll of Ctrl-C and the status line.
    pub(super) limit: u64,
    /// The lower of the cycle limit and the running thread's slice end.
    pub(super) slice_limit: u64,
    /// When the core's timers next raise an exception, or a write asked
    /// for a look at the pending ones (0): a boundary like the slice's.
    pub(super) next_event: u64,
    pub(super) interrupt: Option<Arc<AtomicI32>>,
    pub(super) timeout: Option<Duration>,
    /// The live status display, when one is shown.
    pub(super) progress: Option<Arc<ProgressShared>>,
}

impl Limits {
    /// Something is pending but cannot be taken yet (masked, or a handler
    /// still runs): the block hook looks again at every block.
    pub(super) fn look_every_block(&mut self, now: u64) {
        self.next_event = now;
        self.limit = now;
    }

    /// Where the block hook next leaves its fast path: the slice's end, or
    /// the next poll (from `cycles`) when there is something to poll.
    pub(super) fn next(&self, cycles: u64) -> u64 {
        let boundary = self.slice_limit.min(self.next_event);
        if self.interrupt.is_none() && self.progress.is_none() {
            return boundary;
        }
        boundary.min(cycles.saturating_add(POLL_CYCLES))
    }
}

/// Simulated cycles between two looks at Ctrl-C and the status line:
/// about a millisecond of host time, and no load of either per block.
pub(super) const POLL_CYCLES: u64 = 1 << 20;

/// Semihosting and the console it writes to.
pub(super) struct GuestIo {
    pub(super) semihost: Semihost,
    pub(super) console: HostConsole,
}

/// The guest's threads: the scheduler and what each thread owns.
pub(super) struct Threads {
    pub(super) sched: Scheduler,
    pub(super) current: ThreadId,
    /// The core the current thread runs on (0 without cores), set when
    /// its slice begins: an ARP call reads it without a look-up.
    pub(super) current_core: u32,
    /// The registers of threads not running (`thread_registers` then
    /// `fpu_thread_registers` order), by thread; `None` for the running thread and threads never run.
    pub(super) contexts: rustc_hash::FxHashMap<ThreadId, Vec<u64>>,
    /// Thread stacks are carved downwards from here (the top of the heap).
    pub(super) next_stack_top: u64,
    pub(super) stack_floor: u64,
    pub(super) stack_size: u64,
    /// Guard pages below thread stacks: (low address, thread).
    pub(super) guards: Vec<(u64, ThreadId)>,
    /// Stack tops of running threads, and of ended threads' stacks for reuse.
    pub(super) stacks: HashMap<ThreadId, u64>,
    pub(super) free_stacks: Vec<u64>,
    /// Where thread functions return to (the `simthread_exit` stub).
    pub(super) exit: u64,
}

/// How the run is ending, and what it has to say.
#[derive(Debug, Default)]
pub(super) struct Ending {
    pub(super) stop: Option<Stop>,
    /// The invalid access and the PC of the instruction that made it.
    pub(super) bad_access: Option<(MemType, u64, usize, u64)>,
    /// Bounded: the first few of each kind, the rest counted.
    pub(super) warnings: crate::host::warnings::Warnings,
}

/// What a debugger left for the block hook.
#[derive(Debug, Default)]
pub(super) struct DebugMarks {
    /// A debugger asked to start the run again.
    pub(super) reset: bool,
    /// Where a debugger resumed inside a block that was charged before it
    /// stopped there (`limit` is 0 meanwhile, so the block hook looks).
    pub(super) resume: Option<u64>,
    /// The slice's `limit` while `resume` borrows it.
    pub(super) limit: u64,
}

impl State {
    /// Whether the target has a memory-system model (its counters then go
    /// with every ARP call).
    #[inline]
    pub(super) fn has_memory_model(&self) -> bool {
        self.flash.is_some() || self.l1cache.is_some() || self.xip.is_some()
    }

    /// The memory-system models' running totals, summed (`None` on a target
    /// without one).
    pub(super) fn memory_counters(&self) -> Option<crate::model::memory_counters::MemoryCounters> {
        if !self.has_memory_model() {
            return None;
        }
        [
            self.flash.as_ref().map(|f| f.state.stats.counters()),
            self.l1cache.as_ref().map(|c| c.state.stats.counters()),
            self.xip.as_ref().map(|x| x.state.stats.counters()),
        ]
        .into_iter()
        .flatten()
        .reduce(crate::model::memory_counters::MemoryCounters::plus)
    }

    /// A device write moved a timer or pended an exception: the block hook
    /// looks at the next block boundary, also inside a block a debugger
    /// resumed in.
    pub(super) fn look_at_next_boundary(&mut self) {
        self.limits.next_event = 0;
        self.limits.limit = 0;
        self.debug.limit = 0;
    }

    /// What the exception and power machinery did so far.
    pub(super) fn core_events(&self) -> super::api::CoreEvents {
        let sys = self.system.as_deref();
        super::api::CoreEvents {
            exceptions_taken: sys.map_or(0, |s| s.exceptions_taken),
            tail_chains: sys.map_or(0, |s| s.tail_chains),
            lazy_fp_preservations: sys.map_or(0, |s| s.lazy_preservations),
            sleeps: self.power.sleeps,
            sleep_cycles: self.power.sleep_cycles,
        }
    }

    /// The section table's rows so far, call sites named.
    pub(crate) fn section_traces(&self) -> Vec<TraceStats> {
        let image = &self.image;
        self.arp
            .stats()
            .traces(|site| image.function_at(site).map(|f| f.name.clone()))
    }

    /// Hands the status display what the run has done so far.
    #[cold]
    pub(super) fn publish_progress(&self) {
        if let Some(p) = &self.limits.progress {
            p.publish(Snapshot {
                cycles: self.clock.cycles,
                instructions: self.clock.instructions,
                section: self.arp.innermost_section(),
            });
        }
    }

    /// Code in `start..end` was rewritten: its blocks are priced anew, and
    /// the trail is not walked back past this point (a block that ran
    /// before would be sized by its new price).
    pub(super) fn forget_code(&mut self, start: u64, end: u64) {
        if self.cache.forget(start, end) {
            self.trail.floor = self.clock.instructions;
        }
    }

    /// The last taken branches, for a fault report.
    pub(super) fn branches(&self) -> Vec<String> {
        let price = |start| self.cache.peek(start);
        self.trail
            .describe(self.clock.instructions, price, &self.image)
    }
}

pub(super) type Uc<'a> = Unicorn<'a, State>;

/// Ends the emulation with `stop`, unless a stop was set before.
pub(super) fn stop_with(uc: &mut Uc<'_>, stop: Stop) {
    if uc.get_data().end.stop.is_none() {
        uc.get_data_mut().end.stop = Some(stop);
    }
    let _ = uc.emu_stop();
}

/// The System Control Space of the running core and the exceptions it
/// takes.
#[derive(Debug)]
pub(super) struct CoreSystem {
    pub(super) scs: Scs,
    /// Exception entries and returns the observers have not been told
    /// of yet (`None`: no observer).
    pub(super) observed: Option<Vec<ObservedException>>,
    /// Per active exception, innermost last: where it returns to and the
    /// block-to-block state (fall-through address, taken-branch extra) of
    /// the code it interrupted, restored by a return there.
    pub(super) interrupted: Vec<(u64, u64, u32)>,
    /// The event register WFE waits on (ARMv7-M B1.5.18): set by SEV and
    /// by exception entry and return.
    pub(super) event_register: bool,
    /// Lazy FP state preservations carried out (`fp_context`).
    pub(super) lazy_preservations: u64,
    /// Exceptions entered (tail-chained ones included), and those
    /// tail-chained.
    pub(super) exceptions_taken: u64,
    pub(super) tail_chains: u64,
}

/// An exception event waiting for the observer hook; `skipped` is the
/// block an exception was taken in front of (its hook ran, the block did
/// not). `task`: after an exception returned into another RTOS task, the
/// observers' thread of that task (`engine::tasks::observer_thread`).
#[derive(Debug, Clone, Copy)]
pub(super) struct ObservedException {
    pub(super) event: ExceptionEvent,
    pub(super) skipped: Option<u64>,
    pub(super) task: Option<u32>,
}

impl CoreSystem {
    pub(super) fn new(scs: Scs) -> CoreSystem {
        CoreSystem {
            scs,
            observed: None,
            interrupted: Vec::new(),
            event_register: false,
            lazy_preservations: 0,
            exceptions_taken: 0,
            tail_chains: 0,
        }
    }
}

/// What `mcycle`/`minstret` were last written to, relative to the counts.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct CounterOffsets {
    pub(super) cycles: u64,
    pub(super) instructions: u64,
}

/// Which task runs: the engine's side of the RTOS-aware accounting
/// (`engine::tasks`).
#[derive(Debug, Default)]
pub(super) struct TaskTracker {
    /// The contexts the exceptions now active interrupted, innermost last.
    pub(super) interrupted: Vec<ContextId>,
    /// Each exception's handler context, by exception number.
    pub(super) handlers: HashMap<u32, ContextId>,
    /// Tasks switched out, by the stack pointer they resume with.
    pub(super) suspended: HashMap<u32, ContextId>,
    /// FreeRTOS's tasks, by control block.
    pub(super) by_tcb: HashMap<u32, ContextId>,
    pub(super) freertos: Option<FreeRtosLayout>,
    /// Tasks seen, for names of tasks with no RTOS knowledge.
    pub(super) tasks_seen: u32,
    /// The context Thread mode ran in last (observers keep a thread per
    /// task: `engine::tasks::observer_thread`).
    pub(super) thread_context: ContextId,
    /// A RISC-V `mret` ran: the next block boundary resumes a task.
    pub(super) trap_returned: bool,
}

/// The most stack pointers remembered for suspended tasks: a program that
/// deletes tasks leaves theirs behind.
pub(super) const MAX_SUSPENDED: usize = 4096;

impl TaskTracker {
    pub(super) fn new(freertos: Option<FreeRtosLayout>) -> TaskTracker {
        TaskTracker {
            freertos,
            ..TaskTracker::default()
        }
    }
}

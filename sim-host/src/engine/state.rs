//! The state every hook shares (Unicorn's user data), one sub-structure
//! per concern, and the engine handle type.

use super::api::Stop;
use super::blocks::BlockCache;
use crate::host::arp_host::{ArpHost, TraceStats};
use crate::host::progress::{ProgressShared, Snapshot};
use crate::host::semihost::{HostConsole, Semihost};
use crate::host::threads::{Scheduler, ThreadId};
use crate::image::elf::GuestImage;
use crate::model::decode::Decoder;
use crate::model::target::{Arch, Target};
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
    pub(super) trail: BranchTrail,
    pub(super) io: GuestIo,
    pub(super) arp: ArpHost,
    pub(super) threads: Threads,
    pub(super) end: Ending,
    pub(super) debug: DebugMarks,
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
    /// The running thread's clock after the last observed block.
    pub(super) observed: u64,
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
    pub(super) interrupt: Option<Arc<AtomicI32>>,
    pub(super) timeout: Option<Duration>,
    /// The live status display, when one is shown.
    pub(super) progress: Option<Arc<ProgressShared>>,
}

impl Limits {
    /// Where the block hook next leaves its fast path: the slice's end, or
    /// the next poll (from `cycles`) when there is something to poll.
    pub(super) fn next(&self, cycles: u64) -> u64 {
        if self.interrupt.is_none() && self.progress.is_none() {
            return self.slice_limit;
        }
        self.slice_limit.min(cycles.saturating_add(POLL_CYCLES))
    }
}

/// Simulated cycles between two looks at Ctrl-C and the status line:
/// about a millisecond of host time, and no load of either per block.
pub(super) const POLL_CYCLES: u64 = 1 << 20;

const TRAIL: usize = 16;

/// The last taken branches, for fault reports.
#[derive(Debug, Default)]
pub(super) struct BranchTrail {
    entries: [(u32, u32); TRAIL],
    len: usize,
}

impl BranchTrail {
    pub(super) fn record(&mut self, from: u64, to: u64) {
        self.entries[self.len % TRAIL] = (from as u32, to as u32);
        self.len += 1;
    }

    /// The branches as `from -> to`, oldest first.
    pub(super) fn describe(&self, image: &GuestImage) -> Vec<String> {
        let n = self.len.min(TRAIL);
        (self.len - n..self.len)
            .map(|i| {
                let (from, to) = self.entries[i % TRAIL];
                format!(
                    "{} -> {}",
                    image.describe(u64::from(from)),
                    image.describe(u64::from(to))
                )
            })
            .collect()
    }
}

/// Semihosting and the console it writes to.
pub(super) struct GuestIo {
    pub(super) semihost: Semihost,
    pub(super) console: HostConsole,
}

/// The guest's threads: the scheduler and what each thread owns.
pub(super) struct Threads {
    pub(super) sched: Scheduler,
    pub(super) current: ThreadId,
    /// The registers of threads not running (`thread_registers` order),
    /// by thread; `None` for the running thread and threads never run.
    pub(super) contexts: Vec<Option<Vec<u64>>>,
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

    /// A taken branch into `to`, from the last block's last instruction.
    pub(super) fn record_branch(&mut self, to: u64) {
        self.trail.record(self.clock.prev_last_insn, to);
    }

    pub(super) fn branches(&self) -> Vec<String> {
        self.trail.describe(&self.image)
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

//! The emulated machine: Unicorn with the target's CPU model and memory
//! map, the block hook that charges cached block prices (DESIGN.md decision
//! 2), interception of the ARP entry points (decision 1), semihosting,
//! faults and limits.
//!
//! Invariants:
//! - the engine is never given an instruction count (`emu_start(.., 0)`):
//!   counting instructions would disable block chaining;
//! - a block is decoded and priced once; afterwards its hook does a cache
//!   lookup and a few additions;
//! - the bodies of intercepted functions never execute and cost nothing:
//!   their block is priced at zero, and either the block hook intercepts an
//!   ARP stub whose first instruction was made a return ([`return_at_once`])
//!   or a code hook on the first instruction returns by writing PC;
//! - no memory hook covers writable RAM on the hot path ([`map_memory`]);
//! - the run always ends with a [`Stop`] reason and the counters so far,
//!   whatever the guest does.

use crate::arp_host::{ArpHost, ArpOptions, CallArgs, EntryPoint, TraceStats, ENTRY_POINTS};
use crate::cycles::{self, DynamicSite};
use crate::decode::Decoder;
use crate::elf::GuestImage;
use crate::sandbox::Sandbox;
use crate::semihost::{self, Console, GuestMemory, HostConsole, MemoryFault, Outcome, Semihost};
use crate::target::{Arch, InsnClass, Target};
use crate::threads::{self, Scheduler, ThreadId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use unicorn_engine::unicorn_const::{
    uc_error, Arch as UcArch, HookType, MemType, Mode as UcMode, Prot,
};
use unicorn_engine::{ArmCpuModel, RegisterARM, RegisterRISCV, Riscv32CpuModel, Unicorn};

mod block_hook;
mod debug;
use block_hook::BlockHook;
use debug::{run_slice, DebugSession};
pub use debug::{DebugGuest, DebugInterrupt, DebugResume, DebugStop, DebugThread, Debugger, Watch};

#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    #[error("unicorn: {what}: {error:?}")]
    Unicorn { what: String, error: uc_error },
    #[error("target `{target}`: unknown CPU model `{cpu}` for Unicorn")]
    UnknownCpu { target: String, cpu: String },
    #[error(transparent)]
    Decode(#[from] crate::decode::DecodeError),
    /// A setting the run cannot start with: a resource request out of
    /// range (cores, thread stack size), an unusable `--fs-root`.
    #[error("{what}: {message}")]
    Setup { what: String, message: String },
}

/// The most simulated cores a run may have: far beyond any
/// microcontroller, small enough that the scheduler's tables stay small.
pub const MAX_CORES: usize = 1024;
/// Bounds of a guest thread's stack (`--thread-stack`), in bytes.
pub const MIN_THREAD_STACK: u64 = 256;
pub const MAX_THREAD_STACK: u64 = 16 << 20;
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

/// Checks a run's resource requests before anything is allocated.
fn check_limits(options: &RunOptions, target: &Target) -> Result<(), MachineError> {
    let limit = |what: &str, message: String| MachineError::Setup {
        what: what.into(),
        message,
    };
    let cores = options.cores.unwrap_or(target.cores as usize);
    if !(1..=MAX_CORES).contains(&cores) {
        return Err(limit(
            "cores",
            format!("{cores}: expected 1 to {MAX_CORES} simulated cores"),
        ));
    }
    if let Some(stack) = options.thread_stack {
        if !(MIN_THREAD_STACK..=MAX_THREAD_STACK).contains(&stack) {
            return Err(limit(
                "thread stack",
                format!("{stack} bytes: expected {MIN_THREAD_STACK} to {MAX_THREAD_STACK}"),
            ));
        }
    }
    Ok(())
}

fn uc<T>(what: &str, r: Result<T, uc_error>) -> Result<T, MachineError> {
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
    /// A load or store by the instruction at `pc` (only if `wants_memory`).
    fn memory(&mut self, _pc: u64, _addr: u64, _size: usize, _write: bool) {}
    /// Whether to observe loads and stores (slow: a hook per access).
    fn wants_memory(&self) -> bool {
        false
    }
    /// Guest thread `thread` (0 = main) runs next, from cycle `clock` of
    /// its own clock; the blocks that follow are its.
    fn thread(&mut self, _thread: u32, _clock: u64) {}
    /// The run starts again from its first instruction (a debugger's
    /// `monitor reset`): forget everything observed.
    fn reset(&mut self);
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

/// How a run is set up.
#[derive(Clone, Default)]
pub struct RunOptions {
    pub max_cycles: Option<u64>,
    pub timeout: Option<Duration>,
    /// The only host directory the guest may open files in.
    pub fs_root: Option<PathBuf>,
    /// Program name and arguments for SYS_GET_CMDLINE.
    pub cmdline: String,
    /// Print the guest's console output as it runs.
    pub echo: bool,
    /// Set to a signal's number (by `signals::install`) to stop the run
    /// cleanly at the next block boundary.
    pub interrupt: Option<Arc<AtomicI32>>,
    /// Where to publish snapshots for a live status line (`progress`).
    pub progress: Option<Arc<crate::progress::ProgressShared>>,
    pub arp: ArpOptions,
    /// Profiling observers (none for a plain run).
    pub observers: Vec<Observer>,
    pub counting: Counting,
    /// Simulated cores (default: the target's).
    pub cores: Option<usize>,
    /// Stack size of each thread created by the guest (default 8 KiB).
    pub thread_stack: Option<u64>,
    /// A debugger (`--gdb`) that controls the run: it is attached before
    /// the first instruction and called at every stop it asked for.
    pub debugger: Option<Rc<std::cell::RefCell<dyn Debugger>>>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("max_cycles", &self.max_cycles)
            .field("timeout", &self.timeout)
            .field("fs_root", &self.fs_root)
            .field("cmdline", &self.cmdline)
            .field("arp", &self.arp)
            .field("observers", &self.observers.len())
            .field("counting", &self.counting)
            .field("debugger", &self.debugger.is_some())
            .finish()
    }
}

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
    pub console: Vec<u8>,
    pub sections: Vec<TraceStats>,
    /// The `data.arp` written: path, records, partial.
    pub arp_file: Option<(PathBuf, u64, bool)>,
    pub arp_error: Option<String>,
    pub warnings: Vec<String>,
    /// Per simulated core: busy and waiting cycles of its threads.
    pub cores: Vec<threads::Core>,
    /// Threads the guest created (besides main).
    pub threads_created: usize,
    /// Playback verification, in playback mode.
    pub playback: Option<arpsim::playback::PlaybackReport>,
    /// The section timeline (with `ArpOptions::trace_events`).
    pub section_events: Vec<crate::arp_host::SectionEvent>,
    pub section_events_dropped: u64,
    /// The guest that ran (for source locations in reports).
    pub image: Rc<GuestImage>,
}

/// A block's price, packed for the hot path.
#[derive(Debug, Clone, Copy, Default)]
struct Price {
    cycles: u32,
    instructions: u32,
    fallthrough: u32,
    last_insn: u32,
    taken_extra: u16,
    entry_penalty: u16,
    /// An ARP entry point the block hook intercepts: 1 + its index in
    /// `ENTRY_POINTS` (0: none; see [`return_at_once`]).
    intercept: u8,
}

/// Direct-mapped slots: 16,384 x 32 bytes (512 KiB), more than the hot
/// blocks of a microcontroller program.
const SLOTS: usize = 1 << 14;

/// A block's address + 1 (0: empty) and its price: the price itself, one
/// dependent load less on the per-block path than an index into `prices`.
/// Aligned so that no slot straddles two cache lines.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
struct Slot {
    tag: u32,
    price: Price,
}

fn slot_of(addr: u32) -> usize {
    (addr as usize >> 1) & (SLOTS - 1)
}

const TRAIL: usize = 16;

/// Direct-mapped cache in front of a map of all priced blocks.
struct BlockCache {
    /// A fixed-size array: its index needs no bounds check.
    slots: Box<[Slot; SLOTS]>,
    prices: Vec<Price>,
    index: rustc_hash::FxHashMap<u32, u32>,
    /// Start -> end of every priced block of guest code (not intercepted
    /// entry points), to forget the prices of code that is rewritten.
    spans: std::collections::BTreeMap<u32, u32>,
}

/// More than the bytes of the longest block Unicorn translates (512
/// instructions): how far below a write a block that covers it can start.
const LONGEST_BLOCK: u64 = 4096;

impl BlockCache {
    fn new() -> BlockCache {
        BlockCache {
            slots: vec![Slot::default(); SLOTS]
                .into_boxed_slice()
                .try_into()
                .expect("SLOTS slots"),
            prices: Vec::new(),
            index: rustc_hash::FxHashMap::default(),
            spans: std::collections::BTreeMap::new(),
        }
    }

    #[inline(always)]
    fn get(&mut self, addr: u32) -> Option<Price> {
        let slot = &mut self.slots[slot_of(addr)];
        if slot.tag == addr.wrapping_add(1) {
            return Some(slot.price);
        }
        let price = self.prices[*self.index.get(&addr)? as usize];
        *slot = Slot {
            tag: addr.wrapping_add(1),
            price,
        };
        Some(price)
    }

    /// Forgets the prices of blocks with code in `start..end` (the guest
    /// or the debugger wrote there): they are priced anew when they next
    /// run. Intercepted entry points keep theirs.
    fn forget(&mut self, start: u64, end: u64) {
        let below = u32::try_from(end).unwrap_or(u32::MAX);
        let covering: Vec<u32> = self
            .spans
            .range(..below)
            .rev()
            .take_while(|(&a, _)| u64::from(a) + LONGEST_BLOCK > start)
            .filter(|(_, &e)| u64::from(e) > start)
            .map(|(&a, _)| a)
            .collect();
        for addr in covering {
            self.spans.remove(&addr);
            self.index.remove(&addr);
            let slot = &mut self.slots[slot_of(addr)];
            if slot.tag == addr.wrapping_add(1) {
                slot.tag = 0;
            }
        }
    }

    fn insert(&mut self, addr: u32, price: Price) {
        let i = self.prices.len() as u32;
        self.prices.push(price);
        self.index.insert(addr, i);
        if price.fallthrough != u32::MAX {
            self.spans.insert(addr, price.fallthrough);
        }
        self.slots[slot_of(addr)] = Slot {
            tag: addr.wrapping_add(1),
            price,
        };
    }
}

/// Everything the hooks share, stored in Unicorn's user data.
struct State {
    arch: Arch,
    target: Rc<Target>,
    image: Rc<GuestImage>,
    decoder: Decoder,
    cache: BlockCache,
    cycles: u64,
    instructions: u64,
    prev_fallthrough: u64,
    prev_taken_extra: u32,
    prev_last_insn: u64,
    trail: [(u32, u32); TRAIL],
    trail_len: usize,
    max_cycles: u64,
    interrupt: Option<Arc<AtomicI32>>,
    timeout: Option<Duration>,
    /// The live status display, when one is shown.
    progress: Option<Arc<crate::progress::ProgressShared>>,
    stop: Option<Stop>,
    /// The invalid access and the PC of the instruction that made it.
    bad_access: Option<(MemType, u64, usize, u64)>,
    semihost: Semihost,
    console: HostConsole,
    arp: ArpHost,
    warnings: Vec<String>,
    /// The cycle count at which the block hook leaves its fast path: the
    /// slice's end or, sooner, the next poll of Ctrl-C and the status line.
    limit: u64,
    /// The lower of the cycle limit and the running thread's slice end.
    slice_limit: u64,
    sched: Scheduler,
    current: ThreadId,
    /// The registers of threads not running (`thread_registers` order),
    /// by thread; `None` for the running thread and threads never run.
    contexts: Vec<Option<Vec<u64>>>,
    /// Thread stacks are carved downwards from here (the top of the heap).
    next_stack_top: u64,
    stack_floor: u64,
    thread_stack: u64,
    /// Guard pages below thread stacks: (low address, thread).
    guards: Vec<(u64, ThreadId)>,
    /// Stack tops of running threads, and of ended threads' stacks for reuse.
    stacks: HashMap<ThreadId, u64>,
    free_stacks: Vec<u64>,
    /// Where thread functions return to (the `simthread_exit` stub).
    thread_exit: u64,
    /// The running thread's clock after the last observed block.
    observed_cycles: u64,
    /// A debugger asked to start the run again.
    reset: bool,
    /// Where a debugger resumed inside a block that was charged before it
    /// stopped there (`limit` is 0 meanwhile, so the block hook looks).
    debug_resume: Option<u64>,
    /// The slice's `limit` while `debug_resume` borrows it.
    debug_limit: u64,
}

impl State {
    /// The section table's rows so far, call sites named.
    pub(crate) fn section_traces(&self) -> Vec<TraceStats> {
        let image = &self.image;
        self.arp
            .stats()
            .traces(|site| image.function_at(site).map(|f| f.name.clone()))
    }

    /// Where the block hook next leaves its fast path: the slice's end, or
    /// the next poll when there is something to poll.
    fn next_limit(&self) -> u64 {
        if self.interrupt.is_none() && self.progress.is_none() {
            return self.slice_limit;
        }
        self.slice_limit
            .min(self.cycles.saturating_add(POLL_CYCLES))
    }

    /// Hands the status display what the run has done so far.
    #[cold]
    fn publish_progress(&self) {
        if let Some(p) = &self.progress {
            p.publish(crate::progress::Snapshot {
                cycles: self.cycles,
                instructions: self.instructions,
                section: self.arp.innermost_section(),
            });
        }
    }

    fn record_branch(&mut self, to: u64) {
        self.trail[self.trail_len % TRAIL] = (self.prev_last_insn as u32, to as u32);
        self.trail_len += 1;
    }

    fn branches(&self) -> Vec<String> {
        let n = self.trail_len.min(TRAIL);
        (self.trail_len - n..self.trail_len)
            .map(|i| {
                let (from, to) = self.trail[i % TRAIL];
                format!(
                    "{} -> {}",
                    self.image.describe(u64::from(from)),
                    self.image.describe(u64::from(to))
                )
            })
            .collect()
    }
}

type Uc<'a> = Unicorn<'a, State>;

/// Guest memory through Unicorn, for semihosting.
struct UcMemory<'a, 'b>(&'a mut Uc<'b>);

impl GuestMemory for UcMemory<'_, '_> {
    fn read(&self, addr: u32, buf: &mut [u8]) -> Result<(), MemoryFault> {
        self.0
            .mem_read(u64::from(addr), buf)
            .map_err(|_| MemoryFault {
                addr,
                len: buf.len() as u32,
            })
    }
    /// Semihosting writes only where the guest itself could store: not
    /// into code or read-only data, not into a stack guard page (Unicorn's
    /// `mem_write` ignores protections, so they are checked here).
    fn write(&mut self, addr: u32, data: &[u8]) -> Result<(), MemoryFault> {
        let fault = MemoryFault {
            addr,
            len: data.len() as u32,
        };
        if !writable(self.0, u64::from(addr), data.len() as u64) {
            return Err(fault);
        }
        self.0.mem_write(u64::from(addr), data).map_err(|_| fault)
    }
}

/// Whether `[addr, addr + len)` lies in mapped, writable memory.
fn writable(uc: &Uc<'_>, addr: u64, len: u64) -> bool {
    let Ok(regions) = uc.mem_regions() else {
        return false;
    };
    let end = addr.saturating_add(len);
    let mut at = addr;
    while at < end {
        let covering = regions
            .iter()
            .find(|r| r.begin <= at && at <= r.end && r.perms & Prot::WRITE.0 != 0);
        match covering {
            Some(r) if r.end == u64::MAX => return true,
            Some(r) => at = r.end + 1,
            None => return false,
        }
    }
    true
}

struct Regs {
    args: [i32; 4],
    ret_addr: i32,
    ret_value: i32,
    pc: i32,
    sp: i32,
}

fn regs(arch: Arch) -> Regs {
    match arch {
        Arch::Arm => Regs {
            args: [
                RegisterARM::R0 as i32,
                RegisterARM::R1 as i32,
                RegisterARM::R2 as i32,
                RegisterARM::R3 as i32,
            ],
            ret_addr: RegisterARM::LR as i32,
            ret_value: RegisterARM::R0 as i32,
            pc: RegisterARM::PC as i32,
            sp: RegisterARM::SP as i32,
        },
        Arch::Riscv => Regs {
            args: [
                RegisterRISCV::X10 as i32,
                RegisterRISCV::X11 as i32,
                RegisterRISCV::X12 as i32,
                RegisterRISCV::X13 as i32,
            ],
            ret_addr: RegisterRISCV::X1 as i32,
            ret_value: RegisterRISCV::X10 as i32,
            pc: RegisterRISCV::PC as i32,
            sp: RegisterRISCV::X2 as i32,
        },
    }
}

/// Reads the 32-bit registers `ids` (at most 8) in one call; all 0 if a
/// read fails. Not the wrapper's `reg_read`: it reads each into a
/// `u64` that Unicorn fills with a 4-byte store, and the 8-byte load after
/// it stalls on the store buffer (a third of an ARP interception). For the
/// same reason the values are read back one by one (volatile: a merged
/// 16-byte load would stall the same way).
fn read_regs32(uc: &Uc<'_>, ids: &[i32]) -> [u32; 8] {
    let mut buffer = [0u32; 8];
    let mut sizes = [4usize; 8];
    let mut pointers = [std::ptr::null_mut::<std::ffi::c_void>(); 8];
    for (p, v) in pointers.iter_mut().zip(buffer.iter_mut()) {
        *p = (v as *mut u32).cast();
    }
    let n = ids.len().min(8);
    // SAFETY: the first n pointers are live, distinct u32s, and their sizes
    // say 4 bytes, which Unicorn checks against each register's width.
    let err = unsafe {
        unicorn_engine_sys::uc_reg_read_batch2(
            uc.get_handle(),
            ids.as_ptr(),
            pointers.as_ptr(),
            sizes.as_mut_ptr(),
            n as i32,
        )
    };
    if err != unicorn_engine_sys::uc_error::OK {
        return [0; 8];
    }
    // SAFETY: reads of initialised u32s of a live local array.
    std::array::from_fn(|i| unsafe { std::ptr::read_volatile(&buffer[i]) })
}

/// Unicorn register id of architectural register `n`.
fn arch_reg(arch: Arch, n: u8) -> i32 {
    match arch {
        Arch::Arm => match n {
            13 => RegisterARM::SP as i32,
            14 => RegisterARM::LR as i32,
            15 => RegisterARM::PC as i32,
            n => RegisterARM::R0 as i32 + i32::from(n),
        },
        Arch::Riscv => RegisterRISCV::X0 as i32 + i32::from(n),
    }
}

fn cpu_model(target: &Target) -> Result<i32, MachineError> {
    let unknown = || MachineError::UnknownCpu {
        target: target.name.clone(),
        cpu: target.cpu.clone(),
    };
    Ok(match (target.arch, target.cpu.as_str()) {
        (Arch::Arm, "cortex-m0") => ArmCpuModel::CORTEX_M0 as i32,
        (Arch::Arm, "cortex-m3") => ArmCpuModel::CORTEX_M3 as i32,
        (Arch::Arm, "cortex-m4") => ArmCpuModel::CORTEX_M4 as i32,
        (Arch::Arm, "cortex-m7") => ArmCpuModel::CORTEX_M7 as i32,
        (Arch::Arm, "cortex-m33") => ArmCpuModel::CORTEX_M33 as i32,
        (Arch::Riscv, "sifive-e31") => Riscv32CpuModel::SIFIVE_E31 as i32,
        (Arch::Riscv, "rv32") => Riscv32CpuModel::ANY as i32,
        _ => return Err(unknown()),
    })
}

fn prot(region: &crate::target::Region) -> Prot {
    let mut p = Prot::NONE;
    if region.access.read {
        p |= Prot::READ;
    }
    if region.access.write {
        p |= Prot::WRITE;
    }
    if region.access.execute {
        p |= Prot::EXEC;
    }
    p
}

/// Maps the target's regions and sets up how Unicorn fills its TLB, so
/// that ordinary data stores to RAM take QEMU's fast path (issue 19;
/// BENCHMARKS.md, "The store path").
///
/// Why stores were slow: the bundled QEMU stubs out dirty-memory tracking
/// (`cpu_physical_memory_is_clean` always answers "clean"), so every TLB
/// entry of a writable RAM page is filled with `TLB_NOTDIRTY` and every
/// store to it goes through `store_helper` → `notdirty_write` (two
/// `address_space_translate` region lookups, `tb_invalidate_phys_page_fast`).
/// `notdirty_write` clears the flag only when the entry is not executable
/// (`addr_code == -1`) and no memory hook covers the address. With the CPU's
/// own TLB fill every RAM page is executable (the ARMv7-M default memory map
/// and RISC-V M-mode allow execution everywhere), so the flag was never
/// cleared.
///
/// The fix keeps the regions' permissions and replaces the TLB fill
/// (`TlbType::VIRTUAL` and a fill hook, identity-mapped): a data access to
/// a writable page that has never been fetched from gets a read/write
/// entry without execute, so after its first store the page's stores are
/// fast. The first instruction fetch from a writable page marks it as code
/// for the rest of the run and flushes the TLB; from then on every entry of
/// that page is executable, so stores to it always take the slow path that
/// invalidates translated code (self-modifying code stays correct,
/// `tests/tests/smc.rs`). Unicorn still checks the regions' permissions on
/// every fill, so faults are unchanged. A memory hook covering an address
/// keeps its stores slow: [`fault_hook_ranges`] leaves writable RAM out of
/// the fault hook.
fn map_memory(emu: &mut Uc<'_>, target: &Target) -> Result<(), MachineError> {
    for region in &target.regions {
        uc(
            &format!("map region {}", region.name),
            emu.mem_map(region.start, region.size, prot(region)),
        )?;
    }
    let writable: Vec<(u64, u64)> = target
        .regions
        .iter()
        .filter(|r| r.access.write)
        .map(|r| (r.start, r.end()))
        .collect();
    // target pages (1 KiB on ARM, 4 KiB on RISC-V) of writable regions that
    // have held code
    let mut code_pages = rustc_hash::FxHashSet::<u64>::default();
    let page_size = u64::from(uc("page size", emu.ctl_get_page_size())?);
    uc(
        "TLB mode",
        emu.ctl_set_tlb_type(unicorn_engine::TlbType::VIRTUAL),
    )?;
    uc(
        "TLB fill hook",
        emu.add_tlb_hook(1, 0, move |uc: &mut Uc<'_>, page, kind| {
            let in_writable = writable.iter().any(|&(s, e)| (s..e).contains(&page));
            let executable = if kind == MemType::FETCH {
                if in_writable && code_pages.insert(page) {
                    watch_code_page(uc, page & !(page_size - 1), page_size);
                    // entries filled while the page held only data must go
                    let _ = uc.ctl_flush_tlb();
                }
                true
            } else {
                !in_writable || code_pages.contains(&page)
            };
            Some(unicorn_engine::TlbEntry {
                paddr: page,
                perms: if executable {
                    Prot::ALL
                } else {
                    Prot::READ | Prot::WRITE
                },
            })
        }),
    )?;
    Ok(())
}

/// Stores to a page of RAM that holds code forget the prices of the blocks
/// they overwrite (Unicorn re-translates the code itself). Such stores are
/// on QEMU's slow path anyway ([`map_memory`]), so the hook adds little.
#[cold]
#[inline(never)]
fn watch_code_page(uc: &mut Uc<'_>, page: u64, page_size: u64) {
    let forget = |uc: &mut Uc<'_>, _: MemType, addr: u64, size: usize, _: i64| {
        uc.get_data_mut()
            .cache
            .forget(addr, addr.saturating_add(size as u64));
        true
    };
    let _ = uc.add_mem_hook(HookType::MEM_WRITE, page, page + page_size - 1, forget);
}

/// The address ranges (inclusive) the memory fault hook covers: everything
/// but the writable regions, whose stores a covering hook would keep on
/// the slow path (see [`map_memory`]). Writable regions are RAM, mapped
/// whole, so an access there faults only on a thread's guard page, which
/// gets a hook of its own ([`add_fault_hook`] in `allocate_stack`).
fn fault_hook_ranges(target: &Target) -> Vec<(u64, u64)> {
    let mut holes: Vec<(u64, u64)> = target
        .regions
        .iter()
        .filter(|r| r.access.write)
        .map(|r| (r.start, r.end()))
        .collect();
    holes.sort_unstable();
    let mut ranges = Vec::new();
    let mut next = 0u64;
    for (start, end) in holes {
        if start > next {
            ranges.push((next, start - 1));
        }
        next = next.max(end);
    }
    ranges.push((next, u64::MAX));
    ranges
}

/// Records an invalid access (unmapped, or against a region's permissions)
/// in `first..=last` for the fault report.
fn add_fault_hook(uc: &mut Uc<'_>, first: u64, last: u64) -> Result<(), uc_error> {
    uc.add_mem_hook(
        HookType::MEM_INVALID,
        first,
        last,
        |uc: &mut Uc<'_>, kind, addr, size, _| {
            let pc = uc.pc_read().unwrap_or(0);
            uc.get_data_mut().bad_access = Some((kind, addr, size, pc));
            false
        },
    )
    .map(|_| ())
}

#[cfg(test)]
mod memory_tests {
    use super::fault_hook_ranges;
    use crate::target;

    #[test]
    fn the_fault_hook_covers_everything_but_writable_regions() {
        for name in target::builtin_names() {
            let t = target::builtin(&name).unwrap();
            let ranges = fault_hook_ranges(&t);
            let covered = |a: u64| ranges.iter().any(|&(s, e)| (s..=e).contains(&a));
            for r in &t.regions {
                let probes = [r.start, r.start + r.size / 2, r.end() - 1];
                for a in probes {
                    assert_eq!(covered(a), !r.access.write, "{name} {} {a:#x}", r.name);
                }
                assert!(
                    r.start == 0 || covered(r.start - 1),
                    "{name} below {}",
                    r.name
                );
                assert!(covered(r.end()), "{name} above {}", r.name);
            }
            assert!(covered(u64::MAX), "{name}");
        }
    }
}

/// Addresses of the `ebreak` of RISC-V semihosting sequences
/// (`slli x0,x0,0x1f; ebreak; srai x0,x0,7`) in executable segments.
fn riscv_semihosting_sites(image: &GuestImage) -> Vec<u64> {
    const SLLI: [u8; 4] = 0x01f0_1013u32.to_le_bytes();
    const EBREAK: [u8; 4] = 0x0010_0073u32.to_le_bytes();
    const SRAI: [u8; 4] = 0x4070_5013u32.to_le_bytes();
    let mut sites = Vec::new();
    for seg in image.segments.iter().filter(|s| s.executable) {
        let d = &seg.data;
        let mut i = 0;
        while i + 12 <= d.len() {
            if d[i..i + 4] == SLLI && d[i + 4..i + 8] == EBREAK && d[i + 8..i + 12] == SRAI {
                sites.push(seg.load_addr + i as u64 + 4);
                i += 12;
            } else {
                i += 2;
            }
        }
    }
    sites
}

/// Data-dependent instructions (dividers, early-terminating multipliers)
/// in the image's functions, found before the run so their hooks exist
/// before any code is translated.
fn dynamic_sites(image: &GuestImage, target: &Target, decoder: &Decoder) -> Vec<DynamicSite> {
    let mut sites = Vec::new();
    let dynamic_classes: Vec<InsnClass> = target
        .classes
        .iter()
        .filter(|(_, c)| c.dynamic.is_some())
        .map(|(k, _)| *k)
        .collect();
    if dynamic_classes.is_empty() {
        return sites;
    }
    for (i, f) in image.functions.iter().enumerate() {
        // assembly functions often have no size: decode up to the next one
        let size = if f.size > 0 {
            f.size
        } else {
            image
                .functions
                .get(i + 1)
                .map_or(0, |next| next.addr - f.addr)
                .min(4096)
        };
        let Some(code) = image.bytes_at(f.addr, size as usize) else {
            continue;
        };
        let Ok(insns) = decoder.decode(code, f.addr, false) else {
            continue;
        };
        let cost = cycles::price_block(target, &insns, 0);
        sites.extend(cost.dynamic);
    }
    sites.sort_by_key(|s| s.addr);
    sites.dedup_by_key(|s| s.addr);
    sites
}

/// Initial stack pointer and entry: from the vector table on M-profile
/// cores (as the hardware does at reset), else the ELF entry and the top of
/// the highest RAM region.
fn reset_state(image: &GuestImage, target: &Target) -> (u64, u64) {
    let ram_top = target
        .regions
        .iter()
        .filter(|r| r.access.write)
        .map(|r| r.end())
        .max()
        .unwrap_or(0);
    if target.arch == Arch::Arm {
        if let (Some(sp), Some(pc)) = (image.bytes_at(0, 4), image.bytes_at(4, 4)) {
            let sp = u64::from(u32::from_le_bytes(sp.try_into().expect("4 bytes")));
            let pc = u64::from(u32::from_le_bytes(pc.try_into().expect("4 bytes")));
            let sp_in_ram = target
                .regions
                .iter()
                .any(|r| r.access.write && sp > r.start && sp <= r.end());
            if sp_in_ram && image.function_at(pc & !1).is_some() {
                return (sp, pc & !1);
            }
        }
    }
    (ram_top, image.entry & !1)
}

fn price_at(uc: &mut Uc<'_>, addr: u64, size: u32) -> Price {
    let len = if size == 0 { 64 } else { size as usize };
    let mut code = vec![0u8; len];
    if uc.mem_read(addr, &mut code).is_err() {
        return Price::default();
    }
    let st = uc.get_data();
    let wait = st.target.region_of(addr, 1).map_or(0, |r| r.wait_states);
    let insns = st
        .decoder
        .decode(&code, addr, size == 0)
        .unwrap_or_default();
    let cost = cycles::price_block(&st.target, &insns, wait);
    Price {
        cycles: cost.cycles,
        instructions: cost.instructions,
        fallthrough: cost.fallthrough as u32,
        last_insn: insns.last().map_or(addr, |i| i.addr) as u32,
        taken_extra: cost.taken_extra as u16,
        entry_penalty: cost.entry_penalty as u16,
        intercept: 0,
    }
}

/// Whether an ARM core is in Thumb state (EPSR.T, xPSR bit 24); always
/// true for other architectures.
fn thumb_state(uc: &Uc<'_>) -> bool {
    if uc.get_data().arch != Arch::Arm {
        return true;
    }
    uc.reg_read(RegisterARM::XPSR as i32)
        .map_or(true, |xpsr| xpsr & (1 << 24) != 0)
}

/// An emulator error in words (`READ_UNMAPPED` → "read unmapped").
fn emulation_error_text(error: uc_error) -> String {
    let name = format!("{error:?}").to_lowercase().replace('_', " ");
    format!("emulation error: {name}")
}

fn fault(uc: &mut Uc<'_>, kind: String, address: Option<u64>) -> Stop {
    let arch = uc.get_data().arch;
    let pc = uc.reg_read(regs(arch).pc).unwrap_or(0);
    let mut code = [0u8; 4];
    let instruction = uc
        .mem_read(pc, &mut code)
        .ok()
        .and_then(|_| uc.get_data().decoder.disassemble_one(&code, pc));
    let st = uc.get_data();
    // The source line too, where the debug information knows it.
    let source = crate::symbols::locate_all(&st.image, &[pc])
        .remove(&pc)
        .and_then(|l| l.file_line())
        .map_or_else(String::new, |place| format!(" at {place}"));
    Stop::Fault(Fault {
        kind,
        address,
        pc,
        location: format!("{}{source}", st.image.describe(pc)),
        instruction,
        branches: st.branches(),
    })
}

/// The block hook at a slice boundary (the clock reached `limit`): returns
/// whether the hook goes on to charge the block at `addr`. Not when it
/// stops the slice (the scheduler chooses) or the run (the cycle limit, or
/// Ctrl-C seen at a poll); nor for the rest of a block a debugger resumed
/// in, which was charged before the debugger stopped inside it (`limit` is
/// 0 until then).
#[cold]
fn at_slice_boundary(uc: &mut Uc<'_>, addr: u64) -> bool {
    let st = uc.get_data_mut();
    if let Some(resumed_at) = st.debug_resume.take() {
        st.limit = st.debug_limit;
        if resumed_at == addr {
            return false;
        }
        if st.cycles < st.limit {
            return true;
        }
    }
    if st.cycles < st.slice_limit {
        return poll(uc);
    }
    if st.cycles >= st.max_cycles {
        let limit = st.max_cycles;
        stop_with(uc, Stop::CycleLimit(limit));
    } else {
        let _ = uc.emu_stop();
    }
    false
}

/// Simulated cycles between two looks at Ctrl-C and the status line:
/// about a millisecond of host time, and no load of either per block.
const POLL_CYCLES: u64 = 1 << 20;

/// A poll inside a slice: stops the run at Ctrl-C, hands the status line a
/// snapshot when it asks, and sets the next poll. Returns whether the run
/// goes on.
fn poll(uc: &mut Uc<'_>) -> bool {
    let st = uc.get_data_mut();
    if let Some(signal) = st.interrupt.as_ref().map(|f| f.load(Ordering::Relaxed)) {
        if signal != 0 {
            stop_with(uc, Stop::Interrupted(signal));
            return false;
        }
    }
    if st.progress.as_ref().is_some_and(|p| p.wanted()) {
        st.publish_progress();
    }
    st.limit = st.next_limit();
    true
}

fn stop_with(uc: &mut Uc<'_>, stop: Stop) {
    if uc.get_data().stop.is_none() {
        uc.get_data_mut().stop = Some(stop);
    }
    let _ = uc.emu_stop();
}

/// Carries out a semihosting call whose operation and parameter are in the
/// first two argument registers.
fn semihosting_call(uc: &mut Uc<'_>) {
    let r = regs(uc.get_data().arch);
    let op = uc.reg_read(r.args[0]).unwrap_or(0) as u32;
    let param = uc.reg_read(r.args[1]).unwrap_or(0) as u32;
    let request = match semihost::decode(op, param, &UcMemory(uc)) {
        Ok(req) => req,
        Err(e) => {
            let stop = fault(
                uc,
                format!("bad semihosting call {op:#x}: {e}"),
                Some(u64::from(e.addr)),
            );
            return stop_with(uc, stop);
        }
    };
    // Take the semihosting state and console out so the guest memory can be
    // borrowed mutably alongside them.
    let cycles = uc.get_data().cycles;
    let mut sh = std::mem::replace(
        &mut uc.get_data_mut().semihost,
        Semihost::new(Sandbox::none(), String::new(), 1, [0; 4]),
    );
    let mut console = std::mem::take(&mut uc.get_data_mut().console);
    let result = sh.handle(
        request,
        cycles,
        &mut UcMemory(uc),
        &mut console as &mut dyn Console,
    );
    let cut_short = std::mem::take(&mut console.read_cut_short);
    uc.get_data_mut().semihost = sh;
    uc.get_data_mut().console = console;
    if cut_short {
        // A read from stdin gave up: stop now, as the block hook would.
        return stop_for_deadline_or_signal(uc);
    }
    match result {
        Ok(Outcome::Return(v)) => {
            let _ = uc.reg_write(r.ret_value, u64::from(v));
        }
        Ok(Outcome::Exit(status)) => stop_with(uc, Stop::Exit(status)),
        Err(e) => {
            let stop = fault(
                uc,
                format!("bad semihosting call {op:#x}: {e}"),
                Some(u64::from(e.addr)),
            );
            stop_with(uc, stop);
        }
    }
}

/// Stops a run whose console read gave up: for a stop signal, or for the
/// deadline of `--timeout`.
fn stop_for_deadline_or_signal(uc: &mut Uc<'_>) {
    let st = uc.get_data();
    let signal = st
        .interrupt
        .as_ref()
        .map_or(0, |f| f.load(Ordering::Relaxed));
    let stop = match (signal, st.timeout) {
        (s, _) if s > 0 => Stop::Interrupted(s),
        (_, Some(t)) => Stop::Timeout(t),
        (s, None) => Stop::Interrupted(s),
    };
    stop_with(uc, stop);
}

/// Runs an intercepted ARP entry point and returns to the caller.
/// Runs an intercepted ARP call; `return_by_pc`: the stub's body is the
/// ELF's, so the call returns by writing PC (see [`return_at_once`]).
fn intercept(uc: &mut Uc<'_>, entry: EntryPoint, return_by_pc: bool) {
    let arch = uc.get_data().arch;
    let r = regs(arch);
    let [a0, a1, a2, a3] = r.args;
    let ids = [r.ret_addr, a0, a1, a2, a3];
    let values = read_regs32(uc, &ids[..1 + entry.arity()]);
    let ret = u64::from(values[0]);
    // built in place, not copied: a copy would read the four 4-byte
    // stores back as one 16-byte load, which stalls like the wrapper's
    let args = CallArgs([values[1], values[2], values[3], values[4]]);
    let name = if entry == EntryPoint::SetFileName {
        UcMemory(uc)
            .read_cstr(args.0[0])
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    } else {
        None
    };
    let st = uc.get_data_mut();
    let call_site = (ret & !1).saturating_sub(4);
    st.arp.counters.cycles.set(st.cycles);
    st.arp.counters.instructions.set(st.instructions);
    let current = st.current;
    let core = st.sched.thread(current).core.unwrap_or(0) as u32;
    st.arp.counters.core.set(core);
    st.arp.counters.thread.set(current);
    let result = if st.arp.has_plugins() {
        // plugin callbacks may read the guest through the host API meanwhile
        let (counters, clock_hz) = (Rc::clone(&st.arp.counters), st.target.clock_hz);
        crate::plugin::with_machine_guest(uc, arch, clock_hz, counters, |st| {
            st.arp.call(entry, &args, call_site, &|_| name.clone())
        })
    } else {
        st.arp.call(entry, &args, call_site, &|_| name.clone())
    };
    let st = uc.get_data_mut();
    // playback sets the clock to the recorded cost at a leave
    st.cycles = st.arp.counters.cycles.get();
    // returning skips the stub: the next block is not reached by a branch
    st.prev_fallthrough = ret & !1;
    st.prev_taken_extra = 0;
    let failure = match result {
        Ok(_) => None,
        Err(f) if f.fatal => Some(f.error.to_string()),
        Err(f) => {
            let at = st.image.describe(call_site);
            st.warnings.push(format!("{at}: {}", f.error));
            None
        }
    };
    // only the query API returns values (0 / NULL inside a guest); the
    // record API is void, and its return register is left as it is
    if entry == EntryPoint::Query {
        let _ = uc.reg_write(r.ret_value, 0);
    }
    if return_by_pc {
        let _ = uc.reg_write(r.pc, ret);
    }
    if let Some(message) = failure {
        let at = uc.get_data().image.describe(call_site);
        stop_with(uc, Stop::Arp(format!("{at}: {message}")));
    }
}

/// The registers a thread switch saves and restores: everything a
/// soft-float M-profile or RV32 program keeps per thread. (Explicit rather
/// than Unicorn's context save, which does not restore RV32's registers in
/// Unicorn 2.1.5.)
fn thread_registers(arch: Arch) -> Vec<i32> {
    match arch {
        Arch::Arm => {
            let mut r: Vec<i32> = (0..13).map(|n| arch_reg(arch, n)).collect();
            r.extend([
                RegisterARM::SP as i32,
                RegisterARM::LR as i32,
                RegisterARM::XPSR as i32,
                RegisterARM::PC as i32,
            ]);
            r
        }
        Arch::Riscv => {
            let mut r: Vec<i32> = (1..32).map(|n| arch_reg(arch, n)).collect();
            r.push(RegisterRISCV::PC as i32);
            r
        }
    }
}

/// Makes `next` the running thread: saves the running thread's registers
/// and restores `next`'s.
fn switch_thread(
    emu: &mut Uc<'static>,
    next: ThreadId,
    thread_regs: &[i32],
) -> Result<(), MachineError> {
    let current = emu.get_data().current;
    if next == current {
        return Ok(());
    }
    let ctx = thread_regs
        .iter()
        .map(|reg| emu.reg_read(*reg))
        .collect::<Result<Vec<u64>, _>>();
    let ctx = uc("save registers", ctx)?;
    let contexts = &mut emu.get_data_mut().contexts;
    if contexts.len() <= current as usize {
        contexts.resize_with(current as usize + 1, || None);
    }
    contexts[current as usize] = Some(ctx);
    // A thread that never ran starts from the registers of the one that
    // ran last, which it shares the program's global state with (RISC-V gp
    // and tp, the M-profile control registers); its own SP, PC, return
    // address and argument are set by the caller.
    if let Some(ctx) = emu
        .get_data_mut()
        .contexts
        .get_mut(next as usize)
        .and_then(Option::take)
    {
        for (reg, value) in thread_regs.iter().zip(&ctx) {
            uc("restore registers", emu.reg_write(*reg, *value))?;
        }
    }
    emu.get_data_mut().current = next;
    Ok(())
}

/// Makes the function `name` (if the guest has it) an intercepted entry
/// point: its block costs nothing and `handler` runs instead of its body.
fn intercept_function(
    emu: &mut Uc<'static>,
    image: &GuestImage,
    name: &str,
    handler: impl Fn(&mut Uc<'_>) + 'static,
) -> Result<(), MachineError> {
    let Some(f) = image.function(name) else {
        return Ok(());
    };
    price_at_zero(emu, f.addr, 0);
    uc(
        &format!("hook {name}"),
        emu.add_code_hook(f.addr, f.addr, move |uc: &mut Uc<'_>, _, _| handler(uc)),
    )?;
    Ok(())
}

/// An intercepted function's block: it costs nothing, and its successor
/// is not reached by a branch the guest pays for.
fn price_at_zero(emu: &mut Uc<'static>, addr: u64, intercept: u8) {
    emu.get_data_mut().cache.insert(
        addr as u32,
        Price {
            fallthrough: u32::MAX,
            last_insn: addr as u32,
            intercept,
            ..Price::default()
        },
    );
}

/// The fast interception of ARP entry point `index` (in `ENTRY_POINTS`):
/// the block hook, which runs at every block anyway, intercepts the stub's
/// block (no code hook, whose dispatch scans every code hook), and the
/// stub returns as its first instruction, written into the emulated
/// memory only (the ELF is untouched), so the interception needs no PC
/// write, which would make Unicorn leave the translated code and enter it
/// again. The return executes in the stub's block, priced at zero. Not
/// with a debugger (which shows and steps the stub as the ELF has it) nor
/// with observers (which would see a playback's clock change in the
/// stub's block instead of the next one).
fn return_at_once(
    emu: &mut Uc<'static>,
    image: &GuestImage,
    index: usize,
) -> Result<(), MachineError> {
    let name = ENTRY_POINTS[index].0;
    let Some(f) = image.function(name) else {
        return Ok(());
    };
    let ret: &[u8] = match image.arch {
        Arch::Arm => &[0x70, 0x47],               // bx lr
        Arch::Riscv => &[0x67, 0x80, 0x00, 0x00], // jalr x0, 0(ra)
    };
    if f.size < ret.len() as u64 {
        let entry = ENTRY_POINTS[index].1;
        return intercept_function(emu, image, name, move |uc| intercept(uc, entry, true));
    }
    price_at_zero(emu, f.addr, 1 + index as u8);
    uc(&format!("return from {name}"), emu.mem_write(f.addr, ret))
}

/// Guest threads switch after this many cycles ahead of the next thread.
const THREAD_QUANTUM: u64 = 2_000;
const PAGE: u64 = crate::target::PAGE_SIZE;

/// The `simthread.h` entry points the host implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ThreadCall {
    Create,
    Join,
    SelfId,
    Cores,
    MutexInit,
    Lock,
    Unlock,
    BarrierInit,
    BarrierWait,
    Exit,
}

const THREAD_CALLS: &[(&str, ThreadCall)] = &[
    ("simthread_create", ThreadCall::Create),
    ("simthread_join", ThreadCall::Join),
    ("simthread_self", ThreadCall::SelfId),
    ("simthread_cores", ThreadCall::Cores),
    ("simthread_mutex_init", ThreadCall::MutexInit),
    ("simthread_mutex_lock", ThreadCall::Lock),
    ("simthread_mutex_unlock", ThreadCall::Unlock),
    ("simthread_barrier_init", ThreadCall::BarrierInit),
    ("simthread_barrier_wait", ThreadCall::BarrierWait),
    ("simthread_exit", ThreadCall::Exit),
];

/// The end of the guest's heap: `__heap_end`, else `__stack - __stack_size`.
fn heap_end(image: &GuestImage) -> u64 {
    image.symbol("__heap_end").unwrap_or_else(|| {
        match (image.symbol("__stack"), image.symbol("__stack_size")) {
            (Some(stack), Some(size)) => stack.saturating_sub(size),
            _ => 0,
        }
    })
}

/// A stack for a new thread: an ended thread's, else a new one with a
/// guard page below it, carved from the top of the heap.
fn allocate_stack(uc: &mut Uc<'_>) -> Option<u64> {
    let id = uc.get_data().sched.threads.len() as ThreadId;
    if let Some(top) = uc.get_data_mut().free_stacks.pop() {
        let st = uc.get_data_mut();
        st.stacks.insert(id, top);
        let guard = top - st.thread_stack - PAGE;
        if let Some(g) = st.guards.iter_mut().find(|(low, _)| *low == guard) {
            g.1 = id;
        }
        return Some(top);
    }
    let st = uc.get_data();
    let top = st.next_stack_top;
    let guard = top.checked_sub(st.thread_stack + PAGE)?;
    if top == 0 || guard < st.stack_floor {
        return None;
    }
    uc.mem_protect(guard, PAGE, Prot::NONE).ok()?;
    add_fault_hook(uc, guard, guard + PAGE - 1).ok()?;
    let st = uc.get_data_mut();
    st.next_stack_top = guard;
    st.guards.push((guard, id));
    st.stacks.insert(id, top);
    Some(top)
}

/// Runs an intercepted `simthread_*` call for the running thread.
fn intercept_thread_call(uc: &mut Uc<'_>, call: ThreadCall) {
    use threads::Outcome::{Block, Continue};
    let arch = uc.get_data().arch;
    let r = regs(arch);
    let mut a = [0u32; 3];
    for (v, reg) in a.iter_mut().zip(r.args) {
        *v = uc.reg_read(reg).unwrap_or(0) as u32;
    }
    let ret = uc.reg_read(r.ret_addr).unwrap_or(0);
    let cur = uc.get_data().current;
    {
        let st = uc.get_data_mut();
        let clock = st.cycles;
        st.sched.thread_mut(cur).clock = clock;
    }
    let outcome: Result<threads::Outcome, String> = match call {
        ThreadCall::Create => match allocate_stack(uc) {
            None => {
                let st = uc.get_data_mut();
                st.warnings.push(format!(
                    "simthread_create: no room for another {} KiB thread stack in the heap",
                    st.thread_stack / 1024
                ));
                Ok(Continue(u32::MAX))
            }
            Some(stack_top) => {
                let st = uc.get_data_mut();
                let clock = st.cycles;
                let id = st.sched.create(
                    clock,
                    threads::Start {
                        function: u64::from(a[1]),
                        argument: a[2],
                        stack_top,
                    },
                );
                match uc.mem_write(u64::from(a[0]), &id.to_le_bytes()) {
                    // a new runnable thread: stop so the scheduler orders
                    // the two; the creator resumes with 0
                    Ok(()) => {
                        uc.get_data_mut().sched.thread_mut(cur).pending_return = Some(0);
                        Ok(Block)
                    }
                    Err(_) => Err(format!(
                        "simthread_create: the handle address {:#010x} is not writable",
                        a[0]
                    )),
                }
            }
        },
        ThreadCall::Join => uc
            .get_data_mut()
            .sched
            .join(cur, a[0])
            .map_err(|e| e.to_string()),
        ThreadCall::SelfId => Ok(Continue(cur)),
        ThreadCall::Cores => Ok(Continue(uc.get_data().sched.cores.len() as u32)),
        ThreadCall::MutexInit => Ok(Continue(0)),
        ThreadCall::Lock => Ok(uc.get_data_mut().sched.lock(cur, a[0])),
        ThreadCall::Unlock => uc
            .get_data_mut()
            .sched
            .unlock(cur, a[0])
            .map(|_| Continue(0))
            .map_err(|e| e.to_string()),
        ThreadCall::BarrierInit => uc
            .get_data_mut()
            .sched
            .barrier_init(a[0], a[1])
            .map(|_| Continue(0))
            .map_err(|e| e.to_string()),
        ThreadCall::BarrierWait => uc
            .get_data_mut()
            .sched
            .barrier_wait(cur, a[0])
            .map_err(|e| e.to_string()),
        ThreadCall::Exit => {
            if cur == 0 {
                Err("simthread_exit called by the main thread".into())
            } else {
                let st = uc.get_data_mut();
                st.sched.exit(cur);
                if let Some(top) = st.stacks.remove(&cur) {
                    st.free_stacks.push(top);
                }
                Ok(Block)
            }
        }
    };
    // Joins and barriers may have moved the clock on (waiting time).
    let st = uc.get_data_mut();
    st.cycles = st.sched.thread(cur).clock;
    st.prev_fallthrough = ret & !1;
    st.prev_taken_extra = 0;
    let _ = uc.reg_write(r.pc, ret);
    match outcome {
        Ok(Continue(value)) => {
            let _ = uc.reg_write(r.ret_value, u64::from(value));
        }
        Ok(Block) => {
            // resumed after the call with its pending return value
            let _ = uc.emu_stop();
        }
        Err(message) => {
            let stop = fault(uc, message, None);
            stop_with(uc, stop);
        }
    }
}

fn describe_intr(arch: Arch, intno: u32) -> String {
    match arch {
        // QEMU's EXCP_* numbers, as Unicorn reports them for ARM
        Arch::Arm => match intno {
            1 => "undefined instruction (UsageFault)".into(),
            2 => "SVC with no operating system to take it".into(),
            3 => "prefetch abort (instruction fetch fault)".into(),
            4 => "data abort (BusFault)".into(),
            7 => "breakpoint (BKPT other than semihosting 0xAB)".into(),
            8 => "exception return with no exception active".into(),
            17 => "coprocessor or FPU instruction on a core without one (UsageFault NOCP)".into(),
            18 => "invalid state: branch to ARM (non-Thumb) code (UsageFault INVSTATE)".into(),
            19 => "stack limit exceeded (STKOF)".into(),
            22 => "unaligned access (UsageFault UNALIGNED)".into(),
            n => format!("exception {n} (HardFault)"),
        },
        // RISC-V mcause codes
        Arch::Riscv => match intno {
            0 => "instruction address misaligned".into(),
            1 => "instruction access fault".into(),
            2 => "illegal instruction".into(),
            3 => "breakpoint (ebreak outside a semihosting sequence)".into(),
            4 => "load address misaligned".into(),
            5 => "load access fault".into(),
            6 => "store address misaligned".into(),
            7 => "store access fault".into(),
            8 | 9 | 11 => "ecall with no environment to take it".into(),
            n => format!("trap {n}"),
        },
    }
}

/// Loads the image into a fresh machine and runs it to the end.
pub fn run(
    image: GuestImage,
    target: Target,
    mut options: RunOptions,
) -> Result<RunOutcome, MachineError> {
    check_limits(&options, &target)?;
    // a debugger interrupts through the stop flag: a run it controls has
    // one, kept across resets
    if options.debugger.is_some() && options.interrupt.is_none() {
        options.interrupt = Some(Arc::new(AtomicI32::new(0)));
    }
    // Plugin callbacks cannot be interrupted: a watchdog ends a run whose
    // callback hangs past its timeout or a stop signal.
    let _watchdog = (!options.arp.plugins.is_empty()).then(|| {
        crate::plugin::watchdog::Watchdog::start(
            options.timeout.map(|t| Instant::now() + t),
            options.interrupt.clone(),
        )
    });
    let image = Rc::new(image);
    let target = Rc::new(target);
    loop {
        if let Some(outcome) = run_once(Rc::clone(&image), Rc::clone(&target), &options)? {
            return Ok(outcome);
        }
        // the debugger reset the guest: observers start from nothing too
        for o in &options.observers {
            o.borrow_mut().reset();
        }
    }
}

/// One run from the first instruction; `None` if a debugger reset it.
fn run_once(
    image: Rc<GuestImage>,
    target: Rc<Target>,
    options: &RunOptions,
) -> Result<Option<RunOutcome>, MachineError> {
    let arch = target.arch;
    let decoder = Decoder::new(arch)?;
    let dynamic = dynamic_sites(&image, &target, &decoder);
    let state = new_state(&image, &target, options, decoder)?;
    let mut emu = create_engine(state, &target, &image)?;
    install_interception(&mut emu, &image, options)?;
    let debug_dynamic = options.debugger.as_ref().map(|_| dynamic.clone());
    // kept until the run ends: the block hook is removed when dropped
    let _block_hook = install_cycle_hooks(&mut emu, dynamic, options.counting)?;
    install_observers(&mut emu, &options.observers)?;
    install_exception_hooks(&mut emu, &image, &target, options.counting)?;

    let (sp, entry) = reset_state(&image, &target);
    let r = regs(arch);
    let thumb = u64::from(arch == Arch::Arm);
    uc("set SP", emu.reg_write(r.sp, sp))?;
    uc("set PC", emu.reg_write(r.pc, entry | thumb))?;
    let mut debug = match (&options.debugger, options.interrupt.clone()) {
        (Some(debugger), Some(interrupt)) => Some(DebugSession::new(
            &emu,
            Rc::clone(debugger),
            debug_dynamic.as_deref().unwrap_or_default(),
            interrupt,
        )),
        _ => None,
    };
    let started = Instant::now();
    let (result, paused) = run_threads(&mut emu, options, &mut debug, started)?;
    if emu.get_data().reset {
        return Ok(None);
    }
    let host_time = started.elapsed().saturating_sub(paused);
    if emu.get_data().stop.is_none() {
        let stop = stop_of(&mut emu, result, &target);
        emu.get_data_mut().stop = Some(stop);
    }
    if let (Some(session), Some(stop)) = (&debug, emu.get_data().stop.clone()) {
        session.ended(&stop);
    }
    Ok(Some(outcome(&mut emu, &image, host_time)))
}

/// The state the hooks share, for a run from the first instruction.
fn new_state(
    image: &Rc<GuestImage>,
    target: &Rc<Target>,
    options: &RunOptions,
    decoder: Decoder,
) -> Result<State, MachineError> {
    let heap = [
        image.symbol("__heap_start").unwrap_or(0) as u32,
        image.symbol("__heap_end").unwrap_or(0) as u32,
        image.symbol("__stack").unwrap_or(0) as u32,
        image.symbol("__heap_end").unwrap_or(0) as u32,
    ];
    let interrupt = options.interrupt.clone();
    let arch = target.arch;
    Ok(State {
        arch,
        target: Rc::clone(target),
        image: Rc::clone(image),
        decoder,
        cache: BlockCache::new(),
        cycles: 0,
        instructions: 0,
        prev_fallthrough: u64::MAX,
        prev_taken_extra: 0,
        prev_last_insn: 0,
        trail: [(0, 0); TRAIL],
        trail_len: 0,
        max_cycles: options.max_cycles.unwrap_or(u64::MAX),
        interrupt: interrupt.clone(),
        timeout: options.timeout,
        progress: options.progress.clone(),
        stop: None,
        bad_access: None,
        semihost: Semihost::new(
            Sandbox::new(options.fs_root.as_deref()).map_err(|e| MachineError::Setup {
                what: format!(
                    "--fs-root {}",
                    options
                        .fs_root
                        .as_deref()
                        .unwrap_or(Path::new(""))
                        .display()
                ),
                message: e.to_string(),
            })?,
            options.cmdline.clone(),
            target.clock_hz,
            heap,
        ),
        console: HostConsole {
            echo: options.echo,
            deadline: options.timeout.map(|t| Instant::now() + t),
            interrupt: interrupt.clone(),
            ..Default::default()
        },
        arp: ArpHost::new(options.arp.clone()),
        warnings: Vec::new(),
        limit: options.max_cycles.unwrap_or(u64::MAX),
        slice_limit: options.max_cycles.unwrap_or(u64::MAX),
        sched: Scheduler::new(
            options.cores.unwrap_or(target.cores as usize),
            THREAD_QUANTUM,
        ),
        current: 0,
        contexts: Vec::new(),
        // The heap ends where the main stack's reserve begins (picolibc's
        // script only PROVIDEs __heap_end, so compute it); it starts after .bss.
        next_stack_top: heap_end(image) & !(PAGE - 1),
        stack_floor: image
            .symbol("__heap_start")
            .or_else(|| image.symbol("__bss_end"))
            .unwrap_or(u64::MAX),
        thread_stack: options
            .thread_stack
            .unwrap_or(8 * 1024)
            .next_multiple_of(PAGE),
        guards: Vec::new(),
        stacks: HashMap::new(),
        free_stacks: Vec::new(),
        thread_exit: image.function("simthread_exit").map_or(0, |f| f.addr),
        observed_cycles: 0,
        reset: false,
        debug_resume: None,
        debug_limit: 0,
    })
}

/// The engine with the target's CPU model and memory, the guest loaded.
fn create_engine(
    state: State,
    target: &Target,
    image: &GuestImage,
) -> Result<Uc<'static>, MachineError> {
    let arch = target.arch;
    let (uc_arch, uc_mode) = match arch {
        // Not Mode::MCLASS: Unicorn 2.1.5 then forces a Cortex-M33 whatever
        // model is asked for. The M-profile comes from the CPU model.
        Arch::Arm => (UcArch::ARM, UcMode::THUMB),
        Arch::Riscv => (UcArch::RISCV, UcMode::RISCV32),
    };
    let mut emu: Uc<'static> = uc(
        "create engine",
        Unicorn::new_with_data(uc_arch, uc_mode, state),
    )?;
    // The CPU model must be set before anything initialises the engine.
    uc("set CPU model", emu.ctl_set_cpu_model(cpu_model(target)?))?;
    map_memory(&mut emu, target)?;
    for seg in &image.segments {
        uc(
            &format!("load segment {}", seg.index),
            emu.mem_write(seg.load_addr, &seg.data),
        )?;
    }
    Ok(emu)
}

/// Intercepted entry points (ARP and simthread.h): priced at zero,
/// returning at once.
fn install_interception(
    emu: &mut Uc<'static>,
    image: &GuestImage,
    options: &RunOptions,
) -> Result<(), MachineError> {
    let counting = options.counting;
    if counting != Counting::Off {
        let fast = counting == Counting::Blocks
            && options.debugger.is_none()
            && options.observers.is_empty();
        for (index, (name, entry)) in ENTRY_POINTS.iter().enumerate() {
            let entry = *entry;
            if fast {
                return_at_once(emu, image, index)?;
            } else {
                intercept_function(emu, image, name, move |uc| intercept(uc, entry, true))?;
            }
        }
        for (name, call) in THREAD_CALLS {
            let call = *call;
            intercept_function(emu, image, name, move |uc| intercept_thread_call(uc, call))?;
        }
    }
    Ok(())
}

/// The hooks that count cycles: data-dependent instructions, and the
/// block hook (or, to measure it against, a hook per instruction).
fn install_cycle_hooks(
    emu: &mut Uc<'static>,
    dynamic: Vec<DynamicSite>,
    counting: Counting,
) -> Result<Option<BlockHook>, MachineError> {
    let arch = emu.get_data().arch;
    for site in dynamic.into_iter().filter(|_| counting == Counting::Blocks) {
        let (a, b) = (
            arch_reg(arch, site.operands.a),
            arch_reg(arch, site.operands.b),
        );
        uc(
            "hook data-dependent instruction",
            emu.add_code_hook(site.addr, site.addr, move |uc: &mut Uc<'_>, _, _| {
                let [va, vb, ..] = read_regs32(uc, &[a, b]);
                uc.get_data_mut().cycles += u64::from(cycles::dynamic_extra(&site, va, vb));
            }),
        )?;
    }

    if counting == Counting::PerInstruction {
        // One cost per instruction address, decoded once; no pipeline or
        // taken-branch modelling (it exists to measure the hook's cost).
        let mut costs: HashMap<u64, u32> = HashMap::new();
        uc(
            "instruction hook",
            emu.add_code_hook(1, 0, move |uc: &mut Uc<'_>, addr, size| {
                let cost = match costs.get(&addr) {
                    Some(c) => *c,
                    None => {
                        let mut code = vec![0u8; size as usize];
                        let _ = uc.mem_read(addr, &mut code);
                        let st = uc.get_data();
                        let insns = st.decoder.decode(&code, addr, false).unwrap_or_default();
                        let c = cycles::price_block(&st.target, &insns, 0).cycles;
                        costs.insert(addr, c);
                        c
                    }
                };
                let st = uc.get_data_mut();
                st.cycles += u64::from(cost);
                st.instructions += 1;
                if st.cycles >= st.max_cycles {
                    let limit = st.max_cycles;
                    stop_with(uc, Stop::CycleLimit(limit));
                }
            }),
        )?;
    }

    if counting == Counting::Blocks {
        return Ok(Some(uc("block hook", BlockHook::install(emu))?));
    }
    Ok(None)
}

/// The block hook: charges the block's cached price (pricing it the first
/// time), ends the slice at its limit, and intercepts ARP stubs. Inlined
/// into the C callback (`block_hook.rs`): as a call of its own the whole
/// run became 5-20 % slower or faster with unrelated changes (code
/// placement).
#[inline(always)]
fn charge_block(uc: &mut Uc<'_>, addr: u64, size: u32) {
    let price = match uc.get_data_mut().cache.get(addr as u32) {
        Some(p) => p,
        None => {
            let p = price_at(uc, addr, size);
            uc.get_data_mut().cache.insert(addr as u32, p);
            p
        }
    };
    let st = uc.get_data_mut();
    // Stop *before* charging: a block whose hook stops the
    // emulation does not execute now; Unicorn runs it again on
    // the next emu_start, and it is charged then (charging it
    // here too would count it twice at every thread switch).
    if st.cycles >= st.limit && !at_slice_boundary(uc, addr) {
        return;
    }
    let st = uc.get_data_mut();
    if st.prev_fallthrough != addr {
        st.cycles += u64::from(st.prev_taken_extra) + u64::from(price.entry_penalty);
        st.record_branch(addr);
    }
    st.cycles += u64::from(price.cycles);
    st.instructions += u64::from(price.instructions);
    st.prev_fallthrough = u64::from(price.fallthrough);
    st.prev_taken_extra = u32::from(price.taken_extra);
    st.prev_last_insn = u64::from(price.last_insn);
    if price.intercept != 0 {
        intercept(uc, ENTRY_POINTS[usize::from(price.intercept - 1)].1, false);
    }
}

/// Observers see every block after it is charged (a second block hook:
/// hooks run in the order they were added), and memory accesses.
fn install_observers(emu: &mut Uc<'static>, observers: &[Observer]) -> Result<(), MachineError> {
    if !observers.is_empty() {
        let all = observers.to_vec();
        uc(
            "observer block hook",
            emu.add_block_hook(1, 0, move |uc: &mut Uc<'_>, addr, _size| {
                let st = uc.get_data_mut();
                let price = st.cache.get(addr as u32);
                let (before, after) = (st.observed_cycles, st.cycles);
                st.observed_cycles = after;
                let instructions = price.map_or(0, |p| p.instructions);
                for o in &all {
                    o.borrow_mut().block(addr, instructions, before, after);
                }
            }),
        )?;
        let memory: Vec<Observer> = observers
            .iter()
            .filter(|o| o.borrow().wants_memory())
            .cloned()
            .collect();
        if !memory.is_empty() {
            uc(
                "observer memory hook",
                emu.add_mem_hook(
                    HookType::MEM_READ | HookType::MEM_WRITE,
                    1,
                    0,
                    move |uc: &mut Uc<'_>, kind, addr, size, _| {
                        let pc = uc.pc_read().unwrap_or(0);
                        let write = kind == MemType::WRITE;
                        for o in &memory {
                            o.borrow_mut().memory(pc, addr, size, write);
                        }
                        true
                    },
                ),
            )?;
        }
    }
    Ok(())
}

/// Semihosting, exceptions and memory faults.
fn install_exception_hooks(
    emu: &mut Uc<'static>,
    image: &GuestImage,
    target: &Target,
    counting: Counting,
) -> Result<(), MachineError> {
    match target.arch {
        Arch::Arm => {
            uc(
                "interrupt hook",
                emu.add_intr_hook(|uc: &mut Uc<'_>, intno| {
                    let pc = uc.reg_read(RegisterARM::PC).unwrap_or(0);
                    let mut insn = [0u8; 2];
                    let is_semihosting = intno == 7
                        && uc.mem_read(pc, &mut insn).is_ok()
                        && u16::from_le_bytes(insn) == 0xbeab;
                    if is_semihosting {
                        semihosting_call(uc);
                        let _ = uc.reg_write(RegisterARM::PC, (pc + 2) | 1);
                    } else {
                        let stop = fault(uc, describe_intr(Arch::Arm, intno), None);
                        stop_with(uc, stop);
                    }
                }),
            )?;
        }
        Arch::Riscv => {
            for site in riscv_semihosting_sites(image) {
                uc(
                    "semihosting hook",
                    emu.add_code_hook(site, site, move |uc: &mut Uc<'_>, _, _| {
                        semihosting_call(uc);
                        let _ = uc.reg_write(RegisterRISCV::PC, site + 4);
                    }),
                )?;
            }
            uc(
                "interrupt hook",
                emu.add_intr_hook(|uc: &mut Uc<'_>, intno| {
                    let stop = fault(uc, describe_intr(Arch::Riscv, intno), None);
                    stop_with(uc, stop);
                }),
            )?;
        }
    }

    if counting != Counting::Off {
        for (first, last) in fault_hook_ranges(target) {
            uc("memory fault hook", add_fault_hook(emu, first, last))?;
        }
    }
    Ok(())
}

/// The scheduler loop: runs the threads slice by slice until the guest
/// stops; returns the last slice's result and the time the guest spent
/// stopped for a debugger.
fn run_threads(
    emu: &mut Uc<'static>,
    options: &RunOptions,
    debug: &mut Option<DebugSession>,
    started: Instant,
) -> Result<(Result<(), uc_error>, Duration), MachineError> {
    let arch = emu.get_data().arch;
    let thread_regs = thread_registers(arch);
    let mut paused = Duration::ZERO;
    let mut result: Result<(), uc_error> = Ok(());
    loop {
        let Some((next, slice_end)) = emu.get_data().sched.next() else {
            let st = emu.get_data();
            let message = if st.sched.alive().is_empty() {
                "every thread ended without an exit".to_owned()
            } else {
                format!("deadlock: {}", st.sched.describe_waits())
            };
            let stop = fault(emu, message, None);
            emu.get_data_mut().stop = Some(stop);
            break;
        };
        switch_thread(emu, next, &thread_regs)?;
        let (clock, waiting, core) = begin_slice(emu, next, slice_end)?;
        for o in &options.observers {
            o.borrow_mut().thread(next, clock);
        }
        let timeout_us = match options.timeout {
            None => 0,
            Some(t) => match t.checked_sub(started.elapsed()) {
                Some(left) => left.as_micros().max(1) as u64,
                None => {
                    emu.get_data_mut().stop = Some(Stop::Timeout(t));
                    break;
                }
            },
        };
        result = run_slice(emu, debug, timeout_us, &mut paused);
        end_slice(emu, next, clock, waiting, core);
        if emu.get_data().stop.is_some() || result.is_err() || emu.get_data().reset {
            break;
        }
        if let Some(t) = options.timeout {
            if started.elapsed() >= t {
                emu.get_data_mut().stop = Some(Stop::Timeout(t));
                break;
            }
        }
    }
    Ok((result, paused))
}

/// Starts a slice of thread `next`, ending at cycle `slice_end`: a new
/// thread's entry registers, a pending return value, the thread's clock
/// and cycle-model state. Returns its clock, waiting time and core.
fn begin_slice(
    emu: &mut Uc<'static>,
    next: ThreadId,
    slice_end: u64,
) -> Result<(u64, u64, Option<usize>), MachineError> {
    let arch = emu.get_data().arch;
    let r = regs(arch);
    let thumb = u64::from(arch == Arch::Arm);
    let (start, pending) = {
        let t = emu.get_data_mut().sched.thread_mut(next);
        (t.start.take(), t.pending_return.take())
    };
    if let Some(start) = start {
        let exit = emu.get_data().thread_exit;
        uc("start thread", emu.reg_write(r.sp, start.stack_top))?;
        uc("start thread", emu.reg_write(r.ret_addr, exit | thumb))?;
        uc(
            "start thread",
            emu.reg_write(r.args[0], u64::from(start.argument)),
        )?;
        uc("start thread", emu.reg_write(r.pc, start.function | thumb))?;
    }
    if let Some(value) = pending {
        uc("return value", emu.reg_write(r.ret_value, u64::from(value)))?;
    }
    let slice = {
        let st = emu.get_data_mut();
        let t = st.sched.thread(next).clone();
        st.cycles = t.clock;
        st.prev_fallthrough = t.prev_fallthrough;
        st.prev_taken_extra = t.prev_taken_extra;
        st.slice_limit = st.max_cycles.min(slice_end);
        st.limit = st.next_limit();
        st.observed_cycles = t.clock;
        (t.clock, t.waiting, t.core)
    };
    Ok(slice)
}

/// Ends a slice of thread `next`: its clock, cycle-model state and busy
/// time.
fn end_slice(emu: &mut Uc<'static>, next: ThreadId, clock: u64, waiting: u64, core: Option<usize>) {
    let st = emu.get_data_mut();
    let cycles = st.cycles;
    let (fallthrough, taken) = (st.prev_fallthrough, st.prev_taken_extra);
    let t = st.sched.thread_mut(next);
    t.clock = cycles;
    // Saturating: in playback a kernel's leave sets the clock to its
    // enter time plus the recorded cost, which may lie before this
    // slice began when the slice started inside the kernel.
    let busy = cycles
        .saturating_sub(clock)
        .saturating_sub(t.waiting - waiting);
    t.prev_fallthrough = fallthrough;
    t.prev_taken_extra = taken;
    st.sched.add_busy(next, core, busy);
}

/// Why the run stopped when no hook said so: the emulator's error as a
/// fault (the faulting instruction, stack overflows named), or an end
/// without an exit.
fn stop_of(emu: &mut Uc<'static>, result: Result<(), uc_error>, target: &Target) -> Stop {
    let r = regs(target.arch);
    match result {
        Err(error) => {
            let access = emu.get_data().bad_access;
            let (kind, address) = match access {
                Some((kind, addr, size, pc)) => {
                    let pc = faulting_instruction(emu, pc, kind);
                    let _ = emu.reg_write(r.pc, pc);
                    (memory_fault_kind(kind, size), Some(addr))
                }
                None if error == uc_error::INSN_INVALID && !thumb_state(emu) => (
                    "a branch to an ARM-state address (bit 0 clear): a Thumb-only core \
                         cannot execute it (invalid state)"
                        .to_owned(),
                    None,
                ),
                None if error == uc_error::INSN_INVALID => {
                    ("undefined instruction".to_owned(), None)
                }
                None => (emulation_error_text(error), None),
            };
            let mut stop = fault(emu, kind, address);
            if let (Stop::Fault(f), Some(addr)) = (&mut stop, address) {
                let sp = emu.reg_read(r.sp).unwrap_or(0);
                let st = emu.get_data();
                if let Some((_, thread)) = st
                    .guards
                    .iter()
                    .find(|(g, _)| (*g..*g + PAGE).contains(&addr))
                {
                    f.kind = format!(
                            "stack overflow in thread {thread}: {} (the guard page below its {} KiB stack; sp = {sp:#010x})",
                            f.kind,
                            st.thread_stack / 1024
                        );
                } else if looks_like_stack_overflow(target, addr, sp) {
                    f.kind = format!(
                        "stack overflow: {} (the stack ran out of RAM; sp = {sp:#010x})",
                        f.kind
                    );
                }
            }
            stop
        }
        Ok(()) => fault(emu, "emulation ended without an exit".into(), None),
    }
}

/// The run's outcome: its stop, counters, recording and warnings.
fn outcome(emu: &mut Uc<'static>, image: &Rc<GuestImage>, host_time: Duration) -> RunOutcome {
    let st = emu.get_data_mut();
    let mut stop = st.stop.clone().expect("set above");
    if let Stop::Fault(f) = &mut stop {
        if st.sched.threads.len() > 1 {
            f.location = format!("{} in thread {}", f.location, st.current);
        }
    }
    let complete = matches!(stop, Stop::Exit(_));
    let alive: Vec<ThreadId> = st
        .sched
        .alive()
        .into_iter()
        .filter(|t| *t != st.current)
        .collect();
    if complete && !alive.is_empty() {
        st.warnings.push(format!(
            "the program exited with {} thread(s) still running: {:?} (their remaining work is not counted)",
            alive.len(),
            alive
        ));
    }
    st.arp.counters.cycles.set(st.cycles);
    st.arp.counters.instructions.set(st.instructions);
    let (arp_file, arp_error) = match st.arp.conclude(complete) {
        None => (None, None),
        Some(Ok(summary)) => (
            summary
                .path
                .clone()
                .map(|p| (p, summary.records, summary.partial)),
            None,
        ),
        Some(Err(e)) => (None, Some(e.to_string())),
    };
    let mut warnings = std::mem::take(&mut st.warnings);
    warnings.append(&mut st.arp.warnings);
    let playback = st.arp.playback_report();
    RunOutcome {
        image: Rc::clone(image),
        stop,
        cycles: st.sched.latest_clock().max(st.cycles),
        instructions: st.instructions,
        host_time,
        console: std::mem::take(&mut st.console.captured),
        sections: st.section_traces(),
        arp_file,
        arp_error,
        warnings,
        cores: st.sched.core_report(),
        threads_created: st.sched.threads.len() - 1,
        playback,
        section_events: st.arp.take_events(),
        section_events_dropped: st.arp.events_dropped,
    }
}

/// Unicorn's PC at a memory fault can lag behind the faulting instruction
/// (it is synchronised per block, not per instruction, on Thumb). The
/// faulting instruction is the first one from there on that accesses
/// memory the way the fault says; decoding stops at the first branch.
fn faulting_instruction(emu: &Uc<'_>, pc: u64, kind: MemType) -> u64 {
    use InsnClass::*;
    let write = matches!(kind, MemType::WRITE_UNMAPPED | MemType::WRITE_PROT);
    let read = matches!(kind, MemType::READ_UNMAPPED | MemType::READ_PROT);
    if !write && !read {
        return pc;
    }
    let mut code = [0u8; 32];
    if emu.mem_read(pc, &mut code).is_err() {
        return pc;
    }
    let insns = emu
        .get_data()
        .decoder
        .decode(&code, pc, true)
        .unwrap_or_default();
    insns
        .iter()
        .find(|i| {
            // a PC-relative (literal) load reads the code it sits in
            let literal = emu.get_data().arch == Arch::Arm && i.address_regs & (1 << 15) != 0;
            if write {
                matches!(i.class, Store | StoreMultiple)
            } else {
                matches!(i.class, Load | LoadMultiple | PopPc) && !literal
            }
        })
        .map_or(pc, |i| i.addr)
}

fn memory_fault_kind(kind: MemType, size: usize) -> String {
    let what = match kind {
        MemType::READ_UNMAPPED => "read of unmapped memory",
        MemType::WRITE_UNMAPPED => "write to unmapped memory",
        MemType::FETCH_UNMAPPED => "instruction fetch from unmapped memory",
        MemType::WRITE_PROT => "write to read-only memory",
        MemType::READ_PROT => "read of unreadable memory",
        MemType::FETCH_PROT => "instruction fetch from non-executable memory",
        _ => "invalid memory access",
    };
    format!("{what} ({size} bytes)")
}

/// A write just below a RAM region, with the stack pointer there too.
fn looks_like_stack_overflow(target: &Target, addr: u64, sp: u64) -> bool {
    target
        .regions
        .iter()
        .any(|r| r.access.write && addr < r.start && r.start - addr <= 4096 && sp < r.start + 4096)
}

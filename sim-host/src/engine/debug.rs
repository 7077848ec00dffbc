//! Debugging (`--gdb`): what a debugger sees of the stopped guest and how
//! the run stops for it and resumes. Nothing here runs, and no hook of it
//! exists, without a debugger: the run's hot path is the same either way
//! (a slice without one is a plain `emu_start` in `schedule`).

use super::api::Stop;
use super::registers::{
    debug_fpu_registers, debug_registers, fpu_thread_registers, operand_regs, read_regs32, regs,
    thread_registers,
};
use super::resume::start;
use super::state::Uc;
use super::thread_calls::THREAD_CALLS;
use crate::host::arp_host::{OpenSection, TraceStats, ENTRY_POINTS};
use crate::host::threads::{self, ThreadId};
use crate::image::elf::GuestImage;
use crate::model::cycles::{self, DynamicSite};
use crate::model::exit::KILLED_BY_DEBUGGER;
use crate::model::target::Arch;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use unicorn_engine::unicorn_const::{uc_error, HookType, MemType};
use unicorn_engine::RegisterARM;

/// What stopped the guest for the debugger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugStop {
    /// Before the first instruction.
    Start,
    /// At a breakpoint, before its instruction executes.
    Breakpoint,
    /// One instruction after a step began.
    Step,
    /// The debugger asked the running guest to stop ([`DebugInterrupt`]).
    Interrupt,
    /// After the instruction that accessed a watched address.
    Watch { kind: Watch, addr: u64 },
}

/// Which accesses a watchpoint stops at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Watch {
    Read,
    Write,
    /// Reads and writes.
    Access,
}

/// How the guest goes on after a stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DebugResume {
    Continue,
    /// One instruction of this thread (the others run as scheduled until
    /// it has run it).
    Step(ThreadId),
    /// Remove every breakpoint and run on without the debugger.
    Detach,
    /// End the run now, as a SIGKILL would (partial results).
    Kill,
    /// Start the run again from its first instruction: nothing of the run
    /// so far is kept (no data.arp, no report); the debugger stays.
    Reset,
}

/// A debugger controlling a run. Its calls happen on the emulation thread
/// while the guest is stopped; none of them costs a simulated cycle.
pub trait Debugger {
    /// Before anything runs: the handle to the guest it will inspect.
    fn attach(&mut self, guest: DebugGuest);
    /// The guest stopped; returns how it goes on.
    fn stopped(&mut self, why: DebugStop) -> DebugResume;
    /// The run ended (the guest exited, faulted, hit a limit).
    fn ended(&mut self, stop: &Stop);
}

/// The value of the run's stop flag for a debugger's interrupt request
/// (signals store their positive numbers).
pub(super) const DEBUGGER_INTERRUPT: i32 = -1;

/// Asks the running guest to stop for the debugger at a block boundary,
/// from any thread: it shares the stop signals' flag, which the block hook
/// polls every `POLL_CYCLES` simulated cycles (about a millisecond).
#[derive(Debug, Clone)]
pub struct DebugInterrupt(Arc<AtomicI32>);

impl DebugInterrupt {
    /// Never overrides a stop signal's request.
    pub fn request(&self) {
        let _ = self
            .0
            .compare_exchange(0, DEBUGGER_INTERRUPT, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Withdraws a request that is no longer wanted.
    pub fn clear(&self) {
        let _ = self
            .0
            .compare_exchange(DEBUGGER_INTERRUPT, 0, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Whether a stop signal (SIGINT, SIGTERM, SIGHUP) arrived.
    pub fn signalled(&self) -> bool {
        !matches!(self.0.load(Ordering::Relaxed), 0 | DEBUGGER_INTERRUPT)
    }
}

/// What the debug hooks record, shared with their closures.
#[derive(Default)]
struct DebugHookState {
    /// Why a hook stopped the guest, and the instruction it stopped before.
    event: std::cell::Cell<Option<(DebugStop, u64)>>,
    /// The thread being stepped, and whether its first instruction ran.
    stepping: std::cell::Cell<Option<(ThreadId, bool)>>,
    /// A watched access the running instruction made: the guest stops in
    /// front of the next one.
    watch_hit: std::cell::Cell<Option<(Watch, u64)>>,
}

/// A watchpoint: the watched bytes, what it watches, its memory hook.
struct Watchpoint {
    addr: u64,
    len: u64,
    kind: Watch,
    hook: unicorn_engine::UcHookId,
}

struct DebugShared {
    hooks: Rc<DebugHookState>,
    breakpoints: std::cell::RefCell<HashMap<u64, unicorn_engine::UcHookId>>,
    step_hook: std::cell::Cell<Option<unicorn_engine::UcHookId>>,
    watchpoints: std::cell::RefCell<Vec<Watchpoint>>,
    /// The code hook that stops after a watched access (only while
    /// watchpoints exist).
    watch_hook: std::cell::Cell<Option<unicorn_engine::UcHookId>>,
    /// Entry points (and the ends of their bodies, which never run).
    intercepted: Vec<(u64, u64)>,
    /// Data-dependent instructions, whose hook charges before a
    /// breakpoint's hook stops in front of them.
    dynamic: HashMap<u64, DynamicSite>,
    interrupt: DebugInterrupt,
}

/// A guest thread as a debugger lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebugThread {
    pub id: ThreadId,
    pub core: Option<usize>,
    /// Its simulated clock.
    pub clock: u64,
    /// running, runnable, not started, or what it is blocked on.
    pub state: String,
    /// Its innermost open ARP section.
    pub section: Option<arpsim::types::Sid>,
}

fn describe_wait(wait: threads::Wait) -> String {
    match wait {
        threads::Wait::Join(t) => format!("joins thread {t}"),
        threads::Wait::Mutex(m) => format!("mutex {m:#010x}"),
        threads::Wait::Barrier(b) => format!("barrier {b:#010x}"),
        threads::Wait::Core => "waits for a core".into(),
    }
}

/// Where a debugger's register of a thread not running is kept.
enum Context {
    /// In its saved context, at this index.
    Saved(usize),
    /// In its saved context, the low half at this index and the high half
    /// at the next (an Arm d register: s2n, s2n+1).
    Pair(usize),
    /// Always zero (RISC-V x0).
    Zero,
    /// Shared by all threads (the M-profile MSP and PSP).
    Shared,
}

/// Where a saved Arm context keeps s0 and FPSCR (after the 17 registers
/// of `thread_registers`, as `fpu_thread_registers` orders them).
const SAVED_S0: usize = 17;
const SAVED_FPSCR: usize = SAVED_S0 + 32;

/// Debugger register `n` (see [`DebugGuest`]) in a saved context, whose
/// order is `thread_registers` then `fpu_thread_registers`: Arm r0-r12,
/// sp, lr, xpsr, pc, s0-s31, fpscr; RISC-V x1-x31, pc. (Arm 19-35, d0-d15
/// and fpscr, are numbered only on cores with an FPU.)
fn context_index(arch: Arch, n: usize) -> Context {
    match (arch, n) {
        (Arch::Arm, 0..=14) => Context::Saved(n),
        (Arch::Arm, 15) => Context::Saved(16),
        (Arch::Arm, 16) => Context::Saved(15),
        (Arch::Arm, 17 | 18) => Context::Shared,
        (Arch::Arm, 19..=34) => Context::Pair(SAVED_S0 + 2 * (n - 19)),
        (Arch::Arm, 35) => Context::Saved(SAVED_FPSCR),
        (Arch::Arm, _) => Context::Shared,
        (Arch::Riscv, 0) => Context::Zero,
        (Arch::Riscv, _) => Context::Saved(n - 1),
    }
}

/// The debugger's handle to the stopped guest: registers, memory,
/// breakpoints and counters. Used only while the guest is stopped.
///
/// Registers are numbered per architecture: Arm r0-r12, sp, lr, pc, xpsr,
/// msp, psp (0-18), and on a core with an FPU d0-d15 (64-bit) and fpscr
/// (19-35); RISC-V x0-x31, pc (0-32).
#[derive(Clone)]
pub struct DebugGuest {
    emu: Uc<'static>,
    shared: Rc<DebugShared>,
}

impl std::fmt::Debug for DebugGuest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DebugGuest").finish_non_exhaustive()
    }
}

impl DebugGuest {
    pub fn arch(&self) -> Arch {
        self.emu.get_data().arch
    }

    /// The Unicorn id of debugger register `n`.
    fn register_id(&self, n: usize) -> Option<i32> {
        let mut ids = debug_registers(self.arch());
        ids.extend(debug_fpu_registers(&self.emu.get_data().target));
        ids.get(n).copied()
    }

    pub fn register(&self, n: usize) -> Option<u64> {
        self.emu.reg_read(self.register_id(n)?).ok()
    }

    pub fn set_register(&mut self, n: usize, value: u64) -> bool {
        let arch = self.arch();
        let Some(id) = self.register_id(n) else {
            return false;
        };
        // an M-profile PC keeps the Thumb bit (gdb sends it clear)
        let thumb = u64::from(arch == Arch::Arm && id == RegisterARM::PC as i32);
        self.emu.reg_write(id, value | thumb).is_ok()
    }

    /// Reads what is mapped from `addr` on; returns how many bytes.
    pub fn read_memory(&self, addr: u64, buf: &mut [u8]) -> usize {
        if self.emu.mem_read(addr, buf).is_ok() {
            return buf.len();
        }
        let readable = (0..buf.len()).find(|&i| {
            let at = addr.checked_add(i as u64);
            at.is_none_or(|at| self.emu.mem_read(at, &mut buf[i..=i]).is_err())
        });
        readable.unwrap_or(buf.len())
    }

    /// Writes into mapped memory (code too: translations there are
    /// dropped); false if any of it is unmapped.
    pub fn write_memory(&mut self, addr: u64, data: &[u8]) -> bool {
        let Some(end) = addr.checked_add(data.len() as u64) else {
            return false;
        };
        if data.is_empty() {
            return true;
        }
        let mut probe = vec![0u8; data.len()];
        if self.emu.mem_read(addr, &mut probe).is_err() || self.emu.mem_write(addr, data).is_err() {
            return false;
        }
        let _ = self.emu.ctl_remove_cache(addr, end);
        // re-written code is priced anew when it next runs
        self.emu.get_data_mut().forget_code(addr, end);
        true
    }

    /// A breakpoint: a code hook on one instruction, which stops the guest
    /// before it (guest memory is never changed). At an intercepted entry
    /// point it is a block hook: it stops before the interception runs.
    /// False for unmapped memory.
    pub fn add_breakpoint(&mut self, addr: u64) -> bool {
        if self.shared.breakpoints.borrow().contains_key(&addr) {
            return true;
        }
        let mut probe = [0u8; 2];
        if self.emu.mem_read(addr, &mut probe).is_err() {
            return false;
        }
        let hooks = Rc::clone(&self.shared.hooks);
        let hit = move |uc: &mut Uc<'_>, at, _| {
            // inert during a step: the step decides where it ends
            if hooks.stepping.get().is_none() {
                hooks.event.set(Some((DebugStop::Breakpoint, at)));
                let _ = uc.emu_stop();
            }
        };
        let hook = if self.is_intercepted(addr) {
            self.emu.add_block_hook(addr, addr, hit)
        } else {
            self.emu.add_code_hook(addr, addr, hit)
        };
        let Ok(id) = hook else {
            return false;
        };
        self.shared.breakpoints.borrow_mut().insert(addr, id);
        // code translated before has no call to the new hook
        let _ = self.emu.ctl_remove_cache(addr, addr + 1);
        true
    }

    pub fn remove_breakpoint(&mut self, addr: u64) -> bool {
        let Some(id) = self.shared.breakpoints.borrow_mut().remove(&addr) else {
            return false;
        };
        let _ = self.emu.remove_hook(id);
        let _ = self.emu.ctl_remove_cache(addr, addr + 1);
        true
    }

    /// A watchpoint on `len` bytes from `addr`: a memory hook on them, and
    /// while any watchpoint exists a code hook that stops the guest in
    /// front of the instruction after a watched access. False for
    /// unmapped memory.
    pub fn add_watchpoint(&mut self, addr: u64, len: u64, kind: Watch) -> bool {
        let Some(last) = addr.checked_add(len.max(1) - 1) else {
            return false;
        };
        let mut probe = [0u8; 1];
        if self.emu.mem_read(addr, &mut probe).is_err() {
            return false;
        }
        let types = match kind {
            Watch::Read => HookType::MEM_READ,
            Watch::Write => HookType::MEM_WRITE,
            Watch::Access => HookType::MEM_READ | HookType::MEM_WRITE,
        };
        let hooks = Rc::clone(&self.shared.hooks);
        let seen = move |_: &mut Uc<'_>, access: MemType, at: u64, _: usize, _: i64| {
            let what = match (kind, access) {
                (Watch::Access, _) => Watch::Access,
                (_, MemType::WRITE) => Watch::Write,
                _ => Watch::Read,
            };
            hooks.watch_hit.set(Some((what, at)));
            true
        };
        let Ok(hook) = self.emu.add_mem_hook(types, addr, last, seen) else {
            return false;
        };
        self.shared.watchpoints.borrow_mut().push(Watchpoint {
            addr,
            len,
            kind,
            hook,
        });
        self.install_watch_hook();
        true
    }

    pub fn remove_watchpoint(&mut self, addr: u64, len: u64, kind: Watch) -> bool {
        let mut watchpoints = self.shared.watchpoints.borrow_mut();
        let Some(i) = watchpoints
            .iter()
            .position(|w| (w.addr, w.len, w.kind) == (addr, len, kind))
        else {
            return false;
        };
        let _ = self.emu.remove_hook(watchpoints.remove(i).hook);
        let none_left = watchpoints.is_empty();
        drop(watchpoints);
        if none_left {
            if let Some(id) = self.shared.watch_hook.take() {
                let _ = self.emu.remove_hook(id);
                let _ = self.emu.ctl_flush_tb();
            }
        }
        true
    }

    /// The code hook that turns a watched access into a stop in front of
    /// the next instruction (during a step, the step decides).
    fn install_watch_hook(&mut self) {
        if self.shared.watch_hook.get().is_none() {
            let hooks = Rc::clone(&self.shared.hooks);
            let hook = self.emu.add_code_hook(1, 0, move |uc: &mut Uc<'_>, at, _| {
                if let Some((kind, addr)) = hooks.watch_hit.take() {
                    if hooks.stepping.get().is_none() {
                        hooks.event.set(Some((DebugStop::Watch { kind, addr }, at)));
                        let _ = uc.emu_stop();
                    }
                }
            });
            self.shared.watch_hook.set(hook.ok());
        }
        // translations made before call neither hook
        let _ = self.emu.ctl_flush_tb();
        let _ = self.emu.ctl_flush_tlb();
    }

    fn remove_all_watchpoints(&mut self) {
        let all: Vec<(u64, u64, Watch)> = self
            .shared
            .watchpoints
            .borrow()
            .iter()
            .map(|w| (w.addr, w.len, w.kind))
            .collect();
        for (addr, len, kind) in all {
            self.remove_watchpoint(addr, len, kind);
        }
    }

    fn is_intercepted(&self, addr: u64) -> bool {
        self.shared
            .intercepted
            .iter()
            .any(|(entry, _)| *entry == addr)
    }

    /// Whether the guest stands at an intercepted entry point with a
    /// breakpoint inside its body.
    fn breakpoint_in_intercepted_body(&self) -> bool {
        let pc = self.pc();
        let Some(&(_, end)) = self.shared.intercepted.iter().find(|(e, _)| *e == pc) else {
            return false;
        };
        let breakpoints = self.shared.breakpoints.borrow();
        breakpoints.keys().any(|b| (pc + 1..end).contains(b))
    }

    fn has_breakpoint(&self, addr: u64) -> bool {
        self.shared.breakpoints.borrow().contains_key(&addr)
    }

    /// The thread that was running when the guest stopped.
    pub fn current_thread(&self) -> ThreadId {
        self.emu.get_data().threads.current
    }

    /// Whether guest thread `thread` exists and has not ended.
    pub fn thread_exists(&self, thread: ThreadId) -> bool {
        let st = self.emu.get_data();
        st.threads
            .sched
            .get(thread)
            .is_some_and(|t| t.state != threads::State::Done)
    }

    /// Every guest thread that has not ended, in creation order.
    pub fn threads(&self) -> Vec<DebugThread> {
        let st = self.emu.get_data();
        st.threads
            .sched
            .alive()
            .into_iter()
            .map(|id| st.threads.sched.thread(id))
            .filter(|t| t.state != threads::State::Done)
            .map(|t| DebugThread {
                id: t.id,
                core: t.core,
                clock: if t.id == st.threads.current {
                    st.clock.cycles
                } else {
                    t.clock
                },
                state: match t.state {
                    _ if t.id == st.threads.current => "running".into(),
                    threads::State::Blocked(wait) => format!("blocked: {}", describe_wait(wait)),
                    _ if t.start.is_some() => "not started".into(),
                    _ => "runnable".into(),
                },
                section: st
                    .arp
                    .open_sections(t.id)
                    .and_then(|(_, s)| s.last().map(|s| s.sid)),
            })
            .collect()
    }

    /// Register `n` (numbered as for [`DebugGuest::register`]) of `thread`.
    pub fn thread_register(&self, thread: ThreadId, n: usize) -> Option<u64> {
        if thread == self.current_thread() {
            return self.register(n);
        }
        match context_index(self.arch(), n) {
            Context::Saved(i) => self.saved_context(thread)?.get(i).copied(),
            Context::Pair(i) => {
                let ctx = self.saved_context(thread)?;
                let (low, high) = (*ctx.get(i)?, *ctx.get(i + 1)?);
                Some(low & 0xffff_ffff | high << 32)
            }
            Context::Zero => Some(0),
            Context::Shared => self.register(n),
        }
    }

    /// Sets a register of `thread`; false for a thread that never ran.
    pub fn set_thread_register(&mut self, thread: ThreadId, n: usize, value: u64) -> bool {
        if thread == self.current_thread() {
            return self.set_register(n, value);
        }
        match context_index(self.arch(), n) {
            Context::Saved(i) => {
                let thumb = u64::from(self.arch() == Arch::Arm && n == 15);
                self.set_saved(thread, &[(i, value | thumb)])
            }
            Context::Pair(i) => {
                self.set_saved(thread, &[(i, value & 0xffff_ffff), (i + 1, value >> 32)])
            }
            Context::Zero => true,
            Context::Shared => self.set_register(n, value),
        }
    }

    /// Sets slots of `thread`'s saved context (all or none); false for a
    /// thread that never ran or a slot it does not have.
    fn set_saved(&mut self, thread: ThreadId, values: &[(usize, u64)]) -> bool {
        let st = self.emu.get_data_mut();
        let Some(ctx) = st.threads.contexts.get_mut(&thread) else {
            return false;
        };
        if values.iter().any(|(i, _)| *i >= ctx.len()) {
            return false;
        }
        for (i, value) in values {
            ctx[*i] = *value;
        }
        true
    }

    /// The registers `thread` resumes with (`thread_registers` then
    /// `fpu_thread_registers` order): its saved context, or for a thread
    /// never run those it will start with (the FPU's are the running
    /// thread's, which it inherits).
    fn saved_context(&self, thread: ThreadId) -> Option<Vec<u64>> {
        let st = self.emu.get_data();
        if let Some(ctx) = st.threads.contexts.get(&thread) {
            return Some(ctx.clone());
        }
        let start = st.threads.sched.get(thread)?.start?;
        let mut ids = thread_registers(st.arch);
        ids.extend(fpu_thread_registers(&st.target));
        let mut ctx: Vec<u64> = ids
            .iter()
            .map(|r| self.emu.reg_read(*r).unwrap_or(0))
            .collect();
        let r = regs(st.arch);
        let thumb = u64::from(st.arch == Arch::Arm);
        for (id, value) in [
            (r.sp, start.stack_top),
            (r.ret_addr, st.threads.exit | thumb),
            (r.args[0], u64::from(start.argument)),
            (r.pc, start.function | thumb),
        ] {
            if let Some(i) = ids.iter().position(|x| *x == id) {
                ctx[i] = value;
            }
        }
        Some(ctx)
    }

    /// The sections open in `thread` (outermost first), with the ARP
    /// thread they belong to.
    pub fn open_sections(
        &self,
        thread: ThreadId,
    ) -> Option<(arpsim::types::Tid, Vec<OpenSection>)> {
        self.emu.get_data().arp.open_sections(thread)
    }

    /// The section table's rows so far (call sites named), and the run's
    /// cycles so far (the latest thread clock).
    pub fn section_traces(&self) -> (Vec<TraceStats>, u64) {
        let st = self.emu.get_data();
        let total = st.threads.sched.latest_clock().max(st.clock.cycles);
        (st.section_traces(), total)
    }

    /// The guest program.
    pub fn image(&self) -> Rc<GuestImage> {
        Rc::clone(&self.emu.get_data().image)
    }

    /// Where each address is in the source: function (file:line), the
    /// ELF's DWARF read once for all.
    pub fn sources_of(&self, addrs: &[u64]) -> Vec<String> {
        let image = &self.emu.get_data().image;
        let located = crate::image::symbols::locate_all(image, addrs);
        addrs
            .iter()
            .map(|a| {
                located
                    .get(a)
                    .map_or_else(|| image.describe(*a), |l| l.short())
            })
            .collect()
    }

    /// Each simulated core's busy cycles so far (slices ended).
    pub fn core_busy_cycles(&self) -> Vec<u64> {
        let st = self.emu.get_data();
        st.threads
            .sched
            .cores
            .iter()
            .map(|c| c.busy_cycles)
            .collect()
    }

    /// The flash accelerator's counts so far, when the target has one.
    pub fn flash(&self) -> Option<super::api::FlashReport> {
        self.emu.get_data().flash.as_ref().map(|f| f.report())
    }

    /// The L1 caches' counts so far, when the target has them.
    pub fn l1cache(&self) -> Option<super::api::L1CacheReport> {
        self.emu.get_data().l1cache.as_ref().map(|c| c.report())
    }

    /// The XIP cache's counts so far, when the target has one.
    pub fn xip(&self) -> Option<crate::model::xip::run::XipReport> {
        self.emu.get_data().xip.as_ref().map(|x| x.report())
    }

    /// The running thread's simulated cycles and the run's instructions.
    pub fn counters(&self) -> (u64, u64) {
        let st = self.emu.get_data();
        (st.clock.cycles, st.clock.instructions)
    }

    pub fn interrupt(&self) -> DebugInterrupt {
        self.shared.interrupt.clone()
    }

    fn pc(&self) -> u64 {
        self.emu.reg_read(regs(self.arch()).pc).unwrap_or(0)
    }

    /// Starts a step of the running thread: a code hook on every
    /// instruction (translations are dropped so that it is called).
    fn begin_step(&mut self, thread: ThreadId) {
        // An intercepted call is the step's one instruction, done once its
        // hook ran: the step ends at the next hook call, at the return
        // address (at once, or after the thread waited in a join).
        let pc_index = if self.arch() == Arch::Arm { 15 } else { 32 };
        let pc = self.thread_register(thread, pc_index).unwrap_or(0) & !1;
        let intercepted = self.is_intercepted(pc);
        self.shared.hooks.stepping.set(Some((thread, intercepted)));
        let hooks = Rc::clone(&self.shared.hooks);
        let hook = self.emu.add_code_hook(1, 0, move |uc: &mut Uc<'_>, at, _| {
            let Some((thread, started)) = hooks.stepping.get() else {
                return;
            };
            if uc.get_data().threads.current != thread {
                return;
            }
            if !started {
                hooks.stepping.set(Some((thread, true)));
                return;
            }
            hooks.event.set(Some((DebugStop::Step, at)));
            let _ = uc.emu_stop();
        });
        self.shared.step_hook.set(hook.ok());
        let _ = self.emu.ctl_flush_tb();
    }

    fn end_step(&mut self) {
        self.shared.hooks.stepping.set(None);
        if let Some(id) = self.shared.step_hook.take() {
            let _ = self.emu.remove_hook(id);
            let _ = self.emu.ctl_flush_tb();
        }
    }

    fn remove_all_breakpoints(&mut self) {
        let addrs: Vec<u64> = self.shared.breakpoints.borrow().keys().copied().collect();
        for addr in addrs {
            self.remove_breakpoint(addr);
        }
    }
}

/// A run's debugger and its guest handle.
pub(super) struct DebugSession {
    debugger: Rc<std::cell::RefCell<dyn Debugger>>,
    guest: DebugGuest,
    started: bool,
    /// A continue from a breakpoint steps over it first.
    continue_after_step: bool,
}

enum Applied {
    Run,
    Detached,
    /// Killed or reset: the run ends now.
    Ended,
}

impl DebugSession {
    pub(super) fn new(
        emu: &Uc<'static>,
        debugger: Rc<std::cell::RefCell<dyn Debugger>>,
        dynamic: &[DynamicSite],
        interrupt: Arc<AtomicI32>,
    ) -> DebugSession {
        let image = Rc::clone(&emu.get_data().image);
        let names = ENTRY_POINTS
            .iter()
            .map(|(n, _)| *n)
            .chain(THREAD_CALLS.iter().map(|(n, _)| *n));
        let shared = DebugShared {
            hooks: Rc::default(),
            breakpoints: Default::default(),
            step_hook: Default::default(),
            watchpoints: Default::default(),
            watch_hook: Default::default(),
            intercepted: names
                .filter_map(|n| image.function(n))
                .map(|f| (f.addr, f.addr + f.size.max(2)))
                .collect(),
            dynamic: dynamic.iter().map(|s| (s.addr, *s)).collect(),
            interrupt: DebugInterrupt(interrupt),
        };
        let guest = DebugGuest {
            emu: emu.clone(),
            shared: Rc::new(shared),
        };
        debugger.borrow_mut().attach(guest.clone());
        DebugSession {
            debugger,
            guest,
            started: false,
            continue_after_step: false,
        }
    }

    /// Tells the debugger how the run ended.
    pub(super) fn ended(&self, stop: &Stop) {
        self.debugger.borrow_mut().ended(stop);
    }

    /// Why the emulation stopped for the debugger, if it did, and whether
    /// the block it stopped in was charged already (a hook stopped in front
    /// of an instruction of a block the block hook had priced).
    fn stop_reason(&mut self, result: &Result<(), uc_error>) -> Option<(DebugStop, bool)> {
        let event = self.guest.shared.hooks.event.take();
        let st = self.guest.emu.get_data_mut();
        if st.end.stop == Some(Stop::Interrupted(DEBUGGER_INTERRUPT)) {
            st.end.stop = None;
            self.guest.shared.interrupt.clear();
            return Some((DebugStop::Interrupt, false));
        }
        if st.end.stop.is_some() || result.is_err() {
            return None;
        }
        let (why, addr) = event?;
        // a hook that moved the PC (an intercepted call) left a block not yet charged
        let charged = self.guest.pc() == addr;
        if charged {
            self.uncharge_dynamic(addr);
        }
        Some((why, charged))
    }

    /// A data-dependent instruction's hook ran (and charged) before the
    /// debug hook stopped in front of it; it runs again on resuming.
    fn uncharge_dynamic(&mut self, addr: u64) {
        let Some(site) = self.guest.shared.dynamic.get(&addr).copied() else {
            return;
        };
        let emu = &mut self.guest.emu;
        let operands =
            operand_regs(emu.get_data().arch, &site).and_then(|ids| read_regs32(emu, &ids).ok());
        // the registers were read a moment ago by the site's own hook
        let Some([a, b, ..]) = operands else { return };
        let st = emu.get_data_mut();
        st.clock.cycles = st
            .clock
            .cycles
            .saturating_sub(u64::from(cycles::dynamic_extra(&site, a, b)));
    }

    fn ask(&mut self, why: DebugStop, paused: &mut Duration) -> DebugResume {
        if std::mem::take(&mut self.continue_after_step) && why == DebugStop::Step {
            return DebugResume::Continue;
        }
        let asked = Instant::now();
        let resume = self.debugger.borrow_mut().stopped(why);
        *paused += asked.elapsed();
        resume
    }

    fn apply(&mut self, resume: DebugResume) -> Applied {
        self.guest.end_step();
        match resume {
            // gdb's software single step waits for a breakpoint in the
            // body of the call, which never runs: the whole call is the
            // step, ending at its return address
            DebugResume::Continue if self.guest.breakpoint_in_intercepted_body() => {
                self.guest.begin_step(self.guest.current_thread());
            }
            DebugResume::Continue if self.guest.has_breakpoint(self.guest.pc()) => {
                self.continue_after_step = true;
                self.guest.begin_step(self.guest.current_thread());
            }
            DebugResume::Continue => {}
            // a thread gdb knew before a reset steps the running one
            DebugResume::Step(thread) if !self.guest.thread_exists(thread) => {
                self.guest.begin_step(self.guest.current_thread());
            }
            DebugResume::Step(thread) => self.guest.begin_step(thread),
            DebugResume::Detach => {
                self.guest.remove_all_breakpoints();
                self.guest.remove_all_watchpoints();
                return Applied::Detached;
            }
            DebugResume::Kill => {
                let st = self.guest.emu.get_data_mut();
                st.end.stop = Some(Stop::Interrupted(KILLED_BY_DEBUGGER));
                return Applied::Ended;
            }
            DebugResume::Reset => {
                self.guest.emu.get_data_mut().debug.reset = true;
                return Applied::Ended;
            }
        }
        Applied::Run
    }

    /// Resumes inside a block charged before the stop: the block hook lets
    /// its rest run uncharged (see `at_slice_boundary`).
    fn resume_in_charged_block(&mut self) {
        let pc = self.guest.pc();
        let st = self.guest.emu.get_data_mut();
        st.debug.resume = Some(pc);
        st.debug.limit = st.limits.limit;
        st.limits.limit = 0;
    }

    fn end_resume(&mut self) {
        let st = self.guest.emu.get_data_mut();
        if st.debug.resume.take().is_some() {
            st.limits.limit = st.debug.limit;
        }
    }
}

impl DebugSession {
    /// One slice of the running thread under the debugger: `emu_start`
    /// with the stops the debugger asks for and the resumptions, all inside
    /// the slice (the scheduler never sees them, so threads interleave as
    /// without it). Returns the last `emu_start`'s result and whether the
    /// debugger detached (the run goes on without it).
    pub(super) fn run_slice(
        &mut self,
        emu: &mut Uc<'static>,
        timeout_us: u64,
        paused: &mut Duration,
    ) -> (Result<(), uc_error>, bool) {
        let mut stopped =
            (!std::mem::replace(&mut self.started, true)).then_some((DebugStop::Start, false));
        loop {
            let mut detached = false;
            if let Some((why, charged)) = stopped {
                let resume = self.ask(why, paused);
                match self.apply(resume) {
                    Applied::Ended => return (Ok(()), false),
                    Applied::Detached => detached = true,
                    Applied::Run => {}
                }
                if charged {
                    self.resume_in_charged_block();
                }
            }
            let result = start(emu, timeout_us);
            self.end_resume();
            if detached {
                return (result, true);
            }
            stopped = self.stop_reason(&result);
            if stopped.is_none() {
                return (result, false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The debugger's FPU registers are where the thread switch saves them.
    #[test]
    fn saved_fpu_registers_follow_the_core_registers() {
        assert_eq!(thread_registers(Arch::Arm).len(), SAVED_S0);
        assert!(matches!(
            context_index(Arch::Arm, 19),
            Context::Pair(SAVED_S0)
        ));
        assert!(matches!(context_index(Arch::Arm, 34), Context::Pair(i) if i == SAVED_S0 + 30));
        assert!(matches!(
            context_index(Arch::Arm, 35),
            Context::Saved(SAVED_FPSCR)
        ));
        assert!(matches!(context_index(Arch::Arm, 18), Context::Shared));
    }
}

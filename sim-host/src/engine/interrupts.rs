//! Cortex-M exceptions on the simulated clock (ARMv7-M B1.5, ARMv6-M
//! B1.5, ARMv8-M's Secure state): SysTick, PendSV, SVCall and interrupts
//! pended by software, taken by the host as the core would, with their
//! latencies from the cores' manuals (`model::cores`).
//!
//! Unicorn has no NVIC: the host does the exception entry (`m_frame::push`:
//! the frame on the stack in use, LR = EXC_RETURN, Handler mode on the
//! main stack, PC = the vector) and the return (QEMU raises
//! EXCP_EXCEPTION_EXIT when a handler branches to an EXC_RETURN value: the
//! value is checked as the architecture checks it, then the host
//! tail-chains to the next pending exception or pops the frame the value
//! names, onto the process stack when it says so).
//!
//! Timing: an exception is taken at the boundary of the block during which
//! it became pending (an instruction boundary of the block's end, not the
//! instruction where it arrived): a handler starts at most one block later
//! than on silicon, and its cycles count in whatever sections are open, as
//! they do on silicon. The refill of a branch taken into the block an
//! exception is taken in front of is paid when that block runs, after the
//! return, as it would be without the exception. Exceptions are delivered
//! only while the guest has a single thread (simthread threads and
//! exceptions together are refused).

use super::api::ExceptionEvent;
use super::m_frame::{self, Stacking};
use super::m_mode::{self, execution_priority};
use super::state::ObservedException;
use super::state::{stop_with, Uc};
use super::stop::fault;
use crate::host::scs::nvic;
use crate::model::cores::Profile;
use crate::model::exc_return::{self, ReturnTarget, CONTROL_FPCA};
use unicorn_engine::RegisterARM;

/// EPSR's Thumb bit: a handler starts with it set and its IT state clear.
const EPSR_T: u64 = 1 << 24;

/// Takes the pending exception that can preempt now, if there is one, in
/// front of the block at `addr` (which then runs after the handler
/// returns). Returns whether one was taken. Also sets when to look next.
pub(super) fn take_due(uc: &mut Uc<'_>, addr: u64) -> bool {
    if uc.get_data().system.is_none() {
        if std::mem::take(&mut uc.get_data_mut().tasks.trap_returned) {
            super::tasks::trap_returned(uc);
        }
        return super::machine_timer::take_due(uc, addr);
    }
    if uc.get_data().power.asleep.is_some() && !super::sleep::sleep(uc) {
        return true;
    }
    let st = uc.get_data_mut();
    let Some(sys) = st.system.as_mut() else {
        return false;
    };
    let now = st.clock.cycles;
    sys.scs.deliver_timers(now);
    let next_timer = sys.scs.next_timer_event().unwrap_or(u64::MAX);
    let pending = sys.scs.exceptions.highest_pending();
    st.limits.next_event = next_timer;
    let Some(number) = pending else {
        st.limits.limit = st.limits.next(now);
        return false;
    };
    if !preempts(uc, number) {
        // masked for now (PRIMASK, BASEPRI, an active handler): look again
        // at every block until it is taken
        uc.get_data_mut().limits.look_every_block(now);
        return false;
    }
    if uc.get_data().threads.sched.live_count() > 1 {
        let stop = fault(
            uc,
            "an exception became pending while simthread threads are alive: exceptions \
             are delivered only to a single-threaded guest"
                .into(),
            None,
        );
        stop_with(uc, stop);
        return true;
    }
    let latency = uc
        .get_data()
        .system
        .as_ref()
        .map_or(0, |s| s.scs.facts().entry.cycles);
    if enter(uc, number, addr, latency) {
        observe(uc, ExceptionEvent::Entered { return_to: addr }, Some(addr));
    }
    true
}

/// Tells the observers (at their next block) of an exception event.
fn observe(uc: &mut Uc<'_>, event: ExceptionEvent, skipped: Option<u64>) {
    if let Some(events) = uc
        .get_data_mut()
        .system
        .as_mut()
        .and_then(|s| s.observed.as_mut())
    {
        events.push(ObservedException {
            event,
            skipped,
            task: None,
        });
    }
}

/// Whether exception `number` can preempt what runs now (B1.5.4).
fn preempts(uc: &Uc<'_>, number: u32) -> bool {
    let priority = execution_priority(uc, true);
    uc.get_data()
        .system
        .as_ref()
        .is_some_and(|s| s.scs.exceptions.to_take(priority) == Some(number))
}

/// SVC (QEMU's EXCP_SWI; the PC is past the instruction): the SVCall
/// exception, at once, or a fault where it cannot preempt (on silicon an
/// escalation to HardFault, B1.5.4).
pub(super) fn svc(uc: &mut Uc<'_>) {
    let pc = uc.reg_read(RegisterARM::PC).unwrap_or(0);
    let Some(sys) = uc.get_data_mut().system.as_mut() else {
        return stop_svc(uc, "SVC with no System Control Space to take it");
    };
    sys.scs.exceptions.set_pending(nvic::SVCALL, true);
    if !preempts(uc, nvic::SVCALL) {
        if let Some(sys) = uc.get_data_mut().system.as_mut() {
            sys.scs.exceptions.set_pending(nvic::SVCALL, false);
        }
        return stop_svc(
            uc,
            "SVC where SVCall cannot preempt (its priority is masked or not higher than \
             the running handler's): a HardFault on silicon",
        );
    }
    let latency = uc
        .get_data()
        .system
        .as_ref()
        .map_or(0, |s| s.scs.facts().entry.cycles);
    if enter(uc, nvic::SVCALL, pc, latency) {
        observe(uc, ExceptionEvent::Entered { return_to: pc }, None);
    }
}

fn stop_svc(uc: &mut Uc<'_>, kind: &str) {
    let stop = fault(uc, kind.to_owned(), None);
    stop_with(uc, stop);
}

/// How this core stacks (its profile, FPU and CCR.STKALIGN).
fn stacking(uc: &Uc<'_>) -> Option<Stacking> {
    let sys = uc.get_data().system.as_ref()?;
    Some(Stacking {
        profile: sys.scs.facts().profile,
        fpu: sys.scs.facts().fpu,
        stkalign: sys.scs.stack_align_8(),
    })
}

/// Exception entry (B1.5.6): stacks the frame where the running code's
/// stack is, sets LR to EXC_RETURN and enters the handler of `number` in
/// Handler mode; `return_to` is the instruction to resume at. Charges
/// `latency` cycles (and the FP registers' stacking when they are pushed
/// at once); the handler's first block is reached by no branch the guest
/// pays for. Returns whether it was entered (else the run stops).
fn enter(uc: &mut Uc<'_>, number: u32, return_to: u64, latency: u32) -> bool {
    let before = m_mode::read(uc).ok();
    match enter_handler(uc, number, return_to) {
        Ok((handler, fp_pushed)) => {
            let psp = before.filter(|m| m.on_psp()).map(|m| m.psp);
            let now = uc.get_data().clock.cycles;
            super::tasks::entered(uc, number, psp, now);
            let st = uc.get_data_mut();
            let interrupted = (
                return_to,
                st.clock.prev_fallthrough,
                st.clock.prev_taken_extra,
            );
            let mut cycles = u64::from(latency);
            if let Some(sys) = st.system.as_mut() {
                sys.scs.exceptions.activate(number);
                sys.interrupted.push(interrupted);
                sys.exceptions_taken += 1;
                sys.event_register = true;
                if fp_pushed {
                    cycles += u64::from(sys.scs.facts().fp_stacking.cycles);
                }
            }
            st.clock.cycles += cycles;
            st.clock.prev_fallthrough = handler;
            st.clock.prev_taken_extra = 0;
            st.limits.limit = 0;
            true
        }
        Err(kind) => {
            let stop = fault(uc, kind, None);
            stop_with(uc, stop);
            false
        }
    }
}

/// The frame pushed, the handler's mode entered; returns the handler's
/// address and whether the FP registers were stacked at once.
fn enter_handler(uc: &mut Uc<'_>, number: u32, return_to: u64) -> Result<(u64, bool), String> {
    let how = stacking(uc).ok_or("no System Control Space")?;
    let mode = m_mode::read(uc).map_err(|e| format!("{e:?}"))?;
    if mode.on_psp() {
        let size = if how.fpu && mode.control & CONTROL_FPCA != 0 {
            0x68
        } else {
            0x20
        };
        super::tasks::check_task_stack(uc, mode.psp.wrapping_sub(size))?;
    }
    let ready = fp_ready_bits(uc);
    let stacked = m_frame::push(uc, how, return_to as u32, ready)?;
    let handler = vector(uc, number)?;
    let err = |e| format!("exception entry: a register cannot be written ({e:?})");
    let entered = super::m_mode::CoreMode {
        ipsr: number,
        ..stacked.mode
    };
    m_mode::write(uc, entered).map_err(err)?;
    uc.reg_write(RegisterARM::LR, u64::from(stacked.exc_return))
        .map_err(err)?;
    uc.reg_write(RegisterARM::EPSR, EPSR_T).map_err(err)?;
    let xpsr = uc.reg_read(RegisterARM::XPSR).unwrap_or(0) as u32;
    m_frame::rebuild_flags(uc, xpsr).map_err(err)?;
    uc.reg_write(RegisterARM::PC, handler | 1).map_err(err)?;
    Ok((handler, stacked.fp_pushed))
}

/// FPCCR's HFRDY, MMRDY, BFRDY and MONRDY for the code an exception
/// interrupts (UpdateFPCCR, ARMv7-M B1.5.6).
fn fp_ready_bits(uc: &Uc<'_>) -> u32 {
    let priority = execution_priority(uc, true);
    uc.get_data()
        .system
        .as_ref()
        .map_or(0, |s| s.scs.fp_ready_bits(priority))
}

/// The handler of exception `number` from the vector table at VTOR.
fn vector(uc: &Uc<'_>, number: u32) -> Result<u64, String> {
    let vtor = uc.get_data().system.as_ref().map_or(0, |s| s.scs.vtor());
    let at = u64::from(vtor) + 4 * u64::from(number);
    let mut word = [0u8; 4];
    uc.mem_read(at, &mut word)
        .map_err(|_| format!("exception {number}: its vector at {at:#010x} cannot be read"))?;
    let handler = u32::from_le_bytes(word);
    if handler & 1 == 0 {
        return Err(format!(
            "exception {number}: its vector at {at:#010x} is {handler:#010x}, not a Thumb \
             address (an INVSTATE UsageFault on silicon)"
        ));
    }
    if !is_code(uc, u64::from(handler & !1)) {
        return Err(format!(
            "exception {number}: its vector at {at:#010x} is {handler:#010x}, which is not \
             in executable memory (a vector table that is not code: on silicon an \
             instruction fetch fault)"
        ));
    }
    Ok(u64::from(handler & !1))
}

/// Whether `addr` lies in an executable region of the target.
fn is_code(uc: &Uc<'_>, addr: u64) -> bool {
    uc.get_data()
        .target
        .regions
        .iter()
        .any(|r| r.contains(addr, 2) && r.access.execute)
}

/// Exception return (QEMU's EXCP_EXCEPTION_EXIT): the handler branched to
/// the EXC_RETURN value now in PC. Checks it as ExceptionReturn() does,
/// then tail-chains to a pending exception that can preempt the context
/// returned to, else pops the frame.
pub(super) fn exception_return(uc: &mut Uc<'_>) {
    // QEMU keeps the branch target's bit 0 as the Thumb state, apart
    let pc = uc.reg_read(RegisterARM::PC).unwrap_or(0) as u32;
    let thumb = uc.reg_read(RegisterARM::XPSR).unwrap_or(0) as u32 >> 24 & 1;
    let exc_return = pc | thumb;
    match checked_return(uc, exc_return) {
        Ok((target, returning)) => {
            if let Some(sys) = uc.get_data_mut().system.as_mut() {
                sys.scs.exceptions.deactivate(returning);
                sys.event_register = true;
            }
            observe(uc, ExceptionEvent::Returned, None);
            match tail_chain_candidate(uc) {
                Some(next) => tail_chain(uc, next, exc_return),
                None => return_to(uc, target),
            }
        }
        Err(kind) => {
            let stop = fault(uc, kind, None);
            stop_with(uc, stop);
        }
    }
}

/// ExceptionReturn()'s checks: the value is a legal EXC_RETURN, the
/// exception returned from is active, and the mode returned to agrees with
/// the exceptions still active. Returns where the value goes and the
/// exception returned from.
fn checked_return(uc: &Uc<'_>, exc_return: u32) -> Result<(ReturnTarget, u32), String> {
    let ipsr = uc.reg_read(RegisterARM::IPSR).unwrap_or(0) as u32 & 0x1ff;
    let sys = uc
        .get_data()
        .system
        .as_ref()
        .ok_or("exception return with no System Control Space")?;
    let facts = sys.scs.facts();
    if ipsr == 0 || !sys.scs.exceptions.is_active(ipsr) {
        return Err(format!(
            "exception return from exception {ipsr}, which is not active: an INVPC \
             UsageFault on silicon (DDI 0403E B1.5.8)"
        ));
    }
    let target = exc_return::decode(exc_return, facts.profile, facts.fpu).map_err(|e| e.0)?;
    let nested = sys.scs.exceptions.active_count();
    if !target.to_handler && nested != 1 && !sys.scs.returns_to_thread_while_active() {
        return Err(format!(
            "exception return to Thread mode (EXC_RETURN {exc_return:#010x}) from exception \
             {ipsr} while {} other exceptions are active and CCR.NONBASETHRDENA is clear: an \
             INVPC UsageFault on silicon (DDI 0403E B1.5.8)",
            nested - 1
        ));
    }
    if target.to_handler && nested == 1 && facts.profile == Profile::V6M {
        return Err(format!(
            "exception return to Handler mode (EXC_RETURN {exc_return:#010x}) from the only \
             active exception, {ipsr}: UNPREDICTABLE on ARMv6-M (DDI 0419E B1.5.8)"
        ));
    }
    Ok((target, ipsr))
}

/// Pops the frame and resumes the code below, charging the return.
fn return_to(uc: &mut Uc<'_>, target: ReturnTarget) {
    let popped = stacking(uc).ok_or_else(|| "no System Control Space".to_owned());
    let popped = popped.and_then(|how| {
        let mode = m_mode::read(uc).map_err(|e| format!("{e:?}"))?;
        m_frame::pop(uc, how, target, mode)
    });
    match popped {
        Ok(unstacked) => {
            let resume = uc.reg_read(RegisterARM::PC).unwrap_or(0) & !1;
            let st = uc.get_data_mut();
            let Some(sys) = st.system.as_mut() else {
                return;
            };
            let facts = sys.scs.facts();
            let mut cycles = u64::from(facts.exit.cycles);
            if unstacked.fp_popped {
                cycles += u64::from(facts.fp_unstacking.cycles);
            }
            // the branch the exception interrupted (if one was taken into
            // the block resumed) is paid on entering that block, as it is
            // without the exception; a return elsewhere (a context switch)
            // reaches its block by no branch the guest pays for
            let (fallthrough, taken_extra) = match sys.interrupted.pop() {
                Some((at, fallthrough, extra)) if at == resume => (fallthrough, extra),
                _ => (resume, 0),
            };
            st.clock.cycles += cycles;
            st.clock.prev_fallthrough = fallthrough;
            st.clock.prev_taken_extra = taken_extra;
            st.limits.limit = 0;
            let now = st.clock.cycles;
            let psp = target.to_psp.then(|| m_mode::read(uc).map_or(0, |m| m.psp));
            super::tasks::returned(uc, psp, now);
        }
        Err(kind) => {
            let stop = fault(uc, kind, None);
            stop_with(uc, stop);
        }
    }
}

/// The pending exception that would preempt the context `exc_return`
/// goes back to (B1.5.8 tail-chaining): the exception returned from is
/// no longer active.
fn tail_chain_candidate(uc: &Uc<'_>) -> Option<u32> {
    let sys = uc.get_data().system.as_ref()?;
    let number = sys.scs.exceptions.highest_pending()?;
    let priority = execution_priority(uc, true);
    (sys.scs.exceptions.to_take(priority) == Some(number)).then_some(number)
}

/// Enters `next` in place of returning: the frame stays, LR keeps the
/// EXC_RETURN of the context below, and a lazy FP preservation still
/// pending stays pending (its frame is the one kept).
fn tail_chain(uc: &mut Uc<'_>, next: u32, exc_return: u32) {
    let entered = vector(uc, next).and_then(|handler| {
        let err = |e| format!("tail-chaining: a register cannot be written ({e:?})");
        uc.reg_write(RegisterARM::LR, u64::from(exc_return))
            .map_err(err)?;
        uc.reg_write(RegisterARM::IPSR, u64::from(next))
            .map_err(err)?;
        let xpsr = uc.reg_read(RegisterARM::XPSR).unwrap_or(0) as u32;
        m_frame::rebuild_flags(uc, xpsr).map_err(err)?;
        uc.reg_write(RegisterARM::PC, handler | 1).map_err(err)?;
        Ok(handler)
    });
    match entered {
        Ok(handler) => {
            let now = uc.get_data().clock.cycles;
            super::tasks::tail_chained(uc, next, now);
            let st = uc.get_data_mut();
            let mut latency = 0;
            if let Some(sys) = st.system.as_mut() {
                sys.scs.exceptions.activate(next);
                sys.exceptions_taken += 1;
                sys.tail_chains += 1;
                latency = sys.scs.facts().tail_chain.cycles;
            }
            st.clock.cycles += u64::from(latency);
            st.clock.prev_fallthrough = handler;
            st.clock.prev_taken_extra = 0;
            st.limits.limit = 0;
            let return_to = stacked_return_address(uc, exc_return);
            observe(uc, ExceptionEvent::Entered { return_to }, None);
        }
        Err(kind) => {
            let stop = fault(uc, kind, None);
            stop_with(uc, stop);
        }
    }
}

/// The return address in the frame `exc_return` names (0 if unreadable).
fn stacked_return_address(uc: &Uc<'_>, exc_return: u32) -> u64 {
    let sp_reg = if exc_return & 0xF == 0xD {
        RegisterARM::PSP
    } else {
        RegisterARM::MSP
    };
    let sp = uc.reg_read(sp_reg).unwrap_or(0) as u32;
    m_frame::read_words(uc, sp.wrapping_add(24), 1).map_or(0, |w| u64::from(w[0]))
}

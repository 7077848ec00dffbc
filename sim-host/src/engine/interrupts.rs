//! Cortex-M exceptions on the simulated clock (ARMv7-M B1.5.6-B1.5.8,
//! ARMv6-M B1.5.6-B1.5.8): SysTick, PendSV, SVCall and interrupts pended by
//! software, taken by the host as the core would, with their latencies
//! from the cores' manuals (`model::cores`).
//!
//! Unicorn has no NVIC: the host does the exception entry (PushStack:
//! the 8-word frame, or 26 words with the FP context, aligned to 8 bytes by
//! CCR.STKALIGN; LR = EXC_RETURN; IPSR = the exception; PC = its vector)
//! and the return (QEMU raises EXCP_EXCEPTION_EXIT when a handler branches
//! to an EXC_RETURN value; the host pops the frame, or tail-chains to the
//! next pending exception without popping).
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
use super::memory::writable;
use super::state::ObservedException;
use super::state::{stop_with, Uc};
use super::stop::fault;
use crate::host::scs::nvic;
use crate::model::cores::Profile;
use unicorn_engine::RegisterARM;

/// EXC_RETURN values (B1.5.8): return to Handler mode, to Thread mode on
/// the main stack, on the process stack; bit 4 clear: an FP frame.
const RETURN_HANDLER: u32 = 0xFFFF_FFF1;
const RETURN_THREAD_MSP: u32 = 0xFFFF_FFF9;
const RETURN_THREAD_PSP: u32 = 0xFFFF_FFFD;
const EXC_RETURN_FP: u32 = 1 << 4;

/// xPSR bit 9 of a stacked frame: the frame was realigned by 4 bytes.
const XPSR_REALIGNED: u32 = 1 << 9;
/// CONTROL.SPSEL (thread mode on PSP) and CONTROL.FPCA (FP context active).
const SPSEL: u32 = 1 << 1;
const FPCA: u32 = 1 << 2;

/// Takes the pending exception that can preempt now, if there is one, in
/// front of the block at `addr` (which then runs after the handler
/// returns). Returns whether one was taken. Also sets when to look next.
pub(super) fn take_due(uc: &mut Uc<'_>, addr: u64) -> bool {
    if uc.get_data().system.is_none() {
        return super::machine_timer::take_due(uc, addr);
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
    if uc.get_data().threads.sched.threads_created() > 0 {
        let stop = fault(
            uc,
            "an exception became pending while simthread threads exist: exceptions \
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
        events.push(ObservedException { event, skipped });
    }
}

/// Whether exception `number` can preempt what runs now (B1.5.4).
fn preempts(uc: &Uc<'_>, number: u32) -> bool {
    let read = |r: RegisterARM| uc.reg_read(r).unwrap_or(0) as u32;
    let (primask, basepri, faultmask) = (
        read(RegisterARM::PRIMASK) & 1 != 0,
        read(RegisterARM::BASEPRI) as u8,
        read(RegisterARM::FAULTMASK) & 1 != 0,
    );
    let Some(sys) = uc.get_data().system.as_ref() else {
        return false;
    };
    let e = &sys.scs.exceptions;
    let basepri = if sys.scs.facts().profile == Profile::V6M {
        0
    } else {
        basepri
    };
    e.to_take(e.execution_priority(primask, basepri, faultmask)) == Some(number)
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

/// The registers an exception frame holds, in frame order.
const FRAME: [RegisterARM; 6] = [
    RegisterARM::R0,
    RegisterARM::R1,
    RegisterARM::R2,
    RegisterARM::R3,
    RegisterARM::R12,
    RegisterARM::LR,
];

/// Exception entry (B1.5.6): stacks the frame where the running code's
/// stack is, sets LR to EXC_RETURN and enters the handler of `number` in
/// Handler mode; `return_to` is the instruction to resume at. Charges
/// `latency` cycles; the handler's first block is reached by no branch the
/// guest pays for. Returns whether it was entered (else the run stops).
fn enter(uc: &mut Uc<'_>, number: u32, return_to: u64, latency: u32) -> bool {
    match push_frame(uc, number, return_to) {
        Ok(handler) => {
            let st = uc.get_data_mut();
            let branch = (st.clock.prev_fallthrough, st.clock.prev_taken_extra);
            if let Some(sys) = st.system.as_mut() {
                sys.scs.exceptions.activate(number);
                sys.interrupted.push(branch);
            }
            st.clock.cycles += u64::from(latency);
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

/// The frame pushed, the registers set; returns the handler's address.
fn push_frame(uc: &mut Uc<'_>, number: u32, return_to: u64) -> Result<u64, String> {
    let read = |uc: &Uc<'_>, r: RegisterARM| uc.reg_read(r).map(|v| v as u32);
    let err = |e| format!("exception entry: a register cannot be read ({e:?})");
    let (ipsr, control, xpsr, sp) = (
        read(uc, RegisterARM::IPSR).map_err(err)?,
        read(uc, RegisterARM::CONTROL).map_err(err)?,
        read(uc, RegisterARM::XPSR).map_err(err)?,
        read(uc, RegisterARM::SP).map_err(err)?,
    );
    let (align8, fpu, vtor) = {
        let sys = uc
            .get_data()
            .system
            .as_ref()
            .ok_or("no System Control Space")?;
        let v6m = sys.scs.facts().profile == Profile::V6M;
        (
            v6m || sys.scs.stack_align_8(),
            sys.scs.facts().fpu,
            sys.scs.vtor(),
        )
    };
    let fp_frame = fpu && control & FPCA != 0;
    let size = if fp_frame { 0x68 } else { 0x20 };
    let realign = align8 && sp & 4 != 0;
    let frame = (sp - size) & if align8 { !7 } else { !3 };
    let mut words: Vec<u32> = FRAME.iter().map(|r| read(uc, *r).unwrap_or(0)).collect();
    words.push(return_to as u32 & !1);
    words.push(xpsr | if realign { XPSR_REALIGNED } else { 0 });
    if fp_frame {
        for n in 0..16 {
            words.push(read(uc, fp_register(n)).map_err(err)?);
        }
        words.push(read(uc, RegisterARM::FPSCR).map_err(err)?);
        words.push(0); // reserved
    }
    write_words(uc, u64::from(frame), &words).map_err(|()| {
        format!("exception entry: stacking at {frame:#010x} failed (the stack is not RAM)")
    })?;
    let handler = vector(uc, vtor, number)?;
    let exc_return = match (ipsr != 0, control & SPSEL != 0) {
        (true, _) => RETURN_HANDLER,
        (false, true) => RETURN_THREAD_PSP,
        (false, false) => RETURN_THREAD_MSP,
    } & if fp_frame { !EXC_RETURN_FP } else { !0 };
    let writes = [
        (RegisterARM::SP, frame),
        (RegisterARM::LR, exc_return),
        (RegisterARM::CONTROL, control & !FPCA),
        (RegisterARM::IPSR, number),
    ];
    for (r, v) in writes {
        uc.reg_write(r, u64::from(v)).map_err(err)?;
    }
    rebuild_flags(uc, xpsr).map_err(err)?;
    uc.reg_write(RegisterARM::PC, handler | 1).map_err(err)?;
    Ok(handler)
}

/// The handler of exception `number` from the vector table at `vtor`.
fn vector(uc: &Uc<'_>, vtor: u32, number: u32) -> Result<u64, String> {
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
    Ok(u64::from(handler & !1))
}

/// Exception return (QEMU's EXCP_EXCEPTION_EXIT): the handler branched to
/// the EXC_RETURN value now in PC. Tail-chains to a pending exception that
/// can preempt the context returned to, else pops the frame.
pub(super) fn exception_return(uc: &mut Uc<'_>) {
    // QEMU keeps PC without its bit 0, which every EXC_RETURN has set
    let exc_return = uc.reg_read(RegisterARM::PC).unwrap_or(0) as u32 | 1;
    let ipsr = uc.reg_read(RegisterARM::IPSR).unwrap_or(0) as u32;
    let Some(sys) = uc.get_data_mut().system.as_mut() else {
        let stop = fault(
            uc,
            "exception return with no System Control Space".into(),
            None,
        );
        return stop_with(uc, stop);
    };
    if ipsr == 0 || !sys.scs.exceptions.is_active(ipsr) {
        let stop = fault(
            uc,
            format!("exception return from exception {ipsr}, which is not active"),
            None,
        );
        return stop_with(uc, stop);
    }
    sys.scs.exceptions.deactivate(ipsr);
    let facts = sys.scs.facts().clone();
    observe(uc, ExceptionEvent::Returned, None);
    if let Some(next) = tail_chain_candidate(uc) {
        return tail_chain(uc, next, exc_return, facts.tail_chain.cycles);
    }
    match pop_frame(uc, exc_return) {
        Ok(resume) => {
            let st = uc.get_data_mut();
            st.clock.cycles += u64::from(facts.exit.cycles);
            // the branch the exception interrupted (if one was taken into
            // the block resumed) is paid on entering that block, as it is
            // without the exception
            let interrupted = st.system.as_mut().and_then(|s| s.interrupted.pop());
            let (fallthrough, taken_extra) = interrupted.unwrap_or((resume, 0));
            st.clock.prev_fallthrough = fallthrough;
            st.clock.prev_taken_extra = taken_extra;
            st.limits.limit = 0;
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
    let e = &sys.scs.exceptions;
    let number = e.highest_pending()?;
    let primask = uc.reg_read(RegisterARM::PRIMASK).unwrap_or(0) & 1 != 0;
    let basepri = uc.reg_read(RegisterARM::BASEPRI).unwrap_or(0) as u8;
    let priority = e.execution_priority(primask, basepri, false);
    (e.to_take(priority) == Some(number)).then_some(number)
}

/// Enters `next` in place of returning: the frame stays, LR keeps the
/// EXC_RETURN of the context below.
fn tail_chain(uc: &mut Uc<'_>, next: u32, exc_return: u32, latency: u32) {
    let vtor = uc.get_data().system.as_ref().map_or(0, |s| s.scs.vtor());
    let entered = vector(uc, vtor, next).and_then(|handler| {
        let err = |e| format!("tail-chaining: a register cannot be written ({e:?})");
        uc.reg_write(RegisterARM::LR, u64::from(exc_return))
            .map_err(err)?;
        uc.reg_write(RegisterARM::IPSR, u64::from(next))
            .map_err(err)?;
        let xpsr = uc.reg_read(RegisterARM::XPSR).unwrap_or(0) as u32;
        rebuild_flags(uc, xpsr).map_err(err)?;
        uc.reg_write(RegisterARM::PC, handler | 1).map_err(err)?;
        Ok(handler)
    });
    match entered {
        Ok(handler) => {
            let st = uc.get_data_mut();
            if let Some(sys) = st.system.as_mut() {
                sys.scs.exceptions.activate(next);
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
    let sp = uc.reg_read(sp_reg).unwrap_or(0);
    read_words(uc, sp + 24, 1).map_or(0, |w| u64::from(w[0]))
}

/// Pops the frame `exc_return` names (B1.5.8 ExceptionReturn): the
/// registers, the stack pointer (undoing a realignment), xPSR with the
/// IPSR returned to; returns the address execution resumes at.
fn pop_frame(uc: &mut Uc<'_>, exc_return: u32) -> Result<u64, String> {
    let to_psp = exc_return & 0xF == 0xD;
    let to_thread = exc_return & 0x8 != 0;
    let fp_frame = exc_return & EXC_RETURN_FP == 0;
    let err = |e| format!("exception return: a register cannot be accessed ({e:?})");
    let sp_reg = if to_psp {
        RegisterARM::PSP
    } else {
        RegisterARM::MSP
    };
    let sp = uc.reg_read(sp_reg).map_err(err)? as u32;
    let count = if fp_frame { 26 } else { 8 };
    let words = read_words(uc, u64::from(sp), count)
        .map_err(|()| format!("exception return: unstacking at {sp:#010x} failed"))?;
    let xpsr = words[7];
    let size = if fp_frame { 0x68 } else { 0x20 };
    let new_sp = sp + size + if xpsr & XPSR_REALIGNED != 0 { 4 } else { 0 };
    for (r, v) in FRAME.iter().zip(&words) {
        uc.reg_write(*r, u64::from(*v)).map_err(err)?;
    }
    if fp_frame {
        for n in 0..16 {
            uc.reg_write(fp_register(n), u64::from(words[8 + n as usize]))
                .map_err(err)?;
        }
        uc.reg_write(RegisterARM::FPSCR, u64::from(words[24]))
            .map_err(err)?;
    }
    uc.reg_write(sp_reg, u64::from(new_sp)).map_err(err)?;
    let control = uc.reg_read(RegisterARM::CONTROL).map_err(err)? as u32;
    let control = (control & !(SPSEL | FPCA))
        | if to_psp { SPSEL } else { 0 }
        | if fp_frame { FPCA } else { 0 };
    uc.reg_write(RegisterARM::CONTROL, u64::from(control))
        .map_err(err)?;
    // the IPSR returned to (the stacked one; Thread mode has none)
    let xpsr = if to_thread { xpsr & !0x1ff } else { xpsr };
    uc.reg_write(RegisterARM::XPSR_NZCVQG, u64::from(xpsr & !XPSR_REALIGNED))
        .map_err(err)?;
    rebuild_flags(uc, xpsr).map_err(err)?;
    let resume = u64::from(words[6] & !1);
    uc.reg_write(RegisterARM::PC, resume | 1).map_err(err)?;
    Ok(resume)
}

/// QEMU caches whether the core is in Handler mode in the flags its
/// translations are looked up by, and Unicorn's register writes of IPSR or
/// CONTROL do not refresh them; a write of the condition flags does.
fn rebuild_flags(
    uc: &mut Uc<'_>,
    xpsr: u32,
) -> Result<(), unicorn_engine::unicorn_const::uc_error> {
    uc.reg_write(RegisterARM::APSR_NZCV, u64::from(xpsr & 0xF000_0000))
}

fn fp_register(n: u32) -> RegisterARM {
    const S: [RegisterARM; 16] = [
        RegisterARM::S0,
        RegisterARM::S1,
        RegisterARM::S2,
        RegisterARM::S3,
        RegisterARM::S4,
        RegisterARM::S5,
        RegisterARM::S6,
        RegisterARM::S7,
        RegisterARM::S8,
        RegisterARM::S9,
        RegisterARM::S10,
        RegisterARM::S11,
        RegisterARM::S12,
        RegisterARM::S13,
        RegisterARM::S14,
        RegisterARM::S15,
    ];
    S[n as usize % 16]
}

/// Writes where the guest itself could store (the stack must be RAM).
fn write_words(uc: &mut Uc<'_>, at: u64, words: &[u32]) -> Result<(), ()> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    if !writable(uc, at, bytes.len() as u64) {
        return Err(());
    }
    uc.mem_write(at, &bytes).map_err(|_| ())
}

fn read_words(uc: &Uc<'_>, at: u64, count: usize) -> Result<Vec<u32>, ()> {
    let mut bytes = vec![0u8; count * 4];
    uc.mem_read(at, &mut bytes).map_err(|_| ())?;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect())
}

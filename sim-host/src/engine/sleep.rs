//! WFI and WFE on the simulated clock (ARMv7-M B1.5.18, B1.5.19; the
//! RISC-V privileged specification 3.3.3): the core sleeps after them
//! until something wakes it, and the clock moves to that moment. The
//! cycles asleep count as elapsed time in every open section and counter,
//! and the report shows them apart ("asleep").
//!
//! A block priced with a WFI or WFE last (`model::power`) notes the sleep
//! as it is charged ([`note`]); the next block boundary goes through the
//! block hook's slow path, where [`sleep`] runs before any exception is
//! taken. Nothing in the block hook's fast path changes.

use super::api::Stop;
use super::blocks::{SENDS_EVENT, SLEEPS_FOR_EVENT, SLEEPS_FOR_INTERRUPT, TRAP_RETURN};
use super::m_mode::execution_priority;
use super::state::{stop_with, State, Uc};
use super::stop::fault_at;
use crate::model::power::Sleep;

/// A block with power instructions runs: SEV sets the event register; a
/// WFI or WFE last makes the core sleep at the next block boundary.
#[cold]
pub(super) fn note(st: &mut State, power: u8, last_insn: u32) {
    if power & SENDS_EVENT != 0 {
        if let Some(sys) = st.system.as_mut() {
            sys.event_register = true;
        }
    }
    if power & TRAP_RETURN != 0 {
        // the RTOS accounting sees who runs at the next block
        st.tasks.trap_returned = true;
        st.look_at_next_boundary();
    }
    let sleep = if power & SLEEPS_FOR_INTERRUPT != 0 {
        Sleep::Interrupt
    } else if power & SLEEPS_FOR_EVENT != 0 {
        Sleep::Event
    } else {
        return;
    };
    st.power.asleep = Some(sleep);
    st.power.asleep_at = u64::from(last_insn);
    st.look_at_next_boundary();
}

/// Sleeps until an event wakes the core; returns whether the run goes on
/// (false: it stopped, at the cycle limit or with nothing to wake it).
pub(super) fn sleep(uc: &mut Uc<'_>) -> bool {
    let Some(kind) = uc.get_data_mut().power.asleep.take() else {
        return true;
    };
    let st = uc.get_data_mut();
    // with simthread threads alive, another thread runs instead
    if st.threads.sched.live_count() > 1 {
        return true;
    }
    if kind == Sleep::Event && consume_event(st) {
        return true;
    }
    if wakes(uc) {
        return true;
    }
    let st = uc.get_data_mut();
    let now = st.clock.cycles;
    let next = st.system.as_ref().and_then(|s| s.scs.next_timer_event());
    let Some(wake) = next.filter(|t| *t >= now) else {
        return stop_asleep(uc, kind);
    };
    let max = st.limits.max_cycles;
    let until = wake.min(max);
    st.power.sleep_cycles += until - now;
    st.power.sleeps += 1;
    st.clock.cycles = until;
    if wake > max {
        stop_with(uc, Stop::CycleLimit(max));
        return false;
    }
    if let Some(sys) = uc.get_data_mut().system.as_mut() {
        sys.scs.deliver_timers(wake);
    }
    if wakes(uc) {
        return true;
    }
    // the timer's exception cannot preempt, and nothing else can come
    stop_asleep(uc, kind)
}

/// WFE returns at once, clearing it, when the event register is set.
fn consume_event(st: &mut State) -> bool {
    st.system
        .as_mut()
        .is_some_and(|s| std::mem::take(&mut s.event_register))
}

/// Whether a pending exception would preempt, ignoring PRIMASK (B1.5.19:
/// a masked interrupt still wakes the core, which then goes on after the
/// WFI without taking it).
fn wakes(uc: &Uc<'_>) -> bool {
    let priority = execution_priority(uc, false);
    uc.get_data()
        .system
        .as_ref()
        .is_some_and(|s| s.scs.exceptions.to_take(priority).is_some())
}

/// Ends the run: the core would sleep for ever. Returns false.
fn stop_asleep(uc: &mut Uc<'_>, kind: Sleep) -> bool {
    let what = match kind {
        Sleep::Interrupt => "WFI",
        Sleep::Event => "WFE",
    };
    let at = uc.get_data().power.asleep_at;
    let stop = fault_at(
        uc,
        at,
        format!(
            "{what} with nothing to wake the core: no exception is pending that could \
             preempt (ignoring PRIMASK), and no timer is armed to raise one (ARMv7-M \
             B1.5.19): the core would sleep for ever"
        ),
        None,
    );
    stop_with(uc, stop);
    false
}

//! Guest threads on simulated cores: the bookkeeping of `simthread.h`
//! (create, join, mutexes, barriers) and the choice of which thread runs
//! next. Pure logic: the machine saves and restores register contexts and
//! runs the thread this module picks.
//!
//! The model (issue 5, DESIGN.md decision 5):
//! - every thread has its own cycle clock; cores are execution slots: a
//!   runnable thread holds a core, a blocked or ended thread releases it.
//!   A thread that becomes runnable takes the free core that became free
//!   first (ties: lowest index), starting no earlier than that core's
//!   release; when no core is free it waits for one;
//! - the runnable thread with the lowest clock runs next (ties: lowest id)
//!   until it blocks, ends, creates a thread, or its clock passes the next
//!   runnable thread's clock by the quantum; every decision depends only on
//!   simulated clocks, so a run is deterministic;
//! - blocking (join, a held mutex, a barrier) advances the waiting thread's
//!   clock to the release time; the difference is its waiting time;
//! - creating a thread costs the creator only its call; the new thread
//!   starts at the creator's clock. Shared-memory contention is not
//!   modelled.

use std::cell::Cell;
use std::collections::{BTreeSet, HashMap, VecDeque};

pub type ThreadId = u32;

/// Where a thread starts: its function, argument and stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    pub function: u64,
    pub argument: u32,
    pub stack_top: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    Join(ThreadId),
    Mutex(u32),
    Barrier(u32),
    /// No core is free.
    Core,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Runnable,
    Blocked(Wait),
    Done,
}

#[derive(Debug, Clone)]
pub struct Thread {
    pub id: ThreadId,
    pub core: Option<usize>,
    pub state: State,
    pub clock: u64,
    /// Not yet run: where to start it.
    pub start: Option<Start>,
    /// A return value to put in the return register when it next runs.
    pub pending_return: Option<u32>,
    pub busy: u64,
    pub waiting: u64,
    /// The cycle-model state carried between slices.
    pub prev_fallthrough: u64,
    pub prev_taken_extra: u32,
    /// The branch the predictor resolves next, and where it is.
    pub prev_branch: u8,
    pub prev_last_insn: u64,
    /// The cores it has run on (for `Core::threads`, without searching it).
    ran_on: Vec<usize>,
    /// A thread has joined it or waits to: its end clock need not outlive
    /// it.
    joined: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Core {
    /// The thread holding it now.
    #[serde(skip)]
    pub thread: Option<ThreadId>,
    /// When it was last released.
    #[serde(skip)]
    pub free_at: u64,
    /// Cycles it executed guest code.
    pub busy_cycles: u64,
    /// Cycles it had nothing to run, up to the parallel end time.
    pub waiting_cycles: u64,
    /// The first [`CORE_THREADS_LISTED`] threads that ran on it, in order
    /// of first run (all of them would grow with every thread ever made).
    pub threads: Vec<ThreadId>,
    /// How many threads ran on it.
    pub threads_run: u64,
}

/// How many thread ids a core's report lists (`Core::threads`).
pub const CORE_THREADS_LISTED: usize = 64;

/// What a blocking call does for the calling thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Return at once with this value.
    Continue(u32),
    /// The thread waits; it is resumed by the scheduler.
    Block,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ThreadError {
    #[error("simthread_join({0}): no such thread")]
    NoSuchThread(ThreadId),
    #[error("simthread_join({0}): a thread cannot join itself")]
    JoinSelf(ThreadId),
    #[error("simthread_join({0}): the thread was already joined")]
    AlreadyJoined(ThreadId),
    #[error("simthread_mutex_unlock({mutex:#010x}) by thread {thread}, which does not hold it")]
    NotOwner { mutex: u32, thread: ThreadId },
    #[error("simthread_barrier_wait({0:#010x}): the barrier was not initialised")]
    NoSuchBarrier(u32),
    #[error("simthread_barrier_init({0:#010x}, 0): a barrier needs at least one thread")]
    EmptyBarrier(u32),
}

#[derive(Debug, Default)]
struct Mutex {
    owner: Option<ThreadId>,
    waiters: VecDeque<ThreadId>,
}

#[derive(Debug)]
struct Barrier {
    count: u32,
    arrived: Vec<ThreadId>,
}

/// The scheduler holds what live threads need: memory and time grow with
/// the threads that have not ended, never with every thread ever created
/// (issue 30, N24: every decision once went through all threads ever
/// created, and each kept its record). An ended thread's record goes when
/// the machine retires it after its last slice; what outlives it is its
/// end clock until it is joined (as a POSIX thread's exit status does).
#[derive(Debug)]
pub struct Scheduler {
    /// Threads that have not been retired, by id.
    threads: rustc_hash::FxHashMap<ThreadId, Thread>,
    /// The id the next thread gets.
    next_id: ThreadId,
    /// Retired threads nobody has joined yet: their end clocks.
    unjoined: rustc_hash::FxHashMap<ThreadId, u64>,
    /// The latest end clock of a retired thread.
    latest_retired: u64,
    pub cores: Vec<Core>,
    /// The threads that have not ended, by id.
    live: BTreeSet<ThreadId>,
    /// Threads the decisions have looked at (tests check it grows with the
    /// live threads, not with every thread made).
    visited: Cell<u64>,
    mutexes: HashMap<u32, Mutex>,
    barriers: HashMap<u32, Barrier>,
    quantum: u64,
}

impl Scheduler {
    /// A scheduler with `cores` cores and the main thread (id 0) on core 0.
    pub fn new(cores: usize, quantum: u64) -> Scheduler {
        let mut s = Scheduler {
            threads: Default::default(),
            next_id: 1,
            unjoined: Default::default(),
            latest_retired: 0,
            cores: vec![Core::default(); cores.max(1)],
            live: BTreeSet::from([0]),
            visited: Cell::new(0),
            mutexes: HashMap::new(),
            barriers: HashMap::new(),
            quantum: quantum.max(1),
        };
        let mut main = Thread::new(0, 0, None);
        main.state = State::Blocked(Wait::Core);
        s.threads.insert(0, main);
        s.acquire(0);
        s
    }

    /// A thread that has not been retired.
    pub fn thread(&self, id: ThreadId) -> &Thread {
        self.t(id)
    }

    pub fn thread_mut(&mut self, id: ThreadId) -> &mut Thread {
        self.t_mut(id)
    }

    /// Thread `id`, unless it was retired (or never made).
    pub fn get(&self, id: ThreadId) -> Option<&Thread> {
        self.threads.get(&id)
    }

    fn t(&self, id: ThreadId) -> &Thread {
        &self.threads[&id]
    }

    fn t_mut(&mut self, id: ThreadId) -> &mut Thread {
        self.threads
            .get_mut(&id)
            .expect("the scheduler names only threads it holds")
    }

    /// The id the next thread created gets.
    pub fn next_id(&self) -> ThreadId {
        self.next_id
    }

    /// How many threads were created (the main thread is not).
    pub fn threads_created(&self) -> usize {
        self.next_id as usize - 1
    }

    /// How many threads have not ended, the main thread included.
    pub fn live_count(&self) -> usize {
        self.live.len()
    }

    /// Forgets ended thread `id` after its last slice; only its end clock
    /// stays, until a join.
    pub fn retire(&mut self, id: ThreadId) {
        let Some(t) = self.threads.get(&id).filter(|t| t.state == State::Done) else {
            return;
        };
        let (end, joined) = (t.clock, t.joined);
        self.threads.remove(&id);
        self.latest_retired = self.latest_retired.max(end);
        if !joined {
            self.unjoined.insert(id, end);
        }
    }

    /// Gives thread `id` (waiting for a core) the free core released
    /// first, or leaves it waiting.
    fn acquire(&mut self, id: ThreadId) {
        let free = self
            .cores
            .iter()
            .enumerate()
            .filter(|(_, c)| c.thread.is_none())
            .min_by_key(|(i, c)| (c.free_at, *i))
            .map(|(i, _)| i);
        let Some(core) = free else {
            self.t_mut(id).state = State::Blocked(Wait::Core);
            return;
        };
        let c = &mut self.cores[core];
        c.thread = Some(id);
        let free_at = c.free_at;
        let t = self.t_mut(id);
        if !t.ran_on.contains(&core) {
            t.ran_on.push(core);
            let c = &mut self.cores[core];
            c.threads_run += 1;
            if c.threads.len() < CORE_THREADS_LISTED {
                c.threads.push(id);
            }
        }
        let t = self.t_mut(id);
        if free_at > t.clock {
            t.waiting += free_at - t.clock;
            t.clock = free_at;
        }
        t.core = Some(core);
        t.state = State::Runnable;
    }

    /// Thread `id` stops running (blocks or ends): its core goes to the
    /// thread that has waited for one longest (lowest clock, then id).
    fn release(&mut self, id: ThreadId) {
        let Some(core) = self.t_mut(id).core.take() else {
            return;
        };
        let clock = self.t(id).clock;
        let c = &mut self.cores[core];
        c.thread = None;
        c.free_at = c.free_at.max(clock);
        let next = self
            .live_threads()
            .filter(|t| t.state == State::Blocked(Wait::Core))
            .min_by_key(|t| (t.clock, t.id))
            .map(|t| t.id);
        if let Some(next) = next {
            self.acquire(next);
        }
    }

    /// The threads that have not ended, by id.
    fn live_threads(&self) -> impl Iterator<Item = &Thread> {
        self.live.iter().map(|&id| {
            self.visited.set(self.visited.get() + 1);
            self.t(id)
        })
    }

    fn block(&mut self, id: ThreadId, wait: Wait) {
        self.t_mut(id).state = State::Blocked(wait);
        self.release(id);
    }

    /// Cycles thread `id` ran on `core` (the core it held when its slice
    /// began: it may have released it since).
    pub fn add_busy(&mut self, id: ThreadId, core: Option<usize>, cycles: u64) {
        self.t_mut(id).busy += cycles;
        if let Some(core) = core {
            self.cores[core].busy_cycles += cycles;
        }
    }

    /// A new thread created at `clock`.
    pub fn create(&mut self, clock: u64, start: Start) -> ThreadId {
        let id = self.next_id;
        self.next_id += 1;
        let mut t = Thread::new(id, clock, Some(start));
        t.state = State::Blocked(Wait::Core);
        self.threads.insert(id, t);
        self.live.insert(id);
        self.acquire(id);
        id
    }

    /// The thread's clock moves on to `at` (if later: time spent waiting)
    /// and it runs again once it has a core.
    fn wake(&mut self, id: ThreadId, at: u64, ret: u32) {
        let t = self.t_mut(id);
        if at > t.clock {
            t.waiting += at - t.clock;
            t.clock = at;
        }
        t.pending_return = Some(ret);
        t.state = State::Blocked(Wait::Core);
        self.acquire(id);
    }

    pub fn join(&mut self, id: ThreadId, target: ThreadId) -> Result<Outcome, ThreadError> {
        if target == id {
            return Err(ThreadError::JoinSelf(id));
        }
        let end = match self.threads.get_mut(&target) {
            Some(t) => {
                t.joined = true;
                if t.state != State::Done {
                    self.block(id, Wait::Join(target));
                    return Ok(Outcome::Block);
                }
                t.clock
            }
            None => match self.unjoined.remove(&target) {
                Some(end) => end,
                None if target < self.next_id => return Err(ThreadError::AlreadyJoined(target)),
                None => return Err(ThreadError::NoSuchThread(target)),
            },
        };
        let me = self.t_mut(id);
        if end > me.clock {
            me.waiting += end - me.clock;
            me.clock = end;
        }
        Ok(Outcome::Continue(0))
    }

    /// Thread `id` returned from its function.
    pub fn exit(&mut self, id: ThreadId) {
        let end = self.t_mut(id).clock;
        self.t_mut(id).state = State::Done;
        self.live.remove(&id);
        self.release(id);
        let joiners: Vec<ThreadId> = self
            .live_threads()
            .filter(|t| t.state == State::Blocked(Wait::Join(id)))
            .map(|t| t.id)
            .collect();
        for j in joiners {
            self.wake(j, end, 0);
        }
    }

    pub fn lock(&mut self, id: ThreadId, mutex: u32) -> Outcome {
        let m = self.mutexes.entry(mutex).or_default();
        match m.owner {
            None => {
                m.owner = Some(id);
                Outcome::Continue(0)
            }
            Some(_) => {
                m.waiters.push_back(id);
                self.block(id, Wait::Mutex(mutex));
                Outcome::Block
            }
        }
    }

    pub fn unlock(&mut self, id: ThreadId, mutex: u32) -> Result<(), ThreadError> {
        let now = self.t_mut(id).clock;
        let m = self.mutexes.entry(mutex).or_default();
        if m.owner != Some(id) {
            return Err(ThreadError::NotOwner { mutex, thread: id });
        }
        m.owner = m.waiters.pop_front();
        if let Some(next) = m.owner {
            self.wake(next, now, 0);
        }
        Ok(())
    }

    pub fn barrier_init(&mut self, barrier: u32, count: u32) -> Result<(), ThreadError> {
        if count == 0 {
            return Err(ThreadError::EmptyBarrier(barrier));
        }
        self.barriers.insert(
            barrier,
            Barrier {
                count,
                arrived: Vec::new(),
            },
        );
        Ok(())
    }

    /// The last thread to arrive gets 1 (the serial thread), the others 0;
    /// all leave at the latest arrival's clock.
    pub fn barrier_wait(&mut self, id: ThreadId, barrier: u32) -> Result<Outcome, ThreadError> {
        let b = self
            .barriers
            .get_mut(&barrier)
            .ok_or(ThreadError::NoSuchBarrier(barrier))?;
        b.arrived.push(id);
        if (b.arrived.len() as u32) < b.count {
            self.block(id, Wait::Barrier(barrier));
            return Ok(Outcome::Block);
        }
        let arrived = std::mem::take(&mut b.arrived);
        let release = arrived.iter().map(|t| self.t(*t).clock).max().unwrap_or(0);
        for t in arrived.iter().filter(|t| **t != id) {
            self.wake(*t, release, 0);
        }
        let me = self.t_mut(id);
        if release > me.clock {
            me.waiting += release - me.clock;
            me.clock = release;
        }
        Ok(Outcome::Continue(1))
    }

    /// The thread to run next and the clock at which its slice ends, or
    /// `None` when no thread can run.
    pub fn next(&self) -> Option<(ThreadId, u64)> {
        let mut runnable: Vec<&Thread> = self
            .live_threads()
            .filter(|t| t.state == State::Runnable)
            .collect();
        runnable.sort_by_key(|t| (t.clock, t.id));
        let first = runnable.first()?;
        let end = runnable
            .get(1)
            .map_or(u64::MAX, |second| second.clock.saturating_add(self.quantum));
        Some((first.id, end.max(first.clock.saturating_add(1))))
    }

    /// Threads that have not ended, for the exit warning.
    pub fn alive(&self) -> Vec<ThreadId> {
        self.live.iter().copied().collect()
    }

    /// What every blocked thread waits for, for a deadlock message.
    pub fn describe_waits(&self) -> String {
        self.live_threads()
            .filter_map(|t| match t.state {
                State::Blocked(Wait::Join(o)) => Some(format!("thread {} joins thread {o}", t.id)),
                State::Blocked(Wait::Mutex(m)) => Some(format!(
                    "thread {} waits for mutex {m:#010x} (held by thread {})",
                    t.id,
                    self.mutexes
                        .get(&m)
                        .and_then(|m| m.owner)
                        .map_or("none".into(), |o| o.to_string())
                )),
                State::Blocked(Wait::Barrier(b)) => {
                    let (n, count) = self
                        .barriers
                        .get(&b)
                        .map_or((0, 0), |b| (b.arrived.len(), b.count));
                    Some(format!(
                        "thread {} waits at barrier {b:#010x} ({n} of {count} arrived)",
                        t.id
                    ))
                }
                State::Blocked(Wait::Core) => Some(format!("thread {} waits for a core", t.id)),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// The latest clock of any thread: the parallel time.
    pub fn latest_clock(&self) -> u64 {
        let live = self.threads.values().map(|t| t.clock).max().unwrap_or(0);
        live.max(self.latest_retired)
    }

    /// Per core: busy cycles, and waiting (idle) cycles up to the
    /// parallel end time.
    pub fn core_report(&self) -> Vec<Core> {
        let end = self.latest_clock();
        self.cores
            .iter()
            .map(|c| Core {
                waiting_cycles: end.saturating_sub(c.busy_cycles),
                ..c.clone()
            })
            .collect()
    }
}

impl Thread {
    fn new(id: ThreadId, clock: u64, start: Option<Start>) -> Thread {
        Thread {
            id,
            core: None,
            state: State::Runnable,
            clock,
            start,
            pending_return: None,
            busy: 0,
            waiting: 0,
            prev_fallthrough: u64::MAX,
            prev_taken_extra: 0,
            prev_branch: 0,
            prev_last_insn: 0,
            ran_on: Vec::new(),
            joined: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start() -> Start {
        Start {
            function: 0x100,
            argument: 0,
            stack_top: 0x2000,
        }
    }

    /// Creates thread after thread, each ending and being retired by the
    /// machine before main joins it: the scheduler then holds main alone.
    fn churn(s: &mut Scheduler, n: u32) {
        for k in 0..n {
            let t = s.create(u64::from(k) * 10, start());
            s.thread_mut(0).clock = u64::from(k) * 10 + 1;
            s.thread_mut(t).clock = u64::from(k) * 10 + 7;
            s.exit(t);
            s.retire(t);
            assert_eq!(s.join(0, t), Ok(Outcome::Continue(0)));
        }
    }

    #[test]
    fn memory_follows_the_live_threads_not_every_thread_made() {
        // issue 30, N24: every thread made once kept its record, its id in
        // its cores' lists and (in the machine) a register-context slot
        let mut s = Scheduler::new(2, 100);
        churn(&mut s, 10_000);
        assert_eq!(s.threads.len(), 1, "only main is held");
        assert!(s.unjoined.is_empty(), "every end clock was joined");
        assert_eq!(s.threads_created(), 10_000);
        let listed: usize = s.cores.iter().map(|c| c.threads.len()).sum();
        let run: u64 = s.cores.iter().map(|c| c.threads_run).sum();
        assert!(listed <= 2 * CORE_THREADS_LISTED, "{listed} ids listed");
        // main on core 0, each worker once on the core it got
        assert_eq!(run, 10_001);
        // the parallel time still holds the last retired thread's end
        assert_eq!(s.latest_clock(), 99_997);
    }

    #[test]
    fn a_retired_thread_is_joined_once_from_its_end_clock() {
        let mut s = Scheduler::new(2, 100);
        let t1 = s.create(0, start());
        s.thread_mut(t1).clock = 700;
        s.exit(t1);
        s.retire(t1);
        assert!(s.get(t1).is_none(), "its record is gone");
        assert_eq!(s.join(0, t1), Ok(Outcome::Continue(0)));
        assert_eq!((s.thread(0).clock, s.thread(0).waiting), (700, 700));
        assert_eq!(s.join(0, t1), Err(ThreadError::AlreadyJoined(t1)));
        assert_eq!(s.join(0, 9), Err(ThreadError::NoSuchThread(9)));
    }

    #[test]
    fn a_thread_joined_while_it_ran_leaves_no_end_clock() {
        let mut s = Scheduler::new(2, 100);
        let t1 = s.create(0, start());
        assert_eq!(s.join(0, t1), Ok(Outcome::Block));
        s.thread_mut(t1).clock = 40;
        s.exit(t1);
        s.retire(t1);
        assert!(s.unjoined.is_empty());
        assert_eq!(s.thread(0).clock, 40);
    }

    #[test]
    fn lowest_clock_runs_first_with_a_quantum() {
        let mut s = Scheduler::new(2, 100);
        let t1 = s.create(0, start());
        s.thread_mut(0).clock = 50;
        // thread 1 (clock 0) runs until it passes main's 50 by the quantum
        assert_eq!(s.next(), Some((t1, 150)));
        s.thread_mut(t1).clock = 200;
        assert_eq!(s.next(), Some((0, 300)));
    }

    #[test]
    fn join_waits_until_the_end_and_accounts_waiting() {
        let mut s = Scheduler::new(2, 100);
        let t1 = s.create(0, start());
        s.thread_mut(0).clock = 10;
        assert_eq!(s.join(0, t1).unwrap(), Outcome::Block);
        s.thread_mut(t1).clock = 500;
        s.exit(t1);
        let main = s.thread(0);
        assert_eq!(
            (main.state, main.clock, main.waiting),
            (State::Runnable, 500, 490)
        );
        assert_eq!(main.pending_return, Some(0));
    }

    #[test]
    fn more_threads_than_cores_wait_for_a_core() {
        let mut s = Scheduler::new(1, 100);
        let t1 = s.create(5, start());
        assert_eq!(s.thread(t1).state, State::Blocked(Wait::Core));
        s.thread_mut(0).clock = 80;
        s.exit(0);
        let t = s.thread(t1);
        assert_eq!((t.state, t.core, t.clock), (State::Runnable, Some(0), 80));
    }

    #[test]
    fn a_blocked_thread_gives_its_core_away() {
        // two cores, main and two workers: when main joins, both run
        let mut s = Scheduler::new(2, 100);
        let (t1, t2) = (s.create(10, start()), s.create(10, start()));
        assert_eq!(s.thread(t1).core, Some(1));
        assert_eq!(s.thread(t2).state, State::Blocked(Wait::Core));
        s.thread_mut(0).clock = 12;
        assert_eq!(s.join(0, t1).unwrap(), Outcome::Block);
        let t = s.thread(t2);
        // it starts when main released core 0
        assert_eq!((t.state, t.core, t.clock), (State::Runnable, Some(0), 12));
        s.add_busy(t2, Some(0), 500);
        s.thread_mut(t2).clock = 512;
        s.thread_mut(t1).clock = 510;
        s.exit(t1);
        s.exit(t2);
        // main resumes at t1's end, on the core free first
        assert_eq!(s.thread(0).clock, 510);
        let report = s.core_report();
        assert_eq!(report[0].busy_cycles, 500);
        assert_eq!(report[0].waiting_cycles, 512 - 500);
    }

    #[test]
    fn mutex_hands_over_in_order_at_the_unlock_time() {
        let mut s = Scheduler::new(3, 100);
        let (t1, t2) = (s.create(0, start()), s.create(0, start()));
        assert_eq!(s.lock(0, 0x40), Outcome::Continue(0));
        assert_eq!(s.lock(t1, 0x40), Outcome::Block);
        assert_eq!(s.lock(t2, 0x40), Outcome::Block);
        s.thread_mut(0).clock = 300;
        s.unlock(0, 0x40).unwrap();
        assert_eq!(s.thread(t1).clock, 300);
        assert_eq!(s.thread(t2).state, State::Blocked(Wait::Mutex(0x40)));
        assert_eq!(
            s.unlock(0, 0x40),
            Err(ThreadError::NotOwner {
                mutex: 0x40,
                thread: 0
            })
        );
    }

    #[test]
    fn barrier_releases_everyone_at_the_last_arrival() {
        let mut s = Scheduler::new(2, 100);
        let t1 = s.create(0, start());
        s.barrier_init(0x80, 2).unwrap();
        s.thread_mut(0).clock = 100;
        assert_eq!(s.barrier_wait(0, 0x80).unwrap(), Outcome::Block);
        s.thread_mut(t1).clock = 400;
        assert_eq!(s.barrier_wait(t1, 0x80).unwrap(), Outcome::Continue(1));
        assert_eq!(s.thread(0).clock, 400);
        assert_eq!(s.thread(0).waiting, 300);
        assert_eq!(s.thread(0).pending_return, Some(0));
    }

    #[test]
    fn deadlock_is_described() {
        let mut s = Scheduler::new(2, 100);
        let t1 = s.create(0, start());
        s.join(0, t1).unwrap();
        s.join(t1, 0).unwrap();
        assert_eq!(s.next(), None);
        let text = s.describe_waits();
        assert!(text.contains("thread 0 joins thread 1"), "{text}");
        assert!(text.contains("thread 1 joins thread 0"), "{text}");
    }

    #[test]
    fn decisions_look_at_live_threads_not_at_every_thread_ever_made() {
        // issue 30, N24: creating and joining threads one after another
        // took time quadratic in the threads made (65k: 19.5 s)
        let mut s = Scheduler::new(2, 100);
        let n = 20_000u64;
        for i in 0..n {
            let t = s.create(i, start());
            assert_eq!(s.join(0, t).unwrap(), Outcome::Block);
            assert_eq!(s.next().map(|(id, _)| id), Some(t));
            s.exit(t);
            assert_eq!(s.next().map(|(id, _)| id), Some(0));
        }
        assert_eq!(s.alive(), [0]);
        assert!(
            s.visited.get() < 20 * n,
            "{} threads looked at for {n} created",
            s.visited.get()
        );
    }

    #[test]
    fn bad_calls_are_errors() {
        let mut s = Scheduler::new(1, 100);
        assert_eq!(s.join(0, 7), Err(ThreadError::NoSuchThread(7)));
        assert_eq!(s.join(0, 0), Err(ThreadError::JoinSelf(0)));
        assert_eq!(s.barrier_wait(0, 1), Err(ThreadError::NoSuchBarrier(1)));
        assert_eq!(s.barrier_init(1, 0), Err(ThreadError::EmptyBarrier(1)));
    }
}

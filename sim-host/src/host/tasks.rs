//! Who runs on the core: the tasks of an RTOS, the exception handlers and
//! the code before either (issue 39, RTOS-aware accounting). Each is a
//! context with its own cycles; the engine says when the core switches
//! (`engine::tasks`), and every cycle of a run belongs to exactly one
//! context, so the contexts' cycles sum to the run's.
//!
//! Sections ask, at their enter and leave, how many cycles each context
//! had run by then ([`TaskClock::mark`], [`TaskClock::since`]): a section's
//! own task's cycles and who else ran while it was open.

use serde::Serialize;

/// A context's index in [`TaskClock`]'s list (0: the code before any task
/// or handler ran, "main").
pub type ContextId = u16;

/// The most contexts a run tells apart; later ones are counted together
/// (a run that keeps creating tasks cannot grow this without bound).
pub const MAX_CONTEXTS: usize = 1024;

/// What kind of code a context is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ContextKind {
    /// Thread mode before any task ran (or on the main stack).
    Main,
    /// An RTOS task (a process stack of its own, or a FreeRTOS TCB).
    Task,
    /// An exception handler (Cortex-M) or trap handler (RISC-V).
    Handler,
    /// The tasks beyond [`MAX_CONTEXTS`], together.
    Others,
}

/// One context's figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextStats {
    pub name: String,
    pub kind: ContextKind,
    pub cycles: u64,
    /// How many times the core switched to it.
    pub switches: u64,
}

/// The contexts of a run and the one running.
#[derive(Debug, Clone)]
pub struct TaskClock {
    contexts: Vec<ContextStats>,
    current: ContextId,
    /// The clock when `current` began running.
    since: u64,
}

impl Default for TaskClock {
    fn default() -> Self {
        TaskClock {
            contexts: vec![ContextStats {
                name: "main".into(),
                kind: ContextKind::Main,
                cycles: 0,
                switches: 1,
            }],
            current: 0,
            since: 0,
        }
    }
}

/// Cycles every context had run at a section's enter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskMark {
    /// The context that entered the section.
    pub context: ContextId,
    pub cycles: Box<[u64]>,
}

impl TaskClock {
    /// Whether the core ever ran anything but "main": until then a
    /// section's own cycles are all its cycles, and nothing is marked.
    pub fn active(&self) -> bool {
        self.contexts.len() > 1
    }

    pub fn current(&self) -> ContextId {
        self.current
    }

    /// A new context; past [`MAX_CONTEXTS`] the shared "other tasks" one.
    pub fn add(&mut self, name: String, kind: ContextKind) -> ContextId {
        if self.contexts.len() + 1 >= MAX_CONTEXTS {
            return self.others();
        }
        self.contexts.push(ContextStats {
            name,
            kind,
            cycles: 0,
            switches: 0,
        });
        (self.contexts.len() - 1) as ContextId
    }

    fn others(&mut self) -> ContextId {
        let last = self.contexts.len() - 1;
        if self.contexts[last].kind != ContextKind::Others {
            self.contexts.push(ContextStats {
                name: "other tasks".into(),
                kind: ContextKind::Others,
                cycles: 0,
                switches: 0,
            });
        }
        (self.contexts.len() - 1) as ContextId
    }

    /// The core switches to `to` at cycle `now`: what ran since the last
    /// switch is charged to the context that ran it.
    pub fn switch(&mut self, to: ContextId, now: u64) {
        self.charge(now);
        if to != self.current {
            self.current = to;
            if let Some(c) = self.contexts.get_mut(usize::from(to)) {
                c.switches += 1;
            }
        }
    }

    fn charge(&mut self, now: u64) {
        let ran = now.saturating_sub(self.since);
        if let Some(c) = self.contexts.get_mut(usize::from(self.current)) {
            c.cycles += ran;
        }
        self.since = self.since.max(now);
    }

    /// The cycles context `id` had run by cycle `now`.
    pub fn cycles_of(&self, id: ContextId, now: u64) -> u64 {
        let Some(c) = self.contexts.get(usize::from(id)) else {
            return 0;
        };
        if id == self.current {
            c.cycles + now.saturating_sub(self.since)
        } else {
            c.cycles
        }
    }

    /// Every context's cycles at `now`, for a section that opens then.
    pub fn mark(&self, now: u64) -> TaskMark {
        TaskMark {
            context: self.current,
            cycles: (0..self.contexts.len())
                .map(|i| self.cycles_of(i as ContextId, now))
                .collect(),
        }
    }

    /// What each context ran between `mark` and `now`: (context, cycles)
    /// for those that ran.
    pub fn since(&self, mark: &TaskMark, now: u64) -> Vec<(ContextId, u64)> {
        (0..self.contexts.len())
            .map(|i| {
                let then = mark.cycles.get(i).copied().unwrap_or(0);
                (i as ContextId, self.cycles_of(i as ContextId, now) - then)
            })
            .filter(|(_, ran)| *ran > 0)
            .collect()
    }

    pub fn name(&self, id: ContextId) -> &str {
        self.contexts
            .get(usize::from(id))
            .map_or("?", |c| c.name.as_str())
    }

    /// A context's name learnt later (an RTOS task's, read from its
    /// control block).
    pub fn rename(&mut self, id: ContextId, name: String) {
        if let Some(c) = self.contexts.get_mut(usize::from(id)) {
            if c.kind == ContextKind::Task {
                c.name = name;
            }
        }
    }

    /// The figures at the run's end (cycle `now`).
    pub fn finish(&self, now: u64) -> Vec<ContextStats> {
        let mut out = self.contexts.clone();
        if let Some(c) = out.get_mut(usize::from(self.current)) {
            c.cycles += now.saturating_sub(self.since);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cycle_belongs_to_one_context() {
        let mut clock = TaskClock::default();
        let a = clock.add("a".into(), ContextKind::Task);
        let h = clock.add("SysTick".into(), ContextKind::Handler);
        clock.switch(a, 100);
        let mark = clock.mark(150);
        clock.switch(h, 200);
        clock.switch(a, 230);
        clock.switch(0, 300);
        let total: u64 = clock.finish(1000).iter().map(|c| c.cycles).sum();
        assert_eq!(total, 1000);
        let stats = clock.finish(1000);
        assert_eq!(
            (stats[0].cycles, stats[1].cycles, stats[2].cycles),
            (100 + 700, 100 + 70, 30)
        );
        assert_eq!((stats[1].switches, stats[2].switches), (2, 1));
        // a section open from 150 to 250 in task a: a ran 50 + 20, the
        // handler 30
        clock.switch(a, 1000);
        assert_eq!(mark.context, a);
        let during: Vec<(ContextId, u64)> = {
            let mut c = TaskClock::default();
            let a = c.add("a".into(), ContextKind::Task);
            let h = c.add("h".into(), ContextKind::Handler);
            c.switch(a, 100);
            let m = c.mark(150);
            c.switch(h, 200);
            c.switch(a, 230);
            c.since(&m, 250)
        };
        assert_eq!(during, vec![(a, 70), (h, 30)]);
    }

    #[test]
    fn contexts_past_the_cap_share_one() {
        let mut clock = TaskClock::default();
        let ids: Vec<ContextId> = (0..MAX_CONTEXTS + 10)
            .map(|i| clock.add(format!("t{i}"), ContextKind::Task))
            .collect();
        assert!(clock.contexts.len() <= MAX_CONTEXTS);
        assert_eq!(ids[MAX_CONTEXTS], ids[MAX_CONTEXTS + 5]);
        assert_eq!(clock.name(ids[MAX_CONTEXTS]), "other tasks");
    }
}

//! A live one-line status of a long run on the terminal: simulated cycles,
//! instructions, MIPS, the section running and the elapsed time, redrawn at
//! most 4 times a second and erased when the run ends.
//!
//! The emulation thread never takes a lock or formats anything unless the
//! display asked for it: the display thread raises `wanted` every 250 ms,
//! and the block hook, seeing it, publishes a [`Snapshot`]. Off, the cost
//! is one test of an `Option` per block.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PERIOD: Duration = Duration::from_millis(250);

/// What the run has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub cycles: u64,
    pub instructions: u64,
    /// The innermost ARP section open, if any.
    pub section: Option<u16>,
}

/// Shared by the display thread and the machine.
#[derive(Debug, Default)]
pub struct ProgressShared {
    wanted: AtomicBool,
    snapshot: Mutex<Option<Snapshot>>,
}

impl ProgressShared {
    /// Whether the display waits for a snapshot (checked per block).
    #[inline]
    pub fn wanted(&self) -> bool {
        self.wanted.load(Ordering::Relaxed)
    }

    /// Called by the machine when [`wanted`](Self::wanted).
    pub fn publish(&self, snapshot: Snapshot) {
        if let Ok(mut s) = self.snapshot.lock() {
            *s = Some(snapshot);
        }
        self.wanted.store(false, Ordering::Relaxed);
    }
}

/// The display: a thread drawing the status line until dropped.
pub struct Progress {
    shared: Arc<ProgressShared>,
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

impl Progress {
    /// Starts drawing on stderr; `clock_hz` turns cycles into time.
    pub fn start(clock_hz: u64) -> Progress {
        let shared = Arc::new(ProgressShared::default());
        let done = Arc::new(AtomicBool::new(false));
        let (s, d) = (Arc::clone(&shared), Arc::clone(&done));
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || draw_until_done(&s, &d, clock_hz))
            .ok();
        Progress {
            shared,
            done,
            thread,
        }
    }

    /// What the machine publishes into.
    pub fn shared(&self) -> Arc<ProgressShared> {
        Arc::clone(&self.shared)
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn draw_until_done(shared: &ProgressShared, done: &AtomicBool, clock_hz: u64) {
    let started = Instant::now();
    let mut drawn = false;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(PERIOD);
        let latest = shared.snapshot.lock().ok().and_then(|s| *s);
        shared.wanted.store(true, Ordering::Relaxed);
        if let Some(s) = latest {
            let line = status_line(&s, started.elapsed(), clock_hz);
            let _ = write!(std::io::stderr(), "\r\x1b[K{line}");
            drawn = true;
        }
    }
    if drawn {
        let _ = write!(std::io::stderr(), "\r\x1b[K");
    }
}

/// `1.23 G cycles (49.2 ms simulated)  987.6 M instructions  412.0 MIPS
/// section 7  3.2 s`.
pub fn status_line(s: &Snapshot, elapsed: Duration, clock_hz: u64) -> String {
    let seconds = elapsed.as_secs_f64().max(1e-9);
    let simulated_ms = s.cycles as f64 / clock_hz.max(1) as f64 * 1e3;
    let section = s
        .section
        .map_or_else(|| "no section".to_owned(), |sid| format!("section {sid}"));
    format!(
        "{} cycles ({simulated_ms:.1} ms simulated)  {} instructions  {:.1} MIPS  {section}  {:.1} s",
        si(s.cycles),
        si(s.instructions),
        s.instructions as f64 / seconds / 1e6,
        seconds
    )
}

fn si(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{:.1} k", n as f64 / 1e3),
        1_000_000..=999_999_999 => format!("{:.1} M", n as f64 / 1e6),
        _ => format!("{:.2} G", n as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_reads_like_a_person_would_write_it() {
        let s = Snapshot {
            cycles: 1_230_000_000,
            instructions: 987_600_000,
            section: Some(7),
        };
        let line = status_line(&s, Duration::from_secs(2), 25_000_000);
        assert_eq!(
            line,
            "1.23 G cycles (49200.0 ms simulated)  987.6 M instructions  493.8 MIPS  section 7  2.0 s"
        );
    }

    #[test]
    fn a_snapshot_is_published_only_when_wanted() {
        let p = ProgressShared::default();
        assert!(!p.wanted());
        p.wanted.store(true, Ordering::Relaxed);
        p.publish(Snapshot::default());
        assert!(!p.wanted());
        assert_eq!(*p.snapshot.lock().unwrap(), Some(Snapshot::default()));
    }
}

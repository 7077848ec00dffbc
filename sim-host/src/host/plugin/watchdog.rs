//! A plugin's callback is foreign code the host cannot interrupt. The
//! watchdog notices one that does not return when the run must stop (its
//! `--timeout` passed, or a stop signal arrived) and, after a grace period,
//! ends the process with the status that stop would have had, naming the
//! callback that hung and removing every temporary output file.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a callback may go on after the run was asked to stop.
pub const GRACE: Duration = Duration::from_secs(1);
const POLL: Duration = Duration::from_millis(50);

/// The callback running now, if any.
#[derive(Clone, Debug)]
pub struct Call {
    pub plugin: Arc<str>,
    pub what: &'static str,
    pub sid: Option<u16>,
}

impl std::fmt::Display for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "plugin {}: its {} callback", self.plugin, self.what)?;
        match self.sid {
            Some(sid) => write!(f, " (section {sid})"),
            None => Ok(()),
        }
    }
}

static CURRENT: Mutex<Option<Call>> = Mutex::new(None);

/// Marks a callback as running until the guard is dropped.
pub fn running(call: Call) -> RunningGuard {
    if let Ok(mut c) = CURRENT.lock() {
        *c = Some(call);
    }
    RunningGuard
}

pub struct RunningGuard;

impl Drop for RunningGuard {
    fn drop(&mut self) {
        if let Ok(mut c) = CURRENT.lock() {
            *c = None;
        }
    }
}

/// Watches the run's plugin callbacks while it lives.
pub struct Watchdog {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for Watchdog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watchdog")
    }
}

impl Watchdog {
    pub fn start(deadline: Option<Instant>, interrupt: Option<Arc<AtomicI32>>) -> Watchdog {
        let done = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&done);
        let thread = std::thread::Builder::new()
            .name("plugin-watchdog".into())
            .spawn(move || watch(&stop, deadline, interrupt.as_deref()))
            .ok();
        Watchdog { done, thread }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The status the run must end with now, if it must stop.
fn due(deadline: Option<Instant>, interrupt: Option<&AtomicI32>) -> Option<(i32, String)> {
    match interrupt.map_or(0, |f| f.load(Ordering::Relaxed)) {
        // 0: nothing asked; negative: a debugger's interrupt, not a stop
        ..=0 => {}
        signal => {
            let why = format!("stopped by {}", crate::host::signals::name(signal));
            return Some((crate::model::exit::for_signal(signal), why));
        }
    }
    deadline
        .filter(|d| Instant::now() >= *d)
        .map(|_| (crate::model::exit::TIMEOUT, "--timeout reached".to_owned()))
}

fn watch(done: &AtomicBool, deadline: Option<Instant>, interrupt: Option<&AtomicI32>) {
    let mut overdue_since: Option<Instant> = None;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(POLL);
        let call = CURRENT.lock().ok().and_then(|c| c.clone());
        let Some((status, why)) = due(deadline, interrupt).filter(|_| call.is_some()) else {
            overdue_since = None;
            continue;
        };
        let since = *overdue_since.get_or_insert_with(Instant::now);
        if since.elapsed() < GRACE {
            continue;
        }
        if let Some(call) = call {
            crate::say!(
                "sim-host: {why}, but {call} has not returned for {:.1} s: exiting without \
                 the report or data.arp",
                GRACE.as_secs_f64()
            );
        }
        arpsim::output::remove_temporaries();
        std::process::exit(status);
    }
}

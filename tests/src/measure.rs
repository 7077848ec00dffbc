//! Peak memory of a piece of work, measured in a process of its own: the
//! test executable runs the one test again as a child, the child does the
//! work and prints its peak resident set (`VmHWM` of `/proc/self/status`),
//! and the parent compares it with the documented bound (issue 30: memory
//! bounded by live state, never by history).
//!
//! ```ignore
//! #[test]
//! fn a_bounded_thing() {
//!     // `None` in the child, which did the work
//!     if let Some(peak) = measure::in_child("a_bounded_thing", || work()) {
//!         assert!(peak.kib < 64 * 1024, "{peak}");
//!     }
//! }
//! ```
//!
//! The child is stopped by its pid if the parent fails while it runs.

use std::io::Read;
use std::process::{Child, Command, Stdio};

/// Set in the child's environment to the name of the test it runs.
const CHILD: &str = "E2E_MEASURED_CHILD";
/// How the child prints its figure.
const MARK: &str = "e2e-peak-rss-kib: ";

/// A child's peak resident set.
#[derive(Debug, Clone, Copy)]
pub struct Peak {
    pub kib: u64,
}

impl std::fmt::Display for Peak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "peak RSS {:.1} MiB", self.kib as f64 / 1024.0)
    }
}

/// This process's peak resident set in KiB (`VmHWM`).
pub fn own_peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmHWM line")
}

/// Whether this process is a child started for `test` (then [`in_child`]
/// runs the work and returns `None`), or for another shape of the same
/// test (then it does nothing and returns `None`).
pub fn is_child(test: &str) -> bool {
    let name = test.split('/').next().unwrap_or(test);
    std::env::var(CHILD).is_ok_and(|c| c.split('/').next() == Some(name))
}

/// Whether this child was started for exactly `test` (its shape too).
fn is_child_of_shape(test: &str) -> bool {
    std::env::var(CHILD).as_deref() == Ok(test)
}

/// Runs `work` in a child process (this executable, test `test` alone)
/// and returns its peak resident set; in the child itself it runs `work`,
/// prints the figure and returns `None`.
pub fn in_child(test: &str, work: impl FnOnce()) -> Option<Peak> {
    let mut work = Some(work);
    in_children(test, &[0], |_| (work.take().expect("run once"))()).map(|peaks| peaks[0])
}

/// Runs `work(size)` for each of `sizes`, each in a child process of its
/// own, and returns their peak resident sets in that order (`None` in a
/// child, which runs the one size it was started for). A test that
/// measures several shapes names each `test/shape`: the child runs test
/// `test` and only the work of its shape.
pub fn in_children(test: &str, sizes: &[u64], mut work: impl FnMut(u64)) -> Option<Vec<Peak>> {
    if is_child(test) {
        if !is_child_of_shape(test) {
            return None;
        }
        let size = std::env::var(SIZE)
            .ok()
            .and_then(|s| s.parse().ok())
            .expect("the parent sets the size");
        work(size);
        println!("{MARK}{}", own_peak_kib());
        return None;
    }
    Some(sizes.iter().map(|&size| run_child(test, size)).collect())
}

/// Set in the child's environment to the size it measures.
const SIZE: &str = "E2E_MEASURED_SIZE";

fn run_child(test: &str, size: u64) -> Peak {
    let exe = std::env::current_exe().expect("the test executable");
    let name = test.split('/').next().unwrap_or(test);
    let child = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, test)
        .env(SIZE, size.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the test executable runs");
    let mut guard = Running(Some(child));
    let child = guard.0.as_mut().expect("just spawned");
    let mut stderr = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("piped")
        .read_to_string(&mut out)
        .expect("the child's output");
    let status = child.wait().expect("the child ends");
    guard.0 = None;
    let err = reader.join().unwrap_or_default();
    assert!(
        status.success(),
        "the measured child ({test}, size {size}) failed: {status}\n{out}\n{err}"
    );
    let kib = out
        .lines()
        .find_map(|l| l.split(MARK).nth(1))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("the child printed no figure:\n{out}\n{err}"));
    Peak { kib }
}

/// A child process stopped by its pid when dropped still running (the
/// parent failed meanwhile).
struct Running(Option<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

//! The `monitor` commands: what the simulator knows that gdb does not —
//! simulated clocks per thread and core, the ARP sections open in the
//! stopped thread and the section table so far — and `monitor reset`.

use crate::engine::{DebugGuest, DebugThread};
use crate::host::threads::ThreadId;
use crate::observe::report;
use std::fmt::Write as _;

/// What a monitor command asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// Text for gdb's console.
    Text(String),
    /// Start the run again from the first instruction.
    Reset,
}

const HELP: &str = "\
sim-host monitor commands:
  cycles    simulated cycles of every thread (* the one that stopped) and core,
            and instructions so far
  sections [N]  the ARP sections open in the thread that stopped (or in gdb thread N),
            and the section table so far
  cache     the flash accelerator's, the L1 caches' or the XIP cache's stalls,
            cache hits and misses so far, in all and by section (targets with
            one, such as stm32f407, stm32f746 and rp2040)
  reset     start the run again from its first instruction (a fresh data.arp and report)
  help      this list";

pub fn run(guest: &DebugGuest, command: &str) -> Reply {
    let mut words = command.split_whitespace();
    Reply::Text(
        match (words.next().unwrap_or(""), words.next(), words.next()) {
            ("cycles", None, _) => cycles(guest),
            ("sections", None, _) => sections(guest, guest.current_thread()),
            ("sections", Some(n), None) => match gdb_thread(guest, n) {
                Ok(thread) => sections(guest, thread),
                Err(e) => e,
            },
            ("cache", None, _) => cache(guest),
            ("reset", None, _) => return Reply::Reset,
            ("" | "help", None, _) => HELP.to_owned(),
            // escaped: gdb prints what comes back on its console
            _ => format!(
                "unknown monitor command `{}`\n{HELP}",
                command.escape_debug()
            ),
        },
    )
}

/// The memory system's counts so far: the whole run's, then each
/// section's.
fn cache(guest: &DebugGuest) -> String {
    // every model the target has (stm32f746: the ART and the L1 caches)
    let mut out: String = [
        guest.flash().map(|f| report::flash_text(&f)),
        guest.l1cache().map(|c| report::l1cache_text(&c)),
        guest.xip().map(|x| report::xip_text(&x)),
    ]
    .into_iter()
    .flatten()
    .collect();
    if out.is_empty() {
        return "this target has no flash accelerator or cache model".to_owned();
    }
    let (traces, total) = guest.section_traces();
    let rows = report::section_rows(&traces, &guest.image(), total, &[]);
    let table = report::memory_table(&rows);
    if !table.is_empty() {
        let _ = write!(out, "\nby section so far:\n{table}");
    }
    out.trim_end().to_owned()
}

/// The guest thread of gdb thread number `text`.
fn gdb_thread(guest: &DebugGuest, text: &str) -> Result<ThreadId, String> {
    let thread = text
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|t| ThreadId::try_from(t).ok())
        .filter(|t| guest.thread_exists(*t));
    thread.ok_or_else(|| {
        format!(
            "`{}` is not a thread: `info threads` lists them",
            text.escape_debug()
        )
    })
}

/// One line of `info threads`: core, clock, state and open section.
pub fn thread_summary(t: &DebugThread) -> String {
    let mut text = match t.core {
        Some(core) => format!("core {core}, "),
        None => String::new(),
    };
    let _ = write!(text, "{} cycles, {}", t.clock, t.state);
    if let Some(sid) = t.section {
        let _ = write!(text, ", in section {sid}");
    }
    text
}

fn cycles(guest: &DebugGuest) -> String {
    let (_, instructions) = guest.counters();
    let current = guest.current_thread();
    let mut out = String::new();
    for t in guest.threads() {
        let mark = if t.id == current { "*" } else { " " };
        let gdb = super::ids::tid(t.id);
        let _ = writeln!(
            out,
            "{mark} thread {} (gdb {gdb}): {}",
            t.id,
            thread_summary(&t)
        );
    }
    for (core, busy) in guest.core_busy_cycles().iter().enumerate() {
        let _ = writeln!(out, "  core {core}: busy {busy} cycles (ended slices)");
    }
    let (cycles, _) = guest.counters();
    let _ = write!(
        out,
        "cycles: {cycles} (thread {current})  instructions: {instructions} (all threads)"
    );
    out
}

fn sections(guest: &DebugGuest, thread: ThreadId) -> String {
    let mut out = String::new();
    match guest.open_sections(thread) {
        Some((tid, open)) if !open.is_empty() => {
            let _ = writeln!(
                out,
                "sections open in thread {thread} (ARP thread {tid}), outermost first:"
            );
            let (now, _) = guest.counters();
            let sites: Vec<u64> = open.iter().map(|s| s.site).collect();
            for (s, place) in open.iter().zip(guest.sources_of(&sites)) {
                let counter = s.idx.map_or(String::new(), |i| format!("@{i}"));
                let _ = writeln!(
                    out,
                    "  {}{counter}  {:<8} entered at {} ({} cycles ago)  {}",
                    s.sid,
                    s.kind,
                    s.entered_at,
                    now.saturating_sub(s.entered_at),
                    place
                );
            }
        }
        _ => {
            let _ = writeln!(out, "no ARP section is open in thread {thread}");
        }
    }
    let (traces, total) = guest.section_traces();
    let rows = report::section_rows(&traces, &guest.image(), total, &[]);
    let table = report::sections_table(&rows);
    if table.lines().count() > 1 {
        let _ = write!(out, "\nsection table so far:\n{table}");
    } else {
        out.push_str("\nno section has been left yet");
    }
    out.trim_end().to_owned()
}

//! The section timeline as Chrome trace-event JSON (Perfetto,
//! `chrome://tracing`): one "B" event per section enter and one "E" per
//! leave, on process 1, one track (tid) per simulated core, timestamps in
//! microseconds of simulated time at the target's clock.
//!
//! The machine records events in execution order, which interleaves cores
//! (and threads on a core) by slices; here they are ordered by time on each
//! track (stable, so equal times keep their order and nesting). A leave
//! is written on the track of its enter (a thread may run on another core
//! by then), so every B has its E on the same tid. When a core carries the
//! sections of more than one guest thread, their B/E pairs could cross;
//! such cores get one track per thread (`tid = 1000 * (core + 1) + thread`,
//! named "core C thread T"). On a core that ran RTOS tasks (issue 39)
//! each task (and handler) that entered sections gets its own track
//! (`tid = 2_000_000 + context`, named after the task): a section is drawn
//! on the track of the task that entered it. Sections still open at the
//! end (the limit was reached, or the program exited inside them) are
//! closed at the last timestamp with `"unterminated": true`.

use crate::host::arp_host::SectionEvent;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum TraceEventsError {
    #[error("{file}: cannot write: {source}")]
    Write {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("the target clock is 0 Hz: no simulated time")]
    NoClock,
}

/// How the timeline is written.
#[derive(Debug, Clone, Default)]
pub struct TraceOptions {
    /// The target's clock: cycles → microseconds.
    pub clock_hz: u64,
    /// Section names by section id (default: `section <sid>`).
    pub names: HashMap<u16, String>,
    /// Events the machine did not keep (`RunOutcome::section_events_dropped`).
    pub dropped: u64,
    /// The `--trace-limit` in force, for the note about dropped events.
    pub limit: Option<usize>,
    /// The names of the run's contexts (`RunOutcome::tasks`), by id.
    pub contexts: Vec<String>,
    /// The core clock over the run, when a clock tree changed it: then
    /// cycles → microseconds at the clock in force (`clock_hz` is the
    /// clock at reset).
    pub timeline: Option<crate::model::clocks::ClockTimeline>,
}

/// Where the tracks of RTOS tasks start.
const TASK_TRACKS: u64 = 2_000_000;

/// The trace-event document for `events` (the streamed file, parsed).
pub fn to_json(events: &[SectionEvent], options: &TraceOptions) -> Result<Value, TraceEventsError> {
    let mut bytes = Vec::new();
    write_to(&mut bytes, events, options).map_err(|e| match e {
        Streamed::Options(e) => e,
        Streamed::Io(e) => TraceEventsError::Write {
            file: PathBuf::new(),
            source: e,
        },
    })?;
    serde_json::from_slice(&bytes).map_err(|e| TraceEventsError::Write {
        file: PathBuf::new(),
        source: e.into(),
    })
}

/// Why streaming the document failed.
enum Streamed {
    Options(TraceEventsError),
    Io(std::io::Error),
}

impl From<std::io::Error> for Streamed {
    fn from(e: std::io::Error) -> Self {
        Streamed::Io(e)
    }
}

/// Where each recorded event goes: its track, and the order events are
/// written in (by track, then time, then recorded order; the sections
/// still open at the end are closed after them). A few bytes per event:
/// the document itself is streamed (issue 30, N14: it was once built whole
/// in memory, 3.7 KB an event).
struct Layout {
    /// Per recorded event: its track, or `u64::MAX` for a leave whose
    /// enter was never recorded (not written).
    tracks: Vec<u64>,
    /// Sections open at the end: (track, the enter's index), innermost
    /// first per guest thread.
    unterminated: Vec<(u64, u32)>,
    /// Indices into the events, then `events.len() + i` for the i-th
    /// closing of `unterminated`, in writing order.
    order: Vec<u32>,
    /// The last timestamp (cycles).
    last: u64,
}

fn layout(events: &[SectionEvent]) -> Layout {
    // Cores carrying more than one guest thread get a track per thread.
    let mut threads_on: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for e in events {
        threads_on.entry(e.core).or_default().insert(e.thread);
    }
    let tasks = events.iter().any(|e| e.context != 0);
    let track = |e: &SectionEvent| -> u64 {
        if tasks {
            TASK_TRACKS + u64::from(e.context)
        } else if threads_on.get(&e.core).is_some_and(|t| t.len() > 1) {
            1000 * (u64::from(e.core) + 1) + u64::from(e.thread)
        } else {
            u64::from(e.core)
        }
    };
    // leaves go to their enter's track (ARP keeps a stack per thread id)
    let mut open: BTreeMap<(u32, u16), Vec<(u64, u32)>> = BTreeMap::new();
    let mut tracks = Vec::with_capacity(events.len());
    for (i, e) in events.iter().enumerate() {
        let stack = open.entry((e.thread, e.tid)).or_default();
        if e.enter {
            let tid = track(e);
            stack.push((tid, i as u32));
            tracks.push(tid);
        } else {
            // a leave without its enter (never recorded): nothing to close
            tracks.push(stack.pop().map_or(u64::MAX, |(tid, _)| tid));
        }
    }
    let last = events.iter().map(|e| e.cycles).max().unwrap_or(0);
    // Close what is still open, innermost first.
    let unterminated: Vec<(u64, u32)> = open
        .values()
        .flat_map(|stack| stack.iter().rev().copied())
        .collect();
    let n = events.len();
    let mut order: Vec<u32> = (0..n as u32)
        .filter(|&i| tracks[i as usize] != u64::MAX)
        .chain((0..unterminated.len()).map(|j| (n + j) as u32))
        .collect();
    let key = |i: u32| -> (u64, u64) {
        let i = i as usize;
        match i.checked_sub(n) {
            None => (tracks[i], events[i].cycles),
            Some(j) => (unterminated[j].0, last),
        }
    };
    // stable: equal times keep the recorded order (closings last)
    order.sort_by_key(|&i| key(i));
    Layout {
        tracks,
        unterminated,
        order,
        last,
    }
}

/// Streams the trace-event document for `events` into `out`.
fn write_to(
    out: &mut impl std::io::Write,
    events: &[SectionEvent],
    options: &TraceOptions,
) -> Result<(), Streamed> {
    if options.clock_hz == 0 {
        return Err(Streamed::Options(TraceEventsError::NoClock));
    }
    let us = |cycles: u64| match &options.timeline {
        Some(t) => t.picos_at(cycles) as f64 / 1e6,
        None => cycles as f64 * 1e6 / options.clock_hz as f64,
    };
    let name = |sid: u16| {
        options
            .names
            .get(&sid)
            .cloned()
            .unwrap_or_else(|| format!("section {sid}"))
    };
    let Layout {
        tracks,
        unterminated,
        order,
        last,
    } = layout(events);

    let mut other = json!({
        "clock_hz": options.clock_hz,
        "events": events.len(),
        "dropped_events": options.dropped,
        "unterminated_sections": unterminated.len(),
    });
    let note = (options.dropped > 0).then(|| {
        format!(
            "{} section events were dropped: only the first {} were kept (--trace-limit)",
            options.dropped,
            options.limit.map_or(events.len(), |l| l)
        )
    });
    if let Some(note) = &note {
        other["note"] = json!(note);
    }
    let json_err = |e: serde_json::Error| Streamed::Io(e.into());
    out.write_all(br#"{"displayTimeUnit":"ns","otherData":"#)?;
    serde_json::to_writer(&mut *out, &other).map_err(json_err)?;
    out.write_all(br#","traceEvents":["#)?;
    let mut first = true;
    let mut item = |out: &mut dyn std::io::Write, value: Value| -> Result<(), Streamed> {
        if !first {
            out.write_all(b",")?;
        }
        first = false;
        serde_json::to_writer(out, &value).map_err(json_err)
    };
    item(
        out,
        json!({"name": "process_name", "ph": "M", "pid": 1, "tid": 0,
        "args": {"name": "sim-host (simulated time)"}}),
    )?;
    let used: BTreeSet<u64> = tracks
        .iter()
        .copied()
        .filter(|t| *t != u64::MAX)
        .chain(unterminated.iter().map(|u| u.0))
        .collect();
    for tid in &used {
        let label = if *tid >= TASK_TRACKS {
            let context = (*tid - TASK_TRACKS) as usize;
            options
                .contexts
                .get(context)
                .cloned()
                .unwrap_or_else(|| format!("context {context}"))
        } else if *tid >= 1000 {
            format!("core {} thread {}", tid / 1000 - 1, tid % 1000)
        } else {
            format!("core {tid}")
        };
        item(
            out,
            json!({"name": "thread_name", "ph": "M", "pid": 1, "tid": tid,
            "args": {"name": label}}),
        )?;
    }
    let event = |tid: u64, e: &SectionEvent, ph: &str, cycles: u64, unterminated: bool| {
        let mut args = json!({
            "thread": e.thread,
            "core": e.core,
            "arp_tid": e.tid,
            "sid": e.sid,
            "kind": e.kind,
            "cycles": cycles,
        });
        if unterminated {
            args["unterminated"] = json!(true);
        }
        json!({
            "name": name(e.sid),
            "cat": "arp",
            "ph": ph,
            "ts": us(cycles),
            "pid": 1,
            "tid": tid,
            "args": args,
        })
    };
    let n = events.len();
    for i in order {
        let i = i as usize;
        let value = match i.checked_sub(n) {
            None => {
                let e = &events[i];
                event(
                    tracks[i],
                    e,
                    if e.enter { "B" } else { "E" },
                    e.cycles,
                    false,
                )
            }
            Some(j) => {
                let (tid, enter) = unterminated[j];
                event(tid, &events[enter as usize], "E", last, true)
            }
        };
        item(out, value)?;
    }
    if let Some(note) = note {
        item(
            out,
            json!({"name": "trace truncated", "ph": "i", "s": "g", "pid": 1,
            "tid": 0, "ts": us(last), "args": {"note": note}}),
        )?;
    }
    out.write_all(b"]}")?;
    Ok(())
}

/// Each section's name for the timeline (`ato_kernel_filter_line_hor`,
/// `main (filter.c:131)`), from the report's rows (`section_names`: the
/// label, else where it is entered; else the enter call's function),
/// taken from the shallowest trace that ends in the section.
pub fn names_from_sections(
    sections: &[crate::observe::report::SectionRow],
) -> HashMap<u16, String> {
    let mut names: HashMap<u16, (usize, String)> = HashMap::new();
    for t in sections {
        let Some(sid) = t.path.last() else {
            continue;
        };
        let named = t.names.last().cloned();
        let Some(name) = named.or_else(|| t.functions.last().cloned().flatten()) else {
            continue;
        };
        let depth = t.path.len();
        if names.get(sid).is_none_or(|(d, _)| depth < *d) {
            names.insert(*sid, (depth, name));
        }
    }
    names.into_iter().map(|(sid, (_, n))| (sid, n)).collect()
}

/// Writes the timeline to `path`, streamed.
pub fn write(
    path: &Path,
    events: &[SectionEvent],
    options: &TraceOptions,
) -> Result<(), TraceEventsError> {
    if options.clock_hz == 0 {
        return Err(TraceEventsError::NoClock);
    }
    let err = |source| TraceEventsError::Write {
        file: path.to_owned(),
        source,
    };
    let file = arpsim::output::Output::create(path).map_err(err)?;
    let mut w = std::io::BufWriter::new(file);
    write_to(&mut w, events, options).map_err(|e| match e {
        Streamed::Options(e) => e,
        Streamed::Io(e) => err(e),
    })?;
    let file = w.into_inner().map_err(|e| err(e.into_error()))?;
    file.commit().map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(sid: u16, enter: bool, cycles: u64, core: u32, thread: u32) -> SectionEvent {
        SectionEvent {
            tid: 1,
            sid,
            kind: "plain",
            enter,
            cycles,
            core,
            thread,
            context: 0,
        }
    }

    #[test]
    fn pairs_and_times() {
        let events = [
            ev(8, true, 0, 0, 0),
            ev(3, true, 25, 0, 0),
            ev(3, false, 50, 0, 0),
        ];
        let opts = TraceOptions {
            clock_hz: 25_000_000,
            names: HashMap::from([(3, "filter".to_owned())]),
            ..Default::default()
        };
        let doc = to_json(&events, &opts).unwrap();
        let list = doc["traceEvents"].as_array().unwrap();
        let phases: Vec<&str> = list
            .iter()
            .filter(|e| e["ph"] != "M")
            .map(|e| e["ph"].as_str().unwrap())
            .collect();
        // the open section 8 is closed at the end
        assert_eq!(phases, ["B", "B", "E", "E"]);
        let b = list.iter().find(|e| e["name"] == "filter").unwrap();
        assert_eq!(b["ts"], 1.0);
        assert_eq!(doc["otherData"]["unterminated_sections"], 1);
    }

    #[test]
    fn threads_sharing_a_core_get_tracks() {
        let events = [
            ev(1, true, 0, 0, 1),
            ev(1, true, 10, 0, 2),
            ev(1, false, 20, 0, 1),
            ev(1, false, 30, 0, 2),
        ];
        let opts = TraceOptions {
            clock_hz: 1_000_000,
            dropped: 3,
            ..Default::default()
        };
        let doc = to_json(&events, &opts).unwrap();
        let tids: BTreeSet<u64> = doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "B")
            .map(|e| e["tid"].as_u64().unwrap())
            .collect();
        assert_eq!(tids, BTreeSet::from([1001, 1002]));
        assert!(doc["otherData"]["note"].is_string());
    }

    #[test]
    fn rtos_tasks_get_a_track_each_named_after_them() {
        let mut a = ev(1, true, 0, 0, 0);
        a.context = 1;
        let mut b = ev(2, true, 10, 0, 0);
        b.context = 2;
        b.tid = 2;
        let mut a_leave = ev(1, false, 20, 0, 0);
        a_leave.context = 2; // left while the other task's code ran: its enter's track
        let events = [a, b, a_leave];
        let opts = TraceOptions {
            clock_hz: 1_000_000,
            contexts: vec!["main".into(), "worker0".into(), "worker1".into()],
            ..Default::default()
        };
        let doc = to_json(&events, &opts).unwrap();
        let list = doc["traceEvents"].as_array().unwrap();
        let names: BTreeSet<&str> = list
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, BTreeSet::from(["worker0", "worker1"]));
        let e = list
            .iter()
            .find(|e| e["ph"] == "E" && e["ts"] == 20.0)
            .unwrap();
        assert_eq!(e["tid"], 2_000_001);
    }

    #[test]
    fn zero_clock_is_an_error() {
        assert!(to_json(&[], &TraceOptions::default()).is_err());
    }
}

//! Profiles of a run (issue 9): the callgrind file and the Chrome
//! trace-event timeline, read back and checked against the run.

use e2e_tests::{guest, require_tool, scratch};
use sim_host::engine::{self, Observer, RunOptions, RunOutcome, Stop};
use sim_host::host::arp_host::ArpOptions;
use sim_host::image::elf::GuestImage;
use sim_host::model::target;
use sim_host::observe::callgrind::CallgrindCollector;
use sim_host::observe::trace_events::{self, TraceOptions};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::rc::Rc;

/// What the test needs of a callgrind file.
#[derive(Debug, Default)]
struct Parsed {
    events: Vec<String>,
    /// Sum of the self-cost lines.
    self_total: Vec<u64>,
    totals: Vec<u64>,
    /// (caller, callee) -> (calls, inclusive costs)
    calls: BTreeMap<(String, String), (u64, Vec<u64>)>,
}

/// A small parser of the callgrind format: name compression `(id) name`
/// (files and functions count separately), `fn=`, `cfn=`, `calls=`, cost
/// lines.
fn parse_callgrind(text: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut functions: HashMap<String, String> = HashMap::new();
    let mut files: HashMap<String, String> = HashMap::new();
    let resolve = |names: &mut HashMap<String, String>, v: &str| -> String {
        let v = v.trim();
        if let Some(rest) = v.strip_prefix('(') {
            let (id, name) = rest.split_once(')').expect("(id)");
            let name = name.trim();
            if name.is_empty() {
                names[id].clone()
            } else {
                names.insert(id.to_owned(), name.to_owned());
                name.to_owned()
            }
        } else {
            v.to_owned()
        }
    };
    let (mut current, mut callee, mut pending_calls) = (String::new(), String::new(), None);
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(v) = line.strip_prefix("events:") {
            p.events = v.split_whitespace().map(str::to_owned).collect();
            p.self_total = vec![0; p.events.len()];
        } else if let Some(v) = line.strip_prefix("totals:") {
            p.totals = v.split_whitespace().map(|n| n.parse().unwrap()).collect();
        } else if let Some(v) = line.strip_prefix("fn=") {
            current = resolve(&mut functions, v);
        } else if let Some(v) = line.strip_prefix("cfn=") {
            callee = resolve(&mut functions, v);
        } else if let Some(v) = line.strip_prefix("calls=") {
            pending_calls = Some(v.split_whitespace().next().unwrap().parse::<u64>().unwrap());
        } else if line.starts_with(|c: char| c.is_ascii_digit()) {
            let costs: Vec<u64> = line
                .split_whitespace()
                .skip(1)
                .map(|n| n.parse().unwrap())
                .collect();
            if let Some(n) = pending_calls.take() {
                let e = p
                    .calls
                    .entry((current.clone(), callee.clone()))
                    .or_insert((0, vec![0; costs.len()]));
                e.0 += n;
                for (a, c) in e.1.iter_mut().zip(&costs) {
                    *a += c;
                }
            } else {
                for (a, c) in p.self_total.iter_mut().zip(&costs) {
                    *a += c;
                }
            }
        } else if let Some((key, v)) = line.split_once([':', '=']) {
            // other headers and fl=/cfl= (file names are not checked)
            if key.ends_with("fl") || key == "fi" || key == "fe" {
                resolve(&mut files, v);
            }
        }
    }
    p
}

fn run(
    target_name: &str,
    example: &str,
    cores: Option<usize>,
    trace_limit: Option<usize>,
    observers: Vec<Observer>,
) -> (RunOutcome, u64) {
    let t = target::builtin(target_name).unwrap();
    let clock = t.clock_hz;
    let image = GuestImage::load(&guest(target_name, example), &t).unwrap();
    let dir = scratch(&format!("profiles-{target_name}-{example}"));
    let outcome = engine::run(
        image,
        t,
        RunOptions {
            cmdline: example.into(),
            arp: ArpOptions {
                file: Some(dir.join("data.arp")),
                trace_events: trace_limit,
                ..Default::default()
            },
            observers,
            cores,
            ..Default::default()
        },
    )
    .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(outcome.stop, Stop::Exit(0), "{target_name} {example}");
    (outcome, clock)
}

/// The callgrind profile of filter's run on `target_name`, written into
/// `dir`, and the run's outcome.
fn callgrind_of_filter(target_name: &str, dir: &Path) -> (std::path::PathBuf, RunOutcome) {
    let t = target::builtin(target_name).unwrap();
    let image = GuestImage::load(&guest(target_name, "filter"), &t).unwrap();
    let collector = Rc::new(RefCell::new(CallgrindCollector::new(&image).unwrap()));
    let (outcome, _) = run(target_name, "filter", None, None, vec![collector.clone()]);
    let file = dir.join("callgrind.out.filter");
    collector.borrow().write(&file).unwrap();
    (file, outcome)
}

#[test]
fn callgrind_profile_of_filter() {
    for target_name in ["cortex-m4", "rv32imac"] {
        let dir = scratch(&format!("callgrind-{target_name}"));
        let (file, outcome) = callgrind_of_filter(target_name, &dir);
        let text = std::fs::read_to_string(&file).unwrap();
        let p = parse_callgrind(&text);
        assert_eq!(p.events, ["Cycles", "Instructions"]);
        let run_totals = vec![outcome.cycles, outcome.instructions];
        assert_eq!(
            p.self_total, run_totals,
            "{target_name}: self costs add up to the run"
        );
        assert_eq!(p.totals, run_totals, "{target_name}: totals line");

        // ARP sections are frames named after their labels, else their
        // enter call's function and line: main calls filter_horizontally
        // inside its plain section 3
        let edge = &p.calls[&(
            "main (filter.c:133)".to_owned(),
            "filter_horizontally".to_owned(),
        )];
        assert_eq!(
            edge.0, 4,
            "{target_name}: main's section 3 calls filter_horizontally 4 times"
        );
        // inclusive cost of the calls: inside the run, and most of it
        assert!(edge.1[0] > 0 && edge.1[0] < outcome.cycles);
        // a section's inclusive cost is what the ARP samples measured
        for (caller, section, path) in [
            (
                "filter_horizontally",
                "ato_profile_filter_image_hor",
                &[8, 7, 3, 2][..],
            ),
            (
                "ato_profile_filter_image_hor",
                "ato_kernel_filter_line_hor",
                &[8, 7, 3, 2, 1],
            ),
            ("main", "main (filter.c:128)", &[8]),
        ] {
            let edge = &p.calls[&(caller.to_owned(), section.to_owned())];
            let sampled = outcome.sections.iter().find(|t| t.path == path).unwrap();
            assert_eq!(
                (edge.0, edge.1[0]),
                (sampled.count, sampled.total_cycles),
                "{target_name}: {caller} -> {section}"
            );
        }
        // every ARP call is an edge too (the stubs cost nothing)
        let enter = p
            .calls
            .iter()
            .find(|((a, b), _)| a == "main" && b.starts_with("arp_enter"))
            .expect("main calls arp_enter");
        // no instructions; its cycles are the call's taken-branch refill,
        // which the block model charges on entering the target block
        assert_eq!(
            enter.1 .1[1], 0,
            "{target_name}: intercepted stubs execute nothing"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// valgrind's own reader of the format takes the profile and shows the
/// kernel's source lines with their costs.
#[test]
#[cfg_attr(
    not(has_callgrind_annotate),
    ignore = "needs callgrind_annotate (valgrind; scripts/bootstrap.sh installs it)"
)]
fn callgrind_annotate_reads_the_profile_of_filter() {
    require_tool("callgrind_annotate");
    for target_name in ["cortex-m4", "rv32imac"] {
        let dir = scratch(&format!("callgrind-annotate-{target_name}"));
        let (file, _) = callgrind_of_filter(target_name, &dir);
        let out = std::process::Command::new("callgrind_annotate")
            .arg("--auto=yes")
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "callgrind_annotate: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("filter_horizontally"), "{stdout}");
        // source lines with their costs: the kernel's inner loop line
        assert!(
            stdout.contains("Auto-annotated source:") && stdout.contains("filter.c"),
            "{stdout}"
        );
        let annotated_loop = stdout.lines().any(|l| {
            l.contains("image_out[y][x] =")
                && l.trim_start().starts_with(|c: char| c.is_ascii_digit())
        });
        assert!(annotated_loop, "no costed source line: {stdout}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Checks a trace-event document: every B has its E on the same tid,
/// timestamps never decrease on a tid. Returns the number of B events.
fn check_trace(path: &Path) -> usize {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let mut open: HashMap<u64, Vec<String>> = HashMap::new();
    let mut last: HashMap<u64, f64> = HashMap::new();
    let mut begins = 0;
    for e in events {
        let ph = e["ph"].as_str().unwrap();
        if ph == "M" || ph == "i" {
            continue;
        }
        assert_eq!(e["pid"], 1);
        let tid = e["tid"].as_u64().unwrap();
        let ts = e["ts"].as_f64().unwrap();
        let prev = last.insert(tid, ts).unwrap_or(0.0);
        assert!(ts >= prev, "time goes back on tid {tid}: {prev} -> {ts}");
        let name = e["name"].as_str().unwrap().to_owned();
        match ph {
            "B" => {
                begins += 1;
                open.entry(tid).or_default().push(name);
            }
            "E" => {
                let b = open.get_mut(&tid).and_then(Vec::pop);
                assert_eq!(
                    b.as_deref(),
                    Some(name.as_str()),
                    "E without its B on tid {tid}"
                );
            }
            other => panic!("unexpected phase {other}"),
        }
    }
    assert!(open.values().all(Vec::is_empty), "unclosed B: {open:?}");
    begins
}

#[test]
fn trace_events_of_filter() {
    for (example, cores) in [("filter", None), ("filter-par-2", Some(2))] {
        let (outcome, clock) = run("cortex-m4", example, cores, Some(100_000), Vec::new());
        assert!(!outcome.section_events.is_empty(), "{example}: no events");
        let dir = scratch(&format!("trace-{example}"));
        let file = dir.join("trace.json");
        let options = TraceOptions {
            clock_hz: clock,
            names: HashMap::from([(3, "filter_horizontally".to_owned())]),
            dropped: outcome.section_events_dropped,
            limit: Some(100_000),
            contexts: Vec::new(),
            timeline: None,
        };
        trace_events::write(&file, &outcome.section_events, &options).unwrap();
        let begins = check_trace(&file);
        let enters = outcome.section_events.iter().filter(|e| e.enter).count();
        assert_eq!(begins, enters, "{example}");
        if cores == Some(2) {
            // both cores carry sections
            let doc: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            let cores: std::collections::BTreeSet<u64> = doc["traceEvents"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["ph"] == "B")
                .map(|e| e["args"]["core"].as_u64().unwrap())
                .collect();
            assert_eq!(cores.len(), 2, "{example}: sections on both cores");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn trace_limit_writes_a_note() {
    let (outcome, clock) = run("cortex-m4", "filter", None, Some(5), Vec::new());
    assert_eq!(outcome.section_events.len(), 5);
    assert!(outcome.section_events_dropped > 0);
    let dir = scratch("trace-limit");
    let file = dir.join("trace.json");
    let options = TraceOptions {
        clock_hz: clock,
        dropped: outcome.section_events_dropped,
        limit: Some(5),
        ..Default::default()
    };
    trace_events::write(&file, &outcome.section_events, &options).unwrap();
    check_trace(&file);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(doc["otherData"]["note"]
        .as_str()
        .unwrap()
        .contains("dropped"));
    let _ = std::fs::remove_dir_all(&dir);
}

//! The third audit's hostile inputs (issue 30): every guest, file and
//! client shape that once made memory or time grow without bound, or
//! corrupted a result, as a test. Memory is measured in a child process
//! (`e2e_tests::measure`: the peak resident set from /proc/self/status)
//! and compared with the documented bound, mostly as the difference
//! between a small and a large run of the same shape, so the test tells
//! bounded from unbounded whatever the machine's baseline. Time orders are
//! in BENCHMARKS.md, never asserted here.

use e2e_tests::measure::{in_children, Peak};
use e2e_tests::{guest, scratch};
use sim_host::engine::Stop;
use sim_host::tools::session::{self, Finished, RunSpec, TargetSource};
use std::path::{Path, PathBuf};

const MIB: u64 = 1024;

fn hostile(target: &str) -> PathBuf {
    guest(target, "hostile")
}

/// A run of the hostile guest on `target` with `args`, in this process.
fn spec(target: &str, args: &[&str]) -> RunSpec {
    let mut spec = RunSpec::new(hostile(target), TargetSource::Builtin(target.into()));
    spec.guest_args = args.iter().map(|s| s.to_string()).collect();
    spec
}

/// Why `session::prepare` refuses `spec` (a panic if it does not).
fn refused(spec: &RunSpec) -> String {
    match session::prepare(spec) {
        Ok(_) => panic!("{} was prepared, not refused", spec.elf.display()),
        Err(e) => format!("{e:#}"),
    }
}

fn run(spec: &RunSpec) -> Finished {
    let prepared = session::prepare(spec).unwrap_or_else(|e| panic!("{e:#}"));
    session::execute(spec, prepared).unwrap_or_else(|e| panic!("{e}"))
}

/// Peaks of a small and a large run: the large one may cost at most
/// `bound_kib` more.
fn assert_grows_less(what: &str, peaks: &[Peak], bound_kib: u64) {
    let (small, large) = (peaks[0], peaks[1]);
    eprintln!("{what}: {small} small, {large} large");
    assert!(
        large.kib <= small.kib + bound_kib,
        "{what}: {small} small, {large} large: more than {} MiB for the larger input",
        bound_kib / MIB
    );
}

/// What `hostile print N` prints, written line by line (the test's own
/// memory must not grow with it either).
fn write_lines(path: &Path, lines: u64) {
    use std::io::Write;
    let line = format!("{}\n", &"0123456789".repeat(10)[..99]);
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for _ in 0..lines {
        out.write_all(line.as_bytes()).unwrap();
    }
    out.flush().unwrap();
}

/// N03: the console is streamed to where it goes and compared with
/// `--expect-output` while the guest writes it; memory does not grow with
/// the output (0.5 MB against 8 MB of it; before, 8 MB cost 22 MB more).
#[test]
fn console_output_is_streamed_and_compared_not_held() {
    let test = "console_output_is_streamed_and_compared_not_held";
    if let Some(peaks) = in_children(test, &[5_000, 80_000], |lines| {
        let dir = scratch("console");
        let expected = dir.join("expected.txt");
        write_lines(&expected, lines);
        let mut s = spec("cortex-m4", &["print", &lines.to_string()]);
        s.expect_output = Some(expected);
        let f = run(&s);
        assert_eq!(f.outcome.stop, Stop::Exit(0));
        assert!(f.verified, "{:?}", f.report.warnings);
        if lines > 5_000 {
            return;
        }
        // a different expectation is found at its line
        let wrong = dir.join("wrong.txt");
        write_lines(&wrong, lines + 1);
        s.expect_output = Some(wrong);
        let f = run(&s);
        assert!(!f.verified);
        let said = f.report.warnings.join("\n");
        assert!(
            said.contains(&format!("first difference on line {}", lines + 1)),
            "{said}"
        );
    }) {
        assert_grows_less("8 MB of console output", &peaks, 4 * MIB);
    }
}

/// N02: `simthread_create` never writes its handle into read-only memory
/// (the vector table, flash, RISC-V XIP flash): a fault, as for an
/// unmapped handle pointer.
#[test]
fn a_thread_handle_is_never_written_into_read_only_memory() {
    for (target, place) in [
        ("cortex-m4", "vector"),
        ("cortex-m4", "flash"),
        ("rv32imac", "flash"),
    ] {
        let f = run(&spec(target, &["handle", place]));
        match &f.outcome.stop {
            Stop::Fault(fault) => assert!(
                fault.kind.contains("is not writable"),
                "{target} {place}: {fault}"
            ),
            other => panic!("{target} {place}: {other:?}, not a fault"),
        }
    }
}

/// N07: the binary data.arp holds at most 255 callback sets (one byte);
/// more are refused before the run, never written as a corrupt file.
#[test]
fn more_callback_sets_than_a_data_arp_holds_are_refused_before_the_run() {
    use arpsim::types::FileFormat;
    use sim_host::host::counters::Measure;
    let dir = scratch("sets");
    let file = dir.join("d.arp");
    let mut s = spec("cortex-m4", &["kernels", "3"]);
    s.engine.arp.file = Some(file.clone());
    s.engine.arp.format = Some(FileFormat::Binary);
    s.engine.arp.measures = vec![Measure::Cycles; 256];
    match session::prepare(&s) {
        Err(e) => assert!(format!("{e:#}").contains("at most 255"), "{e:#}"),
        Ok(prepared) => {
            let f = session::execute(&s, prepared).unwrap();
            let read = arpsim::tools::stats(&file).map(|_| ());
            panic!(
                "256 sets ran: {:?}, exit {}, the file reads back: {read:?}",
                f.outcome.stop,
                f.exit_status()
            );
        }
    }
    assert!(!file.exists());
    // 255 is the most, and reads back
    s.engine.arp.measures = vec![Measure::Cycles; 255];
    let f = run(&s);
    assert_eq!(f.exit_status(), 0, "{:?}", f.outcome.stop);
    let stats = arpsim::tools::stats(&file).unwrap();
    assert_eq!(stats[0].sets.len(), 255);
}

/// N05: an ARP thread costs what it holds, not `max_sid` counters: 200
/// more threads spawned under max_sid 65,535, each entering section
/// 65,535 (before: 1 MiB each).
#[test]
fn an_arp_thread_costs_its_sections_not_max_sid() {
    let test = "an_arp_thread_costs_its_sections_not_max_sid";
    if let Some(peaks) = in_children(test, &[20, 220], |n| {
        let f = run(&spec("cortex-m4", &["spawn", &n.to_string()]));
        assert_eq!(f.outcome.stop, Stop::Exit(0));
    }) {
        assert_grows_less("200 spawned ARP threads", &peaks, 16 * MIB);
    }
}

/// N04: the section table shares path prefixes (a node per path, as the
/// playback index does), and the report lists at most
/// `REPORT_SECTION_ENTRIES` section ids, the costliest traces first:
/// nesting 2,000 deep costs no more than 300 deep did (before: 518 MB),
/// and 100,000 distinct paths stay small.
#[test]
fn deep_nesting_and_many_paths_cost_no_square_of_the_depth() {
    use sim_host::host::arp_host::REPORT_SECTION_ENTRIES;
    let test = "deep_nesting_and_many_paths_cost_no_square_of_the_depth";
    if let Some(peaks) = in_children(&format!("{test}/nest"), &[300, 2_000], |depth| {
        let f = run(&spec("cortex-m4", &["nest", &depth.to_string()]));
        assert_eq!(f.outcome.stop, Stop::Exit(0));
        let listed: usize = f.report.sections.iter().map(|s| s.path.len()).sum();
        assert!(listed <= REPORT_SECTION_ENTRIES, "{listed}");
        // the costliest (outermost) traces are listed, the others counted
        assert_eq!(f.report.sections[0].path, [1]);
        if depth > 1_000 {
            let said = f.report.warnings.join("\n");
            assert!(
                said.contains(&format!("of {} section traces", depth + 1)),
                "{said}"
            );
        }
    }) {
        assert_grows_less("nesting 2,000 deep", &peaks, 24 * MIB);
    }
    if let Some(peaks) = in_children(&format!("{test}/paths"), &[1_000, 100_000], |paths| {
        let f = run(&spec("cortex-m4", &["paths", &paths.to_string()]));
        assert_eq!(f.outcome.stop, Stop::Exit(0));
    }) {
        assert_grows_less("100,000 distinct paths", &peaks, 48 * MIB);
    }
}

/// N11: warnings count their repeats and keep the first few of each kind:
/// 400,000 unexpected playback samples cost no more than 200,000 (both
/// fill the playback report's own list, bounded by
/// `arpsim::playback::REPORT_LIST_BYTES`), 100,000 refused file names no
/// more than 1,000 (before: about 360 bytes a warning).
#[test]
fn repeated_warnings_are_counted_not_kept() {
    let test = "repeated_warnings_are_counted_not_kept";
    if let Some(peaks) = in_children(&format!("{test}/playback"), &[200_000, 400_000], |n| {
        let dir = scratch("warnings");
        // a recording without samples: every kernel played is unexpected
        let empty = dir.join("empty.arp");
        let mut s = spec("cortex-m4", &["kernels", "0"]);
        s.engine.arp.file = Some(empty.clone());
        assert_eq!(run(&s).outcome.stop, Stop::Exit(0));
        let mut s = spec("cortex-m4", &["kernels", &n.to_string()]);
        s.engine.arp.playback = Some(empty);
        let f = run(&s);
        assert_eq!(f.outcome.stop, Stop::Exit(0));
        let said = f.report.warnings.join("\n");
        assert!(f.report.warnings.len() < 40, "{said}");
        assert!(said.contains("no recorded sample"), "{said}");
        assert!(said.contains(&format!("{} more", n - 8)), "{said}");
    }) {
        assert_grows_less("200,000 more unexpected playback samples", &peaks, 8 * MIB);
    }
    if let Some(peaks) = in_children(&format!("{test}/names"), &[1_000, 100_000], |n| {
        let f = run(&spec("cortex-m4", &["names", &n.to_string()]));
        assert_eq!(f.outcome.stop, Stop::Exit(0));
        assert!(f.report.warnings.len() < 40);
    }) {
        assert_grows_less("100,000 refused arp_set_file_name", &peaks, 8 * MIB);
    }
}

/// N12: code rewritten again and again keeps only the prices of the
/// blocks that exist, and Unicorn's translations at most
/// `TRANSLATION_BUFFER` (32 MiB; its default was 1 GiB): 200,000 rewrites
/// cost at most that more than 20,000 (before: 400 bytes a rewrite).
#[test]
fn rewritten_code_frees_its_old_prices() {
    let test = "rewritten_code_frees_its_old_prices";
    if let Some(peaks) = in_children(test, &[20_000, 200_000], |n| {
        let f = run(&spec("cortex-m4", &["smc", &n.to_string()]));
        assert_eq!(f.outcome.stop, Stop::Exit(0));
    }) {
        let buffer = u64::from(sim_host::engine::TRANSLATION_BUFFER) / 1024;
        assert_grows_less("180,000 more code rewrites", &peaks, buffer + 8 * MIB);
    }
}

/// N14: `--trace-events` keeps each section event in a few dozen bytes
/// and streams the JSON: 200,000 events cost no more than 10,000 beyond
/// that (before: 3.7 KB an event, 3.65 GB at the default --trace-limit).
#[test]
fn trace_events_are_streamed() {
    let test = "trace_events_are_streamed";
    if let Some(peaks) = in_children(test, &[5_000, 100_000], |n| {
        let dir = scratch("trace-events");
        let mut s = spec("cortex-m4", &["kernels", &n.to_string()]);
        s.outputs.trace_events = Some(dir.join("t.json"));
        s.outputs.trace_limit = 1_000_000;
        let f = run(&s);
        assert_eq!(f.exit_status(), 0, "{:?}", f.output_errors);
        if n == 5_000 {
            // the file is the same JSON document, every event in it
            let text = std::fs::read_to_string(dir.join("t.json")).unwrap();
            let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
            let events = doc["traceEvents"].as_array().unwrap();
            assert_eq!(events.iter().filter(|e| e["ph"] == "B").count(), 5_000);
            assert_eq!(doc["otherData"]["events"], 10_000);
        }
    }) {
        assert_grows_less("190,000 more trace events", &peaks, 16 * MIB);
    }
}

/// N15: `arp plot` reduces each series to the picture's columns (the
/// least and greatest sample of each), reading the file twice rather than
/// holding it: 400,000 samples cost no more than 10,000, and the SVG stays
/// small (before: every sample a point, 110 bytes each).
#[test]
fn arp_plot_reduces_samples_to_pixels() {
    let test = "arp_plot_reduces_samples_to_pixels";
    if let Some(peaks) = in_children(test, &[10_000, 400_000], |n| {
        let dir = scratch("plot");
        let file = dir.join("d.arp");
        write_samples(&file, n);
        let chart = sim_host::observe::section_plot::chart(&file, 720).unwrap();
        let points: usize = chart.series.iter().map(|s| s.points.len()).sum();
        assert!(points <= 2 * 720 * chart.series.len(), "{points} points");
        // the extremes survive the reduction
        let ys = chart.series[0].points.iter().map(|p| p.1);
        assert_eq!(ys.clone().fold(f64::MAX, f64::min), 0.0);
        assert_eq!(ys.fold(0.0, f64::max), 999.0);
        let svg = plot::svg(&chart, &plot::PlotOptions::new("t")).unwrap();
        assert!(svg.len() < 200_000, "{} bytes", svg.len());
    }) {
        assert_grows_less("390,000 more plotted samples", &peaks, 8 * MIB);
    }
}

/// A record_all file of `n` samples of one kernel, written as it goes.
fn write_samples(path: &Path, n: u64) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(
        out,
        "# Atomium record and playback data - format version 1.1.\n0 1 1 9\n{n}\n"
    )
    .unwrap();
    for i in 0..n {
        let reuse = if i == 0 { 0 } else { 1 };
        let entries = if i == 0 {
            format!(" 1@0 2@{i}")
        } else {
            format!(" 2@{i}")
        };
        writeln!(out, "2 {reuse}{entries}: {};", (i * 7919) % 1000).unwrap();
    }
    out.flush().unwrap();
}

/// N13: calls that never return: the shadow stacks of `--profile` and
/// `--callgrind` keep at most `MAX_SHADOW_DEPTH` frames (the oldest are
/// closed) and find a return in constant time, so 200,000 unreturned
/// calls cost no more memory than 20,000 (time: BENCHMARKS.md, before
/// 68.6 s for 200,000).
#[test]
fn calls_that_never_return_keep_the_shadow_stacks_bounded() {
    let test = "calls_that_never_return_keep_the_shadow_stacks_bounded";
    if let Some(peaks) = in_children(test, &[20_000, 200_000], |n| {
        let dir = scratch("calls");
        let mut s = spec("cortex-m4", &["calls", &n.to_string()]);
        s.outputs.profile = Some(dir.join("p.sir"));
        s.outputs.callgrind = Some(dir.join("c.out"));
        let f = run(&s);
        assert_eq!(f.exit_status(), 0, "{:?}", f.output_errors);
        let profile = std::fs::read_to_string(dir.join("p.sir")).unwrap();
        assert!(profile.contains("name=\"main\""), "a profile of main");
    }) {
        assert_grows_less("180,000 more unreturned calls", &peaks, 8 * MIB);
    }
}

/// N24: creating and joining threads one after another: memory follows
/// the live threads, not every thread made (the scheduler, the saved
/// register contexts, callgrind's per-thread state and the report's
/// per-core thread lists). Before, about 0.2 KB per thread made, 0.4 KB
/// more with `--profile --callgrind`: 90,000 more threads cost ~55 MB.
#[test]
fn thread_churn_costs_the_live_threads_not_every_thread_made() {
    let test = "thread_churn_costs_the_live_threads_not_every_thread_made";
    if let Some(peaks) = in_children(test, &[10_000, 100_000], |n| {
        let dir = scratch("churn");
        let mut s = spec("cortex-m4", &["threads", &n.to_string()]);
        s.outputs.profile = Some(dir.join("p.sir"));
        s.outputs.callgrind = Some(dir.join("c.out"));
        s.outputs.report_json = Some(dir.join("r.json"));
        let f = run(&s);
        assert_eq!(f.exit_status(), 0, "{:?}", f.output_errors);
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
        assert_eq!(report["threads_created"], n);
        let core = &report["cores"][0];
        assert_eq!(core["threads_run"], n + 1, "main and every worker");
        assert_eq!(core["threads"].as_array().unwrap().len(), 64);
    }) {
        assert_grows_less("90,000 more threads made and joined", &peaks, 4 * MIB);
    }
}

/// N20: no output may be one of the run's inputs, compared by device and
/// inode: `run f.elf -o f.elf` once replaced the ELF with data.arp, and
/// `--expect-output exp.txt --report-json exp.txt` the expected output.
#[test]
fn an_output_that_is_one_of_the_inputs_is_refused_before_the_run() {
    let dir = scratch("output-input");
    let elf = dir.join("f.elf");
    std::fs::copy(hostile("cortex-m4"), &elf).unwrap();
    let before = std::fs::read(&elf).unwrap();
    let mut s = RunSpec::new(elf.clone(), TargetSource::Builtin("cortex-m4".into()));
    s.engine.arp.file = Some(elf.clone());
    let e = refused(&s);
    assert!(e.contains("-o") && e.contains("the input ELF"), "{e}");
    // a hard link to the expected output, as the report
    let expected = dir.join("exp.txt");
    std::fs::write(&expected, "hello\n").unwrap();
    let linked = dir.join("report.json");
    std::fs::hard_link(&expected, &linked).unwrap();
    let mut s = RunSpec::new(elf.clone(), TargetSource::Builtin("cortex-m4".into()));
    s.expect_output = Some(expected.clone());
    s.outputs.report_json = Some(linked);
    let e = refused(&s);
    assert!(
        e.contains("--report-json") && e.contains("--expect-output"),
        "{e}"
    );
    assert_eq!(std::fs::read(&elf).unwrap(), before);
    assert_eq!(std::fs::read_to_string(&expected).unwrap(), "hello\n");
}

/// N21: `--playback seq.arp -o other.arp` verified the playback, then
/// exited 121 saying "the guest never called arpsim_start". A playback
/// run writes no data.arp: `-o` is refused before the run, saying why.
#[test]
fn output_file_with_playback_is_refused_with_the_reason() {
    let dir = scratch("playback-o");
    let seq = dir.join("seq.arp");
    std::fs::write(&seq, "").unwrap();
    let mut s = spec("cortex-m4", &[]);
    s.engine.arp.playback = Some(seq);
    s.engine.arp.file = Some(dir.join("other.arp"));
    let e = refused(&s);
    assert!(
        e.contains("a playback run writes no data.arp") && !e.contains("arpsim_start"),
        "{e}"
    );
    assert!(!dir.join("other.arp").exists());
}

/// N18: inputs read whole have a size cap checked while reading: an
/// endless device (a private /dev/zero made in the scratch folder) given
/// as the target file, a SIR or a suite manifest's expected output stops
/// at its cap with a located error instead of filling memory.
#[test]
#[cfg_attr(
    not(has_mknod),
    ignore = "needs mknod of a device node (CAP_MKNOD: run as root)"
)]
fn an_endless_input_stops_at_its_size_cap() {
    let dir = scratch("endless");
    let zero = dir.join("zero");
    let made = std::process::Command::new("mknod")
        .arg(&zero)
        .args(["c", "1", "5"])
        .status();
    assert!(
        made.is_ok_and(|s| s.success()),
        "{}",
        e2e_tests::probe::Probe::DeviceNodes.missing_message()
    );
    let s = RunSpec::new(hostile("cortex-m4"), TargetSource::File(zero.clone()));
    let e = refused(&s);
    assert!(e.contains("larger than 1 MiB"), "{e}");
    // a SIR document: 256 MiB at most, refused long before by the parser
    // or at the cap; never an allocation failure
    let out = std::process::Command::new(e2e_tests::sim_host_bin())
        .args(["sir", "validate"])
        .arg(&zero)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("error"), "{said}");
    assert!(!said.contains("memory allocation"), "{said}");
}

/// N09: a stop signal that came during the set-up, or within the last
/// 2^20 cycles of a run (the block hook polls every 2^20), was never seen:
/// the run exited 0. It is looked at before every slice and when the
/// guest exits.
#[test]
fn a_stop_signal_before_the_first_poll_stops_the_run() {
    use std::sync::atomic::AtomicI32;
    use std::sync::Arc;
    let mut s = spec("cortex-m4", &["print", "1"]);
    let f = run(&s);
    assert_eq!(f.outcome.stop, Stop::Exit(0));
    assert!(f.outcome.cycles < 1 << 20, "{} cycles", f.outcome.cycles);
    // SIGTERM (15) already received when the run starts
    s.engine.interrupt = Some(Arc::new(AtomicI32::new(15)));
    let f = run(&s);
    assert_eq!(f.outcome.stop, Stop::Interrupted(15));
}

/// N20, the `arp` commands: `arp convert a.arp a.arp` and an
/// `export-extrap` whose output is one of its runs are refused, the input
/// kept.
#[test]
fn arp_commands_refuse_an_output_that_is_their_input() {
    let dir = scratch("arp-output-input");
    let arp = dir.join("a.arp");
    // a valid record_average file: before, both commands replaced it
    let kept =
        "# Atomium record and playback data - format version 1.1.\n0 0 1 11\n1\n1 0 1: 4 5;\n";
    std::fs::write(&arp, kept).unwrap();
    let runs = format!("n=1:{}", arp.display());
    for args in [
        vec![
            "arp",
            "convert",
            arp.to_str().unwrap(),
            arp.to_str().unwrap(),
        ],
        vec![
            "arp",
            "export-extrap",
            &runs,
            "--output",
            arp.to_str().unwrap(),
        ],
    ] {
        let out = std::process::Command::new(e2e_tests::sim_host_bin())
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}: {err}");
        assert!(err.contains("the same file"), "{args:?}: {err}");
        assert_eq!(std::fs::read_to_string(&arp).unwrap(), kept);
    }
}

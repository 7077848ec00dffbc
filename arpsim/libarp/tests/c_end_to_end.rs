//! End to end: compile the manual's image filter (sections 1-2) with the
//! host's gcc against `atomium_rp.h` and the built libarp, run it in every
//! mode and check the `data.arp` it writes with the Rust query API.

use arpsim::query::{Dataset, TraceValue};
use arpsim::types::{DataType, FileFormat, Mode, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const HEIGHT: usize = 4;
const WIDTH: i64 = 8;
const IMAGES: usize = 3;

/// The directory holding libarp.so / libarp.a: the test binary lives in
/// `<target>/<profile>/deps/`.
/// `cargo test` builds the cdylib and staticlib only into `deps/` and does
/// not copy them up to target/<profile>; build the library target through
/// cargo once per test process, so a stale library is never linked (cargo
/// does not hold its lock while tests run).
fn lib_dir() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().unwrap();
            let dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
            let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
            cargo.args(["build", "-q", "-p", "libarp", "--lib", "--target-dir"]);
            cargo.arg(dir.parent().unwrap());
            if dir.file_name().is_some_and(|n| n == "release") {
                cargo.arg("--release");
            }
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
            let status = cargo.current_dir(manifest).status().expect("cargo runs");
            assert!(status.success(), "building libarp failed");
            assert!(
                dir.join("libarp.so").exists(),
                "no libarp.so in {}",
                dir.display()
            );
            dir
        })
        .clone()
}

fn compile(dir: &Path, static_link: bool) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let include = manifest.join("../../guest-shim/include");
    let src = manifest.join("tests/c/image_filter.c");
    let exe = dir.join(if static_link {
        "image_filter_static"
    } else {
        "image_filter"
    });
    let lib = lib_dir();
    let mut cmd = Command::new("gcc");
    cmd.args([
        "-std=c99",
        "-D_POSIX_C_SOURCE=200809L",
        "-O1",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-Wno-unused-label",
        "-Wno-ignored-qualifiers",
    ])
    .arg("-I")
    .arg(&include)
    .arg(&src)
    .arg("-o")
    .arg(&exe);
    if static_link {
        cmd.arg(lib.join("libarp.a"))
            .args(["-lpthread", "-ldl", "-lm"]);
    } else {
        cmd.arg("-L")
            .arg(&lib)
            .arg("-larp")
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-lpthread");
    }
    let out = cmd.output().expect("gcc runs");
    assert!(
        out.status.success(),
        "gcc failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

fn run(exe: &Path, mode: &str, file: &Path) -> Output {
    let out = Command::new(exe).arg(mode).arg(file).output().unwrap();
    out
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn kernel_traces(d: &Dataset) -> Vec<String> {
    let mut v: Vec<String> = d
        .traces()
        .filter(|t| matches!(t.stack().last().map(|e| e.sid), Some(1 | 4)))
        .map(|t| arpsim::types::format_path(t.stack()))
        .collect();
    v.sort();
    v
}

#[test]
fn image_filter_records_plays_back_and_queries() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), false);

    // record_all: one record per kernel line and per profiled pass.
    let all = dir.path().join("data.arp");
    let o = run(&exe, "all", &all);
    assert!(o.status.success(), "{o:?}");
    assert!(
        stdout(&o).contains("locks 0 spawns 0 joins 0"),
        "single-threaded use takes no locks: {}",
        stdout(&o)
    );
    let d = Dataset::load(&all).unwrap();
    assert_eq!(d.mode(), Mode::RecordAll);
    assert_eq!(d.data_mult(), 2);
    assert_eq!(d.data_type(0), Some(DataType::Long));
    assert_eq!(d.data_type(1), Some(DataType::Double));
    assert_eq!(d.n_traces(), IMAGES * (2 * HEIGHT + 2));
    assert!(!d.header().partial);
    // The first record: kernel 1, line 0 of image 0 (decision 6: the
    // kernel is the last stack entry).
    let t = d.trace(0).unwrap();
    let path: Vec<(u16, i32)> = (0..t.stack_length())
        .map(|i| (t.stack_pos(i).unwrap(), t.stack_index(i).unwrap()))
        .collect();
    assert_eq!(path, [(8, 0), (7, 0), (3, 0), (2, 0), (1, 0)]);
    assert_eq!(t.value(0), Some(TraceValue::Sample(Value::Long(WIDTH))));
    // Line 3 of image 2 of the vertical filter.
    let wanted = "8@0 7@2 6@0 5@0 4@3";
    let t = d
        .traces()
        .find(|t| arpsim::types::format_path(t.stack()) == wanted)
        .expect(wanted);
    assert_eq!(t.value(0), Some(TraceValue::Sample(Value::Long(WIDTH))));
    let t = d
        .traces()
        .find(|t| arpsim::types::format_path(t.stack()) == "8@0 7@1 3@0 2@0")
        .unwrap();
    assert_eq!(
        t.value(0),
        Some(TraceValue::Sample(Value::Long(WIDTH * HEIGHT as i64)))
    );

    // Playback of that file checks every recorded value in the callback.
    let o = run(&exe, "playback", &all);
    assert!(o.status.success(), "{o:?}");
    let s = stdout(&o);
    assert!(
        s.contains(&format!(
            "played {} mismatches 0",
            IMAGES * (2 * HEIGHT + 2)
        )),
        "{s}"
    );
    assert!(
        o.stderr.is_empty(),
        "exact playback warns nothing: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        Dataset::load(&all).unwrap(),
        d,
        "playback leaves the file alone"
    );

    // The query API from C.
    let o = run(&exe, "query", &all);
    let s = stdout(&o);
    assert!(s.contains("mode 1 mult 2 type0 6 traces 30\n"), "{s}");
    assert!(
        s.contains("trace 0 count 1: 8@0 7@0 3@0 2@0 1@0 = 8\n"),
        "{s}"
    );
    assert!(
        s.contains("average traces 4 first count 12 mean 8\n"),
        "{s}"
    );
    assert!(
        s.contains("ERROR 2 cannot switch from record_average to record_all"),
        "{s}"
    );

    // Average and histogram modes.
    let avg = dir.path().join("avg.arp");
    assert!(run(&exe, "average", &avg).status.success());
    let a = Dataset::load(&avg).unwrap();
    assert_eq!(a.mode(), Mode::RecordAverage);
    assert_eq!(a.n_traces(), 4);
    for t in a.traces() {
        let kernel = matches!(t.stack().last().unwrap().sid, 1 | 4);
        assert_eq!(
            t.count(),
            if kernel {
                (IMAGES * HEIGHT) as u64
            } else {
                IMAGES as u64
            }
        );
        let expect = if kernel { WIDTH } else { WIDTH * HEIGHT as i64 } as f64;
        assert_eq!(t.value(0), Some(TraceValue::Mean(expect)));
    }
    let mut switched = d.clone();
    switched.switch_mode(Mode::RecordAverage).unwrap();
    assert_eq!(switched.n_traces(), 4);
    let hist = dir.path().join("hist.arp");
    assert!(run(&exe, "histogram", &hist).status.success());
    let h = Dataset::load(&hist).unwrap();
    assert_eq!(h.mode(), Mode::RecordHistogram);
    match h.trace(0).unwrap().value(0) {
        Some(TraceValue::Histogram(hg)) => assert_eq!(hg.bins, vec![(4, (IMAGES * HEIGHT) as u64)]),
        v => panic!("{v:?}"),
    }

    // Binary format.
    let bin = dir.path().join("data.bin");
    assert!(run(&exe, "binary", &bin).status.success());
    let b = Dataset::load(&bin).unwrap();
    assert_eq!(b.header().format, FileFormat::Binary);
    assert_eq!(kernel_traces(&b), kernel_traces(&d));
}

#[test]
fn pthreads_with_start_indices_give_the_sequential_tuples() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), false);
    let seq = dir.path().join("seq.arp");
    assert!(run(&exe, "all", &seq).status.success());
    let par = dir.path().join("par.arp");
    let o = run(&exe, "threads", &par);
    assert!(o.status.success(), "{o:?}");
    let s = stdout(&o);
    // Two threads per image: locks around each spawn and join (manual 3.1).
    assert!(
        s.contains(&format!(
            "locks {} spawns {} joins {}",
            4 * IMAGES,
            2 * IMAGES,
            2 * IMAGES
        )),
        "{s}"
    );
    let a = kernel_traces(&Dataset::load(&seq).unwrap());
    let b = kernel_traces(&Dataset::load(&par).unwrap());
    assert_eq!(a, b);
    // Playing the sequential recording with the threaded program: every
    // sample exactly once, so no warning at arp_finish.
    let o = run(&exe, "playback", &seq);
    assert!(o.status.success() && o.stderr.is_empty(), "{o:?}");
}

#[test]
fn rule_violations_reach_the_error_callback_or_exit() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), false);
    let file = dir.path().join("err.arp");
    let o = run(&exe, "errors", &file);
    assert!(o.status.success(), "{o:?}");
    let s = stdout(&o);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(
        lines[0],
        "ERROR 1 thread 1: leave of section 7 without a matching enter"
    );
    assert!(
        lines[1].starts_with("ERROR 1 thread 1: kernel section 4 entered inside kernel section 1"),
        "{s}"
    );
    assert_eq!(
        lines[2],
        "ERROR 1 thread id 2 is above the maximum thread id 1 given to arp_start"
    );
    assert_eq!(
        lines[3],
        "ERROR 1 section id 9 is above the maximum section id 8 given to arp_start"
    );
    assert_eq!(
        lines[4],
        "ERROR 1 thread 1: leave of section 8 does not match the innermost entered section 1"
    );
    assert_eq!(lines[5], "ERROR 1 arp_start was already called");
    assert_eq!(
        lines[6],
        "ERROR 2 arp_finish with sections still open: thread 1: plain 8"
    );
    assert_eq!(lines[7], "done");
    let d = Dataset::load(&file).unwrap();
    assert!(d.header().partial);
    assert_eq!(d.n_traces(), 1);

    let o = run(&exe, "fatal", &file);
    assert_eq!(o.status.code(), Some(1));
    assert!(!stdout(&o).contains("done"));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "arp: fatal error: thread 1: leave of section 7 without a matching enter\n"
    );
}

#[test]
fn static_library_links_too() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), true);
    let file = dir.path().join("s.arp");
    let o = run(&exe, "all", &file);
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        Dataset::load(&file).unwrap().n_traces(),
        IMAGES * (2 * HEIGHT + 2)
    );
}

/// Without an error callback, errors go to stderr. A write there that
/// fails (a full device) must not panic across the C boundary, which
/// aborts the program (status 134): a fatal error still exits with
/// status 1, non-fatal ones let the program go on.
#[test]
fn errors_without_a_callback_survive_a_full_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), false);
    let full_stderr = |mode: &str, file: &Path| {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        Command::new(&exe)
            .arg(mode)
            .arg(file)
            .stderr(full)
            .output()
            .unwrap()
    };
    let o = full_stderr("fatal", &dir.path().join("fatal.arp"));
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(!stdout(&o).contains("done"), "{o:?}");

    // Playing back a recording without its last sample: one "no recorded
    // sample" error and a warning at arp_finish, both non-fatal.
    let rec = dir.path().join("rec.arp");
    assert!(run(&exe, "all", &rec).status.success());
    let d = Dataset::load(&rec).unwrap();
    let kept = &d.records()[..d.records().len() - 1];
    let spec = arpsim::codec::OutputSpec {
        path: rec.clone(),
        ..Default::default()
    };
    arpsim::codec::write_records(&spec, d.header(), kept).unwrap();
    let o = full_stderr("playback", &rec);
    assert!(o.status.success(), "{o:?}");
    assert!(stdout(&o).contains("ticks "), "{o:?}");
    // The same run with a working stderr shows what went to it.
    let o = run(&exe, "playback", &rec);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{o:?}");
    assert!(
        err.contains("arp: error: playback: thread 1: no recorded sample")
            && err.contains("arp: warning: playback: "),
        "{err}"
    );
}

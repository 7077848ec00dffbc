//! Calibration end to end: hand-written data.arp files (ASCII format 1.1)
//! → calibrated hardware file → the evaluator uses it. Also the error
//! paths and the `calibrate` command line.

use chips_eval::calibrate::{
    self, CalibError, Calibration, CalibrationInput, CalibrationOptions, InpcomRequest,
};
use chips_eval::measure::{RunSpec, SectionNames};
use chips_eval::{HardwareModel, LoadOptions, Program};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/calibrate")
        .join(name)
}

const HEADER: &str = "# Atomium record and playback data - format version 1.1.\n";

/// A record_average file: (stack of section ids, executions, mean).
fn average_file(dir: &Path, name: &str, records: &[(&[u16], u64, f64)]) -> PathBuf {
    let mut s = format!("{HEADER}0 0 1 11\n{}\n", records.len());
    for (stack, n, mean) in records {
        let ids: Vec<String> = stack.iter().map(|s| s.to_string()).collect();
        s.push_str(&format!(
            "{} 0 {}: {n} {mean};\n",
            stack.len(),
            ids.join(" ")
        ));
    }
    let p = dir.join(name);
    std::fs::write(&p, s).unwrap();
    p
}

/// A record_all file of one kernel `sid` under section 100, samples given.
fn all_file(dir: &Path, name: &str, sid: u16, samples: &[u64]) -> PathBuf {
    let mut s = format!("{HEADER}0 1 1 7\n{}\n", samples.len());
    for (i, v) in samples.iter().enumerate() {
        // Prefix reuse: the enclosing 100@0 is shared after the first.
        if i == 0 {
            s.push_str(&format!("2 0 100@0 {sid}@0: {v};\n"));
        } else {
            s.push_str(&format!("2 1 {sid}@{i}: {v};\n"));
        }
    }
    let p = dir.join(name);
    std::fs::write(&p, s).unwrap();
    p
}

fn names() -> SectionNames {
    let mut n = SectionNames::default();
    for (name, sid) in [
        ("ato_kernel_merge", 1),
        ("ato_kernel_scan", 2),
        ("ato_kernel_copy", 3),
        ("ato_kernel_mix", 4),
        ("ato_kernel_fill", 5),
        ("ato_kernel_sort", 6),
        ("ato_kernel_send", 7),
    ] {
        n.add(sid, name, "test").unwrap();
    }
    n
}

struct Setup {
    program: Program,
    base: HardwareModel,
    base_text: String,
}

fn setup() -> Setup {
    let base_text = std::fs::read_to_string(fixture("base.toml")).unwrap();
    let base = HardwareModel::from_toml("base.toml", &base_text).unwrap();
    let program = Program::load(&fixture("app.la"), &LoadOptions::default(), Some(&base)).unwrap();
    Setup {
        program,
        base,
        base_text,
    }
}

fn calibrate_with(
    s: &Setup,
    runs: &[RunSpec],
    names: &SectionNames,
    options: &CalibrationOptions,
) -> Result<Calibration, CalibError> {
    let input = CalibrationInput {
        runs,
        names,
        program: &s.program,
        base: &s.base,
        base_text: &s.base_text,
        base_path: "base.toml",
    };
    calibrate::calibrate(&input, options)
}

/// True hllc prices in cycles: IASG 2, ICMP 3, IADD 1, FOR 4 (app.la).
fn kernel_runs(dir: &Path) -> PathBuf {
    average_file(
        dir,
        "kernels.arp",
        &[
            (&[10, 1], 100, 12.0),  // merge: 3*2 + 2*3
            (&[10, 2], 50, 6.0),    // scan: 2 + 4*1
            (&[11, 3], 20, 80.0),   // copy: 10*(4 + 2*2)
            (&[10, 4], 7, 13.0),    // mix: 2*3 + 3*1 + 4
            (&[10, 5], 9, 14.0),    // fill: 5*2 + 4
            (&[11, 1], 100, 12.0),  // merge under another call path
            (&[10, 99], 1, 1000.0), // a section the model does not name
        ],
    )
}

fn nlogn(n: f64) -> f64 {
    200.0 + 3.0 * n * n.log2()
}

fn sort_runs(dir: &Path) -> Vec<RunSpec> {
    let noise = [0.006, -0.004, 0.008, -0.007, 0.003, -0.005, 0.002];
    (4..=10)
        .zip(noise)
        .map(|(k, e)| {
            let n = (1u64 << k) as f64;
            let mean = nlogn(n) * (1.0 + e);
            // Three samples around the mean.
            let v = [mean - 2.0, mean, mean + 2.0].map(|v| v.round() as u64);
            let p = all_file(dir, &format!("sort-{k}.arp"), 6, &v);
            RunSpec::parse(&format!("n={n}:{}", p.display())).unwrap()
        })
        .collect()
}

fn send_runs(dir: &Path) -> Vec<RunSpec> {
    [0.0, 256.0, 1024.0, 4096.0, 16384.0]
        .iter()
        .map(|size| {
            let p = average_file(
                dir,
                &format!("send-{size}.arp"),
                &[(&[12, 7], 4, 500.0 + 0.25 * size)],
            );
            RunSpec::parse(&format!("size={size}:{}", p.display())).unwrap()
        })
        .collect()
}

#[test]
fn full_calibration_recovers_prices_laws_and_network() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup();
    let mut runs = vec![RunSpec::new(kernel_runs(dir.path()))];
    runs.extend(sort_runs(dir.path()));
    runs.extend(send_runs(dir.path()));
    let options = CalibrationOptions {
        fit_tables: vec!["hllc".into()],
        laws: [("ato_kernel_sort".to_string(), "n".to_string())].into(),
        inpcom: Some(InpcomRequest {
            kernel: "ato_kernel_send".into(),
            parameter: "size".into(),
            device: None,
            hops: 1.0,
        }),
        recorded_clock: Some(1.0e6),
        ..Default::default()
    };
    let c = calibrate_with(&s, &runs, &names(), &options).unwrap();
    let hw = HardwareModel::from_toml("out.toml", &c.toml).unwrap();

    // Kernel binding: merge measured 12 cycles on both call paths.
    assert_eq!(
        hw.kernels["ato_kernel_merge"],
        chips_eval::hardware::KernelCost::Cycles(12.0)
    );
    // The hand-written kernel of the base file is kept.
    assert_eq!(
        hw.kernels["ato_kernel_old"],
        chips_eval::hardware::KernelCost::Cycles(5.0)
    );
    // hllc prices recovered exactly (exact data), in cycles; CALL, never
    // measured, kept and converted from seconds.
    let t = &hw.costs["hllc"];
    assert_eq!(t.unit, chips_eval::hardware::CostUnit::Cycles);
    for (e, want) in [
        ("IASG", 2.0),
        ("ICMP", 3.0),
        ("IADD", 1.0),
        ("FOR", 4.0),
        ("CALL", 5.0),
    ] {
        assert!((t.elements[e] - want).abs() < 1e-6, "{e}: {:?}", t.elements);
    }
    // Sort: an n log n law close to the truth.
    let chips_eval::hardware::KernelCost::Law { parameter, law, .. } =
        &hw.kernels["ato_kernel_sort"]
    else {
        panic!("{:?}", hw.kernels["ato_kernel_sort"]);
    };
    assert_eq!(parameter, "n");
    assert_eq!(law.terms.len(), 1);
    assert_eq!(
        (law.terms[0].exponent, law.terms[0].log_exponent),
        (1.0, 1.0)
    );
    assert!((law.eval(2048.0) / nlogn(2048.0) - 1.0).abs() < 0.02);
    // Network: 500 cycles = startup + per_hop (100 us kept) at 1 MHz;
    // 0.25 cycles per byte = 4 MB/s.
    let net = match &hw.device("net").unwrap().kind {
        chips_eval::hardware::DeviceKind::Inpcom(n) => n.clone(),
        k => panic!("{k:?}"),
    };
    assert!((net.startup_s - 400e-6).abs() < 1e-12, "{}", net.startup_s);
    assert!((net.per_hop_s - 100e-6).abs() < 1e-15);
    assert!((net.bandwidth_bytes_per_s - 4.0e6).abs() < 1e-3);

    // Provenance for every calibrated number.
    let doc: toml::Table = toml::from_str(&c.toml).unwrap();
    let prov = doc["provenance"].as_table().unwrap();
    for key in [
        "kernels.ato_kernel_merge",
        "kernels.ato_kernel_sort",
        "costs.hllc.elements.IASG",
        "costs.hllc.elements.FOR",
        "costs.hllc",
        "costs.hllc.elements.CALL",
        "devices.net",
    ] {
        assert!(prov.contains_key(key), "no provenance for {key}: {prov:?}");
    }
    let merge = prov["kernels.ato_kernel_merge"].as_table().unwrap();
    assert!(merge["files"].as_str().unwrap().contains("kernels.arp"));
    assert_eq!(merge["executions"].as_integer(), Some(200));
    assert!(prov["kernels.ato_kernel_sort"]["fit"]
        .as_str()
        .unwrap()
        .contains("nlogn"));
    // The base file's comments survive.
    assert!(c.toml.contains("# measured by hand"), "{}", c.toml);
    // The unnamed section 99 is reported, not silently dropped.
    assert!(
        c.warnings.iter().any(|w| w.contains("section 99")),
        "{:?}",
        c.warnings
    );
    // The report holds residuals, R² and the cross-validation.
    assert!(c.report.contains("R²"), "{}", c.report);
    assert!(c.report.contains("leave-one-out"), "{}", c.report);

    // The evaluator prices the model with it: T = merge + sort(n).
    let prog = Program::load(&fixture("app.la"), &LoadOptions::default(), Some(&hw)).unwrap();
    let res = chips_eval::run(
        &prog,
        &hw,
        &[chips_eval::Setting::parse("n=512").unwrap()],
        chips_eval::RunOptions::default(),
    )
    .unwrap();
    let t = res.points[0].time.unwrap();
    let want = (12.0 + nlogn(512.0)) / 1.0e6;
    assert!((t / want - 1.0).abs() < 0.02, "{t} vs {want}");
}

#[test]
fn recording_the_model_does_not_name_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup();
    let p = average_file(dir.path(), "x.arp", &[(&[10, 42], 3, 10.0)]);
    let e = calibrate_with(
        &s,
        &[RunSpec::new(p)],
        &SectionNames::default(),
        &CalibrationOptions::default(),
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("none of its sections"), "{msg}");
    assert!(msg.contains("ato_kernel_merge"), "{msg}");
    assert!(msg.contains("--section"), "{msg}");
}

#[test]
fn sections_by_id_without_names() {
    // A model naming kernels by section id.
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("byid.la");
    std::fs::write(
        &model,
        "application byid {\noption { debug = 0 }\nproc cflow T { compute <is arp, \"8\">; }\nproc exec init { return T(); }\n}\n",
    )
    .unwrap();
    let mut s = setup();
    s.program = Program::load(&model, &LoadOptions::default(), Some(&s.base)).unwrap();
    let p = average_file(dir.path(), "x.arp", &[(&[1, 8], 4, 0.0)]);
    let c = calibrate_with(
        &s,
        &[RunSpec::new(p)],
        &SectionNames::default(),
        &CalibrationOptions::default(),
    )
    .unwrap();
    let hw = HardwareModel::from_toml("out", &c.toml).unwrap();
    assert_eq!(
        hw.kernels["8"],
        chips_eval::hardware::KernelCost::Cycles(0.0)
    );
    // A zero cost is bound but not silently.
    assert!(
        c.warnings.iter().any(|w| w.contains("0 cycles")),
        "{:?}",
        c.warnings
    );
}

#[test]
fn singular_and_under_determined_table_fits_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup();
    let fit = CalibrationOptions {
        fit_tables: vec!["hllc".into()],
        ..Default::default()
    };
    // merge alone: 1 equation, 2 unknowns (IASG, ICMP).
    let p = average_file(dir.path(), "one.arp", &[(&[10, 1], 5, 12.0)]);
    let e = calibrate_with(&s, &[RunSpec::new(p)], &names(), &fit).unwrap_err();
    assert!(e.to_string().contains("under-determined"), "{e}");
    // copy (10 FOR + 20 IASG) and fill (FOR + 5 IASG) separate IASG and
    // FOR; with merge (3 IASG + 2 ICMP) ICMP too. But copy twice at
    // different n gives the same usage: merge + copy + copy(n=2) has 3
    // rows for 3 unknowns with two identical usage rows: singular.
    let a = average_file(
        dir.path(),
        "a.arp",
        &[(&[10, 1], 5, 12.0), (&[10, 3], 5, 80.0)],
    );
    let b = average_file(dir.path(), "b.arp", &[(&[10, 3], 5, 80.0)]);
    let runs = [
        RunSpec::new(a),
        RunSpec::parse(&format!("n=2:{}", b.display())).unwrap(),
    ];
    let e = calibrate_with(&s, &runs, &names(), &fit).unwrap_err();
    assert!(e.to_string().contains("singular"), "{e}");
}

#[test]
fn few_measurements_and_clamped_prices_warn() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup();
    // merge, scan, mix, fill, copy: 5 rows for 4 unknowns (< 2x).
    let c = calibrate_with(
        &s,
        &[RunSpec::new(kernel_runs(dir.path()))],
        &names(),
        &CalibrationOptions {
            fit_tables: vec!["hllc".into()],
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        c.warnings.iter().any(|w| w.contains("reliable fit needs")),
        "{:?}",
        c.warnings
    );
    // fill (5 IASG + FOR) = 10.5 and copy (20 IASG + 10 FOR) = 40 solve
    // to IASG 65/30, FOR -1/3: FOR is clamped to 0 and IASG refitted
    // alone, (5*10.5 + 20*40) / (25 + 400).
    let p = average_file(
        dir.path(),
        "clamp.arp",
        &[(&[10, 5], 3, 10.5), (&[10, 3], 3, 40.0)],
    );
    let c = calibrate_with(
        &s,
        &[RunSpec::new(p)],
        &names(),
        &CalibrationOptions {
            fit_tables: vec!["hllc".into()],
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        c.warnings
            .iter()
            .any(|w| w.contains("`FOR` was clamped to 0")),
        "{:?}",
        c.warnings
    );
    let hw = HardwareModel::from_toml("out", &c.toml).unwrap();
    assert!((hw.costs["hllc"].elements["IASG"] - 852.5 / 425.0).abs() < 1e-9);
    assert_eq!(hw.costs["hllc"].elements["FOR"], 0.0);
}

#[test]
fn mismatched_clock_and_bad_laws_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup();
    let runs = [RunSpec::new(kernel_runs(dir.path()))];
    let e = calibrate_with(
        &s,
        &runs,
        &names(),
        &CalibrationOptions {
            recorded_clock: Some(25.0e6),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(matches!(e, CalibError::ClockMismatch { .. }), "{e}");
    let run = RunSpec::parse(&format!("clock=2e6:{}", runs[0].path.display())).unwrap();
    let e = calibrate_with(&s, &[run], &names(), &CalibrationOptions::default()).unwrap_err();
    assert!(e.to_string().contains("recorded at 2000000 Hz"), "{e}");
    // A law of a parameter the runs do not give.
    let mut runs = sort_runs(dir.path());
    runs.push(RunSpec::new(kernel_runs(dir.path())));
    let e = calibrate_with(
        &s,
        &runs[..3],
        &names(),
        &CalibrationOptions {
            laws: [("ato_kernel_sort".to_string(), "m".to_string())].into(),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("give no value of `m`"), "{e}");
    // Two runs: too few points for a law.
    let e = calibrate_with(
        &s,
        &runs[..2],
        &names(),
        &CalibrationOptions {
            laws: [("ato_kernel_sort".to_string(), "n".to_string())].into(),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("3 or more distinct"), "{e}");
}

#[test]
fn section_names_from_a_sir() {
    let dir = tempfile::tempdir().unwrap();
    let sir = dir.path().join("prog.sir");
    std::fs::write(
        &sir,
        r#"<?xml version="1.0"?>
<sir language="c" xmlns:m="urn:arpsim:measure" xmlns:arp="urn:arpsim:arp">
  <unit id="u_main" type="function" name="main" m:sid="100">
    <codeRegion id="s1_main_0" type="userRegion" arp:sid="1" arp:kind="kernel" arp:name="main:12"/>
    <codeRegion id="ato_kernel_merge" type="userRegion" arp:sid="1" arp:kind="kernel" arp:name="ato_kernel_merge"/>
    <codeRegion id="s7_main_2" type="userRegion" arp:sid="7" arp:kind="plain"/>
  </unit>
</sir>
"#,
    )
    .unwrap();
    let mut n = SectionNames::default();
    chips_eval::measure::add_sir_names(&mut n, &sir).unwrap();
    assert_eq!(n.name(1), "ato_kernel_merge");
    assert_eq!(n.name(100), "main");
    assert_eq!(n.name(7), "s7_main_2");
    assert_eq!(n.name(2), "2");
}

#[test]
fn calibrate_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let k = kernel_runs(dir.path());
    let sort = sort_runs(dir.path());
    let out = dir.path().join("cal.toml");
    let mut args: Vec<String> = vec![
        "calibrate".into(),
        "--arp".into(),
        k.display().to_string(),
        "--model".into(),
        fixture("app.la").display().to_string(),
        "--hardware".into(),
        fixture("base.toml").display().to_string(),
        "-o".into(),
        out.display().to_string(),
        "--fit".into(),
        "hllc".into(),
        "--law".into(),
        "ato_kernel_sort=n".into(),
    ];
    for r in &sort {
        args.push("--arp".into());
        args.push(format!("n={}:{}", r.params["n"], r.path.display()));
    }
    for (name, sid) in [
        ("ato_kernel_merge", 1),
        ("ato_kernel_scan", 2),
        ("ato_kernel_copy", 3),
        ("ato_kernel_mix", 4),
        ("ato_kernel_fill", 5),
        ("ato_kernel_sort", 6),
    ] {
        args.push("--section".into());
        args.push(format!("{name}={sid}"));
    }
    let o = Command::new(env!("CARGO_BIN_EXE_chips-eval"))
        .args(&args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("cost table hllc"), "{stdout}");
    assert!(stderr.contains("warning:"), "{stderr}");
    let hw = HardwareModel::load(&out).unwrap();
    assert!(hw.kernels.contains_key("ato_kernel_sort"));
    // A missing file is named in the error, and nothing is written.
    let out2 = dir.path().join("never.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_chips-eval"))
        .args([
            "calibrate",
            "--arp",
            "n=4:/nonexistent/run.arp",
            "--model",
            &fixture("app.la").display().to_string(),
            "--hardware",
            &fixture("base.toml").display().to_string(),
            "-o",
            &out2.display().to_string(),
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/run.arp"));
    assert!(!out2.exists());
}

#[test]
fn base_files_with_inline_tables_are_edited() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = setup();
    s.base_text = "name = \"x\"\nparameters = { Nproc = 1, clock = 1e6 }\n\
kernels = { old = { cycles = 3 } }\nprovenance = { \"kernels.old\" = { note = \"hand\" } }\n"
        .to_string();
    s.base = HardwareModel::from_toml("b.toml", &s.base_text).unwrap();
    let p = average_file(dir.path(), "m.arp", &[(&[10, 1], 2, 12.0)]);
    let c = calibrate_with(
        &s,
        &[RunSpec::new(p)],
        &names(),
        &CalibrationOptions::default(),
    )
    .unwrap();
    assert!(c.toml.contains("\n[kernels]\n"), "{}", c.toml);
    let doc: toml::Table = toml::from_str(&c.toml).unwrap();
    assert_eq!(doc["kernels"]["old"]["cycles"].as_integer(), Some(3));
    assert_eq!(
        doc["kernels"]["ato_kernel_merge"]["cycles"].as_float(),
        Some(12.0)
    );
    assert_eq!(
        doc["provenance"]["kernels.old"]["note"].as_str(),
        Some("hand")
    );
    assert!(doc["provenance"]
        .as_table()
        .unwrap()
        .contains_key("kernels.ato_kernel_merge"));
}

/// A callback set measuring a shared fake cycle counter, as sim-host's.
struct Cycles(std::rc::Rc<std::cell::Cell<u64>>);

impl arpsim::CallbackSet for Cycles {
    fn data_type(&self) -> arpsim::DataType {
        arpsim::DataType::ULong
    }
    fn enter(&mut self, _tid: arpsim::Tid, _sid: arpsim::Sid, data: &mut arpsim::Value) {
        *data = arpsim::Value::ULong(self.0.get());
    }
    fn leave(&mut self, _tid: arpsim::Tid, _sid: arpsim::Sid, data: &mut arpsim::Value) {
        let start = data.as_u64_saturating();
        *data = arpsim::Value::ULong(self.0.get() - start);
    }
}

#[test]
fn files_written_by_the_arpsim_engine_calibrate() {
    // The engine's own record_all output (streamed, gzip by name): the
    // merge kernel (section 1) runs 10 times in a loop section 8, costing
    // 10, 12, 14, ... cycles: mean 19.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engine.arp.gz");
    let clock = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let mut e = arpsim::Engine::new();
    e.add_callbacks(Box::new(Cycles(clock.clone()))).unwrap();
    e.set_file_name(&path).unwrap();
    e.start(1, 8, arpsim::Mode::RecordAll).unwrap();
    e.enter_plain(1, 8, 0).unwrap();
    for i in 0..10u64 {
        e.enter_kernel(1, 1, 0).unwrap();
        clock.set(clock.get() + 10 + 2 * i);
        e.leave_kernel(1, 1).unwrap();
    }
    e.leave_plain(1, 8).unwrap();
    e.finish().unwrap();
    let s = setup();
    let c = calibrate_with(
        &s,
        &[RunSpec::new(&path)],
        &names(),
        &CalibrationOptions::default(),
    )
    .unwrap();
    let hw = HardwareModel::from_toml("out", &c.toml).unwrap();
    assert_eq!(
        hw.kernels["ato_kernel_merge"],
        chips_eval::hardware::KernelCost::Cycles(19.0)
    );
    let doc: toml::Table = toml::from_str(&c.toml).unwrap();
    let p = &doc["provenance"]["kernels.ato_kernel_merge"];
    assert_eq!(p["executions"].as_integer(), Some(10));
    assert_eq!(p["min_cycles"].as_float(), Some(10.0));
    assert_eq!(p["max_cycles"].as_float(), Some(28.0));
}

/// issue 30, N25: a record's execution count is any u64; the provenance
/// wrote n = 2^64 - 1 as `executions = -1`. Counts that do not fit a TOML
/// integer are written exactly, as a string (a sum past 2^64 - 1 is
/// already refused by the reader, naming the section).
#[test]
fn provenance_counts_are_never_wrapped() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("byid.la");
    std::fs::write(
        &model,
        "application byid {\noption { debug = 0 }\nproc cflow T { compute <is arp, \"8\">; }\nproc exec init { return T(); }\n}\n",
    )
    .unwrap();
    let mut s = setup();
    s.program = Program::load(&model, &LoadOptions::default(), Some(&s.base)).unwrap();
    for (records, expected) in [
        (
            vec![(&[1u16, 8][..], u64::MAX, 5.0)],
            "\"18446744073709551615\"",
        ),
        (
            vec![
                (&[1u16, 8][..], i64::MAX as u64, 5.0),
                (&[2u16, 8][..], 2, 5.0),
            ],
            "\"9223372036854775809\"",
        ),
        (
            vec![(&[1u16, 8][..], i64::MAX as u64, 5.0)],
            "9223372036854775807",
        ),
    ] {
        let p = average_file(dir.path(), "x.arp", &records);
        let c = calibrate_with(
            &s,
            &[RunSpec::new(p)],
            &SectionNames::default(),
            &CalibrationOptions::default(),
        )
        .unwrap();
        let line = c
            .toml
            .lines()
            .find(|l| l.contains("executions"))
            .unwrap_or_else(|| panic!("{}", c.toml));
        assert!(line.contains(&format!("executions = {expected}")), "{line}");
        let hw = HardwareModel::from_toml("out", &c.toml).unwrap();
        assert_eq!(
            hw.kernels["8"],
            chips_eval::hardware::KernelCost::Cycles(5.0)
        );
    }
}

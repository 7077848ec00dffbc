//! The section 5 example: the verbatim text's slips are diagnosed one by
//! one; the corrected copy evaluates for Nproc = 1, 2, 4, ..., 64 on the
//! transputer model, and three points are derived here by hand.

use chips_eval::{Error, HardwareModel, LoadOptions, Program, RunOptions, Setting};
use std::path::PathBuf;

fn dir(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn transputer() -> HardwareModel {
    HardwareModel::load(&dir("hardware/transputer-supercluster.toml")).unwrap()
}

#[test]
fn verbatim_text_gets_one_diagnostic_per_slip() {
    let hw = transputer();
    let err = Program::load(
        &dir("tests/fixtures/memsort-verbatim/memsort.la"),
        &LoadOptions::default(),
        Some(&hw),
    )
    .unwrap_err();
    let Error::Diagnostics(d) = err else {
        panic!("expected diagnostics, got {err}")
    };
    let found: Vec<(String, u32, u32, String)> =
        d.0.iter()
            .map(|x| {
                let file = PathBuf::from(&x.file)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                (file, x.span.line, x.span.col, x.message.clone())
            })
            .collect();
    let expected: &[(&str, u32, u32, &str)] = &[
        ("memsort.la", 23, 1, "link target `sort` is not included"),
        (
            "memsort.la",
            29,
            1,
            "expected an `option { ... }` block before the procedures of application `memsort`",
        ),
        (
            "merge.la",
            37,
            1,
            "expected an `option { ... }` block before the procedures of subtask `merge`",
        ),
        (
            "merge.la",
            63,
            10,
            "expected `,` after the loop's overhead vector",
        ),
        ("bitonic.la", 43, 1, "expected `:` after `var numeric`"),
    ];
    assert_eq!(found.len(), expected.len(), "{d}");
    for (file, line, col, msg) in expected {
        assert!(
            found
                .iter()
                .any(|(f, l, c, m)| f == file && l == line && c == col && m.contains(msg)),
            "missing {file}:{line}:{col} {msg} in\n{d}"
        );
    }
}

/// Hand model of the corrected example on `transputer-supercluster.toml`.
///
/// Costs (cycles at 25 MHz): IASG 3, ICMP 8, IADD 6, FOR 12, VIDX 8, FASG 6;
/// icc ALU 1, LDST 2; `time` in microseconds. inpcom: 2-D mesh,
/// store-and-forward, t = 40 us + hops * (10 us + bytes / 1.7e6).
///
/// * qsort (ours): Nelem = 262144/P; Method = 1 so the case takes the
///   quicksort arm with probability 1: n*log2(n) steps of
///   `part` = 2*ICMP + IASG + 2*VIDX + FOR = 16 + 3 + 16 + 12 = 47 cycles.
/// * merge: dtpp = 262144/P, Pmrg = min(1, 0.639 + 0.793/P);
///
/// ```text
/// Txsort = start (3*IASG = 9 cycles)
///        + 2*dtpp*Pmrg * merge (169 ALU + 20 LDST = 209 cycles)
///        + 2*dtpp*(1-Pmrg) * tlcp (6.03 us)
///        + dtpp * otcp (FOR + IASG + ICMP + 2*IADD + 4*VIDX + 2*FASG
///                       = 12 + 3 + 8 + 12 + 32 + 12 = 79 cycles)
/// ```
///
/// * bitonic: L = log2(P) stages; stage s sends one message from 0 to
///   2^(k) for k = s-1 .. 0 (one step each), then a cpu step of Tx. The
///   message is dtpp_b * Clen bytes with dtpp_b = Clen * Ndata, i.e.
///   16 * dtpp bytes. The message to 2^k is sent in L-k stages.
fn hand(p: f64, hops_to_power_of_two: &[f64]) -> f64 {
    let clock = 25.0e6;
    let cyc = |c: f64| c / clock;
    let n = 262144.0 / p;
    let t_qsort = n * n.log2() * cyc(47.0);
    let pmrg = (0.639f64 + 0.793 / p).min(1.0);
    let tx =
        cyc(9.0) + 2.0 * n * pmrg * cyc(209.0) + 2.0 * n * (1.0 - pmrg) * 6.03e-6 + n * cyc(79.0);
    let stages = p.log2();
    let size = 16.0 * n;
    let msg = |hops: f64| 40.0e-6 + hops * (10.0e-6 + size / 1.7e6);
    let mut t_bitonic = stages * tx;
    for (k, hops) in hops_to_power_of_two.iter().enumerate() {
        t_bitonic += (stages - k as f64) * msg(*hops);
    }
    t_qsort + t_bitonic
}

#[test]
fn corrected_example_follows_the_hand_model() {
    let hw = transputer();
    let prog = Program::load(
        &dir("tests/fixtures/memsort/memsort.la"),
        &LoadOptions::default(),
        Some(&hw),
    )
    .unwrap();
    let r = chips_eval::run(
        &prog,
        &hw,
        &[Setting::parse("Nproc=1..64:*2").unwrap()],
        RunOptions::default(),
    )
    .unwrap();
    assert_eq!(r.points.len(), 7);
    let time_at = |p: f64| {
        r.points
            .iter()
            .find(|x| x.point[0].1 == chips_eval::Value::Num(p))
            .and_then(|x| x.time)
            .unwrap()
    };
    // P = 1: no merge stage (nstage = Log2(1) = 0); qsort of 262144
    // elements: 262144 * 18 * 47 cycles / 25 MHz = 8.87095296 s.
    assert!((time_at(1.0) - 8.870_952_96).abs() < 1e-9);
    assert!((time_at(1.0) - hand(1.0, &[])).abs() < 1e-9);
    // P = 4: mesh 2 wide; 1 = (1,0) and 2 = (0,1) are 1 hop from 0.
    // t = Tqsort + 2*Tx + 2*t(1 hop) + 1*t(1 hop), with n = 65536,
    // Pmrg = 0.83725: Tqsort = 1.97132288 s, Tx = 1.2531527... s,
    // one message = 40us + 10us + 1048576/1.7e6 s = 0.6168593... s.
    assert!((time_at(4.0) - hand(4.0, &[1.0, 1.0])).abs() < 1e-9);
    assert!((time_at(4.0) - 6.328_206).abs() < 1e-6);
    // P = 16: mesh 4 wide; 1 = (1,0): 1 hop, 2 = (2,0): 2, 4 = (0,1): 1,
    // 8 = (0,2): 2 hops.
    assert!((time_at(16.0) - hand(16.0, &[1.0, 2.0, 1.0, 2.0])).abs() < 1e-9);
    // Every point is a positive time.
    assert!(r.points.iter().all(|p| p.time.is_some_and(|t| t > 0.0)));
}

#[test]
fn corrected_example_runs_on_the_cortex_model() {
    let hw = HardwareModel::load(&dir("hardware/cortex-m4-quad.toml")).unwrap();
    let prog = Program::load(
        &dir("tests/fixtures/memsort/memsort.la"),
        &LoadOptions::default(),
        Some(&hw),
    )
    .unwrap();
    let r = chips_eval::run(
        &prog,
        &hw,
        &[Setting::parse("Nproc=1,2,4").unwrap()],
        RunOptions::default(),
    )
    .unwrap();
    // The faster cores make every point faster than on the transputers.
    let tp = transputer();
    let prog_t = Program::load(
        &dir("tests/fixtures/memsort/memsort.la"),
        &LoadOptions::default(),
        Some(&tp),
    )
    .unwrap();
    let rt = chips_eval::run(
        &prog_t,
        &tp,
        &[Setting::parse("Nproc=1,2,4").unwrap()],
        RunOptions::default(),
    )
    .unwrap();
    for (a, b) in r.points.iter().zip(&rt.points) {
        assert!(a.time.unwrap() < b.time.unwrap());
    }
}

#[test]
fn breakdown_ranks_devices_and_resources() {
    let hw = transputer();
    let prog = Program::load(
        &dir("tests/fixtures/memsort/memsort.la"),
        &LoadOptions::default(),
        Some(&hw),
    )
    .unwrap();
    let r = chips_eval::run(
        &prog,
        &hw,
        &[Setting::parse("Nproc=4").unwrap()],
        RunOptions {
            trace: true,
            ..Default::default()
        },
    )
    .unwrap();
    let b = &r.points[0].breakdown;
    // P = 4: three messages of 0.6168593 s on inpcom; cpu: qsort's
    // sequential step plus two bitonic stages of Tx.
    let inpcom = b.by_device["inpcom"];
    assert!((inpcom - 3.0 * (50.0e-6 + 1048576.0 / 1.7e6)).abs() < 1e-9);
    let total = r.points[0].time.unwrap();
    assert!((b.by_device["cpu"] + inpcom - total).abs() < 1e-9);
    assert!(b.by_resource.contains_key("hllc.VIDX"));
    assert!(r.points[0]
        .trace
        .iter()
        .any(|l| l.contains("template bitonic nstage = 2 seval = 1")));
    let text = chips_eval::output::render_breakdown(&r);
    assert!(
        text.find("cpu").unwrap() < text.find("inpcom").unwrap(),
        "cpu ranks above inpcom:\n{text}"
    );
}

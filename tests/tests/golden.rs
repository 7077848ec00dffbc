//! Golden files for every output format of sim-host (and chips-eval's
//! plot), each made by a real run of a deterministic guest and compared
//! byte for byte with `tests/golden/<name>`: data.arp, the report table
//! and JSON report, callgrind, trace events, generated SIR in both
//! dialects, the profile SIR, suite JSON and CSV, Extra-P, the plots' SVG,
//! and the project's committed cycle baseline (`suites/ci-baseline.json`).
//!
//! Only what depends on the host is normalised first, by
//! [`normalise_host_fields`]: host seconds and MIPS, and the absolute
//! folders of the checkout and of the scratch folder. Every run works in
//! its scratch folder on a copy of its ELF, so outputs name files
//! relatively.
//!
//! `ARPSIM_BLESS=1 cargo test --release -p e2e-tests --test golden`
//! rewrites the golden files from the current behaviour; review
//! `git diff tests/golden suites/ci-baseline.json` before committing. They follow the guests'
//! code, so a different cross compiler or picolibc changes them too.

use e2e_tests::{chips_eval_bin, golden, guest, repo_root, scratch, sim_host_bin};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// What an output is, for [`normalise_host_fields`].
#[derive(Debug, Clone, Copy, PartialEq)]
enum Format {
    /// `run --report-json`: `totals.host_seconds` and `totals.mips`.
    ReportJson,
    /// The report table on stderr: its `host time S s, M MIPS` line.
    ReportText,
    /// `suite --json`: the values of the `host` object's `seconds`.
    SuiteJson,
    /// `suite --csv`: the `host_seconds` column.
    SuiteCsv,
    /// Everything else: no host field but the folders.
    Other,
}

/// Replaces what depends on the host, and only that, by `<host>`,
/// `<repo>` and `<scratch>`: the host time and speed fields of `format`
/// (see [`Format`]), the checkout's folder (guests built in it name their
/// sources by absolute path in their debug information) and the test's
/// scratch folder.
fn normalise_host_fields(format: Format, text: &str, scratch: &Path) -> String {
    let text = text
        .replace(&scratch.display().to_string(), "<scratch>")
        .replace(&repo_root().display().to_string(), "<repo>");
    match format {
        Format::ReportJson => text
            .split_inclusive('\n')
            .map(|line| {
                json_number_to_host(line, "\"host_seconds\": ")
                    .or_else(|| json_number_to_host(line, "\"mips\": "))
                    .unwrap_or_else(|| line.to_owned())
            })
            .collect(),
        Format::ReportText => text
            .split_inclusive('\n')
            .map(|line| {
                let body = line.trim_end();
                if body.starts_with("host time ") && body.ends_with(" MIPS") {
                    let ending = &line[body.len()..];
                    format!("host time <host> s, <host> MIPS{ending}")
                } else {
                    line.to_owned()
                }
            })
            .collect(),
        Format::SuiteJson => {
            // the `host` object is the document's last member
            let Some(at) = text.find("\n  \"host\": {\n") else {
                return text;
            };
            let (before, host) = text.split_at(at);
            let host: String = host
                .split_inclusive('\n')
                .map(|line| {
                    json_number_to_host(line, "\"seconds\": ").unwrap_or_else(|| line.to_owned())
                })
                .collect();
            before.to_owned() + &host
        }
        Format::SuiteCsv => {
            let mut lines = text.split_inclusive('\n');
            let header = lines.next().unwrap_or("");
            let Some(column) = header
                .trim_end()
                .split(',')
                .position(|c| c == "host_seconds")
            else {
                return text;
            };
            let mut out = header.to_owned();
            for line in lines {
                let mut fields = csv_fields(line.trim_end_matches('\n'));
                if let Some(field) = fields.get_mut(column) {
                    "<host>".clone_into(field);
                }
                out += &fields.join(",");
                if line.ends_with('\n') {
                    out.push('\n');
                }
            }
            out
        }
        Format::Other => text,
    }
}

/// `line` with the number after `key` replaced by `"<host>"`, if the line
/// holds `key` followed by a number.
fn json_number_to_host(line: &str, key: &str) -> Option<String> {
    let at = line.find(key)? + key.len();
    let rest = &line[at..];
    let len = rest
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(rest.len());
    if len == 0 {
        return None;
    }
    Some(format!("{}\"<host>\"{}", &line[..at], &rest[len..]))
}

/// The fields of a CSV line, quotes kept (a quoted field may hold commas).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                fields.last_mut().unwrap().push(c);
            }
            ',' if !quoted => fields.push(String::new()),
            _ => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

/// Normalises `file` of `dir` as `format` and checks it against the
/// golden file `name`.
fn check_file(name: &str, format: Format, dir: &Path, file: &str) {
    let bytes = std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    check_bytes(name, format, dir, &bytes);
}

fn check_bytes(name: &str, format: Format, dir: &Path, bytes: &[u8]) {
    let text = String::from_utf8(bytes.to_vec())
        .unwrap_or_else(|e| panic!("{name}: the output is not UTF-8: {e}"));
    golden::check(name, normalise_host_fields(format, &text, dir).as_bytes());
}

/// `sim-host ARGS` in `dir`; it must exit with `status`.
fn sim_host(dir: &Path, args: &[&str], status: i32) -> Output {
    let out = Command::new(sim_host_bin())
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(status),
        "sim-host {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Copies the guest `example` of `target` into `dir` as `as_name`.
fn copy_guest(dir: &Path, target: &str, example: &str, as_name: &str) {
    std::fs::copy(guest(target, example), dir.join(as_name)).unwrap();
}

/// The plain recording run of filter: data.arp (record_all), the report
/// table on stderr and the JSON report.
fn filter_run(target: &str) {
    let (dir, out) = run_filter(target);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        e2e_tests::expected_output("filter")
    );
    check_file(
        &format!("filter-{target}.data.arp"),
        Format::Other,
        &dir,
        "data.arp",
    );
    check_bytes(
        &format!("filter-{target}.report.txt"),
        Format::ReportText,
        &dir,
        &out.stderr,
    );
    check_file(
        &format!("filter-{target}.report.json"),
        Format::ReportJson,
        &dir,
        "report.json",
    );
}

/// Runs filter on `target` in a new scratch folder, recording data.arp
/// (record_all) and report.json.
fn run_filter(target: &str) -> (e2e_tests::Scratch, Output) {
    let dir = scratch(&format!("golden-run-{target}"));
    copy_guest(&dir, target, "filter", "filter.elf");
    let out = sim_host(
        &dir,
        &[
            "run",
            "--target",
            target,
            "filter.elf",
            "--mode",
            "record_all",
            "-o",
            "data.arp",
            "--report-json",
            "report.json",
        ],
        0,
    );
    (dir, out)
}

#[test]
fn run_outputs_of_filter_on_cortex_m4() {
    filter_run("cortex-m4");
}

#[test]
fn run_outputs_of_filter_on_rv32imac() {
    filter_run("rv32imac");
}

fn filter_callgrind(target: &str) {
    let dir = scratch(&format!("golden-callgrind-{target}"));
    copy_guest(&dir, target, "filter", "filter.elf");
    sim_host(
        &dir,
        &[
            "run",
            "-q",
            "--target",
            target,
            "filter.elf",
            "-o",
            "data.arp",
            "--callgrind",
            "filter.callgrind",
        ],
        0,
    );
    check_file(
        &format!("filter-{target}.callgrind"),
        Format::Other,
        &dir,
        "filter.callgrind",
    );
}

#[test]
fn callgrind_of_filter_on_cortex_m4() {
    filter_callgrind("cortex-m4");
}

#[test]
fn callgrind_of_filter_on_rv32imac() {
    filter_callgrind("rv32imac");
}

/// The first 200 section events of filter (the file notes the dropped
/// rest), and the whole timeline of memsort's four threads on four cores
/// with its report and data.arp.
#[test]
fn trace_events_of_filter_and_of_four_threads() {
    let dir = scratch("golden-trace");
    copy_guest(&dir, "cortex-m4", "filter", "filter.elf");
    copy_guest(&dir, "cortex-m4", "memsort", "memsort.elf");
    sim_host(
        &dir,
        &[
            "run",
            "-q",
            "filter.elf",
            "-o",
            "filter.arp",
            "--trace-events",
            "filter.trace.json",
            "--trace-limit",
            "200",
        ],
        0,
    );
    check_file(
        "filter-cortex-m4.trace.json",
        Format::Other,
        &dir,
        "filter.trace.json",
    );
    sim_host(
        &dir,
        &[
            "run",
            "-q",
            "memsort.elf",
            "--cores",
            "4",
            "-o",
            "memsort.arp",
            "--trace-events",
            "memsort.trace.json",
            "--report-json",
            "memsort.json",
            "--",
            "256",
            "4",
        ],
        0,
    );
    check_file(
        "memsort-4-cores.trace.json",
        Format::Other,
        &dir,
        "memsort.trace.json",
    );
    check_file(
        "memsort-4-cores.report.json",
        Format::ReportJson,
        &dir,
        "memsort.json",
    );
    check_file(
        "memsort-4-cores.data.arp",
        Format::Other,
        &dir,
        "memsort.arp",
    );
}

#[test]
fn generated_sir_of_filter_in_both_dialects() {
    let dir = scratch("golden-sir");
    copy_guest(&dir, "cortex-m4", "filter", "filter.elf");
    for (dialect, file) in [
        ("periscope", "filter.periscope.sir"),
        ("apart", "filter.apart.sir"),
    ] {
        sim_host(
            &dir,
            &[
                "sir",
                "generate",
                "filter.elf",
                "--target",
                "cortex-m4",
                "--dialect",
                dialect,
                "-o",
                file,
            ],
            0,
        );
        check_file(
            &format!("filter-cortex-m4.{dialect}.sir"),
            Format::Other,
            &dir,
            file,
        );
    }
}

#[test]
fn profile_sir_of_filter() {
    let dir = scratch("golden-profile");
    copy_guest(&dir, "cortex-m4", "filter", "filter.elf");
    sim_host(
        &dir,
        &[
            "run",
            "-q",
            "filter.elf",
            "-o",
            "data.arp",
            "--profile",
            "filter.profile.sir",
        ],
        0,
    );
    check_file(
        "filter-cortex-m4.profile.sir",
        Format::Other,
        &dir,
        "filter.profile.sir",
    );
}

/// A manifest of passing, exiting, faulting, multi-core and rv32imac
/// entries, its guests beside it.
const SUITE: &str = r#"[[entry]]
name = "filter-cortex-m4"
elf = "filter.elf"
target = "cortex-m4"
expected_output = "filter-expected.txt"

[[entry]]
name = "filter-rv32imac"
elf = "filter-rv32imac.elf"
target = "rv32imac"
mode = "record_all"

[[entry]]
name = "filter-par-4"
elf = "filter-par-4.elf"
target = "cortex-m4"
cores = 4

[[entry]]
name = "crash-exit"
elf = "crash.elf"
target = "cortex-m4"
args = ["exit", "7"]
exit_code = 7

[[entry]]
name = "crash-unmapped"
elf = "crash.elf"
target = "cortex-m4"
args = ["unmapped"]
exit_code = 120
"#;

#[test]
fn suite_json_and_csv() {
    let dir = scratch("golden-suite");
    copy_guest(&dir, "cortex-m4", "filter", "filter.elf");
    copy_guest(&dir, "rv32imac", "filter", "filter-rv32imac.elf");
    copy_guest(&dir, "cortex-m4", "filter-par-4", "filter-par-4.elf");
    copy_guest(&dir, "cortex-m4", "crash", "crash.elf");
    std::fs::write(
        dir.join("filter-expected.txt"),
        e2e_tests::expected_output("filter"),
    )
    .unwrap();
    std::fs::write(dir.join("m.toml"), SUITE).unwrap();
    sim_host(
        &dir,
        &[
            "suite",
            "m.toml",
            "-j",
            "2",
            "--json",
            "suite.json",
            "--csv",
            "suite.csv",
            "--long-csv",
            "suite-long.csv",
        ],
        0,
    );
    // issue 45 changed suite.json on purpose (schema_version 5: each
    // entry's clock_hz, each section's self_cycles); suite.csv is as it was
    check_file("suite.json", Format::SuiteJson, &dir, "suite.json");
    check_file("suite.csv", Format::SuiteCsv, &dir, "suite.csv");
    // new in issue 45: a row per entry and section, no host field
    check_file("suite-long.csv", Format::Other, &dir, "suite-long.csv");
}

/// The committed baseline of the project's cycle gate (`suites/
/// ci-baseline.json`, docs/ci.md) is what `suites/ci.toml` gives now: the
/// file `--write-baseline` writes, which holds no host field.
#[test]
fn ci_baseline_of_the_project_suite() {
    guest("cortex-m4", "fir");
    let dir = scratch("golden-ci-baseline");
    let manifest = repo_root().join("suites/ci.toml");
    let manifest = manifest.to_str().unwrap();
    sim_host(
        &dir,
        &[
            "suite",
            manifest,
            "-j",
            "2",
            "--write-baseline",
            "baseline.json",
        ],
        0,
    );
    let written = std::fs::read(dir.join("baseline.json")).unwrap();
    golden::check_path(&repo_root().join("suites/ci-baseline.json"), &written);
}

/// memsort recorded at three sizes, exported for Extra-P with the section
/// names of its generated SIR and the execution counts.
#[test]
fn extrap_export_of_memsort() {
    let dir = scratch("golden-extrap");
    copy_guest(&dir, "cortex-m4", "memsort", "memsort.elf");
    let mut runs = Vec::new();
    for n in ["256", "512", "1024"] {
        let file = format!("n{n}.arp");
        sim_host(
            &dir,
            &["run", "-q", "memsort.elf", "-o", &file, "--", n, "2"],
            0,
        );
        runs.push(format!("n={n}:{file}"));
    }
    sim_host(
        &dir,
        &["sir", "generate", "memsort.elf", "-o", "memsort.sir"],
        0,
    );
    let mut args = vec!["arp", "export-extrap"];
    args.extend(runs.iter().map(String::as_str));
    args.extend(["--sir", "memsort.sir", "--counts", "-o", "memsort.jsonl"]);
    sim_host(&dir, &args, 0);
    check_file("memsort.extrap.jsonl", Format::Other, &dir, "memsort.jsonl");
}

/// `arp plot` of a record_all file (cost per sample), of a histogram, and
/// of a record_all file's samples in fitted bins (`--histogram`).
#[test]
fn section_plots_of_memsort() {
    let dir = scratch("golden-plot");
    copy_guest(&dir, "cortex-m4", "memsort", "memsort.elf");
    sim_host(
        &dir,
        &[
            "run",
            "-q",
            "memsort.elf",
            "-o",
            "all.arp",
            "--",
            "256",
            "2",
        ],
        0,
    );
    sim_host(
        &dir,
        &[
            "run",
            "-q",
            "memsort.elf",
            "--mode",
            "record_histogram",
            "-o",
            "histogram.arp",
            "--",
            "1024",
            "2",
        ],
        0,
    );
    for (data, svg) in [("all.arp", "all.svg"), ("histogram.arp", "histogram.svg")] {
        sim_host(&dir, &["arp", "plot", data, "-o", svg], 0);
    }
    // issue 45 changed both on purpose: colours hashed from each section's
    // name (stable from plot to plot), whole-number ticks on the sample,
    // bin and count axes; new: the samples in bins fitted to them
    sim_host(
        &dir,
        &["arp", "plot", "all.arp", "--histogram", "-o", "fitted.svg"],
        0,
    );
    check_file(
        "memsort-record-all.histogram.svg",
        Format::Other,
        &dir,
        "fitted.svg",
    );
    check_file(
        "memsort-record-all.sections.svg",
        Format::Other,
        &dir,
        "all.svg",
    );
    check_file(
        "memsort-histogram.sections.svg",
        Format::Other,
        &dir,
        "histogram.svg",
    );
}

/// chips-eval's sweep plot: the memsort model on the transputer machine,
/// two series.
#[test]
fn chips_eval_sweep_plot() {
    let dir = scratch("golden-chips-plot");
    let root = repo_root().join("chips-eval");
    let out = Command::new(chips_eval_bin())
        .current_dir(&dir)
        .arg("run")
        .arg(root.join("tests/fixtures/memsort/memsort.la"))
        .arg("--hardware")
        .arg(root.join("hardware/transputer-supercluster.toml"))
        .args(["--set", "Nproc=1..64:*2", "--set", "Nelem=1024,4096"])
        .args(["--plot", "sweep.svg"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_file("chips-eval-memsort.svg", Format::Other, &dir, "sweep.svg");
}

/// The comparison catches every byte: one byte flipped anywhere in an
/// output (here filter's JSON report, as normalised) is a difference at
/// its line; and in the raw output, a flip escapes only where it lands in
/// a host field's value.
#[test]
fn a_flipped_byte_in_an_output_is_a_difference() {
    let (dir, _) = run_filter("cortex-m4");
    let raw = std::fs::read_to_string(dir.join("report.json")).unwrap();
    let normalised = normalise_host_fields(Format::ReportJson, &raw, &dir);
    if !golden::blessing() {
        let golden = std::fs::read(golden::path("filter-cortex-m4.report.json")).unwrap();
        assert_eq!(
            golden::first_difference(&golden, normalised.as_bytes()),
            None,
            "the run matches its golden file"
        );
    }
    // every byte of the normalised output
    let bytes = normalised.as_bytes();
    for at in 0..bytes.len() {
        let mut flipped = bytes.to_vec();
        flipped[at] ^= 0x01;
        let line = 1 + bytes[..at].iter().filter(|&&b| b == b'\n').count();
        let found = golden::first_difference(bytes, &flipped)
            .unwrap_or_else(|| panic!("a flip at byte {at} is not found"));
        let said = format!("line {line},");
        assert!(
            found.contains(&said) || found.contains(&format!("line {line} ")),
            "byte {at} is on line {line}: {found}"
        );
    }
    // the raw output: a flip is hidden only inside a host field's number
    let host_values = host_value_spans(&raw, &["\"host_seconds\": ", "\"mips\": "]);
    assert_eq!(host_values.len(), 2, "{raw}");
    let expected = normalised.as_bytes();
    for at in 0..raw.len() {
        let mut flipped = raw.as_bytes().to_vec();
        flipped[at] ^= 0x01;
        let flipped = String::from_utf8_lossy(&flipped);
        let again = normalise_host_fields(Format::ReportJson, &flipped, &dir);
        let hidden = golden::first_difference(expected, again.as_bytes()).is_none();
        let in_host_value = host_values.iter().any(|r| r.contains(&at));
        assert!(
            !hidden || in_host_value,
            "a flip at byte {at} ({:?}) is hidden by the normalisation",
            String::from_utf8_lossy(
                &raw.as_bytes()[at.saturating_sub(20)..(at + 20).min(raw.len())]
            )
        );
    }
    // and the failure says where and how to bless
    if !golden::blessing() {
        let mut changed = normalised.into_bytes();
        let at = changed.len() / 2;
        changed[at] ^= 0x01;
        let message = std::panic::catch_unwind(|| {
            golden::check("filter-cortex-m4.report.json", &changed);
        })
        .expect_err("a changed output fails its golden test");
        let message = message
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(message.contains("first difference at line"), "{message}");
        assert!(message.contains("ARPSIM_BLESS=1"), "{message}");
    }
}

/// Blessing is refused under CI, with a message saying why and how to
/// bless; without `ARPSIM_BLESS` nothing is blessed, CI or not.
#[test]
fn blessing_is_refused_under_ci() {
    let refused = golden::bless_decision(true, true).expect_err("blessing under CI");
    assert!(
        refused.contains("ARPSIM_BLESS") && refused.contains("CI"),
        "{refused}"
    );
    assert_eq!(golden::bless_decision(true, false), Ok(true));
    assert_eq!(golden::bless_decision(false, true), Ok(false));
    assert_eq!(golden::bless_decision(false, false), Ok(false));
}

/// The byte ranges of the numbers after each of `keys` in `text`.
fn host_value_spans(text: &str, keys: &[&str]) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    for key in keys {
        for (at, _) in text.match_indices(key) {
            let start = at + key.len();
            let len = text[start..]
                .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
                .unwrap_or(text.len() - start);
            spans.push(start..start + len);
        }
    }
    spans
}

#[test]
fn normalisation_touches_only_host_fields() {
    let dir = Path::new("/scratch/x");
    let repo = repo_root().display().to_string();
    assert_eq!(
        normalise_host_fields(
            Format::ReportJson,
            &format!(
                "  \"simulated_seconds\": 0.5,\n  \"host_seconds\": 0.25,\n  \"mips\": 53.1e0\n  \"file\": \"{repo}/a.c\",\n  \"f\": \"/scratch/x/b\"\n"
            ),
            dir
        ),
        "  \"simulated_seconds\": 0.5,\n  \"host_seconds\": \"<host>\",\n  \"mips\": \"<host>\"\n  \"file\": \"<repo>/a.c\",\n  \"f\": \"<scratch>/b\"\n"
    );
    assert_eq!(
        normalise_host_fields(
            Format::ReportText,
            "CPI 1.380, 0.595337 s at 25 MHz\nhost time 0.203 s, 53.2 MIPS\n",
            dir
        ),
        "CPI 1.380, 0.595337 s at 25 MHz\nhost time <host> s, <host> MIPS\n"
    );
    assert_eq!(
        normalise_host_fields(
            Format::SuiteJson,
            "{\n  \"entries\": [{\"seconds\": 1}],\n  \"host\": {\n    \"seconds\": 0.4,\n    \"entries\": [\n      {\n        \"seconds\": 0.1\n      }\n    ]\n  }\n}\n",
            dir
        ),
        "{\n  \"entries\": [{\"seconds\": 1}],\n  \"host\": {\n    \"seconds\": \"<host>\",\n    \"entries\": [\n      {\n        \"seconds\": \"<host>\"\n      }\n    ]\n  }\n}\n"
    );
    assert_eq!(
        normalise_host_fields(
            Format::SuiteCsv,
            "name,simulated_seconds,host_seconds,failures\na,0.5,0.056,\"x, y\"\nb,1,2,\n",
            dir
        ),
        "name,simulated_seconds,host_seconds,failures\na,0.5,<host>,\"x, y\"\nb,1,<host>,\n"
    );
}

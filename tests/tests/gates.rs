//! Cycle gates and section names (issue 28): one FIR kernel built two
//! ways (`guest-shim/examples/fir`: its inner loop unrolled, and not, the
//! `-rolled` variant, slower) caught by `arp diff`, by a suite's
//! `--baseline` and by a `budget`, each failing with the numbers and
//! passing within its tolerance; the JUnit report checked against the
//! rules of the schemas CI systems read; sections named by their labels,
//! else where they are entered, in every output, a Rust guest's too; and
//! the CI jobs of docs/ci.md run as written.

use e2e_tests::process::{sim_host, text};
use e2e_tests::{build_dirs, guest, repo_root, scratch, sim_host_bin};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The gate's exit status (`model::exit::GATE_FAILED`).
const GATE_FAILED: i32 = 3;

fn status(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&read(path)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The line of fir.c that holds `code`.
fn fir_line(code: &str) -> usize {
    let source = read(&repo_root().join("guest-shim/examples/fir/fir.c"));
    1 + source
        .lines()
        .position(|l| l.contains(code))
        .unwrap_or_else(|| panic!("fir.c has no `{code}`"))
}

/// The unlabelled sections' names: where fir.c enters them.
fn fir_plain_names() -> (String, String) {
    (
        format!("main (fir.c:{})", fir_line("arp_enter(1, 2, 0)")),
        format!("main (fir.c:{})", fir_line("arp_enter_profiled(1, 3, 0)")),
    )
}

/// Copies the fast and the slow build of fir for `target` into `dir`
/// (`fir.elf`, `fir-rolled.elf`).
fn copy_fir(dir: &Path, target: &str) {
    for v in ["fir", "fir-rolled"] {
        std::fs::copy(guest(target, v), dir.join(format!("{v}.elf"))).unwrap();
    }
}

/// A section row of a JSON report (or suite entry) by its trace.
fn row<'a>(sections: &'a Value, path: &[u16]) -> &'a Value {
    sections
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["path"] == serde_json::json!(path))
        .unwrap_or_else(|| panic!("no section {path:?} in {sections}"))
}

/// What the two builds measured of the kernel (trace 2 > 1): (calls,
/// total cycles) of the fast and the slow one, from their reports.
struct Measured {
    fast: (u64, u64),
    slow: (u64, u64),
}

impl Measured {
    /// The slow build's growth, percent of the fast one's total.
    fn growth(&self) -> f64 {
        (self.slow.1 as f64 - self.fast.1 as f64) / self.fast.1 as f64 * 100.0
    }

    /// `12214 -> 29592 cycles (+17378, +142.3%)`, as the gates print it.
    fn numbers(&self) -> String {
        format!(
            "{} -> {} cycles (+{}, +{:.1}%)",
            self.fast.1,
            self.slow.1,
            self.slow.1 - self.fast.1,
            self.growth()
        )
    }
}

/// Runs both builds in `dir` on cortex-m4, recording `fast.arp` and
/// `slow.arp` with their reports.
fn run_both(dir: &Path) -> Measured {
    copy_fir(dir, "cortex-m4");
    let mut m = Vec::new();
    for (elf, name) in [("fir.elf", "fast"), ("fir-rolled.elf", "slow")] {
        let arp = format!("{name}.arp");
        let report = format!("{name}.json");
        let out = sim_host(
            dir,
            &["run", "-q", elf, "-o", &arp, "--report-json", &report],
        );
        assert_eq!(status(&out), 0, "{}", text(&out));
        let r = json(&dir.join(&report));
        let k = row(&r["sections"], &[2, 1]);
        m.push((
            k["count"].as_u64().unwrap(),
            k["total_cycles"].as_u64().unwrap(),
        ));
    }
    let measured = Measured {
        fast: m[0],
        slow: m[1],
    };
    assert_eq!(measured.fast.0, measured.slow.0, "the same calls");
    assert!(
        measured.slow.1 > measured.fast.1,
        "the rolled loop costs more: {} vs {}",
        measured.slow.1,
        measured.fast.1
    );
    measured
}

/// Issue 45: `arp diff` of two data.arp files left out plain sections
/// (a data.arp records only kernel and profiled ones), while the suite
/// reports them. Given the runs' reports it compares every section, the
/// plain `2 main (fir.c:N)` too, each trace on one row; `--self` compares
/// self cycles: the kernel's are its total (nothing nested in it), the
/// plain parent's its total less the kernel's. On data.arp files, `--self`
/// subtracts the recorded traces nested in each.
#[test]
fn arp_diff_of_reports_has_plain_sections_once_and_self_cycles() {
    let dir = scratch("gates-arp-diff-reports");
    let m = run_both(&dir);
    let (plain, _) = fir_plain_names();
    let diff = |extra: &[&str]| {
        let mut args = vec!["arp", "diff", "fast.json", "slow.json", "--json"];
        args.extend(extra);
        let out = sim_host(&dir, &args);
        assert_eq!(status(&out), 0, "{}", text(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v
    };
    let totals = diff(&[]);
    let sections = totals["sections"].as_array().unwrap();
    let mut paths: Vec<String> = sections.iter().map(|s| s["path"].to_string()).collect();
    let listed = paths.len();
    paths.sort();
    paths.dedup();
    assert_eq!(paths.len(), listed, "a trace listed twice: {totals}");
    let report = json(&dir.join("fast.json"));
    assert_eq!(listed, report["sections"].as_array().unwrap().len());
    let parent = row(&totals["sections"], &[2]);
    assert_eq!(parent["name"], plain.as_str(), "{parent}");
    assert_eq!(
        parent["base"]["total"],
        row(&report["sections"], &[2])["total_cycles"]
    );
    assert!(totals.get("compared").is_none(), "{totals}");

    let own = diff(&["--self"]);
    assert_eq!(own["compared"], "self_cycles");
    let kernel = row(&own["sections"], &[2, 1]);
    assert_eq!(kernel["base"]["total"], m.fast.1);
    assert_eq!(kernel["new"]["total"], m.slow.1);
    let parent_self = row(&own["sections"], &[2]);
    assert_eq!(
        parent_self["base"]["total"],
        row(&report["sections"], &[2])["self_cycles"]
    );
    // the kernel's growth is not the parent's own
    let change = |v: &Value| v["change"].as_f64().unwrap().abs();
    assert!(change(parent_self) < change(kernel) / 10.0, "{own}");

    // the table says what it compares
    let out = sim_host(&dir, &["arp", "diff", "fast.json", "slow.json", "--self"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.lines().next().unwrap().contains("self cycles"),
        "{table}"
    );
    assert!(table.contains(&format!("\n2 {plain}")), "{table}");

    // data.arp files: a note that plain sections are not in them; --self
    // of the kernel is its total, the profiled section 3 has no kernel in it
    let out = sim_host(
        &dir,
        &["arp", "diff", "fast.arp", "slow.arp", "--self", "--json"],
    );
    assert_eq!(status(&out), 0, "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("kernel and profiled sections only"), "{said}");
    let arp: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(row(&arp["sections"], &[2, 1])["new"]["total"], m.slow.1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn arp_diff_fails_past_its_limit_with_the_numbers_and_passes_within() {
    let dir = scratch("gates-arp-diff");
    let m = run_both(&dir);
    let out = sim_host(
        &dir,
        &[
            "arp",
            "diff",
            "fast.arp",
            "slow.arp",
            "--elf",
            "fir-rolled.elf",
            "--fail-over",
            "0%",
        ],
    );
    assert_eq!(status(&out), GATE_FAILED, "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!(
            "section 2 > 1 ato_kernel_fir grew past 0%: {}",
            m.numbers()
        )),
        "{said}"
    );
    // the table: the kernel with its name, counts, means, totals, change
    let table = String::from_utf8_lossy(&out.stdout);
    let kernel = table
        .lines()
        .find(|l| l.starts_with("2 > 1 ato_kernel_fir"))
        .unwrap_or_else(|| panic!("{table}"));
    for part in [
        format!("{} -> {}", m.fast.0, m.slow.0),
        format!("{} -> {}", m.fast.1, m.slow.1),
        format!("+{}", m.slow.1 - m.fast.1),
        format!("+{:.1}%", m.growth()),
        "OVER".to_owned(),
    ] {
        assert!(kernel.contains(&part), "{part}: {kernel}");
    }
    // the checksum section is the same code in both
    let (_, checksum) = fir_plain_names();
    let same = table
        .lines()
        .find(|l| l.starts_with(&format!("3 {checksum}")))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(same.contains("+0.0%") && !same.contains("OVER"), "{same}");

    // within the tolerance: passes
    let limit = format!("{}%", m.growth().ceil() + 1.0);
    let out = sim_host(
        &dir,
        &["arp", "diff", "fast.arp", "slow.arp", "--fail-over", &limit],
    );
    assert_eq!(status(&out), 0, "{}", text(&out));
    // without --elf: the ids alone
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("\n2 > 1 "),
        "{}",
        text(&out)
    );

    // JSON, to a file
    let out = sim_host(
        &dir,
        &[
            "arp",
            "diff",
            "fast.arp",
            "slow.arp",
            "--elf",
            "fir-rolled.elf",
            "--fail-over",
            "0",
            "--json",
            "diff.json",
        ],
    );
    assert_eq!(status(&out), GATE_FAILED, "{}", text(&out));
    let diff = json(&dir.join("diff.json"));
    assert_eq!(diff["failed"], true);
    let k = row(&diff["sections"], &[2, 1]);
    assert_eq!(k["name"], "ato_kernel_fir");
    assert_eq!(k["status"], "grew");
    assert_eq!(k["base"]["total"], m.fast.1);
    assert_eq!(k["new"]["total"], m.slow.1);
    assert_eq!(k["change"], m.slow.1 - m.fast.1);
    assert_eq!(k["over_limit"], true);
    assert_eq!(row(&diff["sections"], &[3])["status"], "same");

    // another program: its sections appeared, fir's vanished
    std::fs::copy(guest("cortex-m4", "filter"), dir.join("filter.elf")).unwrap();
    let out = sim_host(&dir, &["run", "-q", "filter.elf", "-o", "filter.arp"]);
    assert_eq!(status(&out), 0, "{}", text(&out));
    let out = sim_host(
        &dir,
        &[
            "arp",
            "diff",
            "fast.arp",
            "filter.arp",
            "--fail-over",
            "0",
            "--json",
        ],
    );
    assert_eq!(
        status(&out),
        0,
        "appearing and vanishing is no growth: {}",
        text(&out)
    );
    let diff: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(row(&diff["sections"], &[2, 1])["status"], "vanished");
    assert_eq!(
        row(&diff["sections"], &[8, 7, 3, 2, 1])["status"],
        "appeared"
    );
}

/// A manifest `name.toml` in `dir`: one entry `fir` of `elf`, with a
/// `budget` line if given.
fn fir_manifest(dir: &Path, name: &str, elf: &str, budget: Option<&str>) {
    let expected = repo_root().join("guest-shim/examples/fir/expected-output.txt");
    let mut text = format!(
        "[[entry]]\nname = \"fir\"\nelf = \"{elf}\"\ntarget = \"cortex-m4\"\nexpected_output = \"{}\"\n",
        expected.display()
    );
    if let Some(b) = budget {
        text += &format!("budget = {b}\n");
    }
    std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
}

#[test]
fn a_suite_baseline_fails_past_its_tolerance_with_the_numbers_and_passes_within() {
    let dir = scratch("gates-baseline");
    let m = run_both(&dir);
    fir_manifest(&dir, "fast", "fir.elf", None);
    fir_manifest(&dir, "slow", "fir-rolled.elf", None);
    let out = sim_host(
        &dir,
        &[
            "suite",
            "fast.toml",
            "--write-baseline",
            "base.json",
            "--json",
            "fast.json",
        ],
    );
    assert_eq!(status(&out), 0, "{}", text(&out));
    // the baseline holds what the run measured, and nothing of the host
    let base = json(&dir.join("base.json"));
    assert_eq!(base["format"], "sim-host-baseline");
    let kernel = row(&base["entries"][0]["sections"], &[2, 1]);
    assert_eq!(kernel["name"], "ato_kernel_fir");
    assert_eq!(kernel["total_cycles"], m.fast.1);
    assert!(!read(&dir.join("base.json")).contains("seconds"));

    // the slow build against it
    let gate = [
        "--baseline",
        "base.json",
        "--junit",
        "junit.xml",
        "--summary-md",
        "summary.md",
        "--write-baseline",
        "next.json",
    ];
    let mut args = vec!["suite", "slow.toml"];
    args.extend(gate);
    let out = sim_host(&dir, &args);
    assert_eq!(status(&out), GATE_FAILED, "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains(&format!(
            "OVER     fir: 2 > 1 ato_kernel_fir {}",
            m.numbers()
        )),
        "{said}"
    );
    assert!(
        said.contains("not written, the suite did not pass"),
        "{said}"
    );
    assert!(!dir.join("next.json").exists());
    let junit = read(&dir.join("junit.xml"));
    check_junit(&junit);
    assert!(
        junit.contains(&format!(
            "section 2 &gt; 1 ato_kernel_fir: {} grew past 0%",
            m.numbers().replace('>', "&gt;")
        )),
        "{junit}"
    );
    let summary = read(&dir.join("summary.md"));
    assert!(
        summary.starts_with("### sim-host suite `slow.toml`: FAILED"),
        "{summary}"
    );
    let line = format!(
        "| `fir` | `2 > 1 ato_kernel_fir` | {} | {} | +{} (+{:.1}%) | **over** |",
        m.fast.1,
        m.slow.1,
        m.slow.1 - m.fast.1,
        m.growth()
    );
    assert!(summary.contains(&line), "{line}\n{summary}");

    // within a tolerance above the growth: passes, and writes the next baseline
    let tolerance = format!("{}%", m.growth().ceil() + 1.0);
    args.extend(["--tolerance", &tolerance]);
    let out = sim_host(&dir, &args);
    assert_eq!(status(&out), 0, "{}", text(&out));
    check_junit(&read(&dir.join("junit.xml")));
    let next = json(&dir.join("next.json"));
    assert_eq!(
        row(&next["entries"][0]["sections"], &[2, 1])["total_cycles"],
        m.slow.1
    );

    // a suite result is a baseline too; an entry it lacks is listed, not failed
    let two =
        read(&dir.join("slow.toml")) + &read(&dir.join("slow.toml")).replace("\"fir\"", "\"fir2\"");
    std::fs::write(dir.join("two.toml"), two).unwrap();
    let out = sim_host(
        &dir,
        &[
            "suite",
            "two.toml",
            "--baseline",
            "fast.json",
            "--tolerance",
            &tolerance,
        ],
    );
    assert_eq!(status(&out), 0, "{}", text(&out));
    assert!(
        text(&out).contains("new entry fir2 (not in the baseline)"),
        "{}",
        text(&out)
    );

    // what is not a baseline is refused before anything runs
    std::fs::write(dir.join("bogus.json"), "{\"entries\": 3}").unwrap();
    let out = sim_host(&dir, &["suite", "slow.toml", "--baseline", "bogus.json"]);
    assert_eq!(status(&out), 125, "{}", text(&out));
    assert!(
        text(&out).contains("--baseline bogus.json"),
        "{}",
        text(&out)
    );
}

#[test]
fn budgets_fail_with_the_numbers_and_pass_within() {
    let dir = scratch("gates-budget");
    let m = run_both(&dir);
    let fast_mean = m.fast.1 / m.fast.0;
    let slow_mean = m.slow.1 / m.slow.0;
    let (whole, _) = fir_plain_names();
    let report = json(&dir.join("slow.json"));
    let instructions = row(&report["sections"], &[2, 1])["total_instructions"]
        .as_u64()
        .unwrap();
    // a mean per call between the builds, the whole section's total by
    // its name, the kernel's instructions by its trace
    let budget = format!(
        "{{ ato_kernel_fir = {{ mean_cycles = {} }}, \"{whole}\" = {}, \"2/1\" = {{ instructions = {instructions} }} }}",
        (fast_mean + slow_mean) / 2,
        m.slow.1 * 2,
    );
    fir_manifest(&dir, "fast", "fir.elf", Some(&budget));
    fir_manifest(&dir, "slow", "fir-rolled.elf", Some(&budget));
    let out = sim_host(
        &dir,
        &[
            "suite",
            "fast.toml",
            "--junit",
            "fast.xml",
            "--summary-md",
            "fast.md",
        ],
    );
    assert_eq!(status(&out), 0, "{}", text(&out));
    check_junit(&read(&dir.join("fast.xml")));
    let out = sim_host(
        &dir,
        &[
            "suite",
            "slow.toml",
            "--junit",
            "slow.xml",
            "--json",
            "slow-result.json",
        ],
    );
    assert_eq!(status(&out), GATE_FAILED, "{}", text(&out));
    let over = (slow_mean as f64 - ((fast_mean + slow_mean) / 2) as f64)
        / ((fast_mean + slow_mean) / 2) as f64
        * 100.0;
    let message = format!(
        "budget `ato_kernel_fir`: mean_cycles {slow_mean} > {} (+{over:.1}%)",
        (fast_mean + slow_mean) / 2
    );
    assert!(text(&out).contains(&message), "{message}\n{}", text(&out));
    // the entry itself passed: the budget fails the gate, not the entry
    let result = json(&dir.join("slow-result.json"));
    assert_eq!(result["entries"][0]["passed"], true);
    let budgets = result["entries"][0]["budgets"].as_array().unwrap();
    assert_eq!(budgets.len(), 3);
    assert!(
        budgets.iter().filter(|b| b["passed"] == true).count() == 2,
        "{budgets:?}"
    );
    // one JUnit test case per entry and per budgeted section
    let junit = read(&dir.join("slow.xml"));
    check_junit(&junit);
    assert!(junit.contains("tests=\"4\" failures=\"1\""), "{junit}");
    assert!(junit.contains(&message.replace('>', "&gt;")), "{junit}");

    // a budgeted section that never ran fails, named
    fir_manifest(&dir, "typo", "fir.elf", Some("{ ato_kernel_fri = 1 }"));
    let out = sim_host(&dir, &["suite", "typo.toml"]);
    assert_eq!(status(&out), GATE_FAILED, "{}", text(&out));
    assert!(
        text(&out).contains("budget `ato_kernel_fri`: no section of this name or path ran"),
        "{}",
        text(&out)
    );
    // a malformed budget is a manifest error naming the entry and field
    fir_manifest(
        &dir,
        "bad",
        "fir.elf",
        Some("{ ato_kernel_fir = { cylces = 1 } }"),
    );
    let out = sim_host(&dir, &["suite", "bad.toml"]);
    assert_eq!(status(&out), 125, "{}", text(&out));
    assert!(
        text(&out)
            .contains("entry 1 (fir): field `budget`: `ato_kernel_fir`: unknown limit `cylces`"),
        "{}",
        text(&out)
    );
}

/// Shards of a two-entry manifest merged with the gates: the merge runs
/// nothing (the guests are gone by then) and gates the whole.
#[test]
fn merged_shards_are_gated_without_running_anything_again() {
    let dir = scratch("gates-merge");
    let m = run_both(&dir);
    let entry = |name: &str, elf: &str| {
        format!("[[entry]]\nname = \"{name}\"\nelf = \"{elf}\"\ntarget = \"cortex-m4\"\n")
    };
    std::fs::write(
        dir.join("fast.toml"),
        entry("a", "fir.elf") + &entry("b", "fir.elf"),
    )
    .unwrap();
    let out = sim_host(
        &dir,
        &["suite", "fast.toml", "--write-baseline", "base.json"],
    );
    assert_eq!(status(&out), 0, "{}", text(&out));
    std::fs::write(
        dir.join("m.toml"),
        entry("a", "fir.elf") + &entry("b", "fir-rolled.elf"),
    )
    .unwrap();
    for k in ["1/2", "2/2"] {
        let out = sim_host(&dir, &["suite", "m.toml", "--shard", k, "--out", "results"]);
        assert_eq!(status(&out), 0, "{}", text(&out));
    }
    let out = sim_host(
        &dir,
        &[
            "suite",
            "m.toml",
            "--shard",
            "1/2",
            "--write-baseline",
            "x.json",
        ],
    );
    assert_eq!(
        status(&out),
        125,
        "a shard's baseline would be partial: {}",
        text(&out)
    );
    for elf in ["fir.elf", "fir-rolled.elf"] {
        std::fs::remove_file(dir.join(elf)).unwrap();
    }
    let out = sim_host(
        &dir,
        &[
            "suite",
            "merge",
            "results/shard-1-of-2.json",
            "results/shard-2-of-2.json",
            "-o",
            "all.json",
            "--baseline",
            "base.json",
            "--junit",
            "junit.xml",
            "--summary-md",
            "summary.md",
        ],
    );
    assert_eq!(status(&out), GATE_FAILED, "{}", text(&out));
    assert!(
        text(&out).contains(&format!("OVER     b: 2 > 1 ato_kernel_fir {}", m.numbers())),
        "{}",
        text(&out)
    );
    assert!(!text(&out).contains("OVER     a:"), "{}", text(&out));
    check_junit(&read(&dir.join("junit.xml")));
    assert!(read(&dir.join("summary.md")).contains("| `b` | `2 > 1 ato_kernel_fir` |"));
}

// ---------------------------------------------------------------------
// The JUnit XML schemas

/// An element of a parsed XML document.
#[derive(Debug, Default)]
struct Element {
    name: String,
    attributes: Vec<(String, String)>,
    children: Vec<Element>,
    text: String,
}

impl Element {
    fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses `xml` with quick-xml (a well-formed document, or the test fails).
fn parse_xml(xml: &str) -> Element {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut stack: Vec<Element> = vec![Element::default()];
    let open = |e: &quick_xml::events::BytesStart| Element {
        name: String::from_utf8(e.name().as_ref().to_vec()).unwrap(),
        attributes: e
            .attributes()
            .map(|a| {
                let a = a.expect("a well-formed attribute");
                (
                    String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                    a.unescape_value()
                        .expect("a well-formed value")
                        .into_owned(),
                )
            })
            .collect(),
        ..Element::default()
    };
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) => stack.push(open(&e)),
            Event::Empty(e) => {
                let element = open(&e);
                stack.last_mut().unwrap().children.push(element);
            }
            Event::End(_) => {
                let done = stack.pop().unwrap();
                stack.last_mut().unwrap().children.push(done);
            }
            Event::Text(t) => {
                let t = t.decode().expect("text").into_owned();
                let t = quick_xml::escape::unescape(&t)
                    .expect("entities")
                    .into_owned();
                stack.last_mut().unwrap().text += &t;
            }
            Event::GeneralRef(r) => {
                let name = r.decode().expect("a reference").into_owned();
                let reference = format!("&{name};");
                let t = quick_xml::escape::unescape(&reference).expect("an entity");
                stack.last_mut().unwrap().text += &t;
            }
            Event::CData(_) | Event::Comment(_) | Event::Decl(_) | Event::PI(_) => {}
            Event::DocType(_) => panic!("a JUnit report has no DOCTYPE"),
            Event::Eof => break,
        }
    }
    let mut document = stack.pop().unwrap();
    assert!(stack.is_empty(), "unclosed elements");
    assert_eq!(document.children.len(), 1, "one root element");
    document.children.pop().unwrap()
}

fn is_int(v: &str) -> bool {
    v.parse::<i32>().is_ok()
}

/// `xs:decimal`, and Jenkins' SUREFIRE_TIME (digits, an optional fraction).
fn is_time(v: &str) -> bool {
    let (whole, fraction) = v.split_once('.').unwrap_or((v, ""));
    !whole.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && fraction.bytes().all(|b| b.is_ascii_digit())
}

/// `xs:token` of at least one character.
fn is_token(v: &str) -> bool {
    !v.is_empty() && v.trim() == v && !v.contains("  ") && !v.contains(['\t', '\n', '\r'])
}

/// Ant's ISO8601_DATETIME_PATTERN: `YYYY-MM-DDTHH:MM:SS`, no zone.
fn is_timestamp(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() == 19
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            _ => c.is_ascii_digit(),
        })
}

/// `e`'s attributes are among `allowed` and hold every one of `required`.
fn check_attributes(e: &Element, allowed: &[&str], required: &[&str]) {
    for (name, _) in &e.attributes {
        assert!(
            allowed.contains(&name.as_str()),
            "<{}> may not have `{name}`",
            e.name
        );
    }
    for name in required {
        assert!(e.attribute(name).is_some(), "<{}> needs `{name}`", e.name);
    }
}

/// Checks a JUnit report against the rules of the two schemas CI systems
/// read, taken from their XSDs: the Apache Ant JUnit schema
/// (github.com/windyroad/JUnit-Schema, `JUnit.xsd`), and Jenkins' (the
/// xunit plugin's `junit-10.xsd`, github.com/jenkinsci/xunit-plugin,
/// src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/). A
/// document valid against both is read by Jenkins, GitLab and the GitHub
/// test-report actions. Checked: the element tree and the order of
/// children, at most one outcome per test case, the attributes each element
/// may and must have and their types, and that the counts add up.
fn check_junit(xml: &str) {
    let root = parse_xml(xml);
    // Ant: <testsuites> declares no attribute; it holds only test suites
    assert_eq!(root.name, "testsuites");
    assert!(
        root.attributes.is_empty(),
        "Ant's <testsuites> has no attributes"
    );
    assert!(!root.children.is_empty());
    for (id, suite) in root.children.iter().enumerate() {
        assert_eq!(suite.name, "testsuite");
        // Jenkins allows these; Ant requires these (package and id in an
        // aggregated document)
        check_attributes(
            suite,
            &[
                "name",
                "tests",
                "failures",
                "errors",
                "group",
                "time",
                "skipped",
                "timestamp",
                "hostname",
                "id",
                "package",
                "file",
                "log",
                "url",
            ],
            &[
                "name",
                "timestamp",
                "hostname",
                "tests",
                "failures",
                "errors",
                "time",
                "package",
                "id",
            ],
        );
        let a = |n: &str| suite.attribute(n).unwrap();
        assert!(is_token(a("name")) && is_token(a("hostname")) && is_token(a("package")));
        assert!(is_timestamp(a("timestamp")), "timestamp {}", a("timestamp"));
        assert!(is_time(a("time")), "time {}", a("time"));
        for n in ["tests", "failures", "errors"] {
            assert!(is_int(a(n)), "{n} {}", a(n));
        }
        assert_eq!(a("id"), id.to_string(), "Ant: ids count from 0");
        if let Some(s) = suite.attribute("skipped") {
            assert!(is_int(s));
        }
        // Ant: properties, test cases, system-out, system-err, in that order
        let names: Vec<&str> = suite.children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names.first(), Some(&"properties"), "{names:?}");
        assert_eq!(
            &names[names.len() - 2..],
            ["system-out", "system-err"],
            "{names:?}"
        );
        let cases = &suite.children[1..suite.children.len() - 2];
        for p in &suite.children[0].children {
            assert_eq!(p.name, "property");
            check_attributes(p, &["name", "value"], &["name", "value"]);
            assert!(is_token(p.attribute("name").unwrap()));
        }
        for out in &suite.children[suite.children.len() - 2..] {
            assert!(out.children.is_empty() && out.attributes.is_empty());
        }
        let (mut failures, mut errors) = (0, 0);
        for case in cases {
            assert_eq!(case.name, "testcase");
            check_attributes(
                case,
                &["name", "classname", "time", "group"],
                &["name", "classname", "time"],
            );
            assert!(is_token(case.attribute("name").unwrap()), "{case:?}");
            assert!(is_token(case.attribute("classname").unwrap()), "{case:?}");
            assert!(is_time(case.attribute("time").unwrap()), "{case:?}");
            // Ant: a choice of at most one of skipped, error, failure
            assert!(case.children.len() <= 1, "{case:?}");
            for outcome in &case.children {
                match outcome.name.as_str() {
                    "failure" => failures += 1,
                    "error" => errors += 1,
                    "skipped" => {}
                    other => panic!("<testcase> may not hold <{other}>"),
                }
                check_attributes(outcome, &["type", "message"], &["type"]);
                assert!(outcome.children.is_empty(), "text only: {outcome:?}");
            }
        }
        assert_eq!(a("tests"), cases.len().to_string());
        assert_eq!(a("failures"), failures.to_string());
        assert_eq!(a("errors"), errors.to_string());
    }
}

#[test]
fn the_junit_check_refuses_what_the_schemas_refuse() {
    let good = "<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"s\" package=\"p\" id=\"0\" \
        timestamp=\"2026-01-02T03:04:05\" hostname=\"h\" tests=\"1\" failures=\"1\" errors=\"0\" time=\"0.5\">\
        <properties/><testcase name=\"a b\" classname=\"c\" time=\"0.000\"><failure type=\"t\" \
        message=\"1 &gt; 0\">x &amp; y</failure></testcase><system-out>o</system-out><system-err/>\
        </testsuite></testsuites>";
    check_junit(good);
    for (bad, why) in [
        (
            good.replace("<testsuites>", "<testsuites name=\"x\">"),
            "Ant's testsuites",
        ),
        (good.replace(" hostname=\"h\"", ""), "hostname"),
        (
            good.replace("2026-01-02T03:04:05", "2026-01-02T03:04:05Z"),
            "timestamp",
        ),
        (good.replace("time=\"0.5\"", "time=\"1e3\""), "time"),
        (good.replace(" type=\"t\"", ""), "type"),
        (good.replace("failures=\"1\"", "failures=\"0\""), "failures"),
        (good.replace("<system-err/>", ""), "system-err"),
        (
            good.replace("classname=\"c\"", "classname=\"c\" assertions=\"1\""),
            "assertions",
        ),
        (
            good.replace("</failure>", "</failure><error type=\"e\"/>"),
            "at most one",
        ),
    ] {
        let failed = std::panic::catch_unwind(|| check_junit(&bad)).is_err();
        assert!(failed, "accepted without {why}: {bad}");
    }
}

/// The JUnit schema of `tests/schemas/junit.xsd`: the Ant JUnit report's
/// structure and types with only what Jenkins' schema also accepts.
fn junit_xsd() -> PathBuf {
    repo_root().join("tests/schemas/junit.xsd")
}

/// Validates the JUnit file `path` against [`junit_xsd`] with xmllint:
/// its error (file, line, element, attribute) when it is not valid.
fn xmllint(path: &Path) -> Result<(), String> {
    let out = Command::new("xmllint")
        .arg("--noout")
        .arg("--schema")
        .arg(junit_xsd())
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .expect("xmllint runs");
    if out.status.success() {
        Ok(())
    } else {
        Err(text(&out))
    }
}

/// Every kind of JUnit report the suite writes (all passed; an entry
/// failed; a baseline's section and a budget over their limits; names
/// with XML's markup characters) validates against the JUnit XSD with
/// xmllint, and the XSD refuses what the schemas refuse.
#[test]
#[cfg_attr(
    not(has_xmllint),
    ignore = "needs xmllint (libxml2-utils; scripts/bootstrap.sh installs it)"
)]
fn junit_reports_validate_against_the_junit_xsd_with_xmllint() {
    e2e_tests::require_tool("xmllint");
    let dir = scratch("gates-junit-xsd");
    copy_fir(&dir, "cortex-m4");
    let budget = "{ ato_kernel_fir = { mean_cycles = 1 }, \"2/1\" = { instructions = 1000000000 }, \"ato_<&>\" = 5 }";
    fir_manifest(&dir, "fast", "fir.elf", None);
    fir_manifest(&dir, "slow", "fir-rolled.elf", Some(budget));
    // an entry whose output differs, named with markup characters
    let odd = read(&dir.join("slow.toml")).replace("\"fir\"", "\"fir <&> \\\"q\\\" 'a'\"");
    std::fs::write(dir.join("bad.txt"), "not what fir prints\n").unwrap();
    let odd = odd
        .lines()
        .map(|l| {
            if l.starts_with("expected_output") {
                format!("expected_output = \"{}\"", dir.join("bad.txt").display())
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.join("odd.toml"), odd + "\n").unwrap();

    let out = sim_host(
        &dir,
        &[
            "suite",
            "fast.toml",
            "--write-baseline",
            "base.json",
            "--junit",
            "pass.xml",
        ],
    );
    assert_eq!(status(&out), 0, "{}", text(&out));
    let out = sim_host(
        &dir,
        &[
            "suite",
            "slow.toml",
            "--baseline",
            "base.json",
            "--junit",
            "gate.xml",
        ],
    );
    assert_eq!(status(&out), GATE_FAILED, "{}", text(&out));
    let out = sim_host(&dir, &["suite", "odd.toml", "--junit", "failed.xml"]);
    assert_eq!(status(&out), 1, "{}", text(&out));

    for (file, failures) in [("pass.xml", 0), ("gate.xml", 3), ("failed.xml", 3)] {
        let path = dir.join(file);
        if let Err(e) = xmllint(&path) {
            panic!("{file} is not valid JUnit XML:\n{e}\n{}", read(&path));
        }
        let xml = read(&path);
        check_junit(&xml);
        assert!(
            xml.contains(&format!("failures=\"{failures}\"")),
            "{file}: {failures} failures expected:\n{xml}"
        );
    }
    let failed = read(&dir.join("failed.xml"));
    assert!(
        failed.contains("fir &lt;&amp;&gt; &quot;q&quot; &apos;a&apos;"),
        "{failed}"
    );

    // what the schemas refuse, the XSD refuses, naming where
    let good = read(&dir.join("gate.xml"));
    for (bad, why) in [
        (
            good.replacen("<testsuites>", "<testsuites name=\"x\">", 1),
            "attribute 'name'",
        ),
        (good.replacen(" hostname=\"", " host=\"", 1), "hostname"),
        (
            good.replacen("\" hostname=", "Z\" hostname=", 1),
            "timestamp",
        ),
        (good.replacen(" time=\"", " time=\"1e", 1), "time"),
        (good.replacen(" type=\"", " kind=\"", 1), "type"),
        (
            good.replacen("<system-err", "<system-errs", 1).replacen(
                "</system-err>",
                "</system-errs>",
                1,
            ),
            "system-err",
        ),
        (
            good.replacen(" classname=\"", " assertions=\"1\" classname=\"", 1),
            "assertions",
        ),
        (
            good.replacen("</failure>", "</failure><error type=\"e\"/>", 1),
            "error",
        ),
    ] {
        assert_ne!(bad, good, "{why}: the change applies");
        let path = dir.join("bad.xml");
        std::fs::write(&path, &bad).unwrap();
        let refused = xmllint(&path).expect_err(&format!("accepted with {why}: {bad}"));
        assert!(
            refused.contains("bad.xml:") && refused.contains("Schemas validity error"),
            "{why}: {refused}"
        );
    }
}

// ---------------------------------------------------------------------
// Names

#[test]
fn sections_are_named_by_label_else_by_place_in_every_output() {
    let dir = scratch("gates-names");
    copy_fir(&dir, "cortex-m4");
    let (whole, checksum) = fir_plain_names();
    let out = sim_host(
        &dir,
        &[
            "run",
            "fir.elf",
            "--mode",
            "record_all",
            "-o",
            "data.arp",
            "--report-json",
            "r.json",
            "--callgrind",
            "fir.callgrind",
            "--trace-events",
            "trace.json",
        ],
    );
    assert_eq!(status(&out), 0, "{}", text(&out));
    // the report table and JSON
    let table = String::from_utf8_lossy(&out.stderr);
    for row_start in [
        format!("2 {whole} "),
        "2 > 1 ato_kernel_fir ".to_owned(),
        format!("3 {checksum} "),
    ] {
        assert!(
            table.lines().any(|l| l.starts_with(&row_start)),
            "{row_start}: {table}"
        );
    }
    let report = json(&dir.join("r.json"));
    assert_eq!(report["schema_version"], 4);
    assert_eq!(
        row(&report["sections"], &[2, 1])["names"],
        serde_json::json!([whole, "ato_kernel_fir"])
    );
    assert_eq!(
        row(&report["sections"], &[3])["names"],
        serde_json::json!([checksum])
    );
    // callgrind: the sections are frames named so
    let callgrind = read(&dir.join("fir.callgrind"));
    for name in ["ato_kernel_fir", &whole, &checksum] {
        assert!(
            callgrind.contains(&format!(") {name}\n")),
            "{name}: {callgrind}"
        );
    }
    // trace events
    let trace = json(&dir.join("trace.json"));
    let names: std::collections::BTreeSet<&str> = trace["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "B")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [whole.as_str(), checksum.as_str(), "ato_kernel_fir"]
            .into_iter()
            .collect()
    );
    // the arp tools, named from the ELF
    let out = sim_host(&dir, &["arp", "stats", "data.arp", "--elf", "fir.elf"]);
    assert_eq!(status(&out), 0, "{}", text(&out));
    let stats = String::from_utf8_lossy(&out.stdout);
    assert!(
        stats.lines().next().unwrap().ends_with("  section"),
        "{stats}"
    );
    assert!(
        stats
            .lines()
            .any(|l| l.starts_with("2 1 ") && l.ends_with("  ato_kernel_fir")),
        "{stats}"
    );
    assert!(
        stats
            .lines()
            .any(|l| l.starts_with("3 ") && l.ends_with(&format!("  {checksum}"))),
        "{stats}"
    );
    let out = sim_host(&dir, &["arp", "dump", "data.arp", "--elf", "fir.elf"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("2@0 1@0 ato_kernel_fir "),
        "{}",
        text(&out)
    );
    for picture in ["plot.svg", "plot.png"] {
        let out = sim_host(
            &dir,
            &["arp", "plot", "data.arp", "--elf", "fir.elf", "-o", picture],
        );
        assert_eq!(status(&out), 0, "{}", text(&out));
    }
    let svg = read(&dir.join("plot.svg"));
    assert!(
        svg.contains(">ato_kernel_fir<") && svg.contains(&format!(">{checksum}<")),
        "{svg}"
    );
    assert!(std::fs::read(dir.join("plot.png"))
        .unwrap()
        .starts_with(b"\x89PNG"));
    // the suite's JSON and CSV
    fir_manifest(&dir, "m", "fir.elf", None);
    let out = sim_host(
        &dir,
        &["suite", "m.toml", "--json", "s.json", "--csv", "s.csv"],
    );
    assert_eq!(status(&out), 0, "{}", text(&out));
    let suite = json(&dir.join("s.json"));
    assert_eq!(suite["schema_version"], 5); // issue 45: clock_hz, self_cycles
    assert_eq!(
        row(&suite["entries"][0]["sections"], &[2, 1])["names"],
        serde_json::json!([whole, "ato_kernel_fir"])
    );
    let csv = read(&dir.join("s.csv"));
    assert!(
        csv.lines().next().unwrap().ends_with(",section_names"),
        "{csv}"
    );
    assert!(
        csv.contains(&format!("2={whole};2/1=ato_kernel_fir;3={checksum}")),
        "{csv}"
    );
}

/// Runs `program` in `dir` with HOME there and nothing of this build's
/// cargo in its environment (rustup and cargo keep their homes).
fn clean_command(dir: &Path, program: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir)
        .env("HOME", dir.join("home"))
        .env("XDG_DATA_HOME", dir.join("home/data"));
    for var in ["RUSTUP_HOME", "CARGO_HOME"] {
        let default = std::env::var("HOME").map(|h| {
            Path::new(&h).join(if var == "RUSTUP_HOME" {
                ".rustup"
            } else {
                ".cargo"
            })
        });
        if let Some(v) = std::env::var_os(var).or_else(|| default.ok().map(Into::into)) {
            cmd.env(var, v);
        }
    }
    for (key, _) in std::env::vars() {
        if key.starts_with("CARGO_") && key != "CARGO_HOME" {
            cmd.env_remove(key);
        }
    }
    cmd.env_remove("SIM_HOST_SDK_DIR");
    cmd
}

/// A Rust guest (`sim-host new --lang rust`, whose sections have no
/// labels: Rust has none) is named by the function and line of each
/// enter call, the same in the report and from the ELF alone.
#[test]
#[cfg_attr(
    not(has_rust_thumbv7em),
    ignore = "needs the Rust target thumbv7em-none-eabi (scripts/bootstrap.sh adds it)"
)]
fn a_rust_guest_s_sections_are_named_by_function_and_line() {
    e2e_tests::require_rust_target("thumbv7em-none-eabi");
    let dir = scratch("gates-names-rust");
    std::fs::create_dir_all(dir.join("home")).unwrap();
    let out = clean_command(&dir, sim_host_bin().to_str().unwrap())
        .args(["new", "rnames", "--target", "cortex-m4", "--lang", "rust"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let project = dir.join("rnames");
    let out = clean_command(&project, "cargo")
        .args(["build", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let elf = project.join("target/thumbv7em-none-eabi/debug/rnames");
    let elf = elf.to_str().unwrap();
    let out = sim_host(
        &dir,
        &[
            "run",
            "-q",
            "--target",
            "cortex-m4",
            elf,
            "-o",
            "data.arp",
            "--report-json",
            "r.json",
        ],
    );
    assert_eq!(status(&out), 0, "{}", text(&out));
    let source = read(&project.join("src/main.rs"));
    let line = |code: &str| 1 + source.lines().position(|l| l.contains(code)).unwrap();
    // the innermost function that is not the ARP API's own: main, or the
    // closure main passes to arp_guest::section for the kernel's call
    let function = "rnames::__cortex_m_rt_main";
    let section = format!("{function} (main.rs:{})", line("arp_guest::section(1, 2"));
    let kernel_place = format!(" (main.rs:{})", line("arp_guest::kernel(1, 1"));
    let report = json(&dir.join("r.json"));
    let names = &row(&report["sections"], &[2, 1])["names"];
    assert_eq!(names[0], section.as_str(), "{names}");
    let kernel = names[1].as_str().unwrap().to_owned();
    assert!(
        kernel.starts_with(function) && kernel.ends_with(&kernel_place),
        "{kernel}"
    );
    let out = sim_host(&dir, &["arp", "stats", "data.arp", "--elf", elf]);
    let stats = String::from_utf8_lossy(&out.stdout);
    assert!(
        stats
            .lines()
            .any(|l| l.starts_with("2 1 ") && l.ends_with(&format!("  {kernel}"))),
        "{stats}"
    );
}

// ---------------------------------------------------------------------
// docs/ci.md

/// The block after `<!-- test: NAME -->` in docs/ci.md.
fn ci_block(name: &str) -> String {
    let doc = read(&repo_root().join("docs/ci.md"));
    let marker = format!("<!-- test: {name} -->");
    let after = &doc[doc.find(&marker).unwrap_or_else(|| panic!("no {marker}"))..];
    let body = &after[after.find("```").unwrap()..];
    let body = &body[body.find('\n').unwrap() + 1..];
    body[..body.find("```").unwrap()].to_owned()
}

/// The indentation of a line.
fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// A YAML scalar or block (`|`) after `key:` at line `i`: the command and
/// the index of the next line.
fn yaml_value(lines: &[&str], i: usize, value: &str) -> (String, usize) {
    if value.trim() != "|" {
        return (value.trim().to_owned(), i + 1);
    }
    let own = indent(lines[i]);
    let mut j = i + 1;
    let mut block = Vec::new();
    while j < lines.len() && (lines[j].trim().is_empty() || indent(lines[j]) > own) {
        block.push(lines[j]);
        j += 1;
    }
    let cut = block
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    let text: Vec<&str> = block.iter().map(|l| l.get(cut..).unwrap_or("")).collect();
    (text.join("\n"), j)
}

/// The `run:` commands of a GitHub Actions workflow, in order.
fn github_commands(yaml: &str) -> Vec<String> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut commands = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let key = lines[i].trim_start().trim_start_matches("- ");
        if let Some(value) = key.strip_prefix("run:") {
            let (command, next) = yaml_value(&lines, i, value);
            commands.push(command);
            i = next;
        } else {
            i += 1;
        }
    }
    commands
}

/// The commands of a GitLab job: `before_script`, `script`, `after_script`.
fn gitlab_commands(yaml: &str) -> Vec<String> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut commands = Vec::new();
    for section in ["before_script:", "script:", "after_script:"] {
        let start = lines
            .iter()
            .position(|l| l.trim() == section)
            .unwrap_or_else(|| panic!("no {section}"));
        let own = indent(lines[start]);
        let mut i = start + 1;
        while i < lines.len() && indent(lines[i]) > own {
            let item = lines[i]
                .trim_start()
                .strip_prefix("- ")
                .expect("a list item");
            let (command, next) = yaml_value(&lines, i, item);
            commands.push(command);
            i = next;
        }
    }
    commands
}

/// A scratch copy of the checkout: a link to every top-level entry of the
/// repository but `target` and `.git`, so what the commands write stays in
/// the scratch folder (the guests are built where the tests build them).
fn checkout(dir: &Path) -> PathBuf {
    let root = dir.join("checkout");
    std::fs::create_dir_all(&root).unwrap();
    for entry in std::fs::read_dir(repo_root()).unwrap().flatten() {
        let name = entry.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), root.join(&name)).unwrap();
    }
    root
}

/// Runs each command in `sh -e` in `checkout`, with `cargo install`
/// installing into `dir/cargo` (reusing this build's target folder) and
/// that on PATH; machine set-up (`apt-get`) is not run.
fn run_ci(dir: &Path, checkout: &Path, commands: &[String], env: &[(&str, &Path)]) {
    let root = dir.join("cargo");
    let (profile, _) = build_dirs();
    let path = format!(
        "{}:{}:{}",
        dir.join("bin").display(),
        root.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = 0;
    for command in commands {
        if command.starts_with("apt-get ") {
            continue;
        }
        let mut sh = clean_command(checkout, "sh");
        sh.arg("-e")
            .arg("-c")
            .arg(command)
            .env("PATH", &path)
            .env("CARGO_INSTALL_ROOT", &root)
            .env("CARGO_TARGET_DIR", profile.parent().unwrap())
            .env("CARGO_NET_OFFLINE", "true");
        for (k, v) in env {
            sh.env(k, v);
        }
        let out = sh.output().unwrap();
        assert!(out.status.success(), "`{command}`: {}", text(&out));
        ran += 1;
    }
    assert!(ran >= 3, "{commands:?}");
    assert!(
        root.join("bin/sim-host").exists(),
        "the job installs sim-host: {commands:?}"
    );
}

/// What both jobs leave: a passing summary, a JUnit report that keeps to
/// the schemas, and the next baseline, equal to the committed one.
fn check_ci_outputs(checkout: &Path) {
    let summary = read(&checkout.join("summary.md"));
    assert!(
        summary.starts_with("### sim-host suite `suites/ci.toml`: passed"),
        "{summary}"
    );
    assert!(summary.contains("tolerance 0%"), "{summary}");
    check_junit(&read(&checkout.join("junit.xml")));
    assert_eq!(
        read(&checkout.join("next-baseline.json")),
        read(&repo_root().join("suites/ci-baseline.json")),
        "the committed baseline is current"
    );
}

#[test]
fn the_github_job_of_docs_ci_md_runs_as_written() {
    let yaml = ci_block("github");
    let commands = github_commands(&yaml);
    assert!(
        commands.iter().any(|c| c.contains("--junit junit.xml")),
        "{commands:?}"
    );
    // the JUnit action reads the file the suite writes, and may publish
    // its check run (a token is read-only by default)
    assert!(yaml.contains("report_paths: junit.xml"), "{yaml}");
    assert!(yaml.contains("checks: write"), "{yaml}");
    let dir = scratch("gates-ci-github");
    let checkout = checkout(&dir);
    let step_summary = dir.join("step-summary.md");
    run_ci(
        &dir,
        &checkout,
        &commands,
        &[("GITHUB_STEP_SUMMARY", &step_summary)],
    );
    check_ci_outputs(&checkout);
    assert_eq!(read(&step_summary), read(&checkout.join("summary.md")));
}

#[test]
fn the_gitlab_job_of_docs_ci_md_runs_as_written() {
    let yaml = ci_block("gitlab");
    let commands = gitlab_commands(&yaml);
    assert!(yaml.contains("junit: junit.xml"), "{yaml}");
    let dir = scratch("gates-ci-gitlab");
    let checkout = checkout(&dir);
    // curl: a stand-in recording its arguments and the body it would post
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let posted = dir.join("posted.txt");
    let curl = bin.join("curl");
    std::fs::write(
        &curl,
        "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$POSTED\"\ncat summary.md >> \"$POSTED\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&curl, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mr = PathBuf::from("7");
    let token = PathBuf::from("a-token");
    let api = PathBuf::from("https://gitlab.example/api/v4");
    let project = PathBuf::from("42");
    run_ci(
        &dir,
        &checkout,
        &commands,
        &[
            ("POSTED", &posted),
            ("CI_MERGE_REQUEST_IID", &mr),
            ("GITLAB_TOKEN", &token),
            ("CI_API_V4_URL", &api),
            ("CI_PROJECT_ID", &project),
        ],
    );
    check_ci_outputs(&checkout);
    let posted = read(&posted);
    for part in [
        "PRIVATE-TOKEN: a-token",
        "body@summary.md",
        "https://gitlab.example/api/v4/projects/42/merge_requests/7/notes",
        "### sim-host suite `suites/ci.toml`: passed",
    ] {
        assert!(posted.contains(part), "{part}: {posted}");
    }
}

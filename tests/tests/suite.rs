//! Suites (issue 9): the project's examples as the first manifest,
//! `suites/examples.toml`, run in parallel; manifest errors name the entry
//! and field; a failing entry fails the suite without stopping the others.

use e2e_tests::{guest, repo_root, scratch, sim_host_bin};
use sim_host::tools::suite::{self, Manifest};
use std::process::Command;

fn examples() -> Manifest {
    // builds the guests the manifest points at (build.py skips fresh ones)
    guest("cortex-m4", "filter");
    Manifest::load(&repo_root().join("suites/examples.toml")).unwrap()
}

#[test]
fn examples_suite_passes() {
    let manifest = examples();
    let report = suite::run(&manifest, 4, &Default::default(), &|_, _, _| {});
    let failures: Vec<String> = report
        .entries
        .iter()
        .filter(|e| !e.passed)
        .map(|e| format!("{}: {}", e.name, e.failures.join("; ")))
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(report.entries.len(), manifest.entries.len());
    // manifest order, whatever order the threads finished in
    for (r, e) in report.entries.iter().zip(&manifest.entries) {
        assert_eq!(r.name, e.name);
    }
    let filter = report
        .entries
        .iter()
        .find(|e| e.name == "filter-cortex-m4")
        .unwrap();
    assert!(filter.cycles > 0 && filter.instructions > 0);
    assert!(filter.sections.iter().any(|s| s.path == [8]));
    // the JSON and CSV forms carry every entry
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(
        json["entries"].as_array().unwrap().len(),
        report.entries.len()
    );
    assert_eq!(json["failed"], 0);
    assert_eq!(report.to_csv().lines().count(), report.entries.len() + 1);
}

#[test]
fn a_failing_entry_does_not_stop_the_others() {
    let dir = scratch("suite-fail");
    let elf = guest("cortex-m4", "crash");
    let manifest = dir.join("m.toml");
    std::fs::write(
        &manifest,
        format!(
            "[[entry]]\nname = \"wrong-exit\"\nelf = \"{elf}\"\ntarget = \"cortex-m4\"\nargs = [\"exit\", \"3\"]\n\n\
             [[entry]]\nname = \"right-exit\"\nelf = \"{elf}\"\ntarget = \"cortex-m4\"\nargs = [\"exit\", \"3\"]\nexit_code = 3\n",
            elf = elf.display()
        ),
    )
    .unwrap();
    let m = Manifest::load(&manifest).unwrap();
    let report = suite::run(&m, 2, &Default::default(), &|_, _, _| {});
    assert!(!report.entries[0].passed);
    assert!(report.entries[0].failures[0].contains("exit status 3, expected 0"));
    assert!(report.entries[1].passed);
    assert_eq!((report.passed, report.failed), (1, 1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn manifest_errors_name_entry_and_field() {
    let dir = scratch("suite-errors");
    let elf = guest("cortex-m4", "filter");
    let cases = [
        (
            "name = \"a\"\ntarget = \"cortex-m4\"\n",
            "entry 2 (a)",
            "missing field `elf`",
        ),
        (
            "name = \"b\"\nelf = \"ELF\"\ntarget = \"cortex-m9\"\n",
            "entry 2 (b)",
            "field `target`",
        ),
        (
            "name = \"c\"\nelf = \"nope.elf\"\ntarget = \"cortex-m4\"\n",
            "entry 2 (c)",
            "field `elf`",
        ),
        (
            "name = \"d\"\nelf = \"ELF\"\ntarget = \"cortex-m4\"\ncores = \"2\"\n",
            "entry 2 (d)",
            "cores",
        ),
        (
            "name = \"e\"\nelf = \"ELF\"\ntarget = \"cortex-m4\"\nexpected = 1\n",
            "entry 2 (e)",
            "unknown field `expected`",
        ),
        (
            "name = \"f\"\nelf = \"ELF\"\ntarget = \"cortex-m4\"\nexpected_output = \"none.txt\"\n",
            "entry 2 (f)",
            "field `expected_output`",
        ),
        (
            "name = \"g\"\nelf = \"ELF\"\ntarget = \"cortex-m4\"\nmode = \"fast\"\n",
            "entry 2 (g)",
            "field `mode`",
        ),
    ];
    for (body, entry, what) in cases {
        let text = format!(
            "[[entry]]\nname = \"ok\"\nelf = \"ELF\"\ntarget = \"cortex-m4\"\n\n[[entry]]\n{body}"
        )
        .replace("ELF", &elf.display().to_string());
        let path = dir.join("m.toml");
        std::fs::write(&path, text).unwrap();
        let e = Manifest::load(&path).unwrap_err().to_string();
        assert!(e.contains(entry) && e.contains(what), "{body}: {e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `sim-host suite` subcommand: its help, a run of the project's
/// manifest with JSON and CSV reports, and a setup error.
#[test]
fn suite_command() {
    let bin = sim_host_bin();
    let help = Command::new(&bin)
        .args(["suite", "--help"])
        .output()
        .unwrap();
    let help_text = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.status.success(),
        "sim-host suite --help: {}",
        String::from_utf8_lossy(&help.stderr)
    );
    for option in ["--json", "--csv", "--jobs", "--shard", "--out"] {
        assert!(help_text.contains(option), "{option}: {help_text}");
    }
    guest("cortex-m4", "filter");
    let dir = scratch("suite-cli");
    let json = dir.join("r.json");
    let csv = dir.join("r.csv");
    let out = Command::new(&bin)
        .arg("suite")
        .arg(repo_root().join("suites/examples.toml"))
        .args(["-j", "2", "--json"])
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("filter-cortex-m4"), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["failed"], 0);
    assert!(std::fs::read_to_string(&csv).unwrap().starts_with("name,"));
    // an unwritable output path is a setup error before anything runs
    let out = Command::new(&bin)
        .arg("suite")
        .arg(repo_root().join("suites/examples.toml"))
        .arg("--json")
        .arg(dir.join("no/such/dir/r.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--json") && err.contains("does not exist"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 25: `suites/mcu.toml`, BENCHMARKS.md's "Which MCU" table, is one
/// matrix per example over the nine built-in cores (accuracy is not built
/// for cortex-m0): 4 x 9 - 1 entries, every one passing, each named
/// `<example>.target=<core>`, the dsp entries with their eight kernel
/// sections (1..4 for N samples, 11..14 for 2N).
#[test]
fn the_mcu_table_suite_runs_every_example_on_every_core() {
    guest("cortex-m4f", "dsp");
    let manifest = Manifest::load(&repo_root().join("suites/mcu.toml")).unwrap();
    // the table compares cores on zero-wait memory: a board preset with a
    // flash accelerator, caches or an XIP cache (stm32f407, stm32f746,
    // rp2040: issue 27) is not one of its columns
    let cores: Vec<String> = sim_host::model::target::builtin_names()
        .into_iter()
        .filter(|n| {
            let t = sim_host::model::target::builtin(n).unwrap();
            t.flash.is_none() && t.l1cache.is_none() && t.xip.is_none()
        })
        .collect();
    assert_eq!(cores.len(), 9);
    assert_eq!(manifest.entries.len(), 4 * 9 - 1);
    let report = suite::run(&manifest, 2, &Default::default(), &|_, _, _| {});
    let failures: Vec<String> = report
        .entries
        .iter()
        .filter(|e| !e.passed)
        .map(|e| format!("{}: {}", e.name, e.failures.join("; ")))
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
    for core in &cores {
        let dsp = report
            .entries
            .iter()
            .find(|e| e.name == format!("dsp.target={core}"))
            .unwrap_or_else(|| panic!("no dsp entry for {core}"));
        let mut sids: Vec<u16> = dsp.sections.iter().map(|s| s.path[0]).collect();
        sids.sort_unstable();
        assert_eq!(sids, [1, 2, 3, 4, 11, 12, 13, 14], "{core}");
    }
}

/// Issue 45: `clock_hz` (per entry, or as a matrix axis) puts an entry's
/// times at a part's clock; its cycles do not change. The long CSV has a
/// row per entry and section with those times. A clock of 0 or one that
/// is not a number is refused naming the file, line and field.
#[test]
fn clock_hz_puts_the_times_at_the_parts_clock() {
    let dir = scratch("suite-clock");
    let elf = guest("cortex-m4", "crash").display().to_string();
    let entry = |extra: &str| {
        format!(
            "[[entry]]\nname = \"x\"\nelf = \"{elf}\"\ntarget = \"cortex-m4\"\n\
             args = [\"exit\", \"7\"]\nexit_code = 7\n{extra}"
        )
    };
    let path = dir.join("m.toml");
    std::fs::write(
        &path,
        entry("matrix = { clock_hz = [25000000, 100000000] }\n"),
    )
    .unwrap();
    let m = Manifest::load(&path).unwrap();
    let report = suite::run(&m, 2, &Default::default(), &|_, _, _| {});
    let [at25, at100] = &report.entries[..] else {
        panic!("{:?}", report.entries)
    };
    assert_eq!(at25.name, "x.clock_hz=25000000");
    assert!(at25.passed && at100.passed, "{:?}", report.entries);
    assert_eq!(at25.cycles, at100.cycles);
    assert_eq!(at100.clock_hz, Some(100_000_000));
    // cortex-m4's own clock is 25 MHz: the same seconds as without
    assert_eq!(at25.simulated_seconds, at25.cycles as f64 / 25e6);
    assert_eq!(at100.simulated_seconds, at100.cycles as f64 / 1e8);
    let long = suite::long_csv(&report);
    let header: Vec<&str> = long.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let rows: Vec<Vec<&str>> = long
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    // each entry: its whole run, then its one section (crash.c's main)
    assert_eq!(rows.len(), 4, "{long}");
    let section = &rows[3];
    assert_eq!(section[column("entry")], "x.clock_hz=100000000");
    assert_eq!(section[column("section_path")], "2/1");
    let cycles: f64 = section[column("inclusive_cycles")].parse().unwrap();
    let seconds: f64 = section[column("inclusive_seconds")].parse().unwrap();
    assert_eq!(seconds, cycles / 1e8, "{long}");
    assert!(!section[column("self_cycles")].is_empty(), "{long}");
    // bad clocks name the file, the line and the field
    for (bad, what) in [
        ("clock_hz = 0\n", "nonzero"),
        ("clock_hz = \"fast\"\n", "invalid type"),
        ("matrix = { clock_hz = [25000000, 0] }\n", "nonzero"),
    ] {
        std::fs::write(&path, entry(bad)).unwrap();
        let e = Manifest::load(&path).unwrap_err().to_string();
        assert!(
            e.contains(&path.display().to_string())
                && e.contains("line 7")
                && e.contains("clock_hz")
                && e.contains(what),
            "{bad}: {e}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

//! Issue 43, the fourth audit: no output of any command ever names one of
//! its inputs, nor another of its outputs (M04: `suite --junit m.toml`
//! replaced its own manifest, exit 0), and two memory bounds: the
//! distinct section paths of a run are capped (N04) and an endless input
//! costs no more than its cap (N18). Memory is measured in a child process
//! (`e2e_tests::measure`: the peak resident set, `VmHWM`), never timed.

use e2e_tests::measure::{in_child, in_children};
use e2e_tests::process::{sim_host, text};
use e2e_tests::{chips_eval_bin, expected_output, guest, repo_root, scratch};
use sim_host::engine::Stop;
use sim_host::tools::session::{self, RunSpec, TargetSource};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

const MIB: u64 = 1024;

/// A file's bytes and inode: equal before and after means not replaced.
fn fingerprint(path: &Path) -> (Vec<u8>, u64) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (bytes, std::fs::metadata(path).unwrap().ino())
}

/// `args` run in `dir` is refused before anything is written: a non-zero
/// status (`status` when given), a message saying that the output of
/// `option` is the input `input`, and `input` (in `dir`) left as it was.
fn assert_refused(dir: &Path, args: &[&str], status: Option<i32>, option: &str, input: &str) {
    let before = fingerprint(&dir.join(input));
    let out = sim_host(dir, args);
    let said = text(&out);
    match status {
        Some(s) => assert_eq!(out.status.code(), Some(s), "{args:?}: {said}"),
        None => assert!(!out.status.success(), "{args:?}: {said}"),
    }
    assert!(
        said.contains(option) && said.contains(input) && said.contains("is the input"),
        "{args:?}: the message does not name {option} and the input {input}: {said}"
    );
    assert_eq!(
        fingerprint(&dir.join(input)),
        before,
        "{args:?} replaced {input}"
    );
}

/// A suite's folder: `filter.elf`, `exp.txt` (its expected output),
/// `m.toml` (one entry of both) and `base.json` (the baseline of a
/// passing run).
fn suite_dir(name: &str) -> e2e_tests::Scratch {
    let dir = scratch(name);
    std::fs::copy(guest("cortex-m4", "filter"), dir.join("filter.elf")).unwrap();
    std::fs::write(dir.join("exp.txt"), expected_output("filter")).unwrap();
    std::fs::write(
        dir.join("m.toml"),
        "[[entry]]\nname = \"f\"\nelf = \"filter.elf\"\ntarget = \"cortex-m4\"\n\
         expected_output = \"exp.txt\"\n",
    )
    .unwrap();
    let out = sim_host(&dir, &["suite", "m.toml", "--write-baseline", "base.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    dir
}

/// M04: every output of `suite` that names the manifest, an entry's ELF,
/// its expected output or the `--baseline` is refused (exit 125) naming
/// the option and the file, and the input stays as it was.
#[test]
fn no_suite_output_replaces_a_suite_input() {
    let dir = suite_dir("suite-inputs");
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["--write-baseline", "m.toml"],
            "--write-baseline",
            "m.toml",
        ),
        (&["--junit", "m.toml"], "--junit", "m.toml"),
        (&["--summary-md", "m.toml"], "--summary-md", "m.toml"),
        (&["--json", "m.toml"], "--json", "m.toml"),
        (&["--csv", "m.toml"], "--csv", "m.toml"),
        (&["--list", "--json", "m.toml"], "--json", "m.toml"),
        (
            &["--write-baseline", "filter.elf"],
            "--write-baseline",
            "filter.elf",
        ),
        (&["--junit", "filter.elf"], "--junit", "filter.elf"),
        (&["--summary-md", "exp.txt"], "--summary-md", "exp.txt"),
        (
            &["--baseline", "base.json", "--junit", "base.json"],
            "--junit",
            "base.json",
        ),
        (
            &["--baseline", "base.json", "--write-baseline", "base.json"],
            "--write-baseline",
            "base.json",
        ),
    ];
    for (extra, option, input) in cases {
        let mut args = vec!["suite", "m.toml"];
        args.extend_from_slice(extra);
        assert_refused(&dir, &args, Some(125), option, input);
    }
}

/// M04 through other names: a hard link or a symbolic link to an input,
/// an entry's file under `--out` that is a link to the manifest, and a
/// `--balance-from` result; `suite merge` keeps its inputs too.
#[test]
fn a_suite_input_under_another_name_is_refused() {
    let dir = suite_dir("suite-links");
    std::fs::hard_link(dir.join("m.toml"), dir.join("hard.json")).unwrap();
    std::os::unix::fs::symlink("filter.elf", dir.join("soft.xml")).unwrap();
    let m = ["suite", "m.toml"];
    assert_refused(
        &dir,
        &[&m[..], &["--json", "hard.json"]].concat(),
        Some(125),
        "--json",
        "m.toml",
    );
    assert_refused(
        &dir,
        &[&m[..], &["--junit", "soft.xml"]].concat(),
        Some(125),
        "--junit",
        "filter.elf",
    );
    std::fs::create_dir_all(dir.join("out/entries")).unwrap();
    std::os::unix::fs::symlink("../../m.toml", dir.join("out/entries/f.json")).unwrap();
    assert_refused(
        &dir,
        &[&m[..], &["--out", "out"]].concat(),
        Some(125),
        "--out",
        "m.toml",
    );
    std::fs::remove_file(dir.join("out/entries/f.json")).unwrap();
    // a result to balance by is an input as well
    let out = sim_host(&dir, &["suite", "m.toml", "--json", "r.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_refused(
        &dir,
        &[&m[..], &["--balance-from", "r.json", "--csv", "r.json"]].concat(),
        Some(125),
        "--csv",
        "r.json",
    );
    // merge: the baseline it compares with, and the results it merges
    let out = sim_host(&dir, &["suite", "m.toml", "--shard", "1/1", "--out", "res"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::copy(dir.join("res/shard-1-of-1.json"), dir.join("s.json")).unwrap();
    let merge = ["suite", "merge", "s.json"];
    assert_refused(
        &dir,
        &[
            &merge[..],
            &["--baseline", "base.json", "--summary-md", "base.json"],
        ]
        .concat(),
        Some(125),
        "--summary-md",
        "base.json",
    );
    assert_refused(
        &dir,
        &[&merge[..], &["--junit", "s.json"]].concat(),
        Some(125),
        "--junit",
        "s.json",
    );
}

/// Two outputs of one command never name one file: the same path, a
/// symbolic link to the other, or a hard link of it.
#[test]
fn two_outputs_never_name_one_file() {
    let dir = suite_dir("suite-two-outputs");
    std::fs::write(dir.join("a.json"), "old a").unwrap();
    std::fs::hard_link(dir.join("a.json"), dir.join("b.csv")).unwrap();
    std::os::unix::fs::symlink("a.json", dir.join("c.md")).unwrap();
    for (second, file) in [
        ("--csv", "a.json"),
        ("--csv", "b.csv"),
        ("--summary-md", "c.md"),
    ] {
        let args = ["suite", "m.toml", "--json", "a.json", second, file];
        let out = sim_host(&dir, &args);
        let said = text(&out);
        assert_eq!(out.status.code(), Some(125), "{args:?}: {said}");
        assert!(
            said.contains("--json") && said.contains(second),
            "{args:?}: {said}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("a.json")).unwrap(),
            "old a"
        );
    }
    // `run`: its data.arp and its report through a hard link
    let elf = dir.join("filter.elf");
    let elf = elf.to_str().unwrap();
    let out = sim_host(
        &dir,
        &["run", elf, "-q", "-o", "a.json", "--report-json", "b.csv"],
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("the same file"), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(dir.join("a.json")).unwrap(),
        "old a"
    );
}

/// The other commands by the same one check: `run`'s `--svd`, `arp diff
/// --json` over its data.arp, `arp plot` over its `--elf` (a symbolic
/// link), `arp export-extrap` over its `--sir`, `sir generate` over its
/// `--target-file`, `chips-eval run` over its `--hardware`.
#[test]
fn every_command_keeps_its_inputs() {
    let dir = suite_dir("other-commands");
    let run = |args: &[&str]| {
        let out = sim_host(&dir, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
    };
    run(&["run", "filter.elf", "-q", "-o", "a.arp"]);
    run(&["run", "filter.elf", "-q", "-o", "b.arp"]);
    std::fs::write(dir.join("p.svd"), "<device><name>x</name></device>\n").unwrap();
    let r = ["run", "filter.elf", "-q"];
    assert_refused(
        &dir,
        &[&r[..], &["--svd", "p.svd", "-o", "p.svd"]].concat(),
        None,
        "-o",
        "p.svd",
    );
    assert_refused(
        &dir,
        &["arp", "diff", "a.arp", "b.arp", "--json", "a.arp"],
        None,
        "--json",
        "a.arp",
    );
    assert_refused(
        &dir,
        &[
            "arp",
            "diff",
            "a.arp",
            "b.arp",
            "--elf",
            "filter.elf",
            "--json",
            "filter.elf",
        ],
        None,
        "--json",
        "filter.elf",
    );
    std::os::unix::fs::symlink("filter.elf", dir.join("p.svg")).unwrap();
    assert_refused(
        &dir,
        &["arp", "plot", "a.arp", "--elf", "filter.elf", "-o", "p.svg"],
        None,
        "-o",
        "filter.elf",
    );
    let sir = dir.join("s.sir");
    run(&["sir", "generate", "filter.elf", "-o", sir.to_str().unwrap()]);
    assert_refused(
        &dir,
        &[
            "arp",
            "export-extrap",
            "n=1:a.arp",
            "--sir",
            "s.sir",
            "-o",
            "s.sir",
        ],
        None,
        "--output",
        "s.sir",
    );
    std::fs::copy(
        repo_root().join("targets/cortex-m4.toml"),
        dir.join("t.toml"),
    )
    .unwrap();
    assert_refused(
        &dir,
        &[
            "sir",
            "generate",
            "filter.elf",
            "--target-file",
            "t.toml",
            "-o",
            "t.toml",
        ],
        None,
        "-o",
        "t.toml",
    );
    let root = repo_root().join("chips-eval");
    std::fs::copy(
        root.join("hardware/transputer-supercluster.toml"),
        dir.join("hw.toml"),
    )
    .unwrap();
    let before = fingerprint(&dir.join("hw.toml"));
    let out = Command::new(chips_eval_bin())
        .current_dir(&dir)
        .arg("run")
        .arg(root.join("tests/fixtures/memsort/memsort.la"))
        .args([
            "--hardware",
            "hw.toml",
            "--set",
            "Nproc=2",
            "--set",
            "Nelem=64",
        ])
        .args(["--format", "csv", "-o", "hw.toml"])
        .output()
        .unwrap();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("-o hw.toml is the input --hardware"),
        "{said}"
    );
    assert_eq!(
        fingerprint(&dir.join("hw.toml")),
        before,
        "chips-eval replaced hw.toml"
    );
}

fn hostile(args: &[&str]) -> RunSpec {
    let mut spec = RunSpec::new(
        guest("cortex-m4", "hostile"),
        TargetSource::Builtin("cortex-m4".into()),
    );
    spec.guest_args = args.iter().map(|s| s.to_string()).collect();
    spec
}

/// N04: a run holds at most `MAX_SECTION_PATHS` distinct section paths;
/// the next one stops it with an ARP error naming the cap, so 2,000,000
/// paths asked for cost what the cap does (before: 380 bytes a path, 760
/// MB for 2 M, and exit 0).
#[test]
fn distinct_section_paths_are_capped() {
    use arpsim::paths::MAX_SECTION_PATHS;
    let test = "distinct_section_paths_are_capped";
    if let Some(peaks) = in_children(test, &[1_000, 2_000_000], |n| {
        let spec = hostile(&["paths", &n.to_string()]);
        let f = session::execute(&spec, session::prepare(&spec).unwrap()).unwrap();
        if n == 1_000 {
            assert_eq!(f.outcome.stop, Stop::Exit(0));
            return;
        }
        let Stop::Arp(why) = &f.outcome.stop else {
            panic!("not refused: {:?}", f.outcome.stop);
        };
        assert!(
            why.contains(&format!(
                "more than {MAX_SECTION_PATHS} distinct section paths"
            )),
            "{why}"
        );
    }) {
        let (small, large) = (peaks[0], peaks[1]);
        eprintln!("2,000,000 paths asked for: {small} for 1,000, {large}");
        // at most 600 bytes a path up to the cap: the audit measured 380 on
        // average, and hash tables just grown hold more
        let bound = MAX_SECTION_PATHS as u64 * 600 / 1024;
        assert!(
            large.kib <= small.kib + bound,
            "{small} small, {large} large"
        );
    }
}

/// N04: a run that stays within the cap ends as before (`hostile paths
/// N` makes N + ceil(N / 65,000) paths, two levels).
#[test]
fn a_run_up_to_the_path_cap_ends_normally() {
    use arpsim::paths::MAX_SECTION_PATHS;
    let fits = MAX_SECTION_PATHS - MAX_SECTION_PATHS.div_ceil(65_000);
    let spec = hostile(&["paths", &fits.to_string()]);
    let f = session::execute(&spec, session::prepare(&spec).unwrap()).unwrap();
    assert_eq!(
        f.outcome.stop,
        Stop::Exit(0),
        "{fits} paths fit under the cap"
    );
}

/// N18: an endless character device given as the ELF (a private
/// /dev/zero, made in the scratch folder) stops at the 512 MiB cap, and
/// the peak resident set is the cap plus at most 64 MiB (the test
/// process, the target, one read's buffer), not twice the cap as when
/// the reader's buffer doubled past it.
#[test]
#[cfg_attr(
    not(has_mknod),
    ignore = "needs mknod of a device node (CAP_MKNOD: run as root)"
)]
fn an_endless_elf_costs_its_cap_not_twice() {
    let test = "an_endless_elf_costs_its_cap_not_twice";
    let work = || {
        let dir = scratch("endless-elf");
        let zero = dir.join("zero");
        let made = Command::new("mknod")
            .arg(&zero)
            .args(["c", "1", "5"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(made, "needs CAP_MKNOD (run as root) to make a device node");
        let spec = RunSpec::new(zero.clone(), TargetSource::Builtin("cortex-m4".into()));
        let e = format!("{:#}", session::prepare(&spec).unwrap_err());
        assert!(e.contains("larger than 512 MiB"), "{e}");
    };
    if let Some(peak) = in_child(test, work) {
        let cap = sim_host::model::limits::MAX_ELF_BYTES / 1024;
        eprintln!("an endless ELF: {peak}");
        assert!(
            peak.kib <= cap + 64 * MIB,
            "{peak}: more than the cap + 64 MiB"
        );
    }
}

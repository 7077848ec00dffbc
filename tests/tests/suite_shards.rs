//! Suites beyond one machine: matrices expand to named entries, `--shard
//! K/N` runs a deterministic part, `suite merge` puts the parts back
//! together byte for byte (but for host times), bad input is refused with
//! the file and entry named, and the recipes of docs/scale-out.md run as
//! written.

use e2e_tests::process::sim_host;
use e2e_tests::slurm::{Cluster, JobState};
use e2e_tests::{guest, guests_dir, repo_root, require_tool, scratch, sim_host_bin};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

/// A manifest of 8 fast entries (microbench, exits, one filter run) as
/// `suite.toml` in `dir`.
fn write_manifest(dir: &Path) -> PathBuf {
    guest("cortex-m4", "filter");
    let text = format!(
        r#"[[entry]]
name = "micro"
elf = "{g}/{{target}}/microbench.elf"
matrix = {{ target = ["cortex-m4", "rv32imac"], mode = ["record_average", "record_all"] }}

[[entry]]
name = "exit"
elf = "{g}/{{target}}/crash.elf"
exit_code = 3
matrix = {{ target = ["cortex-m0", "cortex-m4", "rv32imac"], args = [["exit", "3"]] }}

[[entry]]
name = "filter"
elf = "{g}/cortex-m4/filter.elf"
target = "cortex-m4"
expected_output = "{e}/filter/expected-output.txt"
"#,
        g = guests_dir().display(),
        e = repo_root().join("guest-shim/examples").display()
    );
    let path = dir.join("suite.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A result's text without its host times (its last key, `host`).
fn deterministic_part(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cut = text
        .find("\n  \"host\": {")
        .unwrap_or_else(|| panic!("{}: no host part", path.display()));
    text[..cut].to_owned()
}

/// A CSV without its host_seconds column.
fn csv_without_host_times(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let column = text
        .lines()
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == "host_seconds")
        .unwrap();
    text.lines()
        .map(|l| {
            let mut fields: Vec<&str> = l.split(',').collect();
            fields.remove(column);
            fields.join(",") + "\n"
        })
        .collect()
}

/// Runs the whole manifest with `-j 1` into `whole.json` / `whole.csv`.
fn run_whole(dir: &Path) {
    let out = sim_host(
        dir,
        &[
            "suite",
            "suite.toml",
            "-j",
            "1",
            "--json",
            "whole.json",
            "--csv",
            "whole.csv",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

fn assert_same_as_whole(dir: &Path, merged: &str, merged_csv: &str) {
    assert_eq!(
        deterministic_part(&dir.join(merged)),
        deterministic_part(&dir.join("whole.json"))
    );
    assert_eq!(
        csv_without_host_times(&dir.join(merged_csv)),
        csv_without_host_times(&dir.join("whole.csv"))
    );
}

fn listed_names(dir: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec!["suite", "suite.toml", "--list", "--json"];
    args.extend(extra);
    let out = sim_host(dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    list["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn list_shows_the_expanded_entries_and_each_shard_a_part() {
    let dir = scratch("shards-list");
    write_manifest(&dir);
    let all = listed_names(&dir, &[]);
    assert_eq!(
        all,
        [
            "micro.target=cortex-m4.mode=record_average",
            "micro.target=cortex-m4.mode=record_all",
            "micro.target=rv32imac.mode=record_average",
            "micro.target=rv32imac.mode=record_all",
            "exit.target=cortex-m0.args=exit_3",
            "exit.target=cortex-m4.args=exit_3",
            "exit.target=rv32imac.args=exit_3",
            "filter",
        ]
    );
    let text = sim_host(&dir, &["suite", "suite.toml", "--list"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert_eq!(text.lines().count(), 10, "{text}"); // a header, 8 entries, what cost is
    assert!(text.contains("exit.target=rv32imac.args=exit_3"), "{text}");
    // the shards are disjoint, cover everything, and are the same every time
    let mut union: Vec<String> = (1..=3)
        .flat_map(|k| listed_names(&dir, &["--shard", &format!("{k}/3")]))
        .collect();
    assert_eq!(
        listed_names(&dir, &["--shard", "2/3"]),
        listed_names(&dir, &["--shard", "2/3"])
    );
    union.sort();
    let mut sorted = all.clone();
    sorted.sort();
    assert_eq!(union, sorted);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn merged_shards_are_the_whole_run_byte_for_byte() {
    let dir = scratch("shards-merge");
    write_manifest(&dir);
    run_whole(&dir);
    for k in 1..=3 {
        let shard = format!("{k}/3");
        let out = sim_host(
            &dir,
            &[
                "suite",
                "suite.toml",
                "--shard",
                &shard,
                "--out",
                "out",
                "-j",
                "2",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let out = sim_host(
        &dir,
        &[
            "suite",
            "merge",
            "out/shard-1-of-3.json",
            "out/shard-3-of-3.json",
            "out/shard-2-of-3.json",
            "-o",
            "all.json",
            "--csv",
            "all.csv",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_same_as_whole(&dir, "all.json", "all.csv");
    // every entry's report, and data.arp where the guest recorded one
    for name in listed_names(&dir, &[]) {
        let report = dir.join("out/entries").join(format!("{name}.json"));
        assert!(report.exists(), "{}", report.display());
    }
    assert!(dir
        .join("out/entries/micro.target=rv32imac.mode=record_all.arp")
        .exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn balance_from_uses_the_recorded_cycles() {
    let dir = scratch("shards-balance");
    write_manifest(&dir);
    run_whole(&dir);
    let out = sim_host(
        &dir,
        &[
            "suite",
            "suite.toml",
            "--list",
            "--json",
            "--balance-from",
            "whole.json",
            "--shard",
            "1/2",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let whole: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("whole.json")).unwrap()).unwrap();
    // the costliest entry (filter) is first into shard 1, with its cycles as cost
    let filter = &list["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "filter")
        .unwrap();
    let cycles = whole["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "filter")
        .unwrap()["cycles"]
        .clone();
    assert_eq!(filter["cost"], cycles);
    // shards split by different estimates cannot be merged
    let balanced = sim_host(
        &dir,
        &[
            "suite",
            "suite.toml",
            "--shard",
            "1/2",
            "--balance-from",
            "whole.json",
            "--out",
            "b",
        ],
    );
    let plain = sim_host(
        &dir,
        &["suite", "suite.toml", "--shard", "2/2", "--out", "b"],
    );
    assert_eq!(
        (balanced.status.code(), plain.status.code()),
        (Some(0), Some(0))
    );
    let out = sim_host(
        &dir,
        &[
            "suite",
            "merge",
            "b/shard-1-of-2.json",
            "b/shard-2-of-2.json",
            "-o",
            "all.json",
        ],
    );
    assert_eq!(out.status.code(), Some(125));
    assert!(
        stderr(&out).contains("b/shard-2-of-2.json: split differently"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.join("all.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_shards_and_results_are_refused_naming_file_and_entry() {
    let dir = scratch("shards-bad");
    write_manifest(&dir);
    for bad in ["0/4", "5/4", "x/4"] {
        let out = sim_host(&dir, &["suite", "suite.toml", "--shard", bad]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(stderr(&out).contains(bad), "{}", stderr(&out));
    }
    for k in ["1/2", "2/2"] {
        let out = sim_host(
            &dir,
            &["suite", "suite.toml", "--shard", k, "--out", "a", "-j", "2"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    // another manifest: one entry less
    let other = std::fs::read_to_string(dir.join("suite.toml"))
        .unwrap()
        .replace(r#", "rv32imac"], args"#, "], args");
    std::fs::create_dir(dir.join("o")).unwrap();
    std::fs::write(dir.join("o/suite.toml"), other).unwrap();
    let out = sim_host(
        &dir.join("o"),
        &["suite", "suite.toml", "--shard", "2/2", "--out", "b"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::write(dir.join("all.json"), "kept\n").unwrap();
    std::fs::write(
        dir.join("corrupt.json"),
        "{\"schema_version\": 2, \"entries\": [",
    )
    .unwrap();
    let cases: [(&[&str], i32, &str); 5] = [
        (
            &["a/shard-1-of-2.json", "o/b/shard-2-of-2.json"],
            125,
            "o/b/shard-2-of-2.json: of another manifest than a/shard-1-of-2.json",
        ),
        (
            &[
                "a/shard-1-of-2.json",
                "a/shard-2-of-2.json",
                "a/shard-2-of-2.json",
            ],
            124,
            "shard 2/2: given 2 times",
        ),
        (
            &["a/shard-1-of-2.json"],
            124,
            "shard 2/2: no result file given",
        ),
        (
            &["a/shard-1-of-2.json", "corrupt.json"],
            125,
            "corrupt.json: not a suite result",
        ),
        (
            &["a/shard-1-of-2.json", "missing.json"],
            125,
            "missing.json: cannot read",
        ),
    ];
    for (files, status, message) in cases {
        let mut args = vec!["suite", "merge", "-o", "all.json"];
        args.extend(files);
        let out = sim_host(&dir, &args);
        assert_eq!(
            out.status.code(),
            Some(status),
            "{files:?}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains(message),
            "{files:?}: {}",
            stderr(&out)
        );
        // nothing overwritten when the merge fails
        assert_eq!(
            std::fs::read_to_string(dir.join("all.json")).unwrap(),
            "kept\n"
        );
    }
    // the missing entries are named
    let out = sim_host(&dir, &["suite", "merge", "a/shard-1-of-2.json"]);
    let shard2 = listed_names(&dir, &["--shard", "2/2"]);
    assert!(
        shard2.iter().all(|n| stderr(&out).contains(n.as_str())),
        "{}",
        stderr(&out)
    );
    // an output that is one of the inputs
    let out = sim_host(
        &dir,
        &[
            "suite",
            "merge",
            "a/shard-1-of-2.json",
            "a/shard-2-of-2.json",
            "-o",
            "a/shard-1-of-2.json",
        ],
    );
    assert_eq!(out.status.code(), Some(125));
    assert!(
        stderr(&out).contains("is the input result file"),
        "{}",
        stderr(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The shell block after `<!-- test: NAME -->` in docs/scale-out.md.
fn recipe(name: &str) -> String {
    let doc = std::fs::read_to_string(repo_root().join("docs/scale-out.md")).unwrap();
    let marker = format!("<!-- test: {name} -->");
    let after = &doc[doc.find(&marker).unwrap_or_else(|| panic!("no {marker}"))..];
    let start = after.find("```").unwrap();
    let body = &after[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    body[..body.find("```").unwrap()].to_owned()
}

/// A shell in `dir` with sim-host on PATH and HOME inside `dir`.
fn shell(dir: &Path, program: &str) -> Command {
    let bin = sim_host_bin();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new(program);
    c.current_dir(dir).env("PATH", path).env("HOME", dir);
    c
}

#[test]
#[cfg_attr(
    not(has_parallel),
    ignore = "needs GNU parallel (scripts/bootstrap.sh installs it)"
)]
fn the_gnu_parallel_recipe_runs_as_documented() {
    require_tool("parallel");
    let dir = scratch("shards-parallel");
    write_manifest(&dir);
    run_whole(&dir);
    let out = shell(&dir, "bash")
        .arg("-c")
        .arg(recipe("parallel"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for k in 1..=4 {
        assert!(dir.join(format!("results/shard-{k}-of-4.json")).exists());
    }
    assert_same_as_whole(&dir, "all.json", "all.csv");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_slurm_script_runs_each_array_task() {
    let dir = scratch("shards-slurm");
    write_manifest(&dir);
    run_whole(&dir);
    let script = recipe("slurm");
    assert!(script.contains("#SBATCH --array=0-3"), "{script}");
    std::fs::write(dir.join("suite.sbatch"), &script).unwrap();
    for task in 0..4 {
        let out = shell(&dir, "bash")
            .arg("suite.sbatch")
            .env("SLURM_ARRAY_TASK_ID", task.to_string())
            .env_remove("SLURM_ARRAY_TASK_COUNT")
            .env_remove("SLURM_CPUS_PER_TASK")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "task {task}: {}", stderr(&out));
    }
    let out = sim_host(
        &dir,
        &[
            "suite",
            "merge",
            "results/shard-1-of-4.json",
            "results/shard-2-of-4.json",
            "results/shard-3-of-4.json",
            "results/shard-4-of-4.json",
            "-o",
            "all.json",
            "--csv",
            "all.csv",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_same_as_whole(&dir, "all.json", "all.csv");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the docs/scale-out.md block `name` (a submission) against
/// `cluster`; the two job ids it prints after `label` ("LABEL: job ID,
/// merge: job ID").
fn submit(cluster: &Cluster, dir: &Path, name: &str, label: &str) -> (String, String) {
    let out = shell(dir, "bash")
        .env("SLURM_CONF", cluster.conf())
        .arg("-c")
        .arg(recipe(name))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("{name}: no line `{label}` in {text:?}"));
    let ids: Vec<String> = line
        .split("job ")
        .skip(1)
        .map(|s| s.chars().take_while(char::is_ascii_digit).collect())
        .collect();
    assert!(
        ids.len() == 2 && ids.iter().all(|id| !id.is_empty()),
        "{line}"
    );
    (ids[0].clone(), ids[1].clone())
}

/// The state of job `id` (or of its array task `task`) in `states`.
fn state_of<'a>(states: &'a [JobState], id: &str, task: Option<u32>) -> &'a JobState {
    states
        .iter()
        .find(|s| {
            if task.is_some() {
                s.array_task == task && s.array_job == id
            } else {
                s.id == id
            }
        })
        .unwrap_or_else(|| panic!("no job {id} task {task:?} in {states:#?}"))
}

/// Every job's output file (`slurm-*.out`) in `dir`, for failure messages.
fn job_outputs(dir: &Path) -> String {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("slurm-") && n.ends_with(".out"))
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| {
            format!(
                "--- {}\n{}",
                p.display(),
                std::fs::read_to_string(p).unwrap_or_default()
            )
        })
        .collect()
}

/// Asserts that the jobs' states are `expected` (array task or none,
/// state, exit code), with the jobs' outputs and the daemons' logs if not.
fn assert_states(
    cluster: &Cluster,
    dir: &Path,
    states: &[JobState],
    expected: &[(&str, Option<u32>, &str, &str)],
) {
    for &(id, task, state, exit_code) in expected {
        let s = state_of(states, id, task);
        assert!(
            s.state == state && s.exit_code == exit_code,
            "job {id} task {task:?}: {} {}, expected {state} {exit_code}\n{states:#?}\n{}{}",
            s.state,
            s.exit_code,
            job_outputs(dir),
            cluster.logs()
        );
    }
}

#[test]
#[cfg_attr(
    slurm_unavailable,
    ignore = "needs slurm and munge (scripts/bootstrap.sh installs them) and root"
)]
fn the_slurm_recipe_runs_through_slurmctld_and_slurmd() {
    let dir = scratch("shards-slurmd");
    let cluster = Cluster::start(&dir.join("slurm"));
    write_manifest(&dir);
    run_whole(&dir);
    std::fs::write(dir.join("suite.sbatch"), recipe("slurm")).unwrap();
    let (array, merge) = submit(&cluster, &dir, "slurm-submit", "shards:");
    let states = cluster.wait_until_ended(&[&array, &merge]);
    let mut expected: Vec<_> = (0..4)
        .map(|t| (array.as_str(), Some(t), "COMPLETED", "0:0"))
        .collect();
    expected.push((merge.as_str(), None, "COMPLETED", "0:0"));
    assert_states(&cluster, &dir, &states, &expected);
    assert_same_as_whole(&dir, "all.json", "all.csv");
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(
    slurm_unavailable,
    ignore = "needs slurm and munge (scripts/bootstrap.sh installs them) and root"
)]
fn a_cancelled_array_task_fails_the_merge_and_its_retry_completes_it() {
    let dir = scratch("shards-slurmd-retry");
    let cluster = Cluster::start(&dir.join("slurm"));
    write_manifest(&dir);
    run_whole(&dir);
    std::fs::write(dir.join("suite.sbatch"), recipe("slurm")).unwrap();
    // the partition queues the jobs but starts none until task 2 (shard
    // 3/4) is cancelled
    cluster.must("scontrol", &["update", "PartitionName=test", "State=DOWN"]);
    let (array, merge) = submit(&cluster, &dir, "slurm-submit", "shards:");
    cluster.must("scancel", &[&format!("{array}_2")]);
    cluster.must("scontrol", &["update", "PartitionName=test", "State=UP"]);
    let states = cluster.wait_until_ended(&[&array, &merge]);
    assert_states(
        &cluster,
        &dir,
        &states,
        &[
            (&array, Some(0), "COMPLETED", "0:0"),
            (&array, Some(1), "COMPLETED", "0:0"),
            (&array, Some(3), "COMPLETED", "0:0"),
            (&merge, None, "FAILED", "124:0"),
        ],
    );
    // task 2 never ran (a task cancelled while pending leaves no record,
    // or one CANCELLED)
    assert!(
        states
            .iter()
            .filter(|s| s.array_job == array && s.array_task == Some(2))
            .all(|s| s.state == "CANCELLED"),
        "{states:#?}"
    );
    assert!(!dir.join("results/shard-3-of-4.json").exists());
    // the merge job's output names the shard and every entry it misses
    let said = std::fs::read_to_string(dir.join(format!("slurm-{merge}.out"))).unwrap();
    assert!(said.contains("shard 3/4: no result file given"), "{said}");
    for name in listed_names(&dir, &["--shard", "3/4"]) {
        assert!(said.contains(&name), "{name} not named: {said}");
    }
    assert!(!dir.join("all.json").exists());
    // task 2 alone, then the merge again
    let (retry, merge) = submit(&cluster, &dir, "slurm-retry", "retry:");
    let states = cluster.wait_until_ended(&[&retry, &merge]);
    assert_states(
        &cluster,
        &dir,
        &states,
        &[
            (&retry, Some(2), "COMPLETED", "0:0"),
            (&merge, None, "COMPLETED", "0:0"),
        ],
    );
    assert_same_as_whole(&dir, "all.json", "all.csv");
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Seconds from `start` until none of `jobs` is queued any more.
fn seconds_until_ended(cluster: &Cluster, jobs: &[&str], start: Instant) -> f64 {
    cluster.wait_until_ended(jobs);
    start.elapsed().as_secs_f64()
}

/// Submits `sbatch ARGS` in `dir`; the job id.
fn sbatch(cluster: &Cluster, dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["--parsable", "--chdir"];
    let dir = dir.to_str().unwrap();
    all.push(dir);
    all.extend(args);
    cluster.must("sbatch", &all).trim().to_owned()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The figures of docs/scale-out.md ("What Slurm adds"): how long the
/// daemons take to start, what an array task and a dependent job cost
/// beyond their own work, and the recipe through Slurm against the same
/// shards and merge run directly. Prints, asserts nothing about time.
#[test]
#[ignore = "a measurement for docs/scale-out.md: cargo test --release -p e2e-tests --test suite_shards slurm_costs -- --ignored --nocapture"]
fn slurm_costs() {
    const RUNS: usize = 5;
    let dir = scratch("shards-slurm-costs");
    write_manifest(&dir);
    run_whole(&dir);
    std::fs::write(dir.join("suite.sbatch"), recipe("slurm")).unwrap();
    let mut start_up = Vec::new();
    for run in 0..RUNS {
        let cluster = Cluster::start(&dir.join(format!("start-{run}")));
        start_up.push((cluster.ready - cluster.started).as_secs_f64());
    }
    let cluster = Cluster::start(&dir.join("slurm"));
    // arrays of empty tasks: the cost of one more task is the slope
    let mut arrays = Vec::new();
    for n in [1usize, 16, 64] {
        let times: Vec<f64> = (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                let range = format!("--array=0-{}", n - 1);
                let job = sbatch(
                    &cluster,
                    &dir,
                    &[&range, "--output=/dev/null", "--wrap", "true"],
                );
                seconds_until_ended(&cluster, &[&job], start)
            })
            .collect();
        arrays.push((n, median(times)));
    }
    // an empty job, and an empty job depending on it (afterany)
    let (mut single, mut pair) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let start = Instant::now();
        let job = sbatch(&cluster, &dir, &["--output=/dev/null", "--wrap", "true"]);
        single.push(seconds_until_ended(&cluster, &[&job], start));
        let start = Instant::now();
        let first = sbatch(&cluster, &dir, &["--output=/dev/null", "--wrap", "true"]);
        let dependency = format!("--dependency=afterany:{first}");
        let then = sbatch(
            &cluster,
            &dir,
            &[&dependency, "--output=/dev/null", "--wrap", "true"],
        );
        pair.push(seconds_until_ended(&cluster, &[&first, &then], start));
    }
    // the recipe through Slurm, and its shards and merge run directly
    let (mut slurm, mut direct) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let _ = std::fs::remove_dir_all(dir.join("results"));
        let start = Instant::now();
        let (array, merge) = submit(&cluster, &dir, "slurm-submit", "shards:");
        slurm.push(seconds_until_ended(&cluster, &[&array, &merge], start));
        let _ = std::fs::remove_dir_all(dir.join("results"));
        let start = Instant::now();
        for k in 1..=4 {
            let shard = format!("{k}/4");
            let out = sim_host(
                &dir,
                &[
                    "suite",
                    "suite.toml",
                    "--shard",
                    &shard,
                    "--out",
                    "results",
                    "-j",
                    "4",
                ],
            );
            assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        }
        let out = sim_host(
            &dir,
            &[
                "suite",
                "merge",
                "results/shard-1-of-4.json",
                "results/shard-2-of-4.json",
                "results/shard-3-of-4.json",
                "results/shard-4-of-4.json",
                "-o",
                "direct.json",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        direct.push(start.elapsed().as_secs_f64());
    }
    drop(cluster);
    eprintln!("slurm costs (medians of {RUNS} runs, seconds):");
    eprintln!(
        "  start-up (munged, slurmctld, slurmd until the node is idle): {:.2} (min {:.2})",
        median(start_up.clone()),
        start_up.iter().copied().fold(f64::MAX, f64::min)
    );
    for (n, t) in &arrays {
        eprintln!("  array of {n} empty tasks, submission to ended: {t:.2}");
    }
    let (n0, t0) = arrays[0];
    let (n1, t1) = arrays[arrays.len() - 1];
    eprintln!("  per array task: {:.3}", (t1 - t0) / (n1 - n0) as f64);
    eprintln!(
        "  one empty job: {:.2}; with an afterany job after it: {:.2}",
        median(single),
        median(pair)
    );
    eprintln!("  the recipe (4 shards + merge) through Slurm: {:.2}; its shards and merge run directly one after another: {:.2}", median(slurm), median(direct));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(
    slurm_unavailable,
    ignore = "needs slurm and munge (scripts/bootstrap.sh installs them) and root"
)]
fn a_failing_slurm_test_leaves_no_daemon_or_job_running() {
    let dir = scratch("shards-slurmd-guard");
    let cluster_dir = dir.join("slurm");
    let inner = cluster_dir.clone();
    // a test that fails while its cluster runs a job
    let failed = std::thread::spawn(move || {
        let cluster = Cluster::start(&inner);
        let job = sbatch(
            &cluster,
            &inner,
            &["--output=/dev/null", "--wrap", "sleep 600"],
        );
        cluster.wait_until_running(&job);
        assert!(!e2e_tests::slurm::processes_of(cluster.conf()).is_empty());
        panic!("a test failing while job {job} runs");
    })
    .join();
    assert!(failed.is_err());
    let left = e2e_tests::slurm::processes_of(&cluster_dir.join("slurm.conf"));
    assert!(left.is_empty(), "still running: {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

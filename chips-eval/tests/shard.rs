//! Sweeps split over machines: `run --shard K/N` and `merge`. The shards
//! cover every point once, their merge equals the whole run byte for
//! byte (CSV and JSON), and bad inputs are refused: another sweep, a
//! missing or duplicated shard, a shard cut short, a corrupt file.

use chips_eval::merge::{self, MergeError};
use chips_eval::output::{self, Format, PointWriter, ShardHeader};
use chips_eval::shard::Shard;
use chips_eval::{HardwareModel, LoadOptions, Program, RunOptions, Setting};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const APP: &str = "tests/fixtures/memsort/memsort.la";
const HW: &str = "hardware/transputer-supercluster.toml";
const SWEEP: [&str; 4] = ["--set", "Nproc=1..64:*2", "--set", "Nelem=65536,262144"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn chips(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_chips-eval"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `run` of the memsort sweep with `extra` arguments; must succeed.
fn run_sweep(app: &str, extra: &[&str]) {
    let mut args = vec!["run", app, "--hardware", HW];
    args.extend(SWEEP);
    args.extend(extra);
    let o = chips(&args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
}

/// Writes the whole run and `count` shards in `format`; returns the
/// whole run's file and the shards' files.
fn whole_and_shards(dir: &Path, format: &str, count: u64) -> (PathBuf, Vec<PathBuf>) {
    let whole = dir.join(format!("whole.{format}"));
    run_sweep(APP, &["--format", format, "-o", path(&whole)]);
    let shards = (1..=count)
        .map(|k| {
            let file = dir.join(format!("shard-{k}-of-{count}.{format}"));
            let shard = format!("{k}/{count}");
            run_sweep(
                APP,
                &["--format", format, "--shard", &shard, "-o", path(&file)],
            );
            file
        })
        .collect();
    (whole, shards)
}

fn merge_files(files: &[PathBuf], out: &Path) -> Output {
    let mut args = vec!["merge"];
    args.extend(files.iter().map(|f| path(f)));
    args.extend(["-o", path(out)]);
    chips(&args)
}

#[test]
fn the_merge_of_shards_equals_the_whole_run_byte_for_byte() {
    for format in ["csv", "json"] {
        let dir = tempfile::tempdir().unwrap();
        let (whole, mut shards) = whole_and_shards(dir.path(), format, 3);
        shards.reverse(); // the order of the files does not matter
        let merged = dir.path().join(format!("merged.{format}"));
        let o = merge_files(&shards, &merged);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            std::fs::read(&merged).unwrap(),
            std::fs::read(&whole).unwrap(),
            "{format}"
        );
    }
}

#[test]
fn more_shards_than_points_leaves_some_empty_and_still_merges() {
    let dir = tempfile::tempdir().unwrap();
    // 14 points in 16 shards: shards 15 and 16 hold none.
    let (whole, shards) = whole_and_shards(dir.path(), "csv", 16);
    let empty = std::fs::read_to_string(&shards[15]).unwrap();
    assert_eq!(empty.lines().count(), 2, "{empty}");
    let merged = dir.path().join("merged.csv");
    let o = merge_files(&shards, &merged);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&merged).unwrap(),
        std::fs::read(&whole).unwrap()
    );
}

#[test]
fn a_shard_names_its_sweep_and_numbers_its_points() {
    let dir = tempfile::tempdir().unwrap();
    let (_, shards) = whole_and_shards(dir.path(), "csv", 4);
    let text = std::fs::read_to_string(&shards[1]).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("# chips-eval shard 2/4 of sweep sha256:")
            && lines[0].ends_with(", 14 points"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1], "point_index,Nproc,Nelem,time_s");
    let indices: Vec<&str> = lines[2..]
        .iter()
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(indices, ["1", "5", "9", "13"]);

    let (_, shards) = whole_and_shards(dir.path(), "json", 4);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&shards[1]).unwrap()).unwrap();
    assert_eq!(doc["shard"]["index"], 2);
    assert_eq!(doc["shard"]["count"], 4);
    assert_eq!(doc["total_points"], 14);
    assert!(doc["sweep"].as_str().unwrap().starts_with("sha256:"));
    let indices: Vec<u64> = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["point_index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices, [1, 5, 9, 13]);
}

#[test]
fn a_missing_shard_is_reported_with_exit_124_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let (_, shards) = whole_and_shards(dir.path(), "csv", 3);
    let merged = dir.path().join("merged.csv");
    let o = merge_files(&shards[..2], &merged);
    assert_eq!(o.status.code(), Some(124), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .contains("shard 3/3 is missing: no file holds its 4 points (points 2, 5, 8, 11)"),
        "{}",
        stderr(&o)
    );
    assert!(!merged.exists());
}

#[test]
fn a_duplicated_shard_is_reported_with_exit_124() {
    let dir = tempfile::tempdir().unwrap();
    let (_, shards) = whole_and_shards(dir.path(), "json", 2);
    let copy = dir.path().join("copy.json");
    std::fs::copy(&shards[0], &copy).unwrap();
    let merged = dir.path().join("merged.json");
    let o = merge_files(&[shards[0].clone(), shards[1].clone(), copy], &merged);
    assert_eq!(o.status.code(), Some(124), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("shard 1/2 is given 2 times"), "{err}");
    assert!(err.contains("copy.json"), "{err}");
    assert!(!merged.exists());
}

#[test]
fn a_shard_cut_short_lists_its_missing_points() {
    let dir = tempfile::tempdir().unwrap();
    let (_, shards) = whole_and_shards(dir.path(), "csv", 2);
    let text = std::fs::read_to_string(&shards[0]).unwrap();
    let cut: Vec<&str> = text.lines().take(text.lines().count() - 2).collect();
    std::fs::write(&shards[0], cut.join("\n") + "\n").unwrap();
    let o = merge_files(&shards, &dir.path().join("m.csv"));
    assert_eq!(o.status.code(), Some(124));
    assert!(
        stderr(&o).contains("shard 1/2 lacks 2 of its 7 points (points 10, 12)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn outputs_of_another_sweep_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, shards) = whole_and_shards(dir.path(), "csv", 2);
    // The same shape of sweep with another Nelem value.
    let other = dir.path().join("other.csv");
    let o = chips(&[
        "run",
        APP,
        "--hardware",
        HW,
        "--set",
        "Nproc=1..64:*2",
        "--set",
        "Nelem=65536,262145",
        "--format",
        "csv",
        "--shard",
        "2/2",
        "-o",
        path(&other),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let merged = dir.path().join("m.csv");
    let o = merge_files(&[shards[0].clone(), other.clone()], &merged);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{}: is of sweep sha256:", other.display()))
            && err.contains("outputs of different sweeps"),
        "{err}"
    );
    assert!(!merged.exists());
}

#[test]
fn a_change_in_an_included_object_is_another_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let models = dir.path().join("memsort");
    std::fs::create_dir(&models).unwrap();
    for entry in std::fs::read_dir(root().join("tests/fixtures/memsort")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), models.join(entry.file_name())).unwrap();
    }
    let app = models.join("memsort.la");
    let first = dir.path().join("1.csv");
    run_sweep(
        path(&app),
        &["--format", "csv", "--shard", "1/2", "-o", path(&first)],
    );
    // A comment in an included object: the results may not change, but
    // the model did, so the shards are of different sweeps.
    let merge_la = models.join("merge.la");
    let text = std::fs::read_to_string(&merge_la).unwrap();
    std::fs::write(&merge_la, format!("(* edited *)\n{text}")).unwrap();
    let second = dir.path().join("2.csv");
    run_sweep(
        path(&app),
        &["--format", "csv", "--shard", "2/2", "-o", path(&second)],
    );
    let o = merge_files(&[first, second], &dir.path().join("m.csv"));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("outputs of different sweeps"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn corrupt_files_are_refused_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, shards) = whole_and_shards(dir.path(), "csv", 2);
    let out = dir.path().join("m.csv");
    // A whole run's output is not a shard's.
    let o = merge_files(std::slice::from_ref(&whole), &out);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(&format!(
            "{}: line 1: not the output of `chips-eval run --shard`",
            whole.display()
        )),
        "{}",
        stderr(&o)
    );
    // A row with a broken index.
    let text = std::fs::read_to_string(&shards[1]).unwrap();
    std::fs::write(&shards[1], text.replacen("\n3,", "\nx3,", 1)).unwrap();
    let o = merge_files(&shards, &out);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("line 4: point_index `x3` is not a point number"),
        "{}",
        stderr(&o)
    );
    // A point of another shard.
    std::fs::write(&shards[1], text.replacen("\n3,", "\n2,", 1)).unwrap();
    let o = merge_files(&shards, &out);
    assert!(
        stderr(&o).contains("line 4: point 2 belongs to shard 1/2, not to this file's 2/2"),
        "{}",
        stderr(&o)
    );
    // Truncated JSON.
    let (_, json) = whole_and_shards(dir.path(), "json", 2);
    let text = std::fs::read_to_string(&json[0]).unwrap();
    std::fs::write(&json[0], &text[..text.len() / 2]).unwrap();
    let o = merge_files(&json, &dir.path().join("m.json"));
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains(&json[0].display().to_string()) && err.contains("line"),
        "{err}"
    );
    assert!(!out.exists() && !dir.path().join("m.json").exists());
}

#[test]
fn shard_numbers_out_of_range_are_usage_errors() {
    for bad in ["0/4", "5/4", "1/0", "x"] {
        let o = chips(&[
            "run",
            APP,
            "--hardware",
            HW,
            "--format",
            "csv",
            "--shard",
            bad,
        ]);
        assert_eq!(o.status.code(), Some(2), "--shard {bad}: {}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
    // A shard's plot would show a part of the sweep.
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("p.svg");
    let o = chips(&[
        "run",
        APP,
        "--hardware",
        HW,
        "--shard",
        "1/2",
        "--plot",
        path(&plot),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!plot.exists());
    // A table cannot be merged.
    let o = chips(&["run", APP, "--hardware", HW, "--shard", "1/2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("use --format csv or json"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn merge_checks_its_output_first_and_keeps_the_format() {
    let dir = tempfile::tempdir().unwrap();
    let (_, shards) = whole_and_shards(dir.path(), "csv", 2);
    let o = merge_files(&shards, &dir.path().join("no/such/m.csv"));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("does not exist"), "{}", stderr(&o));
    let mut args = vec![
        "merge",
        path(&shards[0]),
        path(&shards[1]),
        "--format",
        "json",
    ];
    args.extend(["-o", "/dev/null"]);
    let o = chips(&args);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("the shards are csv"), "{}", stderr(&o));
}

/// The library: shards written by `PointWriter::for_shard`, read back by
/// `merge::read`, equal `output::render` of the whole run.
#[test]
fn library_shards_cover_every_point_once_and_merge_to_the_whole() {
    let hw = HardwareModel::load(&root().join(HW)).unwrap();
    let prog = Program::load(&root().join(APP), &LoadOptions::default(), Some(&hw)).unwrap();
    let settings = vec![
        Setting::parse("Nproc=1..16:*2").unwrap(),
        Setting::parse("Nelem=65536,131072,262144").unwrap(),
    ];
    let whole = chips_eval::run(&prog, &hw, &settings, RunOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for format in [Format::Csv, Format::Json] {
        for count in [1, 2, 4, 7] {
            let mut files = Vec::new();
            let mut seen = vec![0; whole.points.len()];
            for index in 1..=count {
                let header = ShardHeader {
                    sweep: "sha256:test".into(),
                    shard: Shard { index, count },
                    total_points: whole.points.len() as u64,
                };
                let mut writer =
                    PointWriter::new(Vec::new(), format, &whole.variables).for_shard(header);
                writer.begin().unwrap();
                let opts = RunOptions::default();
                chips_eval::runtime::run_shard(
                    &prog,
                    &hw,
                    &settings,
                    opts,
                    Shard { index, count },
                    |i, p| {
                        seen[i as usize] += 1;
                        assert_eq!(p, whole.points[i as usize]);
                        writer.indexed_point(i, &p).unwrap();
                        Ok(())
                    },
                )
                .unwrap();
                let file = dir.path().join(format!("{format:?}-{index}-{count}"));
                std::fs::write(&file, writer.finish().unwrap()).unwrap();
                files.push(merge::read(&file).unwrap());
            }
            assert!(seen.iter().all(|&n| n == 1), "{count} shards: {seen:?}");
            let merged = merge::merge(files, None).unwrap();
            let text = String::from_utf8(merged.write(Vec::new()).unwrap()).unwrap();
            assert_eq!(text, output::render(&whole, format), "{format:?} {count}");
        }
    }
}

#[test]
fn library_merge_of_nothing_is_incomplete() {
    assert!(matches!(
        merge::merge(Vec::new(), None),
        Err(MergeError::Incomplete(_))
    ));
}

/// A header may claim any number of shards and points: the work and the
/// report are bounded by what the files hold (eight missing shards named,
/// the rest counted; eight of a shard's missing points named, the rest
/// counted), never by the claims (10^12 shards, 10^18 points here).
#[test]
fn huge_counts_in_a_header_give_a_bounded_report() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("claims.csv");
    std::fs::write(
        &file,
        "# chips-eval shard 1/1000000000000 of sweep sha256:x, 1000000000000000000 points\n\
         point_index,n,time_s\n0,1,1.000000000\n",
    )
    .unwrap();
    let o = merge_files(std::slice::from_ref(&file), &dir.path().join("m.csv"));
    assert_eq!(o.status.code(), Some(124));

    let Err(MergeError::Incomplete(problems)) =
        merge::merge(vec![merge::read(&file).unwrap()], None)
    else {
        panic!("an incomplete merge");
    };
    let mut expected: Vec<String> = (2..=9u64)
        .map(|k| {
            let points: Vec<String> = (0..8u64)
                .map(|i| (k - 1 + i * 1_000_000_000_000).to_string())
                .collect();
            format!(
                "shard {k}/1000000000000 is missing: no file holds its 1000000 points \
                 (points {} and 999992 more)",
                points.join(", ")
            )
        })
        .collect();
    expected.push("and 999999999991 more shards are missing".into());
    let lacking: Vec<String> = (1..=8u64)
        .map(|i| (i * 1_000_000_000_000).to_string())
        .collect();
    expected.push(format!(
        "{}: shard 1/1000000000000 lacks 999999 of its 1000000 points \
         (points {} and 999991 more): an interrupted run?",
        file.display(),
        lacking.join(", ")
    ));
    assert_eq!(problems, expected);
}

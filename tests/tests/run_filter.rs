//! `sim-host run` on the manual's filter example, every built-in target:
//! the output is the expected one (which qemu and a native build agree on),
//! data.arp has one sample per kernel execution with the manual's section
//! ids, and two runs give byte-identical files.

use arpsim::query::Dataset;
use e2e_tests::{expected_output, guest, scratch, sim_host_bin};
use std::collections::BTreeMap;
use std::process::Command;

const TARGETS: [&str; 4] = ["cortex-m0", "cortex-m3", "cortex-m4", "rv32imac"];
const N_IMAGES: u64 = 4;
const HEIGHT: u64 = 200;

fn run(target: &str, file: &std::path::Path, json: &std::path::Path) -> String {
    let out = Command::new(sim_host_bin())
        .args(["run", "--target", target, "--mode", "record_all", "-q"])
        .arg(guest(target, "filter"))
        .arg("-o")
        .arg(file)
        .arg("--report-json")
        .arg(json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{target}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn filter_runs_on_every_target_with_one_sample_per_kernel_execution() {
    for target in TARGETS {
        let dir = scratch(&format!("filter-{target}"));
        let (a, b) = (dir.join("a.arp"), dir.join("b.arp"));
        let stdout = run(target, &a, &dir.join("a.json"));
        assert_eq!(stdout, expected_output("filter"), "{target}");

        // samples per innermost section, and the manual's nesting (2.4 listing)
        let data = Dataset::load(&a).unwrap();
        let mut per_section: BTreeMap<Vec<u16>, u64> = BTreeMap::new();
        for trace in data.traces() {
            let path = (0..trace.stack_length())
                .map(|d| trace.stack_pos(d).unwrap())
                .collect();
            *per_section.entry(path).or_default() += trace.count();
        }
        let expected: BTreeMap<Vec<u16>, u64> = [
            (vec![8, 7, 3, 2, 1], N_IMAGES * HEIGHT), // kernel: one per line
            (vec![8, 7, 3, 2], N_IMAGES),             // profiled: one per image
            (vec![8, 7, 6, 5, 4], N_IMAGES * HEIGHT),
            (vec![8, 7, 6, 5], N_IMAGES),
        ]
        .into();
        assert_eq!(per_section, expected, "{target}");

        // kernel counters run 0..199 within each image
        let max_line_index = data
            .traces()
            .filter(|t| t.stack_length() == 5)
            .map(|t| t.stack_index(4).unwrap())
            .max();
        assert_eq!(max_line_index, Some(HEIGHT as i32 - 1));

        // deterministic: a second run writes the same bytes
        run(target, &b, &dir.join("b.json"));
        assert_eq!(
            std::fs::read(&a).unwrap(),
            std::fs::read(&b).unwrap(),
            "{target}: two runs differ"
        );

        // the JSON report agrees with the file
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("a.json")).unwrap()).unwrap();
        assert_eq!(report["schema_version"], 4);
        assert_eq!(report["stop"]["reason"], "exit");
        let kernel = report["sections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["path"] == serde_json::json!([8, 7, 3, 2, 1]))
            .unwrap();
        assert_eq!(kernel["count"], N_IMAGES * HEIGHT);
        assert_eq!(kernel["functions"][4], "filter_horizontally");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

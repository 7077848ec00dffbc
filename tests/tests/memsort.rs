//! The memsort guest of the study (issue 8, STUDY.md): it sorts correctly
//! on 1 and 4 simulated cores (same checksum), and its recording has the
//! kernel sections the study calibrates from, as many times as the
//! bitonic merge runs them.

use e2e_tests::{guest, scratch, sim_host_bin};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The checksum of the 16384 sorted elements (the same for every P).
const LINE_END: &str = "sorted ok checksum f7895473";

/// Runs `memsort 16384 P` on P cores (record_all); returns its output, the
/// JSON report and the number of records per innermost section id.
fn run(p: u32, dir: &Path) -> (String, serde_json::Value, BTreeMap<u16, usize>) {
    let arp = dir.join(format!("memsort-{p}.arp"));
    let json = dir.join(format!("memsort-{p}.json"));
    let out = Command::new(sim_host_bin())
        .args(["run", "--target", "cortex-m4", "--cores", &p.to_string()])
        .args(["--mode", "record_all", "--arp-format", "ascii", "-q", "-o"])
        .arg(&arp)
        .arg("--report-json")
        .arg(&json)
        .arg(guest("cortex-m4", "memsort"))
        .args(["--", "16384", &p.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // record lines look like `2 1 1@0 3@4: 114713;`: the innermost entry
    // of the stack (the last `sid@idx`) is the section recorded
    let mut records = BTreeMap::new();
    for line in std::fs::read_to_string(&arp).unwrap().lines() {
        if let Some((stack, _)) = line.split_once(':') {
            if let Some(sid) = stack
                .split_whitespace()
                .last()
                .and_then(|e| e.split_once('@'))
                .and_then(|(sid, _)| sid.parse::<u16>().ok())
            {
                *records.entry(sid).or_insert(0) += 1;
            }
        }
    }
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        report,
        records,
    )
}

/// The report's row for a section path: (count, total cycles).
fn section(report: &serde_json::Value, path: &[u64]) -> Option<(u64, u64)> {
    report["sections"].as_array().unwrap().iter().find_map(|s| {
        let p: Vec<u64> = s["path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        (p == path).then(|| {
            (
                s["count"].as_u64().unwrap(),
                s["total_cycles"].as_u64().unwrap(),
            )
        })
    })
}

#[test]
fn memsort_sorts_on_one_and_four_cores_and_records_its_kernels() {
    let dir = scratch("memsort");

    let (out1, rep1, rec1) = run(1, &dir);
    assert_eq!(out1, format!("memsort N=16384 P=1 T=1 {LINE_END}\n"));
    assert_eq!(rep1["threads_created"], 1);
    // one block: one sort, no merge stage
    assert_eq!(section(&rep1, &[1, 2]).map(|s| s.0), Some(1));
    assert_eq!(section(&rep1, &[1, 3]), None);
    assert_eq!(section(&rep1, &[1, 4]), None);
    assert_eq!(rec1.get(&2), Some(&1));

    let (out4, rep4, rec4) = run(4, &dir);
    assert_eq!(out4, format!("memsort N=16384 P=4 T=4 {LINE_END}\n"));
    assert_eq!(rep4["threads_created"], 4);
    // 4 sorts; log2(4) = 2 stages of 1 and 2 phases, each a copy and a
    // merge per block: 3 * 4 = 12 of each
    let (_, whole1) = section(&rep1, &[1]).expect("section 1 on 1 core");
    let (_, whole4) = section(&rep4, &[1]).expect("section 1 on 4 cores");
    assert_eq!(section(&rep4, &[1, 2]).map(|s| s.0), Some(4));
    assert_eq!(section(&rep4, &[1, 3]).map(|s| s.0), Some(12));
    assert_eq!(section(&rep4, &[1, 4]).map(|s| s.0), Some(12));
    assert_eq!(rec4.get(&2), Some(&4), "records: {rec4:?}");
    assert_eq!(rec4.get(&3), Some(&12), "records: {rec4:?}");
    assert_eq!(rec4.get(&4), Some(&12), "records: {rec4:?}");
    // four cores sort faster than one, but less than four times faster
    assert!(
        whole4 * 2 < whole1 && whole4 * 4 > whole1,
        "{whole1} vs {whole4}"
    );
}

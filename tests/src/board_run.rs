//! One run of a board example as the clock-tree tests read it: its exit
//! status, console, JSON report (parsed and as written), samples and
//! data.arp bytes.

use crate::{guest, recorded_samples, scratch, sim_host_bin};
use serde_json::Value;
use std::process::Command;

/// What a run left.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub report: Value,
    /// The report's bytes as written.
    pub report_text: Vec<u8>,
    /// (innermost section id, cycles) of each recorded sample.
    pub samples: Vec<(u16, u64)>,
    pub arp: Vec<u8>,
}

/// `sim-host run -q --target <target>` of `example` in a scratch folder
/// named `tag`, with `sim_args` (and `--max-cycles 20000000` unless they
/// give one) and the guest's arguments `guest_args`.
pub fn run(tag: &str, target: &str, example: &str, sim_args: &[&str], guest_args: &[&str]) -> Run {
    let dir = scratch(tag);
    let (file, json) = (dir.join("data.arp"), dir.join("report.json"));
    let limit: &[&str] = if sim_args.contains(&"--max-cycles") {
        &[]
    } else {
        &["--max-cycles", "20000000"]
    };
    let out = Command::new(sim_host_bin())
        .args(["run", "-q", "--target", target])
        .args(limit)
        .args(sim_args)
        .arg("-o")
        .arg(&file)
        .arg("--report-json")
        .arg(&json)
        .arg(guest(target, example))
        .arg("--")
        .args(guest_args)
        .output()
        .expect("sim-host starts");
    let arp = std::fs::read(&file).unwrap_or_default();
    let report_text = std::fs::read(&json).unwrap_or_default();
    let report = if report_text.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&report_text).expect("the report is JSON")
    };
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        samples: if arp.is_empty() {
            Vec::new()
        } else {
            recorded_samples(&file)
        },
        report,
        report_text,
        arp,
    }
}

impl Run {
    /// The cycles of section `sid`'s sample; a run without one fails,
    /// showing the run's stderr.
    pub fn sample(&self, sid: u16) -> u64 {
        let found = self.samples.iter().find(|(s, _)| *s == sid);
        found.map_or_else(
            || panic!("no sample of section {sid}: {}", self.stderr),
            |s| s.1,
        )
    }

    /// The report's warnings.
    pub fn warnings(&self) -> Vec<String> {
        let list = self.report["warnings"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        list.iter()
            .map(|w| w.as_str().unwrap_or_default().to_owned())
            .collect()
    }
}

/// A report's core clock changes as (from Hz, to Hz, source).
pub fn clock_changes(report: &Value) -> Vec<(u64, u64, &str)> {
    let changes = report["clock_changes"].as_array().expect("clock changes");
    changes
        .iter()
        .map(|c| {
            let hz = |k: &str| c[k].as_u64().unwrap();
            (hz("from_hz"), hz("to_hz"), c["source"].as_str().unwrap())
        })
        .collect()
}

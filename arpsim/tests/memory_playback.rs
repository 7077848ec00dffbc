//! Peak memory of loading and reporting a deep `record_all` recording.
//! This file holds one test so that the process's peak resident size
//! (VmHWM) measures it alone.

use arpsim::playback::PlaybackIndex;
use std::io::Write;
use std::path::Path;

/// Peak resident set of this process, in bytes (Linux).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

/// `records` samples under one `depth`-deep prefix: the first record
/// writes the prefix, every later one reuses it (manual 6.5) and adds
/// only its own innermost entry, so the file stays small.
fn write_deep_recording(path: &Path, depth: usize, records: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let head = "# Atomium record and playback data - format version 1.1.\n0 1 1 5";
    write!(f, "{head}\n{records}\n{} 0", depth + 1).unwrap();
    for d in 0..depth {
        write!(f, " {}@0", 2 + d).unwrap();
    }
    writeln!(f, " 1@0: 7;").unwrap();
    for i in 1..records {
        writeln!(f, "{} {depth} 1@{i}: 7;", depth + 1).unwrap();
    }
}

#[test]
fn a_deep_recording_plays_back_in_little_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.arp");
    let (depth, records) = (4000, 4000);
    write_deep_recording(&path, depth, records);
    let before = peak_rss();
    let index = PlaybackIndex::load(&path).unwrap();
    let report = index.report();
    let grown = peak_rss().saturating_sub(before);
    assert_eq!(index.samples(), records as u64);
    assert_eq!(report.missing_total, records as u64);
    // Paths in full would be depth × records × 8 bytes = 128 MB; the
    // index shares the prefix and the report lists at most 8 MiB.
    assert!(grown < 32 << 20, "peak grew by {} MiB", grown >> 20);
}

//! Peak memory of `convert` on a recording of many samples and on one of
//! deep, distinct traces. This file holds one test so that the process's
//! peak resident size (VmHWM) measures it alone.

use arpsim::tools::{convert, stats, ConvertOptions};
use arpsim::types::{FileFormat, Mode};
use std::io::Write;
use std::path::Path;

/// Peak resident set of this process, in bytes (Linux).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

/// A loop of `records` samples of section 1 inside section 8, gzip
/// compressed (manual 6.5 prefix reuse keeps every record short).
fn write_long_recording(path: &Path, records: u64) {
    let file = std::fs::File::create(path).unwrap();
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    let mut f = std::io::BufWriter::new(gz);
    let head = "# Atomium record and playback data - format version 1.1.\n0 1 1 5";
    writeln!(f, "{head}\n{records}\n2 0 8@0 1@0: 3;").unwrap();
    for i in 1..records {
        writeln!(f, "2 1 1@{i}: {};", i % 1000).unwrap();
    }
    f.into_inner().unwrap().finish().unwrap();
}

/// `records` samples under one `depth`-deep prefix, each in its own
/// innermost section: as many section-id paths as records, every one
/// `depth + 1` deep, in a file of a few bytes per record (manual 6.5
/// prefix reuse).
fn write_deep_distinct_recording(path: &Path, depth: usize, records: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let head = "# Atomium record and playback data - format version 1.1.\n0 1 1 5";
    write!(f, "{head}\n{records}\n{} 0", depth + 1).unwrap();
    for d in 0..depth {
        write!(f, " {}@0", 2 + d).unwrap();
    }
    writeln!(f, " 10000@0: 7;").unwrap();
    for i in 1..records {
        writeln!(f, "{} {depth} {}@0: 7;", depth + 1, 10_000 + i).unwrap();
    }
}

#[test]
fn converting_many_records_does_not_hold_them() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("long.arp.gz");
    let records = 600_000;
    write_long_recording(&input, records);
    let before = peak_rss();
    let average = dir.path().join("average.arp");
    let to_average = ConvertOptions {
        mode: Some(Mode::RecordAverage),
        ..Default::default()
    };
    assert_eq!(convert(&input, &average, &to_average).unwrap(), 1);
    let binary = dir.path().join("all.bin");
    let to_binary = ConvertOptions {
        format: FileFormat::Binary,
        ..Default::default()
    };
    assert_eq!(convert(&input, &binary, &to_binary).unwrap(), records);
    let (depth, traces) = (4000, 4000);
    let deep = dir.path().join("deep.arp");
    write_deep_distinct_recording(&deep, depth, traces);
    let deep_average = dir.path().join("deep-average.arp");
    let n = convert(&deep, &deep_average, &to_average).unwrap();
    assert_eq!(n, traces as u64);
    let grown = peak_rss().saturating_sub(before);
    // Held in memory, 600,000 records would take about 75 MB, and 4,000
    // paths 4,001 deep about 160 MB.
    assert!(grown < 16 << 20, "peak grew by {} MiB", grown >> 20);
    let mut read = 0;
    arpsim::codec::for_each_record(&deep_average, |_, r| {
        assert_eq!(r.stack.len(), depth + 1);
        assert_eq!((r.stack[0].sid, r.stack[depth].sid), (2, 10_000 + read));
        assert_eq!(r.payload.count(), 1);
        read += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(read as usize, traces);
    let s = stats(&average).unwrap();
    assert_eq!(s[0].path, vec![8, 1]);
    assert_eq!(s[0].count as u64, records);
    let sum = 3 + (1..records).map(|i| i % 1000).sum::<u64>();
    assert_eq!(s[0].sets[0].mean, sum as f64 / records as f64);
}

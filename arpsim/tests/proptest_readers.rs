//! Property tests of the readers: every data set round-trips through
//! every format, no input makes a reader panic, and damaged input reads
//! back as written or fails with an error that names a place of it
//! (ARCHITECTURE.md: "every format error names a line (and column) or a
//! byte offset").

use arpsim::ascii;
use arpsim::binary;
use arpsim::error::{FormatError, Location};
use arpsim::query::Dataset;
use arpsim::record::{Header, Histogram, Payload, Record};
use arpsim::types::{DataType, FileFormat, Mode, StackEntry, Value};
use proptest::prelude::*;
use std::io::Write;

fn data_type() -> impl Strategy<Value = DataType> {
    (0u32..13).prop_map(|c| DataType::from_code(c).unwrap())
}

fn value(ty: DataType) -> BoxedStrategy<Value> {
    if ty.is_float() {
        prop_oneof![
            any::<f64>().prop_filter("finite", |v| v.is_finite()),
            (-1e6f64..1e6),
            Just(0.0)
        ]
        .prop_map(move |v| Value::from_raw(ty, v.to_bits()))
        .boxed()
    } else {
        any::<u64>()
            .prop_map(move |raw| Value::from_raw(ty, raw))
            .boxed()
    }
}

fn stack() -> impl Strategy<Value = Vec<StackEntry>> {
    prop::collection::vec(
        (0u16..6, -2i32..40).prop_map(|(sid, idx)| StackEntry { sid, idx }),
        1..6,
    )
}

fn dataset() -> impl Strategy<Value = (Header, Vec<Record>)> {
    (
        prop::collection::vec(data_type(), 1..4),
        0u8..3,
        any::<bool>(),
    )
        .prop_flat_map(|(types, mode, partial)| {
            let mode = [Mode::RecordAll, Mode::RecordAverage, Mode::RecordHistogram][mode as usize];
            let m = types.len();
            let record = match mode {
                Mode::RecordAll => {
                    let values: Vec<_> = types.iter().map(|&t| value(t)).collect();
                    (stack(), values)
                        .prop_map(|(stack, values)| Record {
                            stack,
                            payload: Payload::Sample(values),
                        })
                        .boxed()
                }
                Mode::RecordAverage => (
                    stack(),
                    1u64..1_000_000,
                    prop::collection::vec(-1e12f64..1e12, m),
                )
                    .prop_map(|(stack, count, means)| Record {
                        stack: stack
                            .into_iter()
                            .map(|e| StackEntry { idx: 0, ..e })
                            .collect(),
                        payload: Payload::Average { count, means },
                    })
                    .boxed(),
                _ => (
                    stack(),
                    prop::collection::btree_map(0u8..65, 1u64..1000, 1..5),
                )
                    .prop_map(move |(stack, bins)| {
                        let h = Histogram {
                            bins: bins.into_iter().collect(),
                        };
                        let count = h.total() as u64;
                        Record {
                            stack: stack
                                .into_iter()
                                .map(|e| StackEntry { idx: 0, ..e })
                                .collect(),
                            payload: Payload::Histogram {
                                count,
                                histograms: vec![h; m],
                            },
                        }
                    })
                    .boxed(),
            };
            prop::collection::vec(record, 0..20).prop_map(move |records| {
                (
                    Header {
                        format: FileFormat::Ascii,
                        mode,
                        types: types.clone(),
                        count: records.len() as u64,
                        partial,
                    },
                    records,
                )
            })
        })
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// `d` holds what was written: the header's mode, types and partial
/// flag, and the records.
fn same_data(d: &Dataset, header: &Header, records: &[Record]) -> Result<(), TestCaseError> {
    let h = d.header();
    prop_assert_eq!(
        (h.mode, &h.types, h.partial),
        (header.mode, &header.types, header.partial)
    );
    prop_assert_eq!(d.records(), records);
    Ok(())
}

/// `e` names a place of `input` (the bytes as the reader saw them after
/// gzip): a line of it, and a column within that line or none (0), or a
/// byte offset within it. Without gzip the reader saw `input` whole: a
/// file that opens with the binary magic is located by offset, any other
/// by line.
fn located(e: &FormatError, input: &[u8], gzip: bool) -> Result<(), TestCaseError> {
    let binary = !gzip && input.starts_with(binary::MAGIC);
    let ascii = !gzip && !binary;
    match e.location {
        Location::Offset(offset) => {
            prop_assert!(
                offset <= input.len() as u64,
                "{} beyond {} bytes",
                e,
                input.len()
            );
            prop_assert!(!ascii, "{} in an ASCII file", e);
        }
        Location::Line { line, column } => {
            // The last piece is the empty line after the final newline.
            let lines: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
            prop_assert!(
                line >= 1 && line as usize <= lines.len(),
                "{} of {} lines",
                e,
                lines.len()
            );
            let text = lines[line as usize - 1];
            prop_assert!(
                column as usize <= text.len() + 1,
                "{} beyond {} columns",
                e,
                text.len()
            );
            prop_assert!(!binary, "{} in a binary file", e);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_format_round_trips((header, records) in dataset()) {
        let text = ascii::to_bytes(&header, &records);
        let d = Dataset::from_bytes(&text).unwrap();
        prop_assert_eq!(d.records(), &records[..]);
        prop_assert_eq!(d.header().partial, header.partial);
        // Writing what was read gives the same bytes.
        prop_assert_eq!(&ascii::to_bytes(d.header(), d.records()), &text);
        let bin = binary::to_bytes(&header, &records);
        for bytes in [bin.clone(), gzip(&text), gzip(&bin)] {
            let back = Dataset::from_bytes(&bytes).unwrap();
            prop_assert_eq!(back.records(), &records[..]);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = Dataset::from_bytes(&bytes);
        let mut ascii_head = b"# Atomium record and playback data - format version 1.1.\n0 1 1 5\n".to_vec();
        ascii_head.extend_from_slice(&bytes);
        let _ = Dataset::from_bytes(&ascii_head);
        let mut bin_head = b"ARPB\x01\x00\x00\x00".to_vec();
        bin_head.extend_from_slice(&bytes);
        let _ = Dataset::from_bytes(&bin_head);
        let _ = Dataset::from_bytes(&gzip(&bytes));
    }

    #[test]
    fn damaged_files_read_back_or_name_the_place((header, records) in dataset(), cut in any::<prop::sample::Index>(), flip in any::<prop::sample::Index>(), byte in any::<u8>()) {
        for bytes in [ascii::to_bytes(&header, &records), binary::to_bytes(&header, &records)] {
            // Cut short: the same data (only a final newline was lost),
            // or an error at a place of what is left.
            let truncated = &bytes[..cut.index(bytes.len())];
            match Dataset::from_bytes(truncated) {
                Ok(d) => same_data(&d, &header, &records)?,
                Err(e) => located(&e, truncated, false)?,
            }
            // Cut short after compression: the places are those of the
            // uncompressed file.
            let gz = gzip(&bytes);
            match Dataset::from_bytes(&gz[..cut.index(gz.len())]) {
                Ok(d) => same_data(&d, &header, &records)?,
                Err(e) => located(&e, &bytes, true)?,
            }
            // One byte changed: unchanged, the same data; else a file that
            // still holds the announced number of records of as many
            // callback sets (a changed digit of a value or a section id
            // is data like any other), or an error at a place of it.
            let mut changed = bytes.clone();
            let i = flip.index(changed.len());
            changed[i] = byte;
            match Dataset::from_bytes(&changed) {
                Ok(d) if changed == bytes => same_data(&d, &header, &records)?,
                Ok(d) => {
                    prop_assert_eq!(d.n_traces(), records.len());
                    prop_assert_eq!(d.data_mult(), header.types.len());
                }
                Err(e) => located(&e, &changed, false)?,
            }
        }
    }

    #[test]
    fn truncating_a_record_is_always_an_error((header, records) in dataset(), cut in any::<prop::sample::Index>()) {
        prop_assume!(!records.is_empty());
        let text = ascii::to_bytes(&header, &records);
        let header_len = ascii::header_bytes(&Header { count: records.len() as u64, ..header.clone() }, false).len();
        let at = header_len + cut.index(text.len() - header_len - 1);
        // Anything shorter than the whole file loses records or a `;`.
        let err = Dataset::from_bytes(&text[..at]).unwrap_err();
        let is_line = matches!(err.location, arpsim::error::Location::Line { .. });
        prop_assert!(is_line, "{}", err);
    }
}

fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A record_all text of one thread whose one sample is `depth` sections
/// deep, the record declaring `declared` entries.
fn deep_record(depth: usize, declared: u64) -> String {
    let mut text =
        String::from("# Atomium record and playback data - format version 1.1.\n0 1 1 9\n");
    text.push_str(&format!("{:028}\n{declared} 0", 1));
    for i in 0..depth {
        text.push_str(&format!(" {}@{}", 1 + i % 200, i % 3));
    }
    text.push_str(": 7;\n");
    text
}

// Issue 30, item 6: deep ARP nesting, a few cases by default (`make
// fuzz-long` runs many).
proptest! {
    #![proptest_config(cases(12))]

    /// A sample thousands of sections deep is read and indexed; a depth
    /// declared far beyond the entries given (up to u64::MAX) is a located
    /// error, found without allocating for the declared depth.
    #[test]
    fn deep_nesting_is_read_or_refused_at_its_line(
        depth in 1usize..20_000,
        over in prop_oneof![Just(0u64), 1u64..1000, Just(u64::MAX / 2)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep.arp");
        let declared = (depth as u64).saturating_add(over);
        std::fs::write(&path, deep_record(depth, declared)).unwrap();
        match arpsim::playback::PlaybackIndex::load(&path) {
            Ok(index) => {
                prop_assert_eq!(over, 0);
                prop_assert_eq!(index.samples(), 1);
            }
            Err(e) => {
                prop_assert!(over > 0, "a valid deep sample refused: {}", e);
                let text = e.to_string();
                prop_assert!(text.contains("deep.arp") && text.contains("line 4"), "{}", text);
            }
        }
    }
}

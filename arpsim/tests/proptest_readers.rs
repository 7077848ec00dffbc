//! Property tests of the readers: every data set round-trips through
//! every format, and no input makes a reader panic.

use arpsim::ascii;
use arpsim::binary;
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
    fn damaged_files_fail_cleanly((header, records) in dataset(), cut in any::<prop::sample::Index>(), flip in any::<prop::sample::Index>(), byte in any::<u8>()) {
        for bytes in [ascii::to_bytes(&header, &records), binary::to_bytes(&header, &records)] {
            let truncated = &bytes[..cut.index(bytes.len())];
            let _ = Dataset::from_bytes(truncated);
            let gz = gzip(&bytes);
            let _ = Dataset::from_bytes(&gz[..cut.index(gz.len())]);
            let mut changed = bytes.clone();
            let i = flip.index(changed.len());
            changed[i] = byte;
            let _ = Dataset::from_bytes(&changed);
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

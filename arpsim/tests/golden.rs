//! Golden files for every format (FORMAT.md). `ARPSIM_BLESS=1 cargo test
//! -p arpsim --test golden` rewrites them; review the diff.

use arpsim::ascii;
use arpsim::binary;
use arpsim::query::Dataset;
use arpsim::record::{Header, Histogram, Payload, Record};
use arpsim::types::{DataType, FileFormat, Mode, StackEntry, Value};
use std::path::PathBuf;

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// Compares `bytes`, written from `header` and `records`, with the golden
/// file `name`, and reads the golden file back into the same data.
fn check(name: &str, bytes: &[u8], header: &Header, records: &[Record]) {
    let path = golden(name);
    if std::env::var_os("ARPSIM_BLESS").is_some() {
        // a blessed file is reviewed by a person: a CI job that blessed
        // would pass whatever the outputs are
        assert!(
            std::env::var_os("CI").is_none(),
            "ARPSIM_BLESS is set and so is CI: golden files are not blessed under CI \
             (bless them outside it with ARPSIM_BLESS=1, then review git diff)"
        );
        std::fs::write(&path, bytes).unwrap();
    }
    let expected = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with ARPSIM_BLESS=1 to create it)",
            path.display()
        )
    });
    assert!(
        expected == bytes,
        "{name} differs from its golden file (ARPSIM_BLESS=1 rewrites it)"
    );
    let d = Dataset::from_bytes(&expected).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(d.records(), records, "{name} reads back");
    let h = d.header();
    assert_eq!(
        (h.mode, &h.types, h.count, h.partial),
        (
            header.mode,
            &header.types,
            records.len() as u64,
            header.partial
        ),
        "{name}: header"
    );
}

fn e(sid: u16, idx: i32) -> StackEntry {
    StackEntry { sid, idx }
}

fn header(mode: Mode, types: Vec<DataType>) -> Header {
    Header {
        format: FileFormat::Ascii,
        mode,
        types,
        count: 0,
        partial: false,
    }
}

/// One sample of every data type, extreme values included.
fn all_types() -> (Header, Vec<Record>) {
    let values = vec![
        Value::Char(-128),
        Value::UChar(255),
        Value::Short(-32768),
        Value::UShort(65535),
        Value::Int(-2147483648),
        Value::UInt(4294967295),
        Value::Long(-9223372036854775808),
        Value::ULong(18446744073709551615),
        Value::LLong(-1),
        Value::ULLong(0),
        Value::Float(0.1),
        Value::Double(-1e-300),
        Value::LDouble(12345.678),
    ];
    let h = header(Mode::RecordAll, DataType::ALL.to_vec());
    let r = vec![
        Record {
            stack: vec![e(8, 0), e(7, 0), e(1, 0)],
            payload: Payload::Sample(values.clone()),
        },
        Record {
            stack: vec![e(8, 0), e(7, 1), e(1, 0)],
            payload: Payload::Sample(values.iter().map(|v| Value::zero(v.data_type())).collect()),
        },
        Record {
            stack: vec![e(8, 0), e(7, 1), e(2, 3)],
            payload: Payload::Sample(values),
        },
    ];
    (h, r)
}

fn average() -> (Header, Vec<Record>) {
    let h = header(Mode::RecordAverage, vec![DataType::ULong, DataType::Double]);
    let r = vec![
        Record {
            stack: vec![e(8, 0), e(3, 0), e(2, 0), e(1, 0)],
            payload: Payload::Average {
                count: 600,
                means: vec![2560.0, 0.5],
            },
        },
        Record {
            stack: vec![e(8, 0), e(3, 0), e(2, 0)],
            payload: Payload::Average {
                count: 3,
                means: vec![512000.25, 1.0 / 3.0],
            },
        },
        Record {
            stack: vec![e(8, 0), e(6, 0), e(5, 0), e(4, 0)],
            payload: Payload::Average {
                count: 600,
                means: vec![2561.5, 0.0],
            },
        },
    ];
    (h, r)
}

fn histogram() -> (Header, Vec<Record>) {
    let h = header(Mode::RecordHistogram, vec![DataType::UInt]);
    let r = vec![
        Record {
            stack: vec![e(8, 0), e(1, 0)],
            payload: Payload::Histogram {
                count: 10,
                histograms: vec![Histogram {
                    bins: vec![(0, 1), (12, 7), (13, 2)],
                }],
            },
        },
        Record {
            stack: vec![e(8, 0), e(4, 0)],
            payload: Payload::Histogram {
                count: 1,
                histograms: vec![Histogram {
                    bins: vec![(64, 1)],
                }],
            },
        },
    ];
    (h, r)
}

#[test]
fn golden_files() {
    for (name, (header, records)) in [
        ("all_types", all_types()),
        ("average", average()),
        ("histogram", histogram()),
    ] {
        check(
            &format!("{name}.arp"),
            &ascii::to_bytes(&header, &records),
            &header,
            &records,
        );
        check(
            &format!("{name}.bin"),
            &binary::to_bytes(&header, &records),
            &header,
            &records,
        );
    }
}

/// The manual's example (6.5), with the record count of the five records
/// shown, parses and writes back byte for byte.
#[test]
fn manual_example_is_reproduced_byte_for_byte() {
    let text = std::fs::read(golden("manual_6_5.arp")).unwrap();
    let d = Dataset::from_bytes(&text).unwrap();
    assert_eq!(d.n_traces(), 5);
    assert_eq!(ascii::to_bytes(d.header(), d.records()), text);
}

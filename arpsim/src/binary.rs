//! The compact binary `data.arp` format (little-endian, versioned,
//! self-describing header; specified in FORMAT.md).

use crate::error::FormatError;
use crate::record::{Header, Histogram, Payload, Record, RecordRead, HISTOGRAM_BINS};
use crate::types::{DataType, FileFormat, Mode, StackEntry, Value};
use crate::writer::{Encoding, RecordWriter};
use std::io::{self, Read};

/// Magic bytes opening a binary file.
pub const MAGIC: &[u8; 4] = b"ARPB";
/// Format version written (major, minor).
pub const VERSION: (u16, u16) = (1, 0);
/// Byte offset of the `flags` field (bit 0: partial).
pub const FLAGS_OFFSET: u64 = 8;
/// Byte offset of the record count.
pub const COUNT_OFFSET: u64 = 12;
/// Flag bit: the run was interrupted.
pub const FLAG_PARTIAL: u32 = 1;

/// The header bytes.
pub fn header_bytes(header: &Header) -> Vec<u8> {
    let mut out = Vec::with_capacity(22 + header.types.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.0.to_le_bytes());
    out.extend_from_slice(&VERSION.1.to_le_bytes());
    let flags = if header.partial { FLAG_PARTIAL } else { 0 };
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&header.count.to_le_bytes());
    out.push(header.mode as u8);
    // the engine and the readers hold at most MAX_CALLBACK_SETS (255)
    debug_assert!(header.types.len() <= crate::types::MAX_CALLBACK_SETS);
    out.push(u8::try_from(header.types.len()).unwrap_or(u8::MAX));
    out.extend(header.types.iter().map(|t| t.code()));
    out
}

/// How the binary format spells a record (FORMAT.md): little-endian
/// fields, nothing between records.
#[derive(Debug)]
pub enum BinaryEncoding {}

/// Writes records in the binary format.
pub type BinaryWriter<W> = RecordWriter<W, BinaryEncoding>;

impl Encoding for BinaryEncoding {
    const FORMAT: FileFormat = FileFormat::Binary;

    fn header(header: &Header) -> Vec<u8> {
        header_bytes(header)
    }

    fn stack(buf: &mut Vec<u8>, depth: usize, reuse: usize, new: &[StackEntry], with_idx: bool) {
        buf.extend_from_slice(&(depth as u16).to_le_bytes());
        buf.extend_from_slice(&(reuse as u16).to_le_bytes());
        for e in new {
            buf.extend_from_slice(&e.sid.to_le_bytes());
            if with_idx {
                buf.extend_from_slice(&e.idx.to_le_bytes());
            }
        }
    }

    fn value(buf: &mut Vec<u8>, value: &Value) {
        push_value(buf, value);
    }

    fn count(buf: &mut Vec<u8>, count: u64) {
        buf.extend_from_slice(&count.to_le_bytes());
    }

    fn mean(buf: &mut Vec<u8>, mean: f64) {
        buf.extend_from_slice(&mean.to_le_bytes());
    }

    fn histogram(buf: &mut Vec<u8>, histogram: &Histogram) {
        buf.push(histogram.bins.len() as u8);
        for &(bin, n) in &histogram.bins {
            buf.push(bin);
            buf.extend_from_slice(&n.to_le_bytes());
        }
    }

    fn end(_buf: &mut Vec<u8>) {}
}

fn push_value(buf: &mut Vec<u8>, v: &Value) {
    match *v {
        Value::Char(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::UChar(x) => buf.push(x),
        Value::Short(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::UShort(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::Int(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::UInt(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::Long(x) | Value::LLong(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::ULong(x) | Value::ULLong(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::Float(x) => buf.extend_from_slice(&x.to_le_bytes()),
        Value::Double(x) | Value::LDouble(x) => buf.extend_from_slice(&x.to_le_bytes()),
    }
}

/// Reads a binary `data.arp` stream record by record.
pub struct BinaryReader<R: Read> {
    input: R,
    header: Header,
    offset: u64,
    read: u64,
    prev: Vec<StackEntry>,
}

/// `read_exact` that tells a clean end of stream (nothing read) apart.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl<R: Read> BinaryReader<R> {
    pub fn new(mut input: R) -> Result<Self, FormatError> {
        let mut fixed = [0u8; 22];
        let n = read_full(&mut input, &mut fixed)
            .map_err(|e| FormatError::at_offset(0, format!("read error: {e}")))?;
        if n < 22 {
            return Err(FormatError::at_offset(n as u64, "truncated header"));
        }
        if &fixed[..4] != MAGIC {
            return Err(FormatError::at_offset(0, "bad magic (expected `ARPB`)"));
        }
        let major = u16::from_le_bytes([fixed[4], fixed[5]]);
        if major != VERSION.0 {
            return Err(FormatError::at_offset(
                4,
                format!("unsupported binary format version {major}"),
            ));
        }
        let flags = u32::from_le_bytes(fixed[8..12].try_into().expect("4 bytes"));
        if flags & !FLAG_PARTIAL != 0 {
            return Err(FormatError::at_offset(
                8,
                format!("unknown flags {flags:#x}"),
            ));
        }
        let count = u64::from_le_bytes(fixed[12..20].try_into().expect("8 bytes"));
        let mode = match Mode::from_code(fixed[20] as u32) {
            Some(Mode::Playback) | None => {
                return Err(FormatError::at_offset(
                    20,
                    format!("unknown recording mode {}", fixed[20]),
                ))
            }
            Some(m) => m,
        };
        let n = fixed[21] as usize;
        let mut codes = vec![0u8; n];
        if read_full(&mut input, &mut codes).unwrap_or(0) < n {
            return Err(FormatError::at_offset(22, "truncated type codes"));
        }
        let mut types = Vec::with_capacity(n);
        for (i, &c) in codes.iter().enumerate() {
            types.push(DataType::from_code(c as u32).ok_or_else(|| {
                FormatError::at_offset(22 + i as u64, format!("unknown type code {c}"))
            })?);
        }
        Ok(BinaryReader {
            input,
            header: Header {
                format: FileFormat::Binary,
                mode,
                types,
                count,
                partial: flags & FLAG_PARTIAL != 0,
            },
            offset: 22 + n as u64,
            read: 0,
            prev: Vec::new(),
        })
    }

    fn take<const N: usize>(&mut self, what: &str) -> Result<[u8; N], FormatError> {
        let mut b = [0u8; N];
        let n = read_full(&mut self.input, &mut b).map_err(|e| {
            FormatError::at_offset(
                self.offset,
                format!("read error (truncated or corrupt file?): {e}"),
            )
        })?;
        if n < N {
            return Err(FormatError::at_offset(
                self.offset + n as u64,
                format!("file truncated inside {what} of record {}", self.read + 1),
            ));
        }
        self.offset += N as u64;
        Ok(b)
    }

    fn value(&mut self, ty: DataType) -> Result<Value, FormatError> {
        Ok(match ty {
            DataType::Char => Value::Char(i8::from_le_bytes(self.take("a value")?)),
            DataType::UChar => Value::UChar(u8::from_le_bytes(self.take("a value")?)),
            DataType::Short => Value::Short(i16::from_le_bytes(self.take("a value")?)),
            DataType::UShort => Value::UShort(u16::from_le_bytes(self.take("a value")?)),
            DataType::Int => Value::Int(i32::from_le_bytes(self.take("a value")?)),
            DataType::UInt => Value::UInt(u32::from_le_bytes(self.take("a value")?)),
            DataType::Long => Value::Long(i64::from_le_bytes(self.take("a value")?)),
            DataType::ULong => Value::ULong(u64::from_le_bytes(self.take("a value")?)),
            DataType::LLong => Value::LLong(i64::from_le_bytes(self.take("a value")?)),
            DataType::ULLong => Value::ULLong(u64::from_le_bytes(self.take("a value")?)),
            DataType::Float => Value::Float(f32::from_le_bytes(self.take("a value")?)),
            DataType::Double => Value::Double(f64::from_le_bytes(self.take("a value")?)),
            DataType::LDouble => Value::LDouble(f64::from_le_bytes(self.take("a value")?)),
        })
    }
}

impl<R: Read> RecordRead for BinaryReader<R> {
    fn header(&self) -> &Header {
        &self.header
    }

    fn read_into(&mut self, rec: &mut Record) -> Result<bool, FormatError> {
        let start = self.offset;
        let mut first = [0u8; 2];
        let n = read_full(&mut self.input, &mut first).map_err(|e| {
            FormatError::at_offset(
                self.offset,
                format!("read error (truncated or corrupt file?): {e}"),
            )
        })?;
        if n == 0 {
            if self.read != self.header.count {
                return Err(FormatError::at_offset(
                    COUNT_OFFSET,
                    format!(
                        "wrong record count: the header says {}, the file holds {}",
                        self.header.count, self.read
                    ),
                ));
            }
            return Ok(false);
        }
        if self.read == self.header.count {
            return Err(FormatError::at_offset(
                start,
                format!(
                    "trailing data after the {} record(s) the header announces",
                    self.header.count
                ),
            ));
        }
        if n < 2 {
            return Err(FormatError::at_offset(
                start + 1,
                "file truncated inside a record",
            ));
        }
        self.offset += 2;
        let depth = u16::from_le_bytes(first) as usize;
        let reuse = u16::from_le_bytes(self.take("the reuse count")?) as usize;
        if reuse > self.prev.len() || reuse > depth || depth == 0 {
            return Err(FormatError::at_offset(
                start,
                format!(
                    "record {}: depth {depth} / reuse {reuse} impossible after a record of depth {}",
                    self.read + 1,
                    self.prev.len()
                ),
            ));
        }
        let with_idx = self.header.mode == Mode::RecordAll;
        rec.stack.clear();
        rec.stack.extend_from_slice(&self.prev[..reuse]);
        for _ in reuse..depth {
            let sid = u16::from_le_bytes(self.take("a stack entry")?);
            let idx = if with_idx {
                i32::from_le_bytes(self.take("a stack entry")?)
            } else {
                0
            };
            rec.stack.push(StackEntry { sid, idx });
        }
        let m = self.header.types.len();
        rec.payload = match self.header.mode {
            Mode::RecordAll => {
                let mut values =
                    match std::mem::replace(&mut rec.payload, Payload::Sample(Vec::new())) {
                        Payload::Sample(v) => v,
                        _ => Vec::with_capacity(m),
                    };
                values.clear();
                for i in 0..m {
                    let ty = self.header.types[i];
                    values.push(self.value(ty)?);
                }
                Payload::Sample(values)
            }
            Mode::RecordAverage => {
                let count = u64::from_le_bytes(self.take("the sample count")?);
                let mut means = Vec::with_capacity(m);
                for _ in 0..m {
                    means.push(f64::from_le_bytes(self.take("a mean")?));
                }
                Payload::Average { count, means }
            }
            _ => {
                let count = u64::from_le_bytes(self.take("the sample count")?);
                let mut histograms = Vec::with_capacity(m);
                for _ in 0..m {
                    let at = self.offset;
                    let [nbins] = self.take::<1>("a histogram")?;
                    let mut h = Histogram::default();
                    for _ in 0..nbins {
                        let [bin] = self.take::<1>("a histogram bin")?;
                        let n = u64::from_le_bytes(self.take("a histogram bin")?);
                        if bin as usize >= HISTOGRAM_BINS
                            || n == 0
                            || h.bins.last().is_some_and(|&(b, _)| b >= bin)
                        {
                            return Err(FormatError::at_offset(at, "bad histogram bin"));
                        }
                        h.bins.push((bin, n));
                    }
                    if h.total() != u128::from(count) {
                        return Err(FormatError::at_offset(
                            at,
                            format!(
                                "histogram total {} differs from the sample count {count}",
                                h.total()
                            ),
                        ));
                    }
                    histograms.push(h);
                }
                Payload::Histogram { count, histograms }
            }
        };
        if rec.payload.count() == 0 {
            return Err(FormatError::at_offset(
                start,
                "record with a sample count of 0",
            ));
        }
        self.prev.clear();
        self.prev.extend_from_slice(&rec.stack);
        self.read += 1;
        Ok(true)
    }
}

/// Writes a whole data set in the binary format into a byte vector
/// (header included). Panics on a stack deeper than [`crate::record::MAX_DEPTH`].
pub fn to_bytes(header: &Header, records: &[Record]) -> Vec<u8> {
    crate::writer::to_bytes::<BinaryEncoding>(header, records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Histogram;

    fn sample_set() -> (Header, Vec<Record>) {
        let header = Header {
            format: FileFormat::Binary,
            mode: Mode::RecordAll,
            types: vec![DataType::UInt, DataType::Double],
            count: 2,
            partial: false,
        };
        let s = |sid, idx| StackEntry { sid, idx };
        let records = vec![
            Record {
                stack: vec![s(8, 0), s(1, 3)],
                payload: Payload::Sample(vec![Value::UInt(10), Value::Double(0.5)]),
            },
            Record {
                stack: vec![s(8, 0), s(1, 4)],
                payload: Payload::Sample(vec![Value::UInt(11), Value::Double(-1.0)]),
            },
        ];
        (header, records)
    }

    #[test]
    fn round_trip_and_layout() {
        let (header, records) = sample_set();
        let bytes = to_bytes(&header, &records);
        // header 22 + 2 codes; record 1: 4 + 2*6 + 4 + 8; record 2: 4 + 6 + 12.
        assert_eq!(bytes.len(), 24 + 28 + 22);
        assert_eq!(&bytes[..4], b"ARPB");
        let mut r = BinaryReader::new(&bytes[..]).unwrap();
        assert_eq!(r.header(), &header);
        let mut rec = Record {
            stack: vec![],
            payload: Payload::Sample(vec![]),
        };
        for expected in &records {
            assert!(r.read_into(&mut rec).unwrap());
            assert_eq!(&rec, expected);
        }
        assert!(!r.read_into(&mut rec).unwrap());
    }

    #[test]
    fn truncation_is_reported_with_offset() {
        let (header, records) = sample_set();
        let bytes = to_bytes(&header, &records);
        for cut in 0..bytes.len() {
            let result = (|| {
                let mut r = BinaryReader::new(&bytes[..cut])?;
                let mut rec = Record {
                    stack: vec![],
                    payload: Payload::Sample(vec![]),
                };
                while r.read_into(&mut rec)? {}
                Ok::<(), FormatError>(())
            })();
            assert!(result.is_err(), "cut at {cut} accepted");
        }
    }

    #[test]
    fn histogram_counts_that_wrap_a_u64_are_refused() {
        let header = Header {
            format: FileFormat::Binary,
            mode: Mode::RecordHistogram,
            types: vec![DataType::UInt],
            count: 1,
            partial: false,
        };
        // 2^64 - 1 + 3 wraps to 2 in u64 arithmetic, which equals n.
        let wrapping = Histogram {
            bins: vec![(1, u64::MAX), (2, 3)],
        };
        let record = Record {
            stack: vec![StackEntry { sid: 1, idx: 0 }],
            payload: Payload::Histogram {
                count: 2,
                histograms: vec![wrapping],
            },
        };
        let bytes = to_bytes(&header, &[record]);
        let mut r = BinaryReader::new(&bytes[..]).unwrap();
        let mut rec = Record {
            stack: vec![],
            payload: Payload::Sample(vec![]),
        };
        let e = r.read_into(&mut rec).unwrap_err();
        assert_eq!(
            e.to_string(),
            "byte offset 37: histogram total 18446744073709551618 differs from the sample count 2"
        );
    }
}

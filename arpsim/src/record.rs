//! The content of a `data.arp` file: a header and records, independent of
//! the on-disk format.

use crate::error::FormatError;
use crate::types::{DataType, FileFormat, Mode, StackEntry, Value};
use std::io;

/// The header of a `data.arp` file (manual 6.5, lines 1–3).
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub format: FileFormat,
    /// `RecordAverage`, `RecordAll` or `RecordHistogram`; never `Playback`
    /// (a file is always written by a recording run).
    pub mode: Mode,
    /// One data type per callback set, in registration order (manual 6.4:
    /// the "data multiplicity").
    pub types: Vec<DataType>,
    /// Number of records that follow.
    pub count: u64,
    /// The run was interrupted: the records are a prefix of the run.
    pub partial: bool,
}

/// Deepest stack a record may hold, in every format: the binary format
/// stores `depth` as a `u16` (FORMAT.md). Bounds a reader's memory per
/// record and its time per record.
pub const MAX_DEPTH: usize = u16::MAX as usize;

/// Number of bins of a [`Histogram`].
pub const HISTOGRAM_BINS: usize = 65;

/// A log2 histogram of the values of one callback set.
///
/// Bin 0 holds values below 1 (including negative values and NaN); bin
/// `b` in 1..=64 holds values `v` with `2^(b-1) <= v < 2^b` (bin 64 also
/// holds everything larger). Stored sparsely: only non-empty bins.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Histogram {
    /// `(bin, count)` pairs, bins strictly increasing, counts non-zero.
    pub bins: Vec<(u8, u64)>,
}

impl Histogram {
    /// The bin of `value` (see the type's doc).
    pub fn bin_of(value: &Value) -> u8 {
        let as_int = match *value {
            Value::Char(v) => Some(v as i128),
            Value::UChar(v) => Some(v as i128),
            Value::Short(v) => Some(v as i128),
            Value::UShort(v) => Some(v as i128),
            Value::Int(v) => Some(v as i128),
            Value::UInt(v) => Some(v as i128),
            Value::Long(v) | Value::LLong(v) => Some(v as i128),
            Value::ULong(v) | Value::ULLong(v) => Some(v as i128),
            _ => None,
        };
        match as_int {
            Some(v) if v < 1 => 0,
            Some(v) => (128 - v.leading_zeros()) as u8,
            None => {
                let v = value.as_f64();
                if v.is_nan() || v < 1.0 {
                    0
                } else if v >= 2f64.powi(63) {
                    64
                } else {
                    (64 - (v as u64).leading_zeros()) as u8
                }
            }
        }
    }

    /// Adds `n` samples to `bin`.
    pub fn add(&mut self, bin: u8, n: u64) {
        match self.bins.binary_search_by_key(&bin, |&(b, _)| b) {
            Ok(i) => self.bins[i].1 += n,
            Err(i) => self.bins.insert(i, (bin, n)),
        }
    }

    /// Total number of samples, exact: 65 bins of up to `u64::MAX` each
    /// cannot wrap a `u128` (a `u64` sum could, and then pass a check).
    pub fn total(&self) -> u128 {
        self.bins.iter().map(|&(_, n)| u128::from(n)).sum()
    }

    /// The range `[low, high)` of values that fall into `bin`.
    pub fn bin_range(bin: u8) -> (f64, f64) {
        match bin {
            0 => (f64::NEG_INFINITY, 1.0),
            64 => (2f64.powi(63), f64::INFINITY),
            b => (2f64.powi(b as i32 - 1), 2f64.powi(b as i32)),
        }
    }
}

/// What a record holds, by mode.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    /// `record_all`: one sample, one value per callback set.
    Sample(Vec<Value>),
    /// `record_average`: the number of samples and the mean per callback set.
    Average { count: u64, means: Vec<f64> },
    /// `record_histogram`: the number of samples and a histogram per set.
    Histogram {
        count: u64,
        histograms: Vec<Histogram>,
    },
}

impl Payload {
    /// The number of samples the record represents (manual 6.4: always 1
    /// in `record_all`).
    pub fn count(&self) -> u64 {
        match self {
            Payload::Sample(_) => 1,
            Payload::Average { count, .. } | Payload::Histogram { count, .. } => *count,
        }
    }

    /// The mode whose records carry this payload.
    pub fn mode(&self) -> Mode {
        match self {
            Payload::Sample(_) => Mode::RecordAll,
            Payload::Average { .. } => Mode::RecordAverage,
            Payload::Histogram { .. } => Mode::RecordHistogram,
        }
    }
}

/// One record: a trace (the stack of active sections, outermost first, its
/// last entry being the kernel or profiled section measured — DESIGN.md
/// decision 6) and its payload.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub stack: Vec<StackEntry>,
    pub payload: Payload,
}

/// Number of leading entries `stack` shares with `prev` (manual 6.5: the
/// "reuse" column). In average and histogram records only the section ids
/// are compared (their `idx` is always 0).
pub fn common_prefix(prev: &[StackEntry], stack: &[StackEntry]) -> usize {
    prev.iter().zip(stack).take_while(|(a, b)| a == b).count()
}

/// A sink of records in one of the formats.
pub trait RecordWrite {
    /// Writes one `record_all` sample.
    fn write_sample(&mut self, stack: &[StackEntry], values: &[Value]) -> io::Result<()>;
    /// Writes one record of any mode.
    fn write_payload(&mut self, stack: &[StackEntry], payload: &Payload) -> io::Result<()>;
    /// Flushes buffered records.
    fn finish(&mut self) -> io::Result<()>;
}

/// A source of records in one of the formats. Readers stream: they hold
/// one record and the previous stack, never the whole file.
pub trait RecordRead {
    fn header(&self) -> &Header;
    /// Reads the next record into `rec`; `Ok(false)` at the end (after
    /// checking the record count).
    fn read_into(&mut self, rec: &mut Record) -> Result<bool, FormatError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_bins() {
        assert_eq!(Histogram::bin_of(&Value::Int(-5)), 0);
        assert_eq!(Histogram::bin_of(&Value::Int(0)), 0);
        assert_eq!(Histogram::bin_of(&Value::Int(1)), 1);
        assert_eq!(Histogram::bin_of(&Value::UInt(2)), 2);
        assert_eq!(Histogram::bin_of(&Value::UInt(3)), 2);
        assert_eq!(Histogram::bin_of(&Value::UInt(4)), 3);
        assert_eq!(Histogram::bin_of(&Value::ULong(u64::MAX)), 64);
        assert_eq!(Histogram::bin_of(&Value::Double(0.5)), 0);
        assert_eq!(Histogram::bin_of(&Value::Double(1.0)), 1);
        assert_eq!(Histogram::bin_of(&Value::Double(1023.9)), 10);
        assert_eq!(Histogram::bin_of(&Value::Double(f64::NAN)), 0);
        assert_eq!(Histogram::bin_of(&Value::Double(1e300)), 64);
        for b in 1..64u8 {
            let (lo, hi) = Histogram::bin_range(b);
            assert_eq!(Histogram::bin_of(&Value::Double(lo)), b);
            assert_eq!(Histogram::bin_of(&Value::Double(hi)), b + 1);
        }
    }

    #[test]
    fn histogram_add_keeps_bins_sorted() {
        let mut h = Histogram::default();
        h.add(5, 1);
        h.add(2, 3);
        h.add(5, 2);
        assert_eq!(h.bins, vec![(2, 3), (5, 3)]);
        assert_eq!(h.total(), 6);
    }
}

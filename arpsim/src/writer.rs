//! What the two format writers share: one record layout (the stack, with
//! the entries shared with the previous record's stack left out, manual
//! 6.5; then the payload's fields), the depth limit and the buffering.
//! Each format says only how one part is spelled ([`Encoding`]);
//! [`RecordWriter`] puts the parts together in the same order for both.

use crate::record::{common_prefix, Header, Histogram, Payload, Record, RecordWrite, MAX_DEPTH};
use crate::types::{FileFormat, StackEntry, Value};
use std::io::{self, Write};
use std::marker::PhantomData;

/// How one format spells a header and the parts of a record (appended to
/// `buf`).
pub trait Encoding {
    /// The format.
    const FORMAT: FileFormat;
    /// The header bytes (with a plain record count).
    fn header(header: &Header) -> Vec<u8>;
    /// The stack part: the record's depth, how many leading entries it
    /// shares with the previous record's stack, and the entries after
    /// those (with their counters in `record_all` samples, `with_idx`).
    fn stack(buf: &mut Vec<u8>, depth: usize, reuse: usize, new: &[StackEntry], with_idx: bool);
    /// One value of a `record_all` sample.
    fn value(buf: &mut Vec<u8>, value: &Value);
    /// The sample count of an average or histogram record.
    fn count(buf: &mut Vec<u8>, count: u64);
    /// One mean of an average record.
    fn mean(buf: &mut Vec<u8>, mean: f64);
    /// One histogram of a histogram record.
    fn histogram(buf: &mut Vec<u8>, histogram: &Histogram);
    /// What closes a record.
    fn end(buf: &mut Vec<u8>);
}

/// Bytes a writer buffers before it writes them out.
const FLUSH_AT: usize = 1 << 15;

/// Writes records in the format `E`, with prefix reuse.
pub struct RecordWriter<W: Write, E: Encoding> {
    out: W,
    prev: Vec<StackEntry>,
    buf: Vec<u8>,
    encoding: PhantomData<E>,
}

impl<W: Write, E: Encoding> RecordWriter<W, E> {
    /// A writer whose header has already been written (or will be
    /// written by the caller).
    pub fn new(out: W) -> Self {
        RecordWriter {
            out,
            prev: Vec::new(),
            buf: Vec::with_capacity(1 << 16),
            encoding: PhantomData,
        }
    }

    /// Writes out the buffer and returns the underlying writer.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.flush_buf()?;
        Ok(self.out)
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    fn start_record(&mut self, stack: &[StackEntry], with_idx: bool) -> io::Result<()> {
        if stack.len() > MAX_DEPTH {
            // No reader would accept it (FORMAT.md, "Memory bounds").
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "stack deeper than 65535 sections",
            ));
        }
        let reuse = common_prefix(&self.prev, stack);
        E::stack(&mut self.buf, stack.len(), reuse, &stack[reuse..], with_idx);
        self.prev.truncate(reuse);
        self.prev.extend_from_slice(&stack[reuse..]);
        Ok(())
    }

    fn end_record(&mut self) -> io::Result<()> {
        E::end(&mut self.buf);
        if self.buf.len() >= FLUSH_AT {
            self.flush_buf()?;
        }
        Ok(())
    }
}

impl<W: Write, E: Encoding> RecordWrite for RecordWriter<W, E> {
    fn write_sample(&mut self, stack: &[StackEntry], values: &[Value]) -> io::Result<()> {
        self.start_record(stack, true)?;
        for v in values {
            E::value(&mut self.buf, v);
        }
        self.end_record()
    }

    fn write_payload(&mut self, stack: &[StackEntry], payload: &Payload) -> io::Result<()> {
        match payload {
            Payload::Sample(values) => return self.write_sample(stack, values),
            Payload::Average { count, means } => {
                self.start_record(stack, false)?;
                E::count(&mut self.buf, *count);
                for &m in means {
                    E::mean(&mut self.buf, m);
                }
            }
            Payload::Histogram { count, histograms } => {
                self.start_record(stack, false)?;
                E::count(&mut self.buf, *count);
                for h in histograms {
                    E::histogram(&mut self.buf, h);
                }
            }
        }
        self.end_record()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.flush_buf()?;
        self.out.flush()
    }
}

/// A whole data set in the format `E` as bytes: the header (its format
/// and count set to match) and the records. Panics on a stack deeper than
/// [`MAX_DEPTH`].
pub fn to_bytes<E: Encoding>(header: &Header, records: &[Record]) -> Vec<u8> {
    let mut h = header.clone();
    h.format = E::FORMAT;
    h.count = records.len() as u64;
    let mut out = E::header(&h);
    let mut w = RecordWriter::<_, E>::new(&mut out);
    for r in records {
        w.write_payload(&r.stack, &r.payload)
            .expect("a stack within MAX_DEPTH, written to a Vec");
    }
    w.finish().expect("writing to a Vec cannot fail");
    drop(w);
    out
}

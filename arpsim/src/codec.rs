//! Reading and writing `data.arp` files: format detection from content,
//! gzip, atomic replacement and the streamed output of `record_all`.
//!
//! Files are written through [`crate::output`]: a regular destination is
//! replaced atomically at the end, so a reader never sees a half written
//! file and an interrupted run leaves the previous file intact; a device
//! or FIFO is written in place.

use crate::ascii::{self, AsciiReader, AsciiWriter};
use crate::binary::{self, BinaryReader, BinaryWriter};
use crate::error::{not_started, ArpError, FormatError, Result};
use crate::output::{self, Output};
use crate::record::{Header, Payload, Record, RecordRead, RecordWrite};
use crate::types::{FileFormat, StackEntry, Value};
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The gzip magic bytes (RFC 1952).
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Opens a record reader on any byte stream: gzip is detected from its
/// magic bytes, then the binary format from `ARPB`; anything else is
/// read as ASCII (manual 6.5).
pub fn reader_from<R: Read + 'static>(input: R) -> Result<Box<dyn RecordRead>, FormatError> {
    let mut buffered = BufReader::with_capacity(1 << 16, input);
    let head = buffered
        .fill_buf()
        .map_err(|e| FormatError::at_offset(0, format!("read error: {e}")))?;
    if head.starts_with(&GZIP_MAGIC) {
        let inner = BufReader::with_capacity(1 << 16, MultiGzDecoder::new(buffered));
        return sniff_plain(inner);
    }
    sniff_plain(buffered)
}

fn sniff_plain<R: BufRead + 'static>(mut input: R) -> Result<Box<dyn RecordRead>, FormatError> {
    let head = input
        .fill_buf()
        .map_err(|e| FormatError::at_offset(0, format!("read error (corrupt gzip?): {e}")))?;
    if head.starts_with(binary::MAGIC) {
        Ok(Box::new(BinaryReader::new(input)?))
    } else {
        Ok(Box::new(AsciiReader::new(input)?))
    }
}

/// Opens `path` for reading records.
pub fn open(path: &Path) -> Result<Box<dyn RecordRead>> {
    let file = File::open(path).map_err(|e| ArpError::io(path.display().to_string(), e))?;
    reader_from(file).map_err(|source| ArpError::Format {
        path: path.display().to_string(),
        source,
    })
}

/// Reads all records of `path` through `f`, one at a time.
pub fn for_each_record(
    path: &Path,
    mut f: impl FnMut(&Header, &Record) -> Result<()>,
) -> Result<Header> {
    let mut reader = open(path)?;
    let mut rec = Record {
        stack: Vec::new(),
        payload: Payload::Sample(Vec::new()),
    };
    let header = reader.header().clone();
    while reader
        .read_into(&mut rec)
        .map_err(|source| ArpError::Format {
            path: path.display().to_string(),
            source,
        })?
    {
        f(&header, &rec)?;
    }
    Ok(header)
}

/// Where and how a data file is written (manual 6.1.2:
/// `arp_set_file_name`, `arp_set_output_file_format`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputSpec {
    pub path: PathBuf,
    pub format: FileFormat,
    /// Compress with gzip. Also implied by a name ending in `.gz`.
    pub gzip: bool,
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            path: PathBuf::from("data.arp"),
            format: FileFormat::Ascii,
            gzip: false,
        }
    }
}

impl OutputSpec {
    /// Whether the output is gzip-compressed.
    pub fn compressed(&self) -> bool {
        self.gzip || self.path.extension().is_some_and(|e| e == "gz")
    }

    /// Where a scratch file for this output goes: beside a regular
    /// destination (same file system), else the system's temporary folder.
    fn scratch_file(&self) -> Result<File> {
        let file = match output::Destination::of(&self.path) {
            Ok(output::Destination::Regular { path, .. }) => match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => tempfile::tempfile_in(dir),
                _ => tempfile::tempfile_in("."),
            },
            _ => tempfile::tempfile(),
        };
        file.map_err(|e| self.io_err(e))
    }

    fn io_err(&self, e: io::Error) -> ArpError {
        ArpError::io(self.path.display().to_string(), e)
    }
}

fn header_bytes(format: FileFormat, header: &Header, fixed_width: bool) -> Vec<u8> {
    let mut h = header.clone();
    h.format = format;
    match format {
        FileFormat::Ascii => ascii::header_bytes(&h, fixed_width),
        FileFormat::Binary => binary::header_bytes(&h),
    }
}

enum FormatWriter<W: Write> {
    Ascii(AsciiWriter<W>),
    Binary(BinaryWriter<W>),
}

impl<W: Write> FormatWriter<W> {
    fn new(format: FileFormat, out: W) -> Self {
        match format {
            FileFormat::Ascii => FormatWriter::Ascii(AsciiWriter::new(out)),
            FileFormat::Binary => FormatWriter::Binary(BinaryWriter::new(out)),
        }
    }
    fn as_dyn(&mut self) -> &mut dyn RecordWrite {
        match self {
            FormatWriter::Ascii(w) => w,
            FormatWriter::Binary(w) => w,
        }
    }
    fn into_inner(self) -> io::Result<W> {
        match self {
            FormatWriter::Ascii(w) => w.into_inner(),
            FormatWriter::Binary(w) => w.into_inner(),
        }
    }
}

enum Body<W: Write> {
    /// Unbuffered: the format writers buffer themselves.
    Plain(W),
    Gzip(GzEncoder<BufWriter<W>>),
}

impl<W: Write> Write for Body<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Body::Plain(w) => w.write(buf),
            Body::Gzip(w) => w.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Body::Plain(w) => w.write_all(buf),
            Body::Gzip(w) => w.write_all(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Body::Plain(w) => w.flush(),
            Body::Gzip(w) => w.flush(),
        }
    }
}

/// Writes a whole data set atomically: `header.count` must equal the
/// number of records `write` produces.
pub fn write_file(
    spec: &OutputSpec,
    header: &Header,
    write: impl FnOnce(&mut dyn RecordWrite) -> Result<()>,
) -> Result<()> {
    let file = Output::create(&spec.path).map_err(|e| spec.io_err(e))?;
    let mut body = if spec.compressed() {
        Body::Gzip(GzEncoder::new(BufWriter::new(file), Compression::fast()))
    } else {
        Body::Plain(file)
    };
    body.write_all(&header_bytes(spec.format, header, false))
        .map_err(|e| spec.io_err(e))?;
    let mut writer = FormatWriter::new(spec.format, body);
    write(writer.as_dyn())?;
    writer.as_dyn().finish().map_err(|e| spec.io_err(e))?;
    let body = writer.into_inner().map_err(|e| spec.io_err(e))?;
    let out = finish_body(body).map_err(|e| spec.io_err(e))?;
    out.commit().map_err(|e| spec.io_err(e))
}

/// Writes `records` atomically (count and format taken from `spec`).
pub fn write_records(spec: &OutputSpec, header: &Header, records: &[Record]) -> Result<()> {
    let mut h = header.clone();
    h.count = records.len() as u64;
    write_file(spec, &h, |w| {
        for r in records {
            w.write_payload(&r.stack, &r.payload)
                .map_err(|e| spec.io_err(e))?;
        }
        Ok(())
    })
}

/// [`write_records`] for records made one at a time (`count` of them):
/// only one is held, whatever their number and depth.
pub fn write_record_iter(
    spec: &OutputSpec,
    header: &Header,
    count: u64,
    records: impl Iterator<Item = Record>,
) -> Result<()> {
    let mut h = header.clone();
    h.count = count;
    write_file(spec, &h, |w| {
        for r in records {
            w.write_payload(&r.stack, &r.payload)
                .map_err(|e| spec.io_err(e))?;
        }
        Ok(())
    })
}

fn finish_body<W: Write>(body: Body<W>) -> io::Result<W> {
    match body {
        Body::Plain(f) => Ok(f),
        Body::Gzip(w) => w.finish()?.into_inner().map_err(|e| e.into_error()),
    }
}

/// The streamed output of `record_all` (FORMAT.md, "Streamed files"):
/// records go to disk as they are produced, so memory stays bounded by the
/// stack depth. Uncompressed, the header's record count is a fixed-width
/// placeholder patched at the end; compressed, the records are written as
/// one gzip member to an unnamed scratch file and the final file is a gzip
/// member holding the header followed by a byte copy of that member.
pub struct StreamedOutput {
    spec: OutputSpec,
    header: Header,
    writer: Option<FormatWriter<Body<Stream>>>,
    count: u64,
    header_len: u64,
}

/// Where streamed records go: the final output itself (uncompressed, the
/// header patched in place at the end) or a scratch file (compressed).
enum Stream {
    Final(Box<Output>),
    Scratch(File),
}

impl Stream {
    fn file(&mut self) -> &mut File {
        match self {
            Stream::Final(out) => out.file(),
            Stream::Scratch(file) => file,
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file().write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

impl StreamedOutput {
    /// Creates the output (or its scratch file) and writes the provisional
    /// header.
    pub fn create(spec: &OutputSpec, header: &Header) -> Result<Self> {
        let mut header = header.clone();
        header.format = spec.format;
        header.partial = true;
        header.count = 0;
        let (body, header_len) = if spec.compressed() {
            let scratch = Stream::Scratch(spec.scratch_file()?);
            let body = Body::Gzip(GzEncoder::new(
                BufWriter::with_capacity(1 << 16, scratch),
                Compression::fast(),
            ));
            (body, 0)
        } else {
            let out = Output::create_seekable(&spec.path).map_err(|e| spec.io_err(e))?;
            let mut out = Stream::Final(Box::new(out));
            let bytes = header_bytes(spec.format, &header, true);
            out.write_all(&bytes).map_err(|e| spec.io_err(e))?;
            (Body::Plain(out), bytes.len() as u64)
        };
        Ok(StreamedOutput {
            spec: spec.clone(),
            header,
            writer: Some(FormatWriter::new(spec.format, body)),
            count: 0,
            header_len,
        })
    }

    /// Appends one sample.
    #[inline]
    pub fn write_sample(&mut self, stack: &[StackEntry], values: &[Value]) -> Result<()> {
        // the format's writer called directly, not through `as_dyn`: one
        // record per leave, so the call is inlined instead of dispatched
        let written = match self.writer.as_mut().ok_or_else(not_started)? {
            FormatWriter::Ascii(w) => w.write_sample(stack, values),
            FormatWriter::Binary(w) => w.write_sample(stack, values),
        };
        written.map_err(|e| self.spec.io_err(e))?;
        self.count += 1;
        Ok(())
    }

    /// Number of records written so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Completes the file (marked partial if `partial`) and makes it
    /// visible at its path.
    pub fn finish(mut self, partial: bool) -> Result<PathBuf> {
        let spec = self.spec.clone();
        let mut writer = self.writer.take().ok_or_else(not_started)?;
        writer.as_dyn().finish().map_err(|e| spec.io_err(e))?;
        let body = writer.into_inner().map_err(|e| spec.io_err(e))?;
        let stream = finish_body(body).map_err(|e| spec.io_err(e))?;
        self.header.count = self.count;
        self.header.partial = partial;
        match stream {
            Stream::Scratch(records) => self.finish_compressed(records),
            Stream::Final(out) => self.finish_in_place(*out),
        }
        .map_err(|e| spec.io_err(e))?;
        Ok(spec.path)
    }

    fn finish_compressed(&self, mut records: File) -> io::Result<()> {
        // Header member first, then a byte copy of the records member:
        // concatenated gzip members decode as one stream (RFC 1952).
        let out = Output::create(&self.spec.path)?;
        let mut gz = GzEncoder::new(BufWriter::new(out), Compression::fast());
        gz.write_all(&header_bytes(self.spec.format, &self.header, false))?;
        let mut out = gz.finish()?;
        records.seek(SeekFrom::Start(0))?;
        io::copy(&mut records, &mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.commit()
    }

    fn finish_in_place(&self, mut out: Output) -> io::Result<()> {
        let patched = header_bytes(self.spec.format, &self.header, true);
        debug_assert_eq!(patched.len() as u64, self.header_len);
        let file = out.file();
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&patched)?;
        out.commit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{DataType, Mode};

    fn header() -> Header {
        Header {
            format: FileFormat::Ascii,
            mode: Mode::RecordAll,
            types: vec![DataType::UInt],
            count: 0,
            partial: false,
        }
    }

    fn read_all(path: &Path) -> (Header, Vec<Record>) {
        let mut records = Vec::new();
        let h = for_each_record(path, |_, r| {
            records.push(r.clone());
            Ok(())
        })
        .unwrap();
        (h, records)
    }

    #[test]
    fn streamed_output_in_every_format_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        for (name, format, gzip) in [
            ("a.arp", FileFormat::Ascii, false),
            ("b.arp.gz", FileFormat::Ascii, false),
            ("c.arp", FileFormat::Binary, false),
            ("d.arp", FileFormat::Binary, true),
        ] {
            for partial in [false, true] {
                let spec = OutputSpec {
                    path: dir.path().join(name),
                    format,
                    gzip,
                };
                let mut out = StreamedOutput::create(&spec, &header()).unwrap();
                for i in 0..1000 {
                    let stack = [StackEntry { sid: 2, idx: 0 }, StackEntry { sid: 1, idx: i }];
                    out.write_sample(&stack, &[Value::UInt(i as u32 * 3)])
                        .unwrap();
                }
                out.finish(partial).unwrap();
                let (h, records) = read_all(&spec.path);
                assert_eq!(h.count, 1000, "{name}");
                assert_eq!(h.partial, partial);
                assert_eq!(h.format, format);
                assert_eq!(
                    records[999].payload,
                    Payload::Sample(vec![Value::UInt(2997)])
                );
                let raw = std::fs::read(&spec.path).unwrap();
                assert_eq!(raw.starts_with(&GZIP_MAGIC), spec.compressed(), "{name}");
            }
        }
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 4, "{names:?}");
    }

    #[test]
    fn streamed_ascii_patches_a_fixed_width_count() {
        let dir = tempfile::tempdir().unwrap();
        let spec = OutputSpec {
            path: dir.path().join("s.arp"),
            ..OutputSpec::default()
        };
        for (partial, count_line) in [
            (false, "0000000000000000000000000002"),
            (true, "00000000000000000002 partial"),
        ] {
            let mut out = StreamedOutput::create(&spec, &header()).unwrap();
            out.write_sample(
                &[StackEntry { sid: 2, idx: 0 }, StackEntry { sid: 1, idx: 0 }],
                &[Value::UInt(5)],
            )
            .unwrap();
            out.write_sample(
                &[StackEntry { sid: 2, idx: 0 }, StackEntry { sid: 1, idx: 1 }],
                &[Value::UInt(6)],
            )
            .unwrap();
            out.finish(partial).unwrap();
            assert_eq!(
                std::fs::read_to_string(&spec.path).unwrap(),
                format!("# Atomium record and playback data - format version 1.1.\n0 1 1 5\n{count_line}\n2 0 2@0 1@0: 5;\n2 1 1@1: 6;\n")
            );
        }
    }

    #[test]
    fn an_abandoned_stream_leaves_the_previous_file() {
        let dir = tempfile::tempdir().unwrap();
        let spec = OutputSpec {
            path: dir.path().join("data.arp"),
            ..OutputSpec::default()
        };
        write_records(&spec, &header(), &[]).unwrap();
        let before = std::fs::read(&spec.path).unwrap();
        let mut out = StreamedOutput::create(&spec, &header()).unwrap();
        out.write_sample(&[StackEntry { sid: 1, idx: 0 }], &[Value::UInt(1)])
            .unwrap();
        drop(out); // an interrupted run
        assert_eq!(std::fs::read(&spec.path).unwrap(), before);
    }

    #[test]
    fn truncated_gzip_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let spec = OutputSpec {
            path: dir.path().join("t.arp.gz"),
            ..OutputSpec::default()
        };
        let mut out = StreamedOutput::create(&spec, &header()).unwrap();
        for i in 0..5000 {
            out.write_sample(&[StackEntry { sid: 1, idx: i }], &[Value::UInt(7)])
                .unwrap();
        }
        out.finish(false).unwrap();
        let raw = std::fs::read(&spec.path).unwrap();
        std::fs::write(&spec.path, &raw[..raw.len() - 20]).unwrap();
        let err = for_each_record(&spec.path, |_, _| Ok(())).unwrap_err();
        assert!(matches!(err, ArpError::Format { .. }), "{err}");
    }
}

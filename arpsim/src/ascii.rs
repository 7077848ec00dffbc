//! The ASCII `data.arp` format, version 1.1 (manual 6.5; the parts the
//! manual leaves open are specified in FORMAT.md).

use crate::error::FormatError;
use crate::record::{Header, Histogram, Payload, Record, RecordRead, MAX_DEPTH};
use crate::types::{DataType, FileFormat, Mode, StackEntry, Value};
use crate::writer::{Encoding, RecordWriter};
use std::io::{BufRead, Read};

/// The first line of every ASCII file (manual 6.5).
pub const VERSION_LINE: &str = "# Atomium record and playback data - format version 1.1.";

/// Longest line the reader accepts, newline included (FORMAT.md, "Memory
/// bounds"): the reader buffers one line, so this bounds its memory. Any
/// record the binary format can hold (65,535 new `sid@idx` entries of up
/// to 18 bytes, 255 full histograms: about 1.6 MB) fits.
pub const MAX_LINE_BYTES: usize = 2 << 20;

/// Reads one line (newline kept) into `line`, which must be empty, never
/// buffering more than [`MAX_LINE_BYTES`]. Returns the bytes read (0 at
/// the end); a longer line is an error naming `line_no`.
fn read_line<R: BufRead>(
    input: &mut R,
    line: &mut Vec<u8>,
    line_no: u64,
) -> Result<usize, FormatError> {
    let n = input
        .take(MAX_LINE_BYTES as u64)
        .read_until(b'\n', line)
        .map_err(|e| {
            FormatError::at_line(
                line_no,
                0,
                format!("read error (truncated or corrupt file?): {e}"),
            )
        })?;
    if n == MAX_LINE_BYTES && line.last() != Some(&b'\n') {
        return Err(FormatError::at_line(
            line_no,
            0,
            format!("longer than {MAX_LINE_BYTES} bytes, the limit of a line"),
        ));
    }
    Ok(n)
}

/// Width of the fixed-width record count line of streamed files
/// (FORMAT.md, "Streamed files"): 28 digits, or 20 digits and ` partial`.
pub const FIXED_COUNT_WIDTH: usize = 28;

/// The three header lines. With `fixed_width` the count line has exactly
/// [`FIXED_COUNT_WIDTH`] bytes so that it can be patched in place.
pub fn header_bytes(header: &Header, fixed_width: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    out.extend_from_slice(VERSION_LINE.as_bytes());
    out.push(b'\n');
    let mut line = format!(
        "{} {} {}",
        FileFormat::Ascii as u8,
        header.mode as u8,
        header.types.len()
    );
    for t in &header.types {
        line.push_str(&format!(" {}", t.code()));
    }
    out.extend_from_slice(line.as_bytes());
    out.push(b'\n');
    out.extend_from_slice(&count_line(header.count, header.partial, fixed_width));
    out.push(b'\n');
    out
}

/// The record count line without its newline (FORMAT.md).
pub fn count_line(count: u64, partial: bool, fixed_width: bool) -> Vec<u8> {
    match (fixed_width, partial) {
        (false, false) => count.to_string().into_bytes(),
        (false, true) => format!("{count} partial").into_bytes(),
        (true, false) => format!("{count:028}").into_bytes(),
        (true, true) => format!("{count:020} partial").into_bytes(),
    }
}

/// How the ASCII format spells a record: `depth reuse sid@idx ...: values;`
/// (manual 6.5).
#[derive(Debug)]
pub enum AsciiEncoding {}

/// Writes records in the ASCII format, with prefix reuse (manual 6.5).
pub type AsciiWriter<W> = RecordWriter<W, AsciiEncoding>;

impl Encoding for AsciiEncoding {
    const FORMAT: FileFormat = FileFormat::Ascii;

    fn header(header: &Header) -> Vec<u8> {
        header_bytes(header, false)
    }

    fn stack(buf: &mut Vec<u8>, depth: usize, reuse: usize, new: &[StackEntry], with_idx: bool) {
        let mut num = itoa::Buffer::new();
        buf.extend_from_slice(num.format(depth).as_bytes());
        buf.push(b' ');
        buf.extend_from_slice(num.format(reuse).as_bytes());
        for e in new {
            buf.push(b' ');
            buf.extend_from_slice(num.format(e.sid).as_bytes());
            if with_idx {
                buf.push(b'@');
                buf.extend_from_slice(num.format(e.idx).as_bytes());
            }
        }
        buf.push(b':');
    }

    fn value(buf: &mut Vec<u8>, value: &Value) {
        buf.push(b' ');
        value.write_ascii(buf);
    }

    fn count(buf: &mut Vec<u8>, count: u64) {
        buf.extend_from_slice(format!(" {count}").as_bytes());
    }

    fn mean(buf: &mut Vec<u8>, mean: f64) {
        buf.push(b' ');
        crate::types::write_f64(mean, buf);
    }

    fn histogram(buf: &mut Vec<u8>, histogram: &Histogram) {
        buf.extend_from_slice(b" [");
        for (i, (bin, n)) in histogram.bins.iter().enumerate() {
            if i > 0 {
                buf.push(b' ');
            }
            buf.extend_from_slice(format!("{bin}:{n}").as_bytes());
        }
        buf.push(b']');
    }

    fn end(buf: &mut Vec<u8>) {
        buf.extend_from_slice(b";\n");
    }
}

/// Reads an ASCII `data.arp` stream record by record.
pub struct AsciiReader<R: BufRead> {
    input: R,
    header: Header,
    line_no: u64,
    count_line_no: u64,
    read: u64,
    prev: Vec<StackEntry>,
    line: Vec<u8>,
}

/// Column (1-based) of `part` inside `line` (both slices of the same line).
fn column_of(line: &[u8], part: &[u8]) -> u32 {
    (part.as_ptr() as usize - line.as_ptr() as usize + 1) as u32
}

fn parse_num<T: std::str::FromStr>(tok: &[u8]) -> Option<T> {
    std::str::from_utf8(tok).ok()?.parse().ok()
}

/// Why `tok` is not a `what`: too large when it is all digits (a 23-digit
/// record count was "not a number"; issue 30, N06), else not a number.
fn not_a_number(tok: &[u8], what: &str, max: impl std::fmt::Display) -> String {
    if !tok.is_empty() && tok.iter().all(u8::is_ascii_digit) {
        let shown = if tok.len() <= 40 {
            String::from_utf8_lossy(tok).into_owned()
        } else {
            format!("of {} digits", tok.len())
        };
        format!("{what} {shown} is too large (at most {max})")
    } else {
        format!("{what} is not a number")
    }
}

impl<R: BufRead> AsciiReader<R> {
    /// Reads and checks the three header lines.
    pub fn new(mut input: R) -> Result<Self, FormatError> {
        let mut line = Vec::new();
        let mut line_no = 0;
        let mut next_line = |line: &mut Vec<u8>, line_no: &mut u64, what: &str| {
            *line_no += 1;
            line.clear();
            let n = read_line(&mut input, line, *line_no)?;
            if n == 0 || line.last() != Some(&b'\n') {
                return Err(FormatError::at_line(
                    *line_no,
                    0,
                    format!("file ends before the {what} line"),
                ));
            }
            line.pop();
            Ok::<(), FormatError>(())
        };
        next_line(&mut line, &mut line_no, "version")?;
        if line != VERSION_LINE.as_bytes() {
            return Err(FormatError::at_line(
                1,
                1,
                format!("bad version line (expected `{VERSION_LINE}`)"),
            ));
        }
        next_line(&mut line, &mut line_no, "format/mode/type")?;
        let l = line.clone();
        let toks: Vec<&[u8]> = l.split(|&b| b == b' ').collect();
        let field = |i: usize, what: &str| -> Result<u32, FormatError> {
            let tok = toks.get(i).ok_or_else(|| {
                FormatError::at_line(2, 0, format!("missing field {} ({what})", i + 1))
            })?;
            parse_num(tok).ok_or_else(|| {
                FormatError::at_line(
                    2,
                    column_of(&l, tok),
                    not_a_number(tok, &format!("field {} ({what})", i + 1), u32::MAX),
                )
            })
        };
        let format = field(0, "file format")?;
        if format != FileFormat::Ascii as u32 {
            return Err(FormatError::at_line(
                2,
                1,
                format!("file format {format} in an ASCII file (expected 0)"),
            ));
        }
        let mode_code = field(1, "mode")?;
        let mode = match Mode::from_code(mode_code) {
            Some(Mode::Playback) | None => {
                return Err(FormatError::at_line(
                    2,
                    column_of(&l, toks[1]),
                    format!("unknown recording mode {mode_code}"),
                ))
            }
            Some(m) => m,
        };
        let n = field(2, "number of callbacks")? as usize;
        if n > crate::types::MAX_CALLBACK_SETS {
            return Err(FormatError::at_line(
                2,
                column_of(&l, toks[2]),
                format!(
                    "{n} callback sets: at most {} (FORMAT.md)",
                    crate::types::MAX_CALLBACK_SETS
                ),
            ));
        }
        if toks.len() != 3 + n {
            return Err(FormatError::at_line(
                2,
                0,
                format!(
                    "{} type code(s) for {n} callback set(s)",
                    toks.len().saturating_sub(3)
                ),
            ));
        }
        let mut types = Vec::with_capacity(n);
        for i in 0..n {
            let code = field(3 + i, "type code")?;
            types.push(DataType::from_code(code).ok_or_else(|| {
                FormatError::at_line(
                    2,
                    column_of(&l, toks[3 + i]),
                    format!("unknown type code {code}"),
                )
            })?);
        }
        next_line(&mut line, &mut line_no, "record count")?;
        let (digits, partial) = match line.strip_suffix(b" partial") {
            Some(d) => (d, true),
            None => (&line[..], false),
        };
        let count = if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
            parse_num::<u64>(digits)
        } else {
            None
        }
        .ok_or_else(|| {
            FormatError::at_line(3, 1, not_a_number(digits, "record count", u64::MAX))
        })?;
        Ok(AsciiReader {
            input,
            header: Header {
                format: FileFormat::Ascii,
                mode,
                types,
                count,
                partial,
            },
            line_no,
            count_line_no: 3,
            read: 0,
            prev: Vec::new(),
            line,
        })
    }

    fn err(&self, column: u32, reason: impl Into<String>) -> FormatError {
        FormatError::at_line(self.line_no, column, reason)
    }

    fn parse_record(&mut self, rec: &mut Record) -> Result<(), FormatError> {
        let line = std::mem::take(&mut self.line);
        let result = self.parse_line(&line, rec);
        self.line = line;
        result
    }

    fn parse_line(&mut self, line: &[u8], rec: &mut Record) -> Result<(), FormatError> {
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .ok_or_else(|| self.err(0, "missing `:` after the stack"))?;
        let (left, right) = (&line[..colon], &line[colon + 1..]);
        self.parse_stack(line, left, &mut rec.stack)?;
        let body = right
            .strip_suffix(b";")
            .ok_or_else(|| self.err(line.len() as u32, "missing `;` at the end of the record"))?;
        let body = body
            .strip_prefix(b" ")
            .ok_or_else(|| self.err(column_of(line, right), "expected a space after `:`"))?;
        match self.header.mode {
            Mode::RecordAll => self.parse_sample(line, body, &mut rec.payload)?,
            Mode::RecordAverage => rec.payload = self.parse_average(line, body)?,
            Mode::RecordHistogram | Mode::Playback => {
                rec.payload = self.parse_histograms(line, body)?
            }
        }
        self.prev.clear();
        self.prev.extend_from_slice(&rec.stack);
        Ok(())
    }

    /// The stack part `depth reuse sid[@idx] ...` (`left`, before the `:`)
    /// into `stack`, with the reused entries of the previous record.
    fn parse_stack(
        &self,
        line: &[u8],
        left: &[u8],
        stack: &mut Vec<StackEntry>,
    ) -> Result<(), FormatError> {
        let mut toks = left.split(|&b| b == b' ');
        let depth_tok = toks.next().unwrap_or(left);
        let depth: usize = parse_num(depth_tok)
            .ok_or_else(|| self.err(1, not_a_number(depth_tok, "depth", MAX_DEPTH)))?;
        if depth > MAX_DEPTH {
            let reason =
                format!("depth {depth} is above {MAX_DEPTH}, the deepest stack a file holds");
            return Err(self.err(1, reason));
        }
        let reuse_tok = toks
            .next()
            .ok_or_else(|| self.err(0, "missing reuse count"))?;
        let reuse: usize = parse_num(reuse_tok).ok_or_else(|| {
            self.err(
                column_of(line, reuse_tok),
                not_a_number(reuse_tok, "reuse count", MAX_DEPTH),
            )
        })?;
        if reuse > self.prev.len() {
            return Err(self.err(
                column_of(line, reuse_tok),
                format!(
                    "reuse {reuse} is larger than the previous record's depth {}",
                    self.prev.len()
                ),
            ));
        }
        if reuse > depth {
            return Err(self.err(
                column_of(line, reuse_tok),
                format!("reuse {reuse} is larger than the depth {depth}"),
            ));
        }
        stack.clear();
        stack.extend_from_slice(&self.prev[..reuse]);
        for tok in toks {
            stack.push(self.parse_entry(line, tok)?);
        }
        if stack.len() != depth {
            return Err(self.err(
                0,
                format!(
                    "depth {depth} with reuse {reuse} needs {} stack entries, found {}",
                    depth - reuse,
                    stack.len() - reuse
                ),
            ));
        }
        if depth == 0 {
            return Err(self.err(1, "a record needs at least one stack entry"));
        }
        Ok(())
    }

    /// One stack entry: `sid@idx` in `record_all` files, else `sid`.
    fn parse_entry(&self, line: &[u8], tok: &[u8]) -> Result<StackEntry, FormatError> {
        let col = column_of(line, tok);
        if self.header.mode != Mode::RecordAll {
            return Ok(StackEntry {
                sid: parse_num(tok)
                    .ok_or_else(|| self.err(col, "stack entry is not a section id"))?,
                idx: 0,
            });
        }
        let at = tok
            .iter()
            .position(|&b| b == b'@')
            .ok_or_else(|| self.err(col, "stack entry is not `sid@idx`"))?;
        match (parse_num(&tok[..at]), parse_num(&tok[at + 1..])) {
            (Some(sid), Some(idx)) => Ok(StackEntry { sid, idx }),
            _ => Err(self.err(
                col,
                "stack entry is not `sid@idx` with a section id up to 65535 and a 32-bit index",
            )),
        }
    }

    /// The values of a `record_all` sample, into `payload` (its vector is
    /// reused).
    fn parse_sample(
        &self,
        line: &[u8],
        body: &[u8],
        payload: &mut Payload,
    ) -> Result<(), FormatError> {
        let types = &self.header.types;
        let mut values = match std::mem::replace(payload, Payload::Sample(Vec::new())) {
            Payload::Sample(v) => v,
            _ => Vec::new(),
        };
        values.clear();
        let mut toks = body.split(|&b| b == b' ');
        for (i, &ty) in types.iter().enumerate() {
            let tok = toks.next().ok_or_else(|| {
                self.err(0, format!("missing value {} of {}", i + 1, types.len()))
            })?;
            let text = std::str::from_utf8(tok)
                .map_err(|_| self.err(column_of(line, tok), "value is not ASCII"))?;
            let v =
                Value::parse(ty, text).map_err(|reason| self.err(column_of(line, tok), reason))?;
            values.push(v);
        }
        if let Some(extra) = toks.next() {
            return Err(self.err(column_of(line, extra), "more values than callback sets"));
        }
        *payload = Payload::Sample(values);
        Ok(())
    }

    /// The count and means of a `record_average` record.
    fn parse_average(&self, line: &[u8], body: &[u8]) -> Result<Payload, FormatError> {
        let types = &self.header.types;
        let mut toks = body.split(|&b| b == b' ');
        let count = self.parse_count(line, toks.next())?;
        let mut means = Vec::with_capacity(types.len());
        for i in 0..types.len() {
            let tok = toks
                .next()
                .ok_or_else(|| self.err(0, format!("missing mean {} of {}", i + 1, types.len())))?;
            let m = Value::parse(DataType::Double, std::str::from_utf8(tok).unwrap_or("?"))
                .map_err(|reason| self.err(column_of(line, tok), reason))?;
            means.push(m.as_f64());
        }
        if let Some(extra) = toks.next() {
            return Err(self.err(column_of(line, extra), "more means than callback sets"));
        }
        Ok(Payload::Average { count, means })
    }

    /// The count and `[bin:n ...]` histograms of a `record_histogram`
    /// record.
    fn parse_histograms(&self, line: &[u8], body: &[u8]) -> Result<Payload, FormatError> {
        let types = &self.header.types;
        let (count_tok, mut rest) = match body.iter().position(|&b| b == b' ') {
            Some(p) => (&body[..p], &body[p + 1..]),
            None => (body, &body[body.len()..]),
        };
        let count = self.parse_count(line, Some(count_tok))?;
        let mut histograms = Vec::with_capacity(types.len());
        for i in 0..types.len() {
            if i > 0 {
                rest = rest.strip_prefix(b" ").ok_or_else(|| {
                    self.err(column_of(line, rest), "expected a space between histograms")
                })?;
            }
            let inner = rest.strip_prefix(b"[").ok_or_else(|| {
                self.err(
                    column_of(line, rest),
                    format!("expected `[` opening histogram {}", i + 1),
                )
            })?;
            let close = inner
                .iter()
                .position(|&b| b == b']')
                .ok_or_else(|| self.err(column_of(line, rest), "histogram without `]`"))?;
            let h = self.parse_bins(line, &inner[..close])?;
            if h.total() != u128::from(count) {
                return Err(self.err(
                    column_of(line, rest),
                    format!(
                        "histogram {} holds {} samples, the record says {count}",
                        i + 1,
                        h.total()
                    ),
                ));
            }
            histograms.push(h);
            rest = &inner[close + 1..];
        }
        if !rest.is_empty() {
            return Err(self.err(
                column_of(line, rest),
                "unexpected text after the histograms",
            ));
        }
        Ok(Payload::Histogram { count, histograms })
    }

    /// The `bin:n` pairs of one histogram (`inner`, between `[` and `]`).
    fn parse_bins(&self, line: &[u8], inner: &[u8]) -> Result<Histogram, FormatError> {
        let mut h = Histogram::default();
        if inner.is_empty() {
            return Ok(h);
        }
        for pair in inner.split(|&b| b == b' ') {
            let col = column_of(line, pair);
            let colon = pair.iter().position(|&b| b == b':');
            let parsed = colon.and_then(|c| {
                Some((
                    parse_num::<u8>(&pair[..c])?,
                    parse_num::<u64>(&pair[c + 1..])?,
                ))
            });
            let (bin, n) =
                parsed.ok_or_else(|| self.err(col, "histogram bin is not `bin:count`"))?;
            if bin as usize >= crate::record::HISTOGRAM_BINS || n == 0 {
                return Err(self.err(col, "histogram bin out of range or empty"));
            }
            if h.bins.last().is_some_and(|&(b, _)| b >= bin) {
                return Err(self.err(col, "histogram bins are not increasing"));
            }
            h.bins.push((bin, n));
        }
        Ok(h)
    }

    fn parse_count(&self, line: &[u8], tok: Option<&[u8]>) -> Result<u64, FormatError> {
        let tok = tok.ok_or_else(|| self.err(0, "missing sample count"))?;
        match parse_num::<u64>(tok) {
            Some(c) if c > 0 => Ok(c),
            _ => Err(self.err(
                column_of(line, tok),
                "sample count is not a positive number",
            )),
        }
    }
}

impl<R: BufRead> RecordRead for AsciiReader<R> {
    fn header(&self) -> &Header {
        &self.header
    }

    fn read_into(&mut self, rec: &mut Record) -> Result<bool, FormatError> {
        self.line.clear();
        self.line_no += 1;
        let n = read_line(&mut self.input, &mut self.line, self.line_no)?;
        if n == 0 {
            if self.read != self.header.count {
                return Err(FormatError::at_line(
                    self.count_line_no,
                    1,
                    format!(
                        "wrong record count: the header says {}, the file holds {}",
                        self.header.count, self.read
                    ),
                ));
            }
            return Ok(false);
        }
        if self.read == self.header.count {
            return Err(self.err(
                1,
                format!(
                    "trailing data after the {} record(s) the header announces",
                    self.header.count
                ),
            ));
        }
        if self.line.last() == Some(&b'\n') {
            self.line.pop();
        }
        self.parse_record(rec)?;
        self.read += 1;
        Ok(true)
    }
}

/// Writes a whole data set as ASCII into a byte vector (header included,
/// plain count line). Panics on a stack deeper than [`MAX_DEPTH`].
pub fn to_bytes(header: &Header, records: &[Record]) -> Vec<u8> {
    crate::writer::to_bytes::<AsciiEncoding>(header, records)
}

/// Parses a whole ASCII data set from bytes.
pub fn from_bytes(bytes: &[u8]) -> Result<(Header, Vec<Record>), FormatError> {
    let mut r = AsciiReader::new(bytes)?;
    let mut records = Vec::new();
    loop {
        let mut rec = Record {
            stack: Vec::new(),
            payload: Payload::Sample(Vec::new()),
        };
        if !r.read_into(&mut rec)? {
            break;
        }
        records.push(rec);
    }
    Ok((r.header.clone(), records))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RecordWrite;

    /// The manual's example (6.5) with its record count set to the number
    /// of records shown.
    pub(crate) const MANUAL_EXAMPLE: &str =
        "# Atomium record and playback data - format version 1.1.\n\
0 1 1 5\n\
5\n\
8 0 148@0 147@0 146@0 145@0 144@0 143@0 142@0 141@0: 20239254;\n\
16 8 140@0 139@0 138@0 130@0 129@0 30@0 29@0 28@0: 148;\n\
18 16 19@0 18@0: 105;\n\
15 13 40@0 39@0: 182;\n\
16 15 31@0: 162;\n";

    #[test]
    fn manual_example_round_trips_byte_for_byte() {
        let (header, records) = from_bytes(MANUAL_EXAMPLE.as_bytes()).unwrap();
        assert_eq!(header.mode, Mode::RecordAll);
        assert_eq!(header.types, vec![DataType::UInt]);
        assert_eq!(records.len(), 5);
        // Decision 6: the last entry is the measured section.
        assert_eq!(records[0].stack.last().unwrap().sid, 141);
        assert_eq!(records[1].stack.len(), 16);
        assert_eq!(records[1].stack[7].sid, 141);
        assert_eq!(records[3].stack[11].sid, 130);
        assert_eq!(records[3].stack[12].sid, 129);
        assert_eq!(records[3].stack[14].sid, 39);
        assert_eq!(records[2].payload, Payload::Sample(vec![Value::UInt(105)]));
        assert_eq!(to_bytes(&header, &records), MANUAL_EXAMPLE.as_bytes());
    }

    fn err_of(text: &str) -> FormatError {
        from_bytes(text.as_bytes()).unwrap_err()
    }

    #[test]
    fn bad_inputs_name_their_line() {
        let head = "# Atomium record and playback data - format version 1.1.\n0 1 1 5\n";
        let cases: &[(&str, u64, &str)] = &[
            (
                "# Atomium record and playback data - format version 1.0.\n0 1 1 5\n0\n",
                1,
                "version",
            ),
            (
                "# Atomium record and playback data - format version 1.1.\n0 1 1 13\n0\n",
                2,
                "unknown type code 13",
            ),
            (
                "# Atomium record and playback data - format version 1.1.\n0 7 1 5\n0\n",
                2,
                "mode",
            ),
            (
                "# Atomium record and playback data - format version 1.1.\n0 1 2 5\n0\n",
                2,
                "type code",
            ),
            (&format!("{head}2\n1 0 1@0: 5;\n"), 3, "wrong record count"),
            (
                &format!("{head}1\n1 0 1@0: 5;\n1 0 1@1: 5;\n"),
                5,
                "trailing",
            ),
            (
                &format!("{head}2\n1 0 1@0: 5;\n2 2 3@0: 5;\n"),
                5,
                "larger than the previous",
            ),
            (&format!("{head}1\n1 0 1@0: 5\n"), 4, "missing `;`"),
            (
                &format!("{head}1\n1 0 1@0: five;\n"),
                4,
                "not a valid unsigned int",
            ),
            (&format!("{head}1\n1 0 1@0: 4294967296;\n"), 4, "overflows"),
            (
                &format!("{head}1\n2 0 1@0: 5;\n"),
                4,
                "needs 2 stack entries",
            ),
            (&format!("{head}1\n1 0 70000@0: 5;\n"), 4, "sid@idx"),
            (&format!("{head}1\n1 0 1@0 5;\n"), 4, "missing `:`"),
            (&format!("{head}1\n1 0 1@0: 5 6;\n"), 4, "more values"),
            (&format!("{head}x\n"), 3, "record count is not a number"),
            // issue 30, N06: 23 digits are too many, not "not a number"
            (
                &format!("{head}12345678901234567890123\n"),
                3,
                "record count 12345678901234567890123 is too large (at most 18446744073709551615)",
            ),
            (
                &format!("{head}1\n99999999999999999999999 0 1@0: 5;\n"),
                4,
                "depth 99999999999999999999999 is too large",
            ),
            (
                "# Atomium record and playback data - format version 1.1.\n",
                2,
                "ends before",
            ),
        ];
        for (text, line, reason) in cases {
            let e = err_of(text);
            assert_eq!(
                e.location,
                crate::error::Location::Line {
                    line: *line,
                    column: e_col(&e)
                },
                "{text:?}: {e}"
            );
            assert!(e.reason.contains(reason), "{text:?}: {e}");
        }
    }

    fn e_col(e: &FormatError) -> u32 {
        match e.location {
            crate::error::Location::Line { column, .. } => column,
            _ => 0,
        }
    }

    #[test]
    fn columns_point_at_the_bad_field() {
        let text =
            "# Atomium record and playback data - format version 1.1.\n0 1 1 5\n1\n1 0 1@0: abc;\n";
        let e = err_of(text);
        assert_eq!(
            e.to_string(),
            "line 4, column 10: `abc` is not a valid unsigned int value"
        );
    }

    #[test]
    fn more_callback_sets_than_the_binary_format_holds_are_refused() {
        // issue 30, N07: a file the binary format (one byte) cannot convert
        let codes = " 5".repeat(256);
        let text = format!(
            "# Atomium record and playback data - format version 1.1.\n0 1 256{codes}\n0\n"
        );
        let e = err_of(&text);
        assert_eq!(
            e.to_string(),
            "line 2, column 5: 256 callback sets: at most 255 (FORMAT.md)"
        );
    }

    #[test]
    fn average_and_histogram_records_round_trip() {
        let avg = "# Atomium record and playback data - format version 1.1.\n0 0 2 5 11\n2\n2 0 8 1: 3 10.5 0.25;\n2 1 4: 1 7 7;\n";
        let (h, r) = from_bytes(avg.as_bytes()).unwrap();
        assert_eq!(h.mode, Mode::RecordAverage);
        assert_eq!(
            r[1].payload,
            Payload::Average {
                count: 1,
                means: vec![7.0, 7.0]
            }
        );
        assert_eq!(to_bytes(&h, &r), avg.as_bytes());
        let hist = "# Atomium record and playback data - format version 1.1.\n0 2 1 5\n1 partial\n2 0 8 1: 5 [0:1 3:4];\n";
        let (h, r) = from_bytes(hist.as_bytes()).unwrap();
        assert!(h.partial);
        assert_eq!(to_bytes(&h, &r), hist.as_bytes());
        let bad = hist.replace("3:4", "3:3");
        assert!(err_of(&bad).reason.contains("holds 4 samples"));
    }

    #[test]
    fn a_line_longer_than_the_limit_is_refused_where_it_starts() {
        let head = "# Atomium record and playback data - format version 1.1.\n0 1 1 5\n2\n";
        let mut text = format!("{head}1 0 1@0: 5;\n1 0 ");
        text.extend(std::iter::repeat_n('9', MAX_LINE_BYTES));
        text.push_str("@0: 5;\n");
        let e = err_of(&text);
        assert_eq!(
            e.location,
            crate::error::Location::Line { line: 5, column: 0 }
        );
        assert_eq!(
            e.to_string(),
            format!("line 5: longer than {MAX_LINE_BYTES} bytes, the limit of a line")
        );
        // A header line too, and a line just within the limit still reads.
        let long_count = format!("{}\n", "0".repeat(MAX_LINE_BYTES));
        let e = err_of(&format!("{}{long_count}", &head[..head.len() - 2]));
        assert!(e.to_string().starts_with("line 3: longer than"), "{e}");
        let fits = format!("{}\n", "0".repeat(MAX_LINE_BYTES - 1));
        assert!(from_bytes(format!("{}{fits}", &head[..head.len() - 2]).as_bytes()).is_ok());
    }

    #[test]
    fn stacks_deeper_than_the_binary_formats_limit_are_refused() {
        let head = "# Atomium record and playback data - format version 1.1.\n0 1 1 5\n1\n";
        let record = |depth: usize| format!("{depth} 0{}: 5;\n", " 1@0".repeat(depth));
        let (_, records) = from_bytes(format!("{head}{}", record(MAX_DEPTH)).as_bytes()).unwrap();
        assert_eq!(records[0].stack.len(), 65535);
        let e = err_of(&format!("{head}{}", record(MAX_DEPTH + 1)));
        assert_eq!(
            e.to_string(),
            "line 4, column 1: depth 65536 is above 65535, the deepest stack a file holds"
        );
    }

    #[test]
    fn the_longest_record_the_binary_format_holds_fits_a_line() {
        let widest = StackEntry {
            sid: u16::MAX,
            idx: i32::MIN,
        };
        let header = Header {
            format: FileFormat::Ascii,
            mode: Mode::RecordAll,
            types: vec![DataType::ULLong; 255],
            count: 1,
            partial: false,
        };
        let record = Record {
            stack: vec![widest; MAX_DEPTH],
            payload: Payload::Sample(vec![Value::ULLong(u64::MAX); 255]),
        };
        let bytes = to_bytes(&header, std::slice::from_ref(&record));
        assert!(bytes.len() > 1 << 20, "a 1 MiB limit would refuse it");
        assert_eq!(from_bytes(&bytes).unwrap().1, vec![record.clone()]);
        let mut deeper = record.stack.clone();
        deeper.push(widest);
        let mut w = AsciiWriter::new(Vec::new());
        let e = w
            .write_sample(&deeper, &[Value::ULLong(0); 255])
            .unwrap_err();
        assert_eq!(e.to_string(), "stack deeper than 65535 sections");
    }

    #[test]
    fn fixed_width_count_lines_parse() {
        for partial in [false, true] {
            let line = count_line(42, partial, true);
            assert_eq!(line.len(), FIXED_COUNT_WIDTH);
        }
        let text = "# Atomium record and playback data - format version 1.1.\n0 1 1 5\n0000000000000000000000000001\n1 0 1@0: 5;\n";
        let (h, _) = from_bytes(text.as_bytes()).unwrap();
        assert_eq!(h.count, 1);
    }

    #[test]
    fn histogram_counts_that_wrap_a_u64_are_refused() {
        let text = "# Atomium record and playback data - format version 1.1.\n0 2 1 5\n1\n\
1 0 1: 2 [1:18446744073709551615 2:3];\n";
        assert_eq!(
            err_of(text).to_string(),
            "line 4, column 10: histogram 1 holds 18446744073709551618 samples, the record says 2"
        );
    }

    #[test]
    fn a_huge_bad_value_is_quoted_in_80_characters() {
        let big = "7".repeat(5000);
        let text = format!(
            "# Atomium record and playback data - format version 1.1.\n0 1 1 5\n1\n1 0 1@0: {big};\n"
        );
        assert_eq!(
            err_of(&text).to_string(),
            format!(
                "line 4, column 10: value `{}…` (5000 bytes) overflows unsigned int",
                &big[..80]
            )
        );
    }
}

//! Library side of `sim-host arp dump|stats|convert`: the CLI only parses
//! arguments and calls these.

use crate::codec::{self, OutputSpec};
use crate::error::{ArpError, Result};
use crate::query::ModeSwitch;
use crate::record::{Header, Payload, Record};
use crate::types::{FileFormat, Mode, Sid};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

fn io_out(e: std::io::Error) -> ArpError {
    ArpError::io("<output>", e)
}

/// Writes the records of `path` as a readable table, streaming. Each line
/// is built in one reused buffer (no allocation per record on the
/// `record_all` path): dumping runs at the reader's pace.
pub fn dump(path: &Path, out: &mut dyn Write) -> Result<()> {
    dump_named(path, &BTreeMap::new(), out)
}

/// [`dump`], each trace followed by its innermost section's name from
/// `names` (by section id) where it has one.
pub fn dump_named(path: &Path, names: &BTreeMap<Sid, String>, out: &mut dyn Write) -> Result<()> {
    let mut n = 0u64;
    let mut header_done = false;
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let header = codec::for_each_record(path, |h, r| {
        if !header_done {
            write_header(h, out)?;
            header_done = true;
        }
        n += 1;
        line.clear();
        dump_line(&mut line, n, h.mode, r, names);
        out.write_all(&line).map_err(io_out)
    })?;
    if !header_done {
        write_header(&header, out)?;
    }
    Ok(())
}

/// `{n:>8} {count:>8}  {trace:<40} {values}\n` of one record.
fn dump_line(line: &mut Vec<u8>, n: u64, mode: Mode, r: &Record, names: &BTreeMap<Sid, String>) {
    let mut number = itoa::Buffer::new();
    pad_left(line, number.format(n).as_bytes(), 8);
    line.push(b' ');
    pad_left(line, number.format(r.payload.count()).as_bytes(), 8);
    line.extend_from_slice(b"  ");
    let trace_start = line.len();
    for (i, e) in r.stack.iter().enumerate() {
        if i > 0 {
            line.push(b' ');
        }
        line.extend_from_slice(number.format(e.sid).as_bytes());
        if mode == Mode::RecordAll {
            line.push(b'@');
            line.extend_from_slice(number.format(e.idx).as_bytes());
        }
    }
    if let Some(name) = r.stack.last().and_then(|e| names.get(&e.sid)) {
        line.push(b' ');
        line.extend_from_slice(name.as_bytes());
    }
    let width = line.len() - trace_start;
    line.resize(line.len() + 40usize.saturating_sub(width), b' ');
    line.push(b' ');
    dump_values(line, &r.payload);
    line.push(b'\n');
}

fn pad_left(line: &mut Vec<u8>, text: &[u8], width: usize) {
    line.resize(line.len() + width.saturating_sub(text.len()), b' ');
    line.extend_from_slice(text);
}

fn dump_values(line: &mut Vec<u8>, payload: &Payload) {
    match payload {
        Payload::Sample(values) => {
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    line.push(b' ');
                }
                v.write_ascii(line);
            }
        }
        Payload::Average { means, .. } => {
            let text: Vec<String> = means.iter().map(|&m| number(m)).collect();
            line.extend_from_slice(text.join(" ").as_bytes());
        }
        Payload::Histogram { histograms, .. } => {
            let text: Vec<String> = histograms
                .iter()
                .map(|h| {
                    let bins: Vec<String> =
                        h.bins.iter().map(|(b, n)| format!("{b}:{n}")).collect();
                    format!("[{}]", bins.join(" "))
                })
                .collect();
            line.extend_from_slice(text.join(" ").as_bytes());
        }
    }
}

fn write_header(h: &crate::record::Header, out: &mut dyn Write) -> Result<()> {
    let types: Vec<&str> = h.types.iter().map(|t| t.c_name()).collect();
    writeln!(
        out,
        "# {} format, mode {}, {} record(s){}, callback set types: {}",
        match h.format {
            FileFormat::Ascii => "ascii",
            FileFormat::Binary => "binary",
        },
        h.mode.name(),
        h.count,
        if h.partial { " (PARTIAL)" } else { "" },
        types.join(", ")
    )
    .map_err(io_out)?;
    writeln!(
        out,
        "{:>8} {:>8}  {:<40} values",
        "record", "count", "trace"
    )
    .map_err(io_out)
}

/// Statistics of one callback set over one trace.
#[derive(Clone, Debug, PartialEq)]
pub struct SetStats {
    pub mean: f64,
    /// `None` when the file does not hold individual samples.
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub total: f64,
}

/// Statistics of one trace (section-id path, counters ignored).
#[derive(Clone, Debug, PartialEq)]
pub struct TraceStats {
    pub path: Vec<Sid>,
    /// Exact: the sum of many `u64` sample counts needs 128 bits.
    pub count: u128,
    /// One entry per callback set; empty for histogram files.
    pub sets: Vec<SetStats>,
}

/// Per-trace count, mean, min, max and total of `path`, in order of first
/// appearance. Streams the file.
pub fn stats(path: &Path) -> Result<Vec<TraceStats>> {
    let mut index: FxHashMap<Vec<Sid>, usize> = FxHashMap::default();
    let mut out: Vec<TraceStats> = Vec::new();
    codec::for_each_record(path, |h, r: &Record| {
        let sids: Vec<Sid> = r.stack.iter().map(|e| e.sid).collect();
        let i = *index.entry(sids.clone()).or_insert_with(|| {
            out.push(TraceStats {
                path: sids,
                count: 0,
                sets: match h.mode {
                    Mode::RecordHistogram => Vec::new(),
                    _ => vec![
                        SetStats {
                            mean: 0.0,
                            min: None,
                            max: None,
                            total: 0.0
                        };
                        h.types.len()
                    ],
                },
            });
            out.len() - 1
        });
        let t = &mut out[i];
        let count = r.payload.count();
        t.count += u128::from(count);
        match &r.payload {
            Payload::Sample(values) => {
                for (s, v) in t.sets.iter_mut().zip(values) {
                    let v = v.as_f64();
                    s.total += v;
                    s.min = Some(s.min.map_or(v, |m| m.min(v)));
                    s.max = Some(s.max.map_or(v, |m| m.max(v)));
                }
            }
            Payload::Average { means, .. } => {
                for (s, m) in t.sets.iter_mut().zip(means) {
                    s.total += m * count as f64;
                }
            }
            Payload::Histogram { .. } => {}
        }
        Ok(())
    })?;
    for t in &mut out {
        for s in &mut t.sets {
            s.mean = s.total / t.count as f64;
        }
    }
    Ok(out)
}

/// Writes [`stats`] as a table.
pub fn write_stats(stats: &[TraceStats], out: &mut dyn Write) -> Result<()> {
    write_stats_named(stats, &BTreeMap::new(), out)
}

/// [`write_stats`] with a last column, `section`: each trace's innermost
/// section's name from `names` (by section id); without names, no column.
pub fn write_stats_named(
    stats: &[TraceStats],
    names: &BTreeMap<Sid, String>,
    out: &mut dyn Write,
) -> Result<()> {
    let named = !names.is_empty();
    writeln!(
        out,
        "{:<40} {:>3} {:>10} {:>14} {:>14} {:>14} {:>16}{}",
        "trace",
        "set",
        "count",
        "mean",
        "min",
        "max",
        "total",
        if named { "  section" } else { "" }
    )
    .map_err(io_out)?;
    let opt = |v: Option<f64>| v.map_or("-".to_string(), number);
    for t in stats {
        let path: Vec<String> = t.path.iter().map(|s| s.to_string()).collect();
        let path = path.join(" ");
        let name = t
            .path
            .last()
            .and_then(|sid| names.get(sid))
            .map_or(String::new(), |n| format!("  {n}"));
        if t.sets.is_empty() {
            let row = format!("{path:<40} {:>3} {:>10}", "-", t.count);
            let row = if name.is_empty() {
                row
            } else {
                format!("{row:<117}{name}")
            };
            writeln!(out, "{row}").map_err(io_out)?;
        }
        for (i, s) in t.sets.iter().enumerate() {
            writeln!(
                out,
                "{path:<40} {i:>3} {:>10} {:>14} {:>14} {:>14} {:>16}{name}",
                t.count,
                number(s.mean),
                opt(s.min),
                opt(s.max),
                number(s.total)
            )
            .map_err(io_out)?;
        }
    }
    Ok(())
}

/// Significant digits kept when a number is printed for people.
const SHOWN_DIGITS: usize = 12;

/// A number of the dump and the stats table as a person writes it:
/// `55847.2`, not `55847.20000000056`.
///
/// Means and totals are computed in `f64` (sums of samples, mean × count
/// over average records, the engine's sum / count), so their last three
/// or four of the 15–17 significant digits are rounding noise. A number
/// with a fraction is therefore rounded to 12 significant digits and then
/// printed in Rust's shortest round-trip form of that rounded value, which
/// drops trailing zeros (`7991.2`, `0.000125`, `16.6666666667`). Min and
/// max of `float` samples (widened from `f32`) are printed the same way.
/// Whole numbers (cycle counts) are printed with every digit, never
/// rounded.
pub fn number(v: f64) -> String {
    if !v.is_finite() || v.fract() == 0.0 {
        return format!("{v}");
    }
    let rounded: f64 = format!("{v:.*e}", SHOWN_DIGITS - 1).parse().unwrap_or(v);
    format!("{rounded}")
}

/// Options of [`convert`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConvertOptions {
    pub format: FileFormat,
    pub gzip: bool,
    /// Switch to this mode (manual 6.4 rules) while converting.
    pub mode: Option<Mode>,
}

/// Converts `input` to `output` (atomically); returns the number of
/// records written. Without a mode switch the records are streamed.
pub fn convert(input: &Path, output: &Path, options: &ConvertOptions) -> Result<u64> {
    let spec = OutputSpec {
        path: output.to_path_buf(),
        format: options.format,
        gzip: options.gzip,
    };
    let header = codec::open(input)?.header().clone();
    if let Some(mode) = options.mode.filter(|&m| m != header.mode) {
        return convert_switching(input, &spec, header, mode);
    }
    // Same mode: records stream straight through (the count is the
    // input's, checked by the reader at its end).
    codec::write_file(&spec, &header, |w| {
        codec::for_each_record(input, |_, r| {
            w.write_payload(&r.stack, &r.payload)
                .map_err(|e| ArpError::io(output.display().to_string(), e))
        })?;
        Ok(())
    })?;
    Ok(header.count)
}

/// Converts while switching mode: the input streams through a
/// [`ModeSwitch`], so memory grows with the distinct section-id path
/// entries, not with the records; the output is written one record at a
/// time once their count is known.
fn convert_switching(input: &Path, spec: &OutputSpec, header: Header, mode: Mode) -> Result<u64> {
    let mut switch = ModeSwitch::new(header.mode, mode, header.types.len())?;
    codec::for_each_record(input, |_, r| {
        switch.add(r);
        Ok(())
    })?;
    let count = switch.len() as u64;
    let header = Header {
        mode,
        count,
        ..header
    };
    codec::write_file(spec, &header, |w| {
        switch.for_each_record(|stack, payload| {
            w.write_payload(stack, payload)
                .map_err(|e| ArpError::io(spec.path.display().to_string(), e))
        })
    })?;
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: &str = "# Atomium record and playback data - format version 1.1.\n0 1 1 5\n3\n\
2 0 8@0 1@0: 10;\n2 1 1@1: 30;\n1 0 8@1: 100;\n";

    fn file(dir: &Path, text: &str) -> std::path::PathBuf {
        let p = dir.join("in.arp");
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn dump_prints_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let mut out = Vec::new();
        dump(&file(dir.path(), ALL), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with(
            "# ascii format, mode record_all, 3 record(s), callback set types: unsigned int\n"
        ));
        assert!(text.contains("8@0 1@1"), "{text}");
        assert_eq!(text.lines().count(), 5);
    }

    #[test]
    fn stats_group_by_section_path() {
        let dir = tempfile::tempdir().unwrap();
        let s = stats(&file(dir.path(), ALL)).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].path, vec![8, 1]);
        assert_eq!(s[0].count, 2);
        assert_eq!(
            s[0].sets[0],
            SetStats {
                mean: 20.0,
                min: Some(10.0),
                max: Some(30.0),
                total: 40.0
            }
        );
        let mut out = Vec::new();
        write_stats(&s, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap().lines().count(), 3);
    }

    #[test]
    fn convert_round_trips_and_switches_mode() {
        let dir = tempfile::tempdir().unwrap();
        let input = file(dir.path(), ALL);
        let bin = dir.path().join("out.bin.gz");
        let opts = ConvertOptions {
            format: FileFormat::Binary,
            gzip: false,
            mode: None,
        };
        assert_eq!(convert(&input, &bin, &opts).unwrap(), 3);
        let back = dir.path().join("back.arp");
        convert(&bin, &back, &ConvertOptions::default()).unwrap();
        assert_eq!(std::fs::read_to_string(&back).unwrap(), ALL);
        let avg = dir.path().join("avg.arp");
        let opts = ConvertOptions {
            mode: Some(Mode::RecordAverage),
            ..Default::default()
        };
        assert_eq!(convert(&input, &avg, &opts).unwrap(), 2);
        let opts = ConvertOptions {
            mode: Some(Mode::RecordAll),
            ..Default::default()
        };
        assert!(matches!(
            convert(&avg, &back, &opts),
            Err(ArpError::SwitchRefused { .. })
        ));
    }

    #[test]
    fn stats_of_huge_counts_are_exact() {
        let dir = tempfile::tempdir().unwrap();
        let n = u64::MAX;
        let text = format!(
            "# Atomium record and playback data - format version 1.1.\n0 0 1 5\n2\n\
1 0 4: {n} 12;\n1 1: {n} 12;\n"
        );
        let s = stats(&file(dir.path(), &text)).unwrap();
        assert_eq!(s[0].count, 2 * u128::from(n));
        assert_eq!(s[0].sets[0].mean, 12.0);
        let mut out = Vec::new();
        write_stats(&s, &mut out).unwrap();
        let table = String::from_utf8(out).unwrap();
        assert!(table.contains(" 36893488147419103230 "), "{table}");
        assert!(table.contains(" 12 "), "{table}");
    }

    #[test]
    fn numbers_are_printed_as_people_write_them() {
        assert_eq!(number(55847.20000000056), "55847.2");
        assert_eq!(number(279236.0 / 5.0), "55847.2");
        assert_eq!(number(4482.0), "4482");
        assert_eq!(number(3585600.0), "3585600");
        assert_eq!(number(0.1 + 0.2), "0.3");
        assert_eq!(number(0.000125), "0.000125");
        assert_eq!(number(50.0 / 3.0), "16.6666666667");
        assert_eq!(number(-2.5), "-2.5");
        assert_eq!(number(2.0 * u64::MAX as f64), "36893488147419103000");
        assert_eq!(number(f64::NAN), "NaN");
    }

    #[test]
    fn stats_of_average_records_print_without_rounding_noise() {
        let dir = tempfile::tempdir().unwrap();
        // Two average records of one trace: in f64 their total is
        // 0.30000000000000004 and their mean 0.15000000000000002.
        let text = "# Atomium record and playback data - format version 1.1.\n0 0 1 5\n2\n\
1 0 4: 1 0.1;\n1 1: 1 0.2;\n";
        let s = stats(&file(dir.path(), text)).unwrap();
        assert_eq!(s[0].sets[0].total, 0.1 + 0.2);
        let mut out = Vec::new();
        write_stats(&s, &mut out).unwrap();
        let table = String::from_utf8(out).unwrap();
        let row: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
        assert_eq!(row, ["4", "0", "2", "0.15", "-", "-", "0.3"], "{table}");
    }
}

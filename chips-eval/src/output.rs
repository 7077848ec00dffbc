//! Output management of Table 1: LaOutScr (aligned table), LaOutAscii
//! (CSV), JSON, and the bottleneck ranking.

use crate::diagnostic::quote;
use crate::eval::Breakdown;
use crate::runtime::{PointResult, RunResults};
use crate::shard::Shard;
use crate::value::{format_number, Value};
use std::fmt::Write;
use std::io;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Json,
}

fn time_text(t: Option<f64>) -> String {
    match t {
        Some(t) => format!("{t:.9}"),
        None => "exit".into(),
    }
}

/// All points in one text (a convenience over [`PointWriter`]).
pub fn render(results: &RunResults, format: Format) -> String {
    let mut writer = PointWriter::new(Vec::new(), format, &results.variables);
    let mut written = writer.begin();
    for p in &results.points {
        written = written.and_then(|()| writer.point(p));
    }
    let bytes = written.and_then(|()| writer.finish()).unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}

/// Writes the results of a run one point at a time. CSV and JSON go
/// straight to `out`; the table keeps only its rendered cells (about 50
/// bytes a point), because its column widths depend on every row.
pub struct PointWriter<W: io::Write> {
    out: W,
    format: Format,
    variables: Vec<String>,
    /// Points written so far.
    count: u64,
    table: Cells,
    /// Set for `run --shard`: the output says which sweep and shard it is
    /// and each point its index in the whole sweep.
    shard: Option<ShardHeader>,
}

/// What a shard's output carries so that `merge` can put the shards back
/// together (see [`crate::shard`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardHeader {
    /// [`crate::shard::sweep_hash`] of the sweep.
    pub sweep: String,
    pub shard: Shard,
    /// Points of the whole sweep.
    pub total_points: u64,
}

/// The name of the global index of a point in a shard's CSV column and
/// JSON field.
pub const POINT_INDEX: &str = "point_index";

/// A point already rendered, as `merge` reads it from a shard's output.
#[derive(Debug, Clone, PartialEq)]
pub enum Rendered {
    /// A CSV row without its line end.
    CsvRow(String),
    /// A JSON point object.
    Json(serde_json::Map<String, serde_json::Value>),
}

/// The table's cells as one text with the end of each cell, and the width
/// of each column so far: a `Vec<String>` per row would cost four times
/// as much memory.
#[derive(Default)]
struct Cells {
    text: String,
    ends: Vec<usize>,
    widths: Vec<usize>,
}

impl Cells {
    fn push_row(&mut self, row: &[String]) {
        self.widths.resize(self.widths.len().max(row.len()), 0);
        for (cell, width) in row.iter().zip(&mut self.widths) {
            self.text.push_str(cell);
            self.ends.push(self.text.len());
            *width = (*width).max(cell.chars().count());
        }
    }

    /// The rows, `columns` cells each, one at a time.
    fn rows(&self, columns: usize) -> impl Iterator<Item = Vec<&str>> + '_ {
        let columns = columns.max(1);
        let cell = move |i: usize| {
            let start = if i == 0 { 0 } else { self.ends[i - 1] };
            &self.text[start..self.ends[i]]
        };
        (0..self.ends.len() / columns)
            .map(move |r| (r * columns..(r + 1) * columns).map(cell).collect())
    }
}

impl<W: io::Write> PointWriter<W> {
    pub fn new(out: W, format: Format, variables: &[String]) -> Self {
        PointWriter {
            out,
            format,
            variables: variables.to_vec(),
            count: 0,
            table: Cells::default(),
            shard: None,
        }
    }

    /// Writes a shard's output: its header first, then each point with
    /// its global index (use [`PointWriter::indexed_point`]).
    pub fn for_shard(mut self, header: ShardHeader) -> Self {
        self.shard = Some(header);
        self
    }

    fn header(&self) -> Vec<String> {
        let mut header = self.variables.clone();
        header.push("time_s".into());
        header
    }

    /// Writes what comes before the first point.
    pub fn begin(&mut self) -> io::Result<()> {
        match self.format {
            Format::Table => Ok(()),
            Format::Csv => {
                let mut header = self.header();
                if let Some(h) = &self.shard {
                    writeln!(
                        self.out,
                        "# chips-eval shard {} of sweep {}, {} points",
                        h.shard, h.sweep, h.total_points
                    )?;
                    header.insert(0, POINT_INDEX.into());
                }
                writeln!(self.out, "{}", csv_row(&header))
            }
            Format::Json => {
                writeln!(self.out, "{{")?;
                if let Some(h) = &self.shard {
                    write!(
                        self.out,
                        "  \"sweep\": \"{}\",\n  \"shard\": {{\n    \"index\": {},\n    \"count\": {}\n  }},\n  \"total_points\": {},\n",
                        h.sweep, h.shard.index, h.shard.count, h.total_points
                    )?;
                }
                let variables = serde_json::to_string_pretty(&self.variables)?;
                write!(
                    self.out,
                    "  \"variables\": {},\n  \"points\": [",
                    indent(&variables, 2)
                )
            }
        }
    }

    pub fn point(&mut self, p: &PointResult) -> io::Result<()> {
        let rendered = match self.format {
            Format::Table => {
                self.table.push_row(&point_cells(p));
                self.count += 1;
                return Ok(());
            }
            Format::Csv => Rendered::CsvRow(csv_row(&point_cells(p))),
            Format::Json => Rendered::Json(json_point(p)),
        };
        self.rendered(rendered)
    }

    /// A point of a shard with its index in the whole sweep.
    pub fn indexed_point(&mut self, index: u64, p: &PointResult) -> io::Result<()> {
        let rendered = match self.format {
            Format::Table => return self.point(p),
            Format::Csv => {
                let mut cells = point_cells(p);
                cells.insert(0, index.to_string());
                Rendered::CsvRow(csv_row(&cells))
            }
            Format::Json => {
                let mut object = json_point(p);
                object.insert(POINT_INDEX.into(), serde_json::json!(index));
                Rendered::Json(object)
            }
        };
        self.rendered(rendered)
    }

    /// Writes a point rendered before (by a shard, read back by `merge`).
    /// A table has no rendered form: its rows are ignored.
    pub fn rendered(&mut self, point: Rendered) -> io::Result<()> {
        match (self.format, point) {
            (Format::Csv, Rendered::CsvRow(row)) => writeln!(self.out, "{row}")?,
            (Format::Json, Rendered::Json(object)) => {
                let separator = if self.count == 0 { "" } else { "," };
                let text = serde_json::to_string_pretty(&object)?;
                write!(self.out, "{separator}\n    {}", indent(&text, 4))?;
            }
            (format, _) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("a rendered point does not match the output format {format:?}"),
                ))
            }
        }
        self.count += 1;
        Ok(())
    }

    /// Writes what comes after the last point and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        match self.format {
            Format::Table => {
                let header = self.header();
                write_table(&mut self.out, &header, &self.table)?;
            }
            Format::Csv => {}
            Format::Json => writeln!(self.out, "\n  ]\n}}")?,
        }
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Every line but the first indented by `spaces` (to nest pretty JSON).
fn indent(text: &str, spaces: usize) -> String {
    text.replace('\n', &format!("\n{}", " ".repeat(spaces)))
}

fn csv_row(cells: &[String]) -> String {
    let quoted: Vec<String> = cells
        .iter()
        .map(|c| {
            if c.contains([',', '"', '\n']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.clone()
            }
        })
        .collect();
    quoted.join(",")
}

/// A point's settings and time as table or CSV cells.
fn point_cells(p: &PointResult) -> Vec<String> {
    let mut cells: Vec<String> = p.point.iter().map(|(_, v)| v.to_string()).collect();
    cells.push(time_text(p.time));
    cells
}

fn json_point(p: &PointResult) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    for (k, v) in &p.point {
        let jv = match v {
            Value::Num(n) => serde_json::json!(n),
            other => serde_json::json!(other.to_string()),
        };
        m.insert(k.clone(), jv);
    }
    m.insert(
        "time_s".into(),
        p.time
            .map_or(serde_json::Value::Null, |t| serde_json::json!(t)),
    );
    if !p.printed.is_empty() {
        m.insert("printed".into(), serde_json::json!(p.printed));
    }
    m
}

/// Right-aligned columns two spaces apart.
fn write_table(out: &mut impl io::Write, header: &[String], cells: &Cells) -> io::Result<()> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for (w, &c) in widths.iter_mut().zip(&cells.widths) {
        *w = (*w).max(c);
    }
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    for row in std::iter::once(header).chain(cells.rows(widths.len())) {
        let padded: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(c, &w)| pad_left(c, w))
            .collect();
        writeln!(out, "{}", padded.join("  "))?;
    }
    Ok(())
}

/// `text` right-aligned in `width` characters. By hand: `format!("{:>w$}")`
/// panics for widths above 65535, which a long `--set` value reaches.
fn pad_left(text: &str, width: usize) -> String {
    let fill = width.saturating_sub(text.chars().count());
    format!("{}{text}", " ".repeat(fill))
}

/// `text` left-aligned in `width` characters (see [`pad_left`]).
fn pad_right(text: &str, width: usize) -> String {
    let fill = width.saturating_sub(text.chars().count());
    format!("{text}{}", " ".repeat(fill))
}

/// Bottleneck analysis (section 6): each table ranked, largest first,
/// summed over all points of the run.
pub fn render_breakdown(results: &RunResults) -> String {
    let mut total = Breakdown::default();
    for p in &results.points {
        total.merge(&p.breakdown);
    }
    render_breakdown_total(&total)
}

/// Bottleneck analysis of a breakdown already summed over the points.
pub fn render_breakdown_total(total: &Breakdown) -> String {
    let mut s = String::new();
    for (title, map) in [
        ("object (subtask and template time)", &total.by_object),
        ("procedure (cflow, inclusive)", &total.by_procedure),
        ("resource usage (type and type.element)", &total.by_resource),
        ("device (step time)", &total.by_device),
    ] {
        let _ = writeln!(s, "by {title}:");
        let ranked = Breakdown::ranked(map);
        if ranked.is_empty() {
            let _ = writeln!(s, "  (none)");
        }
        for (k, v) in ranked {
            let _ = writeln!(s, "  {:>14}  {k}", format!("{v:.6e}"));
        }
    }
    s
}

/// Procedure calls, option values and step times, per point.
pub fn render_trace(results: &RunResults) -> String {
    results.points.iter().map(render_point_trace).collect()
}

/// The trace of one point, headed by its settings.
pub fn render_point_trace(p: &PointResult) -> String {
    let mut s = String::new();
    let label: Vec<String> = p.point.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(
        s,
        "== point {}",
        if label.is_empty() {
            "(defaults)".into()
        } else {
            label.join(" ")
        }
    );
    for l in &p.trace {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(s, "== time {}", p.time.map_or("exit".into(), format_number));
    s
}

/// LaVarList: the application's interface variables with group, type and
/// default as written.
pub fn render_vars(prog: &crate::program::Program) -> String {
    let rows: Vec<[String; 4]> = prog
        .interface_vars()
        .iter()
        .map(|v| {
            [
                v.name.clone(),
                v.group.clone(),
                v.ty.name().to_string(),
                v.init_text.as_deref().map_or_else(|| "-".into(), quote),
            ]
        })
        .collect();
    let header = ["name", "group", "type", "default"].map(String::from);
    let mut widths = header.clone().map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut s = String::new();
    for r in std::iter::once(&header).chain(rows.iter()) {
        let cells: Vec<String> = r.iter().zip(widths).map(|(c, w)| pad_right(c, w)).collect();
        let _ = writeln!(s, "{}", cells.join("  ").trim_end());
    }
    s
}
